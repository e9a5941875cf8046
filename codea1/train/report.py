"""`codea1 report RUN_DIR`: one HTML page with PNG plots and a few example rollouts of a run.

Plots (matplotlib, Agg backend, written to RUN_DIR/plots/): rewards of both policies, pass rates
(golden tests, generated tests, Mistake Book), Mistake Book size/added/removed/replayed, valid_ratio
vs adv, the time of each phase per step and, for a demo, the held-out measurements per stage. A series
that never changes is named instead of drawn; a collapse of R_C or of the golden pass rate is flagged at
the top. Works on a run in progress (reads whatever steps exist); `codea1 train` writes it at every
checkpoint and at the end.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from codea1.errors import UserError
from codea1.train.metrics import read_metrics
from codea1.train.run_dir import RunDir

PHASE_KEYS = [
    ("time_gen_code", "generate code"),
    ("time_gen_tests", "generate tests"),
    ("time_execute", "execute"),
    ("time_learn", "learn"),
]


def _series(rows: list[dict], key: str) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for row in rows:
        value = row.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            xs.append(int(row["step"]))
            ys.append(float(value))
    return xs, ys


def _integer_steps(ax: object) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _save(fig: object, path: Path) -> None:
    """Writes a finished figure as a PNG and frees it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _line_plot(path: Path, rows: list[dict], keys: list[tuple[str, str]], title: str, ylabel: str) -> bool | str:
    """Draws the keys' series; a series that never changes over two or more steps carries nothing and is
    named in the caption instead. Returns False (nothing drawn), or the caption's note ("" if none)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    drawn = False
    flat = []
    for key, label in keys:
        xs, ys = _series(rows, key)
        if len(ys) >= 2 and len(set(ys)) == 1:
            flat.append(f"{label} = {ys[0]:g}")
            continue
        if xs:
            ax.plot(xs, ys, marker="o", markersize=3, label=label)
            drawn = True
    if not drawn:
        plt.close(fig)
        return False
    note = f" (constant, not drawn: {'; '.join(flat)})" if flat else ""
    _integer_steps(ax)
    ax.set_title(title)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)
    return note


def _valid_adv_plot(path: Path, rows: list[dict]) -> bool:
    import matplotlib.pyplot as plt

    pts = [
        (r["step"], r["valid_ratio"], r["adv"])
        for r in rows
        if isinstance(r.get("valid_ratio"), (int, float)) and isinstance(r.get("adv"), (int, float))
    ]
    if not pts:
        return False
    fig, ax = plt.subplots(figsize=(5, 4))
    sc = ax.scatter([p[1] for p in pts], [p[2] for p in pts], c=[p[0] for p in pts], cmap="viridis")
    fig.colorbar(sc, ax=ax, label="step")
    ax.set_xlabel("valid_ratio (mean per step)")
    ax.set_ylabel("adv (mean per step)")
    ax.set_title("Test LLM: validity vs attack")
    ax.grid(alpha=0.3)
    _save(fig, path)
    return True


def _phase_plot(path: Path, rows: list[dict]) -> bool:
    import matplotlib.pyplot as plt

    if not rows:
        return False
    steps = [int(r["step"]) for r in rows]
    fig, ax = plt.subplots(figsize=(6, 3.6))
    bottom = [0.0] * len(rows)
    for key, label in PHASE_KEYS:
        values = [float(r.get(key) or 0.0) for r in rows]
        ax.bar(steps, values, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    other = [max(float(r.get("time_step") or 0.0) - b, 0.0) for r, b in zip(rows, bottom, strict=True)]
    ax.bar(steps, other, bottom=bottom, label="other (bookkeeping)")
    _integer_steps(ax)
    ax.set_xlabel("step")
    ax.set_ylabel("seconds")
    ax.set_title("Time per phase")
    ax.legend(fontsize=8)
    _save(fig, path)
    return True


# the line plots: (file name, title, [(metric key, label), ...], y label)
LINE_PLOTS: list[tuple[str, str, list[tuple[str, str]], str]] = [
    (
        "rewards.png",
        "Mean rewards of both policies",
        [
            ("code_reward", "code reward R_C"),
            ("test_reward", "test reward R_T (all suites)"),
            ("test_reward_selected", "R_T (TopVar-selected)"),
        ],
        "reward",
    ),
    (
        "pass_rates.png",
        "Pass rates of the Code LLM",
        [
            ("golden_pass_rate", "golden tests"),
            ("gen_pass", "generated tests (gen_pass)"),
            ("hist_pass", "Mistake Book (hist_pass)"),
            ("code_valid_frac", "valid codes"),
        ],
        "rate",
    ),
    (
        "mistake_book.png",
        "Mistake Book",
        [
            ("mistake_book_size", "size"),
            ("mistake_book_added", "added"),
            ("mistake_book_removed", "removed"),
            ("mistake_book_replayed", "replayed (retrieved for the step)"),
        ],
        "tests",
    ),
    (
        "policy_stats.png",
        "GRPO statistics",
        [
            ("code_kl", "code KL"),
            ("test_kl", "test KL"),
            ("code_clipfrac", "code clip fraction"),
            ("test_clipfrac", "test clip fraction"),
        ],
        "value",
    ),
    (
        "mismatch.png",
        "Sampling engine against learner, on the trained tokens (engines that report their own log-probs)",
        [
            ("code_mismatch_abs", "code: mean |engine - learner| log-prob"),
            ("test_mismatch_abs", "test: mean |engine - learner| log-prob"),
            ("code_mismatch_kl", "code: KL(engine || learner), k3"),
            ("test_mismatch_kl", "test: KL(engine || learner), k3"),
        ],
        "nats",
    ),
    (
        "health.png",
        "Run health (codea1.train.health): collapse and reward-hacking signals",
        [
            ("code_zero_var_groups", "code groups with equal rewards"),
            ("test_zero_var_groups", "trained test groups with equal rewards"),
            ("tests_not_calling", "kept tests not calling the function"),
            ("tests_refused", "written tests refused by the judge"),
            ("book_fresh_gap", "fresh minus book pass rate"),
        ],
        "share",
    ),
]


def make_plots(rows: list[dict], plots_dir: Path) -> list[tuple[str, str]]:
    """Writes the PNGs; returns (file name, caption) of those that had data."""
    import matplotlib

    matplotlib.use("Agg")
    plots_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for name, title, keys, ylabel in LINE_PLOTS:
        note = _line_plot(plots_dir / name, rows, keys, title, ylabel)
        if note is not False:
            out.append((name, title + note))
    if _valid_adv_plot(plots_dir / "valid_vs_adv.png", rows):
        out.append(("valid_vs_adv.png", "valid_ratio vs adv, one point per step"))
    if _phase_plot(plots_dir / "phase_times.png", rows):
        out.append(("phase_times.png", "Seconds per phase and step"))
    return out


def _last_rollouts(run: RunDir) -> tuple[int | None, list[dict]]:
    files = []
    for path in run.rollouts_dir.glob("step_*.jsonl") if run.rollouts_dir.is_dir() else []:
        try:
            files.append((int(path.stem.split("_", 1)[1]), path))
        except ValueError:
            continue
    if not files:
        return None, []
    step, path = max(files)
    lines = []
    for text in path.read_text(encoding="utf-8").split("\n"):  # JSONL: "\n" only
        try:
            lines.append(json.loads(text))
        except json.JSONDecodeError:
            continue
    return step, lines


def _question_texts(run: RunDir) -> dict[str, str]:
    """Problem prompts by id, when the run's dataset can still be loaded (else the report shows ids)."""
    try:
        from codea1.data import load_problems

        cfg = run.load_config()
        return {p.id: p.prompt for p in load_problems(cfg.data.train)}
    except (UserError, OSError, ValueError, ImportError):  # dataset moved: the report shows ids instead
        return {}


def _example_html(line: dict, question: str) -> str:
    esc = html.escape
    parts = [f"<h3>{esc(str(line.get('question_id')))}</h3>"]
    if question:
        parts.append(f"<details><summary>question</summary><pre>{esc(question)}</pre></details>")
    scores = line.get("scores") or {}
    code_scores = scores.get("codes") or []
    golden = scores.get("golden_rewards")
    for m, code in enumerate(line.get("codes", [])[:2]):
        score = code_scores[m] if m < len(code_scores) else {}
        verdict = ""
        if score:
            verdict = (
                f"valid={score.get('valid')} code_reward={score.get('code_reward', 0):.3f} "
                f"hist_pass={score.get('hist_pass', 0):.3f} "
                f"topvar_selected={score.get('topvar_selected')}"
            )
        elif golden is not None and m < len(golden):
            verdict = f"golden reward={golden[m]:.3f}"
        parts.append(f"<h4>code {m}</h4><p>{esc(verdict)}</p><pre>{esc(code.get('response', ''))}</pre>")
        suites = score.get("suites") or []
        for n, tests in enumerate(code.get("tests", [])[:2]):
            s = suites[n] if n < len(suites) else {}
            sv = (
                (
                    f"valid_tests={s.get('valid_tests')} invalid={s.get('invalid_tests')} "
                    f"gen_fail={s.get('gen_fail', 0):.3f} adv={s.get('adv', 0):.3f} "
                    f"test_reward={s.get('test_reward', 0):.3f}"
                )
                if s
                else ""
            )
            parts.append(f"<h5>attacking suite {n}</h5><p>{esc(sv)}</p><pre>{esc(tests)}</pre>")
    return "\n".join(parts)


COLLAPSE_KEYS = (("code_reward", "R_C (the Code LLM's reward)"), ("golden_pass_rate", "the golden pass rate"))


def collapses(rows: list[dict], window: int = 3, min_start: float = 0.1, ratio: float = 0.5) -> list[str]:
    """One sentence per measure that collapsed: its mean over the last `window` steps fell below `ratio`
    times its mean over the first `window` steps (and that start was at least `min_start`)."""
    out = []
    for key, label in COLLAPSE_KEYS:
        _, ys = _series(rows, key)
        if len(ys) < 2:
            continue
        w = min(window, max(1, len(ys) // 2))
        start, end = sum(ys[:w]) / w, sum(ys[-w:]) / w
        if start >= min_start and end < ratio * start:
            out.append(
                f"{label} collapsed: {start:.3f} over the first {w} step(s), {end:.3f} over the last "
                f"{w}; a learning rate too large for the batch or a weak Test LLM's suites are the usual "
                f"causes"
            )
    return out


def health_flags(rows: list[dict]) -> list[str]:
    """The run-health sentences of the last step that had any, each with the step its rule first fired."""

    def rule(sentence: str) -> str:  # the sentence without its figures: one per rule
        return re.sub(r"[-+]?\d[\d.,e]*%?", "#", sentence)

    first: dict[str, object] = {}
    warned = [r for r in rows if r.get("health_warnings")]
    for r in warned:
        for sentence in r["health_warnings"]:
            first.setdefault(rule(sentence), r.get("step"))
    if not warned:
        return []
    last = warned[-1]
    return [f"health at step {last.get('step')} (since step {first[rule(s)]}): {s}" for s in last["health_warnings"]]


def _heldout_plot(path: Path, stages: dict) -> bool:
    """The demo's held-out measurements per stage, with their 95% intervals."""
    import matplotlib.pyplot as plt

    names = [n for n, m in stages.items() if isinstance(m, dict) and "code" in m and "tests" in m]
    if not names:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    panels = (
        ("tests", "valid_ratio", "valid_ratio_ci95", "Test LLM valid ratio"),
        ("code", "pass@1", "ci95", "Code LLM pass@1"),
    )
    for ax, (part, key, ci, title) in zip(axes, panels, strict=False):
        values = [stages[n][part][key] for n in names]
        lows = [max(values[i] - stages[n][part][ci][0], 0.0) for i, n in enumerate(names)]
        highs = [max(stages[n][part][ci][1] - values[i], 0.0) for i, n in enumerate(names)]
        ax.bar(range(len(names)), values, yerr=[lows, highs], capsize=4, color="#6b9bd1")
        ax.set_xticks(range(len(names)), names, fontsize=8)
        ax.set_title(title + " (held-out, 95% interval)", fontsize=9)
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3, axis="y")
    _save(fig, path)
    return True


def _summary_table(rows: list[dict]) -> str:
    if not rows:
        return "<p>No steps logged yet.</p>"
    keys = [
        "code_reward",
        "test_reward",
        "golden_pass_rate",
        "valid_ratio",
        "adv",
        "mistake_book_size",
        "time_step",
        "outside_model_frac",
    ]
    first, last = rows[0], rows[-1]
    body = "".join(
        f"<tr><td>{k}</td><td>{first.get(k, '')!s:.8}</td><td>{last.get(k, '')!s:.8}</td></tr>"
        for k in keys
        if k in last
    )
    return f"<table><tr><th>metric</th><th>step {first['step']}</th><th>step {last['step']}</th></tr>{body}</table>"


def _eval_html(run: RunDir) -> str:
    """The demo's measurements (eval.json in the run directory or the demo directory above it)."""
    for path in (run.root / "eval.json", run.root.parent / "eval.json"):
        if path.is_file():
            break
    else:
        return ""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if isinstance(data, dict) and isinstance(data.get("lines"), list):
        figure = ""
        if isinstance(data.get("stages"), dict) and _heldout_plot(run.plots_dir / "heldout.png", data["stages"]):
            figure = (
                '<figure><img src="plots/heldout.png" alt="held-out measurements"><figcaption>held-out '
                "measurements per stage</figcaption></figure>"
            )
        items = "".join(f"<li>{html.escape(str(x))}</li>" for x in data["lines"])
        return f"<h2>Held-out measurements</h2>{figure}<ul>{items}</ul>"
    try:
        before, after = data["before"], data["after"]
    except (KeyError, TypeError):
        return ""
    return (
        f"<h2>Evaluation of the code policy</h2><p>{after.get('problems')} held-out problems from "
        f"{html.escape(str(data.get('eval_problems')))}, {after.get('n_samples')} samples each; a sample "
        f"passes if it passes every golden test.</p><table><tr><th></th><th>pass rate</th></tr>"
        f"<tr><td>before training</td><td>{before['pass_rate']:.3f}</td></tr>"
        f"<tr><td>after {data.get('steps')} steps</td><td>{after['pass_rate']:.3f}</td></tr></table>"
    )


def write_report(run_dir: str | Path, examples: int = 3) -> Path:
    """Writes RUN_DIR/report.html (+ plots/*.png) and returns the HTML path."""
    run = RunDir.open(run_dir)
    rows = read_metrics(run.metrics_path)
    if not rows:
        raise UserError(f"{run.metrics_path}: no metrics yet; the run has not finished a step")
    plots = make_plots(rows, run.plots_dir)
    step, lines = _last_rollouts(run)
    texts = _question_texts(run) if lines else {}
    cfg_text = run.config_path.read_text(encoding="utf-8")
    esc = html.escape
    images = "\n".join(
        f'<figure><img src="plots/{name}" alt="{esc(caption)}"><figcaption>{esc(caption)}</figcaption></figure>'
        for name, caption in plots
    )
    example_html = "\n".join(
        _example_html(line, texts.get(str(line.get("question_id")), "")) for line in lines[:examples]
    )
    flags = "".join(f'<p class="flag">{esc(line)}</p>' for line in collapses(rows) + health_flags(rows))
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>codea1 run {esc(run.root.name)}</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:auto}} figure{{display:inline-block;margin:6px}}
pre{{background:#f4f4f4;padding:6px;white-space:pre-wrap;max-height:320px;overflow-y:auto}}
td,th{{padding:2px 10px}} img{{max-width:100%}} .flag{{background:#fde2e1;border-left:4px solid #c0392b;padding:6px}}
</style>
</head><body>
<h1>codea1 run {esc(run.root.name)}</h1>
{flags}
<p>{len(rows)} step(s) logged.</p>
{_summary_table(rows)}
{_eval_html(run)}
<h2>Plots</h2>
{images}
<h2>Example rollouts (step {step if step is not None else "-"})</h2>
{example_html or "<p>No rollouts written.</p>"}
<h2>Config</h2>
<pre>{esc(cfg_text)}</pre>
</body></html>
"""
    run.report_path.write_text(page, encoding="utf-8")
    return run.report_path
