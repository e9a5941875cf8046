"""`codea1 export`: a checkpoint's policy as a clean Hugging Face model directory (full and LoRA), loadable
by plain transformers with the same log-probs, nothing of the optimiser in it, a model card, and the
upload through huggingface_hub's own calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from codea1.cli import main

CONFIG = str(Path(__file__).resolve().parents[1] / "codea1" / "configs" / "tiny-cpu.yaml")
SMALL = [
    "game.M=2",
    "game.N=2",
    "train.batch_size=2",
    "data.limit=4",
    "train.checkpoint_every=1",
    "executor.uid_base=1700960000",
]


def _run(tmp_path: Path, name: str, *extra: str) -> Path:
    run = tmp_path / name
    assert (
        main(["train", "--config", CONFIG, "--no-progress", "--run-dir", str(run), "--max-steps", "2", *SMALL, *extra])
        == 0
    )
    return run


def _logprobs(model, tok, ids) -> list[float]:
    from codea1.rl.policy import Policy, PolicyConfig

    return Policy(model, tok, PolicyConfig(kl_coef=0.0)).logprobs([ids[:4]], [ids[4:]])[0]


@pytest.mark.parametrize("mode", ["full", "dual-lora"])
def test_export_loads_with_plain_transformers_and_scores_as_the_checkpoint(tmp_path: Path, mode: str, capsys) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from codea1.models import load_model_and_tokenizer

    run = _run(tmp_path, mode, f"model.mode={mode}")
    for role, folder in (("code", "code_policy"), ("test", "test_policy")):
        out = tmp_path / f"{mode}-{role}"
        assert main(["export", str(run), "--role", role, "--step", "1", "--out", str(out)]) == 0
        assert f"exported the {role} policy of step 1" in capsys.readouterr().out
        names = {p.name for p in out.iterdir()}
        assert {"config.json", "README.md", "tokenizer.json"} <= names and any(
            n.endswith(".safetensors") for n in names
        )
        assert not names & {"optimizer.pt", "scheduler.pt", "rng.pt", "policy_state.json", "adapter_config.json"}
        card = (out / "README.md").read_text()
        assert "step 1" in card and f'"mode": "{mode}"' in card
        plain = AutoModelForCausalLM.from_pretrained(str(out)).eval()
        tok = AutoTokenizer.from_pretrained(str(out))
        ckpt_model, ckpt_tok = load_model_and_tokenizer(str(run / "checkpoints" / "step_000001" / folder))
        ids = tok("def add(a, b):\n    return a + b\n").input_ids
        assert torch.allclose(
            torch.tensor(_logprobs(plain, tok, ids)), torch.tensor(_logprobs(ckpt_model, ckpt_tok, ids)), atol=1e-5
        )


def test_export_refuses_what_it_cannot_do(tmp_path: Path, capsys) -> None:
    run = _run(tmp_path, "golden", "method=golden")
    assert main(["export", str(run), "--role", "test", "--out", str(tmp_path / "x")]) == 2
    assert "trains no Test LLM" in capsys.readouterr().err
    assert main(["export", str(run), "--role", "code", "--step", "7", "--out", str(tmp_path / "x")]) == 2
    assert "no complete checkpoint of step 7 (steps kept: 1, 2)" in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "f").write_text("x")
    assert main(["export", str(run), "--role", "code", "--out", str(tmp_path / "full")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_push_to_hub_uses_huggingface_hub_create_and_upload(tmp_path: Path, monkeypatch, capsys) -> None:
    import huggingface_hub

    calls = []

    class FakeApi:
        def create_repo(self, repo_id, *, repo_type=None, private=None, exist_ok=False, **kw):
            calls.append(("create_repo", repo_id, repo_type, private, exist_ok))
            return f"https://hub.example/{repo_id}"

        def upload_folder(self, *, repo_id, folder_path, repo_type=None, commit_message=None, **kw):
            calls.append(("upload_folder", repo_id, sorted(p.name for p in Path(folder_path).iterdir()), repo_type))

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    run = _run(tmp_path, "a1")
    out = tmp_path / "model"
    assert (
        main(["export", str(run), "--role", "code", "--out", str(out), "--push-to-hub", "me/codea1-code", "--private"])
        == 0
    )
    assert calls[0] == ("create_repo", "me/codea1-code", "model", True, True)
    assert calls[1][0] == "upload_folder" and "config.json" in calls[1][2] and calls[1][3] == "model"
    assert "pushed to https://hub.example/me/codea1-code" in capsys.readouterr().out

    def failing(self, *a, **kw):
        raise OSError("no network")

    monkeypatch.setattr(FakeApi, "upload_folder", failing)
    assert main(["export", str(run), "--role", "code", "--out", str(tmp_path / "m2"), "--push-to-hub", "me/x"]) == 2
    err = capsys.readouterr().err
    assert "could not push" in err and "kept" in err and (tmp_path / "m2" / "config.json").is_file()
    json.dumps(calls)


def test_the_model_card_says_how_it_was_trained_and_what_the_held_out_set_measured(tmp_path: Path, capsys) -> None:
    """The card names the start model, method, data, steps and the code commit the run started at, and,
    given the step's `codea1 compare` evaluation, its held-out pass@1 with the interval."""
    from codea1.train.run_dir import RunDir

    run = _run(tmp_path, "card")
    commit = RunDir(run).read_state().get("code_commit")
    evaluation = {
        "method": "a1",
        "step": 2,
        "code": {"pass@1": 0.087, "ci95": [0.057, 0.121], "problems": 165, "samples": 12},
        "tests": {},
        "code_commit": "abc123",
    }
    path = tmp_path / "step_2.json"
    path.write_text(json.dumps(evaluation))
    out = tmp_path / "exported"
    assert main(["export", str(run), "--role", "code", "--out", str(out), "--eval", str(path)]) == 0
    card = (out / "README.md").read_text()
    assert "| method | `a1`" in card and "| steps | 2 (questions per step: 2)" in card
    assert "| training data | `bundled:train` |" in card
    assert f"| code commit | `{commit or 'not recorded'}` |" in card
    assert "| pass@1 | 8.7% | [5.7, 12.1] | 165 x 12 |" in card and "`abc123`" in card
    evaluation["step"] = 1
    path.write_text(json.dumps(evaluation))
    assert main(["export", str(run), "--role", "code", "--out", str(tmp_path / "x"), "--eval", str(path)]) == 2
    assert "is of step 1, the export of step 2" in capsys.readouterr().err
