#!/usr/bin/env bash
# Experiment v2 of docs/results/smollm2-mbpp-v2.md: one arm (base, golden or a1) per call, each in a
# comparison directory of its own, all from one cold start, one committed training list and one held-out
# set. Every stage is skipped when its output exists, so the same command resumes after a stop.
#
#   ARM=golden nice -n 19 bash scripts/experiments/smollm2-mbpp-v2.sh [OUT]   (OUT: runs/smollm2-mbpp-v2)
#
# Run it from a git worktree pinned at the commit the results page records:
#   git worktree add ../codea1-v2 <commit> && cd ../codea1-v2 && ARM=base nice -n 19 bash scripts/...
# RESULTS (default: this checkout's docs/results/smollm2-mbpp-v2) holds what earlier arms committed:
# train_ids.json (the training list every arm must select, in order; checked, the run stops if it
# differs) and evals/base/ (the base evaluation, seeded so that base is evaluated once for all arms).
# It needs the validation parquet of the shared data (VALIDATION_PARQUET, default ../shared/...).
set -euo pipefail
cd "$(dirname "$0")/../.."
ARM="${ARM:?set ARM to base, golden or a1}"
OUT="${1:-runs/smollm2-mbpp-v2}"
RESULTS="${RESULTS:-docs/results/smollm2-mbpp-v2}"
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

# 1. data: 220 MBPP+ problems held out (seed 2026) with the 45 bundled eval problems, less the later
#    problem of each near-duplicate pair inside that set; the rest of MBPP+ for training, less every
#    problem near HumanEval+ or the held-out set (every signal of codea1.data.decontam).
if [ ! -f "$DATA/train.jsonl" ]; then
  codea1 data convert "$PARQUET" --source mbppplus --check --output "$DATA/mbppplus.jsonl"
  codea1 data convert "$PARQUET" --source humanevalplus --output "$DATA/humanevalplus.jsonl"
  codea1 data split "$DATA/mbppplus.jsonl" --held-out 220 --seed 2026 \
    --train-output "$DATA/mbpp_train.jsonl" --held-out-output "$DATA/heldout_mbpp_all.jsonl"
  codea1 data convert bundled:eval --output "$DATA/heldout_bundled_all.jsonl"
  cat "$DATA/heldout_mbpp_all.jsonl" "$DATA/heldout_bundled_all.jsonl" > "$DATA/heldout_all.jsonl"
  codea1 data deduplicate "$DATA/heldout_all.jsonl" --output "$DATA/heldout.jsonl" \
    --report "$DATA/deduplication_heldout.json"
  codea1 data decontaminate "$DATA/mbpp_train.jsonl" --against "$DATA/humanevalplus.jsonl" \
    --against "$DATA/heldout_all.jsonl" --output "$DATA/train.tmp.jsonl" \
    --report "$DATA/decontamination_train.json"
  mv "$DATA/train.tmp.jsonl" "$DATA/train.jsonl"
fi
if [ ! -f "$DATA/sft_train.jsonl" ]; then
  codea1 data decontaminate bundled:train --against "$DATA/heldout_all.jsonl" \
    --against "$DATA/humanevalplus.jsonl" --output "$DATA/sft_train.tmp.jsonl" \
    --report "$DATA/decontamination_sft.json"
  mv "$DATA/sft_train.tmp.jsonl" "$DATA/sft_train.jsonl"
fi

# 2. the cold start every arm starts from: test role only, shortest asserts first, 4 epochs
if [ ! -f "$OUT/sft/sft.json" ]; then
  rm -rf "$OUT/sft"
  codea1 sft --config "$CONFIG" --out "$OUT/sft" sft.max_examples=null "sft.roles=[test]" sft.test_order=shortest \
    sft.epochs=4 "data.train=$DATA/sft_train.jsonl"
fi

# 3. once, before the base evaluation: 4 scratch a1 steps with the arms' settings, timed (the check that an
#    arm fits one session; not a result, and nothing of it is used by the arms)
if [ "$ARM" = base ] && [ ! -f "$OUT/timing/metrics.jsonl" ]; then
  rm -rf "$OUT/timing"
  codea1 train --config "$CONFIG" --run-dir "$OUT/timing" --max-steps 4 method=a1 \
    "model.code_model=$OUT/sft/shared" "data.train=$DATA/train.jsonl" data.check_gt=true data.require_golden_tests=true \
    train.data_epochs=2 train.max_steps="$(wc -l < "$DATA/train.jsonl")" train.checkpoint_every=1000 policy.lr=3.0e-6 \
    generation.code.temperature=0.7 generation.code.top_p=0.95 generation.code.max_new_tokens=192
  rm -rf "$OUT/timing/checkpoints"
fi

# 4. the arm: its own comparison directory, the committed base evaluation seeded, the committed
#    training list checked; two epochs at 2 questions a step (one step per training problem)
CMP="$OUT/compare-$ARM"
METHODS=base
[ "$ARM" = base ] || METHODS="base,$ARM"
if [ -f "$RESULTS/evals/base/step_0.json" ] && [ ! -f "$CMP/evals/base/step_0.json" ]; then
  mkdir -p "$CMP/evals/base"
  cp "$RESULTS/evals/base/step_0.json" "$RESULTS/evals/base/step_0.samples.jsonl.gz" "$CMP/evals/base/"
fi
IDS=()
[ -f "$RESULTS/train_ids.json" ] && IDS=(--train-ids "$RESULTS/train_ids.json")
STEPS=$(wc -l < "$DATA/train.jsonl")
codea1 compare --config "$CONFIG" --out "$CMP" --methods "$METHODS" --steps "$STEPS" "${IDS[@]}" \
  --eval-problems "$DATA/heldout.jsonl" --code-samples 12 --test-samples 2 --test-k 4 \
  "model.code_model=$OUT/sft/shared" "data.train=$DATA/train.jsonl" data.check_gt=true train.data_epochs=2 \
  train.checkpoint_every=10 train.keep_checkpoints=1 policy.lr=3.0e-6 \
  generation.code.temperature=0.7 generation.code.top_p=0.95 generation.code.max_new_tokens=192 \
  eval.temperature=0.7 eval.top_p=0.95 eval.max_new_tokens=192
