"""Helpers shared by the HTML, CSV and Markdown reports: number formatting, column choice, document order.

Everything here reads a run dict (the JSON run file, schema ``pytest-ocrmetrics/1``) and the metric registry;
nothing imports pytest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Collection, Iterable, Mapping, Sequence, Union

from pytest_ocrmetrics.metrics.registry import METRICS

if TYPE_CHECKING:  # the gating package is imported when a report shows gates or a baseline, not by every run
    from pytest_ocrmetrics.gating import Comparison, Gate, GateResult

__all__ = [
    "format_value",
    "format_delta",
    "direction_arrow",
    "run_metrics",
    "primary_metric",
    "worst_first",
    "gate_results",
    "RunVerdict",
    "run_verdict",
    "skipped_entries",
    "skipped_count",
    "collection_errors",
    "GateLike",
    "OUTCOME_ORDER",
    "VERDICT_ORDER",
    "engine_order",
]

#: Failing documents first when documents are listed worst first.
OUTCOME_ORDER: Mapping[str, int] = {"error": 0, "failed": 0, "passed": 1, "filtered": 2, "skipped": 3}

#: Aggregate verdicts of a baseline comparison, most urgent first, for listing them.
VERDICT_ORDER: Mapping[str, int] = {"regression": 0, "not-significant": 1, "improvement": 2, "unchanged": 3, "ungated": 4}

GateLike = Union["Gate", "GateResult", str]


def format_value(metric: str, value: float | None) -> str:
    """A metric value for people: fractions as percentages with two decimals (like the terminal table).

    >>> format_value("cer", 0.0714), format_value("token_ratio", 1.25), format_value("cer", None)
    ('7.14%', '1.250', '-')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    spec = METRICS.get(metric)
    if spec is None or spec.unit == "ratio":
        return f"{value:.3f}"
    if spec.unit == "count":
        return f"{value:g}"
    return f"{value * 100:.2f}%"


def format_delta(metric: str, delta: float | None) -> str:
    """A difference for people: percentage points for fractions.

    >>> format_delta("cer", 0.008), format_delta("token_ratio", -0.5), format_delta("cer", 0.0)
    ('+0.80 pp', '-0.500', '±0')
    """
    if delta is None:
        return "-"
    if delta == 0:
        return "\u00b10"
    spec = METRICS.get(metric)
    if spec is None or spec.unit != "fraction":
        return f"{delta:+.3f}"
    return f"{delta * 100:+.2f} pp"


def direction_arrow(metric: str) -> str:
    """``↓`` for a lower-is-better metric, ``↑`` for a higher-is-better one, empty for a name the registry lacks.

    >>> direction_arrow("cer"), direction_arrow("field_f1"), direction_arrow("bogus")
    ('↓', '↑', '')
    """
    spec = METRICS.get(metric)
    if spec is None:
        return ""
    return "\u2193" if spec.lower_is_better else "\u2191"


def run_metrics(run: Mapping[str, Any]) -> list[str]:
    """The metrics present anywhere in the run (summary or documents), in registry order."""
    present: set[str] = set()
    for row in run.get("summary", ()):
        present.update(row.get("metrics", {}))
    for doc in run.get("documents", ()):
        present.update(doc.get("metrics", {}))
    return [name for name in METRICS if name in present]


def primary_metric(run: Mapping[str, Any]) -> str | None:
    """The metric documents are ranked by: the first registry metric present in the run (CER when there is text)."""
    names = run_metrics(run)
    return names[0] if names else None


def worst_first(
    documents: Iterable[Mapping[str, Any]], metric: str | None, *, first: Collection[tuple[str, str, str]] = (),
) -> list[Mapping[str, Any]]:
    """Failed and errored documents first, then the documents keyed (dataset, engine, id) in ``first`` (regressed
    against a baseline), then by ``metric`` from worst to best; unscored documents last within each group."""

    if first:
        from pytest_ocrmetrics.runfile.read import doc_key

    def key(doc: Mapping[str, Any]) -> tuple[float, int, float, str]:
        rank: float = OUTCOME_ORDER.get(str(doc.get("outcome")), 4)
        if rank > 0 and first and doc_key(doc) in first:
            rank = 0.5
        value = (doc.get("metrics") or {}).get(metric) if metric else None
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return (rank, 1, 0.0, str(doc.get("id")))
        badness = value if METRICS[metric].lower_is_better else -value  # type: ignore[index]
        return (rank, 0, -badness, str(doc.get("id")))

    return sorted(documents, key=key)


def gate_results(gates: Sequence[GateLike] | None, run: Mapping[str, Any]) -> list[GateResult]:
    """Gate results for a report: results are kept, gates (objects or expressions) are evaluated on the run."""
    if not gates:
        return []
    from pytest_ocrmetrics.gating import GateResult, evaluate_gates, parse_gate

    results: list[GateResult] = []
    pending: list[Gate] = []
    for gate in gates or ():
        if isinstance(gate, GateResult):
            results.append(gate)
        else:
            pending.append(parse_gate(gate) if isinstance(gate, str) else gate)
    if pending:
        results.extend(evaluate_gates(pending, run.get("summary", ())))
    return results


@dataclass(frozen=True)
class RunVerdict:
    """What a report's verdict line says: ``status`` is ``passed``, ``failed`` or ``interrupted``."""

    status: str
    text: str

    @property
    def passed(self) -> bool:
        return self.status == "passed"


def run_verdict(run: Mapping[str, Any], results: Sequence[GateResult] = (),
                comparison: Comparison | None = None) -> RunVerdict:
    """The verdict of a run for the HTML and Markdown reports: failed when a document failed or errored, a dataset
    could not be loaded (the run's ``collection_errors``), a gate failed, the baseline comparison regressed, or an
    engine × dataset evaluated no document while the run asked for checks (as pytest judged it);
    ``interrupted`` (the run's ``"interrupted": true``) wins over both, since the documents not reached were never
    checked.

    >>> doc = {"id": "a", "dataset": "d", "engine": "e", "outcome": "failed"}
    >>> run_verdict({"documents": [doc, {**doc, "outcome": "passed"}]}).text
    'FAILED: 1 of 2 documents failed'
    >>> run_verdict({"documents": [{**doc, "outcome": "passed"}], "interrupted": True}).text
    'INTERRUPTED (the results so far): 1 document, none failed'
    """
    documents = list(run.get("documents") or ())
    outcomes = [str(d.get("outcome")) for d in documents]
    failed_docs, errored_docs = outcomes.count("failed"), outcomes.count("error")
    broken = len(collection_errors(run))
    failed_gates = sum(not r.passed for r in results)
    bits = _document_bits(failed_docs, errored_docs, len(documents))
    if broken:
        bits.append(f"{broken} dataset{'s' if broken != 1 else ''} could not be loaded")
    if results:
        bits.append(f"{failed_gates} of {len(results)} gates failed" if failed_gates
                    else f"{len(results)} gate{'s' if len(results) != 1 else ''} passed")
    if comparison is not None:
        bits += _comparison_bits(comparison)
    empty_bits, nothing_checked = _unevaluated_bits(run, documents, results, comparison)
    bits += empty_bits
    if not bits:
        bits.append(f"{len(documents)} document{'s' if len(documents) != 1 else ''}, none failed")
    failed = bool(failed_docs or errored_docs or broken or failed_gates or nothing_checked
                  or (comparison is not None and comparison.exit_failed))
    if run.get("interrupted"):
        return RunVerdict("interrupted", "INTERRUPTED (the results so far): " + ", ".join(bits))
    return RunVerdict("failed" if failed else "passed", ("FAILED: " if failed else "passed: ") + ", ".join(bits))


def _document_bits(failed: int, errored: int, total: int) -> list[str]:
    """``2 of 5 documents failed`` / ``1 failed and 1 errored of 5 documents``; nothing when none did."""
    if not (failed or errored):
        return []
    counts = [f"{n} {what}" for n, what in ((failed, "failed"), (errored, "errored")) if n]
    return [f"{' and '.join(counts)} of {total} documents" if len(counts) > 1
            else f"{counts[0].split()[0]} of {total} documents {counts[0].split()[1]}"]


def _comparison_bits(comparison: Comparison) -> list[str]:
    """What the baseline comparison says in the verdict: aggregate regressions, documents worse beyond tolerance,
    or that the baseline matched nothing."""
    if getattr(comparison, "matched_nothing", False):
        return ["the baseline matched no document of this run: nothing was compared"]
    n_agg, n_doc = len(comparison.aggregate_regressions), len(comparison.regressed_documents)
    bits = [f"{n_agg} aggregate regression{'s' if n_agg != 1 else ''} against the baseline" if n_agg
            else "no aggregate regression against the baseline"]
    if n_doc:
        bits.append(f"{n_doc} document{'s' if n_doc != 1 else ''} worse beyond tolerance"
                    + ("" if comparison.document_policy == "fail" else " (listed, not failed)"))
    return bits


def _unevaluated_bits(run: Mapping[str, Any], documents: Sequence[Mapping[str, Any]], results: Sequence[GateResult],
                      comparison: Comparison | None) -> tuple[list[str], bool]:
    """The engine x dataset pairs that evaluated no document, as a verdict bit, and whether that fails the run (it
    does when the run asked for checks: a gate, a tolerance, or a check on some document)."""
    from pytest_ocrmetrics.gating.verdict import documents_ask_for_checks, unevaluated_rows

    empty = [f"{row['engine']} / {row['dataset']}" for row in unevaluated_rows(run)]
    if not empty:
        return [], False
    # every document skipped or filtered (an engine missing here): its checks compared nothing
    nothing_checked = bool(results) or documents_ask_for_checks(documents) or bool(
        comparison is not None and any(a.tolerance is not None for a in comparison.aggregates))
    return [f"no document was evaluated for {', '.join(empty)}"], bool(nothing_checked)


def collection_errors(run: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The datasets that could not be loaded, each with its error message (the run's ``collection_errors``)."""
    return [error for error in run.get("collection_errors") or () if isinstance(error, Mapping)]


def skipped_entries(run: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The label-file lines and ground-truth entries skipped while loading (the run's ``skipped_entries``)."""
    return [entry for entry in run.get("skipped_entries") or () if isinstance(entry, Mapping)]


def skipped_count(entries: Sequence[Mapping[str, Any]]) -> int:
    """How many entries were skipped: an entry with a ``count`` stands for that many (the rest of one file's)."""
    return sum(count if isinstance(count := entry.get("count", 1), int) and count > 0 else 1 for entry in entries)


def engine_order(run: Mapping[str, Any]) -> list[str]:
    """The run's engines in the order its ``environment.engines`` lists them (the order ``--ocr-engine`` gave them;
    alphabetical in older run files), then any other engine in the order its documents first name it: the first is
    the one the paired views (the HTML document view, the terminal's paired deltas) measure the others against."""
    listed = [str(name) for name in ((run.get("environment") or {}).get("engines") or {})]
    for doc in run.get("documents") or ():
        if str(doc.get("engine")) not in listed:
            listed.append(str(doc.get("engine")))
    return listed
