"""Small Markdown and HTML tables of evaluation summaries (numbers from the JSON results, nothing else)."""

from __future__ import annotations

import html
from typing import Any

SKIP = {"tasks", "excluded_reasons", "by_family", "config", "seconds", "excluded"}


def _fmt(value: Any) -> str:
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


def markdown_table(summary: dict[str, Any], title: str = "") -> str:
    lines = [f"### {title}", ""] if title else []
    lines += ["| metric | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows_of(summary)]
    families = summary.get("by_family") or {}
    if families:
        lines += ["", "| mutant family | total | killed |", "|---|---|---|"]
        lines += [f"| {f} | {c['total']} | {c['killed']} |" for f, c in families.items()]
    return "\n".join(lines) + "\n"


def html_table(summary: dict[str, Any], title: str = "") -> str:
    cells = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows_of(summary)
    )
    head = f"<h3>{html.escape(title)}</h3>" if title else ""
    return f"{head}<table><tr><th>metric</th><th>value</th></tr>{cells}</table>\n"
