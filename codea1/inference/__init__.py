"""codea1.inference: drawing samples from a policy's model.

- ``rollout``: the sampling interface both policies and evaluation use (``Sample``, ``GenerationConfig``,
  the ``RolloutBackend`` Protocol) and the transformers sampling loop (``TransformersRollout``);
- ``fast_decode``: the cached decoding step the loop uses for Llama-family models;
- ``vllm_backend``: a vLLM engine behind the same interface, kept in step with the learner's weights
  (the 'vllm' extra); ``vllm_worker``: the extension vLLM's workers load to take those weights.
Submodules import torch; this package itself stays light.
"""
