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

Three more signals find pairs stated in other words and under other names:

- **outputs**: one GT run on the other's golden inputs (the arguments of its entry-point calls, and
  every reordering of up to three arguments) gives the other GT's outputs on all of them (at least
  `MIN_INPUTS`, not all one value), compared type-tolerantly: a tuple equals a list with the same
  items, a set the sorted list of its items, 2.0 equals 2, floats agree to 1e-6. This catches what the
  assert-based signal misses: a GT that returns a list where the other's tests expect a tuple, the
  arguments in another order, or a GT that fails on some of the other's tests' wrapping;
- **code**: the GTs are one program once docstrings are dropped and every name they bind (function,
  arguments, locals) is numbered in order of first use, or their token sequences agree to at least
  `CODE_THRESHOLD` over at least `CODE_MIN_TOKENS` tokens;
- **words**: the TF-IDF-weighted cosine of the two statements' content words (the weights from both
  sets together) is at least `WORDS_THRESHOLD`, each statement having at least `WORDS_MIN` distinct
  content words: the same statement with its words reordered or a few replaced, which shares few
  bigrams.

`self_pairs` applies every signal inside one set (a held-out set's own near-duplicates); `deduplicate`
keeps the first of each pair.

`decontaminate` returns the kept training problems and one report row per pair found (both ids, the
signals and their evidence), so every drop can be read and argued with. The check is one-sided by
design: a false pair costs one training problem, a missed one inflates the held-out score.
"""

from __future__ import annotations

import ast
import difflib
import itertools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from codea1.judge.jobs import gt_job
from codea1.judge.oracle import AssertCase, run_assertions
from codea1.problem import Problem, gt_program
from codea1.sandbox.api import Executor, OnProgress

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
INPUTS_PER_PROBLEM = 5  # golden inputs of each side that the outputs signal runs
MIN_INPUTS = 3  # inputs on which the two GTs must agree, at least
MAX_PERMUTED_ARGS = 3  # argument reorderings tried up to this many arguments (3! = 6 orders)
CODE_THRESHOLD = 0.9
CODE_MIN_TOKENS = 30
WORDS_THRESHOLD = 0.85
WORDS_MIN = 4  # distinct content words each statement needs for the words signal


@dataclass
class ContaminationPair:
    """One training problem found to be a near-duplicate of one held-out problem, and why."""

    train_id: str
    held_out_id: str
    signals: list[str] = field(default_factory=list)  # name, description, behaviour, outputs, code, words
    train_entry_point: str = ""
    held_out_entry_point: str = ""
    description_similarity: float = 0.0
    train_description: str = ""
    held_out_description: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)  # per signal: what it measured

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

    cases, owners = [], []
    for host in hosts:
        tests, owner = [], []
        for guest in guests:
            for test in guest.golden_tests[:tests_per_problem]:
                t = renamed_test(test, guest.entry_point, host.entry_point)
                if t is not None:
                    tests.append(t)
                    owner.append(guest.id)
        cases.append(AssertCase(code=gt_program(host), tests=tests, entry_point=None, id=f"decontam:{host.id}"))
        owners.append(owner)
    found: set[tuple[str, str]] = set()
    ran = run_assertions(executor, cases, timeout=timeout, progress=progress) if cases else []
    for host, owner, res in zip(hosts, owners, ran, strict=True):
        if not res.defined:
            continue
        verdict: dict[str, bool] = {}
        for gid, r in zip(owner, res.results, strict=False):
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
# stated in other words: TF-IDF cosine of content words (pure)


def word_weights(texts: Sequence[str]) -> list[dict[str, float]]:
    """One unit-length TF-IDF vector per task statement, over content words (`description_words`), with
    document frequencies from all the texts given."""
    docs = [description_words(t) for t in texts]
    df: dict[str, int] = {}
    for words in docs:
        for w in set(words):
            df[w] = df.get(w, 0) + 1
    n = len(docs)
    out = []
    for words in docs:
        tf: dict[str, int] = {}
        for w in words:
            tf[w] = tf.get(w, 0) + 1
        vec = {w: c * (math.log((1 + n) / (1 + df[w])) + 1.0) for w, c in tf.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        out.append({w: v / norm for w, v in vec.items()})
    return out


def cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(w, 0.0) for w, v in a.items())


# ----------------------------------------------------------------------------------------------------
# under other names: normalised GT code (pure)


class _Numbering(ast.NodeTransformer):
    """Numbers every name a program binds (functions, arguments, assigned and loop names) in order of
    first appearance; names it only reads (builtins, modules) stay."""

    def __init__(self, bound: set[str]) -> None:
        self.bound, self.names = bound, {}

    def _name(self, name: str) -> str:
        if name not in self.bound:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self._name(node.name)
        body = node.body
        first = body[0].value if body and isinstance(body[0], ast.Expr) else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            node.body = body[1:] or [ast.Pass()]
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg, node.annotation = self._name(node.arg), None
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._name(node.id)
        return node


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
    return bound


def code_tokens(source: str) -> list[str]:
    """A GT's tokens with docstrings, comments and annotations gone and its own names numbered: two GTs
    that differ only in naming give one list (empty when the code does not parse)."""
    try:
        tree = ast.parse(source)
        text = ast.unparse(_Numbering(_bound_names(tree)).visit(tree))
    except (SyntaxError, ValueError, RecursionError):
        return []
    return re.findall(r"\w+|[^\s\w]", text)


def same_code(a: Sequence[str], b: Sequence[str], threshold: float = CODE_THRESHOLD) -> float | None:
    """The similarity when it makes two GTs one program (identical lists, or at least `threshold` over at
    least CODE_MIN_TOKENS tokens), else None."""
    if a and list(a) == list(b):
        return 1.0
    if min(len(a), len(b)) < CODE_MIN_TOKENS:
        return None
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
        return None
    ratio = matcher.ratio()
    return ratio if ratio >= threshold else None


# ----------------------------------------------------------------------------------------------------
# the same function on the same inputs: outputs compared type-tolerantly (sandbox)


def golden_inputs(problem: Problem, limit: int = INPUTS_PER_PROBLEM) -> list[list[str]]:
    """The positional arguments (as source) of the entry-point calls in the first golden tests, one list
    per distinct call, at most `limit`; calls with keywords or `*args` are skipped."""
    seen: list[list[str]] = []
    for test in problem.golden_tests:
        try:
            tree = ast.parse(test)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id != problem.entry_point or node.keywords:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args):
                continue
            try:
                args = [ast.unparse(a) for a in node.args]
            except (ValueError, RecursionError):
                continue
            if args not in seen:
                seen.append(args)
            if len(seen) >= limit:
                return seen
    return seen


def tolerant(value: object, depth: int = 0) -> Any:  # noqa: ANN401  (a value of any type)
    """A canonical form for type-tolerant comparison: sequences as lists, sets as sorted lists, dicts as
    sorted item lists, integral floats as ints, other floats rounded to 6 places, bools as ints."""
    if depth > 20:
        return repr(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isfinite(value) and value == int(value):
            return int(value)
        return round(value, 6)
    if isinstance(value, (list, tuple)):
        return [tolerant(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((tolerant(v, depth + 1) for v in value), key=repr)
    if isinstance(value, dict):
        return sorted(([tolerant(k, depth + 1), tolerant(v, depth + 1)] for k, v in value.items()), key=repr)
    return value


def _orders(arity: int) -> list[tuple[int, ...]]:
    if arity > MAX_PERMUTED_ARGS:
        return [tuple(range(arity))]
    return list(itertools.permutations(range(arity)))


def _arity(inputs: Sequence[Sequence[str]]) -> int | None:
    """The one argument count of a problem's golden calls (None when they differ or there are none)."""
    arities = {len(args) for args in inputs}
    return arities.pop() if len(arities) == 1 else None


def _run_values(
    executor: Executor, jobs: list[tuple[Problem, list[str]]], timeout: float, progress: OnProgress
) -> list[list[Any] | None]:
    """Each (problem, calls): the tolerant value of every call of the problem's GT (None for a call that
    did not return), or None when the GT did not define."""

    batch = [gt_job(f"decontam-values:{p.id}:{n}", p, calls, timeout) for n, (p, calls) in enumerate(jobs)]
    results = executor.run(batch, progress=progress) if batch else []
    out: list[list[Any] | None] = []
    for res in results:
        if not res.defined:
            out.append(None)
            continue
        row = []
        for r in res.results:
            try:
                row.append(("ok", tolerant(r.value)) if r.status == "ok" else None)
            except Exception:  # noqa: BLE001 - a value that cannot be canonicalised agrees with nothing
                row.append(None)
        out.append(row)
    return out


def output_pairs(
    hosts: Sequence[Problem],
    guests: Sequence[Problem],
    executor: Executor,
    *,
    timeout: float = 0.5,
    progress: Callable[[int, int], None] | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    """(host id, guest id) -> evidence, for every pair where one GT, given the other's golden inputs
    (arguments possibly reordered), returns the other GT's outputs on every one of them (type-tolerant;
    at least MIN_INPUTS inputs on which the other GT returns, not all one value), and the other GT, on
    the first one's inputs, never returns a different value (it agrees, or raises where it does not:
    inputs outside its domain). Only problems whose golden calls have one arity are compared, and only
    with the same arity."""
    everyone = {p.id: p for p in [*hosts, *guests]}
    inputs = {pid: golden_inputs(p) for pid, p in everyone.items()}
    arity = {pid: _arity(calls) for pid, calls in inputs.items()}
    own_jobs = [(p, [f"{p.entry_point}({', '.join(a)})" for a in inputs[pid]]) for pid, p in everyone.items()]
    own = dict(zip(everyone, _run_values(executor, own_jobs, timeout, None), strict=True))
    distinct = {pid: len({repr(v[1]) for v in row if v is not None}) for pid, row in own.items() if row is not None}

    host_ids = list(dict.fromkeys(h.id for h in hosts))
    guest_ids = list(dict.fromkeys(g.id for g in guests))
    one_set = set(host_ids) == set(guest_ids)  # pairs inside one set: each GT on everyone else's inputs once
    directions = ((host_ids, guest_ids),) if one_set else ((host_ids, guest_ids), (guest_ids, host_ids))
    cross_jobs, owners = _cross_jobs(directions, everyone, inputs, arity, own)
    ran = _run_values(executor, cross_jobs, timeout, progress)
    verdicts: dict[tuple[str, str], str] = {}  # (gt of, on inputs of) -> agree | undecided | disagree
    evidence: dict[tuple[str, str], dict[str, Any]] = {}
    for (x, owner), values in zip(owners, ran, strict=True):
        if values is None:
            continue
        by_order: dict[tuple[str, tuple[int, ...]], list[bool | None]] = {}
        for (y, order, n), got in zip(owner, values, strict=True):
            want = own[y][n]
            if want is not None:  # None: x's GT did not return on this input
                by_order.setdefault((y, order), []).append(None if got is None else got[1] == want[1])
        for (y, order), oks in by_order.items():
            verdict = _direction(oks, distinct[y])
            best = verdicts.get((x, y))
            if best is None or _RANK[verdict] > _RANK[best]:  # the best argument order decides
                verdicts[(x, y)] = verdict
                evidence[(x, y)] = {"gt_of": x, "on_inputs_of": y, "inputs": len(oks), "argument_order": list(order)}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    host_set = set(host_ids)
    for (x, y), verdict in verdicts.items():
        if verdict == "agree" and verdicts.get((y, x), "undecided") != "disagree":
            key = (x, y) if x in host_set and (one_set or y not in host_set) else (y, x)
            found.setdefault(key, {**evidence[(x, y)], "other_way": verdicts.get((y, x), "undecided")})
    return found


def _cross_jobs(
    directions: tuple[tuple[list[str], list[str]], ...],
    everyone: dict[str, Problem],
    inputs: dict[str, list[list[str]]],
    arity: dict[str, int | None],
    own: dict[str, list | None],
) -> tuple[list[tuple[Problem, list[str]]], list[tuple[str, list[tuple[str, tuple[int, ...], int]]]]]:
    """One job per GT x of the first list of each direction: x called on the golden inputs of every
    problem y of the second list with x's arity (in every argument order); with, per job, whose input
    each call is (y, argument order, input index)."""
    jobs, owners = [], []
    for a, b in directions:
        for x in a:
            if arity[x] is None or own[x] is None:
                continue
            calls, owner = [], []
            for y in b:
                if y == x or arity[y] != arity[x] or own[y] is None:
                    continue
                for order in _orders(arity[x]):
                    for n, args in enumerate(inputs[y]):
                        calls.append(f"{everyone[x].entry_point}({', '.join(args[i] for i in order)})")
                        owner.append((y, order, n))
            if calls:
                jobs.append((everyone[x], calls))
                owners.append((x, owner))
    return jobs, owners


_RANK = {"disagree": 0, "undecided": 1, "agree": 2}


def _direction(oks: Sequence[bool | None], distinct_outputs: int) -> str:
    """One GT on the other's inputs: `agree` when it returned the other's output on every one (at least
    MIN_INPUTS, and the other's outputs not all one value), `disagree` when it returned another value on
    any, else `undecided` (it raised or timed out where it did not agree)."""
    if any(ok is False for ok in oks):
        return "disagree"
    if len(oks) >= MIN_INPUTS and all(oks) and distinct_outputs >= 2:
        return "agree"
    return "undecided"


# ----------------------------------------------------------------------------------------------------
# the whole check


def find_pairs(
    train: Sequence[Problem],
    held_out: Sequence[Problem],
    executor: Executor | None = None,
    *,
    ngram_threshold: float = DESCRIPTION_THRESHOLD,
    words_threshold: float = WORDS_THRESHOLD,
    code_threshold: float = CODE_THRESHOLD,
    behaviour: bool = True,
    tests_per_problem: int = TESTS_PER_PROBLEM,
    timeout: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> list[ContaminationPair]:
    """Every (training, held-out) pair that a signal flags, in training order. `behaviour` needs an
    executor (a `codea1.sandbox.Executor`) and adds the two signals that run the GTs (behaviour,
    outputs); without one only the textual signals (name, description, words, code) are used."""
    acted: set[tuple[str, str]] = set()
    outputs: dict[tuple[str, str], dict[str, Any]] = {}
    if behaviour and executor is not None:
        acted = behaviour_pairs(
            train, held_out, executor, tests_per_problem=tests_per_problem, timeout=timeout, progress=progress
        )
        outputs = output_pairs(train, held_out, executor, timeout=min(timeout, 0.5), progress=progress)
    return list(
        _flagged(
            [(t, h) for t in train for h in held_out],
            [*train, *held_out],
            acted,
            outputs,
            ngram_threshold=ngram_threshold,
            words_threshold=words_threshold,
            code_threshold=code_threshold,
        )
    )


def _flagged(
    candidates: Iterable[tuple[Problem, Problem]],
    corpus: Sequence[Problem],
    acted: set[tuple[str, str]],
    outputs: dict[tuple[str, str], dict[str, Any]],
    *,
    ngram_threshold: float = DESCRIPTION_THRESHOLD,
    words_threshold: float = WORDS_THRESHOLD,
    code_threshold: float = CODE_THRESHOLD,
) -> Iterable[ContaminationPair]:
    """The candidate (left, right) pairs that any signal flags, each with its evidence."""
    weights = dict(zip((p.id for p in corpus), word_weights([p.description for p in corpus]), strict=True))
    bigrams = {p.id: _ngrams(description_words(p.description), 2) for p in corpus}
    tokens = {p.id: code_tokens(p.gt_solution) for p in corpus}
    for t, h in candidates:
        signals: list[str] = []
        evidence: dict[str, Any] = {}
        if normalise_name(t.entry_point) == normalise_name(h.entry_point):
            signals.append("name")
        tw, hw = bigrams[t.id], bigrams[h.id]
        sim = len(tw & hw) / len(tw | hw) if tw and hw else 0.0
        if sim >= ngram_threshold:
            signals.append("description")
        words = cosine(weights[t.id], weights[h.id])
        if words >= words_threshold and min(len(weights[t.id]), len(weights[h.id])) >= WORDS_MIN:
            signals.append("words")
            evidence["words"] = round(words, 3)
        code = same_code(tokens[t.id], tokens[h.id], code_threshold)
        if code is not None:
            signals.append("code")
            evidence["code"] = round(code, 3)
        if (t.id, h.id) in acted:
            signals.append("behaviour")
        if (t.id, h.id) in outputs:
            signals.append("outputs")
            evidence["outputs"] = outputs[(t.id, h.id)]
        if signals:
            yield ContaminationPair(
                t.id,
                h.id,
                signals,
                t.entry_point,
                h.entry_point,
                round(sim, 3),
                t.description[:200],
                h.description[:200],
                evidence,
            )


def self_pairs(
    problems: Sequence[Problem],
    executor: Executor | None = None,
    *,
    behaviour: bool = True,
    timeout: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> list[ContaminationPair]:
    """Near-duplicate pairs inside one set (the first problem of each pair comes first in `problems`),
    by every signal of `find_pairs`."""
    order = {p.id: n for n, p in enumerate(problems)}
    acted: set[tuple[str, str]] = set()
    outputs: dict[tuple[str, str], dict[str, Any]] = {}
    if behaviour and executor is not None:
        found = behaviour_pairs(problems, problems, executor, timeout=timeout, progress=progress)
        acted = {tuple(sorted(pair, key=order.__getitem__)) for pair in found if pair[0] != pair[1]}
        for (a, b), ev in output_pairs(
            problems, problems, executor, timeout=min(timeout, 0.5), progress=progress
        ).items():
            outputs.setdefault(tuple(sorted((a, b), key=order.__getitem__)), ev)
    candidates = [(a, b) for i, a in enumerate(problems) for b in problems[i + 1 :] if a.id != b.id]
    return list(_flagged(candidates, problems, acted, outputs))


def deduplicate(
    problems: Sequence[Problem], executor: Executor | None = None, **kwargs: Any
) -> tuple[list[Problem], list[ContaminationPair]]:
    """`problems` less the second problem of each near-duplicate pair inside it (order kept), and the
    pairs. Pairs are taken in order and a problem already dropped drops nothing more."""
    pairs = self_pairs(problems, executor, **kwargs)
    dropped: set[str] = set()
    for pair in pairs:
        if pair.train_id not in dropped:
            dropped.add(pair.held_out_id)
    return [p for p in problems if p.id not in dropped], pairs


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


def settings() -> dict[str, Any]:
    """The signals' constants, for a report."""
    return {
        "tests_per_problem": TESTS_PER_PROBLEM,
        "inputs_per_problem": INPUTS_PER_PROBLEM,
        "min_inputs": MIN_INPUTS,
        "max_permuted_args": MAX_PERMUTED_ARGS,
        "code_threshold": CODE_THRESHOLD,
        "code_min_tokens": CODE_MIN_TOKENS,
        "words_threshold": WORDS_THRESHOLD,
        "words_min": WORDS_MIN,
    }


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
    "code_tokens",
    "cosine",
    "decontaminate",
    "deduplicate",
    "description_similarity",
    "description_words",
    "find_pairs",
    "golden_inputs",
    "normalise_name",
    "output_pairs",
    "renamed_test",
    "report",
    "same_code",
    "self_pairs",
    "settings",
    "tolerant",
    "word_weights",
]
