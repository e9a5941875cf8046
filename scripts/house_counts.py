"""Counts that say how the house is kept: long functions, `Any`, function-level imports, and imports that
run from a lower floor to a higher one (or in a cycle). Reads the source with `ast`; imports nothing of it.

    python scripts/house_counts.py [--list]

Floors, lowest first (a module may import its own floor and the ones below): see FLOORS.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "codea1"
# lowest first; a module's floor is the first prefix it starts with
FLOORS = [
    ("codea1.errors", 0),
    ("codea1.engines", 0),  # the rollout engines by name (their code lives in codea1.inference)
    ("codea1.config", 0),
    ("codea1.method_traits", 0),  # what each training method is, for every room (its step: codea1.train.methods)
    ("codea1.problem", 0),  # the Problem record every room reads
    ("codea1.lang", 0),  # what a language is: fences, file names, compile and run argv
    ("codea1.sandbox", 1),
    ("codea1.judge", 2),
    ("codea1.data", 3),
    ("codea1.models", 4),
    ("codea1.inference", 5),  # sampling from a model: the loop engine and vLLM
    ("codea1.rl", 6),
    ("codea1.game", 7),
    ("codea1.eval", 7),
    ("codea1.cluster", 8),  # all of Ray: the sandbox pools and the policy actors
    ("codea1.train", 9),
    ("codea1.integrations", 9),  # rewards for other trainers: the judge, evaluation and the game behind them
    ("codea1.recipes", 10),  # whole jobs: compare, demo, export
    ("codea1.cli", 11),
    ("codea1.__main__", 11),
    ("codea1", 0),  # the package itself holds only its version
]


# rooms that must never import others, whatever their floors: (importer, imported) prefixes
NEVER = [
    ("codea1.rl", "codea1.sandbox"),  # learning runs no code
    ("codea1.inference", "codea1.sandbox"),  # nor does sampling
    ("codea1.judge", "codea1.data"),  # what a test means does not depend on where problems come from
    ("codea1.judge", "codea1.game"),
    ("codea1.judge", "codea1.train"),
    ("codea1.game", "codea1.train"),
    ("codea1.eval", "codea1.train"),
]


# Sandbox jobs are built by the rooms that know what a job runs: the sandbox (programs on stdin, codea1.sandbox.runners)
# and the judge (what a test means: codea1.judge, its kinds and formats). Every other module asks them for its
# jobs; none builds one (tests/test_house_on_cpu.py).
JOB_ROOMS = ("codea1.sandbox", "codea1.judge")


def builds_jobs(tree: ast.AST) -> bool:
    """Whether a module's tree calls `Job(...)` (or `api.Job(...)`, `sandbox.Job(...)`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "Job" or isinstance(f, ast.Attribute) and f.attr == "Job":
                return True
    return False


# A training method is one object: code asks its properties (codea1.method_traits, codea1.train.methods.METHODS),
# and only those two modules name a method in a comparison (tests/test_house_on_cpu.py).
METHOD_ROOMS = ("codea1.method_traits", "codea1.train.methods")


def method_names() -> set[str]:
    """The methods' names: the first argument of each MethodTraits(...) row of codea1/method_traits.py."""
    tree = ast.parse((PACKAGE / "method_traits.py").read_text(encoding="utf-8"))
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "MethodTraits"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def method_name_compares(tree: ast.AST, names: set[str]) -> list[int]:
    """The lines where a method's name is compared: `x == "golden"`, `x != "a1"`, `x in ("a1", ...)`, and a
    `match` case on one."""

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str) and node.value in names
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(named(e) for e in node.elts)
        return False

    def compares(node: ast.AST) -> bool:
        if isinstance(node, ast.Compare):
            return any(named(n) for n in (node.left, *node.comparators))
        return isinstance(node, ast.MatchValue) and named(node.value)

    return sorted({node.lineno for node in ast.walk(tree) if compares(node)})


def _in(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def floor(module: str) -> int:
    for prefix, level in FLOORS:
        if module == prefix or module.startswith(prefix + "."):
            return level
    raise KeyError(module)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(tree: ast.Module, module: str, is_package: bool) -> list[tuple[str, bool, int]]:
    """(imported codea1 module, at function level, line) for every import in a module."""
    out = []
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        names: list = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join([*pkg, base] if base else pkg)
            names = [(base, [f"{base}.{a.name}" for a in node.names])]
        else:
            continue
        local = id(node) not in top and not _under_type_checking(tree, node)
        for name in names:
            out.append((name, local, node.lineno))
    return out


def _under_type_checking(tree: ast.Module, node: ast.AST) -> bool:
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.If)
            and "TYPE_CHECKING" in ast.unparse(stmt.test)
            and any(n is node for n in ast.walk(stmt))
        ):
            return True
    return False


def collect() -> dict:
    files = sorted(PACKAGE.rglob("*.py"))
    known = {module_name(p) for p in files}
    long60, long80, anys, lazy, upward, edges = [], [], 0, [], [], {}
    job_builders: set[str] = set()
    names, method_compares = method_names(), []
    for path in files:
        mod = module_name(path)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 60:
                    long60.append((length, f"{mod}.{node.name}"))
                if length > 80:
                    long80.append((length, f"{mod}.{node.name}"))
            if isinstance(node, ast.Name) and node.id == "Any":
                anys += 1
            if isinstance(node, ast.Attribute) and node.attr == "Any":
                anys += 1
        if builds_jobs(tree) and not mod.startswith(JOB_ROOMS):
            job_builders.add(mod)
        if not mod.startswith(METHOD_ROOMS):
            method_compares += [f"{mod}:{line}" for line in method_name_compares(tree, names)]
        seen = set()
        for name, local, line in imports(tree, mod, path.name == "__init__.py"):
            if isinstance(name, tuple):  # `from BASE import a, b`: the submodules named, else BASE itself
                base, subs = name
                targets = [t for t in subs if t in known] or [base]
            else:
                targets = [name]
            for target in targets:
                if target in known and target != mod and (target, line) not in seen:
                    seen.add((target, line))
                    _edge(mod, target, local, line, lazy, edges, upward)
    return {
        "long60": sorted(long60, reverse=True),
        "long80": sorted(long80, reverse=True),
        "any": anys,
        "lazy": lazy,
        "upward": upward,
        "cycles": cycles(edges),
        "modules": len(files),
        "job_builders": sorted(job_builders),
        "method_compares": method_compares,
    }


def _edge(mod: str, target: str, local: bool, line: int, lazy: list, edges: dict, upward: list) -> None:
    """Records one import: function-level or not, and whether it runs up the floors."""
    if local:
        lazy.append(f"{mod}:{line} -> {target}")
    edges.setdefault(mod, set()).add(target)
    if any(_in(mod, a) and _in(target, b) for a, b in NEVER):
        upward.append(f"{mod}:{line} -> {target} (never)")
        return
    if mod == "codea1":
        return
    if floor(target) > floor(mod):
        upward.append(f"{mod}:{line} -> {target}")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module, or a module importing itself (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list every item, not only the counts")
    args = ap.parse_args()
    c = collect()
    print(f"modules: {c['modules']}")
    print(f"functions over 60 lines: {len(c['long60'])}; over 80: {len(c['long80'])}")
    print(f"`Any` in annotations and code: {c['any']}")
    print(f"function-level imports of codea1 modules: {len(c['lazy'])}")
    print(f"imports from a lower floor to a higher one, or into a room listed in NEVER: {len(c['upward'])}")
    print(f"import cycles: {len(c['cycles'])}")
    print(f"modules outside judge/ and sandbox/ that build sandbox jobs: {len(c['job_builders'])}")
    print(f"comparisons of a method's name outside the method registry: {len(c['method_compares'])}")
    if args.list:
        for key in ("long80", "upward", "cycles", "lazy", "method_compares"):
            print(f"\n{key}:")
            for item in c[key]:
                print(f"  {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
