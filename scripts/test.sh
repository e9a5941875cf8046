#!/usr/bin/env bash
# Runs the default (fast, offline, CPU) test suite. Extra arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
"$VENV/bin/python" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: the selection is empty, which is an error for this suite" >&2
  exit 1
fi
exit "$rc"
