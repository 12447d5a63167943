from __future__ import annotations

import math

from pytest_ocrmetrics.metrics.fields import field_f1
from pytest_ocrmetrics.metrics.layout import bag_of_words, lcs_ratio, sequence_accuracy
from pytest_ocrmetrics.metrics.rates import json_float, normalized_distance, share
from pytest_ocrmetrics.metrics.text import token_accuracy
from pytest_ocrmetrics.metrics.word_match import word_match


def test_share() -> None:
    assert share(1, 4, both_empty=True) == 0.25
    assert share(0, 0, both_empty=True) == 1.0
    assert share(0, 0, both_empty=False) == 0.0


def test_normalized_distance() -> None:
    assert normalized_distance(3, 4, 6) == 0.5
    assert normalized_distance(0, 0, 0) == 0.0


def test_json_float() -> None:
    assert json_float(0.5) == 0.5
    assert json_float(None) is None
    assert json_float(math.inf) is None and json_float(math.nan) is None


def test_every_share_metric_has_the_same_empty_convention() -> None:
    """Both sides empty: 1.0 (nothing to find, nothing found); one side empty: 0.0. The exception is field_f1,
    which follows the specification's code (issue 20 C2): two records without fields score 0.0."""
    assert (field_f1({}, {}).precision, field_f1({}, {}).recall, field_f1({}, {}).f1) == (0.0, 0.0, 0.0)
    both = [
        bag_of_words("", "").f1,
        word_match("", "").f1,
        word_match("", "").crr,
        token_accuracy("", "").f1,
        sequence_accuracy("", "").value,
        lcs_ratio("", "").value,
    ]
    assert both == [1.0] * len(both)
    one = [
        bag_of_words("", "word").precision,
        bag_of_words("word", "").recall,
        word_match("word", "").f1,
        word_match("", "word").crr,
        field_f1({"a": "1"}, {}).recall,
        field_f1({}, {"a": "1"}).precision,
        token_accuracy("", "word").value,
        sequence_accuracy("", "word").value,
        lcs_ratio("", "word").value,
    ]
    assert one == [0.0] * len(one)
