"""A file of many bad entries is summarised, not listed line by line (issue 20 A15): the first ten skipped entries
are warned and recorded in full, then one warning and one entry carry the count of the rest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ocrmetrics.datasets import DatasetWarning, load_dataset
from pytest_ocrmetrics.datasets.base import MAX_SKIPPED_LISTED, SkippedEntry, capped_skipped
from tests.helpers.plugin import PNG_1X1

pytest_plugins = ["pytester"]

BAD_LINES = 100_000


def _plates(root: Path, bad_lines: int) -> Path:
    """A label-file dataset: one good line, then ``bad_lines`` lines without a tab."""
    plates = root / "plates"
    (plates / "images").mkdir(parents=True)
    (plates / "images" / "a.png").write_bytes(PNG_1X1)
    (plates / "labels.txt").write_text("images/a.png\tAB12\n" + "no tab on this line\n" * bad_lines,
                                       encoding="utf-8")
    return plates


def test_a_label_file_of_many_bad_lines_warns_ten_and_the_count(tmp_path: Path) -> None:
    plates = _plates(tmp_path, BAD_LINES)
    with pytest.warns(DatasetWarning) as record:
        dataset = load_dataset(plates / "labels.txt")
    label_file = plates / "labels.txt"
    messages = [str(w.message) for w in record]
    assert len(messages) == MAX_SKIPPED_LISTED + 1 == 11
    assert messages[0] == f"{label_file}:2: line skipped: no tab between image path and text " \
                          "(expected '<image path>\\t<text>')"
    more = BAD_LINES - MAX_SKIPPED_LISTED
    assert messages[-1].startswith(f"{label_file}: and {more:,} more lines skipped (the first at {label_file}:12: ")
    assert [s.source for s in dataset.skipped[:-1]] == [f"{label_file}:{n}" for n in range(2, 12)]
    assert dataset.skipped[-1].count == more and sum(s.count for s in dataset.skipped) == BAD_LINES
    assert [d.id for d in dataset] == ["images/a.png"]


def test_a_few_bad_lines_are_listed_one_by_one(tmp_path: Path) -> None:
    plates = _plates(tmp_path, MAX_SKIPPED_LISTED)
    with pytest.warns(DatasetWarning) as record:
        dataset = load_dataset(plates / "labels.txt")
    assert len(record) == MAX_SKIPPED_LISTED
    assert all(s.count == 1 for s in dataset.skipped) and len(dataset.skipped) == MAX_SKIPPED_LISTED


def test_other_loaders_skipped_entries_are_capped_the_same_way() -> None:
    entries = [SkippedEntry(f"f.jsonl:{n}", f"bad line {n}") for n in range(1, 26)]
    capped = capped_skipped(entries, "f.jsonl", noun="line")
    assert capped[:-1] == entries[:MAX_SKIPPED_LISTED]
    assert capped[-1] == SkippedEntry("f.jsonl", "and 15 more lines skipped (the first at f.jsonl:11: bad line 11)",
                                      count=15)


@pytest.mark.xdist_transport
def test_the_run_file_holds_the_first_entries_and_the_count(pytester: pytest.Pytester,
                                                            plugin_args: list[str]) -> None:
    _plates(pytester.path, BAD_LINES)
    preds = pytester.path / "preds"
    preds.mkdir()
    (preds / "a.txt").write_text("AB12", encoding="utf-8")
    result = pytester.runpytest("--ocr-dataset=plates", "--ocr-engine=replay:preds", "--ocr-json=run.json",
                                "--ocr-html=r.html", "--ocr-markdown=r.md", *plugin_args)
    result.assert_outcomes(passed=1)
    output = result.stdout.str()
    warned = [line for line in result.stdout.lines if "labels.txt:" in line and "skipped" in line]
    assert len(warned) <= MAX_SKIPPED_LISTED + 1, output[-3000:]
    assert f"and {BAD_LINES - MAX_SKIPPED_LISTED:,} more lines skipped" in output
    assert f"{BAD_LINES} ground-truth entries were skipped while loading" in output
    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert f"Skipped ground-truth entries ({BAD_LINES:,})" in html
    markdown = (pytester.path / "r.md").read_text(encoding="utf-8")
    assert f"{BAD_LINES:,} ground-truth entries skipped while loading" in markdown
    run = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))
    assert run["summary"][0]["skipped_entries"] == BAD_LINES
    entries = run["skipped_entries"]
    assert len(entries) == MAX_SKIPPED_LISTED + 1
    summary = [e for e in entries if e.get("count", 1) != 1]  # sorted by source: the file's own name comes first
    assert len(summary) == 1 and summary[0]["count"] == BAD_LINES - MAX_SKIPPED_LISTED
    assert summary[0]["reason"].startswith(f"and {BAD_LINES - MAX_SKIPPED_LISTED:,} more lines skipped")


def test_the_reports_count_every_skipped_entry_not_the_listed_ones() -> None:
    from pytest_ocrmetrics.reporting.common import skipped_count

    entries = [{"dataset": "d", "source": "l.txt:2", "reason": "no tab"},
               {"dataset": "d", "source": "l.txt", "reason": "and 99,990 more lines skipped", "count": 99_990}]
    assert skipped_count(entries) == 99_991
