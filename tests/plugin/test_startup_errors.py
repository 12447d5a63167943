"""What a user typed wrong is one usage error at startup; what can only fail later is one line per test.

Issue 13, items 1 and 3: an engine that cannot be created, ``--ocr-dataset`` without an engine, threshold values
checked like gates, a run that checked no threshold saying so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.plugin import make_dataset, usage_error_line

pytest_plugins = ["pytester"]

MANY = 30  # documents: a message that grew with each test would print hundreds of thousands of lines


def _many_documents(root: Path) -> Path:
    docs = {f"d{i:03}.png": {"full_text": "hello world"} for i in range(MANY)}
    return make_dataset(root, docs, {f"d{i:03}": "hello world" for i in range(MANY)})


# -- item 1: an engine that cannot be created ------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "expected"), [
    (["--ocr-engine=replay:nonexistent"], "replay directory 'nonexistent' does not exist; pass --ocr-engine=replay:DIR"),
    (["--ocr-engine=replay"], "replay needs a directory of predictions: pass --ocr-engine=replay:DIR or "
                              "--ocr-engine-option=replay.dir=DIR"),
    (["--ocr-engine=replay", "--ocr-engine-option=replay.dir=elsewhere"], "replay directory 'elsewhere' does not exist"),
    (["--ocr-engine=tesseract", "--ocr-engine-option=tesseract.psm=42"], "tesseract.psm must be a whole number 0..13, got '42'"),
    (["--ocr-engine=tesseract", "--ocr-engine-option=tesseract.config=\"unclosed"], "tesseract.config '\"unclosed' cannot be split"),
    (["--ocr-engine=rapidocr", "--ocr-engine-option=rapidocr.text_score=abc"], "rapidocr.text_score must be a number 0..1, got 'abc'"),
    (["--ocr-engine=openai:some-model"], "engine openai needs a server: pass --ocr-engine-option openai.base_url="),
    (["--ocr-engine=openai", "--ocr-engine-option=openai.base_url=http://127.0.0.1:9/v1"], "engine openai needs a model name"),
    (["--ocr-engine=openai:m", "--ocr-engine-option=openai.base_url=ftp://host"], "openai.base_url must be an http(s) URL"),
    (["--ocr-engine=deepseek", "--ocr-engine-option=deepseek.backend=gpu"], "deepseek.backend must be one of"),
    (["--ocr-engine=deepseek:remote-code", "--ocr-engine-option=deepseek.trust_remote_code=true",
      "--ocr-engine-option=deepseek.mode=huge"], "deepseek.mode must be one of"),
    (["--ocr-engine=tesserct"], "unknown OCR engine 'tesserct' (did you mean 'tesseract'?); registered engines: "),
    (["--ocr-engine=tesseract", "--ocr-engine-option=tesseract.pms=6"],
     "unknown setting tesseract.pms (did you mean 'tesseract.psm'?); valid settings of engine 'tesseract': "),
    (["--ocr-engine=replay:preds", "--ocr-engine-option=tesserract.psm=6"],
     "engine option tesserract.psm: unknown OCR engine 'tesserract' (did you mean 'tesseract'?)"),
], ids=["replay-missing-dir", "replay-no-dir", "replay-dir-setting-missing", "tesseract-psm", "tesseract-config",
        "rapidocr-text-score", "openai-no-base-url", "openai-no-model", "openai-bad-url", "deepseek-backend",
        "deepseek-mode", "engine-typo", "setting-typo", "option-for-unknown-engine"])
def test_an_engine_that_cannot_be_created_is_one_usage_error(pytester: pytest.Pytester, args: list[str], expected: str) -> None:
    _many_documents(pytester.path)
    line = usage_error_line(pytester.runpytest("--ocr-dataset=invoices", *args))
    assert expected in line


def test_a_usage_error_is_the_same_under_xdist(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    _many_documents(pytester.path)
    line = usage_error_line(pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:nonexistent", "-n", "2"))
    assert "replay directory 'nonexistent' does not exist" in line


def test_checks_at_startup_import_no_heavy_library(pytester: pytest.Pytester) -> None:
    """The startup check of every built-in engine creates nothing and imports no backend (fast, works without
    them); a missing binary or package stays a skip when the engine is created."""
    script = """
import sys
from pytest_ocrmetrics.engines.registry import default_registry
registry = default_registry(entry_points=False)
registry.check("tesseract", {"psm": "6", "lang": "deu+eng", "cmd": "/no/such/tesseract"})
registry.check("rapidocr", {"text_score": "0.4", "use_det": "false"})
registry.check("deepseek", {})
registry.check("deepseek", {"base_url": "http://127.0.0.1:9/v1"})
registry.check("openai:m", {"base_url": "http://127.0.0.1:9/v1"})
heavy = [m for m in ("pytesseract", "rapidocr", "onnxruntime", "torch", "transformers", "PIL") if m in sys.modules]
print("HEAVY", heavy)
"""
    result = pytester.run(__import__("sys").executable, "-c", script)
    assert result.ret == 0, result.stderr.str()
    result.stdout.fnmatch_lines(["HEAVY []"])


CONFTEST_BROKEN_FACTORY = """
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

CALLS = []

def factory(arg, options):
    CALLS.append(arg)
    raise RuntimeError("model weights are \\x1b[31mcorrupt\\nsecond line of the message\\nthird line")

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("broken", factory))
"""

EXPECTED_LINE = ("engine 'broken' could not be created: RuntimeError: model weights are \u241b[31mcorrupt second line "
                 "of the message third line")  # one line, the ESC shown as a visible mark


@pytest.mark.xdist_transport
def test_an_engine_failing_at_creation_prints_one_line_per_test(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    """Only the factory can find this problem: every test of the engine errors with the same line, and the output
    per test stays bounded (re-raising one stored exception grew its traceback: 25 documents, 187,769 lines)."""
    _many_documents(pytester.path)
    pytester.makeconftest(CONFTEST_BROKEN_FACTORY)
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=broken", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(errors=MANY)
    output = result.stdout.lines + result.stderr.lines
    assert len(output) < 10 * MANY, f"{len(output)} lines for {MANY} tests"
    # once per test, in its error section (the short summary repeats it after "ERROR <id> - ", truncated or not
    # depending on the terminal's width, so only lines that start with it are counted)
    assert sum(line.startswith(EXPECTED_LINE) for line in output) == MANY
    assert "Traceback" not in result.stdout.str() and "\x1b" not in result.stdout.str()
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert {d["message"] for d in run["documents"]} == {EXPECTED_LINE}


def test_an_engine_failing_at_creation_in_a_fixture_test_prints_one_line(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    _many_documents(pytester.path)
    pytester.makeconftest(CONFTEST_BROKEN_FACTORY)
    pytester.makepyfile(test_engine="""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_engine(ocr_engine):
            pass
        """)
    result = pytester.runpytest("--ocr-engine=broken", *plugin_args)
    result.assert_outcomes(errors=MANY)
    output = result.stdout.lines + result.stderr.lines
    assert len(output) < 10 * MANY, f"{len(output)} lines for {MANY} tests"
    assert sum(line.startswith(EXPECTED_LINE) for line in output) == MANY


def test_the_runner_raises_a_fresh_exception_each_time(tmp_path: Path) -> None:
    """The stored failure is text: each test gets a new exception without the previous tests' traceback."""
    from pytest_ocrmetrics.engines.base import EngineSpec, EngineUnavailable
    from pytest_ocrmetrics.engines.registry import EngineRegistry
    from pytest_ocrmetrics.scoring.runner import EngineCreationError, OcrRunner, RunnerSettings

    calls = []

    def broken(arg: str | None, options: object) -> object:
        calls.append(arg)
        raise ValueError("bad\nthing")

    def missing(arg: str | None, options: object) -> object:
        raise EngineUnavailable("pip install it")

    registry = EngineRegistry()
    registry.register(EngineSpec("broken", broken))
    registry.register(EngineSpec("missing", missing))
    runner = OcrRunner(RunnerSettings(engines=("broken", "missing")), registry)
    broken_choice, missing_choice = runner.engines
    raised = []
    for _ in range(3):
        with pytest.raises(EngineCreationError) as info:
            runner.engine(broken_choice)
        raised.append(info.value)
        with pytest.raises(EngineUnavailable, match="^pip install it$"):
            runner.engine(missing_choice)
    assert calls == [None]  # created (tried) once
    assert len({id(exc) for exc in raised}) == 3
    assert {str(exc) for exc in raised} == {"engine 'broken' could not be created: ValueError: bad thing"}
    assert all(exc.__cause__ is None and exc.__context__ is None for exc in raised)


# -- item 3: no engine, no threshold, threshold values ---------------------------------------------------------------
def test_dataset_without_an_engine_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    line = usage_error_line(pytester.runpytest("--ocr-dataset=invoices"))
    assert line.startswith("--ocr-dataset needs an engine: pass --ocr-engine=NAME (registered engines: ")
    assert "replay" in line and "tesseract" in line


def test_ini_dataset_without_an_engine_skips_with_the_option_to_set(pytester: pytest.Pytester) -> None:
    make_dataset(pytester.path)
    pytester.makeini("[pytest]\nocr_datasets = invoices\n")
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest("-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(["*no OCR engine selected: pass --ocr-engine=NAME (registered engines: *replay*"])


NO_THRESHOLD = "no threshold was checked: pass --ocr-max/--ocr-min*"


def test_a_document_threshold_counts_as_checked(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    result.assert_outcomes(passed=3)  # doc_003's own threshold (cer <= 0.5) is checked
    result.stdout.fnmatch_lines(["*OCR metrics*"])
    result.stdout.no_fnmatch_line(NO_THRESHOLD)


def test_a_threshold_free_run_says_so(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path, {"a.png": {"full_text": "abc"}, "b.png": {"full_text": "def"}}, {"a": "abc", "b": "dxf"})
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines([NO_THRESHOLD])
    for checked in (["--ocr-max=cer:0.5"], ["--ocr-gate=cer<=0.5"]):
        result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *checked, *plugin_args)
        result.assert_outcomes(passed=2)
        result.stdout.no_fnmatch_line(NO_THRESHOLD)


@pytest.mark.parametrize(("args", "ini", "expected"), [
    (["--ocr-min=field_f1:90"], "", "--ocr-min 'field_f1:90': field_f1 is a fraction between 0 and 1; "
                                    "write field_f1:0.9 for 90 %"),
    (["--ocr-min=exact_match:1.5"], "", "exact_match is a fraction between 0 and 1; write exact_match:0.015"),
    (["--ocr-max=cer:-0.1"], "", "--ocr-max 'cer:-0.1': cer is never negative, so a limit of -0.1 fails every document"),
    (["--ocr-max=cer:nan"], "", "the limit on cer must be a finite number"),
    ([], "ocr_min = field_f1:95\n", "ocr_min (ini) 'field_f1:95': field_f1 is a fraction between 0 and 1; "
                                    "write field_f1:0.95 for 95 %"),
], ids=["cli-percent", "cli-fraction-above-1", "cli-negative", "cli-nan", "ini-percent"])
def test_threshold_values_are_checked_like_gates(pytester: pytest.Pytester, dataset: Path, args: list[str], ini: str,
                                                 expected: str) -> None:
    if ini:
        pytester.makeini("[pytest]\n" + ini)
    line = usage_error_line(pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *args))
    assert expected in line


@pytest.mark.parametrize(("marker", "expected"), [
    ("field_f1=90", "test_marker.py::test_fields: ocr_thresholds(field_f1=90): field_f1 is a fraction between 0 and 1; "
                    "write ocr_thresholds(field_f1=0.9) for 90 %"),
    ("cre=0.1", "test_marker.py::test_fields: ocr_thresholds(cre=...): unknown metric 'cre' (did you mean 'cer'?)"),
], ids=["percent", "unknown-metric"])
def test_a_bad_threshold_marker_is_one_collection_error(pytester: pytest.Pytester, dataset: Path,
                                                         plugin_args: list[str], marker: str, expected: str) -> None:
    pytester.makepyfile(test_marker=f"""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")

        @pytest.mark.ocr_thresholds({marker})
        def test_fields(ocr_score):
            pass
        """)
    result = pytester.runpytest("--ocr-engine=replay:preds", *plugin_args)
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)
    result.assert_outcomes(errors=1)
    assert sum(line.startswith(expected) for line in result.stdout.lines) == 1, result.stdout.str()
    assert "Traceback" not in result.stdout.str() and "During handling" not in result.stdout.str()


def test_a_document_threshold_out_of_range_errors_that_document(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    docs = {"a.png": {"full_text": "abc", "thresholds": {"field_f1": 90}}, "b.png": {"full_text": "def"}}
    make_dataset(pytester.path, docs, {"a": "abc", "b": "def"})
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ground_truth.json*a.png*: thresholds: field_f1 is a fraction between 0 and 1; "
                                 "write \"field_f1\": 0.9 for 90 %*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert {d["id"]: d["outcome"] for d in run["documents"]} == {"a.png": "error", "b.png": "passed"}
