"""The session's verdict beyond single tests: suite gates, the baseline comparison and the engine × dataset pairs that
evaluated nothing.

Pytest-free: the plugin hands over the finished run (the JSON run file as a dict) and gets back what failed and the
lines to print; ``ocrmetrics compare`` and ``ocrmetrics merge`` apply the same rules outside pytest. The report files
are written by :mod:`pytest_ocrmetrics.reporting.files`, the JUnit suite properties made by
:mod:`pytest_ocrmetrics.reporting.junit` (both re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

if TYPE_CHECKING:  # the gating package is imported by a run that has gates or a baseline, not by every run
    from pytest_ocrmetrics.gating import Baseline, Comparison, Gate, GateResult, Tolerance

__all__ = ["Verdict", "judge_run", "unevaluated_rows", "unevaluated_sentences", "documents_ask_for_checks"]

@dataclass(frozen=True)
class Verdict:
    """Gate results and the baseline comparison of one run; ``failed`` when either should fail the session."""

    gates: tuple[GateResult, ...] = ()
    comparison: Comparison | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    error: bool = False  # the gates and the baseline could not be checked at all: never a pass
    # one sentence per engine × dataset whose documents were all left unscored (skipped, filtered or errored), and
    # whether the run asked for a verdict (thresholds, gates, a baseline's tolerances): then it compared nothing there
    unevaluated: tuple[str, ...] = ()
    checks_requested: bool = False

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if not g.passed]

    @property
    def failed(self) -> bool:
        """A gate failed, an aggregate regressed, the baseline matched no document (so nothing was checked), a
        regression tolerance's metric was compared nowhere, or the run asked for a verdict and some engine × dataset
        had no document evaluated (every one skipped, filtered or errored: its thresholds compared nothing).

        Document regressions fail their own tests (``--ocr-document-regressions=fail``) or are only listed (``warn``,
        ``off``), so they are not counted here.
        """
        comparison = self.comparison
        return self.error or bool(self.failed_gates) or bool(comparison is not None and (
            comparison.aggregate_failed or comparison.matched_nothing or comparison.compared_nothing)) or bool(
            self.unevaluated and self.checks_requested)

    def baseline_entry(self) -> dict[str, Any] | None:
        """The run file's top-level ``baseline`` object (compared / new / missing, normalization), or ``None``."""
        return None if self.comparison is None else self.comparison.baseline_entry()

    def lines(self, *, list_improvements: bool = True) -> list[str]:
        """What the terminal summary shows: each gate, then the comparison's summary and update lines (the improved
        documents counted in one line with ``list_improvements=False``, pytest's short summary)."""
        out: list[str] = []
        if self.gates:
            out.append("gates:")
            out += [f"  {'PASS' if g.passed else 'FAIL'} {g.message}" for g in self.gates]
        if self.comparison is not None:
            out += self.comparison.summary_lines(list_improvements=list_improvements)  # and "can be updated" lines
        out += list(self.notes)
        kind = "ERROR" if self.checks_requested else "WARNING"
        out += [f"{kind}: {sentence}" for sentence in self.unevaluated]
        return out


def judge_run(
    run: Mapping[str, Any],
    *,
    gates: Sequence[Gate] = (),
    baseline: Baseline | None = None,
    tolerances: Mapping[str, Tolerance] | Sequence[Tolerance] = (),
    significance: float | None = None,
    seed: int = 0,
    checks_requested: bool = False,
    document_regressions: str = "warn",
) -> Verdict:
    """Evaluate the suite gates on the run's summary and compare the run with the baseline, and find the engine ×
    dataset pairs with no document evaluated (a failure when ``checks_requested``, the run's thresholds, or
    ``gates`` or ``tolerances`` asked for a verdict; a warning otherwise)."""
    gate_results: tuple[GateResult, ...] = ()
    if gates:
        from pytest_ocrmetrics.gating import evaluate_gates

        gate_results = tuple(evaluate_gates(gates, run["summary"]))
    comparison = None
    if baseline is not None:  # (its lines say when no tolerance was given: nothing fails)
        comparison = baseline.compare(run, tolerances, significance=significance, seed=seed,
                                      document_regressions=document_regressions)
    requested = bool(checks_requested or gates or tolerances)
    return Verdict(gate_results, comparison, unevaluated=tuple(unevaluated_sentences(run, requested)),
                   checks_requested=requested)


def unevaluated_rows(run: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The summary rows (engine × dataset) that had documents but evaluated none of them (every one skipped, filtered
    or errored). A run file of 0.1 has no ``evaluated``: none of its rows is taken for one."""
    return [row for row in run.get("summary") or () if row.get("documents") and row.get("evaluated", 1) == 0]


def documents_ask_for_checks(documents: Iterable[Mapping[str, Any]]) -> bool:
    """Whether some document was checked (``checks``) or would have been had it been scored (``declared_checks``):
    then a pair that evaluated nothing compared nothing the run asked for."""
    return any(document.get("checks") or document.get("declared_checks") for document in documents)


def unevaluated_sentences(run: Mapping[str, Any], requested: bool = False) -> list[str]:
    """One sentence for each engine × dataset of the run that had documents but evaluated none of them: why (the
    counts, and the first skip or error message), and, when ``requested``, that its checks compared nothing.

    >>> run = {"summary": [{"engine": "tesseract", "dataset": "receipts", "documents": 2, "evaluated": 0,
    ...                     "skipped": 2}],
    ...        "documents": [{"engine": "tesseract", "dataset": "receipts", "outcome": "skipped",
    ...                       "message": "engine 'tesseract' is not available: no binary"}]}
    >>> print(unevaluated_sentences(run, requested=True)[0])  # doctest: +NORMALIZE_WHITESPACE
    tesseract / receipts: none of its 2 documents was evaluated (2 skipped: engine 'tesseract' is not available:
    no binary), so nothing was checked there
    """
    empty = unevaluated_rows(run)
    if not empty:
        return []
    wanted = {(row["engine"], row["dataset"]) for row in empty}
    first: dict[tuple[str, str], str] = {}
    for document in run.get("documents") or ():  # read back only in this rare case
        key = (document.get("engine"), document.get("dataset"))
        if key in wanted and key not in first and document.get("message"):
            first[key] = " ".join(str(document["message"]).split()).removeprefix("filtered: ")[:300]
            if len(first) == len(wanted):
                break
    from pytest_ocrmetrics.core.safe_text import show_controls  # names and messages reach a terminal

    sentences = []
    for row in empty:
        counts = ", ".join(f"{row[kind]} {'error' if kind == 'errors' and row[kind] == 1 else kind}"
                           for kind in ("skipped", "filtered", "errors") if row.get(kind))
        reason = first.get((row["engine"], row["dataset"]))
        why = f"{counts}: {reason}" if counts and reason else counts or reason or "no score"
        count = row["documents"]
        sentence = (f"{row['engine']} / {row['dataset']}: {'none of its' if count != 1 else 'its'} {count} "
                    f"document{'s' if count != 1 else ''} {'was' if count != 1 else 'was not'} evaluated ({why})")
        sentences.append(show_controls(sentence + (", so nothing was checked there" if requested else "")))
    return sentences
