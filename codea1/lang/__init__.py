"""The languages solutions are written in: one record per language behind one registry.

    lang = language("cpp")
    lang.fence          # the word after ``` that opens a block of this language (other spellings: fence_words)
    lang.compile_argv   # how the sandbox compiles a program (None: run as it is)

A language knows how its code is fenced, named, compiled and run; nothing here runs anything. The
sandbox's process runner (codea1.sandbox.runners) takes these argv lists, the judge's stdio kind builds the
jobs, and parsing reads fences with `fence_words`.
"""

from __future__ import annotations

from codea1.errors import UserError
from codea1.lang.cpp import CPP
from codea1.lang.python import PYTHON
from codea1.lang.spec import Language

LANGUAGES: dict[str, Language] = {lang.name: lang for lang in (PYTHON, CPP)}

__all__ = ["CPP", "LANGUAGES", "PYTHON", "Language", "language"]


def language(name: str) -> Language:
    """The language called `name` ("python", "cpp"); a UserError naming the known ones otherwise."""
    lang = LANGUAGES.get(name)
    if lang is None:
        raise UserError(f"language {name!r} is unknown; use one of: {', '.join(LANGUAGES)}")
    return lang
