"""The release verdict: the engine x dataset aggregates decide, documents that got worse are listed (or fail with
--ocr-document-regressions=fail), and --ocr-baseline-update creates and replaces the baseline."""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.helpers.plugin import make_dataset

BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds"]
GATED = ["--ocr-baseline=base.json", "--ocr-max-regression=cer:0.005", "--ocr-significance=0.05"]
WORSE = ("doc_05", "doc_17", "doc_29")  # the candidate's three receipts that got worse


def _texts(n: int = 36) -> dict[str, str]:
    rng = random.Random(7)
    words = ["TOTAL", "CASH", "CHANGE", "RM", "TAX", "INVOICE", "QTY", "ITEM", "SUBTOTAL", "ROUNDING", "GST"]
    return {f"doc_{i:02d}": " ".join(rng.choice(words) for _ in range(8)) + f" {rng.randint(10, 999)}.00"
            for i in range(n)}


def _noisy(text: str, edits: int, seed: int) -> str:
    """``text`` with ``edits`` characters replaced by '#', at seeded positions."""
    rng = random.Random(seed)
    chars = list(text)
    for position in rng.sample(range(len(chars)), min(edits, len(chars))):
        chars[position] = "#"
    return "".join(chars)


def _write(root: Path, predictions: dict[str, str]) -> None:
    texts = _texts()
    make_dataset(root, {f"{stem}.png": {"full_text": text} for stem, text in texts.items()}, predictions)


def _baseline_model() -> dict[str, str]:
    """The old release: 6 character errors on every receipt."""
    return {stem: _noisy(text, 6, i) for i, (stem, text) in enumerate(_texts().items())}


def _better_model() -> dict[str, str]:
    """The candidate: clearly better (1 error), except three receipts with 12 errors."""
    return {stem: _noisy(text, 12 if stem in WORSE else 1, 100 + i) for i, (stem, text) in enumerate(_texts().items())}


def _worse_model() -> dict[str, str]:
    return {stem: _noisy(text, 10, 200 + i) for i, (stem, text) in enumerate(_texts().items())}


def _make_baseline(pytester: pytest.Pytester) -> None:
    _write(pytester.path, _baseline_model())
    assert pytester.runpytest(*BASE, "--ocr-json=base.json").ret == 0


def _suite_properties(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None
    return {p.get("name"): p.get("value") for p in suite.findall("properties/property")}


@pytest.mark.xdist_transport
def test_a_better_candidate_with_a_few_worse_receipts_passes_under_warn_and_names_them(
        pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    _make_baseline(pytester)
    _write(pytester.path, _better_model())
    result = pytester.runpytest(*BASE, *GATED, "--junitxml=out.xml", "--ocr-json=new.json", "--ocr-markdown=s.md",
                                "--ocr-html=r.html", *plugin_args)
    result.assert_outcomes(passed=36)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([
        "WARNING: 3 documents got worse than the baseline beyond tolerance in 3 metrics "
        "(--ocr-document-regressions=warn: listed, their tests pass, the aggregates decide): "
        "'doc_05.png', 'doc_17.png', 'doc_29.png' (replay / invoices)",
        "improved: cer improved for replay / invoices: 0.1129 -> 0.0361, delta -0.0768, 95% CI ?-0.0931, -0.0579?*",
    ])
    entry = json.loads((pytester.path / "new.json").read_text(encoding="utf-8"))["baseline"]["document_regressions"]
    assert entry["policy"] == "warn" and entry["count"] == 3 and entry["failed"] is False
    assert [d["id"] for d in entry["documents"]] == ["doc_05.png", "doc_17.png", "doc_29.png"]
    assert entry["documents"][0]["metrics"][0]["metric"] == "cer"
    props = _suite_properties(pytester.path / "out.xml")
    assert props["ocr.baseline.document_regressions"] == "3"
    assert props["ocr.baseline.document_regressions.policy"] == "warn"
    assert props["ocr.baseline.document_regressions.documents"] == (
        "invoices/doc_05.png (replay); invoices/doc_17.png (replay); invoices/doc_29.png (replay)")
    assert props["ocr.baseline.regressed"] == "false"
    markdown = (pytester.path / "s.md").read_text(encoding="utf-8")
    assert "**3 document(s) got worse than the baseline beyond tolerance**" in markdown
    assert all(f"invoices/{stem}.png (replay)".replace("_", "\\_") in markdown for stem in WORSE)  # escaped
    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert "regressed beyond tolerance (listed, not failed: the aggregates decide)" in html
    assert "passed: no aggregate regression against the baseline, 3 documents worse beyond tolerance" in html


def test_the_same_candidate_fails_under_fail_in_exactly_the_worse_receipts(
        pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    _make_baseline(pytester)
    _write(pytester.path, _better_model())
    result = pytester.runpytest(*BASE, *GATED, "--ocr-document-regressions=fail", "--junitxml=out.xml", *plugin_args)
    result.assert_outcomes(passed=33, failed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*cer regressed on document 'doc_05.png' (replay / invoices)*"])
    root = ET.parse(pytester.path / "out.xml").getroot()
    failed = sorted(case.get("name") for case in root.iter("testcase") if case.find("failure") is not None)
    assert failed == [f"replay-{stem}.png" for stem in WORSE]
    props = _suite_properties(pytester.path / "out.xml")  # the run fails on the baseline: the dashboard says so
    assert props["ocr.baseline.regressed"] == "true"
    assert props["ocr.baseline.document_regressions"] == "3"
    assert props["ocr.baseline.document_regressions.policy"] == "fail"


def test_off_neither_lists_nor_fails(pytester: pytest.Pytester) -> None:
    _make_baseline(pytester)
    _write(pytester.path, _better_model())
    pytester.makeini("[pytest]\nocr_document_regressions = off\n")  # the ini twin
    result = pytester.runpytest(*BASE, *GATED, "--ocr-json=new.json", "--junitxml=out.xml")
    result.assert_outcomes(passed=36)
    assert result.ret == pytest.ExitCode.OK
    assert "got worse than the baseline" not in result.stdout.str() and "doc_05" not in result.stdout.str()
    entry = json.loads((pytester.path / "new.json").read_text(encoding="utf-8"))["baseline"]["document_regressions"]
    assert entry == {"policy": "off", "count": 0, "failed": False, "documents": [], "fact_regressions": 0}
    assert "ocr.baseline.document_regressions" not in _suite_properties(pytester.path / "out.xml")


def test_a_worse_candidate_fails_under_every_policy(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    _make_baseline(pytester)
    _write(pytester.path, _worse_model())
    for policy in ("warn", "off"):
        result = pytester.runpytest(*BASE, *GATED, f"--ocr-document-regressions={policy}", *plugin_args)
        result.assert_outcomes(passed=36)  # no test fails: the session does, on the aggregate
        assert result.ret == pytest.ExitCode.TESTS_FAILED, policy
        result.stdout.fnmatch_lines(["REGRESSION cer regressed for replay / invoices:*"])


def test_a_mistyped_policy_is_a_usage_error(pytester: pytest.Pytester) -> None:
    _write(pytester.path, _baseline_model())
    result = pytester.runpytest(*BASE, "--ocr-document-regressions=warm")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ocr-document-regressions='warm' is not valid (did you mean 'warn'?)*"])


# ------------------------------------------------------------------------------------------- --ocr-baseline-update

def test_baseline_update_creates_the_baseline_on_the_first_run(pytester: pytest.Pytester,
                                                               plugin_args: list[str]) -> None:
    _write(pytester.path, _baseline_model())
    result = pytester.runpytest(*BASE, *GATED, "--ocr-baseline-update", "--ocr-gate=cer<=0.5", *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["created the baseline *base.json with this run (36 evaluated documents): the first "
                                 "run, nothing was compared; later runs with --ocr-baseline compare with it"])
    assert "compared with" not in result.stdout.str()
    base = json.loads((pytester.path / "base.json").read_text(encoding="utf-8"))
    assert len(base["documents"]) == 36 and "baseline" not in base
    # the exit status comes from the thresholds and gates alone
    (pytester.path / "base.json").unlink()
    result = pytester.runpytest(*BASE, *GATED, "--ocr-baseline-update", "--ocr-gate=cer<=0.01", *plugin_args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert (pytester.path / "base.json").exists()  # written all the same: the gate's failure is said, not hidden


@pytest.mark.xdist_transport
def test_baseline_update_compares_then_replaces_the_baseline(pytester: pytest.Pytester,
                                                             plugin_args: list[str]) -> None:
    _make_baseline(pytester)
    old = (pytester.path / "base.json").read_text(encoding="utf-8")
    _write(pytester.path, _better_model())
    result = pytester.runpytest(*BASE, *GATED, "--ocr-baseline-update", *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["improved: cer improved for replay / invoices:*",
                                 "updated the baseline *base.json: this run (36 evaluated documents) replaced the one "
                                 "compared above; later runs compare with it"])
    new = (pytester.path / "base.json").read_text(encoding="utf-8")
    assert new != old and json.loads(new)["baseline"]["compared"] == 36
    assert not list(pytester.path.glob(".base.json.*"))  # written atomically: no temporary file left
    # the next run compares with the new baseline: nothing changed
    result = pytester.runpytest(*BASE, *GATED, *plugin_args)
    assert result.ret == pytest.ExitCode.OK
    assert "got worse than the baseline" not in result.stdout.str()
    result.stdout.fnmatch_lines(["compared with baseline *base.json': 36 documents, 0 new, 0 missing"])


def test_baseline_update_keeps_the_baseline_of_an_interrupted_run(pytester: pytest.Pytester) -> None:
    _make_baseline(pytester)
    old = (pytester.path / "base.json").read_text(encoding="utf-8")
    _write(pytester.path, _better_model())
    result = pytester.runpytest(*BASE, *GATED, "--ocr-baseline-update", "-x", "--ocr-document-regressions=fail")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*the baseline *base.json was not updated (the previous file is kept): the run was "
                                 "interrupted*"])
    assert (pytester.path / "base.json").read_text(encoding="utf-8") == old


@pytest.mark.parametrize(("args", "message"), [
    (["--ocr-baseline-update"], "--ocr-baseline-update needs --ocr-baseline=PATH*"),
    (["--ocr-baseline=base.json", "--ocr-baseline-update", "--ocr-shard=1/2"],
     "--ocr-baseline-update with --ocr-shard=1/2 would replace the baseline with one shard's documents*"),
    (["--ocr-baseline=base.json", "--ocr-json=base.json"],
     "*--ocr-json=*base.json is the --ocr-baseline file: writing the run there would replace the baseline*"),
    (["--ocr-baseline=missing.json"],
     "*missing.json' does not exist*for the first run, pass --ocr-baseline-update to create it from this run"),
])
def test_baseline_update_mistakes_are_usage_errors(pytester: pytest.Pytester, args: list[str], message: str) -> None:
    _make_baseline(pytester)
    result = pytester.runpytest(*BASE, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"ERROR: {message}"])
