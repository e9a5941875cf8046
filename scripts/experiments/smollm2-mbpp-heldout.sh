#!/usr/bin/env bash
# The designed comparison of docs/results/smollm2-mbpp-heldout.md: base, golden and a1 from one cold
# start, trained on MBPP+ less a fixed held-out split (decontaminated), evaluated on that split plus
# bundled:eval. Every stage is skipped when its output exists, so the same command resumes the whole
# experiment after a stop or a kill (the comparison itself resumes exactly from its checkpoints).
#
#   bash scripts/experiments/smollm2-mbpp-heldout.sh [OUT]      (OUT default: runs/smollm2-mbpp-heldout)
#
# Run it from a git worktree pinned at one commit, at low priority:
#   git worktree add ../codea1-exp <commit> && cd ../codea1-exp && nice -n 19 bash scripts/experiments/...
# It needs the validation parquet of the shared data (VALIDATION_PARQUET, default ../shared/...).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT="${1:-runs/smollm2-mbpp-heldout}"
PARQUET="${VALIDATION_PARQUET:-../shared/data/codea1-val/validation_data_mix.parquet}"
VENV="${VENV:-.venv}"
[ -x "$VENV/bin/codea1" ] || VENV="${CODEA1_VENV:?set CODEA1_VENV to a virtualenv with codea1 installed}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # this checkout's code, whatever the venv installed
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
codea1() { "$VENV/bin/python" -m codea1 "$@"; }
CONFIG=codea1/configs/smollm2-cpu.yaml
DATA="$OUT/data"
mkdir -p "$DATA"
git rev-parse HEAD > "$OUT/commit.txt" 2>/dev/null || true

# 1. data: a fixed-seed held-out split of MBPP+ (120 problems), the rest for training; HumanEval+ for a
#    later out-of-distribution evaluation. Training problems are decontaminated against HumanEval+ here
#    and against the held-out set inside `codea1 compare`; the cold start's problems against both.
if [ ! -f "$DATA/train.jsonl" ]; then
  codea1 data convert "$PARQUET" --source mbppplus --check --output "$DATA/mbppplus.jsonl"
  codea1 data convert "$PARQUET" --source humanevalplus --output "$DATA/humanevalplus.jsonl"
  codea1 data split "$DATA/mbppplus.jsonl" --held-out 120 --seed 2026 \
    --train-output "$DATA/mbpp_train.jsonl" --held-out-output "$DATA/heldout_mbpp.jsonl"
  codea1 data convert bundled:eval --output "$DATA/heldout_bundled.jsonl"
  codea1 data decontaminate "$DATA/mbpp_train.jsonl" --against "$DATA/humanevalplus.jsonl" \
    --output "$DATA/train.tmp.jsonl" --report "$DATA/decontamination_vs_humanevalplus.json"
  mv "$DATA/train.tmp.jsonl" "$DATA/train.jsonl"
fi
HELD_OUT="$DATA/heldout_mbpp.jsonl,$DATA/heldout_bundled.jsonl"
if [ ! -f "$DATA/sft_train.jsonl" ]; then
  codea1 data decontaminate bundled:train --against "$DATA/heldout_mbpp.jsonl" --against "$DATA/heldout_bundled.jsonl" \
    --against "$DATA/humanevalplus.jsonl" --output "$DATA/sft_train.tmp.jsonl" \
    --report "$DATA/decontamination_sft.json"
  mv "$DATA/sft_train.tmp.jsonl" "$DATA/sft_train.jsonl"
fi

# 2. the cold start every method starts from: test role only, shortest asserts first, 4 epochs
if [ ! -f "$OUT/sft/sft.json" ]; then
  rm -rf "$OUT/sft"
  codea1 sft --config "$CONFIG" --out "$OUT/sft" sft.max_examples=null "sft.roles=[test]" sft.test_order=shortest \
    sft.epochs=4 "data.train=$DATA/sft_train.jsonl"
fi

# 3. the comparison: two epochs over the training problems (batch 2: one step per training problem),
#    equal steps for every method, sampling aligned between training and evaluation
STEPS=$(wc -l < "$DATA/train.jsonl")
codea1 compare --config "$CONFIG" --out "$OUT/compare" --methods base,golden,a1 --steps "$STEPS" \
  --eval-problems "$HELD_OUT" --code-samples 12 --test-samples 2 --test-k 4 \
  "model.code_model=$OUT/sft/shared" "data.train=$DATA/train.jsonl" data.check_gt=true train.data_epochs=2 \
  train.checkpoint_every=5 train.keep_checkpoints=1 policy.lr=3.0e-6 \
  generation.code.temperature=0.7 generation.code.top_p=0.95 generation.code.max_new_tokens=192 \
  eval.temperature=0.7 eval.top_p=0.95 eval.max_new_tokens=192
