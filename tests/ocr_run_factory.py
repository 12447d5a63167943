"""Hand-made JSON run files for the gating, report and CLI tests (valid against ``runfile/run_schema.json``).

A document is given by its metric values; counts for micro metrics are derived from the value and a denominator
(``size``), so micro aggregates recomputed from counts match the values.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Iterable, Mapping

from pytest_ocrmetrics.metrics.registry import METRIC_DEFINITIONS, METRICS


def make_doc(
    doc_id: str,
    metrics: Mapping[str, float],
    *,
    dataset: str = "receipts",
    engine: str = "tesseract",
    outcome: str = "passed",
    size: int = 100,
    reference: str | None = "TOTAL 12.50",
    hypothesis: str | None = "TOTAL 12.S0",
    image: str | None = None,
    confusions: Iterable[tuple[str, str, int]] = (),
    message: str | None = None,
) -> dict[str, Any]:
    counts: dict[str, dict[str, float]] = {}
    for name, value in metrics.items():
        spec = METRICS[name]
        if spec.aggregation == "micro" and spec.numerator and spec.denominator:
            counts[name] = {spec.numerator: round(value * size, 6), spec.denominator: float(size)}
    return {
        "id": doc_id,
        "dataset": dataset,
        "engine": engine,
        "nodeid": f"{dataset}::{engine}::{doc_id}",
        "outcome": outcome,
        "message": message,
        "metrics": dict(metrics),
        "counts": counts,
        "elapsed_s": 0.25,
        "cached": False,
        "image": image,
        "reference": reference,
        "hypothesis": hypothesis,
        "confusions": [list(c) for c in confusions],
    }


def _quantile(values: list[float], q: float) -> float:
    pos = (len(values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def summarize(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Summary rows per engine x dataset, computed the obvious way."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for doc in documents:
        groups.setdefault((doc["engine"], doc["dataset"]), []).append(doc)
    rows = []
    for (engine, dataset), docs in groups.items():
        scored = [d for d in docs if d["outcome"] in ("passed", "failed")]
        metrics: dict[str, dict[str, float]] = {}
        for name, spec in METRICS.items():
            values = sorted(d["metrics"][name] for d in scored if name in d["metrics"])
            if not values:
                continue
            if spec.aggregation == "micro" and spec.numerator:
                num = sum(d["counts"][name][spec.numerator] for d in scored if name in d["metrics"])
                den = sum(d["counts"][name][spec.denominator] for d in scored if name in d["metrics"])
                micro = num / den if den else statistics.fmean(values)
            else:
                micro = statistics.fmean(values)
            metrics[name] = {
                "micro": micro, "mean": statistics.fmean(values), "median": statistics.median(values),
                "p90": _quantile(values, 0.9), "p95": _quantile(values, 0.95), "min": values[0], "max": values[-1],
                "n": len(values), "ci_low": values[0], "ci_high": values[-1],
            }
        rows.append({
            "engine": engine, "dataset": dataset, "documents": len(docs),
            "passed": sum(d["outcome"] == "passed" for d in docs),
            "failed": sum(d["outcome"] == "failed" for d in docs),
            "errors": sum(d["outcome"] == "error" for d in docs),
            "skipped": sum(d["outcome"] == "skipped" for d in docs),
            "filtered": sum(d["outcome"] == "filtered" for d in docs),
            "metrics": metrics,
        })
    return rows


def make_run(documents: list[dict[str, Any]], *, engines: Iterable[str] | None = None) -> dict[str, Any]:
    engine_names = sorted({d["engine"] for d in documents}) if engines is None else list(engines)
    return {
        "schema": "pytest-ocrmetrics/1",
        "created": "2025-01-01T00:00:00Z",
        "environment": {
            "python": "3.11.2", "platform": "Linux", "plugin_version": "0.1.0", "pytest_version": "9.0",
            "engines": {name: {"name": name, "version": "1.0"} for name in engine_names},
        },
        "normalization": {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace", "field_compare": "lowercase",
                          "definitions": METRIC_DEFINITIONS},
        "documents": documents,
        "summary": summarize(documents),
    }


def validate(run: Mapping[str, Any]) -> None:
    """Fail the calling test when ``run`` does not match the committed schema."""
    from pytest_ocrmetrics.gating import validate_run

    validate_run(run, "test run")
