"""`codea1 export`: one trained policy of a run as a clean Hugging Face model directory.

    codea1 export RUN_DIR --role code|test [--step K] --out DIR [--dtype float32|bfloat16|float16]
                  [--push-to-hub REPO_ID] [--private]

The directory holds what `transformers` (`AutoModelForCausalLM.from_pretrained(DIR)`) and vLLM
(`LLM(model=DIR)`) load and nothing else: config.json, generation_config.json, the weights as
safetensors, the tokenizer files, and a model card (README.md) with the run's config and the step's
metrics. The card is huggingface_hub's ModelCard: its metadata (base_model, license where the base
model's own card states one, pipeline_tag, datasets, library_name, tags and, given a held-out evaluation,
the model-index) is what the Hub reads. A LoRA policy (model.mode lora / dual-lora) is merged into its base first. Optimiser, scheduler
and RNG states stay in the run. With --push-to-hub the directory is uploaded as a model repository
(huggingface_hub's create_repo + upload_folder; the token comes from `huggingface-cli login` or
HF_TOKEN).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from huggingface_hub import EvalResult, ModelCard, ModelCardData

from codea1.data.kodcode import HUB_ID as KODCODE_HUB_ID
from codea1.errors import UserError
from codea1.method_traits import TRAITS, method_traits
from codea1.models import SMOLLM2_135M, load_model_and_tokenizer, torch_dtype
from codea1.train.checkpoint import latest_checkpoint, list_checkpoints, read_state, step_dir_name
from codea1.train.metrics import read_metrics

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

DTYPES = ("float32", "bfloat16", "float16")


def policy_folder(run_root: Path, role: str, step: int | None) -> tuple[Path, int]:
    """The checkpoint folder of `role`'s policy at `step` (default: the newest complete checkpoint)."""
    from codea1.train.run_dir import RunDir

    run = RunDir.open(run_root)
    method = run.load_config().method
    if step is None:
        ckpt = latest_checkpoint(run.checkpoints_dir)
        if ckpt is None:
            raise UserError(f"{run.root} has no complete checkpoint to export; train it first")
    else:
        ckpt = run.checkpoints_dir / step_dir_name(step)
        if ckpt not in list_checkpoints(run.checkpoints_dir):
            have = ", ".join(str(read_state(p).step) for p in list_checkpoints(run.checkpoints_dir)) or "none"
            raise UserError(f"{run.root} has no complete checkpoint of step {step} (steps kept: {have})")
    traits = method_traits(method)
    if role == "test" and not traits.writes_tests:
        raise UserError(f"{run.root} is a {method} run: it trains no Test LLM; export --role code")
    # a method that plays both roles with one policy (selfplay) saves it as the code policy
    folder = ckpt / ("test_policy" if role == "test" and traits.separate_test_policy else "code_policy")
    if not folder.is_dir():
        raise UserError(f"{ckpt} holds no {folder.name}/ folder to export")
    return folder, read_state(ckpt).step


def _interval(ci: object) -> str:
    """A 95% interval of fractions as percentage points, or "-" when there is none."""
    if not isinstance(ci, (list, tuple)) or len(ci) < 2 or ci[0] is None or ci[1] is None:
        return "-"
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def held_out_lines(evaluation: dict[str, Any], role: str) -> list[str]:
    """The model card's held-out section from a `codea1 compare` evaluation (evals/METHOD/step_K.json):
    the Code LLM's pass@1 with its 95% interval over problems, or the Test LLM's valid ratios."""
    lines = [
        f"## Held-out evaluation (step {evaluation.get('step')}, method {evaluation.get('method')})",
        "",
        "| measure | value | 95% interval over problems | problems x samples |",
        "|---|---|---|---|",
    ]
    code = evaluation.get("code") or {}
    if role == "code" and isinstance(code.get("pass@1"), (int, float)):
        lines.append(
            f"| pass@1 | {100 * code['pass@1']:.1f}% | {_interval(code.get('ci95'))} | "
            f"{code.get('problems')} x {code.get('samples')} |"
        )
    for mode, scores in (evaluation.get("tests") or {}).items() if role == "test" else []:
        if isinstance(scores, dict) and isinstance(scores.get("valid_ratio"), (int, float)):
            lines.append(
                f"| valid ratio ({mode}) | {100 * scores['valid_ratio']:.1f}% | {_interval(scores.get('valid_ratio_ci95'))} | "
                f"{len(scores.get('per_problem') or {})} x {scores.get('suites_per_problem', '-')} suites |"
            )
    if len(lines) == 4:
        return []
    if evaluation.get("code_commit"):
        lines += ["", f"Evaluated at code commit `{evaluation['code_commit']}`."]
    return [*lines, ""]


# the built-in model names that stand for a model on the Hub (tiny-random is built in code: none)
HUB_IDS = {SMOLLM2_135M: "HuggingFaceTB/SmolLM2-135M-Instruct"}
METHOD_TEXT = {name: t.summary for name, t in TRAITS.items()}


def start_model(config: dict[str, Any], role: str) -> str:
    """The model `role`'s policy started from (model.test_model, when set, for the Test LLM)."""
    model = config.get("model", {})
    return str(model.get("test_model") if role == "test" and model.get("test_model") else model.get("code_model"))


def hub_id(name: str) -> str | None:
    """The Hub id of a start model: a built-in name's source, a hub id as given; None for a local
    directory or a model built in code (tiny-random)."""
    if name in HUB_IDS:
        return HUB_IDS[name]
    if Path(name).exists():
        return None
    return name if re.fullmatch(r"[A-Za-z0-9][\w.\-]*/[\w.\-]+", name) else None


def base_license(name: str) -> str | None:
    """The license the start model's own card states: the README.md of a local model directory, or of a
    Hub model already in the local cache (nothing is downloaded); None when no card says."""
    path = Path(name) / "README.md" if Path(name).is_dir() else None
    if path is None and hub_id(name):
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(hub_id(name), "README.md")
        path = Path(cached) if isinstance(cached, str) else None
    if path is None or not path.is_file():
        return None
    try:
        license_id = ModelCard.load(path, ignore_metadata_errors=True).data.license
    except Exception:  # noqa: BLE001 - a card that cannot be read states no license
        return None
    return license_id if isinstance(license_id, str) and license_id else None


def dataset_names(spec: object) -> list[str]:
    """The datasets of a problem spec (codea1.data.loaders) as a card names them: KodCode by its Hub id,
    a file by its name only (no path of this machine), a named source as written."""
    names = []
    for part in (p.strip() for p in str(spec or "").split(",") if p.strip()):
        source, _, arg = part.partition(":")
        if source == "kodcode":
            names.append(KODCODE_HUB_ID)
        elif "/" in part and not arg:
            names.append(Path(part).name)
        else:
            names.append(f"{source}:{Path(arg).name}" if arg else part)
    return names


def _value(x: object) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def method_lines(config: dict[str, Any]) -> list[str]:
    """The card's method section: what the method trains and its key settings."""
    game, policy, train = config.get("game", {}), config.get("policy", {}), config.get("train", {})
    method = config.get("method")
    rows = [
        ("method", f"`{method}`: {METHOD_TEXT.get(str(method), 'see docs/algorithm.md of codea1')}"),
        ("model.mode", config.get("model", {}).get("mode")),
        ("train.batch_size (questions per step)", train.get("batch_size")),
        ("game.M, game.N", f"{game.get('M')}, {game.get('N')}"),
        ("game.tests_per_suite", game.get("tests_per_suite")),
        ("game.alpha", game.get("alpha")),
        ("game.history_size, game.topvar_ell", f"{game.get('history_size')}, {game.get('topvar_ell')}"),
        ("policy.lr", policy.get("lr")),
        ("policy.kl_coef", policy.get("kl_coef")),
        ("policy.clip_low, policy.clip_high", f"{_value(policy.get('clip_low'))}, {_value(policy.get('clip_high'))}"),
    ]
    return ["## Method", "", "| key | value |", "|---|---|", *(f"| {k} | {_value(v)} |" for k, v in rows), ""]


def eval_results(evaluation: dict[str, Any], role: str, problems: str | None) -> list[EvalResult]:
    """The held-out figures of a `codea1 compare` evaluation as the card's model-index, in percent: the
    Code LLM's pass@1, or the Test LLM's valid ratio, pass@k and mut@k per prompt mode."""
    dataset = {"dataset_type": problems or "held-out", "dataset_name": f"held-out problems ({problems or 'codea1'})"}
    code = evaluation.get("code") or {}
    if role == "code":
        if not isinstance(code.get("pass@1"), (int, float)):
            return []
        value = round(100 * code["pass@1"], 1)
        return [
            EvalResult(
                "text-generation",
                task_name="Code generation",
                metric_type="pass@1",
                metric_name="pass@1 (%)",
                metric_value=value,
                **dataset,
            )
        ]
    out = []
    for mode, scores in (evaluation.get("tests") or {}).items():
        for key, value in (scores or {}).items() if isinstance(scores, dict) else []:
            if not isinstance(value, (int, float)) or not (
                key == "valid_ratio" or re.fullmatch(r"(pass|mut)@\d+", key)
            ):
                continue
            out.append(
                EvalResult(
                    "text-generation",
                    task_name=f"Unit-test generation ({mode})",
                    dataset_config=mode,
                    metric_type=key,
                    metric_name=f"{key.replace('_', ' ')} (%)",
                    metric_value=round(100 * value if key == "valid_ratio" else value, 1),
                    **dataset,
                )
            )
    return out


def card_data(config: dict[str, Any], role: str, results: list[EvalResult], name: str) -> ModelCardData:
    """The card's metadata, as the Hub reads it: nothing is guessed (no base_model for a model that is not
    on the Hub, no license that the base model's own card does not state)."""
    start = start_model(config, role)
    return ModelCardData(
        base_model=hub_id(start),
        license=base_license(start),
        pipeline_tag="text-generation",
        datasets=dataset_names(config.get("data", {}).get("train")) or None,
        library_name="transformers",
        tags=["codea1", "code-a1", "reinforcement-learning", "code", str(config.get("method"))],
        model_name=name if results else None,
        eval_results=results or None,
    )


def model_card(
    run_root: Path,
    role: str,
    step: int,
    config: dict[str, Any],
    metrics: dict[str, Any] | None,
    source: str,
    *,
    commit: str | None = None,
    evaluation: dict[str, Any] | None = None,
    problems: str | None = None,
    name: str | None = None,
) -> str:
    """README.md of the exported model (huggingface_hub's ModelCard): the metadata of `card_data`, then
    what it is, how it was trained (start model, method and its settings, data, steps, code commit), the
    step's training metrics and, given a held-out evaluation (of `problems`), its figures."""
    lines = [
        f"# {'Code' if role == 'code' else 'Test'} LLM of a codea1 run",
        "",
        (
            f"Trained with codea1 (method `{config.get('method')}`, the Code-A1 game of a Code LLM and a Test "
            f"LLM trained against each other with GRPO) from `{start_model(config, role)}`; exported from step "
            f"{step} of the run `{run_root.name}` ({source})."
        ),
        "",
        "Load it with `transformers.AutoModelForCausalLM.from_pretrained` or serve it with vLLM.",
        "",
        "## Training",
        "",
        "| | |",
        "|---|---|",
        f"| start model | `{start_model(config, role)}` |",
        f"| method | `{config.get('method')}` (docs/algorithm.md of codea1) |",
        f"| training data | `{', '.join(dataset_names(config.get('data', {}).get('train')))}` |",
        f"| steps | {step} (questions per step: {config.get('train', {}).get('batch_size')}) |",
        f"| code commit | `{commit or 'not recorded'}` |",
        "",
        *method_lines(config),
    ]
    if evaluation:
        lines += held_out_lines(evaluation, role)
    if metrics:
        keys = ("code_reward", "test_reward", "valid_ratio", "golden_pass_rate", "hist_pass", "mistake_book_size")
        shown = [(k, metrics[k]) for k in keys if isinstance(metrics.get(k), (int, float))]
        if shown:
            lines += [f"## Metrics at step {step} (training batch)", "", "| metric | value |", "|---|---|"]
            lines += [f"| {k} | {v:.4g} |" for k, v in shown]
            lines.append("")
    lines += ["## Training config", "", "```json", json.dumps(config, indent=1, default=str), "```", ""]
    results = eval_results(evaluation, role, problems) if evaluation else []
    data = card_data(config, role, results, name or f"{run_root.name}-{role}")
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines)))


def _read_evaluation(evaluation: str | Path) -> dict[str, Any]:
    """A `codea1 compare` evaluation (evals/METHOD/step_K.json), read for the model card."""
    try:
        held_out = json.loads(Path(evaluation).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"--eval {evaluation}: cannot read a compare evaluation ({exc})") from None
    if not isinstance(held_out, dict) or "code" not in held_out:
        raise UserError(f"--eval {evaluation}: not a compare evaluation (evals/METHOD/step_K.json)")
    return held_out


def held_out_problems(evaluation: str | Path) -> str | None:
    """The held-out problems a compare evaluation (COMPARISON/evals/METHOD/step_K.json) measured, as the
    card names them, from the comparison's compare.json; None when it is not there."""
    try:
        spec = json.loads((Path(evaluation).resolve().parents[2] / "compare.json").read_text(encoding="utf-8"))
        return ",".join(dataset_names(spec["spec"]["eval_problems"])) or None
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def export_policy(
    run_root: str | Path,
    role: str,
    out: str | Path,
    *,
    step: int | None = None,
    dtype: str = "float32",
    evaluation: str | Path | None = None,
) -> dict[str, Any]:
    """Writes the clean model directory; returns {"out", "step", "role", "merged_lora", "files"}.
    `evaluation`: a `codea1 compare` evaluation of this step (evals/METHOD/step_K.json) for the card."""
    from codea1.train.run_dir import RunDir

    if role not in ("code", "test"):
        raise UserError(f"--role must be code or test, not {role!r}")
    if dtype not in DTYPES:
        raise UserError(f"--dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    run_root, out = Path(run_root), Path(out)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} exists and is not empty; choose a new --out")
    held_out = _read_evaluation(evaluation) if evaluation is not None else None
    folder, step = policy_folder(run_root, role, step)
    if held_out is not None and held_out.get("step") != step:
        raise UserError(f"--eval {evaluation} is of step {held_out.get('step')}, the export of step {step}")
    lora = (folder / "adapter_config.json").is_file()
    model, tok = load_model_and_tokenizer(str(folder))  # merges a LoRA adapter into its base
    model = model.to(torch_dtype(dtype))
    config = RunDir(run_root).load_config().to_dict()
    rows = (
        [r for r in read_metrics(run_root / "metrics.jsonl") if r.get("step") == step]
        if (run_root / "metrics.jsonl").is_file()
        else []
    )
    card = model_card(
        run_root,
        role,
        step,
        config,
        rows[-1] if rows else None,
        "LoRA adapter merged into its base" if lora else "full weights",
        commit=RunDir(run_root).read_state().get("code_commit"),
        evaluation=held_out,
        problems=held_out_problems(evaluation) if evaluation is not None else None,
        name=out.name,
    )
    _write_atomically(out, model, tok, card)
    return {
        "out": str(out),
        "step": step,
        "role": role,
        "merged_lora": lora,
        "files": sorted(p.name for p in out.iterdir()),
    }


def _write_atomically(out: Path, model: PreTrainedModel, tok: PreTrainedTokenizerBase, card: str) -> None:
    """The model, tokenizer and card written into a temporary folder next to `out`, then renamed to it:
    an export that fails leaves no folder that looks whole."""
    tmp = out.with_name(out.name + ".tmp-export")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        model.save_pretrained(str(tmp), safe_serialization=True)
        tok.save_pretrained(str(tmp))
        (tmp / "README.md").write_text(card, encoding="utf-8")
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def push_to_hub(folder: str | Path, repo_id: str, *, private: bool = False) -> str:
    """Uploads an exported directory as a model repository; returns the repository's URL."""
    try:
        from huggingface_hub import HfApi
    except ImportError:
        raise UserError("--push-to-hub needs huggingface_hub (installed with transformers)") from None
    api = HfApi()
    try:
        url = api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        api.upload_folder(repo_id=repo_id, folder_path=str(folder), repo_type="model", commit_message="codea1 export")
    except Exception as exc:  # noqa: BLE001 - network, auth, a bad id: the export itself is kept
        raise UserError(
            f"could not push {folder} to the hub as {repo_id} ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else 'no detail'}); the exported directory is "
            f"kept: push it later with `huggingface-cli upload {repo_id} {folder}`"
        ) from None
    return str(url)
