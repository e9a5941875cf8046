"""Whether a program may carry state from one call of it to the next, read from its text (`may_keep_state`).

The game's rule is that every call, GT's and each candidate's, starts from a clean program: GT answers
each call in a job of its own, and a candidate's calls run one after another in one job only when that
cannot differ from running each alone, that is when its program keeps nothing between calls. A program
may keep state, and then each of its calls runs in a job of its own, when any of these holds:
- a function declares `global` or `nonlocal`, has a default argument that is not an immutable constant,
  or stores into an attribute or item of something that is not its own (`CACHE[x] = y`, `f.calls += 1`);
- a function reads a module-level (or class-level) name bound to anything but a function, class, import or
  immutable constant (a list, a dict, a call's result: something a call could change), or the function
  under test itself is such a name (`f = make_counter()`);
- a module-level function or class is decorated (`lru_cache`, `classmethod`...), but for `staticmethod`,
  `property` and `dataclass`;
- it reaches past its own names (`globals`, `setattr`, `vars`, `exec`, `eval`, `open`, `__import__`, a
  dunder such as `__defaults__` or `__dict__`, `sys.modules`, `os.environ`, `numpy.random`...), or uses
  what it imports from a module with state of its own (`random`, `secrets`, `threading`, `tempfile`...).
A program that cannot be parsed keeps nothing (it never runs). The reading errs towards "may": an honest
program it flags only costs a job per call. A program written to hide its state from this reading gains
nothing by it: its calls then run in sequence, as its own code makes them behave, and state cannot tell it
a value it has to return.
"""

from __future__ import annotations

import ast
import functools

DECORATORS_WITHOUT_STATE = frozenset({"staticmethod", "property", "dataclass", "abstractmethod"})
REACHING_NAMES = frozenset({"globals", "vars", "setattr", "delattr", "exec", "eval", "open", "__import__"})
REACHING_ATTRIBUTES = frozenset(
    {"modules", "environ", "chdir", "putenv", "unsetenv", "settrace", "setprofile", "random", "seed"}
)
MODULES_WITH_STATE = frozenset(
    {
        "random",
        "secrets",
        "uuid",
        "threading",
        "multiprocessing",
        "subprocess",
        "tempfile",
        "shutil",
        "pathlib",
        "sqlite3",
        "shelve",
        "dbm",
        "atexit",
        "gc",
        "ctypes",
        "importlib",
        "builtins",
    }
)
_CONSTANT_CALLS = frozenset(
    {"int", "float", "complex", "str", "bytes", "bool", "tuple", "frozenset", "range", "len", "abs", "pow", "round"}
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@functools.lru_cache(maxsize=4096)
def may_keep_state(code: str, entry_point: str | None = None) -> bool:
    """Whether calls of `code`'s functions may see what an earlier call left (see the module docstring)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    try:
        data = _module_data(tree)
        if entry_point in data or _reaches_past_itself(tree):
            return True
        return any(_function_keeps_state(fn, data, enclosing) for fn, enclosing in _functions(tree))
    except RecursionError:
        return True


def _constant(node: ast.AST | None) -> bool:
    """An immutable constant expression: literals, tuples and frozensets of them, arithmetic on them."""
    if node is None or isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple):
        return all(_constant(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, (ast.BinOp, ast.Compare, ast.BoolOp, ast.IfExp)):
        return all(_constant(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONSTANT_CALLS:
        return all(_constant(a) for a in node.args) and not node.keywords
    return False


def _module_data(tree: ast.Module) -> frozenset[str]:
    """Names bound at module or class level to something a call could change (not a function, class,
    import, another name of one of those, or an immutable constant), and the names of classes whose bodies
    bind such values."""
    data: set[str] = set()
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    defined |= {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    defined |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    todo: list[tuple[ast.AST, str | None]] = [(node, None) for node in tree.body]
    while todo:
        node, in_class = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ClassDef):
            todo.extend((child, node.name) for child in node.body)
            continue
        value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            alias = isinstance(value, ast.Name) and value.id in defined  # `_gt_f = f`: another name of a function
            if not (_constant(value) or alias or isinstance(value, ast.Lambda)) or isinstance(node, ast.AugAssign):
                data.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
                data.update([in_class] if in_class else [])
            continue
        for child in ast.iter_child_nodes(node):  # if/for/while/with/try blocks, and any other binding
            if isinstance(child, ast.stmt):
                todo.append((child, in_class))
            elif isinstance(child, ast.expr):
                stored = (n.id for n in ast.walk(child) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
                data.update(stored)
    return frozenset(data)


def _reaches_past_itself(tree: ast.Module) -> bool:
    """Names, attributes, imports and decorators that reach state outside the program's own functions."""
    nodes = list(ast.walk(tree))
    with_state = set()  # the names that imports of modules with state bind
    for node in nodes:
        if isinstance(node, ast.Import):
            with_state.update(
                (a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] in MODULES_WITH_STATE
            )
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in MODULES_WITH_STATE:
            with_state.update(a.asname or a.name for a in node.names)
    for node in nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            return True
        if isinstance(node, ast.Name) and (node.id in REACHING_NAMES or node.id in with_state):
            return True
        if isinstance(node, ast.Attribute) and (node.attr in REACHING_ATTRIBUTES or _dunder(node.attr)):
            return True
    for node in tree.body:  # module level, and the methods of module-level classes
        defs = [node, *(getattr(node, "body", []) if isinstance(node, ast.ClassDef) else [])]
        for d in defs:
            decorators = getattr(d, "decorator_list", [])
            if any(_decorator_name(x) not in DECORATORS_WITHOUT_STATE for x in decorators):
                return True
    return False


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and name not in ("__init__", "__name__", "__doc__")


def _decorator_name(node: ast.expr) -> str:
    while isinstance(node, (ast.Call, ast.Attribute)):
        node = node.func if isinstance(node, ast.Call) else ast.Name(node.attr)
    return node.id if isinstance(node, ast.Name) else ""


def _functions(tree: ast.AST) -> list[tuple[ast.AST, frozenset[str]]]:
    """Every function and lambda, with the names local to the functions that enclose it."""
    out: list[tuple[ast.AST, frozenset[str]]] = []
    todo: list[tuple[ast.AST, frozenset[str]]] = [(tree, frozenset())]
    while todo:
        node, enclosing = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                out.append((child, enclosing))
                todo.append((child, enclosing | _locals(child)))
            else:
                todo.append((child, enclosing))
    return out


def _locals(fn: ast.AST) -> frozenset[str]:
    """The names a function binds: its parameters and every name stored in its body (its own scope)."""
    a = fn.args
    names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if x is not None}
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        todo.extend(ast.iter_child_nodes(node))
    return frozenset(names)


def _function_keeps_state(fn: ast.AST, data: frozenset[str], enclosing: frozenset[str]) -> bool:
    """A mutable default, a read of module-level data, or a store into what is not its own."""
    a = fn.args
    if not all(_constant(d) for d in [*a.defaults, *a.kw_defaults]):
        return True
    own = enclosing | _locals(fn)
    for node in _own_nodes(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in data and node.id not in own:
            return True
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in own):
                return True
    return False


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, without those of the functions and lambdas it defines (each is read
    on its own), but with their decorators and defaults, which the function evaluates."""
    out: list[ast.AST] = []
    todo = list(fn.body) if isinstance(fn.body, list) else [fn.body]
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, _SCOPES):
            todo.extend([*getattr(node, "decorator_list", []), *node.args.defaults, *node.args.kw_defaults])
            todo = [n for n in todo if n is not None]
        else:
            todo.extend(ast.iter_child_nodes(node))
    return out
