"""Character confusions in the HTML report: a heatmap per engine x dataset and a document's most frequent pairs."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.reporting.html.markup import e

CONFUSION_PAIRS = 24  # most frequent (reference, output) pairs per confusion heatmap


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


def confusions_section(documents: Sequence[Mapping[str, Any]]) -> str:
    """A character confusion heatmap per engine x dataset; empty when no document recorded confusions."""
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


def top_confusions(doc: Mapping[str, Any]) -> str:
    """The document's most frequent confusions, or empty."""
    top = sorted((c for c in doc.get("confusions") or [] if len(c) >= 3), key=lambda c: -int(c[2]))[:8]
    return " \u00b7 ".join(f"{_visible(str(c[0] or ''))}\u2192{_visible(str(c[1] or ''))} \u00d7{int(c[2])}"
                            for c in top)
