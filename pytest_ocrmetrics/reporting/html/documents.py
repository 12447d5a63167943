"""The document table of the HTML report (every document, worst first) and the notes on what loading left out:
datasets that could not be loaded and skipped ground-truth entries."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.gating import Comparison
from pytest_ocrmetrics.reporting.common import (
    collection_errors,
    direction_arrow,
    format_delta,
    format_value,
    skipped_count,
    skipped_entries,
)
from pytest_ocrmetrics.reporting.html.markup import ChangeClasses, e, metric_title, sort_value
from pytest_ocrmetrics.runfile.read import doc_key

MAX_SKIPPED_ENTRIES = 50  # skipped label-file lines listed (all are counted)


def collection_errors_section(run: Mapping[str, Any]) -> str:
    """The datasets that could not be loaded, with their error messages."""
    errors = collection_errors(run)
    if not errors:
        return ""
    items = "".join(f'<li><b>{e(error.get("dataset"))}</b><pre class="message">{e(error.get("message"))}</pre></li>'
                    for error in errors)
    return (f'<section id="collection-errors"><h2>Datasets that could not be loaded ({len(errors)})</h2>'
            f'<p class="note">Their documents are in no table of this report.</p><ul>{items}</ul></section>')


def skipped_section(run: Mapping[str, Any]) -> str:
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


def documents_section(
    ordered: Sequence[Mapping[str, Any]], metrics: list[str], primary: str | None, comparison: Comparison | None,
    changes: ChangeClasses, anchors: Mapping[tuple[str, str, str], str], max_rows: int,
) -> str:
    """Every document (the first ``max_rows``) in a sortable table, worst first, with baseline deltas and a
    link to its detail view when it has one."""
    baseline = comparison.baseline_metrics if comparison else {}
    head = ['<th class="num"><button type="button" class="sort">#</button></th>',
            '<th><button type="button" class="sort">Document</button></th>',
            '<th><button type="button" class="sort">Engine</button></th>',
            '<th><button type="button" class="sort">Dataset</button></th>',
            '<th><button type="button" class="sort">Outcome</button></th>']
    head += [f'<th class="num" data-label="{e(m)}"><button type="button" class="sort">{e(metric_title(m))} '
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
            cells.append(f'<td class="num" data-sort="{sort_value(value)}">{e(format_value(metric, value))}{delta}</td>')
        elapsed = float(doc.get("elapsed_s") or 0.0)
        cells.append(f'<td class="num" data-sort="{sort_value(elapsed)}">{elapsed:.2f}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    first = "failed and errored documents first" + (", then those regressed against the baseline" if comparison else "")
    order_note = f"{first}, then by {metric_title(primary)} from worst to best" if primary else first
    capped = (f" Only the first {max_rows} of {len(ordered)} documents are listed; the CSV report has all of them."
              if len(ordered) > max_rows else "")
    toolbar = ('<div class="toolbar"><label>filter <input type="search" class="row-filter" data-table="documents-table" '
               'placeholder="id, engine, dataset, outcome"></label><button type="button" class="action" data-action="export" '
               'data-table="documents-table" data-filename="ocr-documents.csv">Export CSV</button></div>')
    return (f'<section id="documents"><h2>Documents ({len(ordered)})</h2><p class="note">Worst first: {e(order_note)}. '
            f'Click a document to open its side-by-side view below.{e(capped)}</p>{toolbar}<div class="scroll">'
            f'<table class="data sortable" id="documents-table"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')
