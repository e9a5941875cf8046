"""Python 3: run by the sandbox's warm interpreters, one forked child per program and no compile step."""

from __future__ import annotations

from codea1.lang.spec import Language

PYTHON = Language(name="python", title="Python 3", fence_words=("python", "python3", "py"), source="main.py")
