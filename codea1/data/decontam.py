"""Decontamination: training problems that are near-duplicates of a held-out problem are dropped.

A training problem T and a held-out problem H are a pair when any of three signals says so:

- **name**: their entry points are one name once case and underscores are ignored (`is_even` ~ `is_Even`);
- **description**: the word bigrams of their descriptions, after lower-casing, dropping example asserts and
  doctest lines, stop words and the boilerplate of task statements ("write a python function to ..."),
  overlap with a Jaccard index of at least `ngram_threshold` (0.5 by default);
- **behaviour**: each GT passes the other's golden tests, with the call renamed to its own entry point
  (the first `tests_per_problem` golden tests of each side, run in the sandbox against the GT: T's GT on
  H's inputs and H's GT on T's inputs). Two GTs that agree on each other's inputs compute the same
  function whatever the words say.

`decontaminate` returns the kept training problems and one report row per pair found (both ids, the
signals and their evidence), so every drop can be read and argued with. The check is one-sided by
design: a false pair costs one training problem, a missed one inflates the held-out score.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from codea1.data.problem import Problem
from codea1.sandbox.api import Executor

STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "from",
        "with",
        "by",
        "and",
        "or",
        "is",
        "are",
        "be",
        "as",
        "at",
        "that",
        "this",
        "it",
        "its",
        "into",
        "given",
        "which",
        "whether",
        "if",
        "then",
        "than",
        "not",
        "no",
        "all",
        "any",
        "each",
        "every",
        "number",
        "numbers",
        "list",
        "lists",
        "string",
        "strings",
        "value",
        "values",
        "element",
        "elements",
        "write",
        "python",
        "function",
        "program",
        "find",
        "return",
        "returns",
        "check",
        "count",
        "get",
    ]
)
DESCRIPTION_THRESHOLD = 0.5
TESTS_PER_PROBLEM = 3


@dataclass
class ContaminationPair:
    """One training problem found to be a near-duplicate of one held-out problem, and why."""

    train_id: str
    held_out_id: str
    signals: list[str] = field(default_factory=list)  # "name", "description", "behaviour"
    train_entry_point: str = ""
    held_out_entry_point: str = ""
    description_similarity: float = 0.0
    train_description: str = ""
    held_out_description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ----------------------------------------------------------------------------------------------------
# the textual signals (pure)


def normalise_name(name: str) -> str:
    """An entry point without case or underscores: `is_Even`, `isEven` and `is_even` are one name."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def description_words(text: str) -> list[str]:
    """The content words of a task statement: lower case, no example asserts, doctests or signature line,
    no stop words or task boilerplate."""
    kept = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("assert ", ">>>", "Function under test:")) or not s:
            continue
        kept.append(s)
    words = re.findall(r"[a-z0-9]+", " ".join(kept).lower())
    return [w for w in words if w not in STOP_WORDS]


def _ngrams(words: Sequence[str], n: int) -> set[tuple[str, ...]]:
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def description_similarity(a: str, b: str, n: int = 2) -> float:
    """Jaccard index of the word n-grams of two task statements' content words (0 when either is empty)."""
    ga, gb = _ngrams(description_words(a), n), _ngrams(description_words(b), n)
    if not ga or not gb:
        return 0.0
    return len(ga & gb) / len(ga | gb)


# ----------------------------------------------------------------------------------------------------
# the behavioural signal (sandbox)


class _Rename(ast.NodeTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id == self.old:
            return ast.copy_location(ast.Name(id=self.new, ctx=node.ctx), node)
        return node


def renamed_test(test: str, old: str, new: str) -> str | None:
    """A golden test with every use of the name `old` replaced by `new` (None if it does not parse)."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError):
        return None
    return ast.unparse(_Rename(old, new).visit(tree))


def _program(problem: Problem) -> str:
    imports = problem.imports.strip()
    return f"{imports}\n{problem.gt_solution}" if imports else problem.gt_solution


def _passes_foreign_tests(
    executor: Executor,
    hosts: Sequence[Problem],
    guests: Sequence[Problem],
    tests_per_problem: int,
    timeout: float,
    progress: Callable[[int, int], None] | None,
) -> set[tuple[str, str]]:
    """(host id, guest id) for every guest whose first tests all pass on the host's GT (renamed to it):
    one sandbox case per host holding every guest's tests."""
    from codea1.judge.oracle import AssertCase, run_assertions

    cases, owners = [], []
    for host in hosts:
        tests, owner = [], []
        for guest in guests:
            for test in guest.golden_tests[:tests_per_problem]:
                t = renamed_test(test, guest.entry_point, host.entry_point)
                if t is not None:
                    tests.append(t)
                    owner.append(guest.id)
        cases.append(AssertCase(code=_program(host), tests=tests, entry_point=None, id=f"decontam:{host.id}"))
        owners.append(owner)
    found: set[tuple[str, str]] = set()
    ran = run_assertions(executor, cases, timeout=timeout, progress=progress) if cases else []
    for host, owner, res in zip(hosts, owners, ran):
        if not res.defined:
            continue
        verdict: dict[str, bool] = {}
        for gid, r in zip(owner, res.results):
            verdict[gid] = verdict.get(gid, True) and r.status == "pass"
        found |= {(host.id, gid) for gid, ok in verdict.items() if ok}
    return found


def behaviour_pairs(
    train: Sequence[Problem],
    held_out: Sequence[Problem],
    executor: Executor,
    *,
    tests_per_problem: int = TESTS_PER_PROBLEM,
    timeout: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> set[tuple[str, str]]:
    """(train id, held-out id) of every pair whose GTs pass each other's first golden tests."""
    train = [p for p in train if p.golden_tests]
    held_out = [p for p in held_out if p.golden_tests]
    t_on_h = _passes_foreign_tests(executor, train, held_out, tests_per_problem, timeout, progress)
    h_on_t = _passes_foreign_tests(executor, held_out, train, tests_per_problem, timeout, progress)
    return {pair for pair in t_on_h if (pair[1], pair[0]) in h_on_t}


# ----------------------------------------------------------------------------------------------------
# the whole check


def find_pairs(
    train: Sequence[Problem],
    held_out: Sequence[Problem],
    executor: Executor | None = None,
    *,
    ngram_threshold: float = DESCRIPTION_THRESHOLD,
    behaviour: bool = True,
    tests_per_problem: int = TESTS_PER_PROBLEM,
    timeout: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> list[ContaminationPair]:
    """Every (training, held-out) pair that a signal flags, in training order. `behaviour` needs an
    executor (a `codea1.sandbox.Executor`); without one only the textual signals are used."""
    by_name: dict[str, list[Problem]] = {}
    for h in held_out:
        by_name.setdefault(normalise_name(h.entry_point), []).append(h)
    acted = (
        behaviour_pairs(
            train, held_out, executor, tests_per_problem=tests_per_problem, timeout=timeout, progress=progress
        )
        if behaviour and executor is not None
        else set()
    )
    held_words = [(h, _ngrams(description_words(h.description), 2)) for h in held_out]
    pairs: list[ContaminationPair] = []
    for t in train:
        t_words = _ngrams(description_words(t.description), 2)
        for h, h_words in held_words:
            signals = []
            if normalise_name(t.entry_point) == normalise_name(h.entry_point):
                signals.append("name")
            sim = len(t_words & h_words) / len(t_words | h_words) if t_words and h_words else 0.0
            if sim >= ngram_threshold:
                signals.append("description")
            if (t.id, h.id) in acted:
                signals.append("behaviour")
            if signals:
                pairs.append(
                    ContaminationPair(
                        t.id,
                        h.id,
                        signals,
                        t.entry_point,
                        h.entry_point,
                        round(sim, 3),
                        t.description[:200],
                        h.description[:200],
                    )
                )
    return pairs


def decontaminate(
    train: Sequence[Problem], held_out: Sequence[Problem], executor: Executor | None = None, **kwargs: Any
) -> tuple[list[Problem], list[ContaminationPair]]:
    """The training problems that no signal pairs with a held-out problem (order kept), and the pairs.
    A training problem whose id is also a held-out id is always a pair ("same id")."""
    held_ids = {h.id for h in held_out}
    pairs = [
        ContaminationPair(
            t.id, t.id, ["same id"], t.entry_point, t.entry_point, 1.0, t.description[:200], t.description[:200]
        )
        for t in train
        if t.id in held_ids
    ]
    rest = [t for t in train if t.id not in held_ids]
    pairs += find_pairs(rest, held_out, executor, **kwargs)
    dropped = {p.train_id for p in pairs}
    return [t for t in train if t.id not in dropped], pairs


def report(
    train: Sequence[Problem],
    held_out: Sequence[Problem],
    kept: Sequence[Problem],
    pairs: Sequence[ContaminationPair],
    settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The decontamination report as plain data (written as decontamination.json)."""
    counts: dict[str, int] = {}
    for p in pairs:
        for s in p.signals:
            counts[s] = counts.get(s, 0) + 1
    return {
        "train": len(train),
        "held_out": len(held_out),
        "kept": len(kept),
        "dropped": len({p.train_id for p in pairs}),
        "pairs": len(pairs),
        "pairs_by_signal": counts,
        "settings": settings or {},
        "pair_list": [p.to_dict() for p in pairs],
    }


__all__ = [
    "ContaminationPair",
    "behaviour_pairs",
    "decontaminate",
    "description_similarity",
    "description_words",
    "find_pairs",
    "normalise_name",
    "renamed_test",
    "report",
]
