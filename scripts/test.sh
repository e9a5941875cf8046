#!/usr/bin/env bash
# Runs the default (fast, offline, CPU) test suite. Extra arguments go to pytest (one process, as given).
# Without arguments (the whole suite, as `make test` and CI run it), two steps follow: the documentation
# site is built with `mkdocs build --strict` (mkdocs.yml; a broken link or anchor, or a page missing from
# the nav, fails it), and the real-engine tier: the vLLM tests and benchmarks again in .venv-vllm
# (scripts/install-vllm.sh), where vLLM's CPU build is installed and its absence is a failure, not a skip.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
VLLM_VENV="${VLLM_VENV:-.venv-vllm}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
# The suite runs on machines with fewer sandbox layers too (each layer's tests check what is there, and
# one test checks that a missing layer stops an Executor by default); outside the suite, as root, a layer
# that does not come up stops a run unless executor.isolation=available asks for less.
export CODEA1_SANDBOX_ISOLATION="${CODEA1_SANDBOX_ISOLATION:-available}"
if [ "$#" -gt 0 ]; then
  "$VENV/bin/python" -m pytest "$@"
  rc=$?
else
  # the whole suite: test files spread over up to 4 processes (pytest-xdist; many tests wait on sandboxed
  # children and subprocesses, so two processes gain even on 2 cores), then the `serial` tests alone
  # (the CPUs this process may use; not `nproc`, which follows the OMP_NUM_THREADS=1 set above)
  workers="$("$VENV/bin/python" -c 'import os; print(min(4, max(1, len(os.sched_getaffinity(0)))))')"
  "$VENV/bin/python" -m pytest -n "$workers" --dist loadfile -m "not slow and not serial"
  rc=$?
  "$VENV/bin/python" -m pytest -m "serial" || rc=1
fi
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: the selection is empty, which is an error for this suite" >&2
  exit 1
fi
if [ "$#" -eq 0 ]; then
  echo "the documentation site: mkdocs build --strict (mkdocs.yml, docs/)"
  # the docs extra's pin (pyproject.toml); pip does nothing when it is already installed
  "$VENV/bin/python" -m pip install -q "mkdocs>=1.6,<2" || rc=1
  site="$(mktemp -d)"
  "$VENV/bin/python" -m mkdocs build --strict --site-dir "$site" || rc=1
  rm -rf "$site"
  if [ -x "$VLLM_VENV/bin/python" ]; then
    echo "the real-engine tier: tests/test_vllm_real_engine.py and the vLLM benchmarks in $VLLM_VENV (vLLM's CPU build)"
    CODEA1_REQUIRE_VLLM=1 OMP_NUM_THREADS=2 "$VLLM_VENV/bin/python" -m pytest -p no:cacheprovider -rA \
      tests/test_vllm_real_engine.py "tests/test_benchmarks_on_cpu.py::test_a_benchmark_runs_at_its_smallest_size[vllm_cpu_rollout]" \
      "tests/test_benchmarks_on_cpu.py::test_a_benchmark_runs_at_its_smallest_size[vllm_cpu_sync_check]" || rc=1
  else
    echo "no $VLLM_VENV (scripts/install-vllm.sh): the real-engine tier did not run" >&2
  fi
fi
exit "$rc"
