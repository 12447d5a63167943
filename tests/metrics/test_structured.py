from __future__ import annotations

import doctest
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.metrics import structured
from pytest_ocrmetrics.metrics.structured import (
    json_validity,
    parse_json_output,
    parse_xml_output,
    structured_validity,
    xml_validity,
)

RECEIPT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["company", "date", "total", "address", "items"],
    "properties": {
        "company": {"type": "string"},
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
        "total": {"type": "number"},
        "address": {"type": "object", "required": ["city", "zip"], "properties": {"zip": {"type": "string"}}},
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
        "note": {"type": "object", "required": ["text"]},
    },
    "$defs": {"item": {"type": "object", "required": ["name", "price"], "properties": {"price": {"type": "number"}}}},
}


def test_docstring_examples() -> None:
    assert doctest.testmod(structured).failed == 0


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ('{"a": 1}', "raw"),
        ('  \n{"a": 1}\n ', "raw"),
        ('```json\n{"a": 1}\n```', "fence"),
        ('Here is the JSON:\n```json\n{"a": 1}\n```\nLet me know!', "fence"),
        ('```JSON\n{"a": 1}\n```', "fence"),
        ('```\n{"a": 1}\n```', "fence"),  # untagged fence
        ('~~~json\n{"a": 1}\n~~~', "fence"),
        ('```json\n{"a": 1}', "fence"),  # model stopped before closing the fence
        ('```python\nx = 1\n```\n```json\n{"a": 1}\n```', "fence"),  # a non-JSON fence is skipped
        ('The extracted data is {"a": 1}. Hope this helps.', "text"),
        ('[1] Sources: see below {"a": 1}', "text"),
    ],
)
def test_finds_the_json(text: str, source: str) -> None:
    parsed = parse_json_output(text)
    assert parsed.ok and parsed.source == source
    assert parsed.data == {"a": 1}


def test_prose_with_bracketed_word_before_the_object() -> None:
    assert parse_json_output('[note] result: {"a": 1}').data == {"a": 1}
    assert parse_json_output('[1] {"a": 1} [2]').data == {"a": 1}  # the longest value wins over footnotes
    assert parse_json_output('Items: [{"a": 1}, {"a": 2}] done').data == [{"a": 1}, {"a": 2}]


def test_from_fence_flag() -> None:
    assert json_validity('```json\n{"a": 1}\n```').from_fence
    assert not json_validity('{"a": 1}').from_fence
    assert not json_validity('see {"a": 1}').from_fence


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "the output is empty"),
        ("just prose", "Expecting value at line 1 column 1"),
        ('```json\n{"a": 1,}\n```', "in the ```json block: Expecting property name"),
        ('Result: {"a": {"b": 1}, oops}', "Expecting property name enclosed in double quotes at line 1 column 25"),
        ('{"a": NaN}', "NaN is not valid JSON"),
        ("Infinity", "Infinity is not valid JSON"),
    ],
)
def test_parse_failures_explain_themselves(text: str, error: str) -> None:
    r = json_validity(text)
    assert not r.parsed and not r.valid and r.value == 0.0
    assert error in (r.parse_error or "")
    assert r.completeness == 0.0 and r.field_count == 0


def test_broken_object_is_not_rescued_by_its_inner_object() -> None:
    # {"b": 1} alone would parse, but it is part of a broken object, not the answer
    assert not parse_json_output('Result: {"a": {"b": 1}, oops}').ok
    assert not parse_json_output('```json\n{"a": {"b": 1},}\n```').ok


def test_valid_without_schema() -> None:
    r = json_validity('{"a": 1, "b": [true, null, {"c": "x"}], "d": {}}')
    assert r.valid and r.value == 1.0
    assert r.schema_given is False and r.errors == ()
    assert r.completeness == 1.0 and r.required_total == 0
    assert r.field_count == 4  # 1, true, null, "x"; the empty object holds no field
    assert r.counts() == {"valid": 1, "parsed": 1, "documents": 1}


def test_all_schema_errors_sorted_by_path() -> None:
    output = """```json
{"company": "A", "date": "19/10/2018", "total": "9.00",
 "items": [{"name": "x", "price": "1"}, {"price": 2}, {"name": "y", "price": 3}, {"name": "z", "price": "4"},
           {"name": "a", "price": 5}, {"name": "b", "price": 6}, {"name": "c", "price": 7}, {"name": "d", "price": 8},
           {"name": "e", "price": 9}, {"name": "f", "price": 10}, {"name": "g", "price": "11"}]}
```"""
    r = json_validity(output, RECEIPT_SCHEMA)
    assert not r.valid and r.parsed and r.from_fence
    assert [(e.path, e.keyword) for e in r.errors] == [
        ("$", "required"),  # address
        ("$.date", "pattern"),
        ("$.items[0].price", "type"),
        ("$.items[1]", "required"),
        ("$.items[3].price", "type"),
        ("$.items[10].price", "type"),  # numeric order: 10 after 3
        ("$.total", "type"),
    ]
    assert r.errors[0].message == "'address' is a required property"
    assert r.errors[-1].message == "'9.00' is not of type 'number'"


def test_completeness_recurses_into_nested_required() -> None:
    data = {
        "company": "A", "date": "2018-10-19", "total": 0,  # 0 is a value
        "address": {"city": "Johor", "zip": ""},  # "" is empty
        "items": [{"name": "x", "price": 1}, {"name": None, "price": 2}],
        "note": {"text": "hi"},  # optional object present: its required field counts
    }
    r = json_validity(json.dumps(data), RECEIPT_SCHEMA)
    # required paths: company, date, total, address, items, address.city, address.zip,
    #                 items[0].name, items[0].price, items[1].name, items[1].price, note.text  -> 12
    assert r.required_total == 12
    assert r.missing_required == ("$.address.zip", "$.items[1].name")
    assert r.completeness == pytest.approx(10 / 12)


def test_missing_required_parent_counts_its_required_children() -> None:
    r = json_validity('{"company": "A", "date": "2018-10-19", "total": 1, "items": []}', RECEIPT_SCHEMA)
    assert r.missing_required == ("$.address", "$.address.city", "$.address.zip", "$.items")
    assert r.required_total == 7  # 5 top-level + 2 under address; an empty items list has no item fields
    assert r.completeness == pytest.approx(3 / 7)


def test_empty_values_are_not_present_but_zero_and_false_are() -> None:
    schema = {"type": "object", "required": ["a", "b", "c", "d", "e", "f", "g"]}
    r = json_validity('{"a": null, "b": "  ", "c": [], "d": {}, "e": 0, "f": false}', schema)
    assert r.missing_required == ("$.a", "$.b", "$.c", "$.d", "$.g")
    assert r.completeness == pytest.approx(2 / 7)


def test_all_of_and_recursive_refs() -> None:
    schema = {
        "allOf": [{"required": ["a"]}, {"required": ["b"]}],
        "properties": {"child": {"$ref": "#"}},
    }
    r = json_validity('{"a": 1, "b": 2, "child": {"a": 1}}', schema)
    assert r.missing_required == ("$.child.b",)
    assert not r.valid
    # a recursive required parent that is missing stops after one level instead of recursing forever
    rec = {"type": "object", "required": ["next"], "properties": {"next": {"$ref": "#"}}}
    r = json_validity("{}", rec)
    assert r.missing_required == ("$.next", "$.next.next")


def test_keys_that_are_not_identifiers_use_bracket_paths() -> None:
    schema = {"type": "object", "required": ["total amount"], "properties": {"total amount": {"type": "number"}}}
    r = json_validity('{"total amount": "x"}', schema)
    assert r.errors[0].path == "$['total amount']"
    assert json_validity("{}", schema).missing_required == ("$['total amount']",)


def test_unparsed_output_with_schema_counts_all_required_missing() -> None:
    r = json_validity("no json here", {"type": "object", "required": ["a", "b"]})
    assert r.required_total == 2 and r.completeness == 0.0 and r.errors == ()


def test_boolean_schemas_and_parsed_objects() -> None:
    assert json_validity("{}", True).valid
    assert not json_validity("{}", False).valid
    r = json_validity({"a": [1, 2]}, {"type": "object"})
    assert r.valid and r.source == "object" and r.field_count == 2


def test_invalid_schema_raises_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"schema is not a valid .*JSON Schema: 'strin' is not valid.*fix the schema"):
        json_validity("{}", {"type": "strin"})
    with pytest.raises(ValueError, match="cannot be resolved"):
        json_validity("{}", {"$ref": "#/$defs/missing"})


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="output is None"):
        json_validity(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="decode it first"):
        json_validity(b"{}")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="output must be a str"):
        json_validity(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schema must be a JSON Schema"):
        json_validity("{}", "schema.json")  # type: ignore[arg-type]


def test_to_dict_is_json_safe() -> None:
    r = json_validity('```json\n{"total": "9"}\n```', RECEIPT_SCHEMA)
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert d["from_fence"] is True and d["valid"] is False
    assert d["errors"][0] == {"path": "$", "message": "'address' is a required property", "keyword": "required",
                              "schema_path": "required"}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=100, deadline=None)
@given(_json, st.sampled_from(["{}", "```json\n{}\n```", "Here you go:\n```\n{}\n```\nThanks", "Answer: {}"]))
def test_any_object_or_array_is_recovered_from_fence_or_prose(value: Any, wrapper: str) -> None:
    value = {"data": value}
    text = wrapper.replace("{}", json.dumps(value))
    r = json_validity(text)
    assert r.valid and r.data == value


# --- the specification's keys and example ----------------------------------------------------------------------------

SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["invoice_number", "date", "total"],
    "properties": {"invoice_number": {"type": "string"}, "date": {"type": "string"}, "total": {"type": "string"}},
}


def test_specification_json_example() -> None:
    """Document 000, 2.2: is_valid, is_schema_compliant, no errors, completeness 1.0, field_count 3."""
    r = json_validity('{"invoice_number": "INV-001", "date": "2024-03-15", "total": "$150.00"}', SPEC_SCHEMA)
    assert (r.is_valid, r.is_schema_compliant, r.parsing_error, r.validation_errors) == (True, True, None, [])
    assert (r.completeness_score, r.field_count) == (1.0, 3)
    d = r.to_dict()
    assert {k: d[k] for k in ("is_valid", "is_schema_compliant", "parsing_error", "validation_errors",
                              "completeness_score", "field_count")} == {
        "is_valid": True, "is_schema_compliant": True, "parsing_error": None, "validation_errors": [],
        "completeness_score": 1.0, "field_count": 3}


def test_parse_success_and_schema_compliance_are_separate() -> None:
    """The specification's is_valid means "parses"; the project's ``valid`` means "parses and satisfies the schema"."""
    r = json_validity('{"invoice_number": 1, "date": "2024-03-15"}', SPEC_SCHEMA)
    assert (r.is_valid, r.is_schema_compliant, r.valid, r.completeness_score) == (True, False, False, 2 / 3)
    assert r.validation_errors == ["'total' is a required property", "1 is not of type 'string'"]
    assert r.counts() == {"valid": 0, "parsed": 1, "documents": 1}
    broken = json_validity('{"invoice_number": ', SPEC_SCHEMA)
    assert (broken.is_valid, broken.completeness_score, broken.field_count) == (False, 0.0, 0)
    assert broken.parsing_error and broken.counts() == {"valid": 0, "parsed": 0, "documents": 1}


# --- XML -------------------------------------------------------------------------------------------------------------

SPEC_XML = "<invoice><invoice_number>INV-001</invoice_number><date>2024-03-15</date><total>$150.00</total></invoice>"
SPEC_XML_REQUIRED = ["invoice_number", "date", "total"]


def test_xml_specification_example() -> None:
    r = xml_validity(SPEC_XML, required=SPEC_XML_REQUIRED)
    assert (r.is_valid, r.is_schema_compliant, r.parsing_error, r.validation_errors) == (True, True, None, [])
    assert (r.completeness_score, r.field_count, r.root_tag, r.source) == (1.0, 3, "invoice", "raw")
    d = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert (d["output_format"], d["is_valid"], d["completeness_score"], d["field_count"]) == ("xml", True, 1.0, 3)
    assert structured_validity(SPEC_XML, output_format="xml", required=SPEC_XML_REQUIRED) == r


def test_xml_well_formedness_errors_name_the_place() -> None:
    r = xml_validity("<invoice><total>9.00</invoice>", required=["total"])
    assert (r.parsed, r.valid, r.completeness, r.field_count) == (False, False, 0.0, 0)
    assert r.parse_error == "mismatched tag at line 1 column 23"
    assert r.missing_required == ("total",) and r.counts() == {"valid": 0, "parsed": 0, "documents": 1}
    assert xml_validity("").parse_error == "the output is empty"
    assert xml_validity("<a/><b/>").parse_error.startswith("junk after document element")
    assert xml_validity('{"total": 1}').parsed is False  # JSON is not XML


def test_xml_completeness_counts_present_non_empty_elements() -> None:
    text = '<r><a>1</a><b/><c x="1"/><d><e>2</e></d><f>  </f></r>'
    r = xml_validity(text, required=["a", "b", "c", "d/e", "f", "g", ".//e", "r"])
    assert r.missing_required == ("b", "f", "g")
    assert r.completeness == 5 / 8
    assert r.field_count == 6  # leaves a, b, c, e, f and the attribute x
    with pytest.raises(ValueError, match=r"required path .a\[. is not an ElementTree path \(invalid path\)"):
        xml_validity(text, required=["a["])


def test_xml_in_a_markdown_fence() -> None:
    root, source, error = parse_xml_output('Here it is:\n```xml\n<total>9.00</total>\n```\nBye')
    assert (root.tag, root.text, source, error) == ("total", "9.00", "fence", None)
    r = xml_validity("```xml\n<total>9.00</total\n```")
    assert r.parse_error is not None and r.parse_error.startswith("in the ```xml block: ")


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<lolz>&lol3;</lolz>"""


@pytest.mark.parametrize("text", [
    BILLION_LAUGHS,
    '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>',
    '<!DOCTYPE a [<!ENTITY % p SYSTEM "http://127.0.0.1:1/x.dtd"> %p;]><a/>',
    '<!DOCTYPE a [<!ENTITY u SYSTEM "x.gif" NDATA gif>]><a/>',
])
def test_xml_entity_declarations_are_refused(text: str) -> None:
    r = xml_validity(text)
    assert r.parsed is False and r.valid is False
    assert "entity declarations are refused" in (r.parse_error or "")


def test_xml_without_entities_may_have_a_doctype() -> None:
    assert xml_validity('<?xml version="1.0" encoding="ISO-8859-1"?><!DOCTYPE a><a>é</a>').parsed


def test_xml_hostile_text() -> None:
    assert xml_validity("<a>\ud800</a>").parse_error == "not well-formed (invalid token) at line 1 column 4"
    assert xml_validity("<a>\x1b[31m</a>").parsed is False  # control characters are not XML characters
    deep = "<a>" * 50_000 + "</a>" * 50_000
    assert xml_validity(deep).field_count == 1
    wide = "<r>" + "<x>1</x>" * 100_000 + "</r>"
    assert xml_validity(wide, required=["x"]).field_count == 100_000


def test_xml_bad_inputs() -> None:
    with pytest.raises(TypeError, match="output is None"):
        xml_validity(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="output is bytes; decode it first"):
        xml_validity(b"<a/>")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="required must be a list of element paths"):
        xml_validity("<a/>", required="a")
    with pytest.raises(ValueError, match="unknown output_format 'yaml'; valid: json, xml"):
        structured_validity("a: 1", output_format="yaml")
    with pytest.raises(ValueError, match="unknown output_format 'XML ' \\(did you mean 'xml'\\?\\)"):
        structured_validity("<a/>", output_format="XML ")
    with pytest.raises(ValueError, match="required is for output_format='xml'"):
        structured_validity("{}", required=["a"])


INVOICE_XSD = """<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="invoice"><xs:complexType><xs:sequence>
    <xs:element name="invoice_number" type="xs:string"/>
    <xs:element name="date" type="xs:date"/>
    <xs:element name="total" type="xs:string"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>"""


def test_xml_against_an_xsd(tmp_path: Any) -> None:
    pytest.importorskip("lxml", reason="XSD validation is optional: it needs lxml, which is not installed")
    r = xml_validity(SPEC_XML, INVOICE_XSD, required=SPEC_XML_REQUIRED)
    assert (r.valid, r.is_schema_compliant, r.errors, r.schema_given) == (True, True, (), True)
    bad = xml_validity(SPEC_XML.replace("2024-03-15", "15/03/2024"), INVOICE_XSD)
    assert (bad.parsed, bad.valid) == (True, False)
    assert len(bad.errors) == 1 and bad.errors[0].startswith("line 1: Element 'date'")
    path = tmp_path / "invoice.xsd"
    path.write_text(INVOICE_XSD, encoding="utf-8")
    assert xml_validity(SPEC_XML, path).valid
    with pytest.raises(ValueError, match="xsd is not a readable XML Schema"):
        xml_validity(SPEC_XML, "<xs:schema")


def test_xsd_without_lxml_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "lxml", None)  # import lxml raises ImportError
    with pytest.raises(ImportError, match="validating against an XSD needs lxml: pip install lxml"):
        xml_validity(SPEC_XML, INVOICE_XSD)
    assert xml_validity(SPEC_XML).valid  # well-formedness needs no lxml


SPEC_VALIDITY_SCHEMA = {"type": "object", "required": ["invoice_number", "date", "total"],
                        "properties": {"invoice_number": {"type": "string"}, "date": {"type": "string"},
                                       "total": {"type": "string"}}}


def test_structured_validity_xml_takes_the_specifications_dict_schema() -> None:
    """Document 000, 2.2: ``expected_schema: dict`` with ``output_format`` "json" or "xml" (issue 20 C5): for XML the
    dict's ``required`` are the required elements, no XSD (and no lxml) is involved."""
    xml = "<invoice><invoice_number>INV-001</invoice_number><date>2024-03-15</date><total>$150.00</total></invoice>"
    d = structured_validity(xml, SPEC_VALIDITY_SCHEMA, output_format="xml").to_dict()
    assert {k: d[k] for k in ("is_valid", "is_schema_compliant", "parsing_error", "validation_errors",
                              "completeness_score", "field_count")} == {
        "is_valid": True, "is_schema_compliant": True, "parsing_error": None, "validation_errors": [],
        "completeness_score": 1.0, "field_count": 3}  # the document's expected output for its JSON example
    assert d["schema_given"] is False  # no XSD validated it
    partial = structured_validity("<invoice><date>2024-03-15</date></invoice>", {"required": ["date", "total"]},
                                  output_format="xml", required=["date", "vendor"])
    assert partial.missing_required == ("total", "vendor") and partial.completeness == 1 / 3
    with pytest.raises(TypeError, match="the schema's 'required' must be a list of element names"):
        structured_validity("<a/>", {"required": "total"}, output_format="xml")
    json_text = '{"invoice_number": "INV-001", "date": "2024-03-15", "total": "$150.00"}'
    assert structured_validity(json_text, SPEC_VALIDITY_SCHEMA).completeness_score == 1.0  # JSON unchanged


# --- schemas and outputs that would never end or overflow the stack (issue 20, A9 and A12) ---------------------------

def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("text", [_nested(1500), f"```json\n{_nested(1500)}\n```", f"Here: {_nested(1500)} done",
                                  _nested(structured.MAX_JSON_DEPTH + 1)])
def test_an_output_nested_too_deep_is_not_valid_json_with_the_reason(text: str) -> None:
    r = json_validity(text, {"type": "array"})  # not RecursionError: a verdict on what the model produced
    assert (r.valid, r.parsed, r.value) == (False, False, 0.0)
    assert f"nested deeper than {structured.MAX_JSON_DEPTH} levels" in (r.parse_error or "")
    assert not parse_json_output(text).ok


def test_an_output_at_the_depth_limit_is_read_and_checked_against_a_recursive_schema() -> None:
    r = json_validity(_nested(structured.MAX_JSON_DEPTH), {"type": "array", "items": {"$ref": "#"}})
    assert (r.valid, r.parsed) == (True, True)


def test_a_parsed_object_nested_too_deep_is_not_valid_either() -> None:
    data: list[Any] = []
    for _ in range(1500):
        data = [data]
    r = json_validity(data, {"type": "array"})
    assert not r.parsed and "nested deeper than" in (r.parse_error or "")


@pytest.mark.parametrize("schema", [{"$ref": "#"}, {"allOf": [{"$ref": "#"}]},
                                    {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                                     "$ref": "#/$defs/a"}])
def test_a_schema_that_refers_to_itself_without_end_is_one_sentence(schema: dict[str, Any]) -> None:
    with pytest.raises(structured.SchemaCheckError) as info:
        json_validity('{"a": 1}', schema)
    message = str(info.value)
    assert "recursion limit" in message and '{"$ref": "#"}' in message and message.endswith("fix the schema")
    assert isinstance(info.value, ValueError) and "\n" not in message


def test_a_backtracking_pattern_is_stopped_with_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(structured, "PATTERN_TIMEOUT_S", 0.05)
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|aa)+$"}}}
    with pytest.raises(structured.SchemaCheckError) as info:
        json_validity(json.dumps({"a": "a" * 40 + "!"}), schema)
    assert str(info.value) == ("the schema's pattern '^(a|aa)+$' took more than 0.05 s on a 41-character string of the "
                               "output (catastrophic backtracking); simplify the pattern")


def test_a_backtracking_pattern_property_is_stopped_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(structured, "PATTERN_TIMEOUT_S", 0.05)
    schema = {"type": "object", "patternProperties": {"^(a|aa)+$": {"type": "string"}}}
    with pytest.raises(structured.SchemaCheckError, match="pattern '\\^\\(a\\|aa\\)\\+\\$' took more than"):
        json_validity(json.dumps({"a" * 40 + "!": 1}), schema)


def test_the_issues_pattern_gets_its_verdict_at_once() -> None:
    # ^(a+)+$ against 34 a's and '!' never ended with Python's re; the regex package answers it (no match)
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
    r = json_validity(json.dumps({"a": "a" * 34 + "!"}), schema)
    assert not r.valid and [e.keyword for e in r.errors] == ["pattern"]


@pytest.mark.parametrize("draft", ["http://json-schema.org/draft-03/schema#", "http://json-schema.org/draft-04/schema#",
                                   "https://json-schema.org/draft/2020-12/schema"])
def test_bounded_patterns_keep_jsonschemas_verdicts(draft: str) -> None:
    schema = {"$schema": draft, "type": "object", "properties": {"d": {"type": "string", "pattern": r"^\d{4}$"}},
              "patternProperties": {"^n_": {"type": "number"}}}
    r = json_validity('{"d": "12a4", "n_x": "one", "other": 1}', schema)
    assert [(e.path, e.keyword) for e in r.errors] == [("$.d", "pattern"), ("$.n_x", "type")]
    assert json_validity('{"d": "1234", "n_x": 2}', schema).valid


def test_a_legitimately_recursive_schema_checks_an_output_at_the_depth_limit() -> None:
    # a tree schema through anyOf/oneOf: several jsonschema frames per level, still within Python's limit at 100
    schema = {"$defs": {"node": {"oneOf": [{"type": "null"}, {"type": "object", "required": ["child"],
                                                             "properties": {"child": {"anyOf": [{"$ref": "#/$defs/node"}]}}}]}},
              "$ref": "#/$defs/node"}
    text = '{"child": ' * structured.MAX_JSON_DEPTH + "null" + "}" * structured.MAX_JSON_DEPTH
    r = json_validity(text, schema)
    assert (r.valid, r.parsed, r.errors) == (True, True, ())
