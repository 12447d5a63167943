"""A broken dataset beside good ones, collection errors shown once, JUnit class names, interrupted runs.

Issue 13: item 4 (a ground-truth collection error in one dataset still writes every report for the others) and
item 10 (collection errors printed twice, JUnit ``classname`` from an absolute path, interrupted runs not marked).
"""

from __future__ import annotations

import csv
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from pytest_ocrmetrics.runfile.record import run_schema
from tests.helpers.plugin import make_dataset

pytest_plugins = ["pytester"]

SCHEMA = run_schema()
# a dataset whose ground-truth file is not JSON cannot be loaded at all (a malformed entry only errors its document)
BROKEN_MESSAGE = "ground_truth.json: invalid JSON at line 1, column 35: Expecting property name enclosed in double quotes."


def _broken_dataset(root: Path, name: str = "broken") -> Path:
    broken = root / name
    (broken / "images").mkdir(parents=True)
    shutil.copy(root / "invoices" / "images" / "doc_001.png", broken / "images" / "doc_001.png")
    (broken / "ground_truth.json").write_text('{"doc_001.png": {"full_text": "x",}}', encoding="utf-8")
    return broken


def _classnames(xml_path: Path) -> set[str]:
    return {case.get("classname", "") for case in ET.parse(xml_path).getroot().iter("testcase")}


@pytest.mark.xdist_transport
def test_a_broken_dataset_does_not_cost_the_others_their_reports(pytester: pytest.Pytester, dataset: Path,
                                                                 plugin_args: list[str]) -> None:
    broken = _broken_dataset(pytester.path)
    result = pytester.runpytest(
        "--ocr-dataset=invoices", "--ocr-dataset=broken", "--ocr-engine=replay:preds", "--ocr-json=run.json",
        "--junitxml=junit.xml", "--ocr-html=report.html", "--ocr-csv=report.csv", "--ocr-markdown=report.md",
        *plugin_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=3, errors=1)
    output = result.stdout.str()
    assert output.count(BROKEN_MESSAGE) >= 1
    assert "During handling of the above exception" not in output and "Traceback" not in output
    # the error section shows the message once, with and without xdist (each worker reports it)
    assert sum(line.startswith(str(broken / "ground_truth.json")) for line in result.stdout.lines) == 1
    result.stdout.fnmatch_lines(["*dataset *broken could not be loaded and is not in this summary: *" + BROKEN_MESSAGE])

    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    jsonschema.validate(run, SCHEMA)
    assert [d["id"] for d in run["documents"]] == ["doc_001.png", "doc_002.png", "doc_003.png"]
    assert {d["outcome"] for d in run["documents"]} == {"passed"}
    assert len(run["collection_errors"]) == 1
    error = run["collection_errors"][0]
    assert Path(error["dataset"]).name == "broken" and BROKEN_MESSAGE in error["message"]
    assert len(list(csv.DictReader((pytester.path / "report.csv").open(encoding="utf-8")))) == 3
    assert "doc_003.png" in (pytester.path / "report.html").read_text(encoding="utf-8")
    assert (pytester.path / "report.md").read_text(encoding="utf-8").strip()
    assert "invoices" in _classnames(pytester.path / "junit.xml")


def test_only_broken_datasets_still_fail_the_run(pytester: pytest.Pytester, dataset: Path) -> None:
    _broken_dataset(pytester.path)
    result = pytester.runpytest("--ocr-dataset=broken", "--ocr-engine=replay:preds")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(errors=1)
    result = pytester.runpytest("--ocr-dataset=broken", "--ocr-engine=replay:preds", "--collect-only")
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_a_broken_dataset_in_a_python_suite_errors_one_test_and_the_others_run(
    pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]
) -> None:
    broken = _broken_dataset(pytester.path)
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.ocr_dataset("invoices", "broken")
        def test_text(ocr_score):
            pass
        """)
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-json=run.json", "--junitxml=junit.xml", "-rE",
                                *plugin_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=3, errors=1)
    output = result.stdout.str()
    assert "During handling of the above exception" not in output and "Traceback" not in output
    assert sum(line.startswith(str(broken / "ground_truth.json")) for line in result.stdout.lines) == 1
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    jsonschema.validate(run, SCHEMA)
    assert len(run["documents"]) == 3
    assert [Path(e["dataset"]).name for e in run["collection_errors"]] == ["broken"]
    assert BROKEN_MESSAGE in run["collection_errors"][0]["message"]
    assert ET.parse(pytester.path / "junit.xml").getroot().iter("testcase")


def test_junit_classname_is_the_dataset_name_not_the_machines_path(pytester: pytest.Pytester,
                                                                   tmp_path_factory: pytest.TempPathFactory,
                                                                   plugin_args: list[str]) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    make_dataset(outside)
    result = pytester.runpytest(f"--ocr-dataset={outside / 'invoices'}", f"--ocr-engine=replay:{outside / 'preds'}",
                                "--junitxml=junit.xml", "-v", *plugin_args)
    result.assert_outcomes(passed=3)
    assert _classnames(pytester.path / "junit.xml") == {"invoices"}
    result.stdout.fnmatch_lines(["*invoices::replay-doc_001.png*"])
    assert str(outside) not in "".join(line for line in result.stdout.lines if "::" in line)

    nested = pytester.path / "data"
    nested.mkdir()
    make_dataset(nested)
    result = pytester.runpytest(f"--ocr-dataset={nested / 'invoices'}", "--ocr-engine=replay:data/preds",
                                "--junitxml=junit.xml", *plugin_args)
    result.assert_outcomes(passed=3)
    assert _classnames(pytester.path / "junit.xml") == {"data.invoices"}  # inside the rootdir: its relative path


def test_two_datasets_with_the_same_name_outside_the_rootdir_get_distinct_node_ids(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Both are named after their folder, 'invoices': the second is refused (its documents would be counted as the
    first's in every summary and baseline) with the fix in the sentence; named, both run with distinct node ids."""
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    make_dataset(first)
    make_dataset(second)
    result = pytester.runpytest(f"--ocr-dataset={first / 'invoices'}", f"--ocr-dataset={second / 'invoices'}",
                                f"--ocr-engine=replay:{first / 'preds'}", "--collect-only", "-q")
    result.stdout.fnmatch_lines([f"{second / 'invoices'}: the dataset name 'invoices' is already the name of "
                                 f"'{first / 'invoices'}'; name one of them: --ocr-dataset=NAME=PATH*"])
    assert result.ret != 0
    result = pytester.runpytest(f"--ocr-dataset={first / 'invoices'}", f"--ocr-dataset=second={second / 'invoices'}",
                                f"--ocr-engine=replay:{first / 'preds'}", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["invoices::replay-doc_001.png", "*invoices-2::replay-doc_001.png", "*6 tests collected*"])


@pytest.mark.xdist_transport
@pytest.mark.parametrize("stop", [["-x"], ["--maxfail=1"]])
def test_a_stopped_run_is_marked_interrupted(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str],
                                            stop: list[str]) -> None:
    common = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cer:0.01", "--ocr-json=run.json",
              "-p", "no:randomly", *plugin_args]
    result = pytester.runpytest(*common, *stop)
    assert result.ret != 0
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    jsonschema.validate(run, SCHEMA)
    assert run["interrupted"] is True
    assert "interrupted" in _summary(result).lower()

    result = pytester.runpytest(*common)
    result.assert_outcomes(passed=2, failed=1)
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert run["interrupted"] is False
    assert "interrupted" not in _summary(result).lower()


def _summary(result: pytest.RunResult) -> str:
    """The OCR metrics section, without the lines naming files (the test's folder name says "interrupted")."""
    section = result.stdout.str().split("OCR metrics", 1)[1].split("short test summary info", 1)[0]
    return "\n".join(line for line in section.splitlines() if not line.startswith("wrote "))


def test_ctrl_c_marks_the_run_interrupted(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.makeconftest("""
        from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

        class Interrupting:
            name = "interrupting"
            def identity(self): return {"engine": "interrupting"}
            def recognize(self, document):
                if document.id == "doc_002.png":
                    raise KeyboardInterrupt  # as if the user pressed Ctrl-C while this page was being read
                return OcrOutput(text=document.reference_text, engine="interrupting")
            def close(self): pass

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("interrupting", lambda arg, options: Interrupting()))
        """)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=interrupting", "--ocr-json=run.json",
                                "-p", "no:randomly", no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert run["interrupted"] is True
    assert [d["id"] for d in run["documents"]] == ["doc_001.png"]


@pytest.mark.xdist_transport
def test_the_rootdirs_conftest_hooks_see_the_dataset_tests(pytester: pytest.Pytester, dataset: Path,
                                                          plugin_args: list[str]) -> None:
    # the plugin keeps pytest's walk out of the dataset folder; pytest still loads the conftest files down to it
    # when it collects the dataset, so their per-test hooks are called for its tests as for a folder of test files
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_makereport(item, call):
            report = yield
            report.sections.append(("conftest", "seen by the rootdir's conftest"))
            return report

        def pytest_runtest_setup(item):
            if item.name.endswith("doc_003.png"):
                pytest.skip("skipped by the conftest")
        """
    )
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "-rsP", *plugin_args)
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*skipped by the conftest*"])
    assert result.stdout.str().count("seen by the rootdir's conftest") >= 2
