"""Page-level facts compatible with olmOCR-bench (``allenai/olmocr``, ``olmocr/bench/``): present, absent, order,
table, math, baseline, format and footnote checks on an engine's Markdown/HTML output.

>>> from pytest_ocrmetrics.metrics.facts import parse_fact, check_repeats
>>> fact = parse_fact({"id": "hdr", "type": "absent", "text": "Page 3 of 9"}, require_location=False)
>>> result = check_repeats(fact, ["Body text", "Body text\\nPage 3 of 9", "Body"])
>>> result.passed, result.flaky, [v.passed for v in result.repeats]
(True, True, [True, False, True])
"""

from pytest_ocrmetrics.metrics.facts.model import (
    FACT_FIELDS,
    FACT_TYPES,
    Fact,
    FactError,
    FactResult,
    FactVerdict,
    baseline_fact,
    check_fact,
    check_repeats,
    parse_fact,
)
from pytest_ocrmetrics.metrics.facts.summary import FactSummary, summarize_facts
from pytest_ocrmetrics.metrics.facts.text import normalize_text

__all__ = ["FACT_FIELDS", "FACT_TYPES", "Fact", "FactError", "FactResult", "FactVerdict", "baseline_fact",
           "check_fact", "check_repeats", "parse_fact", "normalize_text", "FactSummary", "summarize_facts"]
