#!/usr/bin/env bash
# The a1 arm of docs/results/smollm2-mbpp-heldout.md alone, for a machine that lost the first attempt's
# run: the pinned worktree's own stages (data, decontamination, cold start) are redone as its script does
# them, then `codea1 compare --methods base,a1` runs in OUT/compare-a1 with the committed base evaluation
# and compare.json (methods narrowed to base,a1) seeded from this repository's docs/results, so base is
# not re-evaluated and golden not retrained. a1's config and training problems do not depend on the
# methods listed. Every stage is skipped when its output exists; the comparison resumes from its
# checkpoints.
#
#   WORKTREE=../codea1-exp CODEA1_VENV=.venv nice -n 19 bash scripts/experiments/smollm2-mbpp-heldout-a1-arm.sh
#
# EVAL_EVERY=K (default 0) also evaluates every K steps (`compare --eval-every`), alike the end's
# evaluation; it adds measurements and changes no training step, so it is written into the seeded
# compare.json whether or not the comparison has started.
#
# WORKTREE: a git worktree pinned at the commit the results page records (git worktree add ../codea1-exp
# <commit>). The code that runs is the worktree's (its script's stages, its codea1 package).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
SEED="$HERE/docs/results/smollm2-mbpp-heldout"
WORKTREE="$(cd "${WORKTREE:?set WORKTREE to the pinned worktree}" && pwd)"
VENV="$(cd "${CODEA1_VENV:-$HERE/.venv}" && pwd)"
SCRIPT="$WORKTREE/scripts/experiments/smollm2-mbpp-heldout.sh"
[ -f "$SCRIPT" ] || { echo "$WORKTREE has no scripts/experiments/smollm2-mbpp-heldout.sh" >&2; exit 2; }
OUT=runs/smollm2-mbpp-heldout
mkdir -p "$WORKTREE/$OUT/compare-a1/evals/base"
if [ ! -f "$WORKTREE/$OUT/compare-a1/compare.json" ]; then
  cp "$SEED/evals/base/step_0.json" "$SEED/evals/base/step_0.samples.jsonl.gz" "$WORKTREE/$OUT/compare-a1/evals/base/"
  "$VENV/bin/python" -c 'import json, sys
r = json.load(open(sys.argv[1])); r["spec"]["methods"] = ["base", "a1"]
json.dump(r, open(sys.argv[2], "w"), indent=1)' "$SEED/compare.json" "$WORKTREE/$OUT/compare-a1/compare.json"
fi
EVAL_EVERY="${EVAL_EVERY:-0}"
"$VENV/bin/python" -c 'import json, sys
r = json.load(open(sys.argv[1])); r["spec"]["eval_every"] = int(sys.argv[2])
json.dump(r, open(sys.argv[1], "w"), indent=1)' "$WORKTREE/$OUT/compare-a1/compare.json" "$EVAL_EVERY"
# the worktree's own script with its comparison pointed at compare-a1 and the methods narrowed
sed -e "s|^cd \"\$(dirname \"\$0\")/../..\"|cd \"$WORKTREE\"|" \
    -e 's|--methods base,golden,a1|--methods base,a1|' \
    -e 's|--out "$OUT/compare"|--out "$OUT/compare-a1"|' \
    -e "s|--steps \"\$STEPS\"|--steps \"\$STEPS\" --eval-every $EVAL_EVERY|" "$SCRIPT" > "$WORKTREE/$OUT/a1-arm.sh"
CODEA1_VENV="$VENV" exec bash "$WORKTREE/$OUT/a1-arm.sh"
