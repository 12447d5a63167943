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
from typing import Any, Iterable, Iterator, Mapping, Sequence

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
    return _summarize_many([list(verdicts)], n_bootstrap=n_bootstrap, level=level, seed=seed)[0]


def _summarize_many(verdict_sets: Sequence[Sequence[tuple[str, str, bool]]], *, n_bootstrap: int, level: float,
                    seed: int) -> list[FactSummary]:
    """:func:`summarize_facts` of each verdict set; sets whose groups have the same names and sizes in the same order
    (the engines of one dataset) share their bootstrap draws, which depend on nothing else: the same numbers as one
    call per set, with the random numbers drawn once."""
    summaries: list[FactSummary | None] = [None] * len(verdict_sets)
    shared: dict[tuple[tuple[str, int], ...], list[tuple[int, dict[str, list[float]], dict[str, list[float]]]]] = {}
    for index, verdicts in enumerate(verdict_sets):
        groups: dict[str, list[float]] = {}
        types: dict[str, list[float]] = {}
        for group, kind, passed in verdicts:
            groups.setdefault(group, []).append(1.0 if passed else 0.0)
            types.setdefault(kind, []).append(1.0 if passed else 0.0)
        if not groups:
            summaries[index] = FactSummary({}, {}, 0.0, (0.0, 0.0), 0, 0)
            continue
        shared.setdefault(tuple((g, len(v)) for g, v in groups.items()), []).append((index, groups, types))
    for members in shared.values():
        intervals = _intervals([list(groups.values()) for _, groups, _ in members], n_bootstrap, level, seed)
        for (index, groups, types), interval in zip(members, intervals):
            by_group = {g: sum(v) / len(v) for g, v in sorted(groups.items())}
            summaries[index] = FactSummary(
                by_type={t: sum(v) / len(v) for t, v in sorted(types.items())},
                by_group=by_group,
                headline=sum(by_group.values()) / len(by_group),
                interval=interval,
                passed=int(sum(sum(v) for v in groups.values())),
                total=sum(len(v) for v in groups.values()),
            )
    return [summary for summary in summaries if summary is not None]


def _intervals(score_sets: list[list[list[float]]], n_bootstrap: int, level: float,
               seed: int) -> list[tuple[float, float] | None]:
    """The bootstrap interval of the mean of per-group pass rates, for score sets whose groups have equal sizes.

    Each resample draws every group's indices as ``random.Random(seed).choices(group, k=len(group))`` would (so the
    numbers are those of one such loop per set) and applies them to every set; None without resamples. A score is
    1.0 or 0.0, so a resampled group's sum is the count of passed picks: for groups of up to 256 facts the drawn
    indices are bytes, mapped to their scores by ``bytes.translate`` and counted in C (an exact count, hence the same
    float as the sum)."""
    if n_bootstrap <= 0:  # no resamples, no interval
        return [None] * len(score_sets)
    rng = random.Random(seed)
    populations = [range(len(scores)) for scores in score_sets[0]]
    small = [len(population) <= 256 for population in populations]
    tables = [[bytes(int(value) for value in scores) + bytes(256 - len(scores)) if fits else b""
               for scores, fits in zip(groups, small)] for groups in score_sets]
    means: list[list[float]] = [[] for _ in score_sets]
    for _ in range(n_bootstrap):
        draws: list[Any] = [bytes(rng.choices(population, k=len(population))) if fits
                            else rng.choices(population, k=len(population))
                            for population, fits in zip(populations, small)]
        for groups, translations, values in zip(score_sets, tables, means):
            rates = [(drawn.translate(table).count(1) if fits else sum(map(scores.__getitem__, drawn))) / len(scores)
                     for scores, table, drawn, fits in zip(groups, translations, draws, small)]
            values.append(sum(rates) / len(rates))
    alpha = (1 - level) / 2
    intervals: list[tuple[float, float] | None] = []
    for values in means:
        values.sort()
        intervals.append((percentile(values, alpha * 100), percentile(values, (1 - alpha) * 100)))
    return intervals


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
        if not details:  # most documents (a merge's, read from the shards' indices, have none): no isinstance
            continue
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
    ordered = sorted(groups.items())
    checked_sets = [[f for f in facts if f.get("passed") is not None] for _, facts in ordered]
    summaries = _summarize_many([[(str(f.get("group") or "facts"), str(f.get("type")), bool(f.get("passed")))
                                  for f in checked] for checked in checked_sets],
                                n_bootstrap=resamples, level=0.95, seed=seed)
    for ((engine, dataset), facts), checked, fact_summary in zip(ordered, checked_sets, summaries):
        summary = fact_summary.to_dict()
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
