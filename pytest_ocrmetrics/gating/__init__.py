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
- :mod:`~pytest_ocrmetrics.gating.runfile`: reading and validating JSON run files (NaN and infinity refused);
- :mod:`~pytest_ocrmetrics.gating.comparison`: a run against a baseline run, per document and per aggregate
  (a comparison that matches no document fails, one across normalization settings warns);
- :mod:`~pytest_ocrmetrics.gating.facts`: page-level facts that passed in the baseline and fail now;
- :mod:`~pytest_ocrmetrics.gating.bootstrap`: the paired bootstrap interval of each aggregate's delta;
- :mod:`~pytest_ocrmetrics.gating.baseline`: the plugin's ``--ocr-baseline``, loaded and checked at startup.

Everything public is importable from here: ``from pytest_ocrmetrics.gating import compare_runs``.
"""

from __future__ import annotations

from pytest_ocrmetrics.gating.baseline import Baseline
from pytest_ocrmetrics.gating.comparison import (
    DOCUMENT_REGRESSION_POLICIES,
    AggregateDelta,
    Comparison,
    DocumentRef,
    Improvement,
    Regression,
    compare_runs,
    describe_normalization,
    normalization_mismatch,
    parse_document_regressions,
    parse_significance,
)
from pytest_ocrmetrics.gating.facts import FactChange, fact_changes
from pytest_ocrmetrics.gating.gates import OPERATORS, STATISTICS, Gate, GateResult, evaluate_gates, parse_gate
from pytest_ocrmetrics.gating.runfile import (
    SCORED_OUTCOMES,
    DocumentKey,
    RunFileError,
    check_run_structure,
    doc_key,
    load_run,
    scored_documents,
    validate_run,
)
from pytest_ocrmetrics.gating.tolerances import (
    Tolerance,
    ToleranceLike,
    parse_tolerance,
    resolve_tolerances,
    tolerance_for,
)

__all__ = [
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
