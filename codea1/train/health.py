"""Run health: signals of collapse and reward hacking, read from the metrics rows as training runs.

Each rule reads one per-step signal (codea1.train.methods.health_signals and the policies' own metrics)
averaged over the last `health.window` steps, and says in one sentence when it crossed its threshold:
- collapse: a policy's entropy, or a role's response length, below a share of its first window's mean;
  most trained groups with all-equal rewards (no gradient);
- reward hacking: kept tests that never call the function under test, written tests the judge refused
  (introspective, random or not plain data), fresh tests passing far more often than the Mistake Book's.
`check` is pure: rows in, sentences out.

With health.mode=stop the run ends at the first step with a sentence, checkpointed, and `codea1 train`
exits with STOP_EXIT_CODE and `stop_message`: the command that continues the run (a resume may change
health.* keys, and the change is kept in the run's run.json, codea1.train.run_dir).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codea1.config import HealthSection

# `codea1 train`'s exit status when run health stopped the run (0: done, 1: a check or result failed,
# 2: a user error, 130: interrupted)
STOP_EXIT_CODE = 3


def _window(rows: Sequence[dict[str, Any]], key: str, n: int, first: bool = False) -> float | None:
    values = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float))]
    if len(values) < n:
        return None
    part = values[:n] if first else values[-n:]
    return sum(part) / len(part)


def check(rows: Sequence[dict[str, Any]], cfg: HealthSection) -> list[str]:
    """The sentences of every signal past its threshold over the last `cfg.window` rows ([] when healthy,
    or when there are fewer rows than a window)."""
    if cfg.mode == "off" or len(rows) < cfg.window:
        return []
    n, out = cfg.window, []
    for role in ("code", "test"):
        for key, ratio, what in (
            (f"{role}_entropy", cfg.min_entropy_ratio, "entropy"),
            (f"{role}_response_len", cfg.min_length_ratio, "response length"),
        ):
            start, now = _window(rows, key, n, first=True), _window(rows, key, n)
            if start is not None and now is not None and start > 0 and len(rows) >= 2 * n and now < ratio * start:
                out.append(
                    f"collapse: the {role} policy's {what} fell to {now:.3g} over the last {n} steps, "
                    f"{now / start:.0%} of its first {n} steps' {start:.3g} (health.min_"
                    f"{'entropy' if what == 'entropy' else 'length'}_ratio {ratio:g})"
                )
    rules = (
        (
            "code_zero_var_groups",
            cfg.max_zero_var_groups,
            "no signal: {v:.0%} of the Code LLM's groups had all-equal rewards",
        ),
        (
            "test_zero_var_groups",
            cfg.max_zero_var_groups,
            "no signal: {v:.0%} of the Test LLM's trained groups had all-equal rewards",
        ),
        (
            "tests_not_calling",
            cfg.max_tests_not_calling,
            "reward hacking: {v:.0%} of kept tests never call the function under test",
        ),
        (
            "tests_refused",
            cfg.max_tests_refused,
            "reward hacking: the judge refused {v:.0%} of written tests as introspective, random or not plain data",
        ),
        (
            "book_fresh_gap",
            cfg.max_book_fresh_gap,
            "reward hacking: fresh tests pass {v:.0%} more often than the Mistake Book's",
        ),
    )
    names = {
        "code_zero_var_groups": "max_zero_var_groups",
        "test_zero_var_groups": "max_zero_var_groups",
        "tests_not_calling": "max_tests_not_calling",
        "tests_refused": "max_tests_refused",
        "book_fresh_gap": "max_book_fresh_gap",
    }
    for key, limit, sentence in rules:
        v = _window(rows, key, n)
        if v is not None and v > limit:
            out.append(f"{sentence.format(v=v)} over the last {n} steps (health.{names[key]} {limit:g})")
    return out


def stop_message(run_dir: str | Path, step: int, sentences: Sequence[str], cfg: HealthSection) -> str:
    """The one sentence `codea1 train` ends with when run health stopped the run at `step`: the command
    that continues it with the checks only warning, and the thresholds that fired, to loosen instead."""
    keys = sorted(set(re.findall(r"\(health\.(\w+) ", " ".join(sentences))))
    resume = f"codea1 train --resume {run_dir}"
    loosen = "".join(
        f", or loosen a threshold that fired: `{resume} health.{key}=VALUE` (now {getattr(cfg, key):g})"
        for key in keys
        if isinstance(getattr(cfg, key, None), (int, float))
    )
    return (
        f"run health stopped the run at step {step} (checkpointed) on the signals printed above (kept in "
        f"metrics.jsonl as health_warnings); continue it with `{resume} health.mode=warn` (the checks go on, "
        f"printed and logged, without stopping){loosen}"
    )
