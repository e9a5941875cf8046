"""The state of every random number generator a run draws from (Python's, NumPy's, torch's CPU and CUDA
generators), captured and restored as one plain dict: the trainer's checkpoint and each policy's own
save hold one each, so a resumed run draws the same numbers as an uninterrupted one."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch


def rng_state() -> dict[str, Any]:
    """Every generator's state; CUDA's only where CUDA is available."""
    state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": np.random.get_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: Mapping[str, Any]) -> None:
    """Restores what `rng_state` captured (a state without CUDA's leaves CUDA's generators as they are)."""
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
