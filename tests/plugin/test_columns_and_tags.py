"""The terminal table's metric columns (``--ocr-columns``), the ``evaluated`` count, and results per document tag.

The licence-plate evaluator (specification documents 003 and 004) reports exact-match accuracy, normalized edit
distance and edit-distance similarity with an ``evaluated`` count; in the plugin these are columns to choose, and
documents' ground-truth ``tags`` give per-category rows: ``summary_by_tag`` in the run file, a second table with
``--ocr-summary=full``, a *Per tag* section in the HTML report.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_ocrmetrics.gating import validate_run
from pytest_ocrmetrics.reporting.terminal import render_summary
from pytest_ocrmetrics.runfile.results import RunResults
from tests.helpers.plugin import DOCS, make_dataset

TAGGED = {
    "doc_001.png": {**DOCS["doc_001.png"], "tags": ["printed", "invoice"]},
    "doc_002.png": {**DOCS["doc_002.png"], "tags": ["printed", "printed"]},  # a repeated tag counts once
    "doc_003.png": DOCS["doc_003.png"],  # no tags: in no tag row
}


def _run(pytester: pytest.Pytester, *args: str, docs: dict[str, Any] | None = None) -> pytest.RunResult:
    make_dataset(pytester.path, TAGGED if docs is None else docs)
    return pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cer:0.1", *args)


def _header(lines: list[str], first: str) -> list[str]:
    return next(line.split() for line in lines if line.split()[:1] == [first])


def test_chosen_columns_show_exact_match_ned_and_similarity(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    result = _run(pytester, "--ocr-columns=exact_match, ned,edit_similarity,cer:p95", "--ocr-json=run.json",
                  *plugin_args)
    assert result.ret == 0, result.stdout.str()
    lines = result.stdout.lines
    header = _header(lines, "engine")
    assert header[-5:] == ["Exact", "NED", "EditSim", "CER", "p95"]  # "CER p95": the title and its statistic
    assert "WER" not in header and "evaluated" in header
    row = next(line.split() for line in lines if line.startswith("replay"))
    assert row[2:4] == ["3", "3"]  # docs, evaluated
    summary = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["summary"][0]
    assert row[-4] == "33.33%"  # one document of three read exactly
    assert summary["metrics"]["exact_match"]["micro"] == pytest.approx(1 / 3)
    assert row[-3] == f"{summary['metrics']['ned']['micro'] * 100:.2f}%"
    assert row[-2] == f"{summary['metrics']['edit_similarity']['micro'] * 100:.2f}%"
    assert row[-1] == f"{summary['metrics']['cer']['p95'] * 100:.2f}%"


def test_default_columns_are_unchanged(pytester: pytest.Pytester) -> None:
    result = _run(pytester)
    assert result.ret == 0, result.stdout.str()
    header = _header(result.stdout.lines, "engine")
    assert header[-8:] == ["CER", "CER", "mean", "CER", "p95", "WER", "field", "F1"]
    assert "Exact" not in header


def test_metrics_asked_for_get_a_default_column(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    """``--ocr-metric=crr,word_f1`` computes metrics no run computes unasked: the default table shows them after
    the headline columns (the always-computed ones, NED, exact match, ..., stay out unless chosen)."""
    result = _run(pytester, "--ocr-metric=word_f1,crr", "--ocr-json=run.json", *plugin_args)
    assert result.ret == 0, result.stdout.str()
    header = _header(result.stdout.lines, "engine")
    assert header[-10:] == ["CER", "CER", "mean", "CER", "p95", "WER", "field", "F1", "CRR", "WordF1"]
    assert "NED" not in header and "Exact" not in header
    summary = json.loads((pytester.path / "run.json").read_text(encoding="utf-8"))["summary"][0]
    row = next(line.split() for line in result.stdout.lines if line.startswith("replay"))
    assert row[-2] == f"{summary['metrics']['crr']['micro'] * 100:.2f}%"
    assert row[-1] == f"{summary['metrics']['word_f1']['micro'] * 100:.2f}%"


def test_ini_columns_and_a_metric_not_computed(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nocr_columns = cer\n    crr\n")
    result = _run(pytester)
    assert result.ret == 0, result.stdout.str()
    assert _header(result.stdout.lines, "engine")[-2:] == ["CER", "CRR"]
    row = next(line.split() for line in result.stdout.lines if line.startswith("replay"))
    assert row[-1] == "-"
    result.stdout.fnmatch_lines(["not computed in this run: crr (add --ocr-metric=crr, or the data it needs)"])


@pytest.mark.parametrize(("value", "message"), [
    ("cer,exact_mach", "*--ocr-columns 'exact_mach': unknown metric 'exact_mach' (did you mean 'exact_match'?)*"),
    ("ned:p99", "*--ocr-columns 'ned:p99': unknown statistic 'p99' (did you mean 'p95'?); choose one of: micro, "
                "mean, median, p90, p95, min, max, e.g. --ocr-columns=ned:p95*"),
    ("ned:meen", "*--ocr-columns 'ned:meen': unknown statistic 'meen' (did you mean 'mean'?)*"),
])
def test_a_mistyped_column_is_a_usage_error(pytester: pytest.Pytester, value: str, message: str) -> None:
    result = _run(pytester, f"--ocr-columns={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_evaluated_counts_passed_and_failed(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    docs = {name: {k: v for k, v in entry.items() if k != "thresholds"} for name, entry in TAGGED.items()}
    result = _run(pytester, "--ocr-json=run.json", *plugin_args, docs=docs)  # doc_003 fails cer <= 0.1
    assert result.ret == 1
    run = validate_run(json.loads((pytester.path / "run.json").read_text(encoding="utf-8")))
    row = run["summary"][0]
    assert (row["documents"], row["evaluated"], row["passed"], row["failed"]) == (3, 3, 2, 1)


@pytest.mark.xdist_transport
def test_tag_rows_in_run_file_terminal_and_html(pytester: pytest.Pytester, plugin_args: list[str]) -> None:
    result = _run(pytester, "--ocr-json=run.json", "--ocr-html=report.html", "--ocr-summary=full",
                  "--ocr-columns=exact_match,cer", "--ocr-markdown=summary.md", *plugin_args)
    assert result.ret == 0, result.stdout.str()
    markdown = (pytester.path / "summary.md").read_text(encoding="utf-8")
    assert "| Engine | Dataset | Docs | Evaluated | Passed | Failed |" in markdown
    assert "<details><summary>Per document tag (2 rows; a document with several tags counts in each)</summary>" in markdown
    assert "| printed | replay / invoices | 2 | 2 | 2 | 0 |" in markdown
    run = validate_run(json.loads((pytester.path / "run.json").read_text(encoding="utf-8")))
    rows = {row["tag"]: row for row in run["summary_by_tag"]}
    assert list(rows) == ["invoice", "printed"]
    assert (rows["printed"]["documents"], rows["printed"]["evaluated"], rows["invoice"]["documents"]) == (2, 2, 1)
    assert rows["printed"]["metrics"]["exact_match"]["micro"] == 0.5
    assert rows["invoice"]["metrics"]["cer"]["micro"] == pytest.approx(1 / 28)
    assert "ci_low" in rows["printed"]["metrics"]["cer"]  # the summary's bootstrap setting
    assert {doc["id"]: doc.get("tags") for doc in run["documents"]} == {
        "doc_001.png": ["printed", "invoice"], "doc_002.png": ["printed", "printed"], "doc_003.png": None}
    lines = result.stdout.lines
    start = lines.index("per document tag (a document with several tags counts in each):")
    assert lines[start + 1].split()[:4] == ["tag", "engine", "dataset", "docs"]
    assert lines[start + 3].split()[:4] == ["invoice", "replay", "invoices", "1"]
    assert lines[start + 4].split()[:5] == ["printed", "replay", "invoices", "2", "2"]
    assert lines[start + 4].split()[-2] == "50.00%"
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert '<section id="tags"><h2>Per tag</h2>' in html
    assert 'data-label="evaluated"' in html  # the summary table's evaluated count
    assert "<td>printed</td><td>replay</td><td>invoices</td>" in html


def test_short_summary_has_no_tag_table(pytester: pytest.Pytester) -> None:
    result = _run(pytester)
    assert result.ret == 0, result.stdout.str()
    assert not any(line.startswith("per document tag") for line in result.stdout.lines)


def test_hostile_tags_cannot_drive_the_terminal_or_the_html(pytester: pytest.Pytester) -> None:
    docs = {"doc_002.png": {**DOCS["doc_002.png"], "tags": ["\x1b[31mred\u202e", "<script>x</script>"]}}
    result = _run(pytester, "--ocr-json=run.json", "--ocr-html=report.html", "--ocr-summary=full", docs=docs)
    assert result.ret == 0, result.stdout.str()
    text = result.stdout.str()
    assert "\x1b[31m" not in text and "\u202e" not in text
    assert "␛[31mred⟨RLO⟩" in text
    html = (pytester.path / "report.html").read_text(encoding="utf-8")
    assert "<script>x</script>" not in html and "&lt;script&gt;x&lt;/script&gt;" in html
    validate_run(json.loads((pytester.path / "run.json").read_text(encoding="utf-8")))


def _doc(doc_id: str, outcome: str, cer: float, tags: list[str] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"engine": "e", "dataset": "d", "id": doc_id, "nodeid": doc_id, "outcome": outcome,
                           "metrics": {"cer": cer}, "counts": {"cer": {"errors": cer * 10, "reference_length": 10}}}
    if tags is not None:
        doc["tags"] = tags
    return doc


def test_summary_by_tag_aggregates_like_the_summary() -> None:
    docs = [_doc("a", "passed", 0.0, ["x", "y"]), _doc("b", "failed", 0.5, ["x"]), _doc("c", "skipped", 0.9, ["x"]),
            _doc("d", "passed", 0.2)]
    results = RunResults()
    rows = results.summary_by_tag(docs, resamples=0)
    assert [row["tag"] for row in rows] == ["x", "y"]
    assert {k: v for k, v in rows[0].items() if k != "tag"} == results.summary(docs[:3], resamples=0)[0]
    assert (rows[0]["documents"], rows[0]["evaluated"], rows[0]["skipped"]) == (3, 2, 1)
    assert rows[0]["metrics"]["cer"]["micro"] == 0.25 and rows[1]["metrics"]["cer"]["micro"] == 0.0
    assert results.summary_by_tag([docs[3]], resamples=0) == []


def test_render_summary_of_an_older_run_without_evaluated() -> None:
    row = {"engine": "e", "dataset": "d", "documents": 1, "passed": 1, "failed": 0, "errors": 0, "filtered": 0,
           "skipped": 0, "skipped_entries": 0, "cache_hits": 0, "truncated": 0, "metrics": {"ned": {"micro": 0.25}}}
    lines = render_summary({"summary": [row], "documents": [], "normalization": {}}, columns=[("ned", "micro")])
    assert lines[2].split() == ["e", "d", "1", "-", "1", "0", "0", "0", "25.00%"]


def test_merged_shards_keep_the_tag_rows(pytester: pytest.Pytester) -> None:
    from pytest_ocrmetrics.runfile.merge import merge_runs

    make_dataset(pytester.path, TAGGED)  # once: the replay engine's fingerprint is the same in every shard
    runs = []
    for name, shard in (("whole.json", []), ("s1.json", ["--ocr-shard=1/2"]), ("s2.json", ["--ocr-shard=2/2"])):
        result = pytester.runpytest("--ocr-dataset=invoices", "--ocr-engine=replay:preds", "--ocr-max=cer:0.1",
                                    f"--ocr-json={name}", "--ocr-bootstrap=50", *shard)
        assert result.ret == 0, result.stdout.str()
        runs.append((name, json.loads((pytester.path / name).read_text(encoding="utf-8"))))
    merged = validate_run(merge_runs(runs[1:]))
    assert merged["summary_by_tag"] == runs[0][1]["summary_by_tag"]
    assert [row["tag"] for row in merged["summary_by_tag"]] == ["invoice", "printed"]
