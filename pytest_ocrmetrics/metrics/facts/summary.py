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
from typing import Any, Iterable, Iterator, Mapping

from pytest_ocrmetrics.metrics.aggregate import percentile

__all__ = ["FactSummary", "summarize_facts", "run_facts", "facts_summary", "unchecked_facts", "headline_text",
           "coverage_text"]


@dataclass(frozen=True)
class FactSummary:
    """Pass rates per type and per group (JSONL file), the benchmark's headline and its interval, and the counts."""

    by_type: dict[str, float]
    by_group: dict[str, float]
    headline: float
    interval: tuple[float, float] | None
    passed: int
    total: int

    def to_dict(self) -> dict[str, object]:
        return {"headline": self.headline, "interval": None if self.interval is None else list(self.interval),
                "by_type": self.by_type,
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
    interval: tuple[float, float] | None = None  # no resamples, no interval
    if n_bootstrap > 0:
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


def unchecked_facts(facts: Iterable[Any], why: str) -> list[dict[str, Any]]:
    """``details.facts`` entries for facts that were never checked (the document's test errored before its output
    was scored): each failed, with ``why`` as its explanation and no repeats, as the benchmark counts a page without
    an output."""
    return [{"id": fact.id, "type": fact.type, "passed": False, "flaky": False, "explanation": why,
             "group": fact.group, "source": fact.source, "repeats": [], "unchecked": True} for fact in facts]


def run_facts(documents: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """The run file's top-level ``facts``: one object per fact per engine, from each document's ``details.facts``
    (documents in the run's order, facts in the page's order), with ``document``, ``dataset`` and ``engine`` added.

    Facts of documents whose test errored are failed (``unchecked``); those of skipped or filtered documents are
    left out (nothing was asked of them)."""
    for doc in documents:
        details = doc.get("details")
        facts = details.get("facts") if isinstance(details, Mapping) else None
        if not isinstance(facts, list) or doc.get("outcome") in ("skipped", "filtered"):
            continue
        for fact in facts:
            if isinstance(fact, Mapping):
                yield {"id": fact.get("id"), "type": fact.get("type"), "document": doc.get("id"),
                       "dataset": doc.get("dataset"), "engine": doc.get("engine"),
                       **{k: v for k, v in fact.items() if k not in ("id", "type")}}


def facts_summary(facts: Iterable[Mapping[str, Any]], *, seed: int = 0,
                  resamples: int = 1000) -> list[dict[str, Any]]:
    """The run file's ``facts_summary`` from its ``facts`` (:func:`run_facts`): per engine × dataset,
    :func:`summarize_facts` of its facts (the benchmark's headline with its seeded interval, pass rates per type and
    per JSONL file) and how many were ``flaky`` or ``unchecked``; rows sorted by engine and dataset. The same
    documents give the same numbers (a merged run's included): verdicts are taken in the run's document order.

    A fact that could not be checked (``passed`` null: a missing package, no browser) is no failure: the headline,
    the rates and ``passed`` are over the ``checked`` facts, ``total`` counts every fact, and ``not_checked`` maps
    each reason to its count (present only when some were not checked; a row none of whose facts was checked has a
    null headline)."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for fact in facts:
        groups.setdefault((str(fact["engine"]), str(fact["dataset"])), []).append(fact)
    rows = []
    for (engine, dataset), facts in sorted(groups.items()):
        checked = [f for f in facts if f.get("passed") is not None]
        summary = summarize_facts(((str(f.get("group") or "facts"), str(f.get("type")), bool(f.get("passed")))
                                   for f in checked), n_bootstrap=resamples, seed=seed).to_dict()
        reasons: dict[str, int] = {}
        for fact in facts:
            if fact.get("passed") is None:
                reason = str(fact.get("reason") or fact.get("explanation") or "no verdict")
                reasons[reason] = reasons.get(reason, 0) + 1
        if not checked:  # nothing to rate: no headline rather than a 0 the page never earned
            summary.update(headline=None, interval=None)
        rows.append({"engine": engine, "dataset": dataset, **summary, "total": len(facts), "checked": len(checked),
                     **({"not_checked": dict(sorted(reasons.items()))} if reasons else {}),
                     "flaky": sum(1 for f in facts if f.get("flaky")),
                     "unchecked": sum(1 for f in facts if f.get("unchecked"))})
    return rows


def headline_text(row: Mapping[str, Any]) -> str:
    """The headline of a ``facts_summary`` row in words, with the facts it is over and, when some could not be
    checked, how many and why (the reasons as given, most frequent first).

    >>> headline_text({"headline": 0.943, "total": 116, "checked": 110,
    ...                "not_checked": {"the KaTeX MathML comparison needs pykatex: install pytest-ocrmetrics[facts]": 6}})
    '94.3% over 110 of 116 facts; 6 not checked: the KaTeX MathML comparison needs pykatex: install pytest-ocrmetrics[facts]'
    >>> headline_text({"headline": 0.75, "total": 4})
    '75.0% over 4 facts'
    """
    headline = row.get("headline")
    return ("no score" if headline is None else f"{headline:.1%}") + " " + coverage_text(row)


def coverage_text(row: Mapping[str, Any]) -> str:
    """The facts a ``facts_summary`` row's headline is over, and those not checked with why:
    ``over 110 of 116 facts; 6 not checked: ...`` (see :func:`headline_text`)."""
    total = int(row.get("total") or 0)
    checked = int(row.get("checked", total))
    text = f"over {checked} of {total} facts" if checked != total else f"over {total} facts"
    reasons = row.get("not_checked")
    if isinstance(reasons, Mapping) and reasons:
        ordered = sorted(reasons.items(), key=lambda item: -int(item[1]))
        text += f"; {total - checked} not checked: " + "; ".join(
            str(reason) + (f" ({count})" if len(ordered) > 1 else "") for reason, count in ordered[:3])
        if len(ordered) > 3:
            text += f"; and {len(ordered) - 3} more reasons"
    return text
