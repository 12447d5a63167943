"""OmniDocBench in the reports: the terminal's line per engine × dataset and the HTML view of a page's matched blocks.

Both read only the run file: the summary rows' six page metrics (``mean`` over the pages that have the element, which
is the benchmark's leaderboard number, and ``n``, how many pages have it) and a document's ``details["omnidoc"]``
(``matches``: each ground-truth block with the prediction matched to it, its edit distance and, for a table, its
TEDS and TEDS-S; ``absent``: the metrics the page has no element for), so a merged or re-rendered run shows the same.
"""

from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core.safe_text import show_controls
from pytest_ocrmetrics.metrics.registry import METRICS

__all__ = ["OMNIDOC_METRIC_NAMES", "omnidoc_lines", "omnidoc_blocks_html", "MAX_BLOCK_TEXT", "MAX_BLOCKS"]

OMNIDOC_METRIC_NAMES = ("text_block_edit", "reading_order_edit", "table_edit", "table_teds", "table_teds_s",
                        "formula_edit")
"""The six page metrics (the names of :data:`pytest_ocrmetrics.metrics.omnidoc.OMNIDOC_METRICS`, kept here so the
reports do not import the metric core)."""

MAX_BLOCK_TEXT = 2_000
"""Characters of one block's ground truth or prediction shown in the HTML view (the run file keeps them whole)."""

MAX_BLOCKS = 300
"""Matched blocks listed per page in the HTML view."""


def _mean(row: Mapping[str, Any], name: str) -> tuple[float | None, int]:
    stats = (row.get("metrics") or {}).get(name)
    if not isinstance(stats, Mapping):
        return None, 0
    value = stats.get("mean")
    n = stats.get("n")
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return number, int(n) if isinstance(n, int) and not isinstance(n, bool) else 0


def _edit(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.3f}"


def _percent(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.1%}"


def omnidoc_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per engine × dataset whose pages have OmniDocBench scores: the benchmark's leaderboard numbers (the
    mean over the pages that have the element) and on how many pages each was measured; empty when no row has them.

    >>> print(omnidoc_lines([{"engine": "e", "dataset": "d", "evaluated": 3, "metrics": {
    ...     "text_block_edit": {"mean": 0.1234, "n": 3}, "reading_order_edit": {"mean": 0.05, "n": 3},
    ...     "table_teds": {"mean": 0.9, "n": 1}, "table_teds_s": {"mean": 0.95, "n": 1},
    ...     "table_edit": {"mean": 0.2, "n": 1}}}])[0])  # doctest: +NORMALIZE_WHITESPACE
    OmniDocBench e / d: text edit 0.123 (3 pages); reading order edit 0.050 (3); table TEDS 90.0%, TEDS-S 95.0%,
    edit 0.200 (1 page with tables); formula edit - (no page with display formulas); 3 pages evaluated
    """
    lines = []
    for row in rows:
        values = {name: _mean(row, name) for name in OMNIDOC_METRIC_NAMES}
        if not any(n for _, n in values.values()):
            continue
        text, text_n = values["text_block_edit"]
        order, order_n = values["reading_order_edit"]
        teds, tables = values["table_teds"]
        teds_s, _ = values["table_teds_s"]
        table_edit, _ = values["table_edit"]
        formula, formulas = values["formula_edit"]
        table_part = (f"table TEDS {_percent(teds)}, TEDS-S {_percent(teds_s)}, edit {_edit(table_edit)} "
                      f"({tables} page{'s' if tables != 1 else ''} with tables)" if tables
                      else "table - (no page with tables)")
        formula_part = (f"formula edit {_edit(formula)} ({formulas} page{'s' if formulas != 1 else ''} with display "
                        "formulas)" if formulas else "formula edit - (no page with display formulas)")
        evaluated = row.get("evaluated", row.get("documents", 0))
        lines.append(f"OmniDocBench {row.get('engine')} / {row.get('dataset')}: text edit {_edit(text)} "
                     f"({text_n} page{'s' if text_n != 1 else ''}); reading order edit {_edit(order)} ({order_n}); "
                     f"{table_part}; {formula_part}; {evaluated} page{'s' if evaluated != 1 else ''} evaluated")
    return lines


def _e(value: Any) -> str:
    """Escaped for HTML, control characters shown as marks (as :func:`pytest_ocrmetrics.reporting.html.e`)."""
    return html.escape(show_controls("" if value is None else str(value), keep="\n\t"), quote=True)


def _cut(value: Any) -> str:
    text = value if isinstance(value, str) else ""
    return text if len(text) <= MAX_BLOCK_TEXT else text[:MAX_BLOCK_TEXT] + f" … ({len(text) - MAX_BLOCK_TEXT:,} more)"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(float(value)):
        return None
    return float(value)


def omnidoc_blocks_html(doc: Mapping[str, Any]) -> str:
    """A page's matched blocks side by side (ground truth | prediction, each block's edit distance, a table's TEDS
    and TEDS-S), from the document record's ``details["omnidoc"]``; empty for any other document.

    >>> page = omnidoc_blocks_html({"details": {"omnidoc": {"absent": ["formula_edit"], "matches": [
    ...     {"category": "table", "ground_truth": "<table>", "prediction": "<table>", "edit": 0.0, "teds": 1.0,
    ...      "teds_s": 1.0}]}}})
    >>> "omnidoc-blocks" in page and "100.0%" in page and "no display formula" in page
    True
    """
    details = doc.get("details")
    omnidoc = details.get("omnidoc") if isinstance(details, Mapping) else None
    if not isinstance(omnidoc, Mapping):
        return ""
    matches = [m for m in omnidoc.get("matches") or () if isinstance(m, Mapping)]
    absent = [str(name) for name in omnidoc.get("absent") or ()]
    lacks = []
    if "table_teds" in absent:
        lacks.append("no table")
    if "formula_edit" in absent:
        lacks.append("no display formula")
    if "text_block_edit" in absent:
        lacks.append("no text block")
    note = (f'<p class="note">This page has {_e(", ".join(lacks))}: those metrics have no value for it (not 0); '
            "the run's means are over the pages that have the element.</p>" if lacks else "")
    rows = []
    for number, match in enumerate(matches[:MAX_BLOCKS], start=1):
        edit, teds, teds_s = (_number(match.get(key)) for key in ("edit", "teds", "teds_s"))
        rows.append(
            f'<tr data-category="{_e(match.get("category"))}"><td class="num">{number}</td>'
            f'<td>{_e(match.get("category"))}</td>'
            f'<td><pre class="block">{_e(_cut(match.get("ground_truth")))}</pre></td>'
            f'<td><pre class="block">{_e(_cut(match.get("prediction")))}</pre></td>'
            f'<td class="num" data-sort="{"" if edit is None else repr(edit)}">{_edit(edit)}</td>'
            f'<td class="num">{_percent(teds) if teds is not None else ""}</td>'
            f'<td class="num">{_percent(teds_s) if teds_s is not None else ""}</td></tr>')
    more = (f'<p class="note">Only the first {MAX_BLOCKS} of {len(matches)} matched blocks are listed; the run file '
            "has them all.</p>" if len(matches) > MAX_BLOCKS else "")
    table = ("" if not rows else
             '<div class="scroll"><table class="data small omnidoc-blocks"><thead><tr><th class="num">#</th>'
             '<th>category</th><th>ground truth</th><th>prediction</th>'
             f'<th class="num">edit {_direction("text_block_edit")}</th>'
             f'<th class="num">TEDS {_direction("table_teds")}</th>'
             f'<th class="num">TEDS-S {_direction("table_teds_s")}</th></tr></thead>'
             f'<tbody>{"".join(rows)}</tbody></table></div>')
    empty = "" if rows else '<p class="note">No block of this page was matched.</p>'
    return f'<div class="omnidoc"><h4>OmniDocBench blocks (ground truth vs prediction)</h4>{note}{table}{empty}{more}</div>'


def _direction(metric: str) -> str:
    spec = METRICS.get(metric)
    return "" if spec is None else ("\u2193" if spec.lower_is_better else "\u2191")
