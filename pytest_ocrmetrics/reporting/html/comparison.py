"""The gates and baseline sections of the HTML report: gate results, aggregate deltas with their intervals, the
documents regressed or improved beyond tolerance and the documents new to or missing from the run."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from pytest_ocrmetrics.gating import AggregateDelta, Comparison, GateResult
from pytest_ocrmetrics.reporting.common import (
    VERDICT_ORDER,
    direction_arrow,
    format_delta,
    format_value,
)
from pytest_ocrmetrics.reporting.html.markup import delta_class, e, metric_title, sort_value

MAX_CHANGE_ROWS = 500  # per table of document regressions / improvements


def gates_section(results: Sequence[GateResult]) -> str:
    """The gate results as a table; empty when no gate was given."""
    if not results:
        return ""
    rows = []
    for r in results:
        actual = format_value(r.gate.metric, r.actual) if r.actual is not None else "-"
        rows.append(
            f'<tr><td><span class="badge {e(r.status)}">{e(r.status)}</span></td><td><code>{e(r.gate.expression)}</code></td>'
            f'<td>{e(r.engine or "*")}</td><td>{e(r.dataset or "*")}</td>'
            f'<td class="num" data-sort="{sort_value(r.actual)}">{e(actual)}</td>'
            f'<td class="num" data-sort="{sort_value(r.threshold)}">{e(format_value(r.gate.metric, r.threshold))}</td>'
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
        f'<td>{e(agg.engine_label)}</td><td>{e(agg.dataset)}</td><td>{e(metric_title(agg.metric))} {direction_arrow(agg.metric)}</td>'
        f'<td class="num" data-sort="{sort_value(agg.old)}">{e(format_value(agg.metric, agg.old))}</td>'
        f'<td class="num" data-sort="{sort_value(agg.new)}">{e(format_value(agg.metric, agg.new))}</td>'
        f'<td class="num" data-sort="{sort_value(agg.delta)}"><span class="delta {delta_class(agg.verdict)}">'
        f'{e(format_delta(agg.metric, agg.delta))}</span></td><td>{e(interval)}</td>'
        f'<td class="num" data-sort="{agg.n}">{agg.n}</td><td>{e(agg.tolerance or "-")}</td></tr>'
    )


def comparison_section(comparison: Comparison) -> str:
    """The baseline comparison: settings, aggregate deltas (with and without a tolerance), the documents
    that moved beyond tolerance and those new to or missing from the run."""
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
        plural = "s" if len(ungated) != 1 else ""
        parts.append(f'<details{"" if gated else " open"}><summary><b>{len(ungated)} aggregate{plural} without a tolerance'
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
            f'<tr><td>{e(c.document)}</td><td>{e(c.engine_label)}</td><td>{e(c.dataset)}</td><td>{e(metric_title(c.metric))}</td>'
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
            items = "".join(f"<li>{e(ref.dataset)} / <b>{e(ref.id)}</b> ({e(ref.engine_label)}): {e(ref.reason)}</li>"
                            for ref in refs)
            parts.append(f'<details open><summary><b>{len(refs)} {e(title)}</b></summary><ul>{items}</ul></details>')
    parts.append("</section>")
    return "".join(p for p in parts if p)
