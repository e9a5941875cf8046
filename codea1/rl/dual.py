"""The shared-base dual policy: Code LLM and Test LLM as two LoRA adapters on one frozen base model.

Both policies of Code-A1 start from the same instruct model, and the KL term pulls each back to that
model. With LoRA the frozen base *is* that reference, so one copy of the base serves four roles (the
two policies' backbones and their two references): the whole game fits in about one model's memory.

``dual.code`` and ``dual.test`` are ordinary :class:`~codea1.rl.policy.Policy` objects bound to the
adapters "code" and "test" of one peft model; each activates its adapter before generating, scoring
or training, and owns an optimiser over its own adapter's parameters only. The reference log-probs
come from the same model with adapters disabled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codea1.rl.policy import Policy, PolicyConfig, lora_config

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

CODE_ADAPTER = "code"
TEST_ADAPTER = "test"


class DualPolicy:
    """One frozen base, two LoRA adapters; ``code`` and ``test`` are the two Policy-like halves."""

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        code_config: PolicyConfig | None = None,
        test_config: PolicyConfig | None = None,
    ):
        from peft import get_peft_model

        code_config = code_config or PolicyConfig(lora=True)
        test_config = test_config or code_config
        for p in model.parameters():
            p.requires_grad_(False)
        peft_model = get_peft_model(model, lora_config(code_config), adapter_name=CODE_ADAPTER)
        peft_model.add_adapter(TEST_ADAPTER, lora_config(test_config))
        self.model = peft_model
        self.tokenizer = tokenizer
        self.code = Policy(peft_model, tokenizer, code_config, adapter_name=CODE_ADAPTER)
        self.test = Policy(peft_model, tokenizer, test_config, adapter_name=TEST_ADAPTER)
