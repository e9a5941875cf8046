"""In-process mutation testing with Cosmic-Ray's operator families.

Mutants are found on the Python `ast` (what to mutate) and applied as text edits at the exact source
positions (how to mutate), so each mutant's text is what Cosmic-Ray's own lexical operators would write
for the same occurrence: binary operator replacement, comparison operator replacement (with Cosmic-Ray's
None/number restrictions), unary operator replacement and deletion, True/False, and/or, `not` added to
if/while/assert/ternary conditions, number constants +1/-1, break/continue swap, zero-iteration for loops,
exception-handler replacement and decorator removal. A mutant whose text no longer compiles is kept (as
Cosmic-Ray keeps it): it cannot be imported, so every test kills it.

Mutants are generated once per source text (cached) and get deterministic ids
`Operator@line:col[#occurrence]`. `score_mutants` runs GT and the mutants in the sandbox on the test
calls, each program in a child of its own that holds only that program's compiled code and a runner that
is the same for all (so a test call cannot tell GT from a mutant), and the parent compares each value
with GT's: a mutant is killed when it fails to define, a call raises or returns another value, or its run
exceeds a limit scaled from GT's runtime; the first killing call is recorded. The reference values come
from GT runs made exactly like the mutants' runs, and a call scores only where they agree.
"""

from __future__ import annotations

import ast
import io
import random
import re
import time
import tokenize
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any

from codea1.data.check import time_limit
from codea1.judge.equality import values_equal
from codea1.judge.mutants import alike_jobs
from codea1.sandbox.api import Executor
from codea1.sandbox.values import contains_unserializable

BINARY_OPS = {  # ast class name -> (Cosmic-Ray name, source text)
    "Add": ("Add", "+"),
    "Sub": ("Sub", "-"),
    "Mult": ("Mul", "*"),
    "Div": ("Div", "/"),
    "FloorDiv": ("FloorDiv", "//"),
    "Mod": ("Mod", "%"),
    "Pow": ("Pow", "**"),
    "RShift": ("RShift", ">>"),
    "LShift": ("LShift", "<<"),
    "BitOr": ("BitOr", "|"),
    "BitAnd": ("BitAnd", "&"),
    "BitXor": ("BitXor", "^"),
}
COMPARE_OPS = {
    "Eq": ("Eq", "=="),
    "NotEq": ("NotEq", "!="),
    "Lt": ("Lt", "<"),
    "LtE": ("LtE", "<="),
    "Gt": ("Gt", ">"),
    "GtE": ("GtE", ">="),
    "Is": ("Is", "is"),
    "IsNot": ("IsNot", "is not"),
}
UNARY_OPS = {"UAdd": ("UAdd", "+"), "USub": ("USub", "-"), "Invert": ("Invert", "~"), "Not": ("Not", "not")}
UNARY_REPLACEMENT_TEXT = {"UAdd": "+", "USub": "-", "Invert": "~", "Not": "not "}
# Cosmic-Ray: against None only Eq->IsNot, NotEq->Is, Is<->IsNot; against a number never to is/is not
RHS_NONE_TARGETS = {"Eq": ("IsNot",), "NotEq": ("Is",), "Is": ("IsNot",), "IsNot": ("Is",)}
RHS_NUMBER_TARGETS = ("Eq", "NotEq", "Lt", "LtE", "Gt", "GtE")

FAMILIES = {
    "ReplaceBinaryOperator": "binary_operator_replacement",
    "ReplaceComparisonOperator": "comparison_operator_replacement",
    "ReplaceUnaryOperator": "unary_operator_replacement",
    "ReplaceTrueWithFalse": "boolean_replacer",
    "ReplaceFalseWithTrue": "boolean_replacer",
    "ReplaceAndWithOr": "boolean_replacer",
    "ReplaceOrWithAnd": "boolean_replacer",
    "AddNot": "boolean_replacer",
    "ReplaceBreakWithContinue": "break_continue",
    "ReplaceContinueWithBreak": "break_continue",
    "NumberReplacer": "number_replacer",
    "ZeroIterationForLoop": "zero_iteration_for_loop",
    "ExceptionReplacer": "exception_replacer",
    "RemoveDecorator": "remove_decorator",
}
EXCEPTION_STAND_IN = "CosmicRayTestingException"  # left undefined, as Cosmic-Ray leaves it


def family_of(operator: str) -> str:
    """The Cosmic-Ray operator family ("binary_operator_replacement", ...) of an operator name."""
    return FAMILIES.get(operator.split("_", 1)[0], "other")


@dataclass(frozen=True)
class Mutant:
    """One mutant: the operator (Cosmic-Ray's name), where, what text changed, and the mutated program."""

    id: str
    operator: str
    family: str
    line: int
    col: int
    original: str
    replacement: str
    code: str
    compiles: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Source:
    """Source text with conversions from ast (line, utf-8 byte column) to absolute character offsets."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, lineno: int, byte_col: int) -> int:
        line = self.lines[lineno - 1] if lineno - 1 < len(self.lines) else ""
        col = len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        return self.starts[lineno - 1] + col

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    def line_col(self, offset: int) -> tuple[int, int]:
        for i in range(len(self.starts) - 1):
            if self.starts[i + 1] > offset:
                return i + 1, offset - self.starts[i]
        return len(self.lines), 0


_GAP_TOKEN = re.compile(r"[^\s()\\]+")


def _gap_tokens(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """Tokens (absolute start, end, text) in a gap between two expressions: parens, spaces and comments
    are skipped. Such a gap holds only an operator or keyword, so this is a tiny, exact lexer for it."""
    gap = text[start:end]
    out = []
    pos = 0
    for line in gap.splitlines(keepends=True):
        code = line.split("#", 1)[0]
        for match in _GAP_TOKEN.finditer(code):
            out.append((start + pos + match.start(), start + pos + match.end(), match.group()))
        pos += len(line)
    return out


def _is_parenthesised(src: _Source, before: int, node: ast.AST) -> bool:
    """True if an opening parenthesis stands between offset `before` and the node's own start."""
    return "(" in src.text[before : src.start(node)].split("#", 1)[0]


def _number_value(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


class _Finder(ast.NodeVisitor):
    """Collects (operator, start, end, replacement text) edits for every mutation point."""

    def __init__(self, src: _Source):
        self.src = src
        self.edits: list[tuple[str, int, int, str]] = []
        self.skipped = 0
        self.annotation_ids: set[int] = set()
        self._token_cache: list[tuple[int, int, str]] | None = None

    def add(self, operator: str, start: int, end: int, replacement: str) -> None:
        self.edits.append((operator, start, end, replacement))

    # binary operators ---------------------------------------------------------------------------
    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        # Cosmic-Ray leaves `|` inside an annotated assignment's annotation alone
        if isinstance(node.annotation, ast.BinOp) and isinstance(node.annotation.op, ast.BitOr):
            self.annotation_ids.add(id(node.annotation))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        name = type(node.op).__name__
        if name in BINARY_OPS and id(node) not in self.annotation_ids:
            tokens = _gap_tokens(self.src.text, self.src.end(node.left), self.src.start(node.right))
            from_name, text = BINARY_OPS[name]
            if len(tokens) == 1 and tokens[0][2] == text:
                start, end, _ = tokens[0]
                for to_name, to_text in BINARY_OPS.values():
                    if to_name != from_name:
                        self.add(f"ReplaceBinaryOperator_{from_name}_{to_name}", start, end, to_text)
            else:
                self.skipped += 1
        self.generic_visit(node)

    # comparisons --------------------------------------------------------------------------------
    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            name = type(op).__name__
            tokens = _gap_tokens(self.src.text, self.src.end(left), self.src.start(right))
            if name in COMPARE_OPS:
                from_name, text = COMPARE_OPS[name]
                if tokens and " ".join(t[2] for t in tokens) == text:
                    start, end = tokens[0][0], tokens[-1][1]
                    paren = _is_parenthesised(self.src, end, right)
                    if not paren and isinstance(right, ast.Constant) and right.value is None:
                        targets = RHS_NONE_TARGETS.get(from_name, ())
                    elif not paren and _number_value(right):
                        targets = RHS_NUMBER_TARGETS
                    else:
                        targets = tuple(n for n, _ in COMPARE_OPS.values())
                    for to_name, to_text in COMPARE_OPS.values():
                        if to_name != from_name and to_name in targets:
                            # Cosmic-Ray swaps the operator leaf for " <op>" (its own leading space)
                            self.add(f"ReplaceComparisonOperator_{from_name}_{to_name}", start, end, " " + to_text)
                else:
                    self.skipped += 1
            left = right
        self.generic_visit(node)

    # unary operators ----------------------------------------------------------------------------
    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        name = type(node.op).__name__
        from_name, text = UNARY_OPS[name]
        start = self.src.start(node)
        if self.src.text.startswith(text, start):
            end = start + len(text)
            for to_name in ("UAdd", "USub", "Invert", "Not", None):
                if to_name == from_name:
                    continue
                if from_name == "Not" and to_name is not None:
                    continue
                if from_name == "UAdd" and to_name is None:
                    continue
                if to_name is None:
                    self.add(f"ReplaceUnaryOperator_Delete_{from_name}", start, end, "")
                else:
                    self.add(
                        f"ReplaceUnaryOperator_{from_name}_{to_name}",
                        start,
                        end,
                        UNARY_REPLACEMENT_TEXT[to_name],
                    )
        else:
            self.skipped += 1
        self.generic_visit(node)

    # booleans -----------------------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> None:
        start, end = self.src.start(node), self.src.end(node)
        if node.value is True and self.src.text[start:end] == "True":
            self.add("ReplaceTrueWithFalse", start, end, "False")
        elif node.value is False and self.src.text[start:end] == "False":
            self.add("ReplaceFalseWithTrue", start, end, "True")
        elif _number_value(node):
            literal = self.src.text[start:end]
            try:
                same = eval(literal, {"__builtins__": {}}) == node.value  # a numeric literal only
            except Exception:  # noqa: BLE001 - not a plain literal at that span (e.g. f-string quirks)
                same = False
            if same:
                for offset in (1, -1):
                    self.add("NumberReplacer", start, end, " " + str(node.value + offset))
            else:
                self.skipped += 1

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        word, operator = ("and", "ReplaceAndWithOr") if isinstance(node.op, ast.And) else ("or", "ReplaceOrWithAnd")
        replacement = "or" if word == "and" else "and"
        for left, right in zip(node.values, node.values[1:], strict=False):
            tokens = _gap_tokens(self.src.text, self.src.end(left), self.src.start(right))
            if len(tokens) == 1 and tokens[0][2] == word:
                self.add(operator, tokens[0][0], tokens[0][1], replacement)
            else:
                self.skipped += 1
        self.generic_visit(node)

    def _add_not_after_keyword(self, keyword_end: int) -> None:
        self.add("AddNot", keyword_end, keyword_end, " not")

    def visit_If(self, node: ast.If) -> None:
        start = self.src.start(node)
        if self.src.text.startswith("if", start):  # an `elif` is not mutated by Cosmic-Ray's AddNot
            self._add_not_after_keyword(start + 2)
        self.generic_visit(node)

    def visit_While(self, node: ast.While) -> None:
        self._add_not_after_keyword(self.src.start(node) + len("while"))
        self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> None:
        self._add_not_after_keyword(self.src.start(node) + len("assert"))
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        tokens = _gap_tokens(self.src.text, self.src.end(node.body), self.src.start(node.test))
        if len(tokens) == 1 and tokens[0][2] == "if":
            self._add_not_after_keyword(tokens[0][1])
        else:
            self.skipped += 1
        self.generic_visit(node)

    # control flow -------------------------------------------------------------------------------
    def visit_Break(self, node: ast.Break) -> None:
        self.add("ReplaceBreakWithContinue", self.src.start(node), self.src.end(node), "continue")

    def visit_Continue(self, node: ast.Continue) -> None:
        self.add("ReplaceContinueWithBreak", self.src.start(node), self.src.end(node), "break")

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        tokens = _gap_tokens(self.src.text, self.src.end(node.target), self.src.start(node.iter))
        if tokens and tokens[-1][2] == "in":
            start = tokens[-1][1]  # the iterable and its prefix (parentheses included) become " []"
            end = self.src.end(node.iter)
            while end < len(self.src.text) and self.src.text[start:end].count("(") > self.src.text[start:end].count(
                ")"
            ):
                end += 1
            self.add("ZeroIterationForLoop", start, end, " []")
        else:
            self.skipped += 1
        self.generic_visit(node)

    visit_AsyncFor = visit_For

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        names = []
        if isinstance(node.type, ast.Name):
            names = [node.type]
        elif isinstance(node.type, ast.Tuple):
            names = [e for e in node.type.elts if isinstance(e, ast.Name)]
        for name in names:
            self.add("ExceptionReplacer", self.src.start(name), self.src.end(name), EXCEPTION_STAND_IN)
        self.generic_visit(node)

    def _bare_star_markers(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A bare `*` (keyword-only marker) or `/` (positional-only marker) in a parameter list is an
        operator token to Cosmic-Ray's lexer, so it gets binary replacements (all of them syntax errors)."""
        args = node.args
        if not ((args.vararg is None and args.kwonlyargs) or args.posonlyargs):
            return
        tokens = self._tokens()
        start = self.src.start(node)
        i = next((j for j, t in enumerate(tokens) if t[0] >= start and t[2] == "("), None)
        if i is None:
            return
        depth = 0
        for j in range(i, len(tokens)):
            pos, end, text = tokens[j]
            if text in "([{":
                depth += 1
            elif text in ")]}":
                depth -= 1
                if depth == 0:
                    break
            elif depth == 1 and text in ("*", "/") and j + 1 < len(tokens) and tokens[j + 1][2] in (",", ")"):
                from_name = "Mul" if text == "*" else "Div"
                for to_name, to_text in BINARY_OPS.values():
                    if to_name != from_name:
                        self.add(f"ReplaceBinaryOperator_{from_name}_{to_name}", pos, end, to_text)

    def _tokens(self) -> list[tuple[int, int, str]]:
        if self._token_cache is None:
            out = []
            try:
                for tok in tokenize.generate_tokens(io.StringIO(self.src.text).readline):
                    if tok.type == tokenize.OP:
                        start = self.src.starts[tok.start[0] - 1] + tok.start[1]
                        out.append((start, start + len(tok.string), tok.string))
            except (tokenize.TokenError, SyntaxError):
                pass
            self._token_cache = out
        return self._token_cache

    def _decorators(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        if not isinstance(node, ast.ClassDef):
            self._bare_star_markers(node)
        for deco in node.decorator_list:
            at = self.src.text.rfind("@", 0, self.src.start(deco))
            end = self.src.end(deco)
            newline = self.src.text.find("\n", end)
            end = len(self.src.text) if newline < 0 else newline + 1
            line_start = self.src.text.rfind("\n", 0, at) + 1
            self.add("RemoveDecorator", line_start if at >= 0 else self.src.start(deco), end, "")
        self.generic_visit(node)

    visit_FunctionDef = _decorators
    visit_AsyncFunctionDef = _decorators
    visit_ClassDef = _decorators


def _compiles(code: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<mutant>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


@lru_cache(maxsize=4096)
def _generate(source: str) -> tuple[tuple[Mutant, ...], int]:
    src = _Source(source)
    finder = _Finder(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(source)
    finder.visit(tree)
    edits = sorted(finder.edits, key=lambda e: (e[1], e[2], e[0]))
    mutants = []
    seen: Counter = Counter()
    for operator, start, end, replacement in edits:
        line, col = src.line_col(start)
        key = f"{operator}@{line}:{col}"
        seen[key] += 1
        mid = key if seen[key] == 1 else f"{key}#{seen[key]}"
        code = source[:start] + replacement + source[end:]
        mutants.append(
            Mutant(
                id=mid,
                operator=operator,
                family=family_of(operator),
                line=line,
                col=col,
                original=source[start:end],
                replacement=replacement,
                code=code,
                compiles=_compiles(code),
            )
        )
    return tuple(mutants), finder.skipped


def generate_mutants(source: str) -> list[Mutant]:
    """All mutants of a program (cached per source text); raises SyntaxError if the source does not parse."""
    return list(_generate(source)[0])


def skipped_points(source: str) -> int:
    """Mutation points whose source text could not be located exactly (left out rather than guessed)."""
    return _generate(source)[1]


def operator_counts(mutants: list[Mutant]) -> dict[str, int]:
    """Mutant counts per Cosmic-Ray operator family."""
    return dict(sorted(Counter(m.family for m in mutants).items()))


# scoring ----------------------------------------------------------------------------------------


@dataclass
class MutantOutcome:
    """What happened to one mutant: killed or not, by which call index and how."""

    id: str
    operator: str
    family: str
    killed: bool
    by: int | None = None  # index of the first killing call
    how: str = ""  # "error" | "timeout" | "crash" | "wrong" | "undefined" | ""


@dataclass
class MutationReport:
    """Kill statistics of one program under a set of test calls."""

    total: int
    killed: int
    score: float  # killed / total (0.0 when there are no mutants)
    by_family: dict[str, dict[str, int]] = field(default_factory=dict)  # family -> {"total", "killed"}
    by_operator: dict[str, dict[str, int]] = field(default_factory=dict)  # Cosmic-Ray operator -> same
    outcomes: list[MutantOutcome] = field(default_factory=list)
    skipped_points: int = 0

    def to_dict(self, with_outcomes: bool = False) -> dict[str, Any]:
        out = asdict(self)
        if not with_outcomes:
            out.pop("outcomes")
        return out


def run_programs(
    programs: list[str],
    calls: list[str],
    executor: Executor,
    *,
    timeout: float,
    batch: int = 1,
    stop_on_error: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[str, Any]]:
    """Runs each program on all calls in the sandbox, one child per program, on one slot, in a random order.

    Returns one entry per program, in input order: ("undefined", message), ("ran", [(status, value), ...]),
    or ("timeout" | "crash" | "error" | "invalid", message) when the program's whole run (its definition
    and all calls) did not finish within `timeout` seconds. All children of one call get the same job
    but for the program's code (codea1.judge.mutants), so a call cannot tell which program it runs against. A
    program that does not compile is "undefined" without a child. With stop_on_error a program's run
    ends at its first raising call (its list is then shorter than `calls`). `batch` is accepted for
    compatibility and ignored: programs never share a child.
    """

    del batch
    out: list[tuple[str, Any] | None] = [None] * len(programs)
    jobs, where, undefined = alike_jobs(programs, calls, timeout, stop_on_error)
    for k, error in undefined.items():
        out[k] = ("undefined", error)
    order = list(range(len(jobs)))
    random.SystemRandom().shuffle(order)  # which child runs GT, and when, is nothing a call can count on
    # all on one slot: children of different slots differ (uid, cgroup, the zygote's own addresses), so
    # a call could tell them apart, and tell a mutant from GT wherever the two ran on different slots
    results = executor.run([jobs[j] for j in order], progress=progress, one_slot=True) if jobs else []
    for j, res in zip(order, results, strict=True):
        k = where[j]
        if not res.defined or not res.results:
            out[k] = ("crash", res.error)
            continue
        r = res.results[0]
        value = r.value
        if r.status == "ok" and type(value) is tuple and len(value) == 2 and value[0] in ("undefined", "ran"):
            out[k] = value
        else:
            out[k] = (r.status if r.status != "ok" else "invalid", r.error)
    return [o if o is not None else ("crash", "no result") for o in out]


@dataclass
class GroundTruthRun:
    """GT's values on the calls (None where GT itself failed), measured in the same harness as mutants."""

    values: list[Any]
    ok: list[bool]
    seconds: float


def run_ground_truth(source: str, calls: list[str], executor: Executor, *, timeout: float = 30.0) -> GroundTruthRun:
    """Runs GT once through the mutant harness: the reference values and GT's wall time for all calls.

    This run only sets the time limit and which calls are scored; the values mutants are compared with
    come from GT runs that look exactly like the mutants' (see score_mutants)."""

    (outcome,) = run_programs([source], calls, executor, timeout=timeout, stop_on_error=False)
    seconds = 0.0
    if outcome[0] != "ran":
        return GroundTruthRun([None] * len(calls), [False] * len(calls), seconds)
    values, ok = [], []
    for status, value in outcome[1]:
        good = status == "ok" and not contains_unserializable(value)
        values.append(value if good else None)
        ok.append(good)
    ok += [False] * (len(calls) - len(ok))
    values += [None] * (len(calls) - len(values))
    return GroundTruthRun(values, ok, seconds)


REFERENCE_RUNS = 2  # GT runs among the mutants' children; a call scores only where they all agree
RERUNS = 6  # mutants run twice, chosen at random; a call scores only where each gave the same twice


def _reference(gt_values: list[Any], refs: list[tuple[str, Any]]) -> list[bool]:
    """Which calls are scored: GT gave the same plain value in the timing run and in every reference run
    (a value that changes from run to run, such as a clock or anything a child could learn about its
    place in the run, would otherwise tell every mutant apart from GT)."""

    scored = []
    for i, expected in enumerate(gt_values):
        good = True
        for kind, payload in refs:
            if kind != "ran" or i >= len(payload) or payload[i][0] != "ok":
                good = False
                break
            value = payload[i][1]
            if contains_unserializable(value) or not values_equal(value, expected):
                good = False
                break
        scored.append(good)
    return scored


def _unstable(first: tuple[str, Any], second: tuple[str, Any], scored: list[bool]) -> None:
    """Unscores (in place) the calls on which two runs of one program disagree: a call whose outcome
    changes from run to run (a clock, a coin) under any program tells nothing about the program."""

    if first[0] != "ran" or second[0] != "ran":
        return
    for i, ((s1, v1), (s2, v2)) in enumerate(zip(first[1], second[1], strict=False)):
        if i < len(scored) and (s1 != s2 or (s1 == "ok" and not values_equal(v1, v2))):
            scored[i] = False


def _judge(outcome: MutantOutcome, run: tuple[str, Any], expected: list[Any], scored: list[bool]) -> None:
    """Kills `outcome` (in place) from a mutant's run: the parent's verdict, on plain values only."""

    kind, payload = run
    if kind == "undefined":
        outcome.killed, outcome.how = True, "undefined"
        return
    if not any(scored):
        return  # no call to score on (GT did not give the same value in every run)
    if kind != "ran":
        outcome.killed, outcome.how = True, kind
        return
    if len(payload) < len(expected) and (not payload or payload[-1][0] == "ok"):
        outcome.killed, outcome.how = True, "crash"  # fewer results than calls: not a clean run
        return
    for i, ((status, value), exp, counts) in enumerate(zip(payload, expected, scored, strict=False)):
        if not counts:
            if status != "ok":
                return  # the run stopped at a call that is not scored: the later ones are unknown
            continue
        if status != "ok":
            outcome.killed, outcome.by, outcome.how = True, i, "error"
            return
        if not values_equal(value, exp):
            outcome.killed, outcome.by, outcome.how = True, i, "wrong"
            return


def score_mutants(
    source: str,
    calls: list[str],
    executor: Executor,
    *,
    prelude: str = "",
    gt: GroundTruthRun | None = None,
    timeout_factor: float = 4.0,
    min_timeout: float = 1.0,
    mutants: list[Mutant] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> MutationReport:
    """Runs every mutant of `source` on `calls` in the sandbox and compares with GT's values (parent side).

    `prelude` (imports) goes before GT and each mutant. First GT runs alone (unless `gt` is given): calls
    on which it fails are dropped, and its time sets the limit (max(min_timeout, timeout_factor * GT's
    time for all calls)). Then GT runs REFERENCE_RUNS more times among the mutants, and RERUNS mutants
    chosen at random run a second time, each program in a child of its own with the same job, limit and
    calls, on one slot, in a random order: a call is scored only where every GT run gave the same value
    and each mutant run twice gave the same outcome twice (so a call whose value changes from run to
    run, or depends on anything but the program, kills nothing). A mutant is killed when it fails to define (as an import error
    fails every pytest test), or when its first differing scored call raises or returns another value
    (values_equal), or its run exceeds the limit or crashes. With no scored calls nothing is killed but
    mutants that do not define.
    """

    mutants = generate_mutants(source) if mutants is None else mutants
    full = f"{prelude}\n{source}" if prelude else source
    if gt is None:
        t0 = time.monotonic()
        gt = run_ground_truth(full, calls, executor)
        gt.seconds = time.monotonic() - t0
    keep = [i for i, good in enumerate(gt.ok) if good]
    calls = [calls[i] for i in keep]
    expected = [gt.values[i] for i in keep]
    outcomes = [MutantOutcome(id=m.id, operator=m.operator, family=m.family, killed=False) for m in mutants]
    if calls and mutants:
        texts = [f"{prelude}\n{m.code}" if prelude else m.code for m in mutants]
        compiling = [j for j, m in enumerate(mutants) if m.compiles]
        again = random.SystemRandom().sample(compiling, min(RERUNS, len(compiling)))
        programs = [full] * REFERENCE_RUNS + texts + [texts[j] for j in again]
        limit = time_limit(gt.seconds, timeout_factor, min_timeout)
        runs = run_programs(programs, calls, executor, timeout=limit, progress=progress)
        scored = _reference(expected, runs[:REFERENCE_RUNS])
        firsts = runs[REFERENCE_RUNS : REFERENCE_RUNS + len(mutants)]
        for j, second in zip(again, runs[REFERENCE_RUNS + len(mutants) :], strict=True):
            _unstable(firsts[j], second, scored)
        for outcome, run in zip(outcomes, firsts, strict=True):
            _judge(outcome, run, expected, scored)
    return summarise(outcomes, skipped_points(source))


def summarise(outcomes: list[MutantOutcome], skipped: int = 0) -> MutationReport:
    by_family: dict[str, dict[str, int]] = {}
    by_operator: dict[str, dict[str, int]] = {}
    for o in outcomes:
        for table, key in ((by_family, o.family), (by_operator, o.operator)):
            row = table.setdefault(key, {"total": 0, "killed": 0})
            row["total"] += 1
            row["killed"] += int(o.killed)
    killed = sum(o.killed for o in outcomes)
    total = len(outcomes)
    return MutationReport(
        total=total,
        killed=killed,
        score=killed / total if total else 0.0,
        by_family=dict(sorted(by_family.items())),
        by_operator=dict(sorted(by_operator.items())),
        outcomes=outcomes,
        skipped_points=skipped,
    )


__all__ = [
    "Mutant",
    "MutantOutcome",
    "MutationReport",
    "family_of",
    "generate_mutants",
    "operator_counts",
    "run_ground_truth",
    "run_programs",
    "score_mutants",
    "skipped_points",
]
