#!/usr/bin/env bash
# The self-play arm of experiment v2 (docs/results/smollm2-mbpp-v2.md, "Amendment: a self-play arm"):
# run from a git worktree pinned at v2's commit, with v2's own script for the data and the cold start, then
# v2's comparison command with method selfplay and CURE's test reward. Every stage is skipped when its
# output exists, so the same command resumes after a stop (training from its last checkpoint; the
# evaluation from the step-114 checkpoint).
#
#   git worktree add ../codea1-v2 ac957438f98140b6299de3c8d8151ad969db53a8
#   cd ../codea1-v2 && RESULTS=<main checkout>/docs/results/smollm2-mbpp-v2 CODEA1_VENV=<venv> \
#     nice -n 19 bash <main checkout>/scripts/experiments/smollm2-mbpp-v2-selfplay.sh [OUT]
set -euo pipefail
OUT="${1:-runs/smollm2-mbpp-v2}"
RESULTS="${RESULTS:?set RESULTS to docs/results/smollm2-mbpp-v2 of the main checkout}"
VENV="${CODEA1_VENV:?set CODEA1_VENV to a virtualenv with codea1 installed}"
[ "$(git rev-parse HEAD)" = ac957438f98140b6299de3c8d8151ad969db53a8 ] || {
  echo "run this from a worktree pinned at ac957438f98140b6299de3c8d8151ad969db53a8" >&2
  exit 2
}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

# 1-3: the data, the cold start and the 4 timed scratch a1 steps, by v2's own script at the pinned commit.
# Its last stage (a base-only comparison) finds nothing to do or refuses the copied directory; either way the
# stages this arm needs are done when the scratch steps' metrics exist.
if [ ! -f "$OUT/timing/metrics.jsonl" ]; then
  RESULTS="$RESULTS" CODEA1_VENV="$VENV" ARM=base bash scripts/experiments/smollm2-mbpp-v2.sh "$OUT" || true
fi
[ -f "$OUT/sft/sft.json" ] && [ -f "$OUT/timing/metrics.jsonl" ] || { echo "the data or cold start failed" >&2; exit 1; }

# 4: the arm. v2's comparison command, with method selfplay, game.selfplay_reward=cure and black-box tests
# (nothing else differs). The comparison's own config says method=selfplay: the pinned commit validates
# game.selfplay_reward against it (with the preset's a1 the command stops at once), and resolves
# game.blackbox_tests from it, which every arm's config copies (with a1 the self-play arm would have written
# white-box tests); the base evaluation is copied, never re-run under it. The pinned commit's `compare` claims only an empty directory, so it is claimed first (the
# command is started until it has written compare.json), then the committed base evaluation is copied in.
CMP="$OUT/compare-selfplay"
DATA="$OUT/data"
COMPARE=("$VENV/bin/python" -m codea1 compare --config codea1/configs/smollm2-cpu.yaml --out "$CMP"
  --methods base,selfplay --steps "$(wc -l < "$DATA/train.jsonl")" --train-ids "$RESULTS/train_ids.json"
  --eval-problems "$DATA/heldout.jsonl" --code-samples 12 --test-samples 2 --test-k 4
  "model.code_model=$OUT/sft/shared" "data.train=$DATA/train.jsonl" data.check_gt=true train.data_epochs=2
  train.checkpoint_every=10 train.keep_checkpoints=1 policy.lr=3.0e-6
  generation.code.temperature=0.7 generation.code.top_p=0.95 generation.code.max_new_tokens=192
  eval.temperature=0.7 eval.top_p=0.95 eval.max_new_tokens=192 method=selfplay game.selfplay_reward=cure
  game.blackbox_tests=true)
# started until FILE exists, then stopped
until_written() {
  local file="$1"
  shift
  "$@" &
  local pid=$!
  while [ ! -f "$file" ] && kill -0 "$pid" 2>/dev/null; do sleep 1; done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -f "$file" ] || { echo "$file was not written" >&2; exit 1; }
}
if [ ! -f "$CMP/compare.json" ]; then
  until_written "$CMP/compare.json" "${COMPARE[@]}"
fi
# The training selection: the pinned commit selects it under method golden with the comparison's other keys,
# and refuses game.selfplay_reward there, so it is made by the same command without that key, in a scratch
# comparison (stopped once it is written, before any evaluation or training), and copied in; the comparison
# then skips its own selection and checks the list against the committed one (--train-ids) as every arm does.
SEL="$OUT/compare-selfplay-selection"
if [ ! -f "$CMP/train_problems.jsonl" ]; then
  SELECT=()
  for arg in "${COMPARE[@]}"; do
    case "$arg" in
      game.selfplay_reward=*) ;;
      "$CMP") SELECT+=("$SEL") ;;
      *) SELECT+=("$arg") ;;
    esac
  done
  [ -f "$SEL/train_problems.jsonl" ] || until_written "$SEL/train_problems.jsonl" "${SELECT[@]}"
  cp "$SEL/train_ids.json" "$SEL/heldout_ids.json" "$SEL/decontamination.json" "$CMP/"
  cp "$SEL/train_problems.jsonl" "$CMP/"
fi
if [ ! -f "$CMP/evals/base/step_0.json" ]; then
  mkdir -p "$CMP/evals/base"
  cp "$RESULTS/evals/base/step_0.json" "$RESULTS/evals/base/step_0.samples.jsonl.gz" "$CMP/evals/base/"
fi
"${COMPARE[@]}"
