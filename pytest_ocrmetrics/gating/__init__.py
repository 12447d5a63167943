"""Suite gates and baseline comparison: does this run pass, and did it get worse than the last release?

Nothing here imports pytest: the plugin, the ``ocrmetrics`` command line tool and a notebook all call the same code.
Every metric's name and direction (lower or higher is better) comes from the metric registry, so a gate or a
tolerance is direction-aware without being told.

Gates (no baseline needed) are written ``[STATISTIC:]METRIC OP VALUE [SCOPE]``::

    cer<=0.03                         micro (corpus) CER of every engine x dataset at most 3 %
    mean:field_f1>=0.9                mean over documents
    p95:cer<=0.2 [engine=tesseract]   only rows of the engine "tesseract"
    cer<0.05 [engine=trocr*, dataset=receipts]

>>> gate = parse_gate("cer<=0.03 [dataset=receipts]")
>>> [r.passed for r in evaluate_gates([gate], [{"engine": "e", "dataset": "receipts", "documents": 2,
...     "metrics": {"cer": {"micro": 0.021, "mean": 0.02, "n": 2}}}])]
[True]

Tolerances for baseline comparison are ``METRIC:AMOUNT`` (absolute, in the metric's unit) or ``METRIC:PERCENT%``
(relative to the baseline value); ``*`` sets the tolerance of every metric without its own:

>>> parse_tolerance("cer:0.005").allowed(0.02)
0.005
>>> round(parse_tolerance("field_f1:2%").allowed(0.9), 6)
0.018

The package is split along its jobs, one module each:

- :mod:`~pytest_ocrmetrics.gating.gates`: suite gates on a run's aggregates;
- :mod:`~pytest_ocrmetrics.gating.tolerances`: how much worse a metric may get than the baseline;
- :mod:`~pytest_ocrmetrics.runfile.read`: reading and validating JSON run files (NaN and infinity refused);
- :mod:`~pytest_ocrmetrics.gating.comparison`: a run against a baseline run, per document and per aggregate
  (a comparison that matches no document fails, one across normalization settings warns);
- :mod:`~pytest_ocrmetrics.gating.facts`: page-level facts that passed in the baseline and fail now;
- :mod:`~pytest_ocrmetrics.gating.bootstrap`: the paired bootstrap interval of each aggregate's delta;
- :mod:`~pytest_ocrmetrics.gating.baseline`: the plugin's ``--ocr-baseline``, loaded and checked at startup.

Everything public is importable from here: ``from pytest_ocrmetrics.gating import compare_runs``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers and IDEs read; at run time each name is imported when first used
    from pytest_ocrmetrics.gating.baseline import Baseline
    from pytest_ocrmetrics.gating.comparison import (
        CLI_OPTIONS,
        DOCUMENT_REGRESSION_POLICIES,
        PYTEST_OPTIONS,
        AggregateDelta,
        Comparison,
        DocumentRef,
        Improvement,
        OptionNames,
        Regression,
        compare_runs,
        describe_normalization,
        normalization_mismatch,
        parse_document_regressions,
        parse_significance,
    )
    from pytest_ocrmetrics.gating.facts import FactChange, fact_changes
    from pytest_ocrmetrics.gating.gates import OPERATORS, STATISTICS, Gate, GateResult, evaluate_gates, parse_gate
    from pytest_ocrmetrics.gating.tolerances import (
        Tolerance,
        ToleranceLike,
        parse_tolerance,
        resolve_tolerances,
        tolerance_for,
    )
    from pytest_ocrmetrics.runfile.read import (
        SCORED_OUTCOMES,
        DocumentKey,
        RunFileError,
        check_run_structure,
        doc_key,
        load_run,
        load_shard,
        scored_documents,
        validate_run,
    )

# the package is imported by every run that writes a verdict (gating.verdict); the comparison, bootstrap and gate
# modules load only when a run uses them
_MODULE_OF = {
    "AggregateDelta": "pytest_ocrmetrics.gating.comparison",
    "Baseline": "pytest_ocrmetrics.gating.baseline",
    "CLI_OPTIONS": "pytest_ocrmetrics.gating.comparison",
    "Comparison": "pytest_ocrmetrics.gating.comparison",
    "DOCUMENT_REGRESSION_POLICIES": "pytest_ocrmetrics.gating.comparison",
    "DocumentKey": "pytest_ocrmetrics.runfile.read",
    "DocumentRef": "pytest_ocrmetrics.gating.comparison",
    "FactChange": "pytest_ocrmetrics.gating.facts",
    "Gate": "pytest_ocrmetrics.gating.gates",
    "GateResult": "pytest_ocrmetrics.gating.gates",
    "Improvement": "pytest_ocrmetrics.gating.comparison",
    "OPERATORS": "pytest_ocrmetrics.gating.gates",
    "OptionNames": "pytest_ocrmetrics.gating.comparison",
    "PYTEST_OPTIONS": "pytest_ocrmetrics.gating.comparison",
    "Regression": "pytest_ocrmetrics.gating.comparison",
    "RunFileError": "pytest_ocrmetrics.runfile.read",
    "check_run_structure": "pytest_ocrmetrics.runfile.read",
    "SCORED_OUTCOMES": "pytest_ocrmetrics.runfile.read",
    "STATISTICS": "pytest_ocrmetrics.gating.gates",
    "Tolerance": "pytest_ocrmetrics.gating.tolerances",
    "ToleranceLike": "pytest_ocrmetrics.gating.tolerances",
    "compare_runs": "pytest_ocrmetrics.gating.comparison",
    "describe_normalization": "pytest_ocrmetrics.gating.comparison",
    "doc_key": "pytest_ocrmetrics.runfile.read",
    "evaluate_gates": "pytest_ocrmetrics.gating.gates",
    "fact_changes": "pytest_ocrmetrics.gating.facts",
    "load_run": "pytest_ocrmetrics.runfile.read",
    "load_shard": "pytest_ocrmetrics.runfile.read",
    "normalization_mismatch": "pytest_ocrmetrics.gating.comparison",
    "parse_document_regressions": "pytest_ocrmetrics.gating.comparison",
    "parse_gate": "pytest_ocrmetrics.gating.gates",
    "parse_significance": "pytest_ocrmetrics.gating.comparison",
    "parse_tolerance": "pytest_ocrmetrics.gating.tolerances",
    "resolve_tolerances": "pytest_ocrmetrics.gating.tolerances",
    "scored_documents": "pytest_ocrmetrics.runfile.read",
    "tolerance_for": "pytest_ocrmetrics.gating.tolerances",
    "validate_run": "pytest_ocrmetrics.runfile.read",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CLI_OPTIONS",
    "OptionNames",
    "PYTEST_OPTIONS",
    "FactChange",
    "fact_changes",
    "tolerance_for",
    "STATISTICS",
    "OPERATORS",
    "Gate",
    "GateResult",
    "parse_gate",
    "evaluate_gates",
    "Tolerance",
    "ToleranceLike",
    "parse_tolerance",
    "resolve_tolerances",
    "parse_significance",
    "RunFileError",
    "load_run",
    "load_shard",
    "validate_run",
    "check_run_structure",
    "DocumentKey",
    "doc_key",
    "Regression",
    "Improvement",
    "AggregateDelta",
    "DocumentRef",
    "Comparison",
    "Baseline",
    "compare_runs",
    "scored_documents",
    "SCORED_OUTCOMES",
    "describe_normalization",
    "normalization_mismatch",
    "DOCUMENT_REGRESSION_POLICIES",
    "parse_document_regressions",
]
