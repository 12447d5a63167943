"""Inline SVG charts for the HTML report: pure functions from numbers to SVG strings.

Three charts, each bounded in size however many documents a run has:

- :func:`histogram_svg`: the distribution of one metric over documents, binned (at most ``bins`` bars);
- :func:`scatter_svg`: baseline against this run per document, the diagonal drawn, the side where the metric got
  worse shaded; regressions red, improvements green, each point with its document id on hover (an SVG
  ``<title>``). Past ``max_points`` documents every document is counted in a grid of shaded cells and only the
  most moved documents (regressions first) are drawn as points; the chart says how many;
- :func:`bars_svg`: one bar per tag (at most ``max_bars``, worst first).

No script, no network, no style attribute (the report's Content-Security-Policy allows its own stylesheet only):
colours come from classes the report's stylesheet defines (``assets.CSS``), with presentation attributes where a
value varies per element. Every name written into a chart (document ids, tags, engine and dataset names) goes
through :func:`escape`: control characters shown as marks, lone surrogates replaced, HTML-escaped. Axis labels are
in the metric's unit (percent for fractions, as :func:`~pytest_ocrmetrics.reporting.common.format_value`).
Nothing here imports pytest.

>>> svg = histogram_svg([0.01, 0.02, 0.2], metric="cer", label="tesseract / receipts")
>>> svg.startswith('<svg class="chart histogram" role="img"') and svg.count('class="bar"') <= 20
True
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, NamedTuple, Sequence

from pytest_ocrmetrics.core.safe_text import clean_text, show_controls
from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.reporting.common import format_delta, format_value

__all__ = ["Bin", "PairedPoint", "Bar", "escape", "nice_step", "histogram_bins", "choose_points", "histogram_svg",
           "scatter_svg", "bars_svg", "tick_label"]

WIDTH, HEIGHT = 400, 290  # of each chart, in CSS pixels (scaled down to the column when narrower)
SCATTER_SIZE = 330
_LEFT, _RIGHT, _TOP, _BOTTOM = 52, 14, 30, 44  # plot margins: room for the y ticks, the title and the x label
MAX_LABEL = 28  # characters of a tag shown beside its bar (the whole name is in the bar's tooltip)


def escape(value: object) -> str:
    """Any value as text safe inside SVG text and attribute values (and as XML): lone surrogates and
    non-characters replaced by U+FFFD, control characters shown as marks, ``<>&"'`` escaped.

    >>> escape('<script>\\x1b\\ud800"')
    '&lt;script&gt;␛�&quot;'
    """
    text = clean_text("" if value is None else str(value))[0]
    return html.escape(show_controls(text), quote=True)


def _unit(metric: str) -> str:
    spec = METRICS.get(metric)
    return spec.unit if spec is not None else "ratio"


def _title(metric: str) -> str:
    spec = METRICS.get(metric)
    return spec.title if spec is not None else metric


def _lower_is_better(metric: str) -> bool:
    spec = METRICS.get(metric)
    return spec.lower_is_better if spec is not None else True


def nice_step(span: float, count: int) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten with ``count`` steps covering ``span``.

    >>> nice_step(1.0, 20), nice_step(0.37, 20), nice_step(7, 5), nice_step(0, 10)
    (0.05, 0.02, 2.0, 0.1)
    """
    if not span > 0 or not math.isfinite(span):
        span = 1.0
    raw = span / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        step = factor * power
        if step * count >= span * (1 - 1e-9):
            return float(f"{step:.12g}")  # 0.1 * 0.5 -> 0.05, not 0.05000000000000001
    return 10.0 * power  # pragma: no cover - 10 x power always covers


def tick_label(metric: str, value: float, step: float) -> str:
    """An axis tick in the metric's unit, with as many decimals as the tick step needs.

    >>> tick_label("cer", 0.05, 0.05), tick_label("cer", 0.025, 0.025), tick_label("token_ratio", 1.5, 0.5)
    ('5%', '2.5%', '1.5')
    """
    unit = _unit(metric)
    scale, suffix = (100.0, "%") if unit == "fraction" else (1.0, "")
    scaled = step * scale
    decimals = next((d for d in range(7) if abs(round(scaled, d) - scaled) <= 1e-9 * max(1.0, abs(scaled))), 6)
    return f"{value * scale:.{decimals}f}{suffix}"


@dataclass(frozen=True)
class Bin:
    """One bar of a histogram: documents with ``low <= value < high`` (the last bin includes ``high``)."""

    low: float
    high: float
    count: int


def histogram_bins(values: Iterable[float], *, bins: int = 20) -> list[Bin]:
    """``values`` (non-finite ones left out) counted in at most ``bins`` bins of a round width, starting at 0 (or
    below, for negative values) and ending at the first edge at or past the largest value.

    >>> [(b.low, b.high, b.count) for b in histogram_bins([0.0, 0.04, 0.05, 0.3], bins=4)]
    [(0.0, 0.1, 3), (0.1, 0.2, 0), (0.2, 0.30000000000000004, 1)]
    """
    finite = [float(v) for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not finite:
        return []
    low, high = min(finite), max(finite)
    start = 0.0 if low >= 0 else low
    step = nice_step(high - start if high > start else (abs(high) or 1.0), bins)
    if low < 0:
        start = math.floor(low / step) * step
        step = nice_step(high - start if high > start else step, bins)
        start = math.floor(low / step) * step
    count = max(1, min(bins, math.ceil((high - start) / step - 1e-9)))
    if start + count * step < high:  # rounding: never lose the largest value
        count += 1
    counts = [0] * count
    last, inverse = count - 1, 1.0 / step
    for value in finite:  # value >= start: int() truncates as floor would
        index = int((value - start) * inverse + 1e-9)
        counts[index if index < last else last] += 1
    return [Bin(start + i * step, start + (i + 1) * step, n) for i, n in enumerate(counts)]


def _svg_open(label: str, width: int, height: int, kind: str) -> str:
    return (f'<svg class="chart {kind}" role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">')


# an upper estimate of the advance of one character of a 12 px bold title (capitals and wide characters count 2 below)
_TITLE_CHAR_PX = 7.0


def _char_width(ch: str) -> float:
    return _TITLE_CHAR_PX * (2 if unicodedata.east_asian_width(ch) in "WF" else 1)


def _title_width(text: str) -> float:
    """``text``'s estimated width in a chart title, in pixels: East Asian wide and full-width characters count two."""
    return sum(map(_char_width, text))


def _chart_title(x: int, width: int, label: str, rest: str) -> str:
    """A chart's title, ``LABEL: REST``, starting at ``x`` in a chart ``width`` wide. When it would run past the right
    edge (an engine or dataset with a long name: the line is clipped there), the label is cut with an ellipsis so that
    ``REST`` (the metric and what is shown) stays whole; the whole title is then in the title's tooltip."""
    whole = f"{label}: {rest}"
    room = width - x - 6
    if _title_width(whole) <= room:
        return f'<text class="chart-title" x="{x}" y="16">{escape(whole)}</text>'
    budget, cut = room - _title_width(f"\u2026: {rest}"), 0
    for ch in label:  # the label's first characters that fit (a long name is never measured to its end)
        budget -= _char_width(ch)
        if budget < 0:
            break
        cut += 1
    shown = f"{label[:cut]}\u2026: {rest}" if cut else rest
    return f'<text class="chart-title" x="{x}" y="16"><title>{escape(whole)}</title>{escape(shown)}</text>'


def _fmt(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _ticks(low: float, high: float, count: int = 5, *, whole: bool = False) -> tuple[list[float], float]:
    """Ticks from ``low`` to ``high`` a :func:`nice_step` apart; ``whole``: for counts, a whole step (2.5 -> 3)."""
    step = nice_step(high - low, count)
    if whole:
        step = float(math.ceil(step))
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(0.0 if abs(value) < step * 1e-9 else value)
        value = first + len(ticks) * step
    return ticks, step


def histogram_svg(
    values: Sequence[float], *, metric: str, label: str, bins: int = 20,
    markers: Sequence[tuple[str, float]] = (),
) -> str:
    """The distribution of ``metric`` over documents as an SVG histogram (at most ``bins`` bars, each with its
    range and count on hover), with dashed vertical ``markers`` (name, value) such as the median; ``label`` names
    the engine x dataset in the title and the ``aria-label``."""
    binned = histogram_bins(values, bins=bins)
    n = sum(b.count for b in binned)
    left_out = len(values) - n
    arrow = "\u2193 lower is better" if _lower_is_better(metric) else "\u2191 higher is better"
    name = _title(metric)
    aria = f"Histogram of {name} over {n} documents, {label}"
    parts = [_svg_open(aria, WIDTH, HEIGHT, "histogram"),
             _chart_title(_LEFT, WIDTH, label, f"{name} over {n:,} documents")]
    x0, x1, y0, y1 = _LEFT, WIDTH - _RIGHT, HEIGHT - _BOTTOM, _TOP
    if not binned:
        parts.append(f'<text class="chart-note" x="{_LEFT}" y="{HEIGHT // 2}">no scored document</text></svg>')
        return "".join(parts)
    low, high = binned[0].low, binned[-1].high
    top = max(b.count for b in binned)
    y_ticks, _ = _ticks(0, top, 4, whole=True)  # documents: a tick at 2.5 was labelled "2"
    y_max = max(top, y_ticks[-1]) or 1

    def sx(v: float) -> float:
        return x0 + (v - low) / (high - low) * (x1 - x0)

    def sy(c: float) -> float:
        return y0 - c / y_max * (y0 - y1)

    for tick in y_ticks:
        parts.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{_fmt(sy(tick))}" y2="{_fmt(sy(tick))}"/>'
                     f'<text class="tick" x="{x0 - 4}" y="{_fmt(sy(tick) + 4)}" text-anchor="end">{tick:,.0f}</text>')
    unit_step = binned[0].high - binned[0].low
    for b in binned:
        if not b.count:
            continue
        share = b.count / n
        parts.append(
            f'<rect class="bar" x="{_fmt(sx(b.low) + 0.5)}" y="{_fmt(sy(b.count))}" '
            f'width="{_fmt(max(1.0, sx(b.high) - sx(b.low) - 1))}" height="{_fmt(max(0.5, y0 - sy(b.count)))}">'
            f'<title>{escape(name)} {tick_label(metric, b.low, unit_step)} to {tick_label(metric, b.high, unit_step)}: '
            f'{b.count:,} document{"s" if b.count != 1 else ""} ({share:.1%})</title></rect>')
    x_ticks, x_step = _ticks(low, high, 5)
    for tick in x_ticks:
        parts.append(f'<line class="axis" x1="{_fmt(sx(tick))}" x2="{_fmt(sx(tick))}" y1="{y0}" y2="{y0 + 4}"/>'
                     f'<text class="tick" x="{_fmt(sx(tick))}" y="{y0 + 16}" text-anchor="middle">'
                     f'{tick_label(metric, tick, x_step)}</text>')
    parts.append(f'<line class="axis" x1="{x0}" x2="{x1}" y1="{y0}" y2="{y0}"/>'
                 f'<line class="axis" x1="{x0}" x2="{x0}" y1="{y0}" y2="{y1}"/>')
    for i, (marker, value) in enumerate(markers):
        if value is None or not math.isfinite(value) or not low <= value <= high:
            continue
        x = _fmt(sx(value))
        parts.append(f'<line class="marker" x1="{x}" x2="{x}" y1="{y0}" y2="{y1}"><title>{escape(marker)} '
                     f'{escape(format_value(metric, value))}</title></line>'
                     f'<text class="marker-label" x="{x}" y="{y1 - 2 + 10 * i}" text-anchor="'
                     f'{"start" if sx(value) < (x0 + x1) / 2 else "end"}">{escape(marker)} '
                     f'{escape(format_value(metric, value))}</text>')
    note = f", {left_out} without a value left out" if left_out else ""
    parts.append(f'<text class="axis-label" x="{(x0 + x1) // 2}" y="{HEIGHT - 8}" text-anchor="middle">'
                 f'{escape(name)} per document ({arrow}){escape(note)}</text>'
                 f'<text class="axis-label" transform="rotate(-90)" x="{-(y0 + y1) // 2}" y="12" '
                 f'text-anchor="middle">documents</text></svg>')
    return "".join(parts)


class PairedPoint(NamedTuple):
    """One document in the baseline and in this run: its ``old`` and ``new`` value of a metric, and ``status``
    ``regression`` / ``improvement`` when the comparison judged it beyond tolerance (else empty). A named tuple:
    a chart of 20,000 documents makes 20,000 of them."""

    document: str
    old: float
    new: float
    status: str = ""


def choose_points(points: Sequence[PairedPoint], *, metric: str, max_points: int) -> list[PairedPoint]:
    """At most ``max_points`` points to draw: regressions first, then improvements, then the rest, each group most
    moved first (by how much worse or better, in the metric's direction).

    >>> pts = [PairedPoint("a", 0.1, 0.1), PairedPoint("b", 0.1, 0.5, "regression"), PairedPoint("c", 0.3, 0.1)]
    >>> [p.document for p in choose_points(pts, metric="cer", max_points=2)]
    ['b', 'c']
    """
    moved = sorted(points, key=lambda p: abs(p.new - p.old), reverse=True)  # stable: ties keep the given order
    chosen = [p for p in moved if p.status == "regression"][:max(0, max_points)]
    for status in ("improvement", ""):
        if len(chosen) < max_points:
            chosen += [p for p in moved if p.status == status][:max_points - len(chosen)]
    return chosen


def scatter_svg(
    points: Sequence[PairedPoint], *, metric: str, label: str, max_points: int = 400, grid: int = 24,
) -> str:
    """Baseline (x) against this run (y) per document for ``metric``, on one scale with the diagonal drawn and the
    worse side shaded. Up to ``max_points`` documents every one is a point; past that, all documents are counted in
    a ``grid`` x ``grid`` of shaded cells (each with its count on hover) and the ``max_points`` most moved are drawn
    as points, regressions first. The chart says how many points it draws of how many documents."""
    pts = [p for p in points if math.isfinite(p.old) and math.isfinite(p.new)]
    n = len(pts)
    name = _title(metric)
    lower = _lower_is_better(metric)
    regressions = sum(p.status == "regression" for p in pts)
    aria = (f"{name} per document, baseline against this run, {label}: {n} documents, "
            f"{regressions} regression{'s' if regressions != 1 else ''}")
    width, height = SCATTER_SIZE + _LEFT + _RIGHT, SCATTER_SIZE + _TOP + _BOTTOM + 40
    parts = [_svg_open(aria, width, height, "scatter"),
             _chart_title(_LEFT, width, label, f"{name}, baseline \u2192 now")]
    if not pts:
        parts.append(f'<text class="chart-note" x="{_LEFT}" y="{height // 2}">no document in both runs</text></svg>')
        return "".join(parts)
    olds, news = [p.old for p in pts], [p.new for p in pts]
    low = min(0.0, min(olds), min(news))
    high = max(max(olds), max(news))
    ticks, step = _ticks(low, high if high > low else low + 1, 5)
    if ticks[-1] < high or len(ticks) < 2:
        ticks.append(ticks[-1] + step)
    low, high = ticks[0], ticks[-1]
    x0, x1, y0, y1 = _LEFT, _LEFT + SCATTER_SIZE, _TOP + SCATTER_SIZE, _TOP
    frame = _Frame(low, high, x0, x1, y0, y1)
    parts += _scatter_axes(frame, ticks, step, metric, lower)
    drawn = pts
    if n > max_points:
        parts += _density_cells(frame, olds, news, metric, grid)
        drawn = choose_points(pts, metric=metric, max_points=max_points)
    for p in sorted(drawn, key=lambda p: {"regression": 2, "improvement": 1}.get(p.status, 0)):  # red on top
        css = {"regression": "pt worse", "improvement": "pt better"}.get(p.status, "pt")
        verdict = f", {p.status}" if p.status else ""
        parts.append(f'<circle class="{css}" cx="{_fmt(frame.sx(p.old))}" cy="{_fmt(frame.sy(p.new))}" r="3.2">'
                     f'<title>{escape(p.document)}: {escape(format_value(metric, p.old))} \u2192 '
                     f'{escape(format_value(metric, p.new))} ({escape(format_delta(metric, p.new - p.old))}'
                     f'{verdict})</title></circle>')
    parts.append(f'<rect class="frame" x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}"/>')
    notes = _scatter_notes(drawn, n, regressions)
    parts.append(f'<text class="axis-label" x="{(x0 + x1) // 2}" y="{y0 + 32}" text-anchor="middle">baseline '
                 f'{escape(name)}</text>'
                 f'<text class="axis-label" transform="rotate(-90)" x="{-(y0 + y1) // 2}" y="12" text-anchor="middle">'
                 f'this run {escape(name)}</text>'
                 + "".join(f'<text class="chart-note" x="{8}" y="{height - 5 - 13 * (len(notes) - 1 - i)}">'
                           f'{escape(note)}</text>' for i, note in enumerate(notes)) + "</svg>")
    return "".join(parts)


class _Frame(NamedTuple):
    """A scatter's plot area: values ``low``..``high`` on both axes, drawn from ``x0`` to ``x1`` and from ``y0``
    (bottom) to ``y1`` (top)."""

    low: float
    high: float
    x0: int
    x1: int
    y0: int
    y1: int

    def sx(self, v: float) -> float:
        return self.x0 + (v - self.low) / (self.high - self.low) * (self.x1 - self.x0)

    def sy(self, v: float) -> float:
        return self.y0 - (v - self.low) / (self.high - self.low) * (self.y0 - self.y1)


def _scatter_axes(frame: _Frame, ticks: Sequence[float], step: float, metric: str, lower: bool) -> list[str]:
    """The worse side of the diagonal shaded and labelled, the grid lines with their tick labels, the diagonal."""
    x0, x1, y0, y1 = frame.x0, frame.x1, frame.y0, frame.y1
    # the side of the diagonal where this run is worse: above it for lower-is-better metrics, below otherwise
    corner = f"{x0},{y1}" if lower else f"{x1},{y0}"
    parts = [f'<polygon class="worse-zone" points="{x0},{y0} {x1},{y1} {corner}"/>']
    worse_x, worse_y = (x0 + 8, y1 + 14) if lower else (x1 - 8, y0 - 8)
    parts.append(f'<text class="zone-label" x="{worse_x}" y="{worse_y}" text-anchor="{"start" if lower else "end"}">'
                 f'worse than the baseline</text>')
    for tick in ticks:
        y = _fmt(frame.sy(tick))
        parts.append(f'<line class="grid" x1="{x0}" x2="{x1}" y1="{y}" y2="{y}"/>'
                     f'<text class="tick" x="{x0 - 4}" y="{_fmt(frame.sy(tick) + 4)}" text-anchor="end">'
                     f'{tick_label(metric, tick, step)}</text>'
                     f'<text class="tick" x="{_fmt(frame.sx(tick))}" y="{y0 + 16}" text-anchor="middle">'
                     f'{tick_label(metric, tick, step)}</text>')
    parts.append(f'<line class="diagonal" x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}"/>')
    return parts


def _density_cells(frame: _Frame, olds: Sequence[float], news: Sequence[float], metric: str, grid: int) -> list[str]:
    """Every document counted in a ``grid`` x ``grid`` of shaded cells (log scale), each with its count on hover."""
    low, span = frame.low, frame.high - frame.low
    scale, last = grid / span, grid - 1
    cells = Counter((min(last, int((old - low) * scale)), min(last, int((new - low) * scale)))
                    for old, new in zip(olds, news))
    biggest = max(cells.values())
    size = (frame.x1 - frame.x0) / grid
    parts = []
    for (cx, cy), count in sorted(cells.items()):
        shade = 0.12 + 0.78 * math.log1p(count) / math.log1p(biggest)
        lo_old, hi_old = low + cx * span / grid, low + (cx + 1) * span / grid
        lo_new, hi_new = low + cy * span / grid, low + (cy + 1) * span / grid
        parts.append(
            f'<rect class="cell" x="{_fmt(frame.x0 + cx * size)}" y="{_fmt(frame.y0 - (cy + 1) * size)}" '
            f'width="{_fmt(size)}" height="{_fmt(size)}" fill-opacity="{shade:.2f}"><title>{count:,} document'
            f'{"s" if count != 1 else ""}: baseline {escape(format_value(metric, lo_old))} to '
            f'{escape(format_value(metric, hi_old))}, now {escape(format_value(metric, lo_new))} to '
            f'{escape(format_value(metric, hi_new))}</title></rect>')
    return parts


def _scatter_notes(drawn: Sequence[PairedPoint], n: int, regressions: int) -> list[str]:
    """What the chart draws: every document, or how many of them as points (which ones) over the counted cells."""
    if len(drawn) >= n:
        return [f"all {n:,} documents drawn; {regressions} regression{'s' if regressions != 1 else ''} in red"]
    shown_regressions = sum(p.status == "regression" for p in drawn)
    which = (f"all {regressions} regressions, then the most moved" if shown_regressions == regressions
             else f"the {shown_regressions} most moved of {regressions} regressions")
    return [f"{len(drawn):,} of {n:,} documents drawn as points:", f"{which};",
            f"the shaded cells count all {n:,} (hover for counts)"]


@dataclass(frozen=True)
class Bar:
    """One tag's bar: the metric's ``value`` over the ``documents`` carrying ``tag``."""

    tag: str
    value: float
    documents: int


def bars_svg(bars: Sequence[Bar], *, metric: str, label: str, max_bars: int = 30) -> str:
    """One horizontal bar per tag, worst first (at most ``max_bars``; the chart says how many of how many), each
    with its value and document count; the tag's whole name is in the bar's tooltip."""
    finite = [b for b in bars if isinstance(b.value, (int, float)) and math.isfinite(b.value)]
    lower = _lower_is_better(metric)
    ordered = sorted(finite, key=lambda b: (-b.value if lower else b.value, b.tag))
    shown = ordered[:max(1, max_bars)]
    name = _title(metric)
    row = 18
    height = _TOP + row * max(1, len(shown)) + 40
    label_width = 150
    aria = f"{name} per tag, {label}: {len(shown)} of {len(finite)} tags"
    parts = [_svg_open(aria, WIDTH, height, "bars"),
             _chart_title(8, WIDTH, label, f"{name} per tag")]
    if not shown:
        parts.append(f'<text class="chart-note" x="8" y="{height // 2}">no tag with a value</text></svg>')
        return "".join(parts)
    x0, x1 = label_width, WIDTH - 70
    top = max(max(b.value for b in shown), 0.0)
    ticks, step = _ticks(0.0, top if top > 0 else 1.0, 4)
    if ticks[-1] < top:
        ticks.append(ticks[-1] + step)
    high = ticks[-1] or 1.0

    def sx(v: float) -> float:
        return x0 + max(0.0, v) / high * (x1 - x0)

    bottom = _TOP + row * len(shown)
    for tick in ticks:
        parts.append(f'<line class="grid" x1="{_fmt(sx(tick))}" x2="{_fmt(sx(tick))}" y1="{_TOP - 4}" y2="{bottom}"/>'
                     f'<text class="tick" x="{_fmt(sx(tick))}" y="{bottom + 14}" text-anchor="middle">'
                     f'{tick_label(metric, tick, step)}</text>')
    for i, b in enumerate(shown):
        y = _TOP + i * row
        tag = show_controls(clean_text(b.tag)[0])
        short = tag if len(tag) <= MAX_LABEL else tag[:MAX_LABEL - 1] + "\u2026"
        parts.append(
            f'<text class="tick" x="{x0 - 6}" y="{y + 12}" text-anchor="end">{html.escape(short, quote=True)}</text>'
            f'<rect class="bar" x="{x0}" y="{y + 2}" width="{_fmt(max(1.0, sx(b.value) - x0))}" height="{row - 5}">'
            f'<title>{escape(b.tag)}: {escape(name)} {escape(format_value(metric, b.value))} over {b.documents:,} '
            f'document{"s" if b.documents != 1 else ""}</title></rect>'
            f'<text class="value" x="{_fmt(sx(b.value) + 4)}" y="{y + 12}">{escape(format_value(metric, b.value))}'
            f'</text>')
    arrow = "\u2193 lower is better" if lower else "\u2191 higher is better"
    more = f"; {len(shown)} worst of {len(finite)} tags" if len(shown) < len(finite) else ""
    parts.append(f'<line class="axis" x1="{x0}" x2="{x0}" y1="{_TOP - 4}" y2="{bottom}"/>'
                 f'<text class="axis-label" x="{(x0 + x1) // 2}" y="{bottom + 32}" text-anchor="middle">'
                 f'{escape(name)} ({arrow}){escape(more)}</text></svg>')
    return "".join(parts)
