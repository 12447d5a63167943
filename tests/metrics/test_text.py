from __future__ import annotations

import json
import math
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.metrics.text import (
    cer,
    confusion,
    edit_similarity,
    exact_match,
    normalized_edit_distance,
    score_text,
    ser,
    token_accuracy,
    wer,
)

INVOICE_REF = "INVOICE #12345 TOTAL: $150.00"
INVOICE_HYP = "INV0ICE #I2345 T0TAL: $15O.OO"


# --- CER / WER ------------------------------------------------------------------------------------------------------


def test_cer_invoice_example() -> None:
    r = cer("INVOICE #12345", "INV0ICE #12345")
    assert (r.hits, r.substitutions, r.deletions, r.insertions) == (13, 1, 0, 0)
    assert (r.errors, r.reference_length, r.hypothesis_length) == (1, 14, 14)
    assert r.value == 1 / 14
    assert (r.metric, r.unit, r.tokenizer, r.normalization) == ("cer", "grapheme", None, "nfc")


def test_cer_counts_insertions_and_can_exceed_one() -> None:
    r = cer("ab", "xxabyy")
    assert (r.insertions, r.errors, r.value) == (4, 4, 2.0)


def test_grapheme_and_codepoint_units_differ_on_combining_marks() -> None:
    # one reader-visible character differs: n-tilde (precomposed) vs m + combining tilde
    assert cer("Schly\u00f1", "Schlym\u0303").value == 1 / 6
    assert cer("Schly\u00f1", "Schlym\u0303", unit="codepoint").value == 2 / 6


def test_nfc_default_and_none_profile() -> None:
    assert cer("caf\u00e9", "cafe\u0301").value == 0.0
    r = cer("caf\u00e9", "cafe\u0301", normalize="none")
    assert r.value == 0.25 and r.normalization == "none"
    assert cer("caf\u00e9", "cafe\u0301", unit="codepoint", normalize="none").errors == 2


def test_wer_counts_words() -> None:
    r = wer("the cat sat on the mat", "the cat sat on hat")
    assert (r.hits, r.substitutions, r.deletions, r.insertions) == (4, 1, 1, 0)
    assert r.value == 2 / 6
    assert (r.metric, r.unit, r.tokenizer) == ("wer", "word", "whitespace")


def test_wer_tokenizers() -> None:
    assert wer("Hello, world!", "Hello world", tokenizer="unicode").value == 0.0
    assert wer("Hello, world!", "Hello world").value == 1.0
    assert wer("one\ntwo", "one two").value == 0.0
    assert wer("one\ntwo", "one two", tokenizer="jiwer").value == 2.0


def test_profile_is_recorded_and_applied() -> None:
    r = wer("Hello,  World", "hello world", normalize="lenient")
    assert r.value == 0.0 and r.normalization == "nfkc+quotes+casefold+punctuation+whitespace"


def test_error_rate_keeps_its_alignment_out_of_eq_and_repr() -> None:
    a, b = cer("abc", "abd"), cer("abc", "abd")
    assert a.alignment is not None and a.alignment.editops == (("replace", 2, 2),)
    assert a == b
    assert "alignment" not in repr(a)


def test_counts_carry_the_registry_numerator_and_denominator() -> None:
    counts = cer("abc", "abd").counts()
    assert counts["errors"] == 1 and counts["reference_length"] == 3
    assert set(counts) >= {METRICS["cer"].numerator, METRICS["cer"].denominator}


# --- empty references -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "hypothesis", "bounded", "jiwer", "dinglehopper"),
    [
        ("", "", 0.0, 0.0, 0.0),
        ("", "abc", 1.0, 3.0, math.inf),
        ("abc", "", 1.0, 1.0, 1.0),
    ],
)
def test_empty_reference_policies(reference: str, hypothesis: str, bounded: float, jiwer: float,
                                  dinglehopper: float) -> None:
    assert cer(reference, hypothesis).value == bounded
    assert cer(reference, hypothesis, empty_reference="jiwer").value == jiwer
    assert cer(reference, hypothesis, empty_reference="dinglehopper").value == dinglehopper
    assert cer(reference, hypothesis).errors == len(reference) + len(hypothesis)  # counts stay exact


def test_empty_reference_never_writes_nan_or_infinity() -> None:
    r = wer("", "some words", empty_reference="dinglehopper")
    assert r.value == math.inf
    assert r.to_dict()["value"] is None
    json.dumps(r.to_dict(), allow_nan=False)
    for policy in ("bounded", "jiwer", "dinglehopper"):
        json.dumps(score_text("", "x\ny", empty_reference=policy).to_dict(), allow_nan=False)
        json.dumps(score_text("", "", empty_reference=policy).to_dict(), allow_nan=False)


def test_unknown_policy_unit_and_tokenizer() -> None:
    with pytest.raises(ValueError, match="unknown empty_reference policy 'zero'; valid: bounded, jiwer, dinglehopper"):
        cer("a", "b", empty_reference="zero")
    with pytest.raises(ValueError, match="unknown unit 'char'; valid units: grapheme, codepoint"):
        cer("a", "b", unit="char")
    with pytest.raises(ValueError, match="unknown tokenizer 'nltk'"):
        wer("a", "b", tokenizer="nltk")


def test_cer_and_wer_to_dict_have_the_specification_keys() -> None:
    """Document 000, 1.1 and 1.2 (issue 20 C4): {"cer": 7.14, "insertions": 0, "deletions": 0, "substitutions": 1,
    "total_chars": 14} and {"wer": 33.33, "word_substitutions": 1, "word_deletions": 0, "word_insertions": 0,
    "total_words": 3}; the rates as fractions here."""
    d = cer("INVOICE #12345", "INV0ICE #12345").to_dict()
    assert {k: d[k] for k in ("cer", "insertions", "deletions", "substitutions", "total_chars")} == {
        "cer": 1 / 14, "insertions": 0, "deletions": 0, "substitutions": 1, "total_chars": 14}
    d = wer("TOTAL AMOUNT DUE", "TOTAL AMUNT DUE").to_dict()
    assert {k: d[k] for k in ("wer", "word_substitutions", "word_deletions", "word_insertions", "total_words")} == {
        "wer": 1 / 3, "word_substitutions": 1, "word_deletions": 0, "word_insertions": 0, "total_words": 3}
    assert d["value"] == d["wer"] and "total_chars" not in d
    d = wer("a b", "a x b c").to_dict()
    assert (d["word_deletions"], d["word_insertions"]) == (0, 2)
    assert wer("", "x", empty_reference="dinglehopper").to_dict()["wer"] is None  # JSON-safe, as "value"


# --- SER --------------------------------------------------------------------------------------------------------------

SPEC_GROUND_TRUTH_LINES = ["INVOICE NUMBER: INV-2024-001", "DATE: 2024-03-15", "TOTAL: $150.00"]
SPEC_PREDICTED_LINES = ["INVOICE NUMBER: INV-2024-001", "DATE: 2024-03-15", "TOTAL: $15O.OO"]


def test_ser_specification_example() -> None:
    """Document 000, 1.3: {"ser": 33.33, "total_sentences": 3, "error_sentences": 1, "correct_sentences": 2,
    "error_indices": [2]} (the ser as a fraction here)."""
    r = ser(SPEC_GROUND_TRUTH_LINES, SPEC_PREDICTED_LINES)
    assert (r.ser, r.total_sentences, r.error_sentences, r.correct_sentences, r.error_indices) == (1 / 3, 3, 1, 2, (2,))
    d = r.to_dict()
    assert {k: d[k] for k in ("ser", "total_sentences", "error_sentences", "correct_sentences", "error_indices")} == {
        "ser": 1 / 3, "total_sentences": 3, "error_sentences": 1, "correct_sentences": 2, "error_indices": [2]}
    json.dumps(d, allow_nan=False)


def test_ser_divides_by_the_longer_side_not_the_reference() -> None:
    """Where the old definition (errors / reference lines) and the specification's differ: 1 line vs 3 lines."""
    r = ser(["TOTAL: $150.00"], ["TOTAL: $150.00", "THANK YOU", "COME AGAIN"])
    assert (r.value, r.error_sentences, r.total_sentences, r.error_indices) == (2 / 3, 2, 3, (1, 2))
    assert (r.reference_lines, r.hypothesis_lines, r.correct_sentences) == (1, 3, 1)
    old = ser(["TOTAL: $150.00"], ["TOTAL: $150.00", "THANK YOU", "COME AGAIN"], denominator="reference")
    assert (old.value, old.error_sentences, old.denominator) == (2.0, 2, "reference")


def test_ser_compares_stripped_lines_and_pads_with_empty_lines() -> None:
    assert ser(["  a  ", "b\t"], ["a", " b"]).value == 0.0  # the old definition counted both lines as errors
    assert ser(["a", "b"], ["a", "b", "   "]).error_indices == ()  # an extra blank line equals the padding ""
    missing = ser(["a", "b", "c"], ["a", "b"])
    assert (missing.error_sentences, missing.error_indices, missing.value) == (1, (2,), 1 / 3)
    extra = ser(["a", "b"], ["a", "b", "c", "d"])
    assert (extra.error_sentences, extra.error_indices, extra.value, extra.correct_sentences) == (2, (2, 3), 0.5, 2)


def test_ser_by_position_on_strings() -> None:
    r = ser("TOTAL 10.00\nCASH 20.00\nCHANGE 10.00", "TOTAL 10.00\nCASH 2O.00\nCHANGE 10.00")
    assert (r.error_sentences, r.reference_lines, r.hypothesis_lines) == (1, 3, 3)
    assert r.error_indices == (1,) and r.value == 1 / 3 and r.correct_sentences == 2


def test_ser_string_input_drops_blank_lines_and_list_input_keeps_them() -> None:
    assert ser("a\n\n  \nb\n", "a\nb").value == 0.0
    assert ser(["a", "", "b"], ["a", "b"]).error_indices == (1, 2)


def test_ser_keeps_line_breaks_under_a_whitespace_profile() -> None:
    r = ser("Hello  World\nSecond line", "hello world\nsecond  lime", normalize="lenient")
    assert (r.reference_lines, r.error_indices) == (2, (1,))
    assert r.normalization == "nfkc+quotes+casefold+punctuation+whitespace"


def test_ser_empty() -> None:
    assert ser("", "").value == 0.0 and ser("", "").total_sentences == 0
    assert ser("", "text").value == 1.0
    assert ser([], ["x", "y"]).value == 1.0
    assert ser([], ["x", "y"], denominator="reference", empty_reference="jiwer").value == 2.0


def test_ser_counts_carry_the_registry_numerator_and_denominator() -> None:
    spec = METRICS["ser"]
    counts = ser(["a"], ["a", "b", "c"]).counts()
    assert counts[spec.numerator] / counts[spec.denominator] == 2 / 3  # type: ignore[index]


def test_ser_corpus_value_sums_the_specification_counts() -> None:
    from pytest_ocrmetrics.metrics.aggregate import MetricAccumulator

    spec = METRICS["ser"]
    acc = MetricAccumulator("ser")
    for ref, hyp in ((["a"], ["a", "b", "c"]), (SPEC_GROUND_TRUTH_LINES, SPEC_PREDICTED_LINES)):
        r = ser(ref, hyp)
        acc.add(r.value, r.counts()[spec.numerator], r.counts()[spec.denominator])  # type: ignore[index]
    assert acc.result().micro == 3 / 6  # (2 + 1) errors over (3 + 3) line positions


def test_ser_rejects_bad_lines_and_options() -> None:
    with pytest.raises(TypeError, match=r"hypothesis_lines\[1\] is None"):
        ser(["a", "b"], ["a", None])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="reference_lines is bytes"):
        ser(b"a\nb", "a\nb")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="hypothesis_lines must be a str or a list of str lines, not generator"):
        ser(["a"], (line for line in ["a"]))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown denominator 'refrence' \\(did you mean 'reference'\\?\\); valid: max, reference"):
        ser(["a"], ["a"], denominator="refrence")


def test_ser_hostile_lines() -> None:
    r = ser(["a\ud800", "\x1b[31mred", "x" * 100_000], ["a\ud800", "\x1b[31mred", "x" * 99_999])
    assert (r.error_indices, r.value) == ((2,), 1 / 3)
    json.dumps(r.to_dict(), allow_nan=False)


# --- token accuracy ---------------------------------------------------------------------------------------------------

SPEC_TOKEN_REFERENCE = "Invoice Number INV-2024-001 Total Amount $150.00"
SPEC_TOKEN_PREDICTED = "Invoice Number INV-2024-OO1 Total Amount $150.00"


def test_token_accuracy_specification_example() -> None:
    """Document 000, 1.4: EMR 83.33 %; the document says P = R = F1 = 0.857, its own formula gives 5/6."""
    r = token_accuracy(SPEC_TOKEN_REFERENCE, SPEC_TOKEN_PREDICTED)
    assert (r.position_matches, r.position_total, r.correct_tokens) == (5, 6, 5)
    assert r.exact_match_rate == r.value == 5 / 6
    assert r.precision == r.recall == 5 / 6 and r.f1 == pytest.approx(5 / 6)
    d = r.to_dict()
    assert (d["exact_match_rate"], d["token_precision"], d["token_recall"]) == (5 / 6, 5 / 6, 5 / 6)
    assert d["token_f1"] == pytest.approx(5 / 6)
    assert (d["correct_tokens"], d["total_gt_tokens"], d["total_pred_tokens"]) == (5, 6, 6)


def test_token_accuracy_takes_token_lists() -> None:
    """Document 000, 1.4's input: ``"ground_truth": str  # Or List[str] of tokens`` (issue 20 C5)."""
    as_text = token_accuracy(SPEC_TOKEN_REFERENCE, SPEC_TOKEN_PREDICTED).to_dict()
    assert token_accuracy(SPEC_TOKEN_REFERENCE.split(), SPEC_TOKEN_PREDICTED).to_dict() == as_text
    assert token_accuracy(SPEC_TOKEN_REFERENCE.split(), SPEC_TOKEN_PREDICTED.split()).to_dict() == as_text
    assert token_accuracy(tuple(SPEC_TOKEN_REFERENCE.split()), SPEC_TOKEN_PREDICTED).value == 5 / 6
    r = token_accuracy(["New York", "10001"], ["New York", "10001"])  # a token is used as given, never split
    assert (r.value, r.reference_tokens) == (1.0, 2)
    assert token_accuracy(["Cafe\u0301"], "Caf\u00e9").value == 1.0  # each token normalized (NFC) as a text is
    with pytest.raises(TypeError, match=r"reference\[1\] must be a str, not int"):
        token_accuracy(["a", 3], "a")  # type: ignore[list-item]
    with pytest.raises(TypeError, match="hypothesis must be a str or a list of str tokens, not int"):
        token_accuracy("a", 3)  # type: ignore[arg-type]


def test_token_accuracy_sets_versus_multisets() -> None:
    """Where the old definition (multisets) and the specification's (sets of unique tokens) differ."""
    r = token_accuracy("a a a", "a")
    assert (r.correct_tokens, r.precision, r.recall, r.f1) == (1, 1.0, 1.0, 1.0)
    old = token_accuracy("a a a", "a", counting="multiset")
    assert (old.correct_tokens, old.precision, old.recall, old.f1) == (1, 1.0, 1 / 3, 0.5)


def test_token_accuracy_position_rate_divides_by_the_longer_side() -> None:
    """Where the old definition (over reference tokens) and the specification's (over the longer side) differ."""
    r = token_accuracy("a b", "a b c d")
    assert (r.position_matches, r.position_total, r.value) == (2, 4, 0.5)
    assert token_accuracy("a b", "a b c d", position_denominator="reference").value == 1.0


def test_token_accuracy_by_position_and_set() -> None:
    r = token_accuracy("a b c d", "a x c")
    assert (r.position_matches, r.correct_tokens, r.reference_tokens, r.hypothesis_tokens) == (2, 2, 4, 3)
    assert (r.value, r.precision, r.recall, r.f1) == (0.5, 2 / 3, 0.5, 4 / 7)


def test_token_accuracy_set_ignores_order_but_position_does_not() -> None:
    r = token_accuracy("b a a", "a a b")
    assert r.position_matches == 1 and r.value == 1 / 3
    assert (r.precision, r.recall, r.f1) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("reference", "hypothesis", "expected"),
    [("", "", (1.0, 1.0, 1.0, 1.0)), ("", "x", (0.0, 0.0, 0.0, 0.0)), ("x", "", (0.0, 0.0, 0.0, 0.0))],
)
@pytest.mark.parametrize("counting", ["set", "multiset"])
def test_token_accuracy_empty_sides(reference: str, hypothesis: str, expected: tuple[float, ...], counting: str) -> None:
    r = token_accuracy(reference, hypothesis, counting=counting)
    assert (r.value, r.precision, r.recall, r.f1) == expected


def test_token_accuracy_unknown_options() -> None:
    with pytest.raises(ValueError, match="unknown counting 'multi-set' \\(did you mean 'multiset'\\?\\); valid: set, multiset"):
        token_accuracy("a", "a", counting="multi-set")
    with pytest.raises(ValueError, match="unknown position_denominator 'min'"):
        token_accuracy("a", "a", position_denominator="min")


# --- confusion --------------------------------------------------------------------------------------------------------


def test_confusion_specification_example() -> None:
    """Document 000, 1.5: the document prints {"O": {"0": 3}, "1": {"I": 1}}, 4 errors, 13.79 %; its own formula
    on its own strings gives O->0 twice, 0->O three times, 1->I once: 6 errors, 6/29."""
    m = confusion(INVOICE_REF, INVOICE_HYP)
    assert m.top() == [("0", "O", 3), ("O", "0", 2), ("1", "I", 1)]
    assert (m.total_errors, m.substitutions, m.deletions, m.insertions) == (6, 6, 0, 0)
    assert m.confusion_matrix == {"0": {"O": 3}, "O": {"0": 2}, "1": {"I": 1}}
    assert m.top_confusions == [("0", "O", 3), ("O", "0", 2), ("1", "I", 1)]
    assert m.value == m.rate == m.confusion_rate == 6 / 29
    d = m.to_dict()
    assert (d["total_errors"], d["confusion_rate"], d["top_confusions"][0]) == (6, 6 / 29, ["0", "O", 3])


def test_confusion_rate_counts_every_error_not_only_substitutions() -> None:
    """Where the old rate (substitutions / N) and the specification's ((S + D + I) / N) differ."""
    m = confusion("abc", "xabcx")
    assert m.insertion_row() == {"x": 2}
    assert m.matrix() == {None: {"x": 2}}
    assert m.confusion_matrix == {"<INSERT>": {"x": 2}}
    assert (m.total_errors, m.value) == (2, 2 / 3)
    assert confusion("abc", "xabcx", rate_of="substitutions").value == 0.0


def test_confusion_deletions_and_insertions_use_the_specification_marks() -> None:
    m = confusion("rn m", "m mn")
    assert m.errors == 3 and m.value == 3 / 4
    assert sum(count for _, _, count in m.cells) == 3
    m3 = confusion("abc", "ac")
    assert m3.top(1) == [("b", None, 1)]
    assert m3.top_confusions == [("b", "<DELETE>", 1)] and m3.confusion_matrix == {"b": {"<DELETE>": 1}}


def test_confusion_top_confusions_keep_ten() -> None:
    m = confusion("abcdefghijkl", "ABCDEFGHIJKL")
    assert len(m.cells) == 12 and len(m.top_confusions) == 10 and m.top_confusions[0] == ("a", "A", 1)


def test_confusion_top_breaks_ties_by_first_occurrence() -> None:
    assert confusion("abcd", "wxyz").top(2) == [("a", "w", 1), ("b", "x", 1)]


def test_confusion_uses_graphemes() -> None:
    m = confusion("Schly\u00f1", "Schlym\u0303", normalize="none")
    assert m.top() == [("\u00f1", "m\u0303", 1)]


def test_confusion_to_dict_is_json() -> None:
    d = confusion("ab", "b").to_dict()
    json.dumps(d, allow_nan=False)
    assert {"reference": "a", "hypothesis": None, "count": 1} in d["cells"]
    assert d["confusion_matrix"] == {"a": {"<DELETE>": 1}}
    assert confusion("", "").value == 0.0 and confusion("", "ab").value == 0.0
    with pytest.raises(ValueError, match="unknown rate_of 'substitution' \\(did you mean 'substitutions'\\?\\)"):
        confusion("a", "b", rate_of="substitution")


# --- exact match, NED, similarity ----------------------------------------------------------------------------------


def test_exact_match() -> None:
    assert exact_match("ABC 123", "ABC 123").value == 1.0
    miss = exact_match("ABC 123", "abc  123")
    assert miss.value == 0.0 and not miss and miss.counts() == {"matches": 0, "documents": 1}
    assert exact_match("ABC 123", "abc  123", normalize="lenient")
    assert exact_match("", "").value == 1.0


def test_normalized_edit_distance_and_similarity() -> None:
    r = normalized_edit_distance("ABC123", "A8C1234")
    assert (r.distance, r.reference_length, r.hypothesis_length) == (2, 6, 7)
    assert r.value == 2 / 7
    assert edit_similarity("ABC123", "A8C1234").value == 1 - 2 / 7
    assert normalized_edit_distance("", "").value == 0.0 and edit_similarity("", "").value == 1.0
    assert normalized_edit_distance("", "abc").value == 1.0
    assert normalized_edit_distance("abc", "xyzxyz").value == 1.0


# --- score_text -------------------------------------------------------------------------------------------------------


def test_score_text_full_set() -> None:
    s = score_text(INVOICE_REF + "\nTHANK YOU", INVOICE_HYP + "\nTHANK YOU")
    assert s.cer.errors == 6 and s.cer.reference_length == len(INVOICE_REF) + 1 + 9
    assert s.wer.errors == 4  # INV0ICE, #I2345, T0TAL:, $15O.OO
    assert (s.ser.error_sentences, s.ser.total_sentences) == (1, 2)
    assert s.exact_match.value == 0.0
    assert s.ned.value == 6 / 39 and s.edit_similarity.value == 1 - 6 / 39
    assert s.token_accuracy.position_matches == 2
    assert s.confusion.top(1) == [("0", "O", 3)]
    assert s.normalization == "nfc"


def test_score_text_keys_follow_the_registry() -> None:
    s = score_text("a b", "a c")
    values, counts = s.values(), s.counts()
    assert set(values) <= set(METRICS)
    assert {"cer", "wer", "ser", "ned", "edit_similarity", "exact_match", "token_accuracy", "token_f1"} <= set(values)
    for name, result_counts in counts.items():
        spec = METRICS[name]
        if spec.aggregation == "micro":
            assert spec.numerator in result_counts and spec.denominator in result_counts, name
    json.dumps(s.to_dict(), allow_nan=False)


def test_score_text_keeps_the_compared_texts() -> None:
    s = score_text("  Total:\n 12.50 ", "total 12.5", normalize="lenient")
    assert (s.reference, s.hypothesis) == ("total 1250", "total 125")


def test_results_share_one_alignment() -> None:
    s = score_text("abc def", "abd def")
    assert s.cer.alignment is not None
    assert s.ned.distance == s.cer.errors == s.confusion.errors


# --- bad input --------------------------------------------------------------------------------------------------------

_TWO_TEXT_FUNCTIONS: list[Callable[..., Any]] = [
    cer, wer, ser, token_accuracy, confusion, exact_match, normalized_edit_distance, edit_similarity, score_text,
]


@pytest.mark.parametrize("function", _TWO_TEXT_FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(("bad", "message"), [(None, "is None"), (b"x", "is bytes; decode it"), (3, "must be a str")])
def test_bad_input_is_a_clear_type_error(function: Callable[..., Any], bad: object, message: str) -> None:
    suffix = "_lines" if function is ser else ""  # ser names its arguments reference_lines / hypothesis_lines
    with pytest.raises(TypeError, match=f"hypothesis{suffix} {message}"):
        function("reference", bad)
    with pytest.raises(TypeError, match=f"reference{suffix} {message}"):
        function(bad, "hypothesis")


@pytest.mark.parametrize("function", _TWO_TEXT_FUNCTIONS, ids=lambda f: f.__name__)
def test_options_are_keyword_only_and_documented(function: Callable[..., Any]) -> None:
    import inspect

    parameters = list(inspect.signature(function).parameters.values())
    assert [p.kind for p in parameters[:2]] == [inspect.Parameter.POSITIONAL_OR_KEYWORD] * 2
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[2:])
    assert function.__doc__ and ">>>" in function.__doc__


# --- real ground truth ------------------------------------------------------------------------------------------------


def test_real_ground_truth_scores(shared_data: Any) -> None:
    from pytest_ocrmetrics.metrics.units import graphemes

    for dataset in ("ocr_pages_lines", "sroie_receipts"):
        truth = json.loads((shared_data / dataset / "ground_truth.json").read_text(encoding="utf-8"))
        for entry in truth.values():
            text = entry["full_text"]
            if not text:
                continue
            assert score_text(text, text).cer.value == 0.0
            # one substituted character is one error over the grapheme count
            flipped = ("#" if text[0] != "#" else "%") + text[1:]
            r = cer(text, flipped)
            assert r.errors == 1 and r.reference_length == len(graphemes(text))
            assert ser(text, flipped).error_indices == (0,)


# --- the specification's own code as the oracle ----------------------------------------------------------------------


def _spec_ser(predicted_sentences: list[str], ground_truth_sentences: list[str]) -> dict[str, Any]:
    """Document 000, 1.3, verbatim (its ``ser`` is ×100)."""
    max_len = max(len(predicted_sentences), len(ground_truth_sentences))
    pred = predicted_sentences + [""] * (max_len - len(predicted_sentences))
    gt = ground_truth_sentences + [""] * (max_len - len(ground_truth_sentences))
    error_indices = [i for i, (p, g) in enumerate(zip(pred, gt)) if p.strip() != g.strip()]
    error_count = len(error_indices)
    total = max_len
    return {"ser": (error_count / total * 100) if total > 0 else 0, "total_sentences": total,
            "error_sentences": error_count, "correct_sentences": total - error_count, "error_indices": error_indices}


def _spec_token_accuracy(predicted: str, ground_truth: str) -> dict[str, Any]:
    """Document 000, 1.4, verbatim."""
    pred_tokens, gt_tokens = predicted.split(), ground_truth.split()
    pred_set, gt_set = set(pred_tokens), set(gt_tokens)
    correct = len(pred_set & gt_set)
    precision = correct / len(pred_set) if pred_set else 0
    recall = correct / len(gt_set) if gt_set else 0
    f1 = 2 * (precision * recall) / (precision + recall) if (precision + recall) > 0 else 0
    exact_matches = sum(1 for p, g in zip(pred_tokens, gt_tokens) if p == g)
    max_len = max(len(pred_tokens), len(gt_tokens))
    emr = (exact_matches / max_len * 100) if max_len > 0 else 0
    return {"exact_match_rate": emr, "token_precision": precision, "token_recall": recall, "token_f1": f1,
            "correct_tokens": correct, "total_gt_tokens": len(gt_tokens), "total_pred_tokens": len(pred_tokens)}


def _spec_confusion(predicted: str, ground_truth: str) -> dict[str, Any]:
    """Document 000, 1.5, verbatim but for the import (rapidfuzz's Levenshtein.editops = python-Levenshtein's)."""
    from collections import defaultdict

    from rapidfuzz.distance import Levenshtein

    ops = Levenshtein.editops(ground_truth, predicted)
    confusion_matrix: Any = defaultdict(lambda: defaultdict(int))
    total_errors = 0
    for op_type, gt_idx, pred_idx in ops:
        if op_type == "replace":
            confusion_matrix[ground_truth[gt_idx]][predicted[pred_idx]] += 1
        elif op_type == "delete":
            confusion_matrix[ground_truth[gt_idx]]["<DELETE>"] += 1
        elif op_type == "insert":
            confusion_matrix["<INSERT>"][predicted[pred_idx]] += 1
        total_errors += 1
    confusion_matrix = {k: dict(v) for k, v in confusion_matrix.items()}
    return {"confusion_matrix": confusion_matrix, "total_errors": total_errors,
            "confusion_rate": (total_errors / len(ground_truth) * 100) if ground_truth else 0}


_LINE = st.text(st.sampled_from("ab \t"), max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(_LINE, max_size=5), st.lists(_LINE, max_size=5))
def test_ser_equals_the_specification_code(reference: list[str], hypothesis: list[str]) -> None:
    expected = _spec_ser(hypothesis, reference)
    r = ser(reference, hypothesis, normalize="none")
    assert r.value * 100 == pytest.approx(expected["ser"])
    assert (r.total_sentences, r.error_sentences, r.correct_sentences, list(r.error_indices)) == (
        expected["total_sentences"], expected["error_sentences"], expected["correct_sentences"],
        expected["error_indices"])


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("ab \n"), max_size=12), st.text(st.sampled_from("ab \n"), max_size=12))
def test_token_accuracy_equals_the_specification_code(reference: str, hypothesis: str) -> None:
    expected = _spec_token_accuracy(hypothesis, reference)
    r = token_accuracy(reference, hypothesis, normalize="none")
    if reference.split() or hypothesis.split():  # two empty texts: 1.0 here, 0 in the document's code
        assert r.value * 100 == pytest.approx(expected["exact_match_rate"])
        assert (r.precision, r.recall) == (expected["token_precision"], expected["token_recall"])
        assert r.f1 == pytest.approx(expected["token_f1"])
    d = r.to_dict()
    assert (d["correct_tokens"], d["total_gt_tokens"], d["total_pred_tokens"]) == (
        expected["correct_tokens"], expected["total_gt_tokens"], expected["total_pred_tokens"])


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("aO0b"), max_size=10), st.text(st.sampled_from("aO0b"), max_size=10))
def test_confusion_equals_the_specification_code(reference: str, hypothesis: str) -> None:
    expected = _spec_confusion(hypothesis, reference)
    m = confusion(reference, hypothesis, unit="codepoint", normalize="none")
    assert m.confusion_matrix == expected["confusion_matrix"]
    assert m.total_errors == expected["total_errors"]
    assert m.value * 100 == pytest.approx(expected["confusion_rate"])
