"""Report paths the plugin must not write blindly: a report that cannot be written fails the run, a symbolic link
is written through (the link kept), a FIFO is refused before anything is written; a report path that is an input of
the run (a dataset's file, the baseline, a replay engine's predictions) is a usage error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.plugin import make_dataset

BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds", "-p", "no:randomly", "-p", "no:cacheprovider"]


@pytest.mark.xdist_transport
def test_every_report_that_cannot_be_written_fails_the_run(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path)
    (pytester.path / "plain").write_text("a regular file, not a folder", encoding="utf-8")
    result = pytester.runpytest(*BASE, "--ocr-json=plain/run.json", "--ocr-csv=plain/docs.csv",
                                "--ocr-markdown=ok/summary.md", *plugin_args)
    result.assert_outcomes(passed=3)  # every test passed, and still the run is not green
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["could not write the JSON run file *plain/run.json: *",
                                 "could not write the CSV report *plain/docs.csv: *",
                                 "the run fails: 2 requested reports were not written"])
    assert (pytester.path / "ok" / "summary.md").is_file()  # the others are written


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="a read-only folder needs POSIX and no root")
def test_a_report_in_a_read_only_folder_fails_the_run(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    locked = pytester.path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        result = pytester.runpytest(*BASE, "--ocr-html=locked/report.html", "--ocr-summary=none")
    finally:
        locked.chmod(0o755)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["could not write the HTML report *locked/report.html: PermissionError: *"])
    assert list(locked.iterdir()) == []  # no temporary file left behind


def test_a_report_path_that_is_a_link_is_written_through(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path)
    runs = pytester.path / "runs"
    runs.mkdir()
    (runs / "today.json").write_text("{}", encoding="utf-8")
    (runs / "today.json").chmod(0o640)
    (pytester.path / "latest.json").symlink_to("runs/today.json")
    (pytester.path / "dangling.md").symlink_to("runs/new.md")  # its target does not exist yet: created
    result = pytester.runpytest(*BASE, "--ocr-json=latest.json", "--ocr-markdown=dangling.md", *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    assert (pytester.path / "latest.json").is_symlink() and (pytester.path / "dangling.md").is_symlink()
    run = json.loads((runs / "today.json").read_text(encoding="utf-8"))
    assert len(run["documents"]) == 3
    assert (runs / "today.json").stat().st_mode & 0o777 == 0o640  # the target's permissions kept
    assert "OCR" in (runs / "new.md").read_text(encoding="utf-8")
    assert sorted(p.name for p in runs.iterdir()) == ["new.md", "today.json"]  # no temporary file left


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")
def test_a_report_path_that_is_a_fifo_is_refused_without_hanging(pytester: pytest.Pytester,
                                                                  plugin_args: list[str]) -> None:
    make_dataset(pytester.path)
    os.mkfifo(pytester.path / "pipe.html")
    os.mkfifo(pytester.path / "pipe.csv")
    (pytester.path / "link.csv").symlink_to("pipe.csv")
    result = pytester.runpytest(*BASE, "--ocr-html=pipe.html", "--ocr-csv=link.csv", "--ocr-json=run.json",
                                *plugin_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "could not write the HTML report *pipe.html: a FIFO (named pipe); a report is written only to a regular "
        "file or a new path, give another path",
        "could not write the CSV report *link.csv: a link to *pipe.csv, a FIFO (named pipe); *"])
    import stat

    assert stat.S_ISFIFO((pytester.path / "pipe.html").stat().st_mode)  # left as it was
    assert len(json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["documents"]) == 3


def test_ocrmetrics_report_refuses_a_fifo_with_exit_2(tmp_path: Path) -> None:
    """``ocrmetrics report`` follows the same rules as the plugin (a report not written: exit 2)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs need POSIX")
    from pytest_ocrmetrics.cli import main
    from tests.ocr_run_factory import make_doc, make_run

    run_path = tmp_path / "run.json"
    run_path.write_text(json.dumps(make_run([make_doc("a.png", {"cer": 0.1})])), encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.md")
    assert main(["report", str(run_path), "--markdown", str(tmp_path / "pipe.md")]) == 2


@pytest.mark.parametrize(("option", "expected"), [
    ("--ocr-json=invoices/ground_truth.json", "--ocr-json=*invoices/ground_truth.json lies inside the dataset folder "
                                               "*invoices: writing the report there would destroy an input of this "
                                               "run (its ground truth, an image, a sidecar); write it outside that "
                                               "folder"),
    ("--ocr-html=invoices/images/doc_001.png", "--ocr-html=*doc_001.png lies inside the dataset folder *invoices: *"),
    ("--ocr-csv=invoices/new.csv", "--ocr-csv=*new.csv lies inside the dataset folder *invoices: *"),
    ("--junitxml=invoices/junit.xml", "--junitxml=invoices/junit.xml lies inside the dataset folder *invoices: *"),
    ("--ocr-markdown=preds/doc_002.txt", "--ocr-markdown=*doc_002.txt lies inside the replay engine's folder of "
                                         "predictions preds: *"),
    ("--ocr-html=base.json", "--ocr-html=*base.json is the --ocr-baseline file *base.json: *"),
    ("--ocr-csv=escape.csv", "--ocr-csv=*escape.csv lies inside the dataset folder *invoices: *"),  # through a link
])
def test_a_report_path_that_is_an_input_of_the_run_is_a_usage_error(pytester: pytest.Pytester, option: str,
                                                                      expected: str) -> None:
    make_dataset(pytester.path)
    (pytester.path / "escape.csv").symlink_to("invoices/images/doc_003.png")
    inputs = [*(pytester.path / "invoices").rglob("*"), *(pytester.path / "preds").iterdir()]
    before = {p: p.read_bytes() for p in inputs if p.is_file()}
    base = pytester.runpytest(*BASE, "--ocr-json=base.json")  # a baseline to refuse writing onto
    assert base.ret == pytest.ExitCode.OK
    baseline = (pytester.path / "base.json").read_bytes()
    result = pytester.runpytest(*BASE, option, "--ocr-baseline=base.json", "--ocr-baseline-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {expected}"])
    assert len([line for line in result.stderr.lines if line.strip()]) == 1  # one sentence
    assert {p: p.read_bytes() for p in before} == before and (pytester.path / "base.json").read_bytes() == baseline
    assert not (pytester.path / "invoices" / "new.csv").exists()


def test_two_reports_on_one_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    result = pytester.runpytest(*BASE, "--ocr-html=out/r", "--ocr-markdown=out/r")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: --ocr-markdown=*out/r is also the --ocr-html path: two reports cannot share "
                                 "a file; give each its own path"])


def test_the_run_file_may_replace_the_baseline_only_when_asked(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    assert pytester.runpytest(*BASE, "--ocr-json=base.json").ret == pytest.ExitCode.OK
    assert pytester.runpytest(*BASE, "--ocr-json=base.json", "--ocr-baseline=base.json").ret == \
        pytest.ExitCode.USAGE_ERROR
    result = pytester.runpytest(*BASE, "--ocr-json=base.json", "--ocr-baseline=base.json", "--ocr-baseline-update")
    assert result.ret == pytest.ExitCode.OK


def test_a_report_inside_a_marker_dataset_is_a_collection_error(pytester: pytest.Pytester,
                                                                  plugin_args: list[str]) -> None:
    """The datasets of ``ocr_dataset`` markers are known at collection: refused there, naming test and dataset."""
    make_dataset(pytester.path)
    pytester.makepyfile(test_marked="""
        import pytest

        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_text(ocr_score):
            pass
    """)
    ground_truth = (pytester.path / "invoices" / "ground_truth.json").read_bytes()
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-json=invoices/ground_truth.json", "-p",
                                "no:randomly", *plugin_args)
    # pytest's exit status for a collection error (2; 1 under xdist, whose workers collect)
    assert result.ret in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.TESTS_FAILED)
    result.stdout.fnmatch_lines(["*--ocr-json=*invoices/ground_truth.json lies inside the dataset folder *invoices: "
                                 "writing the report there would destroy an input of this run*(the ocr_dataset "
                                 "marker of test_marked.py::test_text)*"])
    assert (pytester.path / "invoices" / "ground_truth.json").read_bytes() == ground_truth
