"""CITATION.cff: valid YAML with the keys CFF 1.2.0 requires, the package's own version and a release date,
and no URL for the software that the repository does not state elsewhere."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_citation_cff_has_the_required_keys_a_version_and_a_release_date() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert isinstance(cff, dict)
    assert {"cff-version", "message", "title", "authors"} <= set(cff)  # CFF 1.2.0's required keys
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["authors"] and all(isinstance(a, dict) and ("name" in a or "family-names" in a) for a in cff["authors"])
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert str(cff["version"]) == re.search(r'(?m)^version = "([^"]+)"', pyproject).group(1)
    released = cff["date-released"]  # YAML reads an unquoted YYYY-MM-DD as a date
    assert isinstance(released, datetime.date) or datetime.date.fromisoformat(str(released))
    urls = set(re.findall(r'(?m)^\w[\w -]* = "(https?://[^"]+)"', pyproject))  # [project.urls] entries
    if "url" in cff or "repository-code" in cff:  # the software's own address, only where the project states it
        assert {cff.get("url"), cff.get("repository-code")} - {None} <= urls, (cff.get("url"), urls)
