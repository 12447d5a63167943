"""CSV (one row per document x engine) and Markdown (for $GITHUB_STEP_SUMMARY) reports."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.gating import compare_runs, parse_gate
from pytest_ocrmetrics.reporting.csv_report import csv_columns, render_csv, write_csv
from pytest_ocrmetrics.reporting.markdown import md_escape, render_markdown, write_markdown


def _run() -> dict:
    return make_run([
        make_doc("a.png", {"cer": 0.0714, "field_f1": 0.5}, message='multi\nline, "quoted"'),
        make_doc("b.png", {"cer": 0.2}, engine="trocr", outcome="failed"),
        make_doc("c.png", {}, outcome="error", hypothesis=None),
    ])


def test_csv_one_row_per_document_and_engine(tmp_path: Path) -> None:
    run = _run()
    path = write_csv(run, tmp_path / "sub" / "docs.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert csv_columns(run) == ["dataset", "engine", "id", "outcome", "elapsed_s", "cached", "confidence",
                                "cer", "field_f1", "message", "image", "nodeid"]
    assert [(r["id"], r["engine"], r["outcome"]) for r in rows] == [
        ("a.png", "tesseract", "passed"), ("b.png", "trocr", "failed"), ("c.png", "tesseract", "error")]
    assert float(rows[0]["cer"]) == 0.0714  # raw fractions, full precision
    assert rows[1]["field_f1"] == "" and rows[2]["cer"] == ""  # missing values are empty cells
    assert rows[0]["message"] == 'multi\nline, "quoted"'  # quoting round-trips
    assert rows[0]["cached"] == "false"
    assert render_csv(run) == path.read_text(encoding="utf-8")


def test_markdown_plain_run() -> None:
    text = render_markdown(_run())
    lines = text.splitlines()
    # a failed pytest run says so even without gates or a baseline
    assert lines[:3] == ["## ❌ OCR metrics: failed", "", "**FAILED**: 1 failed and 1 errored of 3 documents"]
    assert "3 documents · 2 engines · 1 dataset · normalization nfc (grapheme, whitespace words)" in lines
    assert "| Engine | Dataset | Docs | Evaluated | Passed | Failed | CER ↓ | Field F1 ↑ |" in lines
    assert "| tesseract | receipts | 2 | 1 | 1 | 0 (+1 errors) | 7.14% | 50.00% |" in lines
    assert "### Worst documents (3 of 3)" in lines
    assert lines[lines.index("### Worst documents (3 of 3)") + 4].startswith("| 1 | b.png | trocr / receipts | failed | 20.00%")
    # every table row has the same number of cells as its header
    for block in text.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if rows:
            assert len({row.count(" | ") for row in rows if not row.startswith("|-")}) == 1, block


def test_markdown_gates_and_baseline() -> None:
    old = [make_doc(f"d{i}", {"cer": 0.02}) for i in range(6)]
    new = [make_doc(f"d{i}", {"cer": 0.02 if i != 2 else 0.2}) for i in range(1, 6)] + [make_doc("fresh", {"cer": 0.01})]
    baseline, run = make_run(old), make_run(new)
    comparison = compare_runs(baseline, run, ["cer:0.005"], resamples=50)
    text = render_markdown(run, comparison=comparison, gates=[parse_gate("cer<=0.1"), "field_f1>=0.5"])
    lines = text.splitlines()
    assert lines[0] == "## ❌ OCR metrics: failed"
    assert "| ✅ | `cer<=0.1` | tesseract / receipts | 4.83% |" in lines
    assert "| ⚠️ | `field_f1>=0.5` | matched nothing | - |" in lines
    # aggregates compare the 5 documents in both runs: (4 x 2 + 20) / 5 = 5.60 %
    assert any(line.startswith("| ❌ regression | CER ↓ | tesseract / receipts | 2.00% | 5.60% | +3.60 pp |")
               for line in lines)
    assert ("**1 document(s) got worse than the baseline beyond tolerance** (1 document metric(s)) (listed, not "
            "failed: the aggregates decide; `--ocr-document-regressions=fail` fails them):") in lines
    assert "- receipts/d2 (tesseract): CER ↓ 2.00% → 20.00% (+18.00 pp)" in lines
    assert "<details><summary>1 new document(s), not in the baseline</summary>" in lines
    assert "- receipts/d0 (tesseract): not in this run" in lines
    # the summary table carries the delta, bold for a regression
    assert "| tesseract | receipts | 6 | 6 | 6 | 0 | **4.83% (+3.60 pp)** |" in lines


def test_markdown_improvements_and_passing_verdict(tmp_path: Path) -> None:
    old = [make_doc(f"d{i}", {"cer": 0.10}) for i in range(4)]
    new = [make_doc(f"d{i}", {"cer": 0.02}) for i in range(4)]
    comparison = compare_runs(make_run(old), make_run(new), ["cer:0.005"], resamples=20)
    path = write_markdown(make_run(new), tmp_path / "summary.md", comparison=comparison)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("## ✅ OCR metrics: passed")
    assert "<details><summary>5 improvement(s) beyond tolerance: the baseline can be updated</summary>" in text
    assert "- tesseract / receipts (aggregate): CER ↓ 10.00% → 2.00% (-8.00 pp)" in text


def test_markdown_escapes_untrusted_text() -> None:
    run = make_run([make_doc("*bold*|<script>x</script>`tick`", {"cer": 0.1}, engine="e|[x](http://a)")])
    text = render_markdown(run)
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "\\[x\\](http" in text  # no link: the brackets are escaped
    row = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 6  # 5 cells: the pipes in the id and engine are escaped
    assert md_escape("a_b*c`d|e[f]~g\\h <i>") == "a\\_b\\*c\\`d\\|e\\[f\\]\\~g\\\\h &lt;i&gt;"
    assert md_escape("two\nlines") == "two lines"


def test_markdown_verdict_interrupted_and_skipped_entries() -> None:
    run = make_run([make_doc("a.png", {"cer": 0.0})])
    assert render_markdown(run).splitlines()[:3] == ["## ✅ OCR metrics: passed", "", "**passed**: 1 document, none failed"]
    run["interrupted"] = True
    run["skipped_entries"] = [{"dataset": "receipts", "source": f"labels.txt:{n}", "reason": "no tab|*"}
                              for n in range(1, 13)]
    lines = render_markdown(run).splitlines()
    assert lines[0] == "## ⚠️ OCR metrics: interrupted" and lines[2].startswith("**INTERRUPTED (the results so far)**")
    assert "<details><summary>12 ground-truth entries skipped while loading (not checked)</summary>" in lines
    assert "- receipts: labels.txt:10: no tab\\|\\*" in lines and "- receipts: labels.txt:11: no tab\\|\\*" not in lines
    assert "- … and 2 more (see the JSON run file)" in lines


def test_markdown_lists_datasets_that_could_not_be_loaded() -> None:
    run = make_run([make_doc("a.png", {"cer": 0.0})])
    run["collection_errors"] = [{"dataset": "broken", "message": "ground_truth.json line 3: not JSON\nmore"}]
    lines = render_markdown(run).splitlines()
    assert lines[:3] == ["## ❌ OCR metrics: failed", "", "**FAILED**: 1 dataset could not be loaded"]
    assert "- **broken**: ground\\_truth.json line 3: not JSON more" in lines
