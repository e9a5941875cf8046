"""The README's promise and the documentation site's shape: a newcomer copies exactly two commands (the demo
and the test suite), the test command builds the docs strictly, and mkdocs.yml lists every page of docs/.
`mkdocs build --strict` itself (links and anchors) runs in scripts/test.sh after the suite."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def commands(markdown: str) -> list[list[str]]:
    """Each fenced block's command lines (comments and blank lines dropped), in order."""
    blocks = []
    for body in FENCE.findall(markdown):
        lines = [line.split("#", 1)[0].strip() for line in body.splitlines()]
        blocks.append([line for line in lines if line])
    return blocks


def test_the_readme_sets_up_with_exactly_two_commands_that_the_makefile_runs():
    assert commands((ROOT / "README.md").read_text(encoding="utf-8")) == [["make demo", "make test"]]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: .*\n\t\$\(VENV\)/bin/codea1 demo$", makefile, re.MULTILINE)
    assert re.search(r"^test: .*\n\t.*bash scripts/test\.sh$", makefile, re.MULTILINE)
    assert "mkdocs build --strict" in (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")


def test_the_command_reader_sees_a_third_command():
    page = "```bash\nmake demo    # the demo\n\nmake test\n```\ntext\n```\npip install x\n```\n"
    assert commands(page) == [["make demo", "make test"], ["pip install x"]]


def _nav_pages(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return [page for item in nav for page in _nav_pages(item)]


def test_every_docs_page_is_in_the_nav_and_the_site_fails_on_broken_links():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["docs_dir"] == "docs"
    assert {key: config["validation"].get(key) for key in ("omitted_files", "not_found", "anchors")} == dict.fromkeys(
        ("omitted_files", "not_found", "anchors"), "warn"
    )
    nav = _nav_pages(config["nav"])
    docs = ROOT / "docs"
    assert [page for page in nav if not (docs / page).is_file()] == []
    pages = {p.relative_to(docs).as_posix() for p in docs.glob("*.md")}
    pages |= {p.relative_to(docs).as_posix() for p in (docs / "results").glob("*.md")}
    assert sorted(pages - set(nav)) == []
