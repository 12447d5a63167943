"""The SVG charts of the HTML report (reporting/charts.py): binning, counts, escaping, bounded size, valid XML."""

from __future__ import annotations

import random
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from pytest_ocrmetrics.reporting.charts import (
    Bar,
    PairedPoint,
    _title_width,
    bars_svg,
    choose_points,
    escape,
    histogram_bins,
    histogram_svg,
    nice_step,
    scatter_svg,
    tick_label,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(1)</script>\x00\x1b[31m\u202e\ud800\ufffe&\"'"


def parse(svg: str) -> ET.Element:
    """The chart as XML (it must be well-formed: no raw control characters, surrogates or unescaped markup)."""
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img" and root.get("aria-label")
    assert float(root.get("width") or 0) > 0 and float(root.get("height") or 0) > 0
    return root


def nodes(root: ET.Element) -> int:
    return sum(1 for _ in root.iter())


def titles(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}title")]


def test_bins_are_round_cover_every_value_and_count_right() -> None:
    values = [0.0, 0.049, 0.05, 0.1, 0.3, float("nan"), float("inf")]
    bins = histogram_bins(values, bins=20)
    assert [round(b.low, 10) for b in bins[:3]] == [0.0, 0.02, 0.04]  # step 0.02 covers 0.3 in 15 bins
    assert len(bins) == 15 and round(bins[-1].high, 10) == 0.3
    assert sum(b.count for b in bins) == 5  # non-finite values left out
    by_low = {round(b.low, 10): b.count for b in bins}
    assert by_low[0.0] == 1 and by_low[0.04] == 2 and by_low[0.1] == 1  # 0.049 and 0.05 share [0.04, 0.06)
    assert by_low[0.28] == 1  # the largest value is in the last bin, not past it
    assert all(b.high > b.low for b in bins)


@pytest.mark.parametrize("values", [[0.0] * 5, [0.2] * 3, [-0.5, 0.5], [1e-9, 3.0], [7.0]])
def test_bins_edge_cases_keep_every_value(values: list[float]) -> None:
    bins = histogram_bins(values, bins=20)
    assert 1 <= len(bins) <= 21 and sum(b.count for b in bins) == len(values)
    assert bins[0].low <= min(values) and bins[-1].high >= max(values)


def test_histogram_counts_and_units_in_percent() -> None:
    rng = random.Random(3)
    values = [rng.random() * 0.4 for _ in range(1000)]
    root = parse(histogram_svg(values, metric="cer", label="tesseract / receipts", markers=[("median", 0.2)]))
    bar_titles = [t for t in titles(root) if t.startswith("CER ")]
    counts = [int(re.search(r": ([\d,]+) document", t).group(1).replace(",", "")) for t in bar_titles]  # type: ignore[union-attr]
    assert sum(counts) == 1000 and len(bar_titles) <= 20
    ticks = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "tick"]
    assert "0%" in ticks and any(t and t.endswith("%") and t != "0%" for t in ticks)
    assert "median 20.00%" in titles(root)
    assert "over 1,000 documents" in "".join(root.itertext())


@pytest.mark.parametrize("documents", [1, 2, 3, 7, 9, 10, 23, 90, 1001])
def test_histogram_count_ticks_are_whole_numbers_where_they_are_drawn(documents: int) -> None:
    """The vertical axis counts documents: each tick is a whole number and its label says the value it is drawn at
    (nine documents used to get ticks at 2.5 and 7.5 labelled "2" and "8")."""
    root = parse(histogram_svg([0.1] * documents, metric="cer", label="e / d"))
    y_ticks = [(float(t.get("y") or 0), t.text or "") for t in root.iter(f"{SVG}text")
               if t.get("class") == "tick" and t.get("text-anchor") == "end"]
    labels = [int(label.replace(",", "")) for _, label in y_ticks]
    assert labels[0] == 0 and labels == sorted(set(labels)) and labels[-1] <= documents
    steps = {b - a for a, b in zip(labels, labels[1:])}
    assert len(steps) <= 1  # evenly spaced whole numbers
    positions = [y for y, _ in y_ticks]
    if len(labels) > 2:  # drawn evenly too: a label stands at its own value
        gaps = [round(b - a, 1) for a, b in zip(positions, positions[1:])]
        assert max(gaps) - min(gaps) <= 0.2
    bar = next(r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar")
    top = float(bar.get("y") or 0)
    zero = positions[0] - 4
    if len(labels) > 1:  # the bar's top, at `documents`, is where the axis puts that count
        per_document = (zero - (positions[1] - 4)) / labels[1]
        assert abs((zero - top) - documents * per_document) <= 0.2


def test_empty_inputs_say_so() -> None:
    assert "no scored document" in histogram_svg([], metric="cer", label="x")
    assert "no document in both runs" in scatter_svg([], metric="cer", label="x")
    assert "no tag with a value" in bars_svg([], metric="cer", label="x")


def test_nice_steps_and_ticks() -> None:
    assert nice_step(0.3, 20) == 0.02 and nice_step(1.0, 4) == 0.25 and nice_step(12, 4) == 5.0
    assert tick_label("cer", 0.15, 0.05) == "15%" and tick_label("cer", 0.125, 0.025) == "12.5%"
    assert tick_label("token_ratio", 2.0, 0.5) == "2.0"


def test_names_are_escaped_in_text_and_attributes() -> None:
    assert escape(HOSTILE) == ("&lt;script&gt;alert(1)&lt;/script&gt;\u2400\u241b[31m\u27e8RLO\u27e9\ufffd\ufffd"
                               "&amp;&quot;&#x27;")
    charts = [
        histogram_svg([0.1], metric="cer", label=HOSTILE),
        scatter_svg([PairedPoint(HOSTILE, 0.1, 0.3, "regression")], metric="cer", label=HOSTILE),
        bars_svg([Bar(HOSTILE, 0.2, 3)], metric="cer", label=HOSTILE),
    ]
    for svg in charts:
        assert "<script" not in svg and "\x00" not in svg and "\x1b" not in svg and "\u202e" not in svg
        svg.encode("utf-8")  # no lone surrogate left
        root = parse(svg)  # well-formed: every name escaped
        assert "<script>alert(1)</script>" in root.get("aria-label", "") + "".join(root.itertext())
    scatter = parse(charts[1])
    assert any(t.startswith("<script>alert(1)</script>") and "regression" in t for t in titles(scatter))


def test_scatter_highlights_regressions_and_marks_the_worse_side() -> None:
    points = [PairedPoint("same", 0.1, 0.1), PairedPoint("worse", 0.1, 0.4, "regression"),
              PairedPoint("better", 0.3, 0.05, "improvement")]
    root = parse(scatter_svg(points, metric="cer", label="e / d"))
    circles = {c.get("class"): (c.find(f"{SVG}title").text or "") for c in root.iter(f"{SVG}circle")}  # type: ignore[union-attr]
    assert circles["pt worse"].startswith("worse: 10.00% \u2192 40.00% (+30.00 pp, regression)")
    assert circles["pt better"].startswith("better:") and circles["pt"].startswith("same:")
    zone = next(root.iter(f"{SVG}polygon"))
    diagonal = next(line for line in root.iter(f"{SVG}line") if line.get("class") == "diagonal")
    x0, y0 = float(diagonal.get("x1") or 0), float(diagonal.get("y1") or 0)
    x1, y1 = float(diagonal.get("x2") or 0), float(diagonal.get("y2") or 0)
    # lower is better: the shaded corner is top left (this run above the baseline); higher is better: bottom right
    assert zone.get("points", "").split()[-1] == f"{x0:g},{y1:g}"
    f1 = parse(scatter_svg(points, metric="field_f1", label="e / d"))
    assert next(f1.iter(f"{SVG}polygon")).get("points", "").split()[-1] == f"{x1:g},{y0:g}"
    assert "all 3 documents drawn; 1 regression in red" in "".join(root.itertext())


def test_choose_points_prefers_regressions_then_most_moved() -> None:
    points = ([PairedPoint(f"r{i}", 0.1, 0.1 + i / 100, "regression") for i in range(5)]
              + [PairedPoint(f"m{i}", 0.5, 0.5 - i / 10) for i in range(5)])
    chosen = [p.document for p in choose_points(points, metric="cer", max_points=7)]
    assert chosen == ["r4", "r3", "r2", "r1", "r0", "m4", "m3"]


def test_twenty_thousand_documents_stay_small() -> None:
    rng = random.Random(7)
    values = [rng.betavariate(1.2, 12) for _ in range(20_000)]
    points = [PairedPoint(f"doc{i:05d}", v, max(0.0, v + rng.gauss(0, 0.02)),
                          "regression" if i % 97 == 0 else "") for i, v in enumerate(values)]
    regressions = sum(p.status == "regression" for p in points)
    histogram = parse(histogram_svg(values, metric="cer", label="e / d"))
    scatter = parse(scatter_svg(points, metric="cer", label="e / d", max_points=400, grid=24))
    bars = parse(bars_svg([Bar(f"tag{i}", rng.random(), 10) for i in range(500)], metric="cer", label="e / d"))
    assert nodes(histogram) < 150
    circles = list(scatter.iter(f"{SVG}circle"))
    cells = [r for r in scatter.iter(f"{SVG}rect") if r.get("class") == "cell"]
    assert len(circles) == 400 and 0 < len(cells) <= 24 * 24
    assert nodes(scatter) < 2 * (400 + 24 * 24) + 100
    assert sum(c.get("class") == "pt worse" for c in circles) == regressions  # every regression drawn
    counted = sum(int(re.match(r"([\d,]+) document", t).group(1).replace(",", ""))  # type: ignore[union-attr]
                  for t in titles(scatter) if re.match(r"[\d,]+ documents?:", t))
    assert counted == 20_000  # the grid counts every document
    text = " ".join(scatter.itertext())
    assert f"400 of 20,000 documents drawn as points: all {regressions} regressions, then the most moved" in text
    assert "the shaded cells count all 20,000" in text
    assert len([r for r in bars.iter(f"{SVG}rect") if r.get("class") == "bar"]) == 30
    assert "30 worst of 500 tags" in " ".join(bars.itertext())


def test_bars_worst_first_for_both_directions() -> None:
    bars = [Bar("a", 0.1, 1), Bar("b", 0.3, 2), Bar("c", 0.2, 3)]
    order = [t.split(":")[0] for t in titles(parse(bars_svg(bars, metric="cer", label="x")))]
    assert order == ["b", "c", "a"]
    order = [t.split(":")[0] for t in titles(parse(bars_svg(bars, metric="field_f1", label="x")))]
    assert order == ["a", "c", "b"]
    long = "x" * 60
    root = parse(bars_svg([Bar(long, 0.5, 1)], metric="cer", label="x"))
    assert long in titles(root)[0] and long not in "".join(root.itertext()).replace(titles(root)[0], "")


@pytest.mark.parametrize("make", [
    lambda label: histogram_svg([0.1, 0.2], metric="cer", label=label),
    lambda label: scatter_svg([PairedPoint("a", 0.1, 0.3, "regression")], metric="cer", label=label),
    lambda label: bars_svg([Bar("clean", 0.2, 3)], metric="cer", label=label),
])
def test_a_long_engine_or_dataset_name_is_cut_in_the_title_not_the_metric(make: Any) -> None:
    # the title line is clipped at the chart's right edge: a long label loses its end (an ellipsis, the whole title
    # in the tooltip), never what the chart shows
    short = parse(make("e / d"))
    (title,) = [t for t in short.iter(f"{SVG}text") if t.get("class") == "chart-title"]
    assert title.text is not None and title.text.startswith("e / d: CER") and title.find(f"{SVG}title") is None
    for label in ("rapidocr / example_suites/receipts/data/with/a/long/folder", "引擎 / 收据数据集" * 6, "x" * 100_000):
        root = parse(make(label))
        (title,) = [t for t in root.iter(f"{SVG}text") if t.get("class") == "chart-title"]
        tooltip = title.find(f"{SVG}title")
        assert tooltip is not None and tooltip.tail is not None
        kept, rest = tooltip.tail.split("\u2026: ", 1)
        assert rest.startswith("CER") and tooltip.text == f"{label}: {rest}" and kept and label.startswith(kept)
        assert _title_width(tooltip.tail) <= float(root.get("width", "0")) - float(title.get("x", "0"))
