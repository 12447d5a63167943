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
``⟨RLO⟩``: :mod:`~pytest_ocrmetrics.reporting.safe_text`), no inline JSON is emitted, and a Content-Security-Policy
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

import base64
import html
import io
import math
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from pytest_ocrmetrics.gating import AggregateDelta, Comparison, GateResult
from pytest_ocrmetrics.metrics.registry import METRICS, regression
from pytest_ocrmetrics.metrics.word_match import MAX_DISTANCE
from pytest_ocrmetrics.reporting import charts
from pytest_ocrmetrics.reporting.assets import CSS, JS, csp_hash
from pytest_ocrmetrics.reporting.common import (
    VERDICT_ORDER,
    GateLike,
    RunVerdict,
    collection_errors,
    direction_arrow,
    doc_key,
    format_delta,
    format_value,
    gate_results,
    primary_metric,
    run_metrics,
    run_verdict,
    skipped_count,
    skipped_entries,
    worst_first,
    engine_order,
)
from pytest_ocrmetrics.reporting.highlight import Token, highlight_words
from pytest_ocrmetrics.reporting.images import ImageFinder
from pytest_ocrmetrics.reporting.omnidoc import omnidoc_blocks_html
from pytest_ocrmetrics.reporting.safe_text import show_controls, write_text_atomic

__all__ = ["render_html", "write_html", "image_data_url", "engine_order"]

STATISTIC_CHOICES = ("micro", "mean", "median", "p90", "p95", "min", "max")
MAX_TEXT_CHARS = 20_000  # per text in a detail view
MAX_CHANGE_ROWS = 500  # per table of document regressions / improvements
SUMMARY_METRICS = 4  # metrics named on a closed detail view's summary line
CONFUSION_PAIRS = 24  # most frequent (reference, output) pairs per confusion heatmap
MAX_SKIPPED_ENTRIES = 50  # skipped label-file lines listed (all are counted)
MAX_FACT_TEXT = 1_000  # characters of a fact's explanation or excerpt shown in the facts table
MAX_CHART_POINTS = 400  # documents drawn as points in a baseline scatter; past that, a grid counts them all
MAX_TAG_BARS = 30  # tags in a chart of the main metric per tag (worst first)
_RAW_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                    ".webp": "image/webp"}
_MAX_RAW_IMAGE_BYTES = 1_500_000


def e(value: Any) -> str:
    """Escape anything for HTML text and attribute values; control characters other than line breaks and tabs are
    shown as marks (:func:`~pytest_ocrmetrics.reporting.safe_text.show_controls`), never written raw."""
    return html.escape(show_controls("" if value is None else str(value), keep="\n\t"), quote=True)


def _num(value: float | None) -> str:
    """A number for a ``data-sort`` attribute (empty when absent)."""
    if value is None or (isinstance(value, float) and (math.isnan(value) or math.isinf(value))):
        return ""
    return repr(float(value))


def _title(metric: str) -> str:
    return METRICS[metric].title if metric in METRICS else metric


def _delta_class(verdict: str | None) -> str:
    return {"regression": "worse", "improvement": "better"}.get(verdict or "", "")


ChangeClasses = Mapping[tuple[str, str, str, str], str]


def _change_classes(comparison: Comparison | None) -> ChangeClasses:
    """``worse`` / ``better`` per (dataset, engine, document, metric) that moved beyond tolerance, built once."""
    if comparison is None:
        return {}
    classes = {(i.dataset, i.engine, str(i.document), i.metric): "better" for i in comparison.improvements}
    classes.update({(r.dataset, r.engine, str(r.document), r.metric): "worse" for r in comparison.regressions})
    return classes


# ------------------------------------------------------------------------------------------------------ images


def image_data_url(path: Path, *, max_pixels: int = 400_000, max_side: int = 1600) -> tuple[str | None, str | None]:
    """A thumbnail of the image at ``path`` as a ``data:`` URL, or ``(None, note)`` saying why there is none.

    With Pillow installed any format it reads (TIFF included) is scaled down to at most ``max_pixels`` pixels and
    ``max_side`` pixels on its longer side (so a long text-line image stays legible) and stored as PNG
    (bilevel and palette scans, which compress well that way) or JPEG; without Pillow, small PNG/JPEG/GIF/WebP files
    are embedded unchanged and other formats get a note.
    """
    if not path.is_file():
        return None, f"image not found: {path}"
    try:
        from PIL import Image, ImageOps
    except ImportError:
        mime = _RAW_IMAGE_TYPES.get(path.suffix.lower())
        if mime is None:
            return None, f"install Pillow to show {path.suffix or 'this'} images in the report ({path.name})"
        if path.stat().st_size > _MAX_RAW_IMAGE_BYTES:
            return None, f"image too large to embed without Pillow to scale it ({path.name})"
        return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}", None
    try:
        with Image.open(path) as opened:
            opened.seek(0)
            image: Image.Image = ImageOps.exif_transpose(opened) or opened
            lossless = image.mode in ("1", "P")
            if image.mode not in ("1", "L", "RGB"):
                image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
                if image.mode == "RGBA":
                    background = Image.new("RGB", image.size, "white")
                    background.paste(image, mask=image.getchannel("A"))
                    image = background
            image = image.copy()
            width, height = image.size
            scale = min(1.0, math.sqrt(max_pixels / max(1, width * height)), max_side / max(1, width, height))
            if scale < 1.0:
                image = image.resize((max(1, round(width * scale)), max(1, round(height * scale))),
                                     Image.Resampling.LANCZOS)
            buffer = io.BytesIO()
            if lossless:
                image.save(buffer, "PNG", optimize=True)
                mime = "image/png"
            else:
                image.save(buffer, "JPEG", quality=72, optimize=True)
                mime = "image/jpeg"
    except Exception as exc:  # a corrupt or exotic file must not break the report
        return None, f"image could not be read ({path.name}): {type(exc).__name__}: {exc}"
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}", None


def _resolve_image(doc: Mapping[str, Any], finder: ImageFinder) -> Path:
    """Where the document's image is on this machine (see :class:`~pytest_ocrmetrics.reporting.images.ImageFinder`),
    else the most likely place, which the report's note names."""
    return finder.resolve(str(doc["image"]), str(doc.get("dataset", "")))


def _missing_images_note(images: Mapping[Path, tuple[str | None, str | None, str | None]]) -> str:
    """A note when page images were not found: the run file was made elsewhere; ``--image-root`` says where they are."""
    missing = sum(1 for path, (image_id, _, _) in images.items() if image_id is None and not path.is_file())
    if not missing:
        return ""
    noun = "page image was" if missing == 1 else "page images were"
    return (f'<p class="note" id="images-missing">{missing} of {len(images)} {noun} not found on this machine; '
            f'give the folder that holds the datasets with ocrmetrics report --image-root DIR.</p>')


# ------------------------------------------------------------------------------------------------------ pieces


def _header(run: Mapping[str, Any], title: str, verdict: RunVerdict) -> str:
    env = run.get("environment", {}) or {}
    norm = run.get("normalization", {}) or {}
    engines = env.get("engines", {}) or {}
    engine_bits = []
    for name, info in engines.items():
        details = ", ".join(f"{k}={v}" for k, v in (info or {}).items()
                            if k not in ("name", "engine") and v not in (None, "") and not isinstance(v, (dict, list)))
        engine_bits.append(f"{name} ({details})" if details else str(name))
    items = [
        ("created", run.get("created")),
        ("normalization", f"{norm.get('name')} · unit {norm.get('unit')} · tokenizer {norm.get('tokenizer')}"),
        ("engines", "; ".join(engine_bits) or "-"),
        ("pytest-ocrmetrics", env.get("plugin_version")),
        ("python", env.get("python")),
        ("pytest", env.get("pytest_version")),
        ("platform", env.get("platform")),
    ]
    meta = "".join(f"<span>{e(k)} <b>{e(v)}</b></span>" for k, v in items if v)
    css = {"passed": "ok", "failed": "fail"}.get(verdict.status, "interrupted")
    badge = f' <span class="verdict {css}" id="verdict">{e(verdict.text)}</span>'
    return f'<header class="top"><h1>{e(title)}{badge}</h1><div class="meta">{meta}</div></header>'


def _metric_cell(metric: str, stats: Mapping[str, Any] | None, delta_html: str = "") -> str:
    if not stats:
        return '<td class="num metric" data-sort=""><span class="v">-</span></td>'
    attrs = []
    for stat in STATISTIC_CHOICES:
        value = stats.get(stat)
        if value is not None:
            attrs.append(f'data-{stat}="{_num(value)}" data-{stat}-text="{e(format_value(metric, value))}"')
    tooltip = " · ".join(
        f"{stat} {format_value(metric, stats[stat])}" for stat in ("mean", "median", "p95", "min", "max")
        if stats.get(stat) is not None
    )
    if stats.get("ci_low") is not None and stats.get("ci_high") is not None:
        tooltip += f" · CI {format_value(metric, stats['ci_low'])}..{format_value(metric, stats['ci_high'])}"
    if stats.get("n") is not None:
        tooltip += f" · n={stats['n']}"
    micro = stats.get("micro")
    return (f'<td class="num metric" data-sort="{_num(micro)}" {" ".join(attrs)} title="{e(tooltip)}">'
            f'<span class="v">{e(format_value(metric, micro))}</span>{delta_html}</td>')


def _column_toolbar(table_id: str, headers: Sequence[str], *, start: int = 0) -> str:
    boxes = "".join(
        f'<label><input type="checkbox" class="col-toggle" data-table="{e(table_id)}" data-col="{i}" checked> '
        f'{e(label)}</label>'
        for i, label in enumerate(headers) if i >= start
    )
    return f"<fieldset><legend>columns</legend>{boxes}</fieldset>"


def _summary_section(run: Mapping[str, Any], metrics: list[str], comparison: Comparison | None) -> str:
    rows = run.get("summary", []) or []
    aggregates = {(a.engine, a.dataset, a.metric): a for a in comparison.aggregates} if comparison else {}
    count_columns = [("documents", "Docs"), ("evaluated", "Evaluated"), ("passed", "Passed"), ("failed", "Failed"),
                     ("errors", "Errors"), ("skipped", "Skipped"), ("filtered", "Filtered")]
    count_columns = [c for c in count_columns if c[0] in ("documents", "passed", "failed")
                     or any(row.get(c[0]) for row in rows)]
    headers = ["Engine", "Dataset"] + [label for _, label in count_columns] + [_title(m) for m in metrics]
    head = ['<th data-label="engine"><button type="button" class="sort">Engine</button></th>',
            '<th data-label="dataset"><button type="button" class="sort">Dataset</button></th>']
    head += [f'<th class="num" data-label="{e(key)}"><button type="button" class="sort">{e(label)}</button></th>'
             for key, label in count_columns]
    head += [
        f'<th class="num metric" data-metric="{e(m)}" data-label="{e(m)} (micro)" title="{e(METRICS[m].description)}">'
        f'<button type="button" class="sort">{e(_title(m))} <span class="dir">{direction_arrow(m)} '
        f'<span class="stat">micro</span></span></button></th>'
        for m in metrics
    ]
    body = []
    for row in rows:
        engine, dataset = str(row.get("engine")), str(row.get("dataset"))
        cells = [f'<td data-sort="{e(engine)}">{e(engine)}</td>', f'<td data-sort="{e(dataset)}">{e(dataset)}</td>']
        cells += [f'<td class="num" data-sort="{_num(row.get(key))}">{e(row.get(key, "-"))}</td>'
                  for key, _ in count_columns]
        for metric in metrics:
            delta_html = ""
            agg = aggregates.get((engine, dataset, metric))
            if agg is not None and (agg.delta != 0 or agg.verdict != "unchanged" and agg.verdict != "ungated"):
                ci = (f", {int(round(agg.level * 100))}% CI {format_delta(metric, agg.interval[0])}.."
                      f"{format_delta(metric, agg.interval[1])}" if agg.interval else "")
                delta_html = (f'<span class="delta {_delta_class(agg.verdict)}" '
                              f'title="baseline {e(format_value(metric, agg.old))} over {agg.n} paired documents{e(ci)}; '
                              f'{e(agg.verdict)}">{e(format_delta(metric, agg.delta))}</span>')
            cells.append(_metric_cell(metric, (row.get("metrics") or {}).get(metric), delta_html))
        body.append("<tr>" + "".join(cells) + "</tr>")
    stat_options = "".join(f'<option value="{s}">{s}</option>' for s in STATISTIC_CHOICES)
    toolbar = (
        '<div class="toolbar">'
        f'<label>statistic <select class="stat-select" data-table="summary-table">{stat_options}</select></label>'
        '<button type="button" class="action" data-action="export" data-table="summary-table" '
        'data-filename="ocr-summary.csv">Export CSV</button>'
        f'{_column_toolbar("summary-table", headers, start=2)}</div>'
    )
    delta_note = (" Small numbers under a value are the change against the baseline over the documents in both runs."
                  if comparison else "")
    note = ('<p class="note">micro: corpus value (summed errors / summed reference length for rates); mean, median, '
            'p90, p95, min, max over documents. \u2193 lower is better, \u2191 higher is better. Hover a value for '
            f'its spread and confidence interval.{delta_note}</p>')
    empty = "" if rows else '<p class="note">No engine x dataset was scored in this run.</p>'
    return (f'<section id="summary"><h2>Summary per engine and dataset</h2>{note}{toolbar}<div class="scroll">'
            f'<table class="data sortable" id="summary-table"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>{empty}</section>')


def _tags_section(run: Mapping[str, Any], metrics: list[str]) -> str:
    """The summary's rows per document tag (the run's ``summary_by_tag``); empty when no document has tags."""
    rows = run.get("summary_by_tag") or []
    if not rows:
        return ""
    counts = [("documents", "Docs"), ("evaluated", "Evaluated"), ("passed", "Passed"), ("failed", "Failed")]
    head = "".join(f"<th>{label}</th>" for label in ("Tag", "Engine", "Dataset"))
    head += "".join(f'<th class="num">{label}</th>' for _, label in counts)
    head += "".join(f'<th class="num metric" title="{e(METRICS[m].description)}">{e(_title(m))} '
                    f'{direction_arrow(m)}</th>' for m in metrics)
    body = []
    for row in rows:
        cells = [f"<td>{e(row.get(key, '-'))}</td>" for key in ("tag", "engine", "dataset")]
        cells += [f'<td class="num">{e(row.get(key, "-"))}</td>' for key, _ in counts]
        cells += [_metric_cell(m, (row.get("metrics") or {}).get(m)) for m in metrics]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return ('<section id="tags"><h2>Per tag</h2><p class="note">The summary over the documents carrying each tag of '
            'their ground truth (a document with several tags counts in each); micro values.</p><div class="scroll">'
            f'<table class="data" id="tags-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            '</table></div></section>')


def _tag_bars(run: Mapping[str, Any], documents: Sequence[Mapping[str, Any]], engine: str, dataset: str,
              metric: str) -> list[charts.Bar]:
    """The main metric per tag for one engine x dataset: the micro value of the run's ``summary_by_tag`` rows, else
    (a run file without them) the mean over the documents carrying each tag."""
    rows = [row for row in run.get("summary_by_tag") or () if isinstance(row, Mapping)
            and str(row.get("engine")) == engine and str(row.get("dataset")) == dataset]
    bars = []
    for row in rows:
        stats = (row.get("metrics") or {}).get(metric) or {}
        value = stats.get("micro") if isinstance(stats, Mapping) else None
        if isinstance(value, (int, float)):
            bars.append(charts.Bar(str(row.get("tag")), float(value), int(row.get("evaluated") or stats.get("n") or 0)))
    if bars or rows:
        return bars
    values: dict[str, list[float]] = {}
    for doc in documents:
        tags = doc.get("tags")
        value = (doc.get("metrics") or {}).get(metric) if tags else None
        if isinstance(value, (int, float)):
            for tag in dict.fromkeys(str(t) for t in tags):
                values.setdefault(tag, []).append(float(value))
    return [charts.Bar(tag, math.fsum(v) / len(v), len(v)) for tag, v in values.items()]


def _charts_section(run: Mapping[str, Any], documents: Sequence[Mapping[str, Any]], metric: str | None,
                    comparison: Comparison | None, changes: ChangeClasses) -> str:
    """Per engine x dataset: the main metric's distribution over documents, baseline against this run per document
    (with a comparison) and the main metric per tag (when documents carry tags), as inline SVG
    (:mod:`~pytest_ocrmetrics.reporting.charts`); empty when no document has the metric."""
    if metric is None:
        return ""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in run.get("summary", []) or []:  # the summary's order first
        groups.setdefault((str(row.get("engine")), str(row.get("dataset"))), [])
    for doc in documents:
        value = (doc.get("metrics") or {}).get(metric)
        if doc.get("outcome") in ("passed", "failed") and isinstance(value, (int, float)) and not isinstance(value, bool):
            groups.setdefault((str(doc.get("engine")), str(doc.get("dataset"))), []).append(doc)
    stats_by_group = {(str(row.get("engine")), str(row.get("dataset"))): (row.get("metrics") or {}).get(metric) or {}
                      for row in run.get("summary", []) or []}
    status = {"worse": "regression", "better": "improvement"}
    blocks = []
    tagged = False
    for (engine, dataset), docs in groups.items():
        if not docs:
            continue
        label = f"{engine} / {dataset}"
        stats = stats_by_group.get((engine, dataset), {})
        markers = [(name, float(stats[key])) for name, key in (("median", "median"), ("corpus", "micro"))
                   if isinstance(stats.get(key), (int, float))]
        svgs = [charts.histogram_svg([float(d["metrics"][metric]) for d in docs], metric=metric, label=label,
                                     markers=markers)]
        if comparison is not None:
            points = []
            baseline = comparison.baseline_metrics
            moved = {key[2]: status[css] for key, css in changes.items()
                     if key[0] == dataset and key[1] == engine and key[3] == metric and css in status}
            for doc in docs:
                doc_id = str(doc["id"])
                old = (baseline.get((dataset, engine, doc_id)) or {}).get(metric)
                if isinstance(old, (int, float)):
                    points.append(charts.PairedPoint(doc_id, float(old), float(doc["metrics"][metric]),
                                                     moved.get(doc_id, "")))
            svgs.append(charts.scatter_svg(points, metric=metric, label=label, max_points=MAX_CHART_POINTS))
        bars = _tag_bars(run, docs, engine, dataset, metric)
        if bars:
            tagged = True
            svgs.append(charts.bars_svg(bars, metric=metric, label=label, max_bars=MAX_TAG_BARS))
        blocks.append(f'<div class="chart-group"><h3>{e(label)}</h3><div class="charts">{"".join(svgs)}</div></div>')
    if not blocks:
        return ""
    parts = [f"the distribution of {_title(metric)} over documents (dashed: the median and the corpus value)"]
    if comparison is not None:
        parts.append("baseline against this run per document: points on the shaded side of the diagonal got worse, "
                     "red ones beyond tolerance (hover a point for its document)")
    if tagged:
        parts.append(f"{_title(metric)} per tag")
    return (f'<section id="charts"><h2>Charts</h2><p class="note">Per engine and dataset: {e("; ".join(parts))}.'
            f'</p>{"".join(blocks)}</section>')


def _gates_section(results: Sequence[GateResult]) -> str:
    if not results:
        return ""
    rows = []
    for r in results:
        actual = format_value(r.gate.metric, r.actual) if r.actual is not None else "-"
        rows.append(
            f'<tr><td><span class="badge {e(r.status)}">{e(r.status)}</span></td><td><code>{e(r.gate.expression)}</code></td>'
            f'<td>{e(r.engine or "*")}</td><td>{e(r.dataset or "*")}</td>'
            f'<td class="num" data-sort="{_num(r.actual)}">{e(actual)}</td>'
            f'<td class="num" data-sort="{_num(r.threshold)}">{e(format_value(r.gate.metric, r.threshold))}</td>'
            f'<td>{e(r.message)}</td></tr>'
        )
    failed = sum(not r.passed for r in results)
    head = "".join(f'<th{cls}><button type="button" class="sort">{label}</button></th>' for label, cls in (
        ("Status", ""), ("Gate", ""), ("Engine", ""), ("Dataset", ""), ("Value", ' class="num"'),
        ("Threshold", ' class="num"'), ("Message", "")))
    return (f'<section id="gates"><h2>Gates: {len(results) - failed} passed, {failed} failed</h2><div class="scroll">'
            f'<table class="data sortable" id="gates-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f'</table></div></section>')


def _aggregate_row(agg: AggregateDelta) -> str:
    interval = (f"{format_delta(agg.metric, agg.interval[0])} .. {format_delta(agg.metric, agg.interval[1])} "
                f"({agg.level:.0%})" if agg.interval else "-")
    return (
        f'<tr><td data-sort="{VERDICT_ORDER[agg.verdict]}"><span class="badge {e(agg.verdict)}">{e(agg.verdict)}</span></td>'
        f'<td>{e(agg.engine)}</td><td>{e(agg.dataset)}</td><td>{e(_title(agg.metric))} {direction_arrow(agg.metric)}</td>'
        f'<td class="num" data-sort="{_num(agg.old)}">{e(format_value(agg.metric, agg.old))}</td>'
        f'<td class="num" data-sort="{_num(agg.new)}">{e(format_value(agg.metric, agg.new))}</td>'
        f'<td class="num" data-sort="{_num(agg.delta)}"><span class="delta {_delta_class(agg.verdict)}">'
        f'{e(format_delta(agg.metric, agg.delta))}</span></td><td>{e(interval)}</td>'
        f'<td class="num" data-sort="{agg.n}">{agg.n}</td><td>{e(agg.tolerance or "-")}</td></tr>'
    )


def _comparison_section(comparison: Comparison) -> str:
    parts = ['<section id="baseline"><h2>Against the baseline</h2>']
    tolerances = ", ".join(str(t) for t in comparison.tolerances.values()) or "none (nothing can fail)"
    sig = (f"an aggregate regression counts only when its {1 - comparison.significance:.0%} interval excludes zero"
           if comparison.significance is not None else "no significance setting: point estimates decide")
    parts.append(f'<p class="note">Tolerances: {e(tolerances)}; {e(sig)}; paired bootstrap over documents in both runs, '
                 f'{comparison.resamples} resamples, seed {comparison.seed}.</p>')
    for line in comparison.summary_lines(max_documents=0):
        if line.startswith("no "):  # "no tolerance given ..." / "no regression beyond tolerance ..."
            parts.append(f'<p class="note">{e(line)}</p>')
    head = "".join(f'<th{cls}><button type="button" class="sort">{label}</button></th>' for label, cls in (
        ("Verdict", ""), ("Engine", ""), ("Dataset", ""), ("Metric", ""), ("Baseline", ' class="num"'),
        ("Now", ' class="num"'), ("Delta", ' class="num"'), ("Interval of the delta", ""), ("n", ' class="num"'),
        ("Tolerance", "")))

    def aggregate_rows(aggregates: Iterable[Any]) -> str:
        return "".join(_aggregate_row(agg) for agg in sorted(aggregates, key=lambda a: VERDICT_ORDER[a.verdict]))

    gated = [a for a in comparison.aggregates if a.tolerance is not None]
    ungated = [a for a in comparison.aggregates if a.tolerance is None]
    if gated or not ungated:
        parts.append(f'<h3>Aggregates with a tolerance</h3><div class="scroll"><table class="data sortable" '
                     f'id="baseline-table"><thead><tr>{head}</tr></thead><tbody>{aggregate_rows(gated)}</tbody>'
                     f'</table></div>')
    if ungated:
        parts.append(f'<details{"" if gated else " open"}><summary><b>{len(ungated)} aggregate{"s" if len(ungated) != 1 else ""} without a tolerance'
                     f'</b> (shown for information, never fail)</summary><div class="scroll"><table class="data sortable" '
                     f'id="baseline-ungated-table"><thead><tr>{head}</tr></thead><tbody>{aggregate_rows(ungated)}'
                     f'</tbody></table></div></details>')

    def changes(title: str, items: Sequence[Any], open_: bool) -> str:
        if not items:
            return ""
        total = len(items)
        more = (f'<p class="note">{total - MAX_CHANGE_ROWS} more not listed here; '
                f'ocrmetrics compare --json lists all of them.</p>' if total > MAX_CHANGE_ROWS else "")
        items = items[:MAX_CHANGE_ROWS]
        body = "".join(
            f'<tr><td>{e(c.document)}</td><td>{e(c.engine)}</td><td>{e(c.dataset)}</td><td>{e(_title(c.metric))}</td>'
            f'<td class="num">{e(format_value(c.metric, c.old))}</td><td class="num">{e(format_value(c.metric, c.new))}</td>'
            f'<td class="num">{e(format_delta(c.metric, c.delta))}</td><td>{e(c.tolerance)}</td></tr>'
            for c in items
        )
        return (f'<details{" open" if open_ else ""}><summary><b>{total} {e(title)}</b></summary>'
                f'<div class="scroll"><table class="data small"><thead><tr><th>Document</th><th>Engine</th><th>Dataset</th>'
                f'<th>Metric</th><th class="num">Baseline</th><th class="num">Now</th><th class="num">Delta</th>'
                f'<th>Tolerance</th></tr></thead><tbody>{body}</tbody></table></div>{more}</details>')

    parts.append(changes("document metric(s) regressed beyond tolerance" + (
        "" if comparison.document_policy == "fail" else " (listed, not failed: the aggregates decide)"),
        comparison.regressions, True))
    parts.append(changes("document metric(s) improved beyond tolerance (the baseline can be updated)",
                         comparison.improvements, False))
    for title, refs in (("new document(s), not in the baseline", comparison.new_documents),
                        ("document(s) of the baseline missing from this run", comparison.missing_documents)):
        if refs:
            items = "".join(f"<li>{e(ref.dataset)} / <b>{e(ref.id)}</b> ({e(ref.engine)}): {e(ref.reason)}</li>"
                            for ref in refs)
            parts.append(f'<details open><summary><b>{len(refs)} {e(title)}</b></summary><ul>{items}</ul></details>')
    parts.append("</section>")
    return "".join(p for p in parts if p)


_VISIBLE = {"": "\u2205", " ": "\u2423", "\n": "\u23ce", "\t": "\u21e5", "\r": "\u240d"}


def _visible(ch: str) -> str:
    """A confused unit as shown in the heatmap: empty (insertion/deletion) and whitespace made visible."""
    return _VISIBLE.get(ch, ch)


def _heat(count: int, top: int) -> int:
    return 0 if count <= 0 or top <= 0 else max(1, min(9, math.ceil(9 * count / top)))


def _confusion_table(counter: Counter[tuple[str, str]], caption: str) -> str:
    top = counter.most_common(CONFUSION_PAIRS)
    if not top:
        return ""
    refs: list[str] = []
    hyps: list[str] = []
    for (ref, hyp), _ in top:
        if ref not in refs:
            refs.append(ref)
        if hyp not in hyps:
            hyps.append(hyp)
    chosen = dict(top)
    biggest = top[0][1]
    head = "".join(f'<th class="ch" title="output {e(repr(h))}">{e(_visible(h))}</th>' for h in hyps)
    rows = []
    for ref in refs:
        cells = []
        for hyp in hyps:
            count = chosen.get((ref, hyp), 0)
            label = f"reference {ref!r} read as {hyp!r}: {count}x" if count else ""
            cells.append(f'<td class="cell heat-{_heat(count, biggest)}" title="{e(label)}">{count or ""}</td>')
        rows.append(f'<tr><th class="ch" title="reference {e(repr(ref))}">{e(_visible(ref))}</th>{"".join(cells)}</tr>')
    return (f'<div><table class="data heat small"><caption class="note">{e(caption)}</caption><thead><tr>'
            f'<th class="ch" title="rows: reference, columns: output">ref \\ out</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _confusions_section(documents: Sequence[Mapping[str, Any]]) -> str:
    groups: dict[tuple[str, str], Counter[tuple[str, str]]] = {}
    for doc in documents:
        for item in doc.get("confusions") or ():
            if len(item) < 3:
                continue
            ref, hyp, count = str(item[0] or ""), str(item[1] or ""), int(item[2])
            groups.setdefault((str(doc["engine"]), str(doc["dataset"])), Counter())[(ref, hyp)] += count
    if not groups:
        return ""
    tables = "".join(
        _confusion_table(counter, f"{engine} / {dataset}: {sum(counter.values())} confused characters"
                                  + (f", top {CONFUSION_PAIRS} of {len(counter)} pairs" if len(counter) > CONFUSION_PAIRS else ""))
        for (engine, dataset), counter in sorted(groups.items())
    )
    return ('<section id="confusions"><h2>Character confusions</h2><p class="note">Rows are reference characters, '
            'columns what the engine read instead; darker cells are more frequent. \u2205 is nothing (a deletion or '
            f'insertion), \u2423 a space, \u23ce a line break.</p><div class="grid2">{tables}</div></section>')


def _rate(value: Any) -> str:
    """A pass rate as a percentage, ``-`` for anything that is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "-"
    return f"{value:.1%}"


def _count(value: Any) -> str:
    """A count as text, ``-`` for anything that is not a whole number."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "-"


def _cut(value: Any, limit: int = MAX_FACT_TEXT) -> str:
    """``value`` as text, cut at ``limit`` characters with a note of how many more there were."""
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


_REPEAT = {True: "passed", None: "not checked"}


def _fact_order(fact: Mapping[str, Any]) -> int:
    """Failing and not checked facts first, then flaky ones that passed, then the rest."""
    return 2 if fact.get("passed") is True and not fact.get("flaky") else (1 if fact.get("passed") is True else 0)


def _rates_table(table_id: str, title: str, rows: Sequence[Mapping[str, Any]], key: str) -> str:
    """Pass rates per ``key`` (``by_type`` / ``by_group``): one row per type or group, one column per summary row."""
    names: list[str] = []
    for row in rows:
        rates = row.get(key)
        for name in rates if isinstance(rates, Mapping) else ():
            if name not in names:
                names.append(name)
    if not names:
        return ""
    head = f"<th>{e(title)}</th>" + "".join(
        f'<th class="num">{e(row.get("engine"))} / {e(row.get("dataset"))}</th>' for row in rows)
    body = []
    for name in sorted(names, key=str):
        cells = []
        for row in rows:
            rates = row.get(key)
            value = rates.get(name) if isinstance(rates, Mapping) else None
            cells.append(f'<td class="num" data-sort="{_num(value) if isinstance(value, (int, float)) else ""}">'
                         f"{e(_rate(value))}</td>")
        body.append(f"<tr><td>{e(name)}</td>{''.join(cells)}</tr>")
    return (f'<div><table class="data small" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _facts_section(run: Mapping[str, Any], anchors: Mapping[tuple[str, str, str], str], max_rows: int) -> str:
    """The run's page-level facts (``facts`` and ``facts_summary``); empty when the run has none."""
    facts = [f for f in run.get("facts") or () if isinstance(f, Mapping)] if isinstance(run.get("facts"), list) else []
    rows = ([r for r in run.get("facts_summary") or () if isinstance(r, Mapping)]
            if isinstance(run.get("facts_summary"), list) else [])
    if not facts and not rows:
        return ""
    parts = []
    if rows:
        show_unchecked = any(row.get("unchecked") for row in rows)
        head = "".join(f'<th{cls}>{label}</th>' for label, cls in (
            ("Engine", ""), ("Dataset", ""), ("Score", ' class="num"'), ("Interval", ' class="num"'),
            ("Passed", ' class="num"'), ("Facts", ' class="num"'), ("Flaky", ' class="num"'))
            + ((("Unchecked", ' class="num"'),) if show_unchecked else ()))
        body = []
        for row in rows:
            interval = row.get("interval")
            shown = (f"{_rate(interval[0])} .. {_rate(interval[1])}"
                     if isinstance(interval, (list, tuple)) and len(interval) == 2 else "-")
            counts = "".join(f'<td class="num">{e(_count(row.get(key)))}</td>'
                             for key in ("passed", "total", "flaky") + (("unchecked",) if show_unchecked else ()))
            body.append(f'<tr><td>{e(row.get("engine"))}</td><td>{e(row.get("dataset"))}</td>'
                        f'<td class="num"><b>{e(_rate(row.get("headline")))}</b></td><td class="num">{e(shown)}</td>'
                        f'{counts}</tr>')
        parts.append(f'<div class="scroll"><table class="data" id="facts-summary-table"><thead><tr>{head}</tr></thead>'
                     f'<tbody>{"".join(body)}</tbody></table></div>')
        from pytest_ocrmetrics.metrics.facts.summary import coverage_text

        parts += [f'<p class="note not-checked"><b>Not checked</b> ({e(row.get("engine"))} / {e(row.get("dataset"))}): '
                  f'the score is {e(coverage_text(row))}</p>' for row in rows if row.get("not_checked")]
        rates = _rates_table("facts-by-type-table", "Fact type", rows, "by_type") + _rates_table(
            "facts-by-group-table", "Group (JSONL file)", rows, "by_group")
        if rates:
            parts.append(f'<div class="grid2 facts-rates">{rates}</div>')
    if facts:
        parts.append(_facts_table(facts, anchors, max_rows))
    failed = sum(1 for f in facts if f.get("passed") is False)
    not_checked = sum(1 for f in facts if f.get("passed") is None)
    flaky = sum(1 for f in facts if f.get("flaky"))
    heading = (f" ({len(facts)}: {len(facts) - failed - not_checked} passed, {failed} failed"
              + (f", {not_checked} not checked" if not_checked else "")
              + (f", {flaky} flaky" if flaky else "") + ")") if facts else ""
    note = ('<p class="note">Page-level facts (olmOCR-bench): the score is the benchmark\'s headline, the mean of the '
            'pass rates per JSONL file (the added baseline facts are a file of their own), with its bootstrap '
            'interval. A fact checked on several repeats of the output passes when most of them pass; it is flaky '
            'when they disagree.</p>')
    return f'<section id="facts"><h2>Facts{e(heading)}</h2>{note}{"".join(parts)}</section>'


def _facts_table(facts: Sequence[Mapping[str, Any]], anchors: Mapping[tuple[str, str, str], str],
                 max_rows: int) -> str:
    """Every fact (the first ``max_rows``, failing first) with a filter by type and by passed / failed / flaky; rows
    carry ``data-type`` and ``data-verdict`` for it, and all are visible without JavaScript."""
    ordered = sorted(facts, key=_fact_order)  # stable: the run's order within each group
    types = sorted({str(f.get("type")) for f in facts})
    head = "".join(f'<th{cls} data-label="{label.lower()}"><button type="button" class="sort">{label}</button></th>'
                   for label, cls in (("Verdict", ""), ("Engine", ""), ("Document", ""), ("Fact", ""), ("Type", ""),
                                      ("Explanation", ""), ("Excerpt", "")))
    body = []
    for fact in ordered[:max_rows]:
        passed = fact.get("passed") is True
        verdict = "passed" if passed else ("unchecked" if fact.get("passed") is None else "failed")
        label = "not checked" if verdict == "unchecked" else verdict
        repeats = [r for r in fact.get("repeats") or () if isinstance(r, Mapping)] \
            if isinstance(fact.get("repeats"), list) else []
        marks = []
        tokens = [verdict]
        if fact.get("flaky"):
            tokens.append("flaky")
            shown = f"flaky {sum(1 for r in repeats if r.get('passed') is True)}/{len(repeats)}" if repeats else "flaky"
            marks.append(f' <span class="badge flaky">{e(shown)}</span>')
        if fact.get("unchecked") and verdict != "unchecked":
            marks.append(' <span class="badge unchecked">unchecked</span>')
        title = (" · ".join(f"repeat {i}: {_REPEAT.get(r.get('passed'), 'failed')}"
                            for i, r in enumerate(repeats, start=1)) if len(repeats) > 1 else "")
        document = str(fact.get("document"))
        anchor = anchors.get((str(fact.get("dataset")), str(fact.get("engine")), document))
        doc_html = f'<a class="doc-link" href="#{anchor}">{e(document)}</a>' if anchor else e(document)
        notes = fact.get("notes")
        notes_html = ("".join(f' <span class="kv">({e(_cut(n, 200))})</span>' for n in notes[:5])
                      if isinstance(notes, list) else "")
        excerpt = _cut(fact.get("excerpt"))
        excerpt_html = f'<pre class="excerpt">{e(excerpt)}</pre>' if excerpt else ""
        title_attr = f' title="{e(title)}"' if title else ""
        body.append(
            f'<tr data-type="{e(fact.get("type"))}" data-verdict="{" ".join(tokens)}">'
            f'<td data-sort="{verdict}"{title_attr}><span class="badge {verdict}">{label}</span>{"".join(marks)}</td>'
            f'<td>{e(fact.get("engine"))}</td><td data-sort="{e(document)}">{doc_html}</td>'
            f'<td class="fact-id" title="{e(fact.get("source"))}">{e(fact.get("id"))}</td>'
            f'<td>{e(fact.get("type"))}</td>'
            f'<td class="explanation">{e(_cut(fact.get("explanation")))}{notes_html}</td><td>{excerpt_html}</td></tr>')
    type_options = "".join(f'<option value="{e(t)}">{e(t)}</option>' for t in types)
    toolbar = (
        '<div class="toolbar">'
        '<label>type <select class="row-select" data-table="facts-table" data-attr="type">'
        f'<option value="">all</option>{type_options}</select></label>'
        '<label>verdict <select class="row-select" data-table="facts-table" data-attr="verdict">'
        '<option value="">all</option><option value="failed">failed</option><option value="passed">passed</option>'
        '<option value="unchecked">not checked</option><option value="flaky">flaky</option></select></label>'
        '<label>filter <input type="search" class="row-filter" data-table="facts-table" '
        'placeholder="document, fact id, text"></label>'
        '<span class="note row-count" data-table="facts-table"></span>'
        '<button type="button" class="action" data-action="export" data-table="facts-table" '
        'data-filename="ocr-facts.csv">Export CSV</button></div>'
    )
    capped = (f'<p class="note">Only the first {max_rows} of {len(ordered)} facts are listed here (failing first); '
              f'{len(ordered) - max_rows} more are in the JSON run file (<code>facts</code>).</p>'
              if len(ordered) > max_rows else "")
    return (f'<h3>Every fact, failing first</h3>{toolbar}<div class="scroll"><table class="data sortable facts" '
            f'id="facts-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>{capped}')


def _collection_errors_section(run: Mapping[str, Any]) -> str:
    """The datasets that could not be loaded, with their error messages."""
    errors = collection_errors(run)
    if not errors:
        return ""
    items = "".join(f'<li><b>{e(error.get("dataset"))}</b><pre class="message">{e(error.get("message"))}</pre></li>'
                    for error in errors)
    return (f'<section id="collection-errors"><h2>Datasets that could not be loaded ({len(errors)})</h2>'
            f'<p class="note">Their documents are in no table of this report.</p><ul>{items}</ul></section>')


def _skipped_section(run: Mapping[str, Any]) -> str:
    """The label-file lines and ground-truth entries skipped while loading, the first ``MAX_SKIPPED_ENTRIES``."""
    entries = skipped_entries(run)
    if not entries:
        return ""
    items = "".join(f"<li>{e(entry.get('dataset'))}: <code>{e(entry.get('source'))}</code>: {e(entry.get('reason'))}</li>"
                    for entry in entries[:MAX_SKIPPED_ENTRIES])
    more = (f'<p class="note">{len(entries) - MAX_SKIPPED_ENTRIES} more not listed here; the JSON run file '
            f'(<code>skipped_entries</code>) has all of them.</p>' if len(entries) > MAX_SKIPPED_ENTRIES else "")
    return (f'<section id="skipped"><h2>Skipped ground-truth entries ({skipped_count(entries):,})</h2><p class="note">Lines of '
            f'label files and ground-truth entries left out while loading: these documents were not checked.</p>'
            f'<ul>{items}</ul>{more}</section>')


def _documents_section(
    ordered: Sequence[Mapping[str, Any]], metrics: list[str], primary: str | None, comparison: Comparison | None,
    changes: ChangeClasses, anchors: Mapping[tuple[str, str, str], str], max_rows: int,
) -> str:
    baseline = comparison.baseline_metrics if comparison else {}
    head = ['<th class="num"><button type="button" class="sort">#</button></th>',
            '<th><button type="button" class="sort">Document</button></th>',
            '<th><button type="button" class="sort">Engine</button></th>',
            '<th><button type="button" class="sort">Dataset</button></th>',
            '<th><button type="button" class="sort">Outcome</button></th>']
    head += [f'<th class="num" data-label="{e(m)}"><button type="button" class="sort">{e(_title(m))} '
             f'<span class="dir">{direction_arrow(m)}</span></button></th>' for m in metrics]
    head.append('<th class="num" data-label="elapsed_s"><button type="button" class="sort">Time (s)</button></th>')
    rows = []
    for rank, doc in enumerate(ordered[:max_rows], start=1):
        key = doc_key(doc)
        doc_id = str(doc["id"])
        anchor = anchors.get(key)
        label = f'<a class="doc-link" href="#{anchor}">{e(doc_id)}</a>' if anchor else e(doc_id)
        cells = [f'<td class="num" data-sort="{rank}">{rank}</td>', f'<td data-sort="{e(doc_id)}">{label}</td>',
                 f'<td>{e(doc["engine"])}</td>', f'<td>{e(doc["dataset"])}</td>',
                 f'<td data-sort="{e(doc.get("outcome"))}"><span class="badge {e(doc.get("outcome"))}">'
                 f'{e(doc.get("outcome"))}</span></td>']
        doc_metrics = doc.get("metrics") or {}
        old_metrics = baseline.get(key, {})
        for metric in metrics:
            value = doc_metrics.get(metric)
            delta = ""
            if value is not None and metric in old_metrics:
                d = value - old_metrics[metric]
                delta = f'<span class="delta {changes.get((*key, metric), "")}">{e(format_delta(metric, d))}</span>' if d else ""
            cells.append(f'<td class="num" data-sort="{_num(value)}">{e(format_value(metric, value))}{delta}</td>')
        elapsed = float(doc.get("elapsed_s") or 0.0)
        cells.append(f'<td class="num" data-sort="{_num(elapsed)}">{elapsed:.2f}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    first = "failed and errored documents first" + (", then those regressed against the baseline" if comparison else "")
    order_note = f"{first}, then by {_title(primary)} from worst to best" if primary else first
    capped = (f" Only the first {max_rows} of {len(ordered)} documents are listed; the CSV report has all of them."
              if len(ordered) > max_rows else "")
    toolbar = ('<div class="toolbar"><label>filter <input type="search" class="row-filter" data-table="documents-table" '
               'placeholder="id, engine, dataset, outcome"></label><button type="button" class="action" data-action="export" '
               'data-table="documents-table" data-filename="ocr-documents.csv">Export CSV</button></div>')
    return (f'<section id="documents"><h2>Documents ({len(ordered)})</h2><p class="note">Worst first: {e(order_note)}. '
            f'Click a document to open its side-by-side view below.{e(capped)}</p>{toolbar}<div class="scroll">'
            f'<table class="data sortable" id="documents-table"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')


def _text_pane(title: str, tokens: Iterable[Token] | None, raw: str | None, missing: str) -> str:
    if raw is None:
        return f'<div class="pane"><h4>{e(title)}</h4><p class="note">{e(missing)}</p></div>'
    pieces = []
    for token in tokens or ():
        if token.kind in ("space", "ignored"):
            pieces.append(e(token.text))
        elif token.kind == "fuzzy":
            pieces.append(f'<span class="w-fuzzy" title="\u2248 {e(token.partner)}">{e(token.text)}</span>')
        else:
            pieces.append(f'<span class="w-{token.kind}">{e(token.text)}</span>')
    return f'<div class="pane"><h4>{e(title)}</h4><pre class="text">{"".join(pieces)}</pre></div>'


_LEGEND = ('<div class="legend"><span class="sw w-exact">exact</span> normal text, no highlight: word found as is '
           '<span class="sw w-fuzzy">fuzzy</span> purple: found within the allowed character distance (hover: the '
           'other side) <span class="sw w-unmatched">unmatched</span> red: missed in the reference / spurious in the '
           'output</div>')


def _image_html(doc: Mapping[str, Any], finder: ImageFinder, thumbnail_pixels: int, with_image: bool,
                images: dict[Path, tuple[str | None, str | None, str | None]]) -> str:
    """The page image of ``doc`` as a thumbnail referring to the report's image store (each page image is embedded
    once, however many engines read it), or a note saying why there is none."""
    image = doc.get("image")
    if not with_image:
        return '<div class="missing-image">image left out to keep the report small</div>'
    if not image:
        return '<div class="missing-image">no image recorded for this document</div>'
    path = _resolve_image(doc, finder)
    if path not in images:
        url, note = image_data_url(path, max_pixels=thumbnail_pixels)
        images[path] = (f"image-{len(images) + 1}" if url else None, url, note)
    image_id, _, note = images[path]
    if image_id:
        return f'<img class="thumb" data-image="{image_id}" alt="{e(doc["id"])}" title="click to enlarge">'
    return f'<div class="missing-image">{e(note)}</div>'


def _extras(doc: Mapping[str, Any]) -> str:
    """Time, cache, confidence and truncation of one reading, on one line."""
    extras = [f"time {doc.get('elapsed_s', 0):.2f}s"]
    if doc.get("cached"):
        extras.append("cached output")
    if doc.get("confidence") is not None:
        extras.append(f"confidence {doc['confidence']:.3f}")
    if doc.get("truncated"):
        extras.append("output truncated")
    return " · ".join(extras)


def _top_confusions(doc: Mapping[str, Any]) -> str:
    """The document's most frequent confusions, or empty."""
    top = sorted((c for c in doc.get("confusions") or [] if len(c) >= 3), key=lambda c: -int(c[2]))[:8]
    return " \u00b7 ".join(f"{_visible(str(c[0] or ''))}\u2192{_visible(str(c[1] or ''))} \u00d7{int(c[2])}"
                            for c in top)


def _shown_text(value: Any) -> str | None:
    return value[:MAX_TEXT_CHARS] if isinstance(value, str) else None


def _cut_note(*texts: Any) -> str:
    if any(isinstance(t, str) and len(t) > MAX_TEXT_CHARS for t in texts):
        return f'<p class="note">texts cut at {MAX_TEXT_CHARS} characters in this view</p>'
    return ""


def _detail(
    rank: int, doc: Mapping[str, Any], metrics: list[str], comparison: Comparison | None, changes: ChangeClasses,
    finder: ImageFinder, thumbnail_pixels: int, with_image: bool, word_options: Mapping[str, Any],
    images: dict[Path, tuple[str | None, str | None, str | None]],
) -> str:
    key = doc_key(doc)
    doc_metrics = doc.get("metrics") or {}
    old = comparison.baseline_metrics.get(key) if comparison else None
    summary_metrics = " · ".join(f"{_title(m)} {format_value(m, doc_metrics[m])}"
                                 for m in [m for m in metrics if m in doc_metrics][:SUMMARY_METRICS])
    summary = (f'<summary><span class="rank">#{rank}</span><span class="docid">{e(doc["id"])}</span>'
               f'<span class="badge {e(doc.get("outcome"))}">{e(doc.get("outcome"))}</span>'
               f'<span class="kv">{e(doc["engine"])} / {e(doc["dataset"])}</span>'
               f'<span class="metrics">{e(summary_metrics)}</span></summary>')
    # side column: image and metric table with baseline deltas
    side = [_image_html(doc, finder, thumbnail_pixels, with_image, images)]
    shown = [m for m in metrics if m in doc_metrics]
    metric_table = ""
    if shown:
        head = "".join(f'<th class="num">{e(_title(m))} {direction_arrow(m)}</th>' for m in shown)
        rows = ['<tr><th>this run</th>' + "".join(
            f'<td class="num">{e(format_value(m, doc_metrics[m]))}</td>' for m in shown) + "</tr>"]
        if comparison is not None and old is not None:
            rows.append('<tr><th>baseline</th>' + "".join(
                f'<td class="num">{e(format_value(m, old.get(m)))}</td>' for m in shown) + "</tr>")
            deltas = []
            for m in shown:
                if old.get(m) is None:
                    deltas.append('<td class="num">-</td>')
                    continue
                deltas.append(f'<td class="num"><span class="delta {changes.get((*key, m), "")}">'
                              f'{e(format_delta(m, doc_metrics[m] - old[m]))}</span></td>')
            rows.append('<tr><th>delta</th>' + "".join(deltas) + "</tr>")
        metric_table = (f'<div class="scroll"><table class="data small metrics-table"><thead><tr><th></th>{head}</tr>'
                        f'</thead><tbody>{"".join(rows)}</tbody></table></div>')
    if comparison is not None and old is None:
        metric_table += '<p class="note">not in the baseline (a new document)</p>'
    side.append(f'<p class="kv">{e(_extras(doc))}</p>')
    confusions = _top_confusions(doc)
    if confusions:
        side.append(f'<p class="kv">top confusions: <b>{e(confusions)}</b></p>')
    # texts
    reference, hypothesis = doc.get("reference"), doc.get("hypothesis")
    texts = []
    if doc.get("message"):
        texts.append(f'<pre class="message">{e(doc["message"])}</pre>')
    texts.append(metric_table)
    ref_shown, hyp_shown = _shown_text(reference), _shown_text(hypothesis)
    ref_tokens = hyp_tokens = None
    if ref_shown is not None and hyp_shown is not None:
        ref_tokens, hyp_tokens = highlight_words(ref_shown, hyp_shown, **word_options)
    elif ref_shown is not None:  # nothing to match against: the text as it is
        ref_tokens = [Token(ref_shown, "ignored")]
    elif hyp_shown is not None:
        hyp_tokens = [Token(hyp_shown, "ignored")]
    texts.append('<div class="pair">'
                 + _text_pane("Reference (ground truth)", ref_tokens, ref_shown, "no reference text recorded")
                 + _text_pane(f"Output ({doc['engine']})", hyp_tokens, hyp_shown, "no output recorded")
                 + "</div>" + _cut_note(reference, hypothesis))
    texts.append(omnidoc_blocks_html(doc))  # an OmniDocBench page: its matched blocks and their scores
    return (f'<details class="doc" id="doc-{rank}">{summary}<div class="docbody"><div class="side">{"".join(side)}</div>'
            f'<div class="texts">{"".join(texts)}</div></div></details>')


def _paired_detail(
    number: int, readings: Sequence[tuple[str, Mapping[str, Any] | None]], metrics: list[str],
    comparison: Comparison | None, changes: ChangeClasses, finder: ImageFinder, thumbnail_pixels: int,
    with_image: bool, word_options: Mapping[str, Any], images: dict[Path, tuple[str | None, str | None, str | None]],
) -> str:
    """One document of a dataset read by two or more engines: every engine's reading side by side (its metrics with
    the delta against the first engine, and its output highlighted against the one reference), in one block.

    ``readings`` are (engine, document record or None when that engine has no record of the document), the first
    engine first."""
    present = [doc for _, doc in readings if doc is not None]
    first_doc = present[0]
    doc_id, dataset = str(first_doc["id"]), str(first_doc["dataset"])
    first_engine, first = readings[0]
    first_metrics = (first or {}).get("metrics") or {}
    primary = next((m for m in metrics if any(m in (d.get("metrics") or {}) for d in present)), None)
    badges = []
    for engine, doc in readings:
        if doc is None:
            badges.append(f'<span class="kv">{e(engine)}: <i>no record</i></span>')
            continue
        value = (doc.get("metrics") or {}).get(primary) if primary else None
        shown_value = f" {_title(primary)} {format_value(primary, value)}" if primary and value is not None else ""
        badges.append(f'<span class="kv">{e(engine)} <span class="badge {e(doc.get("outcome"))}">'
                      f'{e(doc.get("outcome"))}</span>{e(shown_value)}</span>')
    summary = (f'<summary><span class="rank">#{number}</span><span class="docid">{e(doc_id)}</span>'
               f'<span class="kv">{e(dataset)}: {len(present)} of {len(readings)} engines</span>{"".join(badges)}'
               f'</summary>')
    # side column: the page image (once) and each reading's time, cache and confusions
    imaged = next((doc for doc in present if doc.get("image")), first_doc)
    side = [_image_html(imaged, finder, thumbnail_pixels, with_image, images)]
    for engine, doc in readings:
        if doc is None:
            continue
        confusions = _top_confusions(doc)
        side.append(f'<p class="kv"><b>{e(engine)}</b>: {e(_extras(doc))}'
                    + (f'; top confusions: <b>{e(confusions)}</b>' if confusions else "") + "</p>")
    # metrics: one row per engine, the delta against the first engine (and against the baseline) under each value
    shown = [m for m in metrics if any(m in (d.get("metrics") or {}) for d in present)]
    texts = []
    for engine, doc in readings:
        if doc is not None and doc.get("message"):
            texts.append(f'<pre class="message">{e(engine)}: {e(doc["message"])}</pre>')
    if shown:
        head = "".join(f'<th class="num">{e(_title(m))} {direction_arrow(m)}</th>' for m in shown)
        rows = []
        for index, (engine, doc) in enumerate(readings):
            if doc is None:
                rows.append(f'<tr data-engine="{e(engine)}"><th>{e(engine)}</th><td class="missing" '
                            f'colspan="{len(shown)}">no record of this document for this engine in the run</td></tr>')
                continue
            doc_metrics = doc.get("metrics") or {}
            old = comparison.baseline_metrics.get(doc_key(doc)) if comparison else None
            cells = []
            for m in shown:
                value = doc_metrics.get(m)
                bits = [e(format_value(m, value))]
                if index and value is not None and first_metrics.get(m) is not None:
                    d = value - first_metrics[m]
                    css = "" if d == 0 else ("worse" if regression(m, value, first_metrics[m]) > 0 else "better")
                    bits.append(f'<span class="delta versus {css}" title="against {e(first_engine)}">'
                                f'{e(format_delta(m, d))} vs {e(first_engine)}</span>')
                if old is not None and value is not None and old.get(m) is not None and value != old[m]:
                    bits.append(f'<span class="delta {changes.get((*doc_key(doc), m), "")}" title="against the '
                                f'baseline">{e(format_delta(m, value - old[m]))} vs baseline</span>')
                cells.append(f'<td class="num" data-sort="{_num(value)}">{"".join(bits)}</td>')
            outcome = f' <span class="badge {e(doc.get("outcome"))}">{e(doc.get("outcome"))}</span>'
            rows.append(f'<tr data-engine="{e(engine)}"><th>{e(engine)}{outcome}</th>{"".join(cells)}</tr>')
        texts.append(f'<div class="scroll"><table class="data small metrics-table paired-metrics"><thead><tr>'
                     f'<th>engine</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>')
    # texts: the reference once, then each engine's output highlighted against it
    reference = next((doc.get("reference") for doc in present if isinstance(doc.get("reference"), str)), None)
    ref_shown = _shown_text(reference)
    panes = [_text_pane("Reference (ground truth)",
                        [Token(ref_shown, "ignored")] if ref_shown is not None else None, ref_shown,
                        "no reference text recorded")]
    for engine, doc in readings:
        if doc is None:
            panes.append(_text_pane(f"Output ({engine})", None, None, "no record of this document for this engine"))
            continue
        hyp_shown = _shown_text(doc.get("hypothesis"))
        hyp_tokens = None
        if ref_shown is not None and hyp_shown is not None:
            hyp_tokens = highlight_words(ref_shown, hyp_shown, **word_options)[1]
        elif hyp_shown is not None:
            hyp_tokens = [Token(hyp_shown, "ignored")]
        panes.append(_text_pane(f"Output ({engine})", hyp_tokens, hyp_shown, "no output recorded"))
    texts.append(f'<div class="pair readings">{"".join(panes)}</div>'
                 + _cut_note(reference, *(doc.get("hypothesis") for doc in present)))
    texts += [f'<h4>{e(engine)}</h4>{blocks}' for engine, doc in readings
              if doc is not None and (blocks := omnidoc_blocks_html(doc))]
    return (f'<details class="doc paired" id="doc-{number}" data-dataset="{e(dataset)}">{summary}'
            f'<div class="docbody"><div class="side">{"".join(side)}</div><div class="texts">{"".join(texts)}</div>'
            f'</div></details>')


def _detail_blocks(
    documents: Sequence[Mapping[str, Any]], ordered: Sequence[Mapping[str, Any]], engines: Sequence[str],
    engines_of: Mapping[str, Sequence[str]], limit: int,
) -> tuple[list[list[Mapping[str, Any]]], int]:
    """The first ``limit`` detail views in worst-first order, and how many there are in all: one per document of a
    dataset read by one engine, and one per (dataset, id) of a dataset read by two or more engines (placed where
    its worst reading comes), holding every reading of that document in engine order."""
    paired = {dataset for dataset, names in engines_of.items() if len(names) >= 2}
    if not paired:  # the usual case: one view per document
        return [[doc] for doc in ordered[:max(0, limit)]], len(ordered)
    readings: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    singles = 0
    for doc in documents:
        dataset = str(doc.get("dataset"))
        if dataset in paired:
            readings.setdefault((dataset, str(doc.get("id"))), []).append(doc)
        else:
            singles += 1
    rank = {engine: i for i, engine in enumerate(engines)}
    blocks: list[list[Mapping[str, Any]]] = []
    seen: set[tuple[str, str]] = set()
    for doc in ordered:
        if len(blocks) >= limit:
            break
        dataset = str(doc.get("dataset"))
        if dataset not in paired:
            blocks.append([doc])
            continue
        group = (dataset, str(doc.get("id")))
        if group in seen:
            continue
        seen.add(group)
        blocks.append(sorted(readings[group], key=lambda d: rank.get(str(d.get("engine")), len(rank))))
    return blocks, singles + len(readings)


# ------------------------------------------------------------------------------------------------------ public


#: word matching for highlighting when neither the caller nor the run says: the evaluator's defaults
_WORD_OPTIONS_DEFAULT: dict[str, Any] = {"max_distance": 1, "case_sensitive": False, "ignore_punctuation": True}
#: a run file's ``normalization.word_match`` keys -> :func:`highlight_words` options
_WORD_MATCH_KEYS = {"distance": "max_distance", "case_sensitive": "case_sensitive",
                    "ignore_punctuation": "ignore_punctuation"}


def render_html(
    run: Mapping[str, Any],
    *,
    comparison: Comparison | None = None,
    gates: Sequence[GateLike] | None = None,
    title: str = "OCR metrics report",
    image_root: str | Path | None = None,
    run_folder: str | Path | None = None,
    max_details: int = 200,
    max_images: int = 100,
    max_rows: int = 5000,
    max_fact_rows: int = 2000,
    thumbnail_pixels: int = 400_000,
    max_distance: int | None = None,
    case_sensitive: bool | None = None,
    ignore_punctuation: bool | None = None,
    with_charts: bool = True,
) -> str:
    """Render a run (a JSON run file's dict) as one self-contained HTML page.

    ``comparison`` (from :func:`pytest_ocrmetrics.gating.compare_runs`) adds baseline deltas; ``gates`` (gate
    expressions, :class:`Gate` objects or evaluated :class:`GateResult` objects) adds the gate table. Page images
    are looked for under ``image_root`` (``--image-root``), in the dataset folders the run recorded, then in
    ``run_folder`` (the run file's folder; default: the current directory), see
    :class:`~pytest_ocrmetrics.reporting.images.ImageFinder`; a note says how many were not found. Only the worst
    ``max_details`` documents get an expandable detail view (with an image, at most ``thumbnail_pixels`` pixels, for
    the first ``max_images``) and the document table lists at most ``max_rows`` documents and the facts table at most
    ``max_fact_rows`` facts (failing first), so a big run still gives a reasonable file; notes say what was left out.
    ``max_distance``, ``case_sensitive`` and ``ignore_punctuation`` set how words are matched for highlighting; each
    one not given is the run's own (its ``normalization.word_match``, what its ``crr`` and ``word_f1`` used), else
    the evaluator's default (1 edit, case-insensitive, punctuation stripped). Exact words are left uncoloured, fuzzy
    ones purple, unmatched ones red, as the evaluator's legend has them. ``with_charts=False`` leaves the charts
    section out (the benchmark measures what the charts cost).
    """
    root = ImageFinder.for_run(run, image_root=image_root, run_folder=run_folder)
    metrics = run_metrics(run)
    primary = primary_metric(run)
    documents = list(run.get("documents", []) or [])
    changes = _change_classes(comparison)
    regressed_keys = {key[:3] for key, cls in changes.items() if cls == "worse"}
    ordered = worst_first(documents, primary, first=regressed_keys)
    results = gate_results(gates, run)
    verdict = run_verdict(run, results, comparison)
    recorded = (run.get("normalization") or {}).get("word_match")
    recorded = recorded if isinstance(recorded, Mapping) else {}
    given = {"max_distance": max_distance, "case_sensitive": case_sensitive, "ignore_punctuation": ignore_punctuation}
    word_options = {**_WORD_OPTIONS_DEFAULT,
                    **{option: recorded[key] for key, option in _WORD_MATCH_KEYS.items()
                       if isinstance(recorded.get(key), type(_WORD_OPTIONS_DEFAULT[option]))
                       and not (option == "max_distance" and (isinstance(recorded[key], bool) or recorded[key] < 0))},
                    **{option: value for option, value in given.items() if value is not None}}
    if recorded.get("distance") == word_options["max_distance"] and word_options["max_distance"] > MAX_DISTANCE:
        # a run file of before the 0..5 range: its words are coloured at the largest distance allowed now
        word_options["max_distance"] = MAX_DISTANCE
    images: dict[Path, tuple[str | None, str | None, str | None]] = {}  # path -> (id, data URL, note)
    engines = engine_order(run)
    engines_of: dict[str, dict[str, None]] = {}  # dataset -> its engines, in the order first seen
    for doc in documents:
        engines_of.setdefault(str(doc.get("dataset")), {})[str(doc.get("engine"))] = None
    blocks, block_count = _detail_blocks(documents, ordered, engines, engines_of, max_details)
    anchors: dict[tuple[str, str, str], str] = {}
    details = []
    for number, block in enumerate(blocks, start=1):
        for doc in block:
            anchors[doc_key(doc)] = f"doc-{number}"
        dataset = str(block[0].get("dataset"))
        if len(engines_of.get(dataset, ())) < 2:
            details.append(_detail(number, block[0], metrics, comparison, changes, root, thumbnail_pixels,
                                   number <= max_images, word_options, images))
            continue
        by_engine = {str(doc.get("engine")): doc for doc in block}
        names = sorted(engines_of[dataset], key=lambda name: engines.index(name) if name in engines else len(engines))
        details.append(_paired_detail(number, [(name, by_engine.get(name)) for name in names], metrics, comparison,
                                      changes, root, thumbnail_pixels, number <= max_images, word_options, images))
    image_store = "".join(f'<img id="{image_id}" src="{e(url)}" alt="">' for image_id, url, _ in images.values() if url)
    more = ""
    if block_count > max_details:
        more = (f'<p class="note">{block_count - max_details} more documents have no detail view here '
                f'(only the worst {max_details} do, to keep the file small); see the table above or the CSV report.</p>')
    more += _missing_images_note(images)
    details_section = ""
    paired = sorted(dataset for dataset, names in engines_of.items() if len(names) >= 2)
    firsts = ", ".join(f"{dataset} (against {min(engines_of[dataset], key=engines.index)})" for dataset in paired)
    paired_note = (f'<p class="note">Read by several engines: {e(firsts)}. Each of their documents shows every '
                   f'engine\'s reading side by side, with the delta against the first engine under each value.</p>'
                   if paired else "")
    if ordered:
        details_section = (
            '<section id="details"><h2>Document details, worst first</h2>'
            f'{paired_note}'
            '<div class="toolbar"><button type="button" class="action" data-action="expand">Expand all</button>'
            '<button type="button" class="action" data-action="collapse">Collapse all</button></div>'
            f'{_LEGEND}{"".join(details)}{more}</section>'
        )
    body = "".join([
        _header(run, title, verdict),
        "<main>",
        _summary_section(run, metrics, comparison),
        _tags_section(run, metrics),
        _charts_section(run, documents, primary, comparison, changes) if with_charts else "",
        _gates_section(results),
        _comparison_section(comparison) if comparison is not None else "",
        _facts_section(run, anchors, max_fact_rows),
        _confusions_section(documents),
        _collection_errors_section(run),
        _skipped_section(run),
        _documents_section(ordered, metrics, primary, comparison, changes, anchors, max_rows) if ordered else "",
        details_section,
        "</main>",
        f'<div hidden id="images">{image_store}</div>' if image_store else "",
    ])
    csp = (f"default-src 'none'; img-src data:; style-src {csp_hash(CSS)}; script-src {csp_hash(JS)}; "
           "base-uri 'none'; form-action 'none'")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{e(title)}</title><style>{CSS}</style></head>"
        f"<body>{body}<script>{JS}</script></body></html>\n"
    )


def write_html(run: Mapping[str, Any], path: str | Path, **kwargs: Any) -> Path:
    """Render ``run`` with :func:`render_html` and write it to ``path`` (UTF-8, through a temporary file renamed
    over ``path``, so a failure keeps the previous report); returns the path."""
    return write_text_atomic(path, render_html(run, **kwargs))
