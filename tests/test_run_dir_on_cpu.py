"""A run directory's resume check across versions of codea1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codea1.config import config_from_dict
from codea1.errors import UserError
from codea1.train.run_dir import RunDir


def test_a_run_of_an_earlier_version_resumes_though_keys_were_added_since(tmp_path: Path) -> None:
    """run.json keeps the config a run started with; a key added to codea1 later (here
    train.dynamic_sampling and train.dapo_max_draws) is missing there. It was read as a changed value, so no
    run started before a new key could be resumed; it now takes its default, which keeps the earlier
    behaviour. A real change is still refused."""
    cfg = config_from_dict({"model": {"code_model": "tiny-random"}})
    started = json.loads(json.dumps(cfg.to_dict()))
    for key in ("dynamic_sampling", "dapo_max_draws"):
        del started["train"][key]
    run = RunDir(tmp_path)
    run.write_state(config=started)
    run.check_config(cfg)  # no error
    changed = config_from_dict({"model": {"code_model": "tiny-random"}, "game": {"M": 3}})
    with pytest.raises(UserError, match=r"game\.M: 8 -> 3"):
        run.check_config(changed)
