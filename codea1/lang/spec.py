"""What a language is to codea1: a plain record (see codea1.lang)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """How code of one language is fenced, named, compiled and run.

    name: the registry key and a Problem's `language`.
    title: the name prompts use ("Python 3", "C++17").
    fence_words: the words after ``` that open a block of this language, lower case; the first is the one
        prompts ask for.
    source: the file a program is written to before it is compiled or run.
    compile_argv: the compiler's argv ({src} and {out} filled in), or None for an interpreted language.
    run_argv: how a compiled program is run ({out} filled in); None where the sandbox's Python children run
        the program themselves (Python: in the forked interpreter, no new process per input).
    precompiled_headers: whether the compile reads the sandbox's precompiled headers (codea1.sandbox.pch),
        which change how long a compile takes, never what it means.
    """

    name: str
    title: str
    fence_words: tuple[str, ...]
    source: str
    compile_argv: tuple[str, ...] | None = None
    run_argv: tuple[str, ...] | None = None
    precompiled_headers: bool = False

    @property
    def fence(self) -> str:
        return self.fence_words[0]

    @property
    def compiled(self) -> bool:
        return self.compile_argv is not None
