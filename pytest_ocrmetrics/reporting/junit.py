"""The JUnit ``<testsuite>`` properties of a run: its aggregates, page-level facts, gates, baseline comparison and the
pairs that evaluated nothing, where a CI dashboard reads them (the per-testcase properties ride on each test's
report, see :mod:`pytest_ocrmetrics.plugin.records`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from pytest_ocrmetrics.gating import Comparison
    from pytest_ocrmetrics.gating.verdict import Verdict

__all__ = ["suite_properties"]


def suite_properties(run: Mapping[str, Any], verdict: Verdict) -> list[tuple[str, str]]:
    """JUnit ``<testsuite>`` properties: ``ocr.<engine>.<dataset>.<metric>`` (micro) and ``...<metric>.mean``,
    document counts (``.documents``, ``.evaluated``), with page-level facts ``...facts.score`` (olmOCR-bench's
    headline, ``.low``/``.high`` its interval), ``.passed``, ``.total``, ``.flaky``, ``.unchecked``, ``.checked`` (the
    facts the score is over: those that could be checked), one
    ``ocr.gate.<expression>`` = passed/failed per gate and, with a baseline, ``ocr.baseline.regressed`` (``true``
    whenever the comparison fails the run: an aggregate regressed, it matched nothing, a tolerance compared nowhere, or
    documents regressed under ``--ocr-document-regressions=fail``), ``.compared``, ``.new``, ``.missing``,
    ``.document_regressions`` (how many documents got worse beyond tolerance; ``.policy``, and ``.documents`` naming
    the first 100), ``.fact_regressions``/``.fact_fixes`` when facts flipped, and, when there is one, ``.error`` (it
    matched no document) or ``.warning`` (other normalization settings, compared anyway); ``ocr.unevaluated.error``
    (or ``.warning`` when no check was asked for) lists the engine × dataset pairs that evaluated no document."""
    props = _summary_properties(run) + _facts_properties(run)
    for gate in verdict.gates:
        props.append((f"ocr.gate.{gate.gate.expression}", "passed" if gate.passed else "failed"))
    if verdict.comparison is not None:
        props += _baseline_properties(verdict.comparison)
    if verdict.unevaluated:  # pairs that scored nothing: the exit status's reason, where a dashboard reads it
        props.append((f"ocr.unevaluated.{'error' if verdict.checks_requested else 'warning'}",
                      "; ".join(verdict.unevaluated)))
    return props


def _summary_properties(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Per engine x dataset: document counts and each metric's micro and mean value."""
    props: list[tuple[str, str]] = []
    for row in run["summary"]:
        prefix = f"ocr.{row['engine']}.{row['dataset']}"
        props.append((f"{prefix}.documents", str(row["documents"])))
        if "evaluated" in row:
            props.append((f"{prefix}.evaluated", str(row["evaluated"])))
        for name, stats in row["metrics"].items():
            if stats.get("micro") is not None:
                props.append((f"{prefix}.{name}", repr(round(stats["micro"], 6))))
            if stats.get("mean") is not None:
                props.append((f"{prefix}.{name}.mean", repr(round(stats["mean"], 6))))
    return props


def _facts_properties(run: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Page-level facts per engine x dataset: the olmOCR-bench score, its interval and its counts."""
    props: list[tuple[str, str]] = []
    for row in run.get("facts_summary") or ():
        prefix = f"ocr.{row['engine']}.{row['dataset']}.facts"
        if row.get("headline") is not None:  # none when no fact of the row could be checked
            props.append((f"{prefix}.score", repr(round(row["headline"], 6))))
        if row.get("interval"):
            props += [(f"{prefix}.score.low", repr(round(row["interval"][0], 6))),
                      (f"{prefix}.score.high", repr(round(row["interval"][1], 6)))]
        props += [(f"{prefix}.{key}", str(row.get(key, 0))) for key in ("passed", "total", "flaky", "unchecked")]
        props.append((f"{prefix}.checked", str(row.get("checked", row.get("total", 0)))))  # the score's facts
    return props


def _baseline_properties(comparison: Comparison) -> list[tuple[str, str]]:
    """``ocr.baseline.*``: whether the comparison fails the run, what it compared, the documents and facts that
    moved, and its error or warning."""
    props = [("ocr.baseline.regressed", "true" if comparison.exit_failed else "false"),
             ("ocr.baseline.compared", str(comparison.compared)),
             ("ocr.baseline.new", str(len(comparison.new_documents))),
             ("ocr.baseline.missing", str(len(comparison.missing_documents)))]
    if comparison.engine_map:  # --ocr-baseline-engine: which baseline engine each of this run's was compared with
        props.append(("ocr.baseline.engine_map", "; ".join(f"{old} -> {new}" for old, new in comparison.engine_map)))
    if comparison.document_policy != "off":  # documents worse beyond tolerance: failed or only listed
        documents = comparison.regressed_documents
        props += [("ocr.baseline.document_regressions", str(len(documents))),
                  ("ocr.baseline.document_regressions.policy", comparison.document_policy)]
        if documents:
            names = [f"{dataset}/{doc_id} ({engine})" for dataset, engine, doc_id in documents[:100]]
            more = f" and {len(documents) - 100} more" if len(documents) > 100 else ""
            props.append(("ocr.baseline.document_regressions.documents", "; ".join(names) + more))
    if comparison.fact_regressions or comparison.fact_fixes:
        props += [("ocr.baseline.fact_regressions", str(len(comparison.fact_regressions))),
                  ("ocr.baseline.fact_fixes", str(len(comparison.fact_fixes)))]
    error = comparison.error or "; ".join(comparison.compared_nothing)
    props += [(f"ocr.baseline.{kind}", text) for kind, text in (("error", error),
                                                                ("warning", comparison.warning)) if text]
    return props
