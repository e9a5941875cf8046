"""Chat prompts of the game, in this project's own words (structure: docs/algorithm.md section 2).

Each function returns chat messages [{"role", "content"}]; the policy renders them with its model's
chat template. The white-box test prompt shows the candidate code, always labelled as possibly wrong.

`with_prefix` adds a role's `response_prefix` (a Sampling knob) as a final assistant message: the backend
then continues that message instead of opening a new turn, so the response starts with the prefix
(e.g. "```python\nassert {entry_point}(" makes a small model start writing asserts at once; see
docs/cold-start.md). The prefix is part of the prompt, not of the generated, scored or trained tokens.
"""

from __future__ import annotations

from codea1.config import GameConfig
from codea1.lang import language
from codea1.problem import Problem

CODE_SYSTEM = "You are an expert Python programmer. You write correct, complete and efficient solutions."

CODE_TEMPLATE = """Solve the following programming task in Python.

{prompt}

Write the complete function `{entry_point}` together with any imports and helpers it needs.
Reply with a single ```python code block and nothing after it."""

PROGRAM_SYSTEM = "You are an expert {title} programmer. You write correct, complete and efficient programs."

PROGRAM_TEMPLATE = """Solve the following programming task in {title}.

{prompt}

Write a complete program that reads the input from standard input and prints the answer to standard
output, exactly in the format the task asks for.
Reply with a single ```{fence} code block and nothing after it."""

TEST_SYSTEM = "You are an expert software tester. You write short, precise unit tests that expose bugs."

WHITEBOX_TEMPLATE = """Here is a programming task and a candidate implementation of it.

### Task
{description}

### Candidate implementation (it may contain bugs)
```python
{code}
```

Write {n_tests} unit tests that check `{entry_point}` against the task, so that a wrong implementation
fails. Read the candidate carefully and aim at the inputs where it is most likely to go wrong: gaps in
its logic, boundary values, empty or extreme inputs, rarely taken branches. Each test must be true for
a correct solution of the task, whatever the candidate does. Avoid near-duplicates.

Rules:
- one line per test, of the form `assert {entry_point}(...) == expected_value`, with the exact expected value;
- all tests in a single ```python code block;
- only the first {n_tests} tests count."""

BLACKBOX_TEMPLATE = """Here is a programming task.

### Task
{description}

Write {n_tests} unit tests that check an implementation of `{entry_point}` against the task, so that a
wrong implementation fails. Think about where implementations usually go wrong: boundary values, empty
or extreme inputs, special cases the task mentions. Each test must be true for a correct solution.
Avoid near-duplicates.

Rules:
- one line per test, of the form `assert {entry_point}(...) == expected_value`, with the exact expected value;
- all tests in a single ```python code block;
- only the first {n_tests} tests count."""


WHITEBOX_STDIO_TEMPLATE = """Here is a programming task and a candidate program for it.

### Task
{description}

### Candidate program (it may contain bugs)
```{fence}
{code}
```

Write {n_tests} test inputs for this task that a wrong program would fail on. Read the candidate carefully
and aim at the inputs where it is most likely to go wrong: gaps in its logic, boundary values, smallest and
largest sizes, rarely taken branches. Each input must follow the task's Input section exactly; a reference
solution computes the expected outputs, so do not write them. Avoid near-duplicates.

Rules:
- each input in its own ```input code block, exactly as the program reads it from standard input;
- only the first {n_tests} inputs count."""

BLACKBOX_STDIO_TEMPLATE = """Here is a programming task.

### Task
{description}

Write {n_tests} test inputs for this task that a wrong program would fail on. Think about where programs
usually go wrong: boundary values, smallest and largest sizes, special cases the task mentions. Each input
must follow the task's Input section exactly; a reference solution computes the expected outputs, so do
not write them. Avoid near-duplicates.

Rules:
- each input in its own ```input code block, exactly as the program reads it from standard input;
- only the first {n_tests} inputs count."""


def code_messages(problem: Problem) -> list[dict[str, str]]:
    """Messages asking the code policy for a solution of `problem`: a function, or for a stdio problem a
    whole program in the problem's language."""
    if problem.is_stdio:
        lang = language(problem.language)
        user = PROGRAM_TEMPLATE.format(prompt=problem.prompt.strip(), title=lang.title, fence=lang.fence)
        return [
            {"role": "system", "content": PROGRAM_SYSTEM.format(title=lang.title)},
            {"role": "user", "content": user},
        ]
    user = CODE_TEMPLATE.format(prompt=problem.prompt.strip(), entry_point=problem.entry_point)
    return [{"role": "system", "content": CODE_SYSTEM}, {"role": "user", "content": user}]


def test_messages_whitebox(problem: Problem, code: str, n_tests: int = 8) -> list[dict[str, str]]:
    """Messages asking the test policy to attack one candidate `code` (white-box, Code-A1); for a
    stdin/stdout problem, inputs in ```input blocks."""
    if problem.is_stdio:
        user = WHITEBOX_STDIO_TEMPLATE.format(
            description=problem.description.strip(),
            fence=language(problem.language).fence,
            code=code.strip() or "(the candidate wrote no code)",
            n_tests=n_tests,
        )
        return [{"role": "system", "content": TEST_SYSTEM}, {"role": "user", "content": user}]
    user = WHITEBOX_TEMPLATE.format(
        description=problem.description.strip(),
        code=code.strip() or "# (the candidate wrote no code)",
        entry_point=problem.entry_point,
        n_tests=n_tests,
    )
    return [{"role": "system", "content": TEST_SYSTEM}, {"role": "user", "content": user}]


def test_messages_blackbox(problem: Problem, n_tests: int = 8) -> list[dict[str, str]]:
    """Messages asking for tests from the task alone (black-box; the Self-Play baseline)."""
    if problem.is_stdio:
        user = BLACKBOX_STDIO_TEMPLATE.format(description=problem.description.strip(), n_tests=n_tests)
        return [{"role": "system", "content": TEST_SYSTEM}, {"role": "user", "content": user}]
    user = BLACKBOX_TEMPLATE.format(
        description=problem.description.strip(), entry_point=problem.entry_point, n_tests=n_tests
    )
    return [{"role": "system", "content": TEST_SYSTEM}, {"role": "user", "content": user}]


def test_messages(problem: Problem, code: str, config: GameConfig | None = None) -> list[dict[str, str]]:
    """The test prompt the game config asks for: white-box (Code-A1) or black-box (Self-Play)."""
    config = config or GameConfig()
    if config.blackbox_tests:
        return test_messages_blackbox(problem, config.tests_requested)
    return test_messages_whitebox(problem, code, config.tests_requested)


test_messages.__test__ = False  # type: ignore[attr-defined]
test_messages_whitebox.__test__ = False  # type: ignore[attr-defined]  # not pytest tests
test_messages_blackbox.__test__ = False  # type: ignore[attr-defined]


def format_prefix(template: str, problem: Problem) -> str:
    """A response-prefix template filled in for `problem` ({entry_point} is its function name). The
    presets' prefixes start a Python function's code or asserts, so a stdin/stdout problem gets none."""
    if not template or problem.is_stdio:
        return ""
    return template.format(entry_point=problem.entry_point)


def with_prefix(messages: list[dict[str, str]], template: str, problem: Problem) -> list[dict[str, str]]:
    """`messages` plus a final assistant message holding the formatted prefix (unchanged when the
    template is empty): the response is made to start with it."""
    prefix = format_prefix(template, problem)
    if not prefix:
        return messages
    return [*messages, {"role": "assistant", "content": prefix}]
