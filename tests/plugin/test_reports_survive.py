"""Every report survives every input: hostile text through a whole session, with and without xdist, and report
writers that fail one at a time without costing the others or the previous file.

The corpus: lone surrogates (``\\ud800`` escapes in ground_truth.json and in a replay engine's JSON answer), NUL,
ESC sequences, non-characters (U+FFFE), bidi controls (RLO, RLM), formula-like document ids (``=HYPERLINK(...)``,
``+1``, ``-2``, ``@cmd``) and a 2 MB reference text. Every report must be written, parse, and hold every document.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.gating import validate_run
from tests.helpers.plugin import PNG_1X1

BIG = " ".join(f"w{n % 997}x{n % 13}" for n in range(260_000))[:2_000_000]  # a 2 MB reference text
HOSTILE_DOCS: dict[str, dict[str, Any]] = {
    "surrogate.png": {"full_text": "A\ud800B \udfff end", "fields": {"total": "1\udc80"}, "thresholds": {"cer": 0.0}},
    "controls.png": {"full_text": "NUL\x00 ESC\x1b[31mred\x1b[0m BEL\x07 DEL\x7f C1\x85 U+FFFE\ufffe"},
    "bidi\u202egnp.exe.png": {"full_text": "\u05e9\u05dc\u05d5\u05dd\u200f abc \u202eRLO"},
    '=HYPERLINK("http:x","y").png': {"full_text": "formula"},
    "+1.png": {"full_text": "plus"},
    "-2.png": {"full_text": "minus"},
    "@cmd.png": {"full_text": "at"},
    "big.png": {"full_text": BIG},
}
PREDICTIONS = {
    "surrogate": "A?B end",  # fails its cer<=0: the failure message carries the reference excerpt
    "controls": "NUL\x00 ESC\x1b[31mred\x1b[0m BEL\x07",
    "bidi\u202egnp.exe": "\u05e9\u05dc\u05d5\u05dd abc RLO",
    '=HYPERLINK("http:x","y")': "formula",
    "+1": "plus",
    "-2": "minus",
    "@cmd": "at",
    "big": BIG[:1_000_000] + "#" + BIG[1_000_001:],
}
# the replay engine's structured answer, as a server might send it: JSON with a lone-surrogate escape
FIELDS_ANSWER = '{"fields": {"total": "1\\udc80"}, "raw": "\\ud83d broken pair \\ufffe"}'
REPORTS = ["--junitxml=out/junit.xml", "--ocr-json=out/run.json", "--ocr-html=out/report.html",
           "--ocr-csv=out/docs.csv", "--ocr-markdown=out/summary.md", "--ocr-summary=full"]
BASE = ["--ocr-dataset=invoices", "--ocr-engine=replay:preds", "-p", "no:randomly", "-p", "no:cacheprovider"]
# control characters that must never reach a report raw (line breaks and tabs are layout)
RAW_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def hostile_dataset(root: Path) -> Path:
    """``root/invoices`` and ``root/preds`` with the hostile corpus; ground truth written with JSON escapes."""
    data = root / "invoices"
    (data / "images").mkdir(parents=True, exist_ok=True)
    (data / "ground_truth.json").write_text(json.dumps(HOSTILE_DOCS, ensure_ascii=True), encoding="ascii")
    for name in HOSTILE_DOCS:
        (data / "images" / name).write_bytes(PNG_1X1 + name.encode("utf-8"))
    preds = root / "preds"
    preds.mkdir(exist_ok=True)
    for stem, text in PREDICTIONS.items():
        (preds / f"{stem}.txt").write_text(text, encoding="utf-8")
    (preds / "surrogate.json").write_text(FIELDS_ANSWER, encoding="ascii")
    return data


class _Html(HTMLParser):
    """Parses the report and checks that no text or attribute value holds a raw control character."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for _, value in attrs:
            assert value is None or not RAW_CONTROL.search(value), value

    def handle_data(self, data: str) -> None:
        assert not RAW_CONTROL.search(data), repr(data[:200])


def _no_nan(constant: str) -> Any:
    raise ValueError(f"run file holds {constant}")


def check_reports(out: Path) -> dict[str, Any]:
    """Every report exists, parses and holds every document; returns the run."""
    run_text = (out / "run.json").read_text(encoding="utf-8")
    run = validate_run(json.loads(run_text, parse_constant=_no_nan))
    assert {d["id"] for d in run["documents"]} == set(HOSTILE_DOCS)
    assert run["replaced_characters"] >= 5  # 3 in ground truth, 2 in the engine's JSON answer
    assert not re.search("[\ud800-\udfff\ufffe\uffff]", run_text)

    root = ET.parse(out / "junit.xml").getroot()
    cases = list(root.iter("testcase"))
    assert len(cases) == len(HOSTILE_DOCS)
    documents = {p.get("value") for case in cases for p in case.iter("property") if p.get("name") == "ocr.document"}
    assert len(documents) == len(HOSTILE_DOCS)
    assert [c.get("name") for c in cases if c.find("failure") is not None] == ["replay-surrogate.png"]

    with (out / "docs.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    ids = [row["id"] for row in rows]
    assert {i.removeprefix("'") for i in ids} == {i.replace("\u202e", "\u27e8RLO\u27e9") for i in HOSTILE_DOCS}
    for formula in ('=HYPERLINK("http:x","y").png', "+1.png", "-2.png", "@cmd.png"):
        assert "'" + formula in ids  # shown, not evaluated, by a spreadsheet
    assert all(not RAW_CONTROL.search(cell) for row in rows for cell in row.values())
    assert all(isinstance(float(row["cer"]), float) for row in rows)  # numeric cells stay numeric

    page = _Html()
    html_text = (out / "report.html").read_text(encoding="utf-8")
    page.feed(html_text)
    page.close()
    assert not RAW_CONTROL.search(html_text)
    assert html_text.count('<tr><td class="num" data-sort="') == len(HOSTILE_DOCS)  # one documents-table row each
    assert "\u2400" in html_text and "\u241b[31m" in html_text and "\u27e8RLO\u27e9" in html_text

    markdown = (out / "summary.md").read_text(encoding="utf-8")
    assert not RAW_CONTROL.search(markdown)
    assert markdown.startswith("## \u274c OCR metrics: failed\n\n**FAILED**: 1 of 8 documents failed")
    assert "### Worst documents (8 of 8)" in markdown
    return run


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_hostile_corpus_every_report_written_parsed_complete(pytester: pytest.Pytester, xdist: list[str]) -> None:
    if xdist:
        pytest.importorskip("xdist")
    hostile_dataset(pytester.path)
    result = pytester.runpytest(*BASE, *REPORTS, *xdist)
    result.assert_outcomes(passed=len(HOSTILE_DOCS) - 1, failed=1)
    assert "INTERNALERROR" not in result.stdout.str()
    run = check_reports(pytester.path / "out")
    result.stdout.fnmatch_lines([f"{run['replaced_characters']} characters that cannot be written (lone surrogates, "
                                 "non-characters such as U+FFFE) replaced with U+FFFD in every report"])
    summary = result.stdout.str().split("OCR metrics ====")[1]
    assert not RAW_CONTROL.search(summary)  # the summary tables show marks, not raw ESC/NUL/RLO
    assert "bidi\u27e8RLO\u27e9gnp.exe.png" in summary


def test_surrogate_in_a_document_id_still_writes_every_report(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    """A file name that is not UTF-8 (``doc\\xff.png``) becomes an id with a lone surrogate (``doc\\udcff.png``).

    Under xdist the test id travels before any report: it carries the escape (``replay-doc\\udcff.png``).
    """
    data = hostile_dataset(pytester.path)
    docs = {"doc\udcff.png": {"full_text": "y"}, "fine.png": {"full_text": "x"}}
    (data / "ground_truth.json").write_text(json.dumps(docs), encoding="ascii")
    for name in docs:
        (data / "images").joinpath(name).write_bytes(PNG_1X1)
    (pytester.path / "preds" / "fine.txt").write_text("x", encoding="utf-8")
    Path(str(pytester.path / "preds" / "doc\udcff.txt")).write_bytes(b"y")
    result = pytester.runpytest(*BASE, *REPORTS, *plugin_args)
    result.assert_outcomes(passed=2)
    assert "INTERNALERROR" not in result.stdout.str()
    out = pytester.path / "out"
    run = validate_run(json.loads((out / "run.json").read_text(encoding="utf-8"), parse_constant=_no_nan))
    assert {d["id"] for d in run["documents"]} == {"doc\ufffd.png", "fine.png"}
    assert run["replaced_characters"] == 2  # the id and the image path, the same count with and without xdist
    cases = list(ET.parse(out / "junit.xml").getroot().iter("testcase"))
    assert len(cases) == 2
    assert {p.get("value") for c in cases for p in c.iter("property") if p.get("name") == "ocr.document"} == {
        "doc\ufffd.png", "fine.png"}  # replaced like in every report, with and without xdist
    for name in ("report.html", "docs.csv", "summary.md"):
        assert "doc\ufffd.png" in (out / name).read_text(encoding="utf-8")


def test_one_failing_report_keeps_the_others_and_the_previous_file(
    pytester: pytest.Pytester, plugin_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.plugin import make_dataset

    make_dataset(pytester.path)
    out = pytester.path / "out"
    (out / "report.html").mkdir(parents=True)  # the HTML report cannot be written: a folder is in the way
    (out / "run.json").write_text('{"previous": "run"}', encoding="utf-8")
    import pytest_ocrmetrics.reporting.files as files

    def broken(run: Any) -> Any:  # the run file is written document by document: fail half-way through
        yield '{"schema": "pytest-ocrmetrics/1",\n"documents": [\n'
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(files, "run_lines", broken)
    result = pytester.runpytest(*BASE, *REPORTS, *plugin_args)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a report asked for and not written fails the run
    result.stdout.fnmatch_lines([
        f"could not write the JSON run file {out / 'run.json'}: RuntimeError: the disk is full",
        f"could not write the HTML report {out / 'report.html'}: a folder; *",
        "the run fails: 2 requested reports were not written",
    ])
    result.stdout.fnmatch_lines(["*3 passed*"])  # the session still ends with its summary
    assert (out / "run.json").read_text(encoding="utf-8") == '{"previous": "run"}'  # not truncated
    assert (out / "docs.csv").is_file() and (out / "summary.md").is_file()
    ET.parse(out / "junit.xml")
    assert sorted(p.name for p in out.iterdir()) == ["docs.csv", "junit.xml", "report.html", "run.json", "summary.md"]


def test_report_failure_is_said_even_without_a_summary(pytester: pytest.Pytester) -> None:
    from tests.helpers.plugin import make_dataset

    make_dataset(pytester.path)
    (pytester.path / "out" / "report.html").mkdir(parents=True)
    result = pytester.runpytest(*BASE, *REPORTS[:-1], "--ocr-summary=none")
    result.stdout.fnmatch_lines(["could not write the HTML report *report.html: a folder; *"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert (pytester.path / "out" / "run.json").is_file()


def test_junit_property_names_hold_only_xml_characters(pytester: pytest.Pytester) -> None:
    """Suite property names carry the dataset name, and pytest escapes property values but not names."""
    from tests.helpers.plugin import make_dataset

    data = make_dataset(pytester.path)
    data.rename(pytester.path / "inv\x1boices")
    result = pytester.runpytest("--ocr-dataset=inv\x1boices", "--ocr-engine=replay:preds", "--junitxml=junit.xml",
                                "-p", "no:randomly")
    result.assert_outcomes(passed=3)
    # (pytest writes the test cases' classname unescaped, so the file as a whole is H1's JUnit classname change)
    text = (pytester.path / "junit.xml").read_text(encoding="utf-8")
    suite_properties = re.search("<testsuite [^>]*><properties>(.*?)</properties>", text)
    assert suite_properties is not None
    ET.fromstring(f"<properties>{suite_properties.group(1)}</properties>")
    assert 'name="ocr.replay.inv#x1Boices.documents"' in suite_properties.group(1)


@pytest.mark.xdist_transport
def test_interrupted_run_is_marked_in_every_report(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    from tests.helpers.plugin import make_dataset

    make_dataset(pytester.path)
    result = pytester.runpytest(*BASE, *REPORTS[1:], "--ocr-max=cer:0.01", "-x", *plugin_args)
    assert result.ret in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED)  # xdist stops with the latter
    out = pytester.path / "out"
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["interrupted"] is True
    result.stdout.fnmatch_lines(["INTERRUPTED: these are the results of the documents checked before the run was stopped"])
    assert (out / "summary.md").read_text(encoding="utf-8").startswith("## ⚠️ OCR metrics: interrupted\n")
    assert 'class="verdict interrupted"' in (out / "report.html").read_text(encoding="utf-8")


def test_control_characters_in_names_never_reach_the_terminal_or_the_junit_xml_raw(
        pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    """A dataset folder and a document file name holding ESC: test ids and JUnit class names carry escapes."""
    data = pytester.path / "scans\x1b[1m"
    (data / "images").mkdir(parents=True)
    (data / "ground_truth.json").write_text(json.dumps({"red\x1b[31m.png": {"full_text": "x"}}), encoding="ascii")
    (data / "images" / "red\x1b[31m.png").write_bytes(PNG_1X1)
    (pytester.path / "preds").mkdir()
    (pytester.path / "preds" / "red\x1b[31m.txt").write_text("x", encoding="utf-8")
    result = pytester.runpytest(f"--ocr-dataset={data.name}", "--ocr-engine=replay:preds", "-v",
                                "--junitxml=junit.xml", *plugin_args)
    result.assert_outcomes(passed=1)
    assert "\x1b" not in result.stdout.str()
    assert r"scans\x1b[1m::replay-red\x1b[31m.png" in result.stdout.str()  # the node id, escaped
    assert "\x1b" not in (pytester.path / "junit.xml").read_text(encoding="utf-8")
    case = next(ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"))  # valid XML
    assert r"replay-red\x1b" in case.get("classname", "") + case.get("name", "")


def test_a_bug_in_the_verdict_still_writes_every_report_and_fails_the_run(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong after the tests (here: judging the gates), the reports are written and the run is red."""
    import pytest_ocrmetrics.gating.verdict as verdict_module

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom\x1b[2J")

    monkeypatch.setattr(verdict_module, "judge_run", broken)
    hostile_dataset(pytester.path)
    result = pytester.runpytest_inprocess(*BASE, *REPORTS, "--ocr-gate=cer<=1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*ERROR: the gates and the baseline could not be checked: RuntimeError: boom␛[2J*"])
    out = pytester.path / "out"
    run = validate_run(json.loads((out / "run.json").read_text(encoding="utf-8"), parse_constant=_no_nan))
    assert len(run["documents"]) == len(HOSTILE_DOCS)
    assert "\x1b[2J" not in result.stdout.str()
    for name in ("report.html", "docs.csv", "summary.md", "junit.xml"):
        assert (out / name).stat().st_size > 0


def test_a_bug_building_the_run_is_one_line_and_a_red_run(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ocrmetrics.runfile.results import RunResults

    def broken(self: Any, **kwargs: Any) -> Any:
        raise ValueError("no run today")

    monkeypatch.setattr(RunResults, "to_run", broken)
    hostile_dataset(pytester.path)
    result = pytester.runpytest_inprocess(*BASE, *REPORTS)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["could not build the OCR run for the reports: ValueError: no run today"])
    assert "INTERNALERROR" not in result.stdout.str()


@pytest.mark.xdist_transport
def test_three_documents_with_surrogates_and_controls_everywhere_write_every_report(
        pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    """The reported case, as broad as it can be made: a 3-document replay run with lone surrogates and control
    characters in the ground truth, the predictions, the structured answer, a document id (a file name that is not
    UTF-8), tags, field names and a fact id, and report paths that hold an ESC and a byte that is not UTF-8. Every
    report exists where it was asked for, parses and holds the three documents; the terminal names each path with
    its unprintable characters escaped (never raw), so the path it shows is the path that was written."""
    weird = "d\udcff\x1b[31m"  # the id of the file name b"d\xff\x1b[31m.png"
    docs = {
        "a.png": {"full_text": "Hello\ud800 world\x1b[31m red\x00nul\u202e", "tags": ["t\ud801", "\x07bell"],
                  "fields": {"k\ud802": "v\x1b"}},
        f"{weird}.png": {"full_text": "clear \u202e rlo \udfff", "thresholds": {"cer": 0.0}},
        "c.png": {"full_text": "plain text\x00", "facts": [{"id": "f\ud800\x1b", "type": "present", "text": "plain text"}]},
    }
    data = pytester.path / "ds"
    (data / "images").mkdir(parents=True)
    (data / "ground_truth.json").write_text(json.dumps(docs), encoding="ascii")
    for n, name in enumerate(docs):
        Path(str(data / "images" / name)).write_bytes(PNG_1X1 + bytes([n]))
    preds = pytester.path / "preds"
    preds.mkdir()
    (preds / "a.txt").write_text("Hello w0rld\x1b[31m red\x00", encoding="utf-8")
    (preds / "a.json").write_text('{"fields": {"k\\ud802": "v\\udc00\\u001b"}, "raw": "r\\ud800"}', encoding="ascii")
    Path(str(preds / f"{weird}.txt")).write_text("clear \u202e rl0 \x1b[2J", encoding="utf-8")
    (preds / "c.txt").write_text("plain t3xt \x1b]0;title\x07", encoding="utf-8")
    # the folder b"out\x1b[1m\xfe"; under xdist without the byte that is not UTF-8: pytest-xdist sends the command
    # line to its workers as UTF-8 and stops on it before any plugin runs (a limit of xdist, see docs/explanation/verdict.md)
    out = "out\x1b[1m" + ("" if plugin_args else "\udcfe")
    result = pytester.runpytest(
        "--ocr-dataset=ds", "--ocr-engine=replay:preds", f"--ocr-json={out}/run.json", f"--ocr-html={out}/r.html",
        f"--ocr-csv={out}/d.csv", f"--ocr-markdown={out}/s.md", "--junitxml=j.xml", "-p", "no:randomly",
        *plugin_args)
    result.assert_outcomes(passed=1, failed=2)  # the weird document fails cer <= 0, c.png its fact
    text = result.stdout.str()
    assert "INTERNALERROR" not in text and "\x1b" not in text and "\u202e" not in text
    folder = Path(str(pytester.path / out))
    for name in ("run.json", "r.html", "d.csv", "s.md"):
        assert f"wrote {pytester.path}/{out}/{name}".replace("\x1b", "\\x1b").replace("\udcfe", "\\udcfe") in text
        assert (folder / name).stat().st_size > 0
    run = validate_run(json.loads((folder / "run.json").read_text(encoding="utf-8"), parse_constant=_no_nan))
    assert len(run["documents"]) == 3 and run["replaced_characters"] > 0
    assert [f["passed"] for f in run["facts"]] == [False]
    html = (folder / "r.html").read_text(encoding="utf-8")
    assert html.rstrip().endswith("</html>") and "\x1b" not in html
    assert all(doc_id in html for doc_id in ("a.png", "c.png", "d\ufffd"))
    assert len(list(ET.parse(pytester.path / "j.xml").getroot().iter("testcase"))) == 3  # pytest prints its own path raw


# the reported case: ground truth typed with raw control characters (strict JSON forbids them inside strings) and a
# lone-surrogate escape, three documents, every report asked for
RAW_CONTROL_GROUND_TRUTH = ('{"a.png": {"full_text": "x\\ud800y"}, "b.png": {"full_text": "be\x1bll\x07\tend"}, '
                            '"c.png": {"full_text": "ok"}}')


def _three_documents(root: Path, ground_truth: str) -> None:
    data = root / "invoices"
    (data / "images").mkdir(parents=True)
    (data / "ground_truth.json").write_text(ground_truth, encoding="utf-8")
    preds = root / "preds"
    preds.mkdir()
    for n, (name, text) in enumerate((("a", "xy"), ("b", "bell end"), ("c", "ok"))):
        (data / "images" / f"{name}.png").write_bytes(PNG_1X1 + bytes([n]))
        (preds / f"{name}.txt").write_text(text, encoding="utf-8")


def _every_report(out: Path) -> dict[str, Any]:
    """Every report exists and parses; returns the run file."""
    run = validate_run(json.loads((out / "run.json").read_text(encoding="utf-8"), parse_constant=_no_nan))
    ET.parse(out / "junit.xml")
    with (out / "docs.csv").open(encoding="utf-8", newline="") as handle:
        list(csv.DictReader(handle))
    html_text = (out / "report.html").read_text(encoding="utf-8")
    page = _Html()
    page.feed(html_text)
    page.close()
    assert html_text.rstrip().endswith("</html>") and not RAW_CONTROL.search(html_text)
    assert not RAW_CONTROL.search((out / "summary.md").read_text(encoding="utf-8"))
    return run


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_control_characters_typed_into_the_ground_truth_are_read_and_every_report_written(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """A raw ESC, BEL or tab inside a ground-truth string is the character it is (reports show a mark), not a
    reason to refuse the dataset, whose refusal used to leave no run file and no HTML report at all."""
    if xdist:
        pytest.importorskip("xdist")
    _three_documents(pytester.path, RAW_CONTROL_GROUND_TRUTH)
    result = pytester.runpytest(*BASE, *REPORTS, *xdist)
    result.assert_outcomes(passed=3)
    run = _every_report(pytester.path / "out")
    references = {d["id"]: d["reference"] for d in run["documents"]}
    assert references == {"a.png": "x\ufffdy", "b.png": "be\x1bll\x07\tend", "c.png": "ok"}
    assert "\u241b" in (pytester.path / "out" / "report.html").read_text(encoding="utf-8")  # ESC as its mark


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_run_whose_only_dataset_cannot_be_loaded_still_writes_every_report(pytester: pytest.Pytester,
                                                                            xdist: list[str]) -> None:
    """No document was scored, but the run has something to say: every report is written, names the dataset and its
    error, and the run fails."""
    if xdist:
        pytest.importorskip("xdist")
    _three_documents(pytester.path, RAW_CONTROL_GROUND_TRUTH.replace('"ok"}}', '"ok"},}'))  # a trailing comma
    result = pytester.runpytest(*BASE, *REPORTS, *xdist)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    run = _every_report(pytester.path / "out")
    assert run["documents"] == [] and run["summary"] == []
    assert [error["dataset"] for error in run["collection_errors"]] == [str(pytester.path / "invoices")]
    assert "invalid JSON at line 1" in run["collection_errors"][0]["message"]
    result.stdout.fnmatch_lines(["no document was scored in this run", "dataset * could not be loaded *"])
    assert "no threshold was checked" not in result.stdout.str() and "rates are micro" not in result.stdout.str()
    assert "could not be loaded" in (pytester.path / "out" / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
def test_a_lone_surrogate_in_a_ground_truth_key_errors_that_document_only(pytester: pytest.Pytester,
                                                                         xdist: list[str]) -> None:
    """The reported case: a ``\\ud800`` escape and a raw control character in the ground truth's *keys* (the image
    names). No file name can hold a lone surrogate, and ``os.lstat`` raised on it: the whole dataset failed to load
    and the run file held 0 of 3 documents. Now that document errors with one sentence, the others are scored."""
    if xdist:
        pytest.importorskip("xdist")
    _three_documents(pytester.path, '{"a.png": {"full_text": "xy"}, "b\x1b.png": {"full_text": "bell end"}, '
                                    '"c\\ud800.png": {"full_text": "ok"}}')
    result = pytester.runpytest(*BASE, *REPORTS, *xdist)
    result.assert_outcomes(passed=1, errors=2)
    assert "UnicodeEncodeError" not in result.stdout.str() and "\x1b" not in result.stdout.str()
    run = _every_report(pytester.path / "out")
    assert run["collection_errors"] == []
    assert run["replaced_characters"] == 2  # the id and the image path: the same with and without xdist
    outcomes = {d["id"]: (d["outcome"], d.get("message")) for d in run["documents"]}
    assert outcomes["a.png"] == ("passed", None)
    assert outcomes["b\x1b.png"][0] == "error" and "does not exist" in outcomes["b\x1b.png"][1]
    images, truth = pytester.path / "invoices" / "images", pytester.path / "invoices" / "ground_truth.json"
    assert outcomes["c\ufffd.png"] == ("error", f"replay: image path '{images}/c\\ud800.png' cannot name a file on "
                                                f"this system: it holds a lone surrogate U+D800 ({truth}: c\\ud800.png)")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["no-xdist", "xdist-2"])
@pytest.mark.parametrize("entry", [
    '{"full_text": "ok\\ud800", "thresholds": {"cer\\ud800\\u001b": 0.1}}',  # an unknown threshold metric
    '{"full_text": ["ok\\ud800\\u0007"]}',  # text that is not a string
    '{"full_text": "ok", "tags": ["\\ud800", 7]}',  # tags that are not all strings
    '{"full_text": "ok", "schema": {"type": "\\ud800\\u001b"}}',  # a schema that is not valid
    '{"full_text": "ok", "tasks": [{"\\ud800": 1}]}',  # a task with an unknown key
])
def test_a_malformed_entry_with_a_lone_surrogate_errors_that_document_only(pytester: pytest.Pytester,
                                                                           xdist: list[str], entry: str) -> None:
    """The reported case: a 3-document replay run whose third entry is malformed and holds a lone surrogate and
    control characters. The entry's problem stopped the whole dataset: the run file held 0 of 3 documents. Now that
    document's test errors with the one sentence naming the file and the entry, the other two are scored, and every
    report holds all three."""
    if xdist:
        pytest.importorskip("xdist")
    _three_documents(pytester.path, '{"a.png": {"full_text": "xy"}, "b.png": {"full_text": "bell\\u0007 end"}, '
                                    f'"c.png": {entry}}}')
    result = pytester.runpytest(*BASE, *REPORTS, *xdist)
    result.assert_outcomes(passed=2, errors=1)
    output = result.stdout.str()
    assert "Traceback" not in output and "\x1b" not in output and "\x07" not in output
    run = _every_report(pytester.path / "out")
    assert run["collection_errors"] == []
    outcomes = {d["id"]: (d["outcome"], d.get("message") or "") for d in run["documents"]}
    assert sorted(outcomes) == ["a.png", "b.png", "c.png"]
    assert outcomes["a.png"][0] == outcomes["b.png"][0] == "passed"
    truth = pytester.path / "invoices" / "ground_truth.json"
    assert outcomes["c.png"][0] == "error" and outcomes["c.png"][1].startswith(f"replay: {truth}, entry 'c.png'")
    assert "[ground truth:" not in outcomes["c.png"][1]  # the sentence names the file and the entry already
    assert [row["evaluated"] for row in run["summary"]] == [2]
