"""Small Markdown and HTML tables of evaluation summaries (numbers from the JSON results, nothing else)."""

from __future__ import annotations

import html
from typing import Any

SKIP = {"tasks", "excluded_reasons", "by_family", "config", "seconds", "excluded"}


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}" if abs(value) <= 1.0 else f"{value:.2f}"
    return str(value)


def rows_of(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """(metric, value) pairs of the scalar entries of a summary, in its order."""
    rows = [(k, _fmt(v)) for k, v in summary.items() if k not in SKIP and not isinstance(v, (dict, list))]
    if isinstance(summary.get("excluded"), list):
        rows.append(("excluded", ", ".join(summary["excluded"]) or "-"))
    for name, secs in (summary.get("seconds") or {}).items():
        rows.append((f"seconds ({name})", _fmt(float(secs))))
    return rows


def summary_markdown(summary: dict[str, Any], title: str = "") -> str:
    lines = [f"### {title}", ""] if title else []
    lines += ["| metric | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows_of(summary)]
    families = summary.get("by_family") or {}
    if families:
        lines += ["", "| mutant family | total | killed |", "|---|---|---|"]
        lines += [f"| {f} | {c['total']} | {c['killed']} |" for f, c in families.items()]
    return "\n".join(lines) + "\n"


def summary_html(summary: dict[str, Any], title: str = "") -> str:
    cells = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows_of(summary))
    head = f"<h3>{html.escape(title)}</h3>" if title else ""
    return f"{head}<table><tr><th>metric</th><th>value</th></tr>{cells}</table>\n"


# the paper's code benchmarks, in its table's order: (display name, the `eval code --benchmark` names)
PAPER_BENCHMARKS = (
    ("HumanEval+", ("humaneval+",)),
    ("MBPP+", ("mbpp+",)),
    ("BigCodeBench", ("bigcodebench", "bigcodebench-complete")),
)


def paper_table(summaries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """One row per model of `codea1 eval code` summaries: pass@1 (%) on HumanEval+, MBPP+ and BigCodeBench
    and their mean, as in the paper's table. Returns (rows, Markdown).

    A row's average is the mean of the three only where all three are present (else it is None and the
    table says which are missing); a summary of another benchmark, or a second one of the same model and
    benchmark, is an error, since the average would silently mean something else.
    """
    names = {b: name for name, aliases in PAPER_BENCHMARKS for b in aliases}
    rows: dict[str, dict[str, Any]] = {}
    for s in summaries:
        args = (s.get("config") or {}).get("args") or {}
        bench = str(args.get("benchmark", ""))
        if bench not in names:
            raise ValueError(f"not one of the paper's code benchmarks: {bench!r} (expected {', '.join(sorted(names))})")
        model = str(args.get("model") or args.get("samples") or "?")
        row = rows.setdefault(model, {"model": model})
        if names[bench] in row:
            raise ValueError(f"two {names[bench]} results for {model}")
        row[names[bench]] = 100.0 * float(s["pass@1"])
        row.setdefault("n", {})[names[bench]] = args.get("n")
    out = []
    for row in rows.values():
        values = [row.get(name) for name, _ in PAPER_BENCHMARKS]
        row["average"] = sum(values) / len(values) if all(v is not None for v in values) else None
        row["missing"] = [name for name, _ in PAPER_BENCHMARKS if row.get(name) is None]
        out.append(row)
    header = ["model", *(name for name, _ in PAPER_BENCHMARKS), "average"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in out:
        cells = [row["model"]] + [
            f"{row[name]:.1f}" if row.get(name) is not None else "-" for name, _ in PAPER_BENCHMARKS
        ]
        cells.append(
            f"{row['average']:.1f}" if row["average"] is not None else "- (missing: " + ", ".join(row["missing"]) + ")"
        )
        lines.append("| " + " | ".join(cells) + " |")
    return out, "\n".join(lines) + "\n\npass@1 in %, from `codea1 eval code` summaries.\n"
