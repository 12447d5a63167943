"""The terminal summary: alignment by display width and readable confusions."""

from __future__ import annotations

from pytest_ocrmetrics.reporting.common import format_value
from pytest_ocrmetrics.reporting.terminal import render_summary, render_table
from pytest_ocrmetrics.runfile.results import RunResults
from pytest_ocrmetrics.scoring.diff import display_width


def _record(doc_id: str, dataset: str, cer: float, confusions: list[list[object]]) -> dict[str, object]:
    return {"id": doc_id, "dataset": dataset, "engine": "e", "metrics": {"cer": cer},
            "counts": {"cer": {"errors": int(cer * 10), "reference_length": 10}}, "elapsed_s": 0.0,
            "confusions": confusions}


def test_columns_align_by_display_width_with_cjk() -> None:
    lines = render_table(["plate", "CER"], [["京A12345", "1.00%"], ["AB123", "10.00%"]], right_from=1)
    widths = {display_width(line) for line in lines}
    assert len(widths) == 1, lines  # every line equally wide on screen, although 京 is one character of width 2


def test_summary_and_full_mode() -> None:
    results = RunResults()
    results.add(_record("a.png", "車牌", 0.1, [["\n", " ", 3], ["O", "0", 2]]), "passed")
    results.add(_record("b.png", "車牌", 0.3, [["l", "", 1]]), "failed")
    lines = render_summary(results.to_run(plugin_version="0", pytest_version="0", resamples=0), mode="full")
    text = "\n".join(lines)
    assert "20.00%" in text  # micro: (1 + 3) / 20
    assert "worst 2 documents by CER" in text and text.index("b.png") < text.index("a.png")
    assert "↵ (line break)" in text and "␣ (space)" in text and "(none)" in text
    header, rule, row = lines[0], lines[1], lines[2]
    assert display_width(header) == display_width(rule) == display_width(row)


def test_rates_show_as_percentages() -> None:
    assert format_value("cer", 0.0714) == "7.14%"
    assert format_value("cer", None) == "-"


def test_run_file_text_round_trips_one_line_per_document() -> None:
    import json

    import pytest

    from pytest_ocrmetrics.reporting.files import dump_run

    run = {"schema": "pytest-ocrmetrics/1", "environment": {"engines": {}}, "summary": [{"engine": "e"}],
           "documents": [{"id": "a", "reference": "é\n<x>"}, {"id": "b"}]}
    text = dump_run(run)
    assert json.loads(text) == run
    lines = text.splitlines()
    assert '{"id": "a", "reference": "é\\n<x>"},' in lines and '{"id": "b"}' in lines  # one line per document
    assert json.loads(dump_run({})) == {}
    with pytest.raises(ValueError):
        dump_run({"documents": [{"cer": float("nan")}]})
