"""The rollout engines: one registry of what can sample from a policy, by name.

Training reads the name from `rollout.backend`, and `codea1 eval` from the same key (its `--engine` is a
short form of it), so an engine is chosen in one place and configured by one section. Each entry names the
object that implements it (a `codea1.inference.engines.Engine`: a config-time check, the training attach,
the evaluation sampler), imported only when the engine is used: a new engine is one module and one line
here. This table sits on the lowest floor so that the config can offer its names as choices.
"""

from __future__ import annotations

from dataclasses import dataclass

from codea1.errors import UserError


@dataclass(frozen=True)
class EngineEntry:
    name: str
    summary: str  # one line: what samples, and what it needs
    target: str  # "module:attribute" of its codea1.inference.engines.Engine


ENGINES: dict[str, EngineEntry] = {
    e.name: e
    for e in (
        EngineEntry(
            "loop",
            "codea1's sampling loop over the policy's own model (CPU or GPU; no extra install)",
            "codea1.inference.engines:LOOP",
        ),
        EngineEntry(
            "hf-generate",
            "the policy's own model.generate, left-padded (CPU or GPU; no extra install)",
            "codea1.inference.engines:HF_GENERATE",
        ),
        EngineEntry(
            "vllm",
            "a vLLM engine per base model, synced after every update (vLLM's CUDA build: the 'vllm' extra; "
            "its CPU build: scripts/install-vllm.sh)",
            "codea1.inference.vllm_backend:ENGINE",
        ),
    )
}

# older names that still load: configs and run directories written before the registry said "transformers"
# for the loop
ALIASES = {"transformers": "loop"}


def engine_names() -> tuple[str, ...]:
    """Every name `rollout.backend` takes: the engines, then the aliases."""
    return (*ENGINES, *ALIASES)


def engine_entry(name: str) -> EngineEntry:
    """The registry's entry for a name or an alias (a UserError naming the engines for any other)."""
    entry = ENGINES.get(ALIASES.get(name, name))
    if entry is None:
        raise UserError(f"unknown rollout engine {name!r}: use one of {', '.join(ENGINES)}")
    return entry


def describe_engines() -> str:
    """One line per engine, for help texts."""
    return "; ".join(f"{e.name}: {e.summary}" for e in ENGINES.values())
