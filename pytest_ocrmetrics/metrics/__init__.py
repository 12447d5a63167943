"""OCR metrics as a pure library (no pytest import): usable from a notebook.

>>> from pytest_ocrmetrics.metrics import cer, wer, field_f1
>>> round(cer("INVOICE #12345", "INV0ICE #12345").value, 4)
0.0714
>>> field_f1({"total": "60.30"}, {"total": "RM 60.3"}, compare="normalized").f1
1.0

Every function returns a small frozen dataclass with ``value``, its raw counts and ``to_dict()``. Submodules are
imported on first use, so ``import pytest_ocrmetrics.metrics`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from pytest_ocrmetrics.metrics.normalize import NormalizationProfile, get_profile
from pytest_ocrmetrics.metrics.registry import METRICS, MetricSpec, get_metric

_EXPORTS: dict[str, tuple[str, ...]] = {
    "text": ("cer", "wer", "ser", "token_accuracy", "confusion", "exact_match", "normalized_edit_distance",
             "edit_similarity", "score_text", "ErrorRate", "LineErrorRate", "TokenAccuracy", "ConfusionMatrix",
             "ExactMatch", "EditDistance", "TextScores", "EMPTY_REFERENCE_POLICIES"),
    "aggregate": ("MetricAccumulator", "AggregateStats", "bootstrap_ci", "percentile"),
    "alignment": ("Alignment", "align", "align_text", "align_words"),
    "fields": ("field_f1", "anls", "anls_corpus", "FieldF1Result", "AnlsResult", "AnlsCorpusResult",
               "normalize_field_value", "parse_date", "parse_amount"),
    "structured": ("json_validity", "JsonValidity", "SchemaViolation", "xml_validity", "XmlValidity",
                   "structured_validity"),
    "tokens": ("token_efficiency", "TokenEfficiency", "encoding_for_model"),
    "downstream": ("downstream_task", "DownstreamResult", "success_rate"),
    "layout": ("word_set_overlap", "bag_of_words", "ngram_overlap", "sequence_accuracy", "lcs_ratio",
               "char_lcs_ratio", "character_accuracy", "OverlapScores", "NgramOverlapScores", "SequenceAccuracy",
               "LcsRatio",
               "CharLcsRatio", "CharacterAccuracy"),
    "word_match": ("word_match", "WordMatch", "WordPair"),
    "units": ("graphemes", "codepoints", "words"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = ["NormalizationProfile", "get_profile", "METRICS", "MetricSpec", "get_metric", *_WHERE]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_ocrmetrics.metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pytest_ocrmetrics.metrics.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
