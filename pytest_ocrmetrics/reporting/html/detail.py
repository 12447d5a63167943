"""A document's detail view in the HTML report: reference and output side by side with words highlighted, the page
image and the metrics with their baseline deltas; and which detail views the report holds (:func:`detail_blocks`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Collection, Iterable, Mapping, Sequence

from pytest_ocrmetrics.gating import Comparison
from pytest_ocrmetrics.reporting.common import (
    direction_arrow,
    format_delta,
    format_value,
)
from pytest_ocrmetrics.reporting.highlight import Token, highlight_words
from pytest_ocrmetrics.reporting.html.confusions import top_confusions
from pytest_ocrmetrics.reporting.html.markup import ChangeClasses, e, metric_title
from pytest_ocrmetrics.reporting.html.thumbnails import image_html
from pytest_ocrmetrics.reporting.images import ImageFinder
from pytest_ocrmetrics.reporting.omnidoc import omnidoc_blocks_html
from pytest_ocrmetrics.runfile.read import doc_key

MAX_TEXT_CHARS = 20_000  # per text in a detail view


SUMMARY_METRICS = 4  # metrics named on a closed detail view's summary line


def text_pane(title: str, tokens: Iterable[Token] | None, raw: str | None, missing: str) -> str:
    """One text of a detail view with its words highlighted, or a note (``missing``) when there is no text."""
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


LEGEND = ('<div class="legend"><span class="sw w-exact">exact</span> normal text, no highlight: word found as is '
           '<span class="sw w-fuzzy">fuzzy</span> purple: found within the allowed character distance (hover: the '
           'other side) <span class="sw w-unmatched">unmatched</span> red: missed in the reference / spurious in the '
           'output</div>')


def reading_extras(doc: Mapping[str, Any]) -> str:
    """Time, cache, confidence and truncation of one reading, on one line."""
    extras = [f"time {doc.get('elapsed_s', 0):.2f}s"]
    if doc.get("cached"):
        extras.append("cached output")
    if doc.get("confidence") is not None:
        extras.append(f"confidence {doc['confidence']:.3f}")
    if doc.get("truncated"):
        extras.append("output truncated")
    return " · ".join(extras)


def shown_text(value: Any) -> str | None:
    """A text as a detail view shows it (cut at :data:`MAX_TEXT_CHARS`), ``None`` when it is not text."""
    return value[:MAX_TEXT_CHARS] if isinstance(value, str) else None


def cut_note(*texts: Any) -> str:
    """A note when any of ``texts`` was cut for the detail view, else empty."""
    if any(isinstance(t, str) and len(t) > MAX_TEXT_CHARS for t in texts):
        return f'<p class="note">texts cut at {MAX_TEXT_CHARS} characters in this view</p>'
    return ""


def document_detail(
    rank: int, doc: Mapping[str, Any], metrics: list[str], comparison: Comparison | None, changes: ChangeClasses,
    finder: ImageFinder, thumbnail_pixels: int, with_image: bool, word_options: Mapping[str, Any],
    images: dict[Path, tuple[str | None, str | None, str | None]],
) -> str:
    """The detail view of one document read by one engine: summary line, page image, metrics with baseline
    deltas, and reference and output side by side with words highlighted."""
    key = doc_key(doc)
    doc_metrics = doc.get("metrics") or {}
    old = comparison.baseline_metrics.get(key) if comparison else None
    summary_metrics = " · ".join(f"{metric_title(m)} {format_value(m, doc_metrics[m])}"
                                 for m in [m for m in metrics if m in doc_metrics][:SUMMARY_METRICS])
    summary = (f'<summary><span class="rank">#{rank}</span><span class="docid">{e(doc["id"])}</span>'
               f'<span class="badge {e(doc.get("outcome"))}">{e(doc.get("outcome"))}</span>'
               f'<span class="kv">{e(doc["engine"])} / {e(doc["dataset"])}</span>'
               f'<span class="metrics">{e(summary_metrics)}</span></summary>')
    # side column: image and metric table with baseline deltas
    side = [image_html(doc, finder, thumbnail_pixels, with_image, images)]
    shown = [m for m in metrics if m in doc_metrics]
    metric_table = ""
    if shown:
        head = "".join(f'<th class="num">{e(metric_title(m))} {direction_arrow(m)}</th>' for m in shown)
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
    side.append(f'<p class="kv">{e(reading_extras(doc))}</p>')
    confusions = top_confusions(doc)
    if confusions:
        side.append(f'<p class="kv">top confusions: <b>{e(confusions)}</b></p>')
    # texts
    reference, hypothesis = doc.get("reference"), doc.get("hypothesis")
    texts = []
    if doc.get("message"):
        texts.append(f'<pre class="message">{e(doc["message"])}</pre>')
    texts.append(metric_table)
    ref_shown, hyp_shown = shown_text(reference), shown_text(hypothesis)
    ref_tokens = hyp_tokens = None
    if ref_shown is not None and hyp_shown is not None:
        ref_tokens, hyp_tokens = highlight_words(ref_shown, hyp_shown, **word_options)
    elif ref_shown is not None:  # nothing to match against: the text as it is
        ref_tokens = [Token(ref_shown, "ignored")]
    elif hyp_shown is not None:
        hyp_tokens = [Token(hyp_shown, "ignored")]
    texts.append('<div class="pair">'
                 + text_pane("Reference (ground truth)", ref_tokens, ref_shown, "no reference text recorded")
                 + text_pane(f"Output ({doc['engine']})", hyp_tokens, hyp_shown, "no output recorded")
                 + "</div>" + cut_note(reference, hypothesis))
    texts.append(omnidoc_blocks_html(doc))  # an OmniDocBench page: its matched blocks and their scores
    return (f'<details class="doc" id="doc-{rank}">{summary}<div class="docbody"><div class="side">{"".join(side)}</div>'
            f'<div class="texts">{"".join(texts)}</div></div></details>')


def detail_blocks(
    documents: Sequence[Mapping[str, Any]], ordered: Sequence[Mapping[str, Any]], engines: Sequence[str],
    engines_of: Mapping[str, Collection[str]], limit: int,
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
