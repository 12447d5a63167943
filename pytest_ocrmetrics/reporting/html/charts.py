"""The charts section of the HTML report: per engine x dataset, the main metric's distribution, baseline against
this run per document and the main metric per tag, drawn by :mod:`~pytest_ocrmetrics.reporting.charts`."""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.gating import Comparison
from pytest_ocrmetrics.reporting import charts
from pytest_ocrmetrics.reporting.html.markup import ChangeClasses, e, metric_title

MAX_CHART_POINTS = 400  # documents drawn as points in a baseline scatter; past that, a grid counts them all


MAX_TAG_BARS = 30  # tags in a chart of the main metric per tag (worst first)


def _tag_bars(run: Mapping[str, Any], documents: Sequence[Mapping[str, Any]], engine: str, dataset: str,
              metric: str) -> list[charts.Bar]:
    """The main metric per tag for one engine x dataset: the micro value of the run's ``summary_by_tag`` rows, else
    (a run file without them) the mean over the documents carrying each tag."""
    rows = [row for row in run.get("summary_by_tag") or () if isinstance(row, Mapping)
            and str(row.get("engine")) == engine and str(row.get("dataset")) == dataset]
    bars = []
    for row in rows:
        stats = (row.get("metrics") or {}).get(metric) or {}
        value = stats.get("micro") if isinstance(stats, Mapping) else None
        if isinstance(value, (int, float)):
            bars.append(charts.Bar(str(row.get("tag")), float(value), int(row.get("evaluated") or stats.get("n") or 0)))
    if bars or rows:
        return bars
    values: dict[str, list[float]] = {}
    for doc in documents:
        tags = doc.get("tags")
        value = (doc.get("metrics") or {}).get(metric) if tags else None
        if isinstance(value, (int, float)):
            for tag in dict.fromkeys(str(t) for t in tags or ()):
                values.setdefault(tag, []).append(float(value))
    return [charts.Bar(tag, math.fsum(v) / len(v), len(v)) for tag, v in values.items()]


def charts_section(run: Mapping[str, Any], documents: Sequence[Mapping[str, Any]], metric: str | None,
                   comparison: Comparison | None, changes: ChangeClasses) -> str:
    """Per engine x dataset: the main metric's distribution over documents, baseline against this run per document
    (with a comparison) and the main metric per tag (when documents carry tags), as inline SVG
    (:mod:`~pytest_ocrmetrics.reporting.charts`); empty when no document has the metric."""
    if metric is None:
        return ""
    stats_by_group = {(str(row.get("engine")), str(row.get("dataset"))): (row.get("metrics") or {}).get(metric) or {}
                      for row in run.get("summary", []) or []}
    blocks = []
    tagged = False
    for (engine, dataset), docs in _groups(run, documents, metric).items():
        if not docs:
            continue
        label = f"{engine} / {dataset}"
        stats = stats_by_group.get((engine, dataset), {})
        markers = [(name, float(stats[key])) for name, key in (("median", "median"), ("corpus", "micro"))
                   if isinstance(stats.get(key), (int, float))]
        svgs = [charts.histogram_svg([float(d["metrics"][metric]) for d in docs], metric=metric, label=label,
                                     markers=markers)]
        if comparison is not None:
            svgs.append(_scatter(docs, engine, dataset, metric, comparison, changes))
        bars = _tag_bars(run, docs, engine, dataset, metric)
        if bars:
            tagged = True
            svgs.append(charts.bars_svg(bars, metric=metric, label=label, max_bars=MAX_TAG_BARS))
        blocks.append(f'<div class="chart-group"><h3>{e(label)}</h3><div class="charts">{"".join(svgs)}</div></div>')
    if not blocks:
        return ""
    parts = [f"the distribution of {metric_title(metric)} over documents (dashed: the median and the corpus value)"]
    if comparison is not None:
        parts.append("baseline against this run per document: points on the shaded side of the diagonal got worse, "
                     "red ones beyond tolerance (hover a point for its document)")
    if tagged:
        parts.append(f"{metric_title(metric)} per tag")
    return (f'<section id="charts"><h2>Charts</h2><p class="note">Per engine and dataset: {e("; ".join(parts))}.'
            f'</p>{"".join(blocks)}</section>')


def _groups(run: Mapping[str, Any], documents: Sequence[Mapping[str, Any]],
            metric: str) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """(engine, dataset) -> its evaluated documents with a number for ``metric``, in the summary's order first."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in run.get("summary", []) or []:  # the summary's order first
        groups.setdefault((str(row.get("engine")), str(row.get("dataset"))), [])
    for doc in documents:
        value = (doc.get("metrics") or {}).get(metric)
        if doc.get("outcome") in ("passed", "failed") and isinstance(value, (int, float)) and not isinstance(value, bool):
            groups.setdefault((str(doc.get("engine")), str(doc.get("dataset"))), []).append(doc)
    return groups


def _scatter(docs: Sequence[Mapping[str, Any]], engine: str, dataset: str, metric: str, comparison: Comparison,
             changes: ChangeClasses) -> str:
    """Baseline against this run per document of one engine x dataset, the ones beyond tolerance marked."""
    status = {"worse": "regression", "better": "improvement"}
    baseline = comparison.baseline_metrics
    moved = {key[2]: status[css] for key, css in changes.items()
             if key[0] == dataset and key[1] == engine and key[3] == metric and css in status}
    points = []
    for doc in docs:
        doc_id = str(doc["id"])
        old = (baseline.get((dataset, engine, doc_id)) or {}).get(metric)
        if isinstance(old, (int, float)):
            points.append(charts.PairedPoint(doc_id, float(old), float(doc["metrics"][metric]), moved.get(doc_id, "")))
    from pytest_ocrmetrics.gating.comparison import engines_text

    baseline_engine = dict((new, old) for old, new in comparison.engine_map).get(engine)  # --ocr-baseline-engine
    return charts.scatter_svg(points, metric=metric, label=f"{engines_text(engine, baseline_engine)} / {dataset}",
                              max_points=MAX_CHART_POINTS)
