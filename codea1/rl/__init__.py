"""codea1.rl: GRPO for the two policies of Code-A1.

- ``grpo``: the maths as pure tensor functions (advantages, clipped loss, aggregation, KL, entropy);
- ``logprobs``: packing (prompt, response) batches and per-token log-probs of a model;
- ``policy``: ``Policy`` (generate / train_step / save / load); ``build``: ``build_policies`` from a config;
- ``dual``: ``DualPolicy``, two LoRA adapters (code, test) on one frozen base.
Sampling lives in ``codea1.inference``. The settings, ``PolicyConfig`` and ``Sampling`` (the base of
``GenerationConfig``), are sections of the one config in ``codea1.config``. Submodules import torch; this
package itself stays light.
"""
