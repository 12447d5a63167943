"""``--ocr-baseline-engine OLD=NEW``: a release that switches engines is compared with the old engine's baseline, the
documents paired by dataset and id, per document (in each test, on the workers too) and per aggregate; a typo is a
usage error; without it, a baseline of another engine over the same documents says how to pair them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.plugin import usage_error_line

BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds"]


def _tesseract_baseline(pytester: pytest.Pytester) -> Path:
    """The run of ``preds`` as if engine ``tesseract`` had made it (doc_002 read perfectly)."""
    assert pytester.runpytest(*BASE, "--ocr-json=base.json").ret == pytest.ExitCode.OK
    base = pytester.path / "base.json"
    base.write_text(base.read_text(encoding="utf-8").replace('"engine": "replay"', '"engine": "tesseract"'),
                    encoding="utf-8")
    return base


@pytest.mark.xdist_transport
def test_paired_engine_is_compared_with_the_baselines_engine(pytester: pytest.Pytester, dataset: Path,
                                                              plugin_args: list[str]) -> None:
    _tesseract_baseline(pytester)
    (pytester.path / "preds" / "doc_002.txt").write_text("Hallo wrld", encoding="utf-8")  # worse than tesseract's
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-baseline-engine=tesseract=replay",
                                "--ocr-max-regression=cer:0.01", "--ocr-document-regressions=fail",
                                "--junitxml=out.xml", "--ocr-json=new.json", "--ocr-markdown=summary.md",
                                "--ocr-html=report.html", *plugin_args)
    # the document's own test fails against the tesseract value (checked where it ran: on a worker under -n 2)
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert "cer regressed on document 'doc_002.png' (tesseract -> replay / invoices): baseline 0.0000" in out
    result.stdout.fnmatch_lines(["compared with baseline '*base.json': 3 documents, 0 new, 0 missing",
                                 "REGRESSION cer regressed for tesseract -> replay / invoices: *"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    run = json.loads((pytester.path / "new.json").read_text(encoding="utf-8"))
    assert run["baseline"]["compared"] == 3 and run["baseline"]["error"] is None
    [regressed] = run["baseline"]["document_regressions"]["documents"]
    assert (regressed["id"], regressed["engine"], regressed["baseline_engine"]) == ("doc_002.png", "replay", "tesseract")
    assert run["baseline"]["engine_map"] == [{"baseline_engine": "tesseract", "engine": "replay"}]
    markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
    # the Markdown names both engines where it names one (">" escaped as GitHub renders it)
    assert "| ❌ regression | CER ↓ | tesseract -&gt; replay / invoices |" in markdown
    assert "- invoices/doc\\_002.png (tesseract -&gt; replay): CER ↓ 0.00% → 18.18% (+18.18 pp)" in markdown
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "tesseract -&gt; replay / invoices: CER, baseline" in html  # the scatter chart's title names both
    suite = ET.parse(pytester.path / "out.xml").getroot().find("testsuite")
    assert suite is not None
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["ocr.baseline.compared"] == "3" and props["ocr.baseline.regressed"] == "true"
    assert props["ocr.baseline.engine_map"] == "tesseract -> replay"
    assert props["ocr.baseline.document_regressions.documents"] == "invoices/doc_002.png (tesseract -> replay)"


def test_baseline_of_another_engine_says_how_to_pair_them(pytester: pytest.Pytester, dataset: Path) -> None:
    _tesseract_baseline(pytester)
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # compared nothing: never a pass
    result.stdout.fnmatch_lines([
        "ERROR: baseline '*base.json' matched none of the 3 document(s) of this run, so nothing was compared: the "
        "baseline has tesseract / invoices, this run has replay / invoices (engine / dataset): the same documents "
        "were read by engine 'tesseract' in the baseline and 'replay' here; to compare the two engines pass "
        "--ocr-baseline-engine=tesseract=replay, or make a new baseline from this setup with pytest --ocr-json=PATH"])


@pytest.mark.parametrize(("value", "sentence"), [
    ("tesseract=replai", "--ocr-baseline-engine 'tesseract=replai': this run (--ocr-engine) has no engine 'replai' "
                         "(did you mean 'replay'?); its engines are 'replay'"),
    ("tesseract", "--ocr-baseline-engine 'tesseract' is not OLD=NEW: give the baseline's engine and this run's engine "
                  "compared with it, e.g. --ocr-baseline-engine tesseract=rapidocr"),
    ("replay=tesseract", "--ocr-baseline-engine 'replay=tesseract': the baseline '{base}' has no engine 'replay' (the "
                         "baseline's engine comes first: --ocr-baseline-engine tesseract=replay); its engines are "
                         "'tesseract'"),
    ("tesserac=replay", "--ocr-baseline-engine 'tesserac=replay': the baseline '{base}' has no engine 'tesserac' (did "
                        "you mean 'tesseract'?); its engines are 'tesseract'"),
])
def test_a_wrong_pair_is_a_usage_error(pytester: pytest.Pytester, dataset: Path, value: str, sentence: str) -> None:
    base = _tesseract_baseline(pytester)
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", f"--ocr-baseline-engine={value}")
    assert usage_error_line(result) == sentence.format(base=base)


def test_a_baseline_updated_since_says_to_leave_the_pair_out(pytester: pytest.Pytester, dataset: Path) -> None:
    """After the release that switched engines updated the baseline, the same command names what happened."""
    assert pytester.runpytest(*BASE, "--ocr-json=base.json").ret == pytest.ExitCode.OK  # engine 'replay' already
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json", "--ocr-baseline-engine=tesseract=replay")
    assert usage_error_line(result).endswith(
        "has no engine 'tesseract' (it has 'replay', this run's engine: leave --ocr-baseline-engine out to compare "
        "'replay' with itself); its engines are 'replay'")


def test_pairing_needs_a_baseline_and_the_first_run_only_checks_this_runs_engine(pytester: pytest.Pytester,
                                                                                  dataset: Path) -> None:
    result = pytester.runpytest(*BASE, "--ocr-baseline-engine=tesseract=replay")
    assert usage_error_line(result).startswith("--ocr-baseline-engine needs --ocr-baseline=PATH")
    result = pytester.runpytest(*BASE, "--ocr-baseline=new.json", "--ocr-baseline-update",
                                "--ocr-baseline-engine=tesseract=replai")
    assert "this run (--ocr-engine) has no engine 'replai'" in usage_error_line(result)
    result = pytester.runpytest(*BASE, "--ocr-baseline=new.json", "--ocr-baseline-update",
                                "--ocr-baseline-engine=tesseract=replay")
    assert result.ret == pytest.ExitCode.OK and (pytester.path / "new.json").is_file()  # created: nothing compared


def test_ini_key_pairs_engines_too(pytester: pytest.Pytester, dataset: Path) -> None:
    _tesseract_baseline(pytester)
    pytester.makeini("[pytest]\nocr_baseline_engines = tesseract=replay\n")
    result = pytester.runpytest(*BASE, "--ocr-baseline=base.json")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["compared with baseline '*base.json': 3 documents, 0 new, 0 missing",
                                 "no tolerance given (--ocr-max-regression=METRIC:AMOUNT): nothing fails; "
                                 "no aggregate changed"])
