"""The exported model card as the Hub reads it: huggingface_hub's `ModelCard.load` (offline) finds the base
model, license (only where the base model's own card states one), pipeline tag, datasets, library, tags
and, given a held-out evaluation, the model-index."""

from __future__ import annotations

import json
from pathlib import Path

from huggingface_hub import ModelCard

from codea1.cli import main
from codea1.config import load_config
from codea1.recipes.export import model_card

PRESETS = Path(__file__).resolve().parents[1] / "codea1" / "configs"
SMALL = [
    "game.M=2",
    "game.N=2",
    "train.batch_size=2",
    "data.limit=4",
    "train.checkpoint_every=1",
    "executor.uid_base=1700990000",
]
EVALUATION = {
    "method": "a1",
    "step": 2,
    "code": {"pass@1": 0.087, "ci95": [0.057, 0.121], "problems": 165, "samples": 12},
    "tests": {
        "whitebox": {"valid_ratio": 0.305, "valid_ratio_ci95": [0.27, 0.34], "pass@4": 28.1, "mut@4": 31.3},
        "blackbox": {"valid_ratio": 0.271, "pass@4": 25.5},
    },
}


def _card(tmp_path: Path, text: str) -> ModelCard:
    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")
    return ModelCard.load(path)


def test_the_card_of_a_hub_start_model_names_it_and_its_training_data(tmp_path: Path) -> None:
    config = load_config(PRESETS / "qwen2.5-coder-1.5b.yaml").to_dict()
    card = _card(tmp_path, model_card(tmp_path / "run", "test", 30, config, None, "full weights"))
    data = card.data
    assert data.base_model == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    assert data.datasets == ["KodCode/KodCode-V1"]  # data.train: kodcode, the hard questions from the hub
    assert data.pipeline_tag == "text-generation" and data.library_name == "transformers"
    assert {"codea1", "code-a1", "reinforcement-learning", "a1"} <= set(data.tags)
    assert data.license is None  # no card of the base model on disk: left out, not guessed
    assert data.eval_results is None  # no evaluation given: no model-index
    assert "## Method" in card.text and "| game.M, game.N | 8, 8 |" in card.text
    assert "| policy.lr | 1e-06 |" in card.text


def test_the_license_comes_from_the_base_models_own_card_and_a_local_start_is_no_hub_id(tmp_path: Path) -> None:
    base = tmp_path / "warm-code"
    base.mkdir()
    (base / "README.md").write_text("---\nlicense: mit\n---\n# a warmed-up model\n")
    config = load_config(PRESETS / "tiny-cpu.yaml", [f"model.code_model={base}"]).to_dict()
    config["data"]["train"] = str(tmp_path / "data" / "train_problems.jsonl")
    card = _card(tmp_path, model_card(tmp_path / "run", "code", 3, config, None, "full weights"))
    assert card.data.license == "mit"
    assert card.data.base_model is None  # a local directory is not a model on the Hub
    assert card.data.datasets == ["train_problems.jsonl"]  # a file's name, not a path of this machine
    assert str(tmp_path / "data") not in card.content.split("## Training config")[0]


def test_an_exported_card_loads_with_its_fields_and_the_held_out_figures(tmp_path: Path) -> None:
    run = tmp_path / "run"
    argv = ["train", "--config", str(PRESETS / "tiny-cpu.yaml"), "--no-progress", "--run-dir", str(run)]
    assert main([*argv, "--max-steps", "2", *SMALL]) == 0
    comparison = tmp_path / "cmp"
    (comparison / "evals" / "a1").mkdir(parents=True)
    (comparison / "compare.json").write_text(json.dumps({"spec": {"eval_problems": "bundled:eval"}}))
    evaluation = comparison / "evals" / "a1" / "step_2.json"
    evaluation.write_text(json.dumps(EVALUATION))
    for role in ("code", "test"):
        out = tmp_path / f"codea1-{role}"
        assert main(["export", str(run), "--role", role, "--out", str(out), "--eval", str(evaluation)]) == 0
        card = ModelCard.load(out / "README.md")
        data = card.data
        assert data.library_name == "transformers" and data.pipeline_tag == "text-generation"
        assert data.datasets == ["bundled:train"] and {"codea1", "code-a1", "a1"} <= set(data.tags)
        assert data.base_model is None and data.license is None  # tiny-random is built in code, on no Hub
        assert data.model_name == out.name
        results = {(r.metric_type, r.dataset_config): r for r in data.eval_results}
        assert all(r.dataset_type == "bundled:eval" and r.task_type == "text-generation" for r in results.values())
        if role == "code":
            assert list(results) == [("pass@1", None)] and results["pass@1", None].metric_value == 8.7
        else:
            assert results["valid_ratio", "whitebox"].metric_value == 30.5
            assert results["pass@4", "blackbox"].metric_value == 25.5
            assert ("pass@1", None) not in results
        assert "| pass@1 | 8.7% |" in card.text if role == "code" else "| valid ratio (whitebox) | 30.5% |" in card.text
