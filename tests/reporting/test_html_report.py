"""The HTML report parsed as HTML: structure, escaping of untrusted OCR text, offline-only resources, images."""

from __future__ import annotations

import base64
import io
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from ocr_run_factory import make_doc, make_run, validate

from pytest_ocrmetrics.gating import compare_runs, evaluate_gates, parse_gate
from pytest_ocrmetrics.reporting.assets import CSS, JS, csp_hash
from pytest_ocrmetrics.reporting.highlight import highlight_words
from pytest_ocrmetrics.reporting.html import image_data_url, render_html, write_html
from pytest_ocrmetrics.reporting.markdown import render_markdown
from tests.helpers.html import Page

XSS = "<script>alert(1)</script>"




def _png(path: Path, size: tuple[int, int] = (60, 80), mode: str = "RGB") -> Path:
    Image = pytest.importorskip("PIL.Image")
    Image.new(mode, size, "white" if mode != "1" else 1).save(path)
    return path


def _run(tmp_path: Path | None = None) -> dict[str, Any]:
    docs = [
        make_doc("receipt-001.jpg", {"cer": 0.02, "wer": 0.1}, reference="TOTAL 12.50 RM", hypothesis="TOTAL 12.S0",
                 confusions=[("5", "S", 2), ("R", "", 1)]),
        make_doc("receipt-002.jpg", {"cer": 0.20, "wer": 0.5}, outcome="failed", message="CER 20.00% above 5.00%"),
        make_doc("receipt-003.jpg", {"cer": 0.05, "wer": 0.2}),
        make_doc("page.tif", {"cer": 0.01, "wer": 0.05}, dataset="pages", engine="trocr"),
        make_doc("broken.png", {}, outcome="error", message="engine crashed", reference="x", hypothesis=None),
    ]
    return make_run(docs)


def test_structure_summary_documents_and_details() -> None:
    run = _run()
    validate(run)
    page_text = render_html(run)
    page = Page(page_text)
    assert page_text.startswith("<!DOCTYPE html>")
    # one summary row per engine x dataset, sortable header buttons, metric columns from the registry titles
    assert len(run["summary"]) == 2
    summary = page.text("summary-table")
    assert "tesseract" in summary and "trocr" in summary and "CER" in summary and "WER" in summary
    assert len(page.find("td", class_="num metric")) == 2 * 2  # 2 rows x (cer, wer)
    assert len(page.find("button", class_="sort")) >= 8
    # controls: statistic switch, CSV export, one checkbox per hideable column
    assert page.find("select", class_="stat-select")
    assert page.find("button", class_="action", **{"data-action": "export"})
    assert len(page.find("input", class_="col-toggle", **{"data-table": "summary-table"})) == 4 + 2  # docs/passed/failed/errors + metrics
    # documents worst first: failed and errored documents (scored before unscored), then CER from worst to best
    ids = [a["href"] for a in page.find("a", class_="doc-link")]
    assert ids == [f"#doc-{i}" for i in range(1, 6)]
    details_text = [page.text(f"doc-{i}") for i in range(1, 6)]
    order = [next(doc for doc in ("broken.png", "receipt-002.jpg", "receipt-003.jpg", "receipt-001.jpg", "page.tif")
                  if doc in text) for text in details_text]
    assert order == ["receipt-002.jpg", "broken.png", "receipt-003.jpg", "receipt-001.jpg", "page.tif"]
    # a detail view: reference and output side by side, words classified, legend present
    assert len(page.find("details", class_="doc")) == 5
    assert "Reference (ground truth)" in details_text[3] and "Output (tesseract)" in details_text[3]
    assert page.find("span", class_="w-fuzzy", title="\u2248 12.S0")
    assert page.find("span", class_="w-unmatched")
    assert "no output recorded" in details_text[1] and "engine crashed" in details_text[1]
    assert "unmatched" in page.text("details") and "fuzzy" in page.text("details")
    # confusion heatmap: rows reference, columns output, cells coloured by frequency
    assert "tesseract / receipts: 3 confused characters" in page.text("confusions")
    assert page.find("td", class_="cell heat-9", title="reference '5' read as 'S': 2x")
    assert page.find("td", class_="cell heat-5", title="reference 'R' read as '': 1x")


def test_untrusted_text_is_escaped_everywhere() -> None:
    evil = '"><img src=x onerror=alert(2)>'
    docs = [
        make_doc(f"{XSS}.png", {"cer": 0.5}, engine=f"eng{evil}", dataset="</script><iframe src=//evil>",
                 reference=f"ref {XSS} & </style>", hypothesis=f"{XSS} <b onmouseover=alert(3)>bold</b> {evil}",
                 message=f"failed: {XSS}", confusions=[("<", ">", 3), ("</script>", "&", 1)], image=f"{evil}.png"),
    ]
    run = make_run(docs)
    baseline = make_run([dict(docs[0], metrics={"cer": 0.1}, counts={"cer": {"errors": 10, "reference_length": 100}})])
    comparison = compare_runs(baseline, run, ["cer:0.01"], resamples=20)
    gates = evaluate_gates([parse_gate("cer<=0.1")], run["summary"])
    text = render_html(run, comparison=comparison, gates=gates, title=f"title {XSS}")
    page = Page(text)
    # exactly one script element (the report's own) and no element created from the OCR text
    assert len(page.find("script")) == 1
    assert not page.find("iframe")
    assert all("onerror" not in attrs and "onmouseover" not in attrs for _, attrs in page.tags)
    assert [a.get("src", "")[:5] for a in page.find("img")] in ([], ["data:"])
    # the raw closing tag occurs once: the report's own </script>
    assert text.count("</script>") == 1 and text.count("<script>") == 1
    # and the text is still shown as text
    assert f"{XSS} <b onmouseover=alert(3)>bold</b>" in page.text("doc-1")
    assert "failed: <script>alert(1)</script>" in page.text("doc-1")
    assert "</script><iframe src=//evil>" in page.text("summary-table")


def test_self_contained_offline_with_hash_based_csp() -> None:
    text = render_html(_run())
    page = Page(text)
    assert not page.find("link") and not page.find("iframe")
    assert all(not (a.get("src") or "data:").startswith(("http", "//")) for _, a in page.tags)
    assert all(not (a.get("href") or "#").startswith(("http", "//")) for _, a in page.tags)
    assert "url(" not in CSS and "@import" not in CSS and "@font-face" not in CSS
    assert "fetch(" not in JS and "XMLHttpRequest" not in JS
    (meta,) = page.find("meta", **{"http-equiv": "Content-Security-Policy"})
    csp = meta["content"] or ""
    assert "default-src 'none'" in csp and "img-src data:" in csp
    # the policy allows exactly the inline script and stylesheet the page carries
    script = "".join(page.script_text)
    assert script == JS and csp_hash(script) in csp and csp_hash(CSS) in csp
    assert "unsafe-inline" not in csp
    # no inline style attributes (the CSP would block them): colours come from classes
    assert all("style" not in attrs for _, attrs in page.tags)


def test_comparison_adds_deltas_regressions_new_and_missing() -> None:
    old = [make_doc(f"d{i}", {"cer": 0.02}) for i in range(6)]
    new = [make_doc(f"d{i}", {"cer": 0.02 if i != 2 else 0.2}) for i in range(1, 6)] + [make_doc("fresh", {"cer": 0.01})]
    baseline, run = make_run(old), make_run(new)
    comparison = compare_runs(baseline, run, ["cer:0.005"], resamples=50)
    page = Page(render_html(run, comparison=comparison))
    assert page.text("verdict") == ("FAILED: 1 aggregate regression against the baseline, 1 document worse beyond "
                                    "tolerance (listed, not failed)")
    base = page.text("baseline")
    assert "regression" in base and "cer:0.005" in base
    assert "1 document metric(s) regressed beyond tolerance" in base
    assert "d0 (tesseract): not in this run" in base and "fresh (tesseract): not in the baseline" in base
    # the summary cell carries the aggregate delta, the regressed document its own red delta
    assert page.find("span", class_="delta worse")
    assert page.text("doc-1").startswith("#1d2")  # the regressed document comes first
    assert "+18.00 pp" in page.text("doc-1") and "baseline" in page.text("doc-1")
    # gated aggregates in the open table, ungated ones (none here) would be collapsed
    assert "Aggregates with a tolerance" in base and not page.find("table", id="baseline-ungated-table")
    fresh = next(f"doc-{i}" for i in range(1, 7) if page.text(f"doc-{i}").startswith(f"#{i}fresh"))
    assert "not in the baseline (a new document)" in page.text(fresh)


def test_regressed_documents_come_first_and_ungated_aggregates_collapse() -> None:
    old = [make_doc(f"d{i}", {"cer": 0.3 - i / 100, "wer": 0.5}) for i in range(5)]
    new = [make_doc(f"d{i}", {"cer": 0.3 - i / 100 + (0.02 if i == 4 else 0), "wer": 0.5}) for i in range(5)]
    run = make_run(new)
    comparison = compare_runs(make_run(old), run, ["cer:0.01"], resamples=20)
    assert [r.document for r in comparison.regressions] == ["d4"]
    page = Page(render_html(run, comparison=comparison))
    order = [page.text(f"doc-{i}")[len(f"#{i}"):][:2] for i in range(1, 6)]
    assert order == ["d4", "d0", "d1", "d2", "d3"]  # then worst CER first
    assert "regressed against the baseline" in page.text("documents")
    assert page.find("table", id="baseline-table") and page.find("table", id="baseline-ungated-table")
    assert "1 aggregate without a tolerance" in page.text("baseline")
    # unchanged aggregates show no "±0" noise in the summary table
    assert "\u00b10" not in page.text("summary-table")


def test_gates_accept_expressions_and_results() -> None:
    run = _run()
    page = Page(render_html(run, gates=["cer<=0.05", parse_gate("wer<=0.01 [engine=trocr]"), "field_f1>=0.9"]))
    gates = page.text("gates")
    assert "Gates: 1 passed, 3 failed" in gates  # cer fails for tesseract, wer fails for trocr, field_f1 unmatched
    assert "matched no engine x dataset" in gates
    assert page.text("verdict") == "FAILED: 1 failed and 1 errored of 5 documents, 3 of 4 gates failed"


def test_big_runs_cap_details_and_rows() -> None:
    run = make_run([make_doc(f"doc{i:03d}", {"cer": i / 1000}) for i in range(30)])
    page = Page(render_html(run, max_details=5, max_rows=12))
    assert len(page.find("details", class_="doc")) == 5
    assert "25 more documents have no detail view here" in page.text("details")
    assert len(page.find("a", class_="doc-link")) == 5
    assert "Only the first 12 of 30 documents are listed" in page.text("documents")
    # worst first: the detail views are the five highest CERs
    assert "doc029" in page.text("doc-1") and "doc025" in page.text("doc-5")


def test_empty_run_renders() -> None:
    page = Page(render_html(make_run([])))
    assert "No engine x dataset was scored" in page.text("summary")
    assert not page.find("details")


# ------------------------------------------------------------------------------------------------------ images


def _decode(url: str) -> Any:
    Image = pytest.importorskip("PIL.Image")
    header, data = url.split(",", 1)
    return header, Image.open(io.BytesIO(base64.b64decode(data)))


def test_images_embedded_tiff_converted_large_scaled_missing_noted(tmp_path: Path) -> None:
    Image = pytest.importorskip("PIL.Image")
    Image.new("1", (200, 100), 1).save(tmp_path / "bilevel.tif", compression="group4")
    Image.new("RGB", (3000, 2000), "white").save(tmp_path / "big.jpg")
    Image.new("L", (2400, 60), 255).save(tmp_path / "line.tif")
    header, image = _decode(image_data_url(tmp_path / "bilevel.tif")[0] or "")
    assert header == "data:image/png;base64" and image.size == (200, 100)
    header, image = _decode(image_data_url(tmp_path / "big.jpg")[0] or "")
    assert header == "data:image/jpeg;base64" and image.size[0] * image.size[1] <= 400_000
    assert abs(image.size[0] / image.size[1] - 1.5) < 0.01
    _, image = _decode(image_data_url(tmp_path / "line.tif")[0] or "")
    assert image.size == (1600, 40)  # long text lines keep a legible height
    assert image_data_url(tmp_path / "nope.png") == (None, f"image not found: {tmp_path / 'nope.png'}")
    (tmp_path / "corrupt.png").write_bytes(b"not an image")
    url, note = image_data_url(tmp_path / "corrupt.png")
    assert url is None and note is not None and note.startswith("image could not be read (corrupt.png)")

    run = make_run([make_doc("a", {"cer": 0.1}, image="bilevel.tif"), make_doc("b", {"cer": 0.0}, image="gone.png"),
                    make_doc("c", {"cer": 0.0}, image=None)])
    page = Page(render_html(run, image_root=tmp_path))
    (img,) = page.find("img", class_="thumb")
    (embedded,) = page.find("img", id=str(img["data-image"]))
    assert (embedded["src"] or "").startswith("data:image/png;base64,")
    assert "image not found" in page.text("doc-2") and "no image recorded" in page.text("doc-3")
    # images beyond max_images are left out with a note
    assert "image left out" in Page(render_html(run, image_root=tmp_path, max_images=0)).text("doc-1")


def test_images_without_pillow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    png = _png(tmp_path / "page.png")
    Image = pytest.importorskip("PIL.Image")
    Image.new("L", (10, 10)).save(tmp_path / "page.tif")
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL now raises ImportError
    url, note = image_data_url(png)
    assert note is None and url == "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()
    assert image_data_url(tmp_path / "page.tif") == (None, "install Pillow to show .tif images in the report (page.tif)")


def test_page_image_embedded_once_for_every_engine(tmp_path: Path) -> None:
    _png(tmp_path / "page.png", size=(120, 160))
    run = make_run([make_doc("page.png", {"cer": 0.1 * k}, engine=f"engine{k}", image="page.png") for k in range(3)])
    text = render_html(run, image_root=tmp_path)
    page = Page(text)
    thumbs = page.find("img", class_="thumb")
    # three engines read one document: one side-by-side view with one thumbnail
    assert len(page.find("details", class_="doc paired")) == 1
    assert len(thumbs) == 1 and {t["data-image"] for t in thumbs} == {"image-1"}
    assert text.count("data:image/") == 1
    assert str(page.find("img", id="image-1")[0]["src"]).startswith("data:image/")
    # two documents of one engine showing the same page: one copy of the image, two references
    run = make_run([make_doc(name, {"cer": 0.1}, image="page.png") for name in ("a", "b")])
    text = render_html(run, image_root=tmp_path)
    thumbs = Page(text).find("img", class_="thumb")
    assert len(thumbs) == 2 and {t["data-image"] for t in thumbs} == {"image-1"}
    assert text.count("data:image/") == 1


def test_verdict_always_shown_interrupted_marked_and_skipped_entries_listed() -> None:
    run = make_run([make_doc("a.png", {"cer": 0.0}), make_doc("b.png", {"cer": 0.1})])
    assert Page(render_html(run)).text("verdict") == "passed: 2 documents, none failed"
    run["interrupted"] = True
    run["skipped_entries"] = [{"dataset": "receipts", "source": f"labels.txt:{n}", "reason": "no tab <b>"}
                              for n in range(1, 61)]
    page = Page(render_html(run))
    assert page.text("verdict").startswith("INTERRUPTED")
    assert page.find("span", id="verdict", class_="verdict interrupted")
    skipped = page.text("skipped")
    assert "Skipped ground-truth entries (60)" in skipped and "labels.txt:50: no tab <b>" in skipped
    assert "labels.txt:51:" not in skipped and "10 more not listed here" in skipped


def test_datasets_that_could_not_be_loaded_fail_the_verdict_and_are_listed() -> None:
    run = make_run([make_doc("a.png", {"cer": 0.0})])
    run["collection_errors"] = [{"dataset": "broken<b>", "message": "ground_truth.json: not JSON"}]
    page = Page(render_html(run))
    assert page.text("verdict") == "FAILED: 1 dataset could not be loaded"
    assert "broken<b>" in page.text("collection-errors") and "not JSON" in page.text("collection-errors")


def test_a_baseline_that_matched_nothing_fails_the_verdict_and_says_why() -> None:
    run = make_run([make_doc("a.png", {"cer": 0.0})])
    comparison = compare_runs(make_run([make_doc("b.png", {"cer": 0.0})]), run, ["cer:0.01"], resamples=10)
    assert comparison.matched_nothing
    verdict = Page(render_html(run, comparison=comparison)).text("verdict")
    assert verdict == "FAILED: the baseline matched no document of this run: nothing was compared"
    assert render_markdown(run, comparison=comparison).splitlines()[0] == "## ❌ OCR metrics: failed"


def test_write_html_creates_parent_folders(tmp_path: Path) -> None:
    path = write_html(_run(), tmp_path / "out" / "report.html")
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


# --------------------------------------------------------------------------------------------------- highlight


def test_highlight_words_uses_word_match_classes_and_keeps_layout() -> None:
    reference = "TOTAL  12.50 RM\nThank you -- come again"
    hypothesis = "total 12.S0\n\tThank yov come again !"
    ref, hyp = highlight_words(reference, hypothesis)
    assert "".join(t.text for t in ref) == reference and "".join(t.text for t in hyp) == hypothesis
    kinds = {t.text: t.kind for t in ref + hyp if t.kind != "space"}
    assert kinds["TOTAL"] == kinds["total"] == "exact"  # case-insensitive by default
    assert kinds["12.50"] == kinds["12.S0"] == "fuzzy"
    assert kinds["you"] == kinds["yov"] == "fuzzy"
    assert kinds["RM"] == "unmatched"
    assert kinds["--"] == kinds["!"] == "ignored"  # punctuation-only words are not matched
    assert next(t.partner for t in hyp if t.text == "12.S0") == "12.50"
    # options are passed through: case-sensitive, no fuzzy matching
    ref2, hyp2 = highlight_words(reference, hypothesis, case_sensitive=True, max_distance=0)
    kinds2 = {t.text: t.kind for t in ref2 + hyp2 if t.kind != "space"}
    assert kinds2["TOTAL"] == kinds2["12.50"] == "unmatched"


def test_detail_view_passes_word_options() -> None:
    run = make_run([make_doc("a", {"cer": 0.1}, reference="Total 10", hypothesis="TOTAL 1O")])
    assert Page(render_html(run)).find("span", class_="w-exact")
    strict = Page(render_html(run, case_sensitive=True, max_distance=0))
    assert not strict.find("span", class_="w-exact") and not strict.find("span", class_="w-fuzzy")
    assert re.search(r"w-unmatched", render_html(run, case_sensitive=True, max_distance=0))


def test_a_run_file_recorded_with_a_word_distance_above_the_range_still_renders() -> None:
    """Run files of before the 0..5 word-match range may hold a larger distance: the report colours words at 5 instead
    of failing (the distance is refused only where a user types it)."""
    run = make_run([make_doc("a", {"cer": 0.1}, reference="one two three", hypothesis="one twx three")])
    run["normalization"]["word_match"] = {"distance": 7, "case_sensitive": False, "ignore_punctuation": True}
    page = render_html(run)
    assert "twx" in page
