"""The facts section of the HTML report: olmOCR-bench page-level facts, the headline per engine x dataset, pass
rates per fact type and per JSONL file, and every fact (failing first) with a filter by type and verdict."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.reporting.html.markup import e, sort_value

MAX_FACT_TEXT = 1_000  # characters of a fact's explanation or excerpt shown in the facts table


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
            cells.append(f'<td class="num" data-sort="{sort_value(value) if isinstance(value, (int, float)) else ""}">'
                         f"{e(_rate(value))}</td>")
        body.append(f"<tr><td>{e(name)}</td>{''.join(cells)}</tr>")
    return (f'<div><table class="data small" id="{table_id}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>')


def _mappings(value: Any) -> list[Mapping[str, Any]]:
    """The mappings of ``value`` when it is a list (a hostile run file may hold anything there), else none."""
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def facts_section(run: Mapping[str, Any], anchors: Mapping[tuple[str, str, str], str], max_rows: int) -> str:
    """The run's page-level facts (``facts`` and ``facts_summary``); empty when the run has none."""
    facts = _mappings(run.get("facts"))
    rows = _mappings(run.get("facts_summary"))
    if not facts and not rows:
        return ""
    parts = _summary_parts(rows) if rows else []
    if facts:
        parts.append(_facts_table(facts, anchors, max_rows))
    note = ('<p class="note">Page-level facts (olmOCR-bench): the score is the benchmark\'s headline, the mean of the '
            'pass rates per JSONL file (the added baseline facts are a file of their own), with its bootstrap '
            'interval. A fact checked on several repeats of the output passes when most of them pass; it is flaky '
            'when they disagree.</p>')
    return f'<section id="facts"><h2>Facts{e(_heading(facts))}</h2>{note}{"".join(parts)}</section>'


def _heading(facts: Sequence[Mapping[str, Any]]) -> str:
    """`` (5: 3 passed, 2 failed, 1 flaky)`` after the section's title; empty without facts."""
    if not facts:
        return ""
    failed = sum(1 for f in facts if f.get("passed") is False)
    not_checked = sum(1 for f in facts if f.get("passed") is None)
    flaky = sum(1 for f in facts if f.get("flaky"))
    return (f" ({len(facts)}: {len(facts) - failed - not_checked} passed, {failed} failed"
            + (f", {not_checked} not checked" if not_checked else "")
            + (f", {flaky} flaky" if flaky else "") + ")")


def _summary_parts(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The headline per engine x dataset with its interval and counts, a note per row not fully checked, and the
    pass rates per fact type and per JSONL file."""
    from pytest_ocrmetrics.metrics.facts.summary import coverage_text

    show_unchecked = any(row.get("unchecked") for row in rows)
    head = "".join(f'<th{cls}>{label}</th>' for label, cls in (
        ("Engine", ""), ("Dataset", ""), ("Score", ' class="num"'), ("Interval", ' class="num"'),
        ("Passed", ' class="num"'), ("Facts", ' class="num"'), ("Flaky", ' class="num"'))
        + ((("Unchecked", ' class="num"'),) if show_unchecked else ()))
    body = [_summary_row(row, show_unchecked) for row in rows]
    parts = [f'<div class="scroll"><table class="data" id="facts-summary-table"><thead><tr>{head}</tr></thead>'
             f'<tbody>{"".join(body)}</tbody></table></div>']
    parts += [f'<p class="note not-checked"><b>Not checked</b> ({e(row.get("engine"))} / {e(row.get("dataset"))}): '
              f'the score is {e(coverage_text(row))}</p>' for row in rows if row.get("not_checked")]
    rates = _rates_table("facts-by-type-table", "Fact type", rows, "by_type") + _rates_table(
        "facts-by-group-table", "Group (JSONL file)", rows, "by_group")
    if rates:
        parts.append(f'<div class="grid2 facts-rates">{rates}</div>')
    return parts


def _summary_row(row: Mapping[str, Any], show_unchecked: bool) -> str:
    """One engine x dataset of the facts' summary: headline, interval, passed / total / flaky (/ unchecked)."""
    interval = row.get("interval")
    shown = (f"{_rate(interval[0])} .. {_rate(interval[1])}"
             if isinstance(interval, (list, tuple)) and len(interval) == 2 else "-")
    counts = "".join(f'<td class="num">{e(_count(row.get(key)))}</td>'
                     for key in ("passed", "total", "flaky") + (("unchecked",) if show_unchecked else ()))
    return (f'<tr><td>{e(row.get("engine"))}</td><td>{e(row.get("dataset"))}</td>'
            f'<td class="num"><b>{e(_rate(row.get("headline")))}</b></td><td class="num">{e(shown)}</td>'
            f'{counts}</tr>')


def _facts_table(facts: Sequence[Mapping[str, Any]], anchors: Mapping[tuple[str, str, str], str],
                 max_rows: int) -> str:
    """Every fact (the first ``max_rows``, failing first) with a filter by type and by passed / failed / flaky; rows
    carry ``data-type`` and ``data-verdict`` for it, and all are visible without JavaScript."""
    ordered = sorted(facts, key=_fact_order)  # stable: the run's order within each group
    types = sorted({str(f.get("type")) for f in facts})
    head = "".join(f'<th{cls} data-label="{label.lower()}"><button type="button" class="sort">{label}</button></th>'
                   for label, cls in (("Verdict", ""), ("Engine", ""), ("Document", ""), ("Fact", ""), ("Type", ""),
                                      ("Explanation", ""), ("Excerpt", "")))
    body = [_fact_row(fact, anchors) for fact in ordered[:max_rows]]
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


def _fact_row(fact: Mapping[str, Any], anchors: Mapping[tuple[str, str, str], str]) -> str:
    """One fact's row: its verdict (with flaky / unchecked marks and how the repeats voted), engine, document (a
    link to its detail view when it has one), id, type, explanation with notes, and the output excerpt."""
    passed = fact.get("passed") is True
    verdict = "passed" if passed else ("unchecked" if fact.get("passed") is None else "failed")
    label = "not checked" if verdict == "unchecked" else verdict
    repeats = _mappings(fact.get("repeats"))
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
    return (f'<tr data-type="{e(fact.get("type"))}" data-verdict="{" ".join(tokens)}">'
            f'<td data-sort="{verdict}"{title_attr}><span class="badge {verdict}">{label}</span>{"".join(marks)}</td>'
            f'<td>{e(fact.get("engine"))}</td><td data-sort="{e(document)}">{doc_html}</td>'
            f'<td class="fact-id" title="{e(fact.get("source"))}">{e(fact.get("id"))}</td>'
            f'<td>{e(fact.get("type"))}</td>'
            f'<td class="explanation">{e(_cut(fact.get("explanation")))}{notes_html}</td><td>{excerpt_html}</td></tr>')
