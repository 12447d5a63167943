"""The HTML report: one self-contained file that works offline (``--ocr-html=PATH``, ``ocrmetrics report --html``).

What it shows, top to bottom:

- a summary table per engine x dataset (sort by any column, hide columns, switch statistic, export CSV),
- gate results and the baseline comparison (aggregate deltas with bootstrap intervals, regressed, new and missing
  documents) when given,
- page-level facts (olmOCR-bench style) when the run has them: the benchmark's headline with its interval and the
  pass rates per fact type and per JSONL file, then every fact (failing first) with its explanation and the output
  excerpt where the match was sought, filterable by type and by passed / failed / flaky,
- charts per engine x dataset (inline SVG, :mod:`~pytest_ocrmetrics.reporting.charts`): the main metric's
  distribution over documents, baseline against this run per document with a comparison, the main metric per tag,
- a character confusion heatmap per engine x dataset,
- every document in a sortable table, worst first, and the worst ``max_details`` documents expandable to a
  side-by-side view of reference and output with exact / fuzzy / unmatched words highlighted, the page image as a
  thumbnail (each page image is embedded once and referenced by every engine's view of it) and the document's
  baseline deltas; in a dataset read by two or more engines, one view per document holds every engine's reading
  side by side, with the deltas against the first engine (:func:`engine_order`),
- the verdict (failed and errored documents, datasets that could not be loaded, gates, regressions; interrupted
  runs are marked), the datasets that could not be loaded and the label-file lines skipped while loading.

OCR output is untrusted input: every piece of text from the run (output, ground truth, ids, engine and dataset
names, messages, paths) goes through :func:`html.escape`, with control characters shown as marks (``␀``, ``␛``,
``⟨RLO⟩``: :mod:`~pytest_ocrmetrics.core.safe_text`), no inline JSON is emitted, and a Content-Security-Policy
allows only the report's own script and stylesheet (by hash) and ``data:`` images, so nothing is fetched.

>>> from pytest_ocrmetrics.reporting.html import render_html
>>> page = render_html({"schema": "pytest-ocrmetrics/1", "created": "2025-01-01T00:00:00Z",
...     "environment": {"python": "3.11", "platform": "Linux", "plugin_version": "0.1.0", "engines": {}},
...     "normalization": {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace"},
...     "documents": [], "summary": []})
>>> page.startswith("<!DOCTYPE html>")
True
"""

from __future__ import annotations

from pytest_ocrmetrics.reporting.common import engine_order
from pytest_ocrmetrics.reporting.html.facts import MAX_FACT_TEXT
from pytest_ocrmetrics.reporting.html.page import render_html, write_html
from pytest_ocrmetrics.reporting.html.thumbnails import image_data_url

__all__ = ["render_html", "write_html", "image_data_url", "engine_order", "MAX_FACT_TEXT"]
