"""The summary section of the HTML report: one row per engine x dataset (statistic switch, column toggles, CSV
export, baseline deltas under each value) and the same per document tag."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.gating import Comparison
from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.reporting.common import (
    direction_arrow,
    format_delta,
    format_value,
)
from pytest_ocrmetrics.reporting.html.markup import delta_class, e, metric_title, sort_value

STATISTIC_CHOICES = ("micro", "mean", "median", "p90", "p95", "min", "max")


def _metric_cell(metric: str, stats: Mapping[str, Any] | None, delta_html: str = "") -> str:
    if not stats:
        return '<td class="num metric" data-sort=""><span class="v">-</span></td>'
    attrs = []
    for stat in STATISTIC_CHOICES:
        value = stats.get(stat)
        if value is not None:
            attrs.append(f'data-{stat}="{sort_value(value)}" data-{stat}-text="{e(format_value(metric, value))}"')
    tooltip = " · ".join(
        f"{stat} {format_value(metric, stats[stat])}" for stat in ("mean", "median", "p95", "min", "max")
        if stats.get(stat) is not None
    )
    if stats.get("ci_low") is not None and stats.get("ci_high") is not None:
        tooltip += f" · CI {format_value(metric, stats['ci_low'])}..{format_value(metric, stats['ci_high'])}"
    if stats.get("n") is not None:
        tooltip += f" · n={stats['n']}"
    micro = stats.get("micro")
    return (f'<td class="num metric" data-sort="{sort_value(micro)}" {" ".join(attrs)} title="{e(tooltip)}">'
            f'<span class="v">{e(format_value(metric, micro))}</span>{delta_html}</td>')


def _column_toolbar(table_id: str, headers: Sequence[str], *, start: int = 0) -> str:
    boxes = "".join(
        f'<label><input type="checkbox" class="col-toggle" data-table="{e(table_id)}" data-col="{i}" checked> '
        f'{e(label)}</label>'
        for i, label in enumerate(headers) if i >= start
    )
    return f"<fieldset><legend>columns</legend>{boxes}</fieldset>"


def summary_section(run: Mapping[str, Any], metrics: list[str], comparison: Comparison | None) -> str:
    """The summary table per engine x dataset, with the statistic switch, column toggles, CSV export and
    the baseline delta under each value when there is a comparison."""
    rows = run.get("summary", []) or []
    aggregates = {(a.engine, a.dataset, a.metric): a for a in comparison.aggregates} if comparison else {}
    count_columns = [("documents", "Docs"), ("evaluated", "Evaluated"), ("passed", "Passed"), ("failed", "Failed"),
                     ("errors", "Errors"), ("skipped", "Skipped"), ("filtered", "Filtered")]
    count_columns = [c for c in count_columns if c[0] in ("documents", "passed", "failed")
                     or any(row.get(c[0]) for row in rows)]
    headers = ["Engine", "Dataset"] + [label for _, label in count_columns] + [metric_title(m) for m in metrics]
    head = ['<th data-label="engine"><button type="button" class="sort">Engine</button></th>',
            '<th data-label="dataset"><button type="button" class="sort">Dataset</button></th>']
    head += [f'<th class="num" data-label="{e(key)}"><button type="button" class="sort">{e(label)}</button></th>'
             for key, label in count_columns]
    head += [
        f'<th class="num metric" data-metric="{e(m)}" data-label="{e(m)} (micro)" title="{e(METRICS[m].description)}">'
        f'<button type="button" class="sort">{e(metric_title(m))} <span class="dir">{direction_arrow(m)} '
        f'<span class="stat">micro</span></span></button></th>'
        for m in metrics
    ]
    body = []
    for row in rows:
        engine, dataset = str(row.get("engine")), str(row.get("dataset"))
        cells = [f'<td data-sort="{e(engine)}">{e(engine)}</td>', f'<td data-sort="{e(dataset)}">{e(dataset)}</td>']
        cells += [f'<td class="num" data-sort="{sort_value(row.get(key))}">{e(row.get(key, "-"))}</td>'
                  for key, _ in count_columns]
        for metric in metrics:
            delta_html = ""
            agg = aggregates.get((engine, dataset, metric))
            if agg is not None and (agg.delta != 0 or agg.verdict != "unchanged" and agg.verdict != "ungated"):
                ci = (f", {int(round(agg.level * 100))}% CI {format_delta(metric, agg.interval[0])}.."
                      f"{format_delta(metric, agg.interval[1])}" if agg.interval else "")
                delta_html = (f'<span class="delta {delta_class(agg.verdict)}" '
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


def tags_section(run: Mapping[str, Any], metrics: list[str]) -> str:
    """The summary's rows per document tag (the run's ``summary_by_tag``); empty when no document has tags."""
    rows = run.get("summary_by_tag") or []
    if not rows:
        return ""
    counts = [("documents", "Docs"), ("evaluated", "Evaluated"), ("passed", "Passed"), ("failed", "Failed")]
    head = "".join(f"<th>{label}</th>" for label in ("Tag", "Engine", "Dataset"))
    head += "".join(f'<th class="num">{label}</th>' for _, label in counts)
    head += "".join(f'<th class="num metric" title="{e(METRICS[m].description)}">{e(metric_title(m))} '
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
