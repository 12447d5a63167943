"""The baseline of the plugin's ``--ocr-baseline``: a previous run file, indexed for per-document checks.

Loaded once at startup, so a missing or broken file, NaN inside it, or other normalization settings than this run's
fail at once; each document's test then checks itself against its baseline values, and the session end compares
the aggregates (:func:`~pytest_ocrmetrics.gating.comparison.compare_runs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from pytest_ocrmetrics.gating.comparison import (
    Comparison,
    Regression,
    compare_runs,
    document_changes,
    engines_text,
    normalization_mismatch,
)
from pytest_ocrmetrics.gating.facts import FactChange, fact_changes
from pytest_ocrmetrics.gating.tolerances import Tolerance, ToleranceLike, resolve_tolerances
from pytest_ocrmetrics.runfile.read import DocumentKey, RunFileError, load_run, scored_documents

__all__ = ["Baseline"]


@dataclass(frozen=True)
class Baseline:
    """A previous run to compare against, indexed by (dataset, engine, document id).

    >>> baseline = Baseline.from_run({"documents": [{"id": "a", "dataset": "d", "engine": "e", "outcome": "passed",
    ...     "metrics": {"cer": 0.02}, "counts": {}, "elapsed_s": 0.1}]})
    >>> [r.message.split(":")[0] for r in baseline.check_document("d", "e", "a", {"cer": 0.05}, ["cer:0.01"])]
    ["cer regressed on document 'a' (e / d)"]
    """

    run: Mapping[str, Any]
    path: Path | None = None
    documents: Mapping[DocumentKey, Mapping[str, Any]] = field(default_factory=dict)
    #: (baseline engine, this run's engine) pairs (``--ocr-baseline-engine``): each of this run's paired engines is
    #: compared with its baseline engine, documents paired by dataset and id, and the others with nothing
    engine_map: tuple[tuple[str, str], ...] = ()

    @property
    def engines(self) -> list[str]:
        """The engines of the baseline's scored documents, sorted."""
        return sorted({engine for _, engine, _ in self.documents})

    def with_engines(self, pairs: Iterable[tuple[str, str]]) -> Baseline:
        """This baseline with its engines paired with this run's (``(baseline engine, run engine)`` pairs)."""
        return replace(self, engine_map=tuple(pairs))

    def _baseline_engine(self, engine: str) -> str | None:
        """The baseline engine this run's ``engine`` is compared with (None: with nothing, when engines are paired
        and it is not)."""
        if not self.engine_map:
            return engine
        return next((old for old, new in self.engine_map if new == engine), None)

    @classmethod
    def from_run(cls, run: Mapping[str, Any], path: Path | None = None) -> Baseline:
        """A baseline from a run already in memory (``path`` only names it in messages)."""
        return cls(run, path, scored_documents(run))

    @classmethod
    def load(cls, path: str | Path, *, schema: bool = True) -> Baseline:
        """Read a JSON run file; a missing, unreadable or invalid file raises :class:`RunFileError` naming it.
        ``schema=False`` checks only its structure (:func:`~pytest_ocrmetrics.runfile.read.load_run`)."""
        path = Path(path)
        try:
            run = load_run(path, schema=schema)
        except RunFileError as exc:
            raise RunFileError(f"baseline {exc}") from None
        return cls.from_run(run, path)

    def document_metrics(self, dataset: str, engine: str, doc_id: str) -> Mapping[str, float] | None:
        """The baseline metrics of one document, or ``None`` when the baseline did not score it."""
        doc = self.documents.get((dataset, engine, doc_id))
        return None if doc is None else doc.get("metrics", {})

    def check_document(
        self, dataset: str, engine: str, doc_id: str, metrics: Mapping[str, float],
        tolerances: Iterable[ToleranceLike] | Mapping[str, Tolerance | float] | None,
    ) -> list[Regression]:
        """Regressions of one document against its baseline values (empty when the baseline lacks the document).

        The plugin calls this inside the document's own test, so a regressed document fails as itself.
        """
        baseline_engine = self._baseline_engine(engine)
        old = None if baseline_engine is None else self.document_metrics(dataset, baseline_engine, doc_id)
        if old is None:
            return []
        return document_changes(dataset, engine, doc_id, old, metrics, resolve_tolerances(tolerances),
                                baseline_engine=baseline_engine if self.engine_map else None)[0]

    def check_facts(self, dataset: str, engine: str, doc_id: str,
                    facts: Iterable[Mapping[str, Any]]) -> list[FactChange]:
        """The facts of one document (``details.facts`` of this run) that passed in the baseline and fail now."""
        baseline_engine = self._baseline_engine(engine)
        doc = None if baseline_engine is None else self.documents.get((dataset, baseline_engine, doc_id))
        return [] if doc is None else fact_changes(dataset, engines_text(engine, baseline_engine), doc_id, doc, facts)[0]

    @property
    def normalization(self) -> Mapping[str, str]:
        """The normalization settings the baseline was made with (the run file's ``normalization``)."""
        return self.run.get("normalization") or {}

    def normalization_mismatch(self, current: Mapping[str, str], *, name: str, override: str) -> str | None:
        """One sentence refusing this baseline for a run with the ``current`` settings, or ``None`` when they agree.

        ``name`` is how the message names the baseline (``--ocr-baseline 'base.json'``), ``override`` the option
        that compares anyway. See :func:`~pytest_ocrmetrics.gating.comparison.normalization_mismatch`.
        """
        return normalization_mismatch(self.normalization, current, baseline_name=name, override=override)

    def compare(self, current_run: Mapping[str, Any], tolerances: Any = None, **kwargs: Any) -> Comparison:
        """Shortcut for :func:`compare_runs` with this baseline (named by its path in the messages)."""
        kwargs.setdefault("baseline_source", None if self.path is None else str(self.path))
        if self.engine_map:
            kwargs.setdefault("engine_map", self.engine_map)
        return compare_runs(self.run, current_run, tolerances, **kwargs)
