"""The run's results on the controller: one record per document × engine, aggregated per engine × dataset.

Workers (or the single process without xdist) put a plain-dict record on each test report; this module only ever
sees those dicts, so results are the same with and without xdist. Aggregates are computed from documents sorted by
(engine, dataset, id), so the bootstrap intervals do not depend on the order tests finished in.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

from pytest_ocrmetrics.metrics.aggregate import MetricAccumulator, bootstrap_mean_intervals
from pytest_ocrmetrics.metrics.registry import METRICS, in_registry_order

__all__ = ["RunResults", "OUTCOMES", "RUN_SCHEMA_ID"]

RUN_SCHEMA_ID = "pytest-ocrmetrics/1"
OUTCOMES = ("passed", "failed", "error", "skipped", "filtered")
_SEVERITY = {"skipped": 0, "filtered": 1, "passed": 2, "failed": 3, "error": 4}


@dataclass
class RunResults:
    """Collects document records and builds the summary and the JSON run file."""

    normalization: Mapping[str, str] = field(default_factory=lambda: {"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace"})
    seed: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    engine_identities: dict[str, Any] = field(default_factory=dict)
    skipped_entries: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    collection_errors: list[dict[str, str]] = field(default_factory=list)  # datasets that could not be loaded

    def add_collection_error(self, dataset: str, message: str) -> None:
        """A dataset that could not be loaded (malformed ground truth): listed in the run, once per dataset."""
        if not any(error["dataset"] == dataset for error in self.collection_errors):
            self.collection_errors.append({"dataset": dataset, "message": message})

    def add(self, record: Mapping[str, Any], outcome: str, message: str | None = None) -> None:
        """Add one finished document test. ``outcome`` is the test's; a filtered record stays ``filtered``."""
        rec = dict(record)
        identity = rec.pop("engine_identity", None)
        if identity is not None:
            self.engine_identities.setdefault(rec["engine"], identity)
        for entry in rec.pop("dataset_skipped", None) or ():
            self.skipped_entries.setdefault((rec["dataset"], entry["source"]), {"dataset": rec["dataset"], **entry})
        rec["outcome"] = "filtered" if rec.get("filtered") else outcome
        rec.pop("filtered", None)
        if message is not None and rec["outcome"] in ("failed", "error", "skipped"):
            rec["message"] = message
        self.records.append(rec)

    def documents(self) -> list[dict[str, Any]]:
        """One record per engine × dataset × document, sorted.

        Several test functions may score the same document (one asserting CER, another field F1): their records
        are merged so that aggregates count each document once. The merged outcome is the worst one
        (error > failed > passed > filtered > skipped), ``tests`` lists the node ids and ``checks`` has every check.
        """
        merged: dict[tuple[str, str, str], dict[str, Any]] = {}
        for rec in sorted(self.records, key=lambda r: (r["engine"], r["dataset"], r["id"], r.get("nodeid", ""))):
            key = (rec["engine"], rec["dataset"], rec["id"])
            current = merged.get(key)
            if current is None:
                merged[key] = {**rec, "tests": [rec["nodeid"]] if rec.get("nodeid") else []}
                continue
            if rec.get("nodeid"):
                current["tests"].append(rec["nodeid"])
            current["checks"] = [*(current.get("checks") or []), *(rec.get("checks") or [])]
            if _SEVERITY[rec["outcome"]] > _SEVERITY[current["outcome"]]:
                current["outcome"] = rec["outcome"]
                current["message"] = rec.get("message")
                current["nodeid"] = rec.get("nodeid", current.get("nodeid"))
            if not current.get("metrics") and rec.get("metrics"):
                current.update(metrics=rec["metrics"], counts=rec.get("counts", {}))
        return list(merged.values())

    def summary(self, documents: list[dict[str, Any]] | None = None, *, resamples: int = 1000) -> list[dict[str, Any]]:
        """One row per engine × dataset: outcome counts and, per metric, micro/mean/median/p90/p95/min/max/n/CI.

        ``documents`` are :meth:`documents` when the caller already has them.
        """
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for rec in self.documents() if documents is None else documents:
            groups.setdefault((rec["engine"], rec["dataset"]), []).append(rec)
        rows = []
        for (engine, dataset), recs in groups.items():
            outcomes = Counter(r["outcome"] for r in recs)
            accumulators: dict[str, MetricAccumulator] = {}
            for rec in recs:
                if rec["outcome"] in ("filtered", "skipped"):
                    continue
                add_to_accumulators(accumulators, rec)
            # one set of bootstrap resamples for all metrics of this engine × dataset (the costly part of a summary)
            columns = {name: sorted(acc.values) for name, acc in accumulators.items() if acc.values}
            intervals = (bootstrap_mean_intervals(columns, seed=self.seed, resamples=resamples)
                         if resamples and columns else {})
            metrics = {
                name: accumulators[name].result(seed=self.seed, resamples=0, interval=intervals.get(name)).to_dict()
                for name in in_registry_order(accumulators)
            }
            rows.append({
                "engine": engine,
                "dataset": dataset,
                "documents": len(recs),
                "passed": outcomes["passed"],
                "failed": outcomes["failed"],
                "errors": outcomes["error"],
                "skipped": outcomes["skipped"],
                "filtered": outcomes["filtered"],
                "skipped_entries": sum(1 for key in self.skipped_entries if key[0] == dataset),
                "cache_hits": sum(1 for r in recs if r.get("cached")),
                "truncated": sum(1 for r in recs if r.get("truncated")),
                "metrics": metrics,
            })
        return rows

    def to_run(self, *, plugin_version: str, pytest_version: str, resamples: int = 1000,
               interrupted: bool = False) -> dict[str, Any]:
        """The JSON run file (schema ``pytest-ocrmetrics/1``).

        ``interrupted`` marks a run that stopped early (Ctrl-C, ``-x``, ``--maxfail``): its documents are only the
        ones that ran. ``collection_errors`` lists the datasets that could not be loaded.
        """
        documents = self.documents()
        return {
            "schema": RUN_SCHEMA_ID,
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "environment": {
                "python": platform.python_version(),
                "platform": platform.platform(),
                "implementation": sys.implementation.name,
                "plugin_version": plugin_version,
                "pytest_version": pytest_version,
                "engines": dict(sorted(self.engine_identities.items())),
            },
            "normalization": dict(self.normalization),
            "documents": documents,
            "summary": self.summary(documents, resamples=resamples),
            "skipped_entries": [self.skipped_entries[k] for k in sorted(self.skipped_entries)],
            "collection_errors": sorted(self.collection_errors, key=lambda error: error["dataset"]),
            "interrupted": bool(interrupted),
        }


def add_to_accumulators(accumulators: dict[str, MetricAccumulator], record: Mapping[str, Any]) -> None:
    """Feed one document's metrics (with their counts, for micro averages) into per-metric accumulators."""
    counts = record.get("counts") or {}
    for name, value in (record.get("metrics") or {}).items():
        spec = METRICS.get(name)
        acc = accumulators.get(name)
        if acc is None:
            acc = accumulators[name] = MetricAccumulator(name)
        if spec is not None and spec.aggregation == "micro" and name in counts:
            c = counts[name]
            acc.add(value, c.get(spec.numerator), c.get(spec.denominator))  # type: ignore[arg-type]
        else:
            acc.add(value)
