"""C++17, compiled by the system's g++ inside the sandbox (one compile per program, then a run per input).

The flags are those of common judges (GNU C++17, -O2); -pipe keeps the compiler's temporary files off the
job's /tmp, which is small, and the program links with the system's shared C++ library. The compile reads
the sandbox's precompiled headers where they are built (codea1.sandbox.pch): a program whose first include
is <bits/stdc++.h>, <iostream> or <cstdio> compiles in a fraction of the time, with the same meaning."""

from __future__ import annotations

from codea1.lang.spec import Language

CPP = Language(
    name="cpp",
    title="C++17",
    fence_words=("cpp", "c++", "cxx", "cc"),
    source="main.cpp",
    compile_argv=("g++", "-std=gnu++17", "-O2", "-pipe", "-o", "{out}", "{src}"),
    run_argv=("{out}",),
    precompiled_headers=True,
)
