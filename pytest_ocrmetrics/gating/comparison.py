"""Baseline comparison: a run against a previous run, per document and per engine x dataset x metric aggregate.

Documents are matched by (dataset, engine, id). A comparison that matches no document is an error, never a pass
(a renamed dataset folder or another engine compares nothing), and one made across different normalization
settings carries a warning: its differences may come from the settings rather than from the OCR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

from pytest_ocrmetrics.gating._numbers import EPS, finite, fmt_delta, fmt_number
from pytest_ocrmetrics.gating.bootstrap import metric_series, paired_bootstrap_intervals
from pytest_ocrmetrics.gating.facts import FactChange, document_facts, fact_changes
from pytest_ocrmetrics.gating.tolerances import Tolerance, ToleranceLike, resolve_tolerances, tolerance_for
from pytest_ocrmetrics.metrics.registry import METRICS, regression
from pytest_ocrmetrics.runfile.normalization import describe_normalization, same_normalization
from pytest_ocrmetrics.runfile.read import DocumentKey, doc_key, scored_documents

__all__ = ["Regression", "Improvement", "AggregateDelta", "DocumentRef", "Comparison", "compare_runs", "OptionNames",
           "PYTEST_OPTIONS", "CLI_OPTIONS",
           "parse_significance", "describe_normalization", "normalization_mismatch", "DOCUMENT_REGRESSION_POLICIES",
           "parse_document_regressions"]

#: What a document that got worse than the baseline beyond its tolerance does (``--ocr-document-regressions``):
#: ``warn`` lists it in every report and leaves the verdict to the aggregates (the default: a model release has a few
#: worse pages every time), ``fail`` fails the document's own test (and ``ocrmetrics compare``), ``off`` neither lists
#: nor fails it.
DOCUMENT_REGRESSION_POLICIES = ("warn", "fail", "off")


def parse_document_regressions(value: object) -> str:
    """``warn``, ``fail`` or ``off``; anything else raises ``ValueError`` with one sentence and a did-you-mean.

    >>> parse_document_regressions("fail")
    'fail'
    """
    text = str(value).strip().lower()
    if text not in DOCUMENT_REGRESSION_POLICIES:
        from pytest_ocrmetrics.core.hints import did_you_mean

        raise ValueError(f"{str(value)!r} is not a document regression policy{did_you_mean(text, DOCUMENT_REGRESSION_POLICIES)}; "
                         f"choose one of: {', '.join(DOCUMENT_REGRESSION_POLICIES)}")
    return text


@dataclass(frozen=True)
class OptionNames:
    """The options that steer a comparison as they are spelled where it runs, for its sentences: pytest's
    (:data:`PYTEST_OPTIONS`) or the ``ocrmetrics`` commands' (:data:`CLI_OPTIONS`), whose exit status stands where a
    test would fail."""

    max_regression: str
    document_regressions: str
    engine_pair: str  # the option pairing two engines, with {old} and {new}
    warn_effect: str  # what --document-regressions=warn does, after the option
    fail_effect: str  # and =fail

    def pair(self, old: str, new: str) -> str:
        """The option pairing the baseline's engine ``old`` with this run's ``new``, as typed."""
        return self.engine_pair.format(old=old, new=new)


PYTEST_OPTIONS = OptionNames("--ocr-max-regression", "--ocr-document-regressions", "--ocr-baseline-engine={old}={new}",
                             "listed, their tests pass, the aggregates decide", "their tests failed")
CLI_OPTIONS = OptionNames("--max-regression", "--document-regressions", "--engine {old}={new}",
                          "listed, the aggregates decide the exit status", "the exit status is 1")


def parse_engine_pairs(texts: Iterable[str], baseline_engines: Sequence[str], run_engines: Sequence[str], *,
                       baseline_name: str, run_name: str, option: str) -> list[tuple[str, str]]:
    """``OLD=NEW`` texts (``--ocr-baseline-engine``, ``ocrmetrics compare --engine``) as ``(baseline engine, run
    engine)`` pairs: OLD one of ``baseline_engines``, NEW one of ``run_engines`` (split at the ``=`` that makes both
    names known, for a name holding ``=``), each engine of the run paired once, a pair given twice kept once.
    Anything else is a ``ValueError`` with one sentence (a did-you-mean, or the order when it was typed NEW=OLD).

    >>> parse_engine_pairs(["tesseract=rapidocr"], ["tesseract"], ["rapidocr"], baseline_name="the baseline",
    ...                    run_name="this run", option="--engine")
    [('tesseract', 'rapidocr')]
    """
    from pytest_ocrmetrics.core.hints import did_you_mean

    pairs: list[tuple[str, str]] = []
    for text in texts:
        splits = [(text[:i], text[i + 1:]) for i, char in enumerate(text) if char == "="]
        if not splits or not all(splits[0]):
            raise ValueError(f"{option} {text!r} is not OLD=NEW: give the baseline's engine and this run's engine "
                             f"compared with it, e.g. {option} tesseract=rapidocr")
        old, new = next(((o, n) for o, n in splits if o in baseline_engines and n in run_engines), splits[0])
        for name, names, where in ((old, baseline_engines, baseline_name), (new, run_engines, run_name)):
            if name not in names:
                if old in run_engines and new in baseline_engines:  # NEW=OLD typed
                    hint = f" (the baseline's engine comes first: {option} {new}={old})"
                elif name == old and new in baseline_engines:  # a baseline updated since: the engines are the same
                    hint = f" (it has {new!r}, this run's engine: leave {option} out to compare {new!r} with itself)"
                else:
                    hint = did_you_mean(name, names)
                raise ValueError(f"{option} {text!r}: {where} has no engine {name!r}{hint}; its engines are "
                                 f"{', '.join(map(repr, names)) or 'none'}")
        paired = {n: o for o, n in pairs}
        if paired.get(new, old) != old:
            raise ValueError(f"{option} pairs {new!r} of {run_name} with two baseline engines, {paired[new]!r} and "
                             f"{old!r}; pair each engine of the run once")
        if (old, new) not in pairs:
            pairs.append((old, new))
    return pairs


class _Engines:
    """``engine_label`` of a dataclass with ``engine`` and ``baseline_engine`` fields."""

    engine: str
    baseline_engine: str | None

    @property
    def engine_label(self) -> str:
        """The engine, ``tesseract -> rapidocr`` when engines were paired."""
        return engines_text(self.engine, self.baseline_engine)


class _Delta:
    """``delta`` and ``worse_by`` of a dataclass with ``metric``, ``old`` and ``new`` fields."""

    metric: str
    old: float
    new: float

    @property
    def delta(self) -> float:
        """``new - old`` in the metric's unit (sign as measured, not as judged)."""
        return self.new - self.old

    @property
    def worse_by(self) -> float:
        """How much worse ``new`` is (positive = worse, negative = better), direction-aware."""
        return regression(self.metric, self.new, self.old)


@dataclass(frozen=True)
class _Change(_Delta, _Engines):
    metric: str
    engine: str
    dataset: str
    document: str | None
    old: float
    new: float
    allowed: float
    tolerance: Tolerance
    baseline_engine: str | None = None  # the baseline's engine when engines were paired (engine_map), else None

    @property
    def where(self) -> str:
        doc = f"document {self.document!r} " if self.document is not None else ""
        return f"{doc}({self.engine_label} / {self.dataset})"


@dataclass(frozen=True)
class Regression(_Change):
    """A document metric that got worse than the baseline by more than its tolerance."""

    @property
    def message(self) -> str:
        """``cer regressed on document '001.jpg' (tesseract / receipts): baseline 0.0210, now 0.0520, delta +0.0310 ...``"""
        return (f"{self.metric} regressed on {self.where}: baseline {fmt_number(self.old)}, now {fmt_number(self.new)}, "
                f"delta {fmt_delta(self.delta)} (allowed {self.tolerance}, i.e. {self.allowed:.4f} worse)")


@dataclass(frozen=True)
class Improvement(_Change):
    """A document metric that got better than the baseline by more than its tolerance: the baseline can be updated."""

    @property
    def message(self) -> str:
        return (f"{self.metric} improved on {self.where}: baseline {fmt_number(self.old)}, now {fmt_number(self.new)}, "
                f"delta {fmt_delta(self.delta)}; the baseline can be updated")


Verdict = Literal["regression", "not-significant", "improvement", "unchanged", "ungated"]


@dataclass(frozen=True)
class AggregateDelta(_Delta, _Engines):
    """An engine x dataset x metric aggregate of the baseline against this run, over the documents in both.

    ``old`` and ``new`` are micro values (summed counts for count metrics, the mean otherwise) over the ``n``
    paired documents, so added or removed documents do not move the comparison. ``interval`` is the paired
    bootstrap percentile interval of ``new - old`` at ``level``.
    """

    engine: str
    dataset: str
    metric: str
    old: float
    new: float
    n: int
    interval: tuple[float, float] | None
    level: float
    allowed: float | None
    tolerance: Tolerance | None
    verdict: Verdict
    baseline_engine: str | None = None  # the baseline's engine when engines were paired (engine_map), else None

    @property
    def interval_text(self) -> str:
        if self.interval is None:
            return "no interval"
        return f"{self.level:.0%} CI [{fmt_delta(self.interval[0])}, {fmt_delta(self.interval[1])}]"

    @property
    def message(self) -> str:
        """``cer regressed for tesseract / receipts: 0.0210 -> 0.0290, delta +0.0080, 95% CI [...], n=40 ...``"""
        head = {
            "regression": "regressed",
            "not-significant": "got worse, but not significantly,",
            "improvement": "improved",
            "unchanged": "within tolerance",
            "ungated": "changed",
        }[self.verdict]
        allowed = f"; allowed {self.tolerance}" if self.tolerance is not None else ""
        tail = "; the baseline can be updated" if self.verdict == "improvement" else ""
        return (f"{self.metric} {head} for {self.engine_label} / {self.dataset}: "
                f"{fmt_number(self.old)} -> {fmt_number(self.new)}, "
                f"delta {fmt_delta(self.delta)}, {self.interval_text}, n={self.n} paired documents{allowed}{tail}")


@dataclass(frozen=True)
class DocumentRef(_Engines):
    """A document present on one side of a comparison only, with why."""

    dataset: str
    engine: str
    id: str
    reason: str
    baseline_engine: str | None = None  # the baseline's engine when engines were paired (engine_map), else None

    def __str__(self) -> str:
        return f"{self.dataset}/{self.id} ({self.engine_label}): {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; ``baseline_engine`` only when engines were paired."""
        return _paired({"dataset": self.dataset, "engine": self.engine, "id": self.id, "reason": self.reason},
                       self.baseline_engine)


@dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_runs`: what regressed, what improved, and what cannot be compared."""

    regressions: tuple[Regression, ...]
    improvements: tuple[Improvement, ...]
    aggregates: tuple[AggregateDelta, ...]
    new_documents: tuple[DocumentRef, ...]
    missing_documents: tuple[DocumentRef, ...]
    tolerances: Mapping[str, Tolerance]
    significance: float | None
    seed: int
    resamples: int
    baseline_metrics: Mapping[DocumentKey, Mapping[str, float]] = field(default_factory=dict)
    compared: int = 0  # documents scored in both runs
    baseline_source: str | None = None  # where the baseline came from (its path), for messages and the run file
    baseline_normalization: Mapping[str, str] | None = None
    error: str | None = None  # why nothing was compared, when nothing was
    warning: str | None = None  # the normalization settings differ: compared anyway
    fact_regressions: tuple[FactChange, ...] = ()  # page-level facts that passed in the baseline and fail now
    fact_fixes: tuple[FactChange, ...] = ()  # facts that failed in the baseline and pass now
    # one sentence per tolerance that compared nothing (its metric is in no engine x dataset of both runs)
    unmatched_tolerances: tuple[str, ...] = ()
    # what document regressions (and fact regressions) do: "warn" (listed, the aggregates decide), "fail", "off"
    document_policy: str = "warn"
    # how the sentences name the options (pytest's, or the ocrmetrics commands')
    options: OptionNames = PYTEST_OPTIONS
    # one sentence per pair of engines (engine_map) with no document scored by both: it would hide behind the others
    unpaired_engines: tuple[str, ...] = ()
    # (baseline engine, this run's engine) pairs compared (engine_map), empty when engines were compared by name
    engine_map: tuple[tuple[str, str], ...] = ()

    @property
    def compared_nothing(self) -> tuple[str, ...]:
        """Sentences of what compared nothing though it was asked for: a tolerance's metric in no engine x dataset of
        both runs, a pair of engines with no document in common (each fails the comparison)."""
        return (*self.unmatched_tolerances, *self.unpaired_engines)

    @property
    def facts_gated(self) -> bool:
        """True when fact regressions fail (``fact_pass_rate`` has a tolerance), see :mod:`~.gating.facts`."""
        return tolerance_for(self.tolerances, "fact_pass_rate") is not None

    @property
    def matched_nothing(self) -> bool:
        """True when no document is scored in both runs: nothing was compared, so nothing can pass."""
        return self.compared == 0

    @property
    def aggregate_regressions(self) -> tuple[AggregateDelta, ...]:
        return tuple(a for a in self.aggregates if a.verdict == "regression")

    @property
    def aggregate_improvements(self) -> tuple[AggregateDelta, ...]:
        return tuple(a for a in self.aggregates if a.verdict == "improvement")

    @property
    def aggregate_failed(self) -> bool:
        """True when some aggregate regressed beyond tolerance (and significantly, with ``significance``)."""
        return bool(self.aggregate_regressions)

    @property
    def documents_fail(self) -> bool:
        """True when a document regression fails (``document_regressions="fail"``): a regressed document, or a fact
        that passed in the baseline and fails now (with a tolerance on ``fact_pass_rate``)."""
        return self.document_policy == "fail" and (
            bool(self.regressions) or (self.facts_gated and bool(self.fact_regressions)))

    @property
    def regressed_documents(self) -> list[tuple[str, str, str]]:
        """``(dataset, engine, id)`` of every document with a metric regressed beyond tolerance, in first-seen order
        (the engine as :attr:`Regression.engine_label` names it: ``tesseract -> rapidocr`` when engines were paired)."""
        return list(dict.fromkeys((r.dataset, r.engine_label, str(r.document)) for r in self.regressions))

    @property
    def exit_failed(self) -> bool:
        """True when the comparison must fail CI: an aggregate regressed, nothing was compared, a tolerance's metric
        or a pair of engines compared nothing, or (with ``document_regressions="fail"``) a document or a gated fact regressed."""
        return (self.aggregate_failed or self.matched_nothing or bool(self.compared_nothing)
                or self.documents_fail)

    def document_regressions(self, dataset: str, engine: str, doc_id: str) -> list[Regression]:
        return [r for r in self.regressions if (r.dataset, r.engine, r.document) == (dataset, engine, doc_id)]

    def summary_lines(self, *, max_documents: int = 20, list_improvements: bool = True) -> list[str]:
        """Human-readable lines: aggregate regressions, document regressions, new / missing documents, improvements.

        Each aggregate line names metric, engine, dataset, old, new, delta and interval. An ``ERROR:`` line says
        why nothing was compared (and is then the only line besides a ``WARNING:``), a ``WARNING:`` line that the
        normalization settings differ; otherwise the first line counts the compared, new and missing documents.
        """
        lines: list[str] = []
        if self.error is not None:
            lines.append(f"ERROR: {self.error}")
        if self.warning is not None:
            lines.append(f"WARNING: {self.warning}")
        if self.matched_nothing:
            return lines
        lines.append(f"compared with {_label(self.baseline_source)}: {_count(self.compared, 'document')}, "
                     f"{len(self.new_documents)} new, {len(self.missing_documents)} missing")
        lines += [f"ERROR: {message}" for message in self.compared_nothing]
        lines += self._aggregate_lines(max_documents)
        lines += self._document_lines(max_documents)
        for title, refs in (("new documents (not in the baseline)", self.new_documents),
                            ("documents missing from this run (in the baseline)", self.missing_documents)):
            if refs:
                lines.append(f"{len(refs)} {title}:")
                lines += _first(refs, max_documents, str)
        lines.extend(self.update_lines(max_documents=max_documents, list_improvements=list_improvements))
        if not self.exit_failed and self.tolerances:
            gated = sum(1 for a in self.aggregates if a.tolerance is not None)
            lines.append(f"no regression beyond tolerance against the baseline ({_count(gated, 'gated aggregate')})")
        return lines

    def _aggregate_lines(self, max_documents: int) -> list[str]:
        """The aggregates: without a tolerance each one that moved (nothing can fail); else the regressions, those
        not significant, and each gated one within its tolerance with its numbers (the evidence of a pass)."""
        if not self.tolerances:
            changed = [agg for agg in self.aggregates if agg.new != agg.old]
            return [f"no tolerance given ({self.options.max_regression}=METRIC:AMOUNT): nothing fails; "
                    + (f"{_count(len(changed), 'aggregate')} changed:" if changed else "no aggregate changed"),
                    *_first(changed, max_documents, lambda agg: agg.message)]
        lines = [f"REGRESSION {agg.message}" for agg in self.aggregate_regressions]
        lines += [f"not significant at {self.significance:g}: {agg.message}"
                  for agg in self.aggregates if agg.verdict == "not-significant"]
        within = [agg for agg in self.aggregates if agg.verdict == "unchanged"]
        lines += [agg.message for agg in within[:max_documents]]
        if len(within) > max_documents:
            lines.append(f"... and {len(within) - max_documents} more within tolerance (every one in the reports)")
        return lines

    def _document_lines(self, max_documents: int) -> list[str]:
        """The documents worse than the baseline beyond tolerance and the facts that passed there and fail now, with
        what the policy did to them."""
        lines: list[str] = []
        option = self.options.document_regressions
        if self.regressions:
            docs = self.regressed_documents
            n = len(self.regressions)
            effect = (f"{option}=fail: {self.options.fail_effect}" if self.document_policy == "fail"
                      else f"{option}=warn: {self.options.warn_effect}")
            lines.append(f"{'' if self.document_policy == 'fail' else 'WARNING: '}{_count(len(docs), 'document')} got worse "
                         f"than the baseline beyond tolerance in {_count(n, 'metric')} ({effect}): "
                         + _names(docs))
            lines += _first(self.regressions, max_documents, lambda reg: reg.message)
        if self.fact_regressions:
            fact_docs = {(r.dataset, r.engine, r.document) for r in self.fact_regressions}
            effect = ("" if self.facts_gated and self.document_policy == "fail"
                      else " (no tolerance on fact_pass_rate: shown, not failed)" if not self.facts_gated
                      else f" ({option}=warn: listed, not failed)")
            lines.append(f"{len(self.fact_regressions)} fact(s) passed in the baseline and fail now, "
                         f"on {len(fact_docs)} document(s){effect}:")
            lines += _first(self.fact_regressions, max_documents, lambda change: change.message)
        return lines

    def update_lines(self, *, max_documents: int = 20, list_improvements: bool = True) -> list[str]:
        """"Baseline can be updated" lines for improvements beyond tolerance; ``list_improvements=False`` counts the
        improved documents in one line instead of listing them (a better model improves most of them)."""
        lines = [f"improved: {agg.message}" for agg in self.aggregate_improvements]
        if self.improvements and not list_improvements:
            documents = len({(i.dataset, i.engine, i.document) for i in self.improvements})
            lines.append(f"{len(self.improvements)} document metric(s) improved beyond tolerance on "
                         f"{_count(documents, 'document')}; the baseline can be updated (each is listed in the reports and "
                         f"with --ocr-summary=full)")
        elif self.improvements:
            lines.append(f"{len(self.improvements)} document metric(s) improved beyond tolerance; "
                         f"the baseline can be updated:")
            lines += _first(self.improvements, max_documents, lambda imp: imp.message)
        if self.fact_fixes:
            lines.append(f"{len(self.fact_fixes)} fact(s) failed in the baseline and pass now:")
            lines += _first(self.fact_fixes, max_documents, lambda change: change.message)
        return lines

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (used by ``ocrmetrics compare --json``)."""

        def change(c: _Change) -> dict[str, Any]:
            return _paired({"metric": c.metric, "engine": c.engine, "dataset": c.dataset, "document": c.document,
                            "old": c.old, "new": c.new, "delta": c.delta, "allowed": c.allowed,
                            "tolerance": str(c.tolerance)}, c.baseline_engine)

        return {
            "exit_failed": self.exit_failed,
            "unmatched_tolerances": list(self.unmatched_tolerances),
            **self.baseline_entry(),
            "significance": self.significance,
            "seed": self.seed,
            "resamples": self.resamples,
            "tolerances": [str(t) for t in self.tolerances.values()],
            "aggregates": [
                _paired({"engine": a.engine, "dataset": a.dataset, "metric": a.metric, "old": a.old, "new": a.new,
                         "delta": a.delta, "n": a.n, "interval": list(a.interval) if a.interval else None,
                         "level": a.level, "allowed": a.allowed, "tolerance": str(a.tolerance) if a.tolerance else None,
                         "verdict": a.verdict}, a.baseline_engine)
                for a in self.aggregates
            ],
            "regressions": [change(r) for r in self.regressions],
            "improvements": [change(i) for i in self.improvements],
            "fact_regressions": [change.to_dict() for change in self.fact_regressions],
            "fact_fixes": [change.to_dict() for change in self.fact_fixes],
            "new_documents": [ref.to_dict() for ref in self.new_documents],
            "missing_documents": [ref.to_dict() for ref in self.missing_documents],
        }


    def baseline_entry(self) -> dict[str, Any]:
        """The run file's top-level ``baseline`` object: where the baseline came from and how much of it matched.

        ``{"path", "compared", "new", "missing", "normalization", "normalization_mismatch", "warning", "error"}``;
        ``normalization`` is the baseline's (the run's own is the run file's ``normalization``).
        """
        return {
            "path": self.baseline_source,
            "compared": self.compared,
            "new": len(self.new_documents),
            "missing": len(self.missing_documents),
            "normalization": dict(self.baseline_normalization) if self.baseline_normalization else None,
            "normalization_mismatch": self.warning is not None,
            "warning": self.warning,
            # why nothing, or nothing of a tolerance's metric or of a pair of engines, was compared
            "error": self.error or ("; ".join(self.compared_nothing) or None),
            "document_regressions": self.document_regressions_entry(),
            # the engines compared with another's baseline (--ocr-baseline-engine), only when there were some
            **({"engine_map": [{"baseline_engine": old, "engine": new} for old, new in self.engine_map]}
               if self.engine_map else {}),
        }

    def document_regressions_entry(self) -> dict[str, Any]:
        """The ``baseline.document_regressions`` object of the run file: the policy, how many documents got worse
        beyond tolerance, and each of them with its regressed metrics (empty under ``off``: nothing is listed)."""
        by_document: dict[tuple[str, str, str, str | None], list[dict[str, Any]]] = {}
        for r in self.regressions:
            by_document.setdefault((r.dataset, r.engine, str(r.document), r.baseline_engine), []).append(
                {"metric": r.metric, "old": r.old, "new": r.new, "delta": r.delta, "allowed": r.allowed,
                 "tolerance": str(r.tolerance)})
        return {
            "policy": self.document_policy,
            "count": len(by_document),
            "failed": self.documents_fail,
            "documents": [_paired({"dataset": dataset, "engine": engine, "id": doc_id, "metrics": metrics}, old)
                          for (dataset, engine, doc_id, old), metrics in by_document.items()],
            "fact_regressions": len(self.fact_regressions),
        }


def engines_text(engine: str, baseline_engine: str | None) -> str:
    """``tesseract -> rapidocr`` for paired engines (baseline's first), the engine alone otherwise."""
    return engine if baseline_engine is None or baseline_engine == engine else f"{baseline_engine} -> {engine}"


def _paired(entry: dict[str, Any], baseline_engine: str | None) -> dict[str, Any]:
    """``entry`` with ``baseline_engine`` added when engines were paired: unpaired output keeps its keys."""
    return entry if baseline_engine is None else {**entry, "baseline_engine": baseline_engine}


def _label(source: str | None) -> str:
    return "the baseline" if source is None else f"baseline {source!r}"


def _names(documents: Sequence[tuple[str, str, str]], limit: int = 10) -> str:
    """``'a.png', 'b.png' (tesseract / receipts) and 3 more``: the documents' ids, each pair named once."""
    shown: dict[tuple[str, str], list[str]] = {}
    for dataset, engine, doc_id in documents[:limit]:
        shown.setdefault((engine, dataset), []).append(repr(doc_id))
    text = "; ".join(f"{', '.join(ids)} ({engine} / {dataset})" for (engine, dataset), ids in shown.items())
    return text + (f" and {len(documents) - limit} more" if len(documents) > limit else "")


def _count(n: int, noun: str) -> str:
    """``1 document``, ``2 gated aggregates``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _first(items: Sequence[Any], limit: int, text: Callable[[Any], str]) -> list[str]:
    """Indented lines for the first ``limit`` items, then one line counting the rest."""
    lines = [f"  {text(item)}" for item in items[:limit]]
    if len(items) > limit:
        lines.append(f"  ... and {len(items) - limit} more")
    return lines


def document_changes(
    dataset: str, engine: str, doc_id: str | None, old_metrics: Mapping[str, float],
    new_metrics: Mapping[str, float], tolerances: Mapping[str, Tolerance], *, baseline_engine: str | None = None,
) -> tuple[list[Regression], list[Improvement]]:
    """One document's metrics beyond tolerance, worse and better; metrics without a tolerance or a finite value
    on both sides are skipped. ``baseline_engine`` names the baseline's engine when engines were paired."""
    regressions: list[Regression] = []
    improvements: list[Improvement] = []
    for metric in METRICS:  # registry order, so messages are stable
        if metric not in old_metrics or metric not in new_metrics:
            continue
        tolerance = tolerance_for(tolerances, metric)
        if tolerance is None:
            continue
        if not (finite(old_metrics[metric]) and finite(new_metrics[metric])):
            continue
        old, new = float(old_metrics[metric]), float(new_metrics[metric])
        allowed = tolerance.allowed(old)
        worse = regression(metric, new, old)
        if worse > allowed + EPS:
            regressions.append(Regression(metric, engine, dataset, doc_id, old, new, allowed, tolerance,
                                          baseline_engine))
        elif -worse > allowed + EPS:
            improvements.append(Improvement(metric, engine, dataset, doc_id, old, new, allowed, tolerance,
                                            baseline_engine))
    return regressions, improvements



def parse_significance(value: str | float) -> float:
    """The significance level ALPHA of an aggregate comparison, strictly between 0 and 1, from text or a number.

    With ALPHA, an aggregate regression counts only when its ``1 - ALPHA`` bootstrap interval excludes zero; the
    command line tool parses ``--significance`` with this, so a bad value fails before any work is done.

    >>> parse_significance("0.05")
    0.05
    >>> parse_significance("5")
    Traceback (most recent call last):
    ...
    ValueError: significance must be between 0 and 1 (e.g. 0.05), got 5
    """
    try:
        alpha = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a number; write e.g. 0.05") from None
    if not 0.0 < alpha < 1.0:  # NaN fails here too
        raise ValueError(f"significance must be between 0 and 1 (e.g. 0.05), got {value}")
    return alpha


def compare_runs(
    baseline_run: Mapping[str, Any],
    current_run: Mapping[str, Any],
    tolerances: Iterable[ToleranceLike] | Mapping[str, Tolerance | float] | None = None,
    *,
    significance: float | None = None,
    seed: int = 0,
    resamples: int = 1000,
    baseline_source: str | None = None,
    document_regressions: str = "warn",
    engine_map: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    options: OptionNames = PYTEST_OPTIONS,
) -> Comparison:
    """Compare a run with a baseline run, per document and per engine x dataset x metric aggregate.

    - Documents are matched by (dataset, engine, id); only scored documents (outcome passed/failed) compare.
      Documents only in the current run are listed as new, those only scored in the baseline as missing.
    - A comparison that pairs no document at all fails (``error`` says why, e.g. another engine or a renamed
      dataset folder): a baseline that compared nothing is not a passed one.
    - Runs made with different normalization settings (profile, unit, tokenizer) are compared, with a ``warning``;
      the plugin and ``ocrmetrics compare`` refuse them unless told to compare anyway.
      ``baseline_source`` (the baseline's path) names the baseline in these messages.
    - A metric regresses when it got worse by more than its tolerance (see :func:`parse_tolerance`); metrics
      without a tolerance are compared and shown but never fail.
    - Aggregates are micro values over the documents present in both runs, with a seeded paired bootstrap interval
      of the delta (``resamples`` resamples of documents, one draw per resample for all metrics of an engine x dataset;
      the seed also mixes in engine and dataset, so one group's intervals do not depend on which others exist).
      The interval is a two-sided percentile interval at ``1 - significance`` (95 % without ``significance``).
    - With ``significance`` (e.g. ``0.05``), an aggregate regression (or improvement) counts only when its interval
      excludes zero on that side; otherwise its verdict is ``"not-significant"``.
    - The verdict is the aggregates'. A document that got worse beyond its tolerance is listed (``regressions``)
      and fails the comparison only with ``document_regressions="fail"``; ``"off"`` does not list it either
      (:data:`DOCUMENT_REGRESSION_POLICIES`). Page-level fact regressions follow the same policy.
    - ``engine_map`` pairs differently named engines: ``{"tesseract": "rapidocr"}`` (or ``(old, new)`` pairs, so one
      baseline engine may face several) compares the baseline's ``tesseract`` documents with this run's
      ``rapidocr`` documents of the same dataset and id, with the same deltas, intervals and verdicts. Each side is
      restricted to its mapped engines, so ``baseline_run`` and ``current_run`` may be one run (two engines of it
      compared). Results carry this run's engine as ``engine`` and the baseline's as ``baseline_engine``; messages
      name both (``tesseract -> rapidocr``). An engine of this run paired twice is a ``ValueError``.
    - ``options``: how the sentences (:meth:`Comparison.summary_lines`) name the options, pytest's by default
      (:data:`PYTEST_OPTIONS`), :data:`CLI_OPTIONS` for the ``ocrmetrics`` commands.

    >>> doc = lambda i, cer: {"id": i, "dataset": "d", "engine": "e", "outcome": "passed", "metrics": {"cer": cer},
    ...     "counts": {"cer": {"errors": cer * 100, "reference_length": 100}}, "elapsed_s": 0.0}
    >>> old = {"documents": [doc("a", 0.01), doc("b", 0.02)]}
    >>> new = {"documents": [doc("a", 0.01), doc("b", 0.08)]}
    >>> comparison = compare_runs(old, new, ["cer:0.005"])
    >>> [r.document for r in comparison.regressions], comparison.exit_failed  # the aggregate regressed too
    (['b'], True)
    >>> compare_runs(old, {"documents": [doc("a.png", 0.01)]}).error  # doctest: +ELLIPSIS
    "the baseline matched none of the 1 document(s) of this run, so nothing was compared: ..."
    """
    if significance is not None:
        significance = parse_significance(significance)
    if resamples < 0:
        raise ValueError(f"resamples must be zero or more, got {resamples!r}")
    document_regressions = parse_document_regressions(document_regressions)
    listed = document_regressions != "off"
    tols = resolve_tolerances(tolerances)
    level = 1.0 - significance if significance is not None else 0.95
    baseline_of = _baseline_engines(engine_map)  # this run's engine -> the baseline's, when engines are paired
    if baseline_of:
        baseline_run, current_run = _pair_engines(baseline_run, current_run, baseline_of)
    old_docs = scored_documents(baseline_run)
    new_docs = scored_documents(current_run)

    regressions: list[Regression] = []
    improvements: list[Improvement] = []
    fact_regressions: list[FactChange] = []
    fact_fixes: list[FactChange] = []
    groups: dict[tuple[str, str], list[tuple[Mapping[str, Any], Mapping[str, Any]]]] = {}
    for key, new_doc in new_docs.items():
        old_doc = old_docs.get(key)
        if old_doc is None:
            continue
        dataset, engine, doc_id = key
        reg, imp = document_changes(dataset, engine, doc_id, old_doc["metrics"], new_doc["metrics"], tols,
                                    baseline_engine=baseline_of.get(engine))
        if listed:
            regressions.extend(reg)
        improvements.extend(imp)
        worse, fixed = fact_changes(dataset, engines_text(engine, baseline_of.get(engine)), doc_id, old_doc,
                                    document_facts(new_doc))
        if listed:
            fact_regressions.extend(worse)
        fact_fixes.extend(fixed)
        groups.setdefault((engine, dataset), []).append((old_doc, new_doc))

    new_refs, missing_refs = _unpaired_refs(baseline_run, current_run, old_docs, new_docs, baseline_of)
    aggregates = _aggregates(groups, tols, level=level, resamples=resamples, seed=seed, significance=significance,
                             baseline_of=baseline_of)
    return Comparison(
        regressions=tuple(regressions),
        improvements=tuple(improvements),
        aggregates=tuple(aggregates),
        new_documents=new_refs,
        missing_documents=missing_refs,
        tolerances=tols,
        significance=significance,
        seed=seed,
        resamples=resamples,
        baseline_metrics={key: dict(doc["metrics"]) for key, doc in old_docs.items()},
        compared=sum(len(docs) for docs in groups.values()),
        baseline_source=baseline_source,
        baseline_normalization=baseline_run.get("normalization"),
        error=None if groups else _no_match_message(_label(baseline_source), *_labelled(baseline_run, current_run,
                                                                                         baseline_of), options),
        warning=_normalization_warning(_label(baseline_source), baseline_run.get("normalization"),
                                       current_run.get("normalization")),
        fact_regressions=tuple(fact_regressions),
        fact_fixes=tuple(fact_fixes),
        unmatched_tolerances=_unmatched_tolerances(tols, aggregates, old_docs, new_docs) if groups else (),
        document_policy=document_regressions,
        options=options,
        unpaired_engines=_unpaired_engines(baseline_of, groups, options) if groups else (),
        engine_map=tuple((old, new) for new, old in baseline_of.items()),
    )


def _unpaired_engines(baseline_of: Mapping[str, str], groups: Mapping[tuple[str, str], Any],
                      options: OptionNames) -> tuple[str, ...]:
    """One sentence per pair of engines (this run's -> the baseline's) that compared no document."""
    compared = {engine for engine, _ in groups}
    return tuple(f"{options.pair(old, new)} compared nothing: no document scored by {old!r} in the baseline is scored "
                 f"by {new!r} in this run (same dataset and id)"
                 for new, old in baseline_of.items() if new not in compared)


def _unpaired_refs(
    baseline_run: Mapping[str, Any], current_run: Mapping[str, Any], old_docs: Mapping[tuple[str, str, str], Any],
    new_docs: Mapping[tuple[str, str, str], Any], baseline_of: Mapping[str, str],
) -> tuple[tuple[DocumentRef, ...], tuple[DocumentRef, ...]]:
    """The scored documents of this run not scored in the baseline (new), and those of the baseline not scored in
    this run (missing), each with the reason."""
    baseline_all = {doc_key(d) for d in baseline_run.get("documents", ())}
    all_current = {doc_key(d): d for d in current_run.get("documents", ())}
    new_refs = tuple(
        DocumentRef(*key, "not in the baseline" if key not in baseline_all else "not scored in the baseline",
                    baseline_of.get(key[1]))
        for key in new_docs if key not in old_docs
    )
    missing_refs: list[DocumentRef] = []
    for key in old_docs:
        if key in new_docs:
            continue
        doc = all_current.get(key)
        reason = "not in this run" if doc is None else f"not scored in this run (outcome {doc.get('outcome')})"
        missing_refs.append(DocumentRef(*key, reason, baseline_of.get(key[1])))
    return new_refs, tuple(missing_refs)


def _aggregates(
    groups: Mapping[tuple[str, str], list[tuple[Mapping[str, Any], Mapping[str, Any]]]],
    tols: Mapping[str, Tolerance], *, level: float, resamples: int, seed: int, significance: float | None,
    baseline_of: Mapping[str, str],
) -> list[AggregateDelta]:
    """Per engine x dataset x metric: the micro values over the paired documents, the seeded paired bootstrap
    interval of the delta and the verdict against the metric's tolerance."""
    aggregates: list[AggregateDelta] = []
    for (engine, dataset), docs in sorted(groups.items()):
        series = [s for s in (metric_series(metric, docs) for metric in METRICS) if s is not None]
        series = [s for s in series if None not in s.values()]
        intervals = paired_bootstrap_intervals(series, len(docs), level=level, resamples=resamples,
                                               seed=f"{seed}\x00{engine}\x00{dataset}")
        for s in series:
            old, new = s.values()
            assert old is not None and new is not None
            interval = intervals.get(s.metric)
            tolerance = tolerance_for(tols, s.metric)
            allowed = tolerance.allowed(old) if tolerance is not None else None
            aggregates.append(AggregateDelta(
                engine, dataset, s.metric, old, new, s.n, interval, level, allowed, tolerance,
                _verdict(s.metric, old, new, allowed, interval, significance), baseline_of.get(engine),
            ))
    return aggregates


def _baseline_engines(engine_map: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> dict[str, str]:
    """``engine_map`` (baseline engine -> this run's engine, as a mapping or pairs) turned round: this run's engine
    -> the baseline's. One engine of this run faces one baseline engine, or its documents would be matched twice."""
    pairs = list(engine_map.items() if isinstance(engine_map, Mapping) else engine_map or ())
    baseline_of: dict[str, str] = {}
    for old, new in pairs:
        if baseline_of.get(new, old) != old:
            raise ValueError(f"engine_map pairs this run's engine {new!r} with two baseline engines, "
                             f"{baseline_of[new]!r} and {old!r}; pair each of this run's engines once")
        baseline_of[new] = old
    return baseline_of


def _pair_engines(baseline_run: Mapping[str, Any], current_run: Mapping[str, Any],
                  baseline_of: Mapping[str, str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both runs with only the paired engines' documents, the baseline's renamed to the engine of this run they face
    (a baseline engine facing two of this run's engines gives each a copy), so documents pair by (dataset, engine, id)."""
    facing: dict[str, list[str]] = {}
    for new, old in baseline_of.items():
        facing.setdefault(old, []).append(new)
    old_docs = [{**doc, "engine": new} for doc in baseline_run.get("documents", ())
                for new in facing.get(str(doc.get("engine")), ())]
    new_docs = [doc for doc in current_run.get("documents", ()) if str(doc.get("engine")) in baseline_of]
    return {**baseline_run, "documents": old_docs}, {**current_run, "documents": new_docs}


def _labelled(baseline_run: Mapping[str, Any], current_run: Mapping[str, Any],
              baseline_of: Mapping[str, str]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """Paired runs with each document's engine written ``old -> new``, so a message about them names both."""
    if not baseline_of:
        return baseline_run, current_run

    def label(run: Mapping[str, Any]) -> dict[str, Any]:
        return {**run, "documents": [{**doc, "engine": engines_text(str(doc["engine"]),
                                                                     baseline_of.get(str(doc["engine"])))}
                                     for doc in run.get("documents", ())]}

    return label(baseline_run), label(current_run)


def _unmatched_tolerances(tolerances: Mapping[str, Tolerance], aggregates: Sequence[AggregateDelta],
                          old_docs: Mapping[DocumentKey, Mapping[str, Any]],
                          new_docs: Mapping[DocumentKey, Mapping[str, Any]]) -> tuple[str, ...]:
    """One sentence per tolerance on a named metric that no engine x dataset of both runs has (the ``*`` default
    applies to whatever is there): such a tolerance would pass having compared nothing."""
    compared = {aggregate.metric for aggregate in aggregates}
    messages = []
    for metric, tolerance in tolerances.items():
        if metric == "*" or metric in compared:
            continue
        in_old = any(metric in (doc.get("metrics") or {}) for doc in old_docs.values())
        in_new = any(metric in (doc.get("metrics") or {}) for doc in new_docs.values())
        if in_old and in_new:
            where = "no engine x dataset has it in both runs"
        elif in_new:
            where = "the baseline has no values of it (make the baseline again with the metric computed)"
        elif in_old:
            where = "this run has no values of it"
        else:
            where = "neither run has values of it (it needs data these documents lack, or --ocr-metric)"
        messages.append(f"the tolerance {tolerance} compared nothing: {where}")
    return tuple(messages)


def normalization_mismatch(
    baseline: Mapping[str, Any], current: Mapping[str, Any], *, baseline_name: str, override: str,
    current_name: str = "this run",
) -> str | None:
    """One sentence refusing a baseline made with other normalization settings than ``current``, or ``None``.

    Every score depends on the normalization profile, the character unit and the word tokenizer, so a comparison
    across them measures the settings, not the OCR. ``override`` names the option that compares anyway.

    >>> normalization_mismatch({"name": "nfc", "unit": "grapheme", "tokenizer": "whitespace"},
    ...     {"name": "lenient", "unit": "grapheme", "tokenizer": "whitespace"}, baseline_name="--ocr-baseline 'b.json'",
    ...     override="--ocr-baseline-allow-mismatch")  # doctest: +NORMALIZE_WHITESPACE
    "--ocr-baseline 'b.json' was made with normalization 'nfc', unit 'grapheme', tokenizer 'whitespace', this run uses
    normalization 'lenient', unit 'grapheme', tokenizer 'whitespace'; make the baseline again with the same settings
    or pass --ocr-baseline-allow-mismatch to compare anyway"
    """
    if same_normalization(baseline, current):
        return None
    return (f"{baseline_name} was made with {describe_normalization(baseline, current)}, {current_name} uses "
            f"{describe_normalization(current, baseline)}; make the baseline again with the same settings or pass "
            f"{override} to compare anyway")


def _normalization_warning(label: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> str | None:
    if not old or not new or same_normalization(old, new):
        return None
    return (f"{label} was made with {describe_normalization(old, new)}, "
            f"this run uses {describe_normalization(new, old)}: "
            f"compared anyway, so differences may come from these settings rather than from the OCR")


def _pairs(docs: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    return sorted({(str(d.get("engine")), str(d.get("dataset"))) for d in docs})


def _shown(name: str) -> str:
    """A name as it is, or escaped (``repr``) when it holds a control, format or unpaired surrogate character."""
    return name if name.isprintable() else repr(name)


def _pairs_text(pairs: Sequence[tuple[str, str]], limit: int = 5) -> str:
    text = ", ".join(f"{_shown(engine)} / {_shown(dataset)}" for engine, dataset in pairs[:limit]) or "no documents"
    return text + (f" and {len(pairs) - limit} more" if len(pairs) > limit else "")


def _no_match_message(label: str, baseline_run: Mapping[str, Any], current_run: Mapping[str, Any],
                      options: OptionNames = PYTEST_OPTIONS) -> str:
    """Why no document is scored in both runs, in one sentence with the likely cause."""
    old_all, new_all = list(baseline_run.get("documents", ())), list(current_run.get("documents", ()))
    old_scored, new_scored = scored_documents(baseline_run), scored_documents(current_run)
    head = f"{label} matched none of the {len(new_all)} document(s) of this run, so nothing was compared"
    fix = "make a new baseline from this setup with pytest --ocr-json=PATH"
    if not old_scored:
        return (f"{head}: the baseline has no scored document ({len(old_all)} document(s), none passed or failed); "
                f"{fix}")
    if not new_scored:
        return f"{head}: no document of this run was scored (none passed or failed)"
    old_pairs, new_pairs = _pairs(old_scored.values()), _pairs(new_scored.values())
    common = sorted(set(old_pairs) & set(new_pairs))
    if common:
        engine, dataset = common[0]
        old_id = next(k[2] for k in old_scored if (k[1], k[0]) == (engine, dataset))
        new_id = next(k[2] for k in new_scored if (k[1], k[0]) == (engine, dataset))
        return (f"{head}: both have {_pairs_text(common)} (engine / dataset) but no document id in common "
                f"(the baseline has e.g. {old_id!r}, this run {new_id!r}), so the documents were probably renamed; "
                f"{fix}")
    engines = _renamed(old_scored, new_scored, by=1)
    if engines is not None:  # the same documents, read by another engine: compare the two on purpose, or start over
        old_engine, new_engine = engines
        return (f"{head}: the baseline has {_pairs_text(old_pairs)}, this run has {_pairs_text(new_pairs)} "
                f"(engine / dataset): the same documents were read by engine {_shown(old_engine)!r} in the baseline "
                f"and {_shown(new_engine)!r} here; to compare the two engines pass "
                f"{options.pair(_shown(old_engine), _shown(new_engine))}, or {fix}")
    renamed = _renamed(old_scored, new_scored, by=0)
    if renamed is not None:  # the same documents, the dataset named otherwise (another rule, folder or rootdir)
        old_name, new_name = renamed
        return (f"{head}: the baseline has {_pairs_text(old_pairs)}, this run has {_pairs_text(new_pairs)} "
                f"(engine / dataset): the same documents are dataset {_shown(old_name)!r} in the baseline and "
                f"{_shown(new_name)!r} here (a dataset is named by its path relative to pytest's rootdir); give it "
                f"the baseline's name, --ocr-dataset={_shown(old_name)}=PATH (or name= of the ocr_dataset marker), or "
                f"{fix}")
    return (f"{head}: the baseline has {_pairs_text(old_pairs)}, this run has {_pairs_text(new_pairs)} "
            f"(engine / dataset), so a dataset folder was probably renamed or another engine or dataset was run; {fix}")


def _renamed(old_scored: Mapping[DocumentKey, Any], new_scored: Mapping[DocumentKey, Any], *, by: int
             ) -> tuple[str, str] | None:
    """``(the baseline's name, this run's)`` of the pair of datasets (``by=0``) or engines (``by=1``) sharing the most
    documents otherwise the same (the key's other parts), when this run holds documents the baseline has under
    another dataset or engine name; else None."""
    def rest(key: DocumentKey) -> tuple[str, ...]:
        return tuple(part for position, part in enumerate(key) if position != by)

    old_names: dict[tuple[str, ...], set[str]] = {}
    for key in old_scored:
        old_names.setdefault(rest(key), set()).add(key[by])
    shared: dict[tuple[str, str], int] = {}
    for key in new_scored:
        for old_name in old_names.get(rest(key), ()):
            if old_name != key[by]:
                shared[(old_name, key[by])] = shared.get((old_name, key[by]), 0) + 1
    return max(sorted(shared), key=lambda pair: shared[pair]) if shared else None


def _verdict(metric: str, old: float, new: float, allowed: float | None, interval: tuple[float, float] | None,
             significance: float | None) -> Verdict:
    if allowed is None:
        return "ungated"
    worse = regression(metric, new, old)
    lower_better = METRICS[metric].lower_is_better
    if worse > allowed + EPS:
        if significance is not None:
            # the whole interval of the delta must lie on the bad side of zero
            bad_side = interval is not None and (interval[0] > 0 if lower_better else interval[1] < 0)
            if not bad_side:
                return "not-significant"
        return "regression"
    if -worse > allowed + EPS:
        if significance is not None:
            good_side = interval is not None and (interval[1] < 0 if lower_better else interval[0] > 0)
            if not good_side:
                return "unchanged"
        return "improvement"
    return "unchanged"
