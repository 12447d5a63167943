"""The paired-engine detail view of the HTML report: one document of a dataset read by two or more engines, every
engine's reading side by side with the delta against the first engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.gating import Comparison
from pytest_ocrmetrics.metrics.registry import regression
from pytest_ocrmetrics.reporting.common import (
    direction_arrow,
    format_delta,
    format_value,
)
from pytest_ocrmetrics.reporting.highlight import Token, highlight_words
from pytest_ocrmetrics.reporting.html.confusions import top_confusions
from pytest_ocrmetrics.reporting.html.detail import cut_note, reading_extras, shown_text, text_pane
from pytest_ocrmetrics.reporting.html.markup import ChangeClasses, e, metric_title, sort_value
from pytest_ocrmetrics.reporting.html.thumbnails import image_html
from pytest_ocrmetrics.reporting.images import ImageFinder
from pytest_ocrmetrics.reporting.omnidoc import omnidoc_blocks_html
from pytest_ocrmetrics.runfile.read import doc_key

Readings = Sequence[tuple[str, Mapping[str, Any] | None]]


def paired_detail(
    number: int, readings: Readings, metrics: list[str],
    comparison: Comparison | None, changes: ChangeClasses, finder: ImageFinder, thumbnail_pixels: int,
    with_image: bool, word_options: Mapping[str, Any], images: dict[Path, tuple[str | None, str | None, str | None]],
) -> str:
    """One document of a dataset read by two or more engines: every engine's reading side by side (its metrics with
    the delta against the first engine, and its output highlighted against the one reference), in one block.

    ``readings`` are (engine, document record or None when that engine has no record of the document), the first
    engine first."""
    present = [doc for _, doc in readings if doc is not None]
    first_doc = present[0]
    dataset = str(first_doc["dataset"])
    summary = _summary(number, readings, present, metrics)
    # side column: the page image (once) and each reading's time, cache and confusions
    imaged = next((doc for doc in present if doc.get("image")), first_doc)
    side = [image_html(imaged, finder, thumbnail_pixels, with_image, images)] + _reading_notes(readings)
    texts = [f'<pre class="message">{e(engine)}: {e(doc["message"])}</pre>'
             for engine, doc in readings if doc is not None and doc.get("message")]
    texts += _metrics_table(readings, present, metrics, comparison, changes)
    texts.append(_reading_panes(readings, present, word_options))
    texts += [f'<h4>{e(engine)}</h4>{blocks}' for engine, doc in readings
              if doc is not None and (blocks := omnidoc_blocks_html(doc))]
    return (f'<details class="doc paired" id="doc-{number}" data-dataset="{e(dataset)}">{summary}'
            f'<div class="docbody"><div class="side">{"".join(side)}</div><div class="texts">{"".join(texts)}</div>'
            f'</div></details>')


def _summary(number: int, readings: Readings, present: Sequence[Mapping[str, Any]], metrics: list[str]) -> str:
    """The closed view's line: rank, document, how many engines read it, and each engine's outcome and main metric."""
    first_doc = present[0]
    doc_id, dataset = str(first_doc["id"]), str(first_doc["dataset"])
    primary = next((m for m in metrics if any(m in (d.get("metrics") or {}) for d in present)), None)
    badges = []
    for engine, doc in readings:
        if doc is None:
            badges.append(f'<span class="kv">{e(engine)}: <i>no record</i></span>')
            continue
        value = (doc.get("metrics") or {}).get(primary) if primary else None
        shown_value = (f" {metric_title(primary)} {format_value(primary, value)}"
                       if primary and value is not None else "")
        badges.append(f'<span class="kv">{e(engine)} <span class="badge {e(doc.get("outcome"))}">'
                      f'{e(doc.get("outcome"))}</span>{e(shown_value)}</span>')
    return (f'<summary><span class="rank">#{number}</span><span class="docid">{e(doc_id)}</span>'
            f'<span class="kv">{e(dataset)}: {len(present)} of {len(readings)} engines</span>{"".join(badges)}'
            f'</summary>')


def _reading_notes(readings: Readings) -> list[str]:
    """Each reading's time, cache and most frequent confusions, one line per engine that has a record."""
    notes = []
    for engine, doc in readings:
        if doc is None:
            continue
        confusions = top_confusions(doc)
        notes.append(f'<p class="kv"><b>{e(engine)}</b>: {e(reading_extras(doc))}'
                     + (f'; top confusions: <b>{e(confusions)}</b>' if confusions else "") + "</p>")
    return notes


def _metrics_table(readings: Readings, present: Sequence[Mapping[str, Any]], metrics: list[str],
                   comparison: Comparison | None, changes: ChangeClasses) -> list[str]:
    """One row per engine, the delta against the first engine (and against the baseline) under each value; nothing
    when no reading has any of ``metrics``."""
    shown = [m for m in metrics if any(m in (d.get("metrics") or {}) for d in present)]
    if not shown:
        return []
    first_engine, first = readings[0]
    first_metrics = (first or {}).get("metrics") or {}
    head = "".join(f'<th class="num">{e(metric_title(m))} {direction_arrow(m)}</th>' for m in shown)
    rows = []
    for index, (engine, doc) in enumerate(readings):
        if doc is None:
            rows.append(f'<tr data-engine="{e(engine)}"><th>{e(engine)}</th><td class="missing" '
                        f'colspan="{len(shown)}">no record of this document for this engine in the run</td></tr>')
            continue
        old = comparison.baseline_metrics.get(doc_key(doc)) if comparison else None
        cells = [_metric_cell(m, doc, old, first_metrics if index else None, first_engine, changes) for m in shown]
        outcome = f' <span class="badge {e(doc.get("outcome"))}">{e(doc.get("outcome"))}</span>'
        rows.append(f'<tr data-engine="{e(engine)}"><th>{e(engine)}{outcome}</th>{"".join(cells)}</tr>')
    return [f'<div class="scroll"><table class="data small metrics-table paired-metrics"><thead><tr>'
            f'<th>engine</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>']


def _metric_cell(metric: str, doc: Mapping[str, Any], old: Mapping[str, Any] | None,
                 first_metrics: Mapping[str, Any] | None, first_engine: str, changes: ChangeClasses) -> str:
    """One reading's value of ``metric``, with its delta against the first engine (``first_metrics``, None for the
    first engine itself) and against the baseline (``old``) under it."""
    value = (doc.get("metrics") or {}).get(metric)
    bits = [e(format_value(metric, value))]
    if first_metrics is not None and value is not None and first_metrics.get(metric) is not None:
        d = value - first_metrics[metric]
        css = "" if d == 0 else ("worse" if regression(metric, value, first_metrics[metric]) > 0 else "better")
        bits.append(f'<span class="delta versus {css}" title="against {e(first_engine)}">'
                    f'{e(format_delta(metric, d))} vs {e(first_engine)}</span>')
    if old is not None and value is not None and old.get(metric) is not None and value != old[metric]:
        bits.append(f'<span class="delta {changes.get((*doc_key(doc), metric), "")}" title="against the '
                    f'baseline">{e(format_delta(metric, value - old[metric]))} vs baseline</span>')
    return f'<td class="num" data-sort="{sort_value(value)}">{"".join(bits)}</td>'


def _reading_panes(readings: Readings, present: Sequence[Mapping[str, Any]], word_options: Mapping[str, Any]) -> str:
    """The reference once, then each engine's output highlighted against it."""
    reference = next((doc.get("reference") for doc in present if isinstance(doc.get("reference"), str)), None)
    ref_shown = shown_text(reference)
    panes = [text_pane("Reference (ground truth)",
                       [Token(ref_shown, "ignored")] if ref_shown is not None else None, ref_shown,
                       "no reference text recorded")]
    for engine, doc in readings:
        if doc is None:
            panes.append(text_pane(f"Output ({engine})", None, None, "no record of this document for this engine"))
            continue
        hyp_shown = shown_text(doc.get("hypothesis"))
        hyp_tokens = None
        if ref_shown is not None and hyp_shown is not None:
            hyp_tokens = highlight_words(ref_shown, hyp_shown, **word_options)[1]
        elif hyp_shown is not None:
            hyp_tokens = [Token(hyp_shown, "ignored")]
        panes.append(text_pane(f"Output ({engine})", hyp_tokens, hyp_shown, "no output recorded"))
    return (f'<div class="pair readings">{"".join(panes)}</div>'
            + cut_note(reference, *(doc.get("hypothesis") for doc in present)))
