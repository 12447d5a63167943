"""The plugin end to end, through pytester, each behaviour with and without ``-n 2``."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from tests.plugin.conftest import PNG_1X1, make_dataset

pytest_plugins = ["pytester"]

SCHEMA = json.loads((Path(__file__).parents[2] / "pytest_ocrmetrics" / "runfile" / "run_schema.json").read_text())


def _testcases(xml_path: Path) -> dict[str, dict[str, str]]:
    root = ET.parse(xml_path).getroot()
    cases = {}
    for case in root.iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        cases[case.get("name")] = {**props, "_failed": str(case.find("failure") is not None),
                                   "_error": str(case.find("error") is not None)}
    return cases


def _outcome_of(result: pytest.RunResult, nodeid: str) -> str:
    """The verbose outcome word of ``nodeid`` (with and without xdist, whose lines put the outcome first)."""
    for line in result.stdout.lines:
        words = line.split()
        if nodeid in words and ("PASSED" in words or "FAILED" in words or "ERROR" in words or "SKIPPED" in words):
            return next(w for w in words if w in ("PASSED", "FAILED", "ERROR", "SKIPPED"))
    raise AssertionError(f"{nodeid} not in the output:\n{result.stdout.str()}")


def test_no_python_items_one_per_document_and_engine(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    result = pytester.runpytest(
        "--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cer:0.1", "-v", *plugin_args
    )
    result.assert_outcomes(passed=3, failed=0)  # doc_003 (CER 0.13) fails 0.1, but its own threshold 0.5 wins
    for doc in ("doc_001.png", "doc_002.png", "doc_003.png"):
        assert _outcome_of(result, f"invoices::replay-{doc}") == "PASSED"


def test_threshold_failure_message_names_metric_document_engine_and_shows_excerpt(
    pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]
) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cer:0.01",
                                "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=2, failed=1)
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    failed = [d for d in run["documents"] if d["outcome"] == "failed"]
    assert [d["id"] for d in failed] == ["doc_001.png"]
    assert failed[0]["message"].startswith("cer = 0.03571, must be <= 0.01")
    result.stdout.fnmatch_lines([
        "*cer = 0.03571, must be <= 0.01 (from the command line / ini); document 'doc_001.png' (dataset invoices), engine 'replay'*",
        "*ref: INVOICE #12345*",
        "*hyp: INV0ICE #12345*",
        "*^*",
    ])


def test_fixture_tests_parametrized_per_document_and_engine(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    preds2 = pytester.path / "preds2"
    preds2.mkdir()
    for stem in ("doc_001", "doc_002", "doc_003"):
        (preds2 / f"{stem}.txt").write_text("garbage", encoding="utf-8")
    pytester.makepyfile(
        test_docs="""
        import pytest
        from pytest_ocrmetrics import assert_cer_below

        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_text(ocr_score, ocr_document, ocr_output, ocr_engine):
            assert ocr_score.document is ocr_document
            assert ocr_score.output is ocr_output
            assert_cer_below(ocr_score, 0.2)
        """
    )
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-engine=replay:preds2", "-v", "-p", "no:randomly",
                                "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=3, failed=3)
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    messages = [d["message"] for d in run["documents"] if d["outcome"] == "failed"]
    assert len(messages) == 3 and all(m.startswith("cer = ") and "engine 'replay:preds2'" in m for m in messages)
    assert _outcome_of(result, "test_docs.py::test_text[replay:preds-doc_001.png]") == "PASSED"
    assert _outcome_of(result, "test_docs.py::test_text[replay:preds2-doc_001.png]") == "FAILED"


def test_threshold_precedence_document_over_test_over_command_line_over_ini(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    docs = {"a.png": {"full_text": "abcdefghij"}, "b.png": {"full_text": "abcdefghij", "thresholds": {"cer": 0.35}}}
    make_dataset(pytester.path, docs, {"a": "abcdefgXYZ", "b": "abcdefgXYZ"})  # CER 0.3 each
    pytester.makeini("[pytest]\nocr_max = cer:0.01\n")
    pytester.makepyfile(
        test_marker="""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")

        @pytest.mark.ocr_thresholds(cer=0.31)
        def test_marker_wins_over_command_line(ocr_score):
            pass

        def test_command_line_wins_over_ini(ocr_score):
            pass

        def test_helper_argument_is_a_test_level_threshold(ocr_score):
            from pytest_ocrmetrics import assert_cer_below
            assert_cer_below(ocr_score, 0.29)
        """
    )
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-max=cer:0.3", "-v", *plugin_args)
    def outcome(name: str) -> str:
        return _outcome_of(result, f"test_marker.py::{name}")

    assert outcome("test_marker_wins_over_command_line[replay-a.png]") == "PASSED"
    assert outcome("test_command_line_wins_over_ini[replay-a.png]") == "PASSED"  # 0.3 <= 0.3 (cli), not 0.01 (ini)
    assert outcome("test_helper_argument_is_a_test_level_threshold[replay-a.png]") == "FAILED"
    # the document's own 0.35 wins over the helper's 0.29
    assert outcome("test_helper_argument_is_a_test_level_threshold[replay-b.png]") == "PASSED"
    result.assert_outcomes(passed=5, failed=1)


def test_ini_threshold_applies_without_command_line(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.makeini("[pytest]\nocr_max = cer:0.01\nocr_engines = replay:preds\nocr_datasets = invoices\n")
    result = pytester.runpytest(*plugin_args)
    result.assert_outcomes(passed=2, failed=1)  # doc_001 0.036 > 0.01 fails; doc_003 has its own 0.5


def test_summary_table(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-summary=full", *plugin_args)
    result.stdout.fnmatch_lines([
        "*= OCR metrics =*",
        "engine*dataset*docs*passed*failed*errors*filtered*CER*CER mean*CER p95*WER*field F1*",
        "replay*invoices*3*3*0*0*0*5.56%*5.63%*",
        "*worst 3 documents by CER*",
        "*top * character confusions*",
        "*O*0*1*",
    ])


def test_junit_properties_and_control_characters(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    make_dataset(pytester.path, {"a.png": {"full_text": "ab"}}, {"a": "a\x00\x1b[31mb\x07"})
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cer:0.01",
                                "--junitxml=out.xml", *plugin_args)
    result.assert_outcomes(failed=1)
    cases = _testcases(pytester.path / "out.xml")  # parses: the XML stays valid
    props = cases["replay-a.png"]
    assert props["ocr.engine"] == "replay" and props["ocr.dataset"] == "invoices" and props["ocr.document"] == "a.png"
    assert float(props["ocr.cer"]) == pytest.approx(3.5)  # 7 inserted characters (NUL ESC [ 3 1 m BEL) / 2
    for name, value in props.items():
        if name.startswith("ocr.") and name not in ("ocr.engine", "ocr.dataset", "ocr.document"):
            float(value)
    assert props["_failed"] == "True"


def test_json_run_file_matches_schema_and_xdist_gives_same_aggregates(pytester: pytest.Pytester, dataset: Path) -> None:
    pytest.importorskip("xdist")
    runs = []
    for extra in ([], ["-n", "2"]):
        out = f"run{len(runs)}.json"
        pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", f"--ocr-json={out}", *extra)
        run = json.loads((pytester.path / out).read_text(encoding="utf-8"))
        jsonschema.validate(run, SCHEMA)
        runs.append(run)
    assert runs[0]["summary"] == runs[1]["summary"]
    strip = lambda docs: [{k: v for k, v in d.items() if k not in ("elapsed_s", "nodeid")} for d in docs]  # noqa: E731
    assert strip(runs[0]["documents"]) == strip(runs[1]["documents"])
    cer = runs[0]["summary"][0]["metrics"]["cer"]
    assert cer["micro"] == pytest.approx(3 / (28 + 11 + 15))
    assert cer["n"] == 3
    assert runs[0]["environment"]["engines"]["replay"]["selected_as"] == "replay:preds"
    assert {d["outcome"] for d in runs[0]["documents"]} == {"passed"}


def test_a_malformed_ground_truth_entry_errors_that_document_naming_file_and_entry(pytester: pytest.Pytester,
                                                                                   plugin_args: list[str]) -> None:
    make_dataset(pytester.path, {"a.png": {"full_text": 42}, "b.png": {"full_text": "Hallo"}}, {"b": "Hallo"})
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                                *plugin_args)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ground_truth.json, entry 'a.png': 'full_text' must be a string, got a number.*"])
    assert "Traceback" not in result.stdout.str()
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert {d["id"]: d["outcome"] for d in run["documents"]} == {"a.png": "error", "b.png": "passed"}


def test_missing_image_errors_only_that_document(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    (dataset / "images" / "doc_002.png").unlink()
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*doc_002.png*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    outcomes = {d["id"]: d["outcome"] for d in run["documents"]}
    assert outcomes == {"doc_001.png": "passed", "doc_002.png": "error", "doc_003.png": "passed"}


def test_missing_prediction_errors_that_document_and_session_goes_on(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    (pytester.path / "preds" / "doc_001.txt").unlink()
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    result.assert_outcomes(passed=2, errors=1)
    pytester.makepyfile(
        test_fixture="""
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")
        def test_text(ocr_output):
            pass
        """
    )
    result = pytester.runpytest(".", "--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["replay: *doc_001*[[]ground truth: *ground_truth.json: doc_001.png]"])
    assert "Traceback" not in result.stdout.str() and "replay.py" not in result.stdout.str()
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    errored = [d for d in run["documents"] if d["outcome"] == "error"]
    assert [d["id"] for d in errored] == ["doc_001.png"] and errored[0]["message"].startswith("replay: ")


def test_unavailable_engine_skips_with_install_command(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.makeconftest(
        """
        from pytest_ocrmetrics.engines.base import EngineSpec, EngineUnavailable

        def factory(arg, options):
            raise EngineUnavailable("install it with: apt-get install fancy-ocr")

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("fancy", factory))
        """
    )
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=fancy", "-rs", *plugin_args)
    result.assert_outcomes(skipped=3)
    result.stdout.fnmatch_lines(["*apt-get install fancy-ocr*"])


def test_third_party_engine_through_hook(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.makeconftest(
        """
        from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

        class Echo:
            name = "echo"
            def identity(self): return {"engine": "echo"}
            def recognize(self, document): return OcrOutput(text=document.reference_text, engine="echo", confidence=0.9)
            def close(self): pass

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("echo", lambda arg, options: Echo(), options={"mode": "how"}))
        """
    )
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=echo", "--ocr-max=cer:0", *plugin_args)
    result.assert_outcomes(passed=3)


def test_unknown_engine_option_lists_valid_keys(pytester: pytest.Pytester, dataset: Path) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-engine-option=replay.bogus=1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown setting replay.bogus; valid settings of engine 'replay': replay.dir*"])


def test_unknown_metric_in_threshold_is_a_usage_error(pytester: pytest.Pytester, dataset: Path) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cre:0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown metric 'cre' (did you mean 'cer'?); valid metrics: cer, wer*"])


def test_min_confidence_filters_instead_of_failing(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.makeconftest(
        """
        from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput

        class Shy:
            name = "shy"
            def identity(self): return {"engine": "shy"}
            def recognize(self, document):
                conf = 0.2 if document.id == "doc_002.png" else 0.9
                return OcrOutput(text="nonsense", engine="shy", confidence=conf)
            def close(self): pass

        def pytest_ocrmetrics_register_engines(registry):
            registry.register(EngineSpec("shy", lambda arg, options: Shy()))
        """
    )
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=shy", "--ocr-min-confidence=0.5",
                                "--ocr-max=cer:0.1", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(failed=2, skipped=1)
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert {d["id"]: d["outcome"] for d in run["documents"]}["doc_002.png"] == "filtered"
    assert run["summary"][0]["filtered"] == 1
    assert run["summary"][0]["metrics"]["cer"]["n"] == 2  # filtered documents do not count in aggregates


def test_no_engine_selected_skips_with_reason(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.makepyfile(
        """
        import pytest
        pytestmark = pytest.mark.ocr_dataset("invoices")
        def test_text(ocr_output):
            pass
        """
    )
    result = pytester.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no OCR engine selected: pass --ocr-engine=NAME (registered engines: *replay*"])


def test_limit_runs_first_documents(pytester: pytest.Pytester, dataset: Path) -> None:
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-limit=2", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["invoices::replay-doc_001.png", "invoices::replay-doc_002.png", "*2 tests collected*"])


def test_process_output_hook_changes_what_is_scored(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.makeconftest(
        """
        import dataclasses
        def pytest_ocrmetrics_process_output(document, output, engine):
            return dataclasses.replace(output, text=document.reference_text)
        """
    )
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cer:0")
    result.assert_outcomes(passed=3)


def test_two_test_functions_on_one_document_count_it_once(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.makepyfile(
        test_two="""
        import pytest
        from pytest_ocrmetrics import assert_cer_below, assert_field_f1
        pytestmark = pytest.mark.ocr_dataset("invoices")

        def test_text(ocr_score):
            assert_cer_below(ocr_score, 0.1)

        def test_fields(ocr_score):
            if ocr_score.document.fields:
                assert_field_f1(ocr_score, 0.99)
        """
    )
    result = pytester.runpytest("--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=6)  # doc_003 (CER 0.133) passes on its own threshold 0.5
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert [d["id"] for d in run["documents"]] == ["doc_001.png", "doc_002.png", "doc_003.png"]
    assert run["summary"][0]["documents"] == 3
    assert run["summary"][0]["metrics"]["cer"]["n"] == 3
    assert len(run["documents"][0]["tests"]) == 2


def test_dataset_without_test_paths_runs_only_the_dataset(pytester: pytest.Pytester, dataset: Path, plugin_args: list[str]) -> None:
    pytester.makepyfile(test_unrelated="def test_unrelated():\n    assert False, 'must not be collected'\n")
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    result.assert_outcomes(passed=3)
    both = pytester.runpytest(".", "--ocr-dataset=invoices", "--ocr-engine=replay:preds", *plugin_args)
    both.assert_outcomes(passed=3, failed=1)  # with an explicit path, the project's tests run as well


def test_ini_datasets_keep_fixture_tests_collected(pytester: pytest.Pytester, dataset: Path) -> None:
    pytester.makeini("[pytest]\nocr_datasets = invoices\nocr_engines = replay:preds\n")
    pytester.makepyfile(test_fix="def test_text(ocr_score):\n    assert ocr_score['cer'] < 0.5\n")
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["*test_fix.py::test_text?replay-doc_001.png?*PASSED*"])


def test_bad_label_line_is_skipped_with_warning_and_counted(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    plates = pytester.path / "plates"
    (plates / "images").mkdir(parents=True)
    for name in ("a.png", "b.png"):
        (plates / "images" / name).write_bytes(PNG_1X1 + name.encode())
    (plates / "labels.txt").write_text("images/a.png\tAB12\nthis line has no tab\nimages/b.png\tCD34\n", encoding="utf-8")
    preds = pytester.path / "preds"
    preds.mkdir()
    (preds / "a.txt").write_text("AB12", encoding="utf-8")
    (preds / "b.txt").write_text("CD34", encoding="utf-8")
    result = pytester.runpytest("--ocr-dataset=plates", "--ocr-engine=replay:preds", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*labels.txt:2*", "*1 ground-truth entry was skipped while loading*"])
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert run["summary"][0]["skipped_entries"] == 1
    assert run["skipped_entries"][0]["source"].endswith("labels.txt:2")


@pytest.mark.parametrize(("args", "message"), [
    (["--ocr-bootstrap=-1"], "--ocr-bootstrap=-1 is out of range; give a whole number from 0 to 100000"),
    (["--ocr-concurrency=0"], "--ocr-concurrency=0 is out of range; give a whole number from 1 to 1024"),
    (["-o", "ocr_concurrency=-4"], "--ocr-concurrency=-4 is out of range; give a whole number from 1 to 1024"),
    (["--ocr-summary=ful"], "--ocr-summary='ful' is not valid (did you mean 'full'?); choose one of: none, short, full"),
])
def test_a_number_or_choice_that_cannot_mean_what_was_typed_is_refused(pytester: pytest.Pytester, dataset: Path,
                                                                       args: list[str], message: str) -> None:
    """A negative number of resamples or no request at a time used to be read as 0 and 1 in silence."""
    result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"ERROR: {message}" in result.stderr.lines


def test_bootstrap_option_sets_or_drops_the_summary_intervals(pytester: pytest.Pytester, dataset: Path) -> None:
    intervals = []
    for value in ("0", "200", "200"):
        pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", f"--ocr-bootstrap={value}",
                           "--ocr-json=run.json")
        cer = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["summary"][0]["metrics"]["cer"]
        intervals.append((cer.get("ci_low"), cer.get("ci_high")))
    assert intervals[0] == (None, None)
    assert intervals[1][0] is not None and intervals[1][0] <= intervals[1][1]
    assert intervals[1] == intervals[2]  # same seed, same interval
