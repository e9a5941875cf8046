"""`codea1 compare`: the four methods of the paper's table from one start, on one budget, evaluated alike.

base (no training), golden, a1 and selfplay start from the same checkpoint (`model.code_model` /
`model.test_model` of the config), with the same seed, data order and budget (training steps, or
minutes of training time per method). Every policy is then evaluated on the same held-out problems:

- the Code LLM: pass@1 from n samples per problem, with a 95% bootstrap interval over problems and the
  paired difference to base (same problems resampled for both);
- the Test LLM: `test_samples` suites per problem written against the problem's GT, white-box (the prompt shows the
  GT) and black-box (the question only), scored by codea1.eval.suite_eval: the share of the suite's
  asserts that are valid, pass@k, mut@k (the project's mutation engine) and Mul.

The training problems are selected once, before any method trains: data.train with every method's
requirement applied to all (golden tests, a GT that passes them), then decontaminated against the
held-out problems (codea1.data.decontam), written to train_problems.jsonl; every method trains on that
file, so all read the same questions in the same order. Before training, the base evaluation gives a
power statement: the paired standard error of a pass@1 difference and the smallest difference the
comparison can detect (power.json).

Everything lands in one output directory, and the same command resumes it: each method's training run
resumes exactly from its last checkpoint (codea1.train.loop), and an evaluation already written is not
redone. Layout: compare.json (what was asked), train_problems.jsonl, train_ids.json, heldout_ids.json,
decontamination.json, power.json, runs/<method>/ (training runs), evals/<method>/step_K.json (with the
per-problem figures) and step_K.samples.jsonl.gz (every held-out sample and its verdict), results.json
(with the code commit), results.md and plots/*.png.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import os
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codea1.config import Config, config_from_dict, migrate
from codea1.data import decontam, load_problems, write_problems_jsonl
from codea1.errors import UserError
from codea1.eval.policy_eval import EvalPlan, evaluate_policies
from codea1.eval.stats import bootstrap_interval, paired_difference, power_line, power_statement
from codea1.method_traits import DEFAULT_METHOD, TRAITS, method_traits, strictest_data_method
from codea1.sandbox.api import Executor
from codea1.train.checkpoint import latest_checkpoint, read_state
from codea1.train.loop import (
    KeptPolicies,
    load_training_problems,
    make_executor,
    method_policies,
    on_problem_file,
    train,
)
from codea1.train.metrics import read_metrics
from codea1.train.run_dir import code_commit

if TYPE_CHECKING:
    from rich.console import Console

TRAINED = tuple(TRAITS)  # every method, in the registry's order (codea1.method_traits)
METHOD_ORDER = ("base", *TRAINED)  # base: the start model, untrained


@dataclass
class CompareSpec:
    """What a comparison runs; stored in compare.json so that a resumed run is the same comparison."""

    methods: list[str] = field(default_factory=lambda: list(METHOD_ORDER))
    steps: int = 10  # training steps per method (with minutes: the most steps)
    minutes: float | None = None  # training-time budget per method, summed over the run's steps
    eval_every: int = 0  # also evaluate every K steps (0: only the start and the end)
    eval_problems: str = "bundled:eval"
    eval_limit: int | None = None  # None: all held-out problems
    code_samples: int = 4
    test_samples: int = 1  # suites per problem for the Test LLM's scores
    test_k: int = 5
    mutation: bool = True
    bootstrap: int = 10_000
    seed: int = 0
    decontaminate: bool = True  # drop training problems that near-duplicate a held-out one

    def eval_plan(self) -> EvalPlan:
        """How each evaluation samples and scores (codea1.eval.policy_eval)."""
        return EvalPlan(
            code_samples=self.code_samples,
            test_samples=self.test_samples,
            test_k=self.test_k,
            mutation=self.mutation,
            bootstrap=self.bootstrap,
            seed=self.seed,
        )

    def validate(self) -> None:
        unknown = [m for m in self.methods if m not in METHOD_ORDER]
        if unknown or not self.methods:
            raise UserError(f"--methods: choose from {', '.join(METHOD_ORDER)} (got {', '.join(self.methods)})")
        if self.steps < 1:
            raise UserError(f"--steps must be >= 1, got {self.steps}")
        if self.minutes is not None and self.minutes <= 0:
            raise UserError(f"--minutes must be > 0, got {self.minutes}")
        if self.eval_every < 0:
            raise UserError(f"--eval-every must be >= 0, got {self.eval_every}")
        if self.code_samples < 1 or self.test_k < 1 or self.test_samples < 1:
            raise UserError("--code-samples, --test-samples and --test-k must be >= 1")


# ----------------------------------------------------------------------------------------------------
# small pure helpers: the commit, eval points (intervals and power: codea1.eval.stats)


def train_seconds(rows: Sequence[dict[str, Any]]) -> float:
    """Training time of a run: its steps' times summed (metrics.jsonl rows; survives resumes)."""
    return sum(float(r.get("time_step") or 0.0) for r in rows)


def eval_points(spec: CompareSpec, last_step: int) -> list[int]:
    """The steps evaluated for a trained method: every eval_every steps, and its last step."""
    points = list(range(spec.eval_every, last_step, spec.eval_every)) if spec.eval_every else []
    return points + [last_step]


def _write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _write_eval(path: Path, record: dict[str, Any]) -> None:
    """An evaluation: its samples (every held-out response and verdict) gzipped beside it, written first,
    then the JSON that marks the evaluation as done."""
    samples = record.pop("samples", [])
    record.setdefault("code_commit", code_commit().get("commit"))
    gz = path.with_name(path.stem + ".samples.jsonl.gz")
    gz.parent.mkdir(parents=True, exist_ok=True)
    tmp = gz.with_name(gz.name + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as handle:
        for row in samples:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    os.replace(tmp, gz)
    _write_json(path, record)


# ----------------------------------------------------------------------------------------------------
# the comparison


class Comparison:
    """One comparison directory: runs what is missing, skips what is done, then writes the report."""

    def __init__(
        self,
        out: Path,
        cfg: Config,
        spec: CompareSpec,
        console: Console | None = None,
        expected_train_ids: list[str] | None = None,
    ) -> None:
        from rich.console import Console

        spec.validate()
        self.out, self.cfg, self.spec = Path(out), cfg, spec
        self.expected_train_ids = expected_train_ids  # a committed list every arm must select, in order
        self.console = console or Console(stderr=True)
        self._claim()

    def _claim(self) -> None:
        """Writes compare.json on the first run; a rerun must ask for the same comparison."""
        record = {"spec": asdict(self.spec), "config": self.cfg.to_dict()}
        path = self.out / "compare.json"
        if path.is_file():
            before = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(before, dict) and isinstance(before.get("config"), dict):
                before["config"], _ = migrate(before["config"])  # written by an earlier version
            if before != json.loads(json.dumps(record)):
                raise UserError(
                    f"{self.out} holds a different comparison (see its compare.json); use the same "
                    f"command to resume it, or another --out"
                )
            self.console.print(f"resuming the comparison in {self.out}")
        else:
            # a new comparison may start from evaluations copied in beforehand (evals/<method>/step_K.json:
            # a base evaluation shared by several comparisons), and from nothing else
            if self.out.exists() and any(p.name != "evals" for p in self.out.iterdir()):
                raise UserError(f"{self.out} exists and is not a comparison directory; choose another --out")
            _write_json(path, record)

    @property
    def train_path(self) -> Path:
        return self.out / "train_problems.jsonl"

    def method_config(self, method: str) -> Config:
        """The method's run config: the comparison's, training on the problems selected once for all."""

        data = on_problem_file(self.cfg.to_dict(), self.train_path)
        data["method"] = DEFAULT_METHOD if method == "base" else method  # base is evaluated as the game's start
        data["train"]["max_steps"] = self.spec.steps
        data["train"]["progress"] = False
        data["data"]["require_golden_tests"] = True
        return config_from_dict(data)

    def eval_path(self, method: str, step: int) -> Path:
        return self.out / "evals" / method / f"step_{step}.json"

    def run(self) -> dict[str, Any]:

        spec = self.spec
        problems = load_problems(spec.eval_problems)
        if spec.eval_limit is not None:
            problems = problems[: spec.eval_limit]
        if not problems:
            raise UserError(f"{spec.eval_problems}: no held-out problems")
        (self.out / "runs").mkdir(parents=True, exist_ok=True)
        with make_executor(self.cfg, hide_paths=[str(self.out.resolve())]) as executor:
            self.select_training_problems(problems, executor)
            self.check_training_list()
            self._base(problems, executor)
            if any(m != "base" for m in spec.methods):
                self.console.print(power_line(self.power()), soft_wrap=True, highlight=False)
            for method in spec.methods:
                if method != "base":
                    self._method(method, problems, executor)
        return self.write_results()

    def select_training_problems(self, held_out: list, executor: Executor) -> None:
        """Once per comparison: data.train with every method's requirements (golden tests, a GT that
        passes them), decontaminated against the held-out problems; written with the id lists and the
        decontamination report. Every method trains on train_problems.jsonl."""
        if self.train_path.is_file():
            return

        data = self.cfg.to_dict()
        data["method"] = strictest_data_method()  # the strictest requirements, applied to every method
        data["data"]["require_golden_tests"] = True
        train = load_training_problems(config_from_dict(data), executor, self.console)
        if self.spec.decontaminate:
            self.console.print(
                f"decontaminating {len(train)} training problems against {len(held_out)} held-out "
                f"problems (names, descriptions, GTs on each other's golden tests)",
                soft_wrap=True,
            )
            kept, pairs = decontam.decontaminate(train, held_out, executor)
        else:
            kept, pairs = list(train), []
        for line in [f"  {p.train_id} ~ {p.held_out_id}: {', '.join(p.signals)}" for p in pairs]:
            self.console.print(line, highlight=False, soft_wrap=True)
        if not kept:
            raise UserError(
                "data.train: every training problem is a near-duplicate of a held-out one "
                "(decontamination.json); choose other training or held-out problems"
            )
        self.console.print(
            f"training problems: {len(kept)} of {len(train)} kept ({len(train) - len(kept)} "
            f"dropped as near-duplicates of held-out problems)",
            soft_wrap=True,
        )
        _write_json(
            self.out / "decontamination.json",
            decontam.report(train, held_out, kept, pairs, {"enabled": self.spec.decontaminate}),
        )
        _write_json(self.out / "train_ids.json", [p.id for p in kept])
        _write_json(self.out / "heldout_ids.json", {p.id: p.source or "unknown" for p in held_out})
        tmp = self.train_path.with_name(self.train_path.name + ".tmp")
        write_problems_jsonl(kept, tmp)
        os.replace(tmp, self.train_path)

    def check_training_list(self) -> None:
        """Stops the comparison when its training list (train_ids.json) is not the committed one: every
        arm, on any machine, must train on one list in one order."""
        if self.expected_train_ids is None:
            return
        selected = json.loads((self.out / "train_ids.json").read_text(encoding="utf-8"))
        if selected == self.expected_train_ids:
            return
        chosen, committed = set(selected), set(self.expected_train_ids)
        missing = [i for i in self.expected_train_ids if i not in chosen]
        extra = [i for i in selected if i not in committed]
        first = next(
            (n for n, (a, b) in enumerate(zip(selected, self.expected_train_ids, strict=False)) if a != b),
            min(len(selected), len(self.expected_train_ids)),
        )
        raise UserError(
            f"{self.out / 'train_ids.json'}: this comparison selected {len(selected)} training problems, the "
            f"committed list has {len(self.expected_train_ids)} (missing {missing[:5]}, extra {extra[:5]}, first "
            f"difference at position {first}); the arms would not train on the same problems: check the data "
            f"files and the code commit against the committed ones"
        )

    def power(self) -> dict[str, Any]:
        """The power statement from the base evaluation (power.json, written once)."""
        path = self.out / "power.json"
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
        base = self.evals("base")[0]
        power = power_statement(base["code"]["per_problem"], base["code"]["samples"])
        _write_json(path, power)
        return power

    def _base(self, problems: list, executor: Executor) -> None:
        path = self.eval_path("base", 0)
        if path.is_file():
            return

        cfg = self.method_config("base")
        self.console.print(f"[bold]base[/bold]: evaluating the start policies on {len(problems)} problems")
        code_policy, test_policy = method_policies(cfg)
        _write_eval(
            path,
            {
                "method": "base",
                "step": 0,
                **evaluate_policies(code_policy, test_policy, problems, executor, cfg, self.spec.eval_plan()),
            },
        )

    def _method(self, method: str, problems: list, executor: Executor) -> None:

        cfg = self.method_config(method)
        run_dir = self.out / "runs" / method
        policies = KeptPolicies()

        stop = None
        if self.spec.minutes is not None:
            budget = self.spec.minutes * 60.0
            stop = lambda rows: train_seconds(rows) >= budget
        done = _last_step(run_dir)
        finished = _budget_spent(run_dir, self.spec)
        targets = eval_points(self.spec, self.spec.steps)
        for target in targets:
            if self.eval_path(method, target).is_file():
                continue
            if finished and done < target:  # the minutes ran out before this point
                break
            self.console.print(f"[bold]{method}[/bold]: training to step {target} of {self.spec.steps}")
            train(
                cfg,
                run_dir,
                resume=(run_dir / "config.yaml").is_file(),
                max_steps=target,
                policy_factory=policies,
                console=self.console,
                executor=executor,
                progress=False,
                stop=stop,
            )
            done = _last_step(run_dir)
            finished = _budget_spent(run_dir, self.spec)
            step = done
            if self.eval_path(method, step).is_file():
                continue
            code_policy, test_policy = policies(cfg)
            test_policy = test_policy if method_traits(method).writes_tests else None  # golden trains no Test LLM
            self.console.print(f"[bold]{method}[/bold]: evaluating step {step} on {len(problems)} problems")
            _write_eval(
                self.eval_path(method, step),
                {
                    "method": method,
                    "step": step,
                    "train_seconds": train_seconds(read_metrics(run_dir / "metrics.jsonl")),
                    **evaluate_policies(code_policy, test_policy, problems, executor, cfg, self.spec.eval_plan()),
                },
            )
            if finished:
                break

    # -- results ---------------------------------------------------------------------------------------

    def evals(self, method: str) -> list[dict[str, Any]]:
        folder = self.out / "evals" / method
        rows = (
            [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("step_*.json")] if folder.is_dir() else []
        )
        return sorted(rows, key=lambda r: r["step"])

    def _heldout_sources(self) -> dict[str, str]:
        """The source of each held-out problem, or {} when the held-out set is one part (pooled figures say it
        all)."""
        ids_path = self.out / "heldout_ids.json"
        sources = json.loads(ids_path.read_text(encoding="utf-8")) if ids_path.is_file() else {}
        return sources if len(set(sources.values())) >= 2 else {}

    def _training_figures(self, method: str) -> dict[str, Any]:
        """A trained method's figures from its metrics: training time, first code reward, epochs, replays."""
        metrics = read_metrics(self.out / "runs" / method / "metrics.jsonl")
        out: dict[str, Any] = {
            "train_seconds": round(train_seconds(metrics), 1),
            "first_step_code_reward": metrics[0].get("code_reward") if metrics else None,
            "epochs_seen": (max(int(r.get("epoch", 0)) for r in metrics) + 1) if metrics else 0,
        }
        if any("mistake_book_replayed" in r for r in metrics):
            out["mistake_book_replayed"] = sum(float(r.get("mistake_book_replayed", 0)) for r in metrics)
            out["steps_with_replay"] = sum(1 for r in metrics if r.get("mistake_book_replayed"))
        return out

    def _method_entry(
        self, method: str, final: dict[str, Any], base: dict[str, Any] | None, sources: dict[str, str]
    ) -> dict[str, Any]:
        """One method's row of results.json: its final evaluation and its paired differences to base."""
        spec = self.spec
        entry: dict[str, Any] = {
            "step": final["step"],
            "code": {k2: v for k2, v in final["code"].items() if k2 != "per_problem"},
        }
        if base is not None and method != "base":
            d, lo, hi = paired_difference(
                final["code"]["per_problem"], base["code"]["per_problem"], samples=spec.bootstrap, seed=spec.seed
            )
            entry["code"]["delta_vs_base"] = d
            entry["code"]["delta_ci95"] = [lo, hi]
        tests = final.get("tests") or (base or {}).get("tests")
        if tests is not None:
            entry["tests"] = _tests_vs_base(tests, final, base, method, spec)
            entry["tests_from"] = method if final.get("tests") else "base (not trained)"
        if base is not None and sources:
            entry["code"]["by_source"] = by_source(
                final["code"]["per_problem"], base["code"]["per_problem"], sources, method != "base", spec
            )
        if method != "base":
            entry.update(self._training_figures(method))
        return entry

    def _versus(self, evaluated: Collection[str]) -> list[dict[str, Any]]:
        """The paired pass@1 differences between each pair of evaluated trained methods, in the registry's
        order (a1 vs golden, a1 vs selfplay, golden vs selfplay)."""
        spec = self.spec
        versus = []
        for new, old in itertools.combinations(TRAINED, 2):
            if new in evaluated and old in evaluated:
                a, b = self.evals(new)[-1]["code"]["per_problem"], self.evals(old)[-1]["code"]["per_problem"]
                d, lo, hi = paired_difference(a, b, samples=spec.bootstrap, seed=spec.seed)
                versus.append({"new": new, "old": old, "delta": d, "ci95": [lo, hi]})
        return versus

    def _code_commits(self, base_rows: list[dict[str, Any]]) -> list[str]:
        """The code commits the evaluations were made at, sorted."""
        return sorted(
            {
                r.get("code_commit")
                for m in self.spec.methods
                for r in (base_rows if m == "base" else self.evals(m))
                if r.get("code_commit")
            }
        )

    def write_results(self) -> dict[str, Any]:
        """Writes results.json, results.md and the curves from the evaluations on disk; returns the results."""
        spec = self.spec
        base_rows = self.evals("base")
        base = base_rows[0] if base_rows else None
        sources = self._heldout_sources()
        k = spec.test_k
        table: dict[str, Any] = {}
        for method in spec.methods:
            rows = base_rows if method == "base" else self.evals(method)
            if not rows:
                continue
            table[method] = self._method_entry(method, rows[-1], base, sources)
        versus = self._versus(table.keys())
        commits = self._code_commits(base_rows)
        power_path = self.out / "power.json"
        results = {
            "spec": asdict(spec),
            "held_out": {"problems": spec.eval_problems, "limit": spec.eval_limit},
            "code_commits": commits,
            "power": json.loads(power_path.read_text(encoding="utf-8")) if power_path.is_file() else None,
            "versus": versus,
            "methods": table,
            "curves": {
                m: [
                    {"step": r["step"], "pass@1": r["code"]["pass@1"]}
                    for r in (base_rows if m == "base" else base_rows[:1] + self.evals(m))
                ]
                for m in spec.methods
            },
        }
        _write_json(self.out / "results.json", results)
        (self.out / "results.md").write_text(comparison_table(results, k), encoding="utf-8")
        write_curves(self.out, spec.methods)
        return results


def _tests_vs_base(
    tests: dict[str, Any], final: dict[str, Any], base: dict[str, Any] | None, method: str, spec: CompareSpec
) -> dict[str, Any]:
    """A copy of the Test LLM's scores, each mode with its valid-ratio difference to base where the method
    trained a Test LLM and base measured that mode per problem."""
    tests = json.loads(json.dumps(tests))
    for mode, scores in tests.items():
        before = ((base or {}).get("tests") or {}).get(mode, {}).get("per_problem")
        if method != "base" and final.get("tests") and before and "per_problem" in scores:
            d, lo, hi = paired_difference(scores["per_problem"], before, samples=spec.bootstrap, seed=spec.seed)
            scores["valid_delta_vs_base"], scores["valid_delta_ci95"] = d, [lo, hi]
    return tests


def by_source(
    per_problem: dict[str, float], base: dict[str, float], sources: dict[str, str], delta: bool, spec: CompareSpec
) -> dict[str, Any]:
    """pass@1 (and the paired difference to base) for each part of a held-out set made of several sources."""
    out: dict[str, Any] = {}
    for source in sorted(set(sources.values())):
        mine = {k: v for k, v in per_problem.items() if sources.get(k) == source}
        mean, lo, hi = bootstrap_interval(list(mine.values()), samples=spec.bootstrap, seed=spec.seed)
        out[source] = {"problems": len(mine), "pass@1": mean, "ci95": [lo, hi]}
        if delta:
            d, dlo, dhi = paired_difference(mine, base, samples=spec.bootstrap, seed=spec.seed)
            out[source].update(delta_vs_base=d, delta_ci95=[dlo, dhi])
    return out


def _last_step(run_dir: Path) -> int:

    ckpt = latest_checkpoint(run_dir / "checkpoints") if (run_dir / "checkpoints").is_dir() else None
    return read_state(ckpt).step if ckpt is not None else 0


def _budget_spent(run_dir: Path, spec: CompareSpec) -> bool:
    """Whether the method's run has used its budget: all its steps, or (with minutes) its training time."""

    step = _last_step(run_dir)
    if step >= spec.steps:
        return True
    if spec.minutes is None:
        return False
    rows = [r for r in read_metrics(run_dir / "metrics.jsonl") if int(r.get("step", 0)) <= step]
    return train_seconds(rows) >= spec.minutes * 60.0


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f}"


def _method_row(method: str, e: dict[str, Any], k: int) -> str:
    """One method's row of the markdown table: code pass@1 and its difference to base, then the Test LLM's
    white-box and black-box scores ("-" where it has none)."""
    c = e["code"]
    lo, hi = c["ci95"]
    delta = "-"
    if "delta_vs_base" in c:
        dlo, dhi = c["delta_ci95"]
        delta = f"{100 * c['delta_vs_base']:+.1f} [{100 * dlo:+.1f}, {100 * dhi:+.1f}]"
    cells = [method, str(e["step"]), f"{_pct(c['pass@1'])} [{_pct(lo)}, {_pct(hi)}]", delta]
    t = e.get("tests")
    if t:
        wb, bb = t["whitebox"], t["blackbox"]
        note = "" if e.get("tests_from") == method else " (base)"
        repeats = _pct(wb["valid_ratio_distinct"]) if "valid_ratio_distinct" in wb else "-"
        cells += [
            f"{_pct(wb['valid_ratio'])}{note}",
            repeats,
            f"{wb[f'pass@{k}']:.1f}",
            f"{wb[f'mut@{k}']:.1f}",
            f"{wb['Mul']:.1f}",
            f"{_pct(bb['valid_ratio'])}",
            f"{bb[f'mut@{k}']:.1f}",
        ]
    else:
        cells += ["-"] * 7
    return "| " + " | ".join(cells) + " |"


def _by_source_lines(parts: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The table of code pass@1 by part of the held-out set, one row per method and part."""
    lines = [
        "",
        "Code pass@1 by part of the held-out set:",
        "",
        "| method | part | problems | pass@1 | vs base |",
        "|---|---|---|---|---|",
    ]
    for method, table in parts:
        for source, c in table.items():
            delta = "-"
            if "delta_vs_base" in c:
                delta = (
                    f"{100 * c['delta_vs_base']:+.1f} [{100 * c['delta_ci95'][0]:+.1f}, "
                    f"{100 * c['delta_ci95'][1]:+.1f}]"
                )
            lines.append(
                f"| {method} | {source} | {c['problems']} | {_pct(c['pass@1'])} "
                f"[{_pct(c['ci95'][0])}, {_pct(c['ci95'][1])}] | {delta} |"
            )
    return lines


def comparison_table(results: dict[str, Any], k: int) -> str:
    """The comparison as a markdown table (percent), intervals in brackets."""
    spec = results["spec"]
    budget = (
        f"up to {spec['steps']} steps (--steps; train.max_steps and the data's epochs may stop a run sooner: "
        f"the steps column is what ran)"
    ) + (f" or {spec['minutes']:g} min of training" if spec.get("minutes") else "")
    intro = (
        f"Held-out: {results['held_out']['problems']}; budget per method: {budget}; code pass@1 from "
        f"{spec['code_samples']} samples per problem; Test LLM: {spec.get('test_samples', 1)} suite(s) per "
        f"problem, first {k} asserts; "
        f"95% bootstrap intervals over problems."
    )
    header = (
        f"| method | steps | code pass@1 | vs base | test valid (white-box) | repeats invalid | pass@{k} | "
        f"mut@{k} | Mul | test valid (black-box) | mut@{k} (black-box) |"
    )
    lines = [intro, "", header, "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_method_row(method, e, k) for method, e in results["methods"].items()]
    parts = [(m, e["code"]["by_source"]) for m, e in results["methods"].items() if e["code"].get("by_source")]
    if parts:
        lines += _by_source_lines(parts)
    for v in results.get("versus") or []:
        lines += [
            "",
            (
                f"{v['new']} vs {v['old']} (code pass@1, paired): {100 * v['delta']:+.1f} "
                f"[{100 * v['ci95'][0]:+.1f}, {100 * v['ci95'][1]:+.1f}]"
            ),
        ]
    if results.get("power"):
        lines += ["", power_line(results["power"])]
    if results.get("code_commits"):
        lines += ["", f"code commit(s): {', '.join(results['code_commits'])}"]
    return "\n".join(lines) + "\n"


def write_curves(out: Path, methods: list[str]) -> list[Path]:
    """Learning curves: R_C, R_T, valid ratio and Mistake Book size per step from each run's metrics,
    and held-out pass@1 at each evaluated step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plots = out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    keys = [
        ("code_reward", "R_C (code reward)"),
        ("test_reward", "R_T (test reward)"),
        ("valid_ratio", "valid ratio of suites"),
        ("mistake_book_size", "Mistake Book size"),
    ]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, (key, title) in zip(axes.flat, keys, strict=False):
        for method in methods:
            rows = read_metrics(out / "runs" / method / "metrics.jsonl") if method != "base" else []
            pts = [(r["step"], r[key]) for r in rows if isinstance(r.get(key), (int, float))]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=method)
        ax.set_title(title)
        ax.set_xlabel("step")
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    fig.tight_layout()
    training = plots / "training.png"
    fig.savefig(training, dpi=100)
    plt.close(fig)

    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, pts in results["curves"].items():
        if pts:
            ax.plot([p["step"] for p in pts], [p["pass@1"] for p in pts], marker="o", label=method)
    ax.set_title("held-out pass@1")
    ax.set_xlabel("step")
    ax.legend()
    fig.tight_layout()
    heldout = plots / "heldout_pass1.png"
    fig.savefig(heldout, dpi=100)
    plt.close(fig)
    return [training, heldout]


def compare(
    out: Path,
    cfg: Config,
    spec: CompareSpec,
    console: Console | None = None,
    expected_train_ids: list[str] | None = None,
) -> dict[str, Any]:
    """Runs (or resumes) a comparison in `out`; returns results.json's content. With
    `expected_train_ids` it stops before any training unless it selected exactly that list."""
    if not math.isfinite(float(spec.minutes or 0.0)):
        raise UserError("--minutes must be finite")
    return Comparison(out, cfg, spec, console, expected_train_ids).run()


__all__ = [
    "CompareSpec",
    "Comparison",
    "compare",
    "comparison_table",
    "eval_points",
]
