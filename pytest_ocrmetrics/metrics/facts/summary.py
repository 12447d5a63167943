"""olmOCR-bench's headline over many pages: pass rates per fact type and per JSONL file, their mean, and its interval.

The benchmark's score is the mean of the per-JSONL-file pass rates (the added baseline facts form their own group,
``"baseline"``), with a bootstrap interval that resamples within each file (``olmocr/bench/utils.py::
calculate_bootstrap_ci`` with ``splits``). Here the resampling is seeded, so a run's interval is reproducible.

>>> summary = summarize_facts([("a.jsonl", "present", True), ("a.jsonl", "absent", False), ("baseline", "baseline", True)])
>>> summary.headline, summary.by_group, summary.by_type["present"]
(0.75, {'a.jsonl': 0.5, 'baseline': 1.0}, 1.0)
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable

from pytest_ocrmetrics.metrics.aggregate import percentile

__all__ = ["FactSummary", "summarize_facts"]


@dataclass(frozen=True)
class FactSummary:
    """Pass rates per type and per group (JSONL file), the benchmark's headline and its interval, and the counts."""

    by_type: dict[str, float]
    by_group: dict[str, float]
    headline: float
    interval: tuple[float, float]
    passed: int
    total: int

    def to_dict(self) -> dict[str, object]:
        return {"headline": self.headline, "interval": list(self.interval), "by_type": self.by_type,
                "by_group": self.by_group, "passed": self.passed, "total": self.total}


def summarize_facts(verdicts: Iterable[tuple[str, str, bool]], *, n_bootstrap: int = 1000, level: float = 0.95,
                    seed: int = 0) -> FactSummary:
    """Summarize ``(group, type, passed)`` final verdicts (one per fact per engine) as the benchmark does."""
    groups: dict[str, list[float]] = {}
    types: dict[str, list[float]] = {}
    for group, kind, passed in verdicts:
        groups.setdefault(group, []).append(1.0 if passed else 0.0)
        types.setdefault(kind, []).append(1.0 if passed else 0.0)
    if not groups:
        return FactSummary({}, {}, 0.0, (0.0, 0.0), 0, 0)
    by_group = {g: sum(v) / len(v) for g, v in sorted(groups.items())}
    headline = sum(by_group.values()) / len(by_group)
    rng = random.Random(seed)
    means = []
    for _ in range(n_bootstrap):
        rates = [sum(rng.choices(scores, k=len(scores))) / len(scores) for scores in groups.values()]
        means.append(sum(rates) / len(rates))
    means.sort()
    alpha = (1 - level) / 2
    interval = (percentile(means, alpha * 100), percentile(means, (1 - alpha) * 100))
    return FactSummary(
        by_type={t: sum(v) / len(v) for t, v in sorted(types.items())},
        by_group=by_group,
        headline=headline,
        interval=interval,
        passed=int(sum(sum(v) for v in groups.values())),
        total=sum(len(v) for v in groups.values()),
    )
