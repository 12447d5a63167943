"""Reports are total: encodable text, no raw control characters, formula-safe CSV, files replaced atomically, one
failing report never costs the others (the pieces; tests/plugin/test_reports_survive.py runs whole sessions)."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.core import safe_text
from pytest_ocrmetrics.core.safe_text import (
    clean_run,
    clean_text,
    sanitize_run,
    show_controls,
    write_text_atomic,
    xml_safe,
)
from pytest_ocrmetrics.gating import validate_run
from pytest_ocrmetrics.gating.verdict import Verdict
from pytest_ocrmetrics.reporting.csv_report import render_csv
from pytest_ocrmetrics.reporting.files import ReportError, write_reports
from pytest_ocrmetrics.reporting.html import render_html
from pytest_ocrmetrics.reporting.markdown import render_markdown
from pytest_ocrmetrics.reporting.terminal import render_summary, render_table
from pytest_ocrmetrics.scoring.diff import display_width

FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466"  # one cluster, two columns


# ------------------------------------------------------------------------------------------------- encodable


def test_clean_text_replaces_and_counts_surrogates_and_non_characters() -> None:
    text = "a\ud800b\udfffc\ufffe\uffff\ufdd0\ufdef\U0001FFFE\U0010FFFF" + FAMILY + "\ufffd\ufdcf\ufdf0"
    cleaned, count = clean_text(text)
    assert count == 8
    assert cleaned == "a\ufffdb\ufffdc" + "\ufffd" * 6 + FAMILY + "\ufffd\ufdcf\ufdf0"
    cleaned.encode("utf-8")
    assert clean_text("plain") == ("plain", 0)


def test_clean_run_cleans_keys_and_nested_values_and_keeps_clean_values_as_they_are() -> None:
    run = {"documents": [{"id": "x\udcff", "fields": {"k\ud800": ["v\ufffe", 1.5, None]}}], "n": 3}
    cleaned, count = clean_run(run)
    assert count == 3
    assert cleaned == {"documents": [{"id": "x\ufffd", "fields": {"k\ufffd": ["v\ufffd", 1.5, None]}}], "n": 3}
    assert run["documents"][0]["id"] == "x\udcff"  # a copy: the input is untouched
    clean = {"documents": [{"id": "x"}]}
    assert clean_run(clean)[0] is clean


def test_sanitize_run_records_the_count_once() -> None:
    run = make_run([make_doc("a\ud800.png", {"cer": 0.1}, reference="r\udc00")])
    first = sanitize_run(run)
    assert first["replaced_characters"] == 3 and first["documents"][0]["id"] == "a\ufffd.png"  # id, nodeid, text
    assert sanitize_run(first)["replaced_characters"] == 3
    assert "replaced_characters" not in sanitize_run(make_run([make_doc("a.png", {"cer": 0.1})]))
    validate_run(first)


def test_xml_safe_escapes_what_xml_cannot_hold_like_pytest() -> None:
    assert xml_safe("ocr.e\x1b.d\x00\ud800.cer") == "ocr.e#x1B.d#x00\ufffd.cer"
    assert xml_safe("tab\tok\n") == "tab\tok\n"


# --------------------------------------------------------------------------------------------------- visible


def test_show_controls_marks_controls_and_bidi_overrides() -> None:
    assert show_controls("\x00\x1b[1m\x07\x7f\x85\u202e\u2066") == "␀␛[1m␇␡⟨U+0085⟩⟨RLO⟩⟨LRI⟩"
    assert show_controls("a\nb\tc\r", keep="\n\t") == "a\nb\tc␍"
    assert show_controls("\u05e9\u200f " + FAMILY) == "\u05e9\u200f " + FAMILY  # marks and joiners are text


def test_csv_quotes_formula_like_text_but_keeps_numbers() -> None:
    docs = [make_doc(name, {"cer": -0.5 if name == "+1" else 0.25}, message=message)
            for name, message in (("=HYPERLINK(\"http://x\",\"y\")", "-1"), ("+1", "@SUM(A1)"), ("@cmd", "\tx"),
                                  ("-2", "\rx"), ("ok\x00\x1b", "line\nbreak"))]
    run = make_run(docs)
    text = render_csv(run)
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [r["id"] for r in rows] == ["'=HYPERLINK(\"http://x\",\"y\")", "'+1", "'@cmd", "'-2", "ok␀␛"]
    assert [r["message"] for r in rows] == ["'-1", "'@SUM(A1)", "'\tx", "␍x", "line\nbreak"]
    assert rows[1]["cer"] == "-0.5"  # a number, not text: left as it is
    assert "\x00" not in text and "\x1b" not in text


def test_markdown_and_html_show_marks_for_control_characters() -> None:
    run = make_run([make_doc("id\x00\x1b[31m\u202e.png", {"cer": 0.1}, reference="ref\x07", hypothesis="hyp\x1b",
                             message="boom\x00")])
    markdown = render_markdown(run)
    assert "id␀␛\\[31m⟨RLO⟩.png" in markdown
    page = render_html(run)
    for raw in ("\x00", "\x1b", "\x07", "\u202e"):
        assert raw not in markdown and raw not in page
    assert "id␀␛[31m⟨RLO⟩.png" in page and "ref␇" in page and "hyp␛" in page and "boom␀" in page


def test_terminal_table_aligns_clusters_and_marks_controls() -> None:
    rows = [[FAMILY, "1"], ["e\u0301", "2"], ["\u4e2d\u6587", "3"], ["a\x1bb\u202ec", "4"], ["\u0915\u094d\u0937", "5"],
            ["plain", "6"]]
    lines = render_table(["document", "n"], rows, right_from=1)
    assert len({display_width(line) for line in lines}) == 1  # every row ends in the same column
    assert lines[2].startswith(FAMILY + " ") and display_width(FAMILY) == 2  # printed whole, two columns
    assert lines[3].startswith("e\u0301 ") and display_width("e\u0301") == 1
    assert lines[5].startswith("a␛b⟨RLO⟩c ")
    assert all("\x1b" not in line and "\u202e" not in line for line in lines)


def test_terminal_confusions_show_marks_for_invisible_characters() -> None:
    from pytest_ocrmetrics.runfile.results import RunResults

    results = RunResults()
    results.add({"id": "a", "dataset": "d", "engine": "e", "metrics": {"cer": 0.5}, "elapsed_s": 0.0,
                 "counts": {"cer": {"errors": 5, "reference_length": 10}},
                 "confusions": [["\x00", "", 2], ["\u00a0", "\u202e", 1]]}, "passed")
    text = "\n".join(render_summary(results.to_run(plugin_version="0", pytest_version="0", resamples=0), mode="full"))
    assert "\u2400" in text and "\u27e8NBSP\u27e9" in text and "\u27e8RLO\u27e9" in text
    assert "\\x00" not in text and "\x00" not in text and "\u202e" not in text


def test_terminal_summary_says_interrupted_and_replaced_characters() -> None:
    run = sanitize_run(make_run([make_doc("a.png", {"cer": 0.1}, reference="\ud800")]))
    run["interrupted"] = True
    run["summary"][0].update(cache_hits=0, truncated=0, skipped_entries=0)  # as the plugin's results write them
    lines = render_summary(run)
    assert lines[0].startswith("INTERRUPTED: these are the results of the documents checked before")
    assert "1 character that cannot be written (lone surrogates, non-characters such as U+FFFE) replaced with " \
           "U+FFFD in every report" in lines


# ---------------------------------------------------------------------------------------------------- atomic


def test_write_text_atomic_replaces_and_keeps_permissions(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "report.txt"
    write_text_atomic(path, "one\ud800")
    assert path.read_text(encoding="utf-8") == "one\ufffd"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    path.chmod(0o640)
    write_text_atomic(path, "two")
    assert path.read_text(encoding="utf-8") == "two" and stat.S_IMODE(path.stat().st_mode) == 0o640
    assert os.listdir(path.parent) == ["report.txt"]


def test_write_text_atomic_failure_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run.json"
    path.write_text("previous", encoding="utf-8")

    def no_room(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safe_text.os, "replace", no_room)
    with pytest.raises(OSError, match="No space left"):
        write_text_atomic(path, "new")
    assert path.read_text(encoding="utf-8") == "previous"
    assert os.listdir(tmp_path) == ["run.json"]  # no temporary file left behind


def test_write_reports_writes_every_other_report_then_names_the_failed_ones(tmp_path: Path) -> None:
    run = make_run([make_doc("a\ud800.png", {"cer": 0.1}, reference="x\x00\ufffe")])
    (tmp_path / "report.html").mkdir()  # the HTML report cannot be written: a folder is in the way
    with pytest.raises(ReportError) as caught:
        write_reports(run, Verdict(), json_path=tmp_path / "run.json", html=tmp_path / "report.html",
                      csv=tmp_path / "docs.csv", markdown=tmp_path / "sub" / "summary.md")
    problems = caught.value.problems
    assert len(problems) == 1 and problems[0].startswith(
        f"could not write the HTML report {tmp_path / 'report.html'}: a folder; ")
    assert set(caught.value.written) == {"json", "csv", "markdown"}
    written = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert written["replaced_characters"] == 3 and written["documents"][0]["id"] == "a\ufffd.png"
    assert written["documents"][0]["reference"] == "x\x00\ufffd"  # the run file keeps control characters (escaped)
    assert "\\u0000" in (tmp_path / "run.json").read_text(encoding="utf-8")
