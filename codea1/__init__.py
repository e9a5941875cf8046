"""codea1: adversarial reinforcement learning of a Code LLM and a Test LLM (Code-A1)."""

__version__ = "0.1.0"
