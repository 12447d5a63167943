from __future__ import annotations

import datetime as dt
import doctest
import itertools
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics import fields
from pytest_ocrmetrics.metrics.fields import (
    anls,
    anls_corpus,
    field_f1,
    max_weight_assignment,
    normalize_field_value,
    parse_amount,
    parse_date,
)


def test_docstring_examples() -> None:
    assert doctest.testmod(fields).failed == 0


# ---------------------------------------------------------------------------------------------------- dates


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("19/10/2018", "2018-10-19"),  # dd/mm/yyyy
        ("21-03-2018", "2018-03-21"),  # dd-mm-yyyy
        ("18-10-17", "2017-10-18"),  # dd-mm-yy
        ("06/02/18", "2018-02-06"),  # dd/mm/yy
        ("19.10.2018", "2018-10-19"),
        ("25032018", "2018-03-25"),  # ddmmyyyy (SROIE 152.jpg): not a valid yyyymmdd
        ("20180325", "2018-03-25"),  # yyyymmdd
        ("2018-03-25", "2018-03-25"),
        ("2018/3/5", "2018-03-05"),
        ("02/JAN/2017", "2017-01-02"),
        ("10 OCT 2017", "2017-10-10"),
        ("5th January 2024", "2024-01-05"),
        ("05-Sept-24", "2024-09-05"),
        ("Jan 5, 2024", "2024-01-05"),
        ("January 5th 2024", "2024-01-05"),
        ("2024-Jan-05", "2024-01-05"),
        ("12/13/2016", "2016-12-13"),  # SROIE 383.jpg: month-first, since day-first is no valid date
        (" 1/2/2024 ", "2024-02-01"),
    ],
)
def test_parse_date_formats(text: str, iso: str) -> None:
    assert parse_date(text) == iso


def test_parse_date_day_first_option() -> None:
    assert parse_date("01/02/2024") == "2024-02-01"
    assert parse_date("01/02/2024", day_first=False) == "2024-01-02"
    assert parse_date("13/02/2024", day_first=False) == "2024-02-13"  # month-first impossible: falls back
    assert parse_date("01022024", day_first=False) == "2024-01-02"


def test_two_digit_years_follow_posix_pivot() -> None:
    assert parse_date("01/01/68") == "2068-01-01"
    assert parse_date("01/01/69") == "1969-01-01"
    assert parse_date("01/01/00") == "2000-01-01"


@pytest.mark.parametrize(
    "text", ["31/02/2018", "60.30", "07-3507405", "", "abc", "2018", "19/10/2018 20:49", "99999999", "5 Foo 2020",
             "1/2", "-1/2/2020", "00/00/0000"]
)
def test_parse_date_rejects_non_dates(text: str) -> None:
    assert parse_date(text) is None


# ---------------------------------------------------------------------------------------------------- amounts


@pytest.mark.parametrize(
    ("text", "amount"),
    [
        ("60.30", "60.3"),
        ("60.3", "60.3"),
        ("75.00", "75"),
        ("RM41.45", "41.45"),
        ("RM 41.45", "41.45"),
        ("41.45 RM", "41.45"),
        ("$1,234.56", "1234.56"),
        ("1.234,56", "1234.56"),
        ("1.234,56 €", "1234.56"),
        ("EUR 12,50", "12.5"),
        ("£7", "7"),
        ("¥1,000", "1000"),
        ("USD 1 234.50", "1234.5"),
        ("1'234.50", "1234.5"),
        ("1,234", "1234"),  # a comma before exactly three digits: thousands
        ("1.234", "1.234"),  # a single dot: decimal point
        ("1234,567", "1234.567"),  # more than three digits before: a decimal comma
        ("1,234,567", "1234567"),
        ("-5.59", "-5.59"),
        ("5.59-", "-5.59"),
        ("RM-5.59", "-5.59"),
        ("0.00", "0"),
        ("-0.00", "0"),
        ("100", "100"),
    ],
)
def test_parse_amount(text: str, amount: str) -> None:
    assert parse_amount(text) == amount


@pytest.mark.parametrize("text", ["1.234.56", "No. 5A", "RM", "", "12 34", "--5", "(5)", "5,5,5", "1,23,456"])
def test_parse_amount_rejects_non_amounts(text: str) -> None:
    assert parse_amount(text) is None


def test_normalize_field_value_text_rules() -> None:
    assert normalize_field_value("NO.53,JALAN BESAR") == normalize_field_value("No. 53, Jalan  Besar") == "no 53 jalan besar"
    assert normalize_field_value("WATSON'S") == normalize_field_value("Watson\u2019s") == "watsons"
    assert normalize_field_value("ＳＤＮ　ＢＨＤ") == "sdn bhd"  # NFKC folds full-width forms
    assert normalize_field_value("Straße") == "strasse"


# ---------------------------------------------------------------------------------------------------- field_f1


def test_hand_computed_scores_and_lists() -> None:
    ref = {"company": "INDAH GIFT", "date": "19/10/2018", "address": "27, JALAN DEDAP", "total": "60.30"}
    ext = {"company": "INDAH GlFT", "date": "2018-10-19", "total": "60.3", "phone": "07-3507405"}
    r = field_f1(ref, ext, compare="normalized")
    assert r.correct == ("date", "total")
    assert r.incorrect == ("company",)
    assert r.missing == ("address",)
    assert r.extra == ("phone",)
    # correct 2, extracted 4 (company, date, total, phone), reference 4
    assert (r.precision, r.recall, r.f1) == (0.5, 0.5, 0.5)
    assert r.counts() == {"correct": 2, "extracted": 4, "reference": 4, "f1_numerator": 4, "f1_denominator": 8}
    assert r.value == r.f1


def test_modes_differ_on_the_same_input() -> None:
    ref = {"date": "19/10/2018", "total": "RM60.30", "company": "INDAH GIFT & HOME DECO"}
    ext = {"date": "2018-10-19", "total": "60.3", "company": "INDAH GIFT & HOME DEC0"}
    assert field_f1(ref, ext, compare="exact").correct == ()
    assert field_f1(ref, ext, compare="normalized").correct == ("date", "total")
    fuzzy = field_f1(ref, ext, compare="fuzzy", threshold=0.8)
    assert fuzzy.correct == ("date", "total", "company")
    company = next(c for c in fuzzy.comparisons if c.path == "company")
    assert company.similarity == pytest.approx(1 - 1 / 20)  # "indah gift home deco" vs "...dec0": one edit in 20


def test_fuzzy_threshold_is_inclusive() -> None:
    # "abcde" vs "abcdx": similarity exactly 0.8
    assert field_f1({"a": "abcde"}, {"a": "abcdx"}, compare="fuzzy", threshold=0.8).f1 == 1.0
    assert field_f1({"a": "abcde"}, {"a": "abcdx"}, compare="fuzzy", threshold=0.81).f1 == 0.0


def test_exact_mode_compares_json_string_forms() -> None:
    r = field_f1({"n": "5", "flag": "true", "x": "60.30"}, {"n": 5, "flag": True, "x": 60.3}, compare="exact")
    assert r.correct == ("n", "flag")
    assert r.incorrect == ("x",)
    assert field_f1({"x": "60.30"}, {"x": 60.3}, compare="normalized").f1 == 1.0
    assert field_f1({"d": "2024-01-05"}, {"d": dt.date(2024, 1, 5)}, compare="exact").f1 == 1.0
    assert field_f1({"d": "1.50"}, {"d": Decimal("1.5")}, compare="normalized").f1 == 1.0


def test_the_specification_rule_for_an_empty_extracted_value() -> None:
    # issue 20 C2: the specification's code counts every key; an empty value is an extracted, incorrect field
    r = field_f1({"a": "x", "b": "y"}, {"a": "x", "b": ""})
    assert (r.precision, r.recall, r.f1) == (0.5, 0.5, 0.5)
    assert (r.correct, r.incorrect, r.missing, r.extra) == (("a",), ("b",), (), ())
    assert r.mismatches == (("b", "y", ""),)


def test_two_empty_values_agree_and_are_listed_correct() -> None:
    r = field_f1({"a": ""}, {"a": ""})
    assert (r.f1, r.correct) == (1.0, ("a",))
    assert field_f1({"a": "  "}, {"a": ""}).correct == ("a",)  # str(v).strip().lower() on both
    assert field_f1({"a": "  "}, {"a": ""}, compare="exact").incorrect == ("a",)


def test_none_is_no_field_on_either_side() -> None:
    r = field_f1({"a": "1", "b": "2", "c": "3"}, {"a": None, "b": "  ", "c": ""})
    assert r.missing == ("a",)  # null: nothing extracted
    assert r.incorrect == ("b", "c")  # empty strings: extracted, wrongly
    assert r.counts()["extracted"] == 2
    r = field_f1({"a": "1", "b": None, "c": ""}, {"a": "1", "b": "x"})
    assert r.counts()["reference"] == 2  # a and c; b asks for nothing
    assert (r.correct, r.missing, r.extra) == (("a",), ("c",), ("b",))


@pytest.mark.parametrize(
    ("ref", "ext", "expected"),
    [
        ({}, {}, (0.0, 0.0, 0.0)),  # the specification's code: 0 for two empty records
        ({}, None, (0.0, 0.0, 0.0)),
        ({"a": None}, {"b": None}, (0.0, 0.0, 0.0)),  # no field on either side
        ({"a": "1"}, {}, (0.0, 0.0, 0.0)),  # nothing extracted: precision 0, not a vacuous 1
        ({"a": "1"}, None, (0.0, 0.0, 0.0)),
        ({}, {"a": "1"}, (0.0, 0.0, 0.0)),  # nothing to extract but something extracted
        ({"a": ""}, {"a": ""}, (1.0, 1.0, 1.0)),
    ],
)
def test_empty_side_policy(ref: dict[str, Any], ext: dict[str, Any] | None, expected: tuple[float, ...]) -> None:
    r = field_f1(ref, ext)
    assert (r.precision, r.recall, r.f1) == expected


def test_the_specification_code_is_the_oracle_on_flat_records() -> None:
    """Flat string records: every key as a field, values compared by str(v).strip().lower(), 0 for empty shares."""
    cases = [({"a": "x", "b": "y"}, {"a": "x", "b": ""}), ({}, {}), ({"a": ""}, {"a": ""}), ({"a": " X"}, {"a": "x"}),
             ({"a": "1", "b": ""}, {"b": "", "c": "3"}), ({"a": "1"}, {"a": " "}), ({"p": "", "q": ""}, {"p": "z"})]
    for ref, ext in cases:
        assert _spec_field_f1(ext, ref) == pytest.approx(field_f1(ref, ext).to_dict()["field_f1"]), (ref, ext)
        r = field_f1(ref, ext)
        spec = _spec_result(ext, ref)
        assert (r.precision, r.recall) == pytest.approx((spec["field_precision"], spec["field_recall"]))
        assert sorted(r.correct) == sorted(spec["correct_fields"]) and sorted(r.extra) == sorted(spec["extra_fields"])
        assert sorted(r.missing) == sorted(spec["missing_fields"])
        assert sorted(r.incorrect) == sorted(spec["incorrect_fields"])


def _spec_result(extracted_fields: dict[str, Any], ground_truth_fields: dict[str, Any]) -> dict[str, Any]:
    """Document 000's ``calculate_field_extraction_f1``, verbatim."""
    gt_keys = set(ground_truth_fields.keys())
    ext_keys = set(extracted_fields.keys())
    correct = [k for k in gt_keys & ext_keys
               if str(extracted_fields[k]).strip().lower() == str(ground_truth_fields[k]).strip().lower()]
    precision = len(correct) / len(ext_keys) if ext_keys else 0
    recall = len(correct) / len(gt_keys) if gt_keys else 0
    f1 = 2 * (precision * recall) / (precision + recall) if (precision + recall) > 0 else 0
    return {"field_precision": precision, "field_recall": recall, "field_f1": f1, "correct_fields": correct,
            "missing_fields": list(gt_keys - ext_keys),
            "incorrect_fields": [k for k in gt_keys & ext_keys if k not in correct],
            "extra_fields": list(ext_keys - gt_keys)}


def _spec_field_f1(extracted_fields: dict[str, Any], ground_truth_fields: dict[str, Any]) -> float:
    return float(_spec_result(extracted_fields, ground_truth_fields)["field_f1"])


def test_nested_objects_compare_by_key_path() -> None:
    ref = {"vendor": {"name": "ACME", "address": {"city": "Berlin", "zip": "10115"}}, "total": "9.00"}
    ext = {"vendor": {"name": "ACME", "address": {"city": "Berlln", "street": "Main"}}, "total": "9"}
    r = field_f1(ref, ext, compare="normalized")
    assert r.correct == ("vendor.name", "total")
    assert r.incorrect == ("vendor.address.city",)
    assert r.missing == ("vendor.address.zip",)
    assert r.extra == ("vendor.address.street",)


def test_structure_mismatch_counts_missing_and_extra() -> None:
    r = field_f1({"address": {"city": "X", "zip": "1"}}, {"address": "X 1"})
    assert r.missing == ("address.city", "address.zip")
    assert r.extra == ("address",)
    r = field_f1({"total": "5"}, {"total": {"value": "5"}})
    assert r.missing == ("total",)
    assert r.extra == ("total.value",)


def test_list_of_records_matched_by_assignment_not_position() -> None:
    ref = {"items": [{"name": "Tea", "price": "2.30"}, {"name": "Rice", "price": "12.00"}]}
    ext = {"items": [{"name": "rice", "price": "12"}, {"name": "tea", "price": "2.3"}]}
    r = field_f1(ref, ext, compare="normalized")
    assert r.f1 == 1.0
    assert r.list_matches == (("items", 0, 1), ("items", 1, 0))
    # positional matching would have scored 0 here
    positional = sum(field_f1(a, b, compare="normalized").correct_count for a, b in zip(ref["items"], ext["items"]))
    assert positional == 0


def test_assignment_maximises_total_correct_fields_not_greedy() -> None:
    # greedy "best first" pairs ref[0] with ext[0] (2 correct) and leaves ref[1]/ext[1] with 0: total 2;
    # the optimum pairs ref[0]-ext[1] (1) and ref[1]-ext[0] (2): total 3
    ref = {"rows": [{"a": "1", "b": "2"}, {"a": "1", "c": "3"}]}
    ext = {"rows": [{"a": "1", "b": "2", "c": "3"}, {"b": "2"}]}
    r = field_f1(ref, ext)
    assert r.correct_count == 3
    assert sorted(r.correct) == ["rows[0].b", "rows[1].a", "rows[1].c"]
    assert r.extra == ("rows[0].b",)  # ext[0].b has no counterpart in ref[1]; extracted-side path (ext index 0)


def test_list_length_mismatch_missing_and_extra_items() -> None:
    ref = {"items": [{"name": "A"}, {"name": "B"}, {"name": "C"}]}
    r = field_f1(ref, {"items": [{"name": "C"}]})
    assert r.correct == ("items[2].name",)
    assert r.missing == ("items[0].name", "items[1].name")
    r = field_f1({"items": [{"name": "A"}]}, {"items": [{"name": "Z"}, {"name": "A"}, {"qty": "2"}]})
    assert r.correct == ("items[0].name",)
    assert r.extra == ("items[0].name", "items[2].qty")  # extracted indices


def test_scalar_lists_match_as_sets() -> None:
    r = field_f1({"tags": ["b", "a", "c"]}, {"tags": ["a", "b", "x"]}, compare="exact")
    assert r.correct_count == 2
    assert (r.missing, r.extra) == (("tags[2]",), ("tags[2]",))  # "c" and "x" share nothing: not paired


def test_a_pair_with_nothing_in_common_is_missing_plus_extra() -> None:
    r = field_f1({"tags": ["abc"]}, {"tags": ["xyz"]}, compare="exact")
    assert r.missing == ("tags[0]",)
    assert r.extra == ("tags[0]",)
    assert r.list_matches == ()


def test_tuples_are_lists() -> None:
    assert field_f1({"t": ("a", "b")}, {"t": ["b", "a"]}).f1 == 1.0


def test_mismatches_say_what_was_expected_and_found() -> None:
    ref = {"total": "9.00", "date": "19/10/2018", "vendor": {"name": "ACME", "city": "Berlin"},
           "items": [{"name": "Tea"}, {"name": "Rice"}], "company": "INDAH"}
    ext = {"total": "9.0O", "vendor": "ACME Berlin", "items": [{"name": "tea"}], "company": "Indah"}
    r = field_f1(ref, ext)
    assert r.mismatches == (
        ("total", "9.00", "9.0O"),
        ("date", "19/10/2018", None),
        ("vendor.name", "ACME", None),  # the structure differs: missing
        ("vendor.city", "Berlin", None),
        ("items[1].name", "Rice", None),  # unmatched list item
    )
    assert r.to_dict()["mismatches"][0] == {"field": "total", "expected": "9.00", "found": "9.0O"}
    assert field_f1({"n": 5}, {"n": 6}, compare="exact").mismatches == (("n", "5", "6"),)


def test_micro_f1_over_documents_is_exact_from_counts() -> None:
    a = field_f1({"x": "1", "y": "2"}, {"x": "1"})
    b = field_f1({"x": "1", "y": "2", "z": "3"}, {"x": "9", "y": "2", "z": "3", "w": "4"})
    num = a.counts()["f1_numerator"] + b.counts()["f1_numerator"]
    den = a.counts()["f1_denominator"] + b.counts()["f1_denominator"]
    # 3 correct; extracted 1 + 4; reference 2 + 3
    assert num / den == pytest.approx(6 / 10)


def test_to_dict_is_json_safe() -> None:
    r = field_f1({"a": "1", "l": [{"b": "2"}]}, {"a": "x", "l": [{"b": "2"}]})
    text = json.dumps(r.to_dict(), allow_nan=False)
    assert json.loads(text)["comparisons"][0] == {
        "path": "a", "reference": "1", "extracted": "x", "similarity": 0.0, "correct": False}


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="reference_fields must be a mapping"):
        field_f1(None, {})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="json_validity"):
        field_f1({}, '{"a": 1}')  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="field 'a.b' has a set value"):
        field_f1({"a": {"b": {1}}}, {})
    with pytest.raises(ValueError, match=r"unknown compare mode 'fuzy' \(did you mean 'fuzzy'\?\); valid: lowercase, "):
        field_f1({}, {}, compare="fuzy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown compare mode 'lower' \(did you mean 'lowercase'\?\)"):
        field_f1({}, {}, compare="lower")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="between 0 and 1"):
        field_f1({}, {}, threshold=1.5)
    with pytest.raises(TypeError, match="threshold must be a number"):
        field_f1({}, {}, threshold="0.8")  # type: ignore[arg-type]


def test_sroie_ground_truth_fields_in_printed_variants(shared_data: Path) -> None:
    """Real SROIE key fields, re-printed as a model might: ISO dates, currency added or dropped, case and spacing."""
    truth = json.loads((shared_data / "sroie_receipts" / "ground_truth.json").read_text(encoding="utf-8"))
    assert len(truth) == 25
    normalized = exact = 0
    for entry in truth.values():
        ref = entry["fields"]
        total = parse_amount(ref["total"])
        iso = parse_date(ref["date"])
        assert total is not None and iso is not None, ref  # every printed date and total is understood
        ext = {
            "company": ref["company"].title(),
            "date": iso,
            "address": ref["address"].replace(", ", ",").lower(),
            "total": f"RM {float(total):,.2f}",
        }
        r = field_f1(ref, ext, compare="normalized")
        assert r.f1 == 1.0, (ref, ext, r.incorrect)
        normalized += r.correct_count
        exact += field_f1(ref, ext, compare="exact").correct_count
        # the date as printed in the page text (always verbatim, per SOURCE.md) matches itself exactly
        assert ref["date"] in entry["full_text"]
    assert normalized == 100
    assert exact == 0


def test_sroie_known_date_formats_all_parse(shared_data: Path) -> None:
    truth = json.loads((shared_data / "sroie_receipts" / "ground_truth.json").read_text(encoding="utf-8"))
    dates = {e["fields"]["date"]: parse_date(e["fields"]["date"]) for e in truth.values()}
    assert dates["25032018"] == "2018-03-25"
    assert dates["02/JAN/2017"] == "2017-01-02"
    assert dates["10 OCT 2017"] == "2017-10-10"
    assert dates["12/13/2016"] == "2016-12-13"
    assert dates["18-10-17"] == "2017-10-18"
    assert all(dates.values())


# ---------------------------------------------------------------------------------------------------- assignment


def _brute_force_best(weights: list[list[float]]) -> float:
    rows, cols = len(weights), len(weights[0])
    if rows <= cols:
        return max(sum(weights[i][p[i]] for i in range(rows)) for p in itertools.permutations(range(cols), rows))
    return max(sum(weights[p[j]][j] for j in range(cols)) for p in itertools.permutations(range(rows), cols))


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5).flatmap(
    lambda r: st.integers(1, 5).flatmap(
        lambda c: st.lists(st.lists(st.integers(0, 9), min_size=c, max_size=c), min_size=r, max_size=r))))
def test_hungarian_matches_brute_force(weights: list[list[int]]) -> None:
    pairs = max_weight_assignment(weights)
    assert len(pairs) == min(len(weights), len(weights[0]))
    assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    assert sum(weights[i][j] for i, j in pairs) == _brute_force_best(weights)


def test_hungarian_empty() -> None:
    assert max_weight_assignment([]) == []
    assert max_weight_assignment([[]]) == []


# ---------------------------------------------------------------------------------------------------- properties

_leaf = st.one_of(st.text(min_size=1).filter(lambda s: s.strip()), st.integers(), st.booleans())
_tree = st.recursive(
    st.dictionaries(st.text(st.characters(categories=["Ll"]), min_size=1, max_size=3), _leaf, min_size=1, max_size=3),
    lambda children: st.dictionaries(
        st.text(st.characters(categories=["Ll"]), min_size=1, max_size=3),
        st.one_of(_leaf, children, st.lists(children, max_size=3)), min_size=1, max_size=3),
    max_leaves=12,
)


def _count_leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_count_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_leaves(v) for v in value)
    return 1


@settings(max_examples=100, deadline=None)
@given(_tree, st.sampled_from(["lowercase", "exact", "normalized", "fuzzy"]))
def test_identical_records_score_one(record: dict[str, Any], mode: str) -> None:
    r = field_f1(record, record, compare=mode)  # type: ignore[arg-type]
    assert r.f1 == (1.0 if _count_leaves(record) else 0.0)  # {"a": []} has no field: 0, as {} vs {}
    assert r.reference_count == _count_leaves(record)


@settings(max_examples=100, deadline=None)
@given(_tree, _tree)
def test_counts_are_consistent_and_f1_never_nan(a: dict[str, Any], b: dict[str, Any]) -> None:
    r = field_f1(a, b)
    c = r.counts()
    assert c["reference"] == _count_leaves(a)
    assert c["extracted"] == _count_leaves(b)
    assert 0.0 <= r.f1 <= 1.0 and not math.isnan(r.f1)
    total = c["extracted"] + c["reference"]
    assert r.f1 == (pytest.approx(2 * c["correct"] / total) if total else 0.0)  # {"a": []} has no fields
    assert sorted(path for path, _, _ in r.mismatches) == sorted(r.incorrect + r.missing)
    assert all((found is None) == (path in r.missing) for path, _, found in r.mismatches)


# ---------------------------------------------------------------------------------------------------- ANLS


def test_anls_hand_computed() -> None:
    assert anls("12/15/88", "12/15/89").score == 0.875  # 1 - 1/8
    assert anls(["Dear Dr. Lobo", "Dr. Lobo"], "Dear dr. Lobo").score == 1.0  # lowercased
    assert anls("Denver Broncos", "  denver   broncos ").score == 1.0  # stripped, spaces collapsed
    r = anls(["abcdefgh", "abcdefghij"], "abcdefghix")  # 1 - 2/10 and 1 - 1/10: the best counts
    assert r.score == pytest.approx(0.9)
    assert r.best_answer == "abcdefghij"


def test_anls_threshold_boundary_follows_the_official_script() -> None:
    # similarity exactly 0.5 is kept (the official script zeroes only similarity < 0.5)
    assert anls("ab", "ax").score == 0.5
    r = anls("abc", "xyc")  # similarity 1/3
    assert r.score == 0.0
    assert r.similarity == pytest.approx(1 / 3)
    assert anls("abc", "xyc", threshold=0.3).score == pytest.approx(1 / 3)


def test_anls_max_over_answers_and_empty_strings() -> None:
    assert anls(["wrong answer entirely", "Lobo"], "lobo").score == 1.0
    assert anls("", "").score == 1.0
    assert anls("", "x").score == 0.0
    assert anls("x", "").score == 0.0


def test_anls_normalize_option() -> None:
    assert anls("ABC", "abc", normalize="none").score == 0.0  # 3 substitutions
    assert anls("ABC", "abc", normalize="nfc+casefold").score == 1.0
    assert anls("ABC", "abc").normalize == "docvqa"


def test_anls_corpus_mean_and_counts() -> None:
    r = anls_corpus([["Denver Broncos"], "12/15/88", ["x"]], ["Denver Broncos", "12/15/89", "completely different"])
    assert r.scores == (1.0, 0.875, 0.0)
    assert r.value == pytest.approx(1.875 / 3)
    assert r.counts() == {"score_sum": 1.875, "questions": 3}
    assert anls_corpus([], []).value == 0.0
    json.dumps(r.to_dict(), allow_nan=False)


def test_anls_bad_inputs() -> None:
    with pytest.raises(ValueError, match="at least one accepted answer"):
        anls([], "x")
    with pytest.raises(TypeError, match="prediction is None"):
        anls("x", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"answers\[1\] must be a str"):
        anls(["a", 3], "x")  # type: ignore[list-item]
    with pytest.raises(TypeError, match="answers must be a str or a list"):
        anls(b"x", "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="one prediction per question"):
        anls_corpus([["a"], ["b"]], ["a"])
    with pytest.raises(TypeError, match="predictions must be a list"):
        anls_corpus([["a"]], "a")


@pytest.mark.parametrize(("needle", "text", "expected"), [
    ("14.65", "Total 14.64", "14.64"),  # ' 14.6' scores the same: the span on token boundaries wins (issue 20 C7)
    ("14.65", "TOTAL: 14.64\n", "14.64"),
    ("14.6", "Total 14.64", "14.6"),  # a better score still wins over boundaries: the reference's exact text
    ("Bahru", "Johor Bahrus", "Bahru"),
    ("14.64", "Total 14.6", "14.6"),
])
def test_a_located_value_prefers_token_boundaries_among_ties(needle: str, text: str, expected: str) -> None:
    from pytest_ocrmetrics.metrics.fields import locate_value
    from pytest_ocrmetrics.scoring.document import fields_from_text

    start, end = locate_value(needle, text)  # type: ignore[misc]
    assert text[start:end] == expected
    assert fields_from_text({"total": needle}, text) == {"total": expected}


def test_a_value_with_nothing_in_common_is_not_located() -> None:
    from pytest_ocrmetrics.metrics.fields import locate_value

    assert locate_value("abc", "xyz") is None
