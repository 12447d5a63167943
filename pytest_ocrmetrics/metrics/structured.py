"""Structured (JSON) output checks: does a model's output parse, satisfy a schema, and fill the required fields?

Vision-language models wrap JSON in Markdown fences and prose ("Here is the data: ```json {...} ```");
:func:`json_validity` finds the JSON, reports where it came from, lists *every* schema violation with its JSON path,
and measures how many schema-required fields are present and non-empty.

>>> r = json_validity('Sure!\\n```json\\n{"total": "9.00"}\\n```', {"type": "object", "required": ["total", "date"]})
>>> r.valid, r.from_fence, r.completeness, [e.message for e in r.errors]
(False, True, 0.5, ["'date' is a required property"])
"""

from __future__ import annotations

import json
import os
import re
import sys
import xml.parsers.expat as expat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from xml.etree.ElementTree import TreeBuilder
from xml.parsers.expat import ExpatError

__all__ = ["JsonValidity", "SchemaViolation", "SchemaCheckError", "json_validity", "parse_json_output", "ParsedJson",
           "XmlValidity", "xml_validity", "parse_xml_output", "structured_validity"]

Source = Literal["raw", "fence", "text", "object"]

_FENCE = re.compile(r"(?P<fence>```|~~~)[ \t]*(?P<lang>[A-Za-z0-9_+.-]*)[^\n]*\n(?P<body>.*?)(?:\n[ \t]*(?P=fence)|\Z)", re.S)
_JSON_LANGS = ("json", "jsonc", "json5", "javascript", "js")
_MAX_EMBEDDED_TRIES = 64
_IDENTIFIER = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")  # jsonschema's rule for ``$.key`` versus ``$['key']``
# An output's JSON nested deeper than this is not taken as the answer (a parse failure: ``json_valid`` 0). Real
# answers are a few levels deep; a deeper one would make the recursive schema check, the completeness walk and the
# reports' writers exceed Python's recursion limit (about 1,000 frames; jsonschema spends up to ~8 per level of a
# recursive schema through oneOf/anyOf/$ref, so 64 levels leave room for the test runner's own frames).
MAX_JSON_DEPTH = 64
# Each ``pattern`` / ``patternProperties`` match of a schema against the output may take this long (seconds): a
# backtracking pattern such as ``^(a|aa)+$`` would otherwise run for ever on ``"aaa…a!"`` (``re`` has no limit).
PATTERN_TIMEOUT_S = 1.0


class SchemaCheckError(ValueError):
    """The schema cannot be applied to the output (a ``$ref`` loop, a pattern that backtracks without end): a
    problem of the schema, not a verdict on the output. One sentence; the plugin errors that document's test."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (JSON has no NaN or Infinity)")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


@dataclass(frozen=True)
class ParsedJson:
    """What :func:`parse_json_output` found: the data, where it came from (``raw``, ``fence``, ``text``), or an error."""

    ok: bool
    data: Any = None
    source: Source | None = None
    error: str | None = None


def _depth(value: Any) -> int:
    """How many arrays/objects deep ``value`` is (0 for a scalar), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        current, level = stack.pop()
        children = current.values() if isinstance(current, dict) else current if isinstance(current, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _too_deep() -> ValueError:
    return ValueError(f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels of arrays/objects, "
                      "more than this check reads")


def _decode(text: str, start: int = 0) -> tuple[Any, int]:
    """``raw_decode`` that says, as a ``ValueError``, when the value is nested too deep (Python's parser raises
    :class:`RecursionError` near 1,000 levels; :data:`MAX_JSON_DEPTH` is the limit this check reads)."""
    try:
        data, end = _DECODER.raw_decode(text, start)
    except RecursionError:
        raise _too_deep() from None
    if isinstance(data, (dict, list)) and _depth(data) > MAX_JSON_DEPTH:
        raise _too_deep()
    return data, end


def _loads(text: str) -> Any:
    data, end = _decode(text)
    if text[end:].strip():
        raise json.JSONDecodeError("Extra data", text, end)
    return data


def _describe(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return str(exc)


def _top_level_openers(text: str) -> list[int]:
    """Positions of ``{``/``[`` outside any bracket pair (a naive count): a broken object's inner objects are skipped."""
    starts: list[int] = []
    depth = 0
    for i, ch in enumerate(text):
        if ch in "{[":
            if depth == 0:
                starts.append(i)
                if len(starts) >= _MAX_EMBEDDED_TRIES:
                    break
            depth += 1
        elif ch in "}]":
            depth = max(depth - 1, 0)
    return starts


def parse_json_output(text: str) -> ParsedJson:
    """Find and parse the JSON in a model's output.

    Tried in order: (1) the whole text (surrounding whitespace ignored); (2) each Markdown code fence (```` ``` ```` or
    ``~~~``) tagged ``json`` (or untagged), first to last, an unclosed final fence included; (3) only when no fence
    held broken JSON: the longest complete JSON value that starts at a ``{`` or ``[`` outside brackets, prose
    before and after ignored (so a footnote ``[1]`` loses to the object; the inner objects of a broken object are
    never taken for the answer). ``NaN`` and
    ``Infinity`` are rejected (they are not JSON), and so is a value nested deeper than :data:`MAX_JSON_DEPTH`
    levels (with that reason: the model produced it). When nothing parses, the error is the first fence's if a fence
    held broken JSON, else the first embedded ``{``/``[``'s, else the whole text's.

    Args:
        text: the model's output.

    Returns:
        A :class:`ParsedJson` (the value, or why it did not parse).

    >>> parse_json_output('The result is {"a": [1, 2]}. Done.')
    ParsedJson(ok=True, data={'a': [1, 2]}, source='text', error=None)
    """
    stripped = text.strip()
    try:
        return ParsedJson(True, _loads(stripped), "raw")
    except ValueError as exc:
        error = _describe(exc)
    fence_error = None
    for m in _FENCE.finditer(text):
        if m["lang"] and m["lang"].lower() not in _JSON_LANGS:
            continue
        try:
            return ParsedJson(True, _loads(m["body"].strip()), "fence")
        except ValueError as exc:
            fence_error = fence_error or f"in the ```{m['lang']} block: {_describe(exc)}"
    embedded_error = None
    if fence_error is None:
        best: tuple[int, Any] | None = None  # (length, data) of the longest JSON value found
        for start in _top_level_openers(text):
            try:
                data, end = _decode(text, start)
            except ValueError as exc:
                embedded_error = embedded_error or _describe(exc)
                continue
            if best is None or end - start > best[0]:
                best = (end - start, data)
        if best is not None:
            return ParsedJson(True, best[1], "text")
    if not stripped:
        error = "the output is empty"
    return ParsedJson(False, error=fence_error or embedded_error or error)


@dataclass(frozen=True)
class SchemaViolation:
    """One schema validation error: where (a JSON path such as ``$.items[0].price``), what, and which keyword."""

    path: str
    message: str
    keyword: str
    schema_path: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message, "keyword": self.keyword, "schema_path": self.schema_path}


class _Validity:
    """What JSON and XML validity share: the specification's names for the parse and schema verdicts."""

    parsed: bool
    valid: bool
    parse_error: str | None
    required_total: int
    missing_required: tuple[str, ...]

    @property
    def required_present(self) -> int:
        return self.required_total - len(self.missing_required)

    @property
    def completeness(self) -> float:
        if not self.parsed:
            return 0.0
        return self.required_present / self.required_total if self.required_total else 1.0

    @property
    def is_valid(self) -> bool:
        """The specification's ``is_valid``: the output parses (schema or not)."""
        return self.parsed

    @property
    def is_schema_compliant(self) -> bool:
        return self.valid

    @property
    def parsing_error(self) -> str | None:
        return self.parse_error

    @property
    def completeness_score(self) -> float:
        return self.completeness

    @property
    def value(self) -> float:
        return 1.0 if self.valid else 0.0

    def counts(self) -> dict[str, int]:
        """Corpus rates: schema-valid = sum(valid) / sum(documents), parse success = sum(parsed) / sum(documents)."""
        return {"valid": int(self.valid), "parsed": int(self.parsed), "documents": 1}


@dataclass(frozen=True)
class JsonValidity(_Validity):
    """Parse, schema and completeness results for one model output.

    ``valid`` is True when the output parsed and (with a schema) satisfied it. ``completeness`` is the share of
    schema-required paths present and non-empty (1.0 when the schema requires nothing or none is given and the output
    parsed; 0.0 when it did not parse). ``field_count`` counts scalar leaves (null included) of the parsed JSON.
    The specification's names are properties: ``is_valid`` (parsed), ``is_schema_compliant`` (``valid``),
    ``parsing_error``, ``validation_errors`` (messages), ``completeness_score``.
    """

    valid: bool
    parsed: bool
    source: Source | None
    parse_error: str | None
    errors: tuple[SchemaViolation, ...]
    required_total: int
    missing_required: tuple[str, ...]
    field_count: int
    schema_given: bool
    data: Any = field(default=None, compare=False, repr=False)

    @property
    def from_fence(self) -> bool:
        """True when the JSON came from a Markdown code fence (```` ```json ````), as vision-language models emit it."""
        return self.source == "fence"

    @property
    def validation_errors(self) -> list[str]:
        return [e.message for e in self.errors]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict with the specification's keys (``is_valid``, ``is_schema_compliant``,
        ``parsing_error``, ``validation_errors``, ``completeness_score``, ``field_count``) and this project's."""
        return {
            "output_format": "json",
            "is_valid": self.parsed,
            "is_schema_compliant": self.valid,
            "parsing_error": self.parse_error,
            "validation_errors": self.validation_errors,
            "completeness_score": self.completeness,
            "valid": self.valid,
            "parsed": self.parsed,
            "source": self.source,
            "from_fence": self.from_fence,
            "parse_error": self.parse_error,
            "schema_given": self.schema_given,
            "errors": [e.to_dict() for e in self.errors],
            "completeness": self.completeness,
            "required_present": self.required_present,
            "required_total": self.required_total,
            "missing_required": list(self.missing_required),
            "field_count": self.field_count,
            "counts": self.counts(),
        }


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENTIFIER.match(key):
        return f"{path}.{key}"
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"{path}['{escaped}']"


def _count_leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_count_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_leaves(v) for v in value)
    return 1


_ABSENT = object()


def _non_empty(value: Any) -> bool:
    if value is _ABSENT or value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, dict)):
        return bool(value)
    return True  # numbers (0 included) and booleans (false included) are values


class _RequiredWalker:
    """Collects (path, present) for every schema-required property, following local ``$ref`` and ``allOf``."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.result: list[tuple[str, bool]] = []

    def resolve(self, schema: Any) -> Any:
        seen = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
            target: Any = self.root
            for part in schema["$ref"][1:].split("/")[1:]:
                part = part.replace("~1", "/").replace("~0", "~")
                if isinstance(target, Mapping) and part in target:
                    target = target[part]
                elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                    target = target[int(part)]
                else:
                    return {}
            schema, seen = target, seen + 1
            if seen > 32:
                return {}
        return schema

    def walk(self, schema: Any, instance: Any, path: str, chain: frozenset[tuple[int, int]]) -> None:
        schema = self.resolve(schema)
        if not isinstance(schema, Mapping):
            return
        visit = (id(schema), id(instance))
        if visit in chain:  # the same schema on the same value again (a recursive schema under a missing value, a
            return        # $ref/allOf loop that descends into nothing): stop
        chain = chain | {visit}
        for sub in schema.get("allOf", ()):
            self.walk(sub, instance, path, chain)
        properties = schema.get("properties", {})
        required = [k for k in schema.get("required", ()) if isinstance(k, str)]
        is_object = isinstance(instance, dict)
        for key in required:
            value = instance.get(key, _ABSENT) if is_object else _ABSENT
            self.result.append((_child(path, key), _non_empty(value)))
            if isinstance(properties, Mapping) and key in properties:
                self.walk(properties[key], value, _child(path, key), chain)
        if is_object and isinstance(properties, Mapping):
            for key, sub in properties.items():
                if key not in required and key in instance:  # an optional object that is present: its required count
                    self.walk(sub, instance[key], _child(path, key), chain)
        items = schema.get("items")
        if isinstance(items, Mapping) and isinstance(instance, list):
            for i, item in enumerate(instance):
                self.walk(items, item, _child(path, i), chain)


class _PatternTimeout(Exception):
    """A schema ``pattern`` that ran past :data:`PATTERN_TIMEOUT_S` (turned into a :class:`SchemaCheckError`)."""

    def __init__(self, pattern: str, length: int) -> None:
        super().__init__(pattern, length)
        self.pattern, self.length = pattern, length


def _search(pattern: str, text: str) -> bool:
    """``re.search`` as jsonschema does it, with the ``regex`` package's time limit (Python's ``re`` has none)."""
    import regex

    try:
        return regex.search(pattern, text, timeout=PATTERN_TIMEOUT_S) is not None
    except TimeoutError:
        raise _PatternTimeout(pattern, len(text)) from None
    except regex.error:  # a pattern only ``re`` reads (the schema check compiled it with ``re``): no limit then
        return re.search(pattern, text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


_BOUNDED: dict[type, type] = {}


def _bounded(cls: type) -> type:
    """``cls`` (a jsonschema validator class) with its ``pattern`` keywords matched under a time limit."""
    if cls not in _BOUNDED:
        import jsonschema

        keywords = {name: check for name, check in (("pattern", _pattern), ("patternProperties", _pattern_properties))
                    if name in cls.VALIDATORS}  # type: ignore[attr-defined]
        _BOUNDED[cls] = jsonschema.validators.extend(cls, keywords)
    return _BOUNDED[cls]


def _validator(schema: Any) -> Any:
    import jsonschema
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, (Mapping, bool)):
        raise TypeError(f"schema must be a JSON Schema (a dict, or True/False), not {type(schema).__name__}")
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "<root>"
        raise ValueError(
            f"schema is not a valid {cls.__name__.replace('Validator', '')} JSON Schema: {exc.message} "
            f"(at schema path {where}); fix the schema"
        ) from None
    except RecursionError:
        raise SchemaCheckError(f"the schema is nested too deeply to be checked (more than Python's recursion limit "
                               f"of about {sys.getrecursionlimit():,} levels); flatten it") from None
    return _bounded(cls)(schema)


def json_validity(output: str | dict[str, Any] | list[Any], schema: Mapping[str, Any] | bool | None = None) -> JsonValidity:
    """Check that ``output`` is JSON, satisfies ``schema`` (if given), and fills the schema's required fields.

    ``output`` is the model's raw text: plain JSON, JSON in a Markdown fence (``from_fence`` is then True), or JSON
    with prose around it (see :func:`parse_json_output`). An already-parsed dict or list is accepted as is.
    With a schema (any draft jsonschema knows; ``$schema`` picks it, default the latest), every validation error is
    reported (``jsonschema``'s ``iter_errors``), sorted by path (keys by name, array indices numerically). An invalid
    schema raises ``ValueError``.
    A schema that cannot be applied raises :class:`SchemaCheckError` (a ``ValueError``) with one sentence: a ``$ref``
    that loops without descending into the output (``{"$ref": "#"}``), an unresolvable ``$ref``, a ``pattern`` whose
    match ran past :data:`PATTERN_TIMEOUT_S` seconds (catastrophic backtracking, ``^(a+)+$``).

    Completeness: the share of required paths that are present and non-empty (not null, ``""``, ``[]`` or ``{}``).
    Required properties of nested object schemas count too (under a missing parent they count as missing), as do the
    required properties of each item of an array whose ``items`` is an object schema; local ``$ref`` and ``allOf`` are
    followed (``anyOf``/``oneOf`` branches are not: which branch applies is ambiguous).

    Args:
        output: the model's output (text, possibly fenced, or parsed JSON).
        schema: a JSON Schema to check against (optional).

    Returns:
        A :class:`JsonValidity`.

    >>> schema = {"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "integer"}}}
    >>> r = json_validity('{"a": "x", "b": ""}', schema)
    >>> r.valid, r.errors[0].path, r.errors[0].message, r.completeness, r.field_count
    (False, '$.a', "'x' is not of type 'integer'", 0.5, 2)
    """
    validator = _validator(schema) if schema is not None else None
    if isinstance(output, (dict, list)):
        parsed = ParsedJson(True, output, "object") if _depth(output) <= MAX_JSON_DEPTH else \
            ParsedJson(False, error=str(_too_deep()))
    elif isinstance(output, str):
        parsed = parse_json_output(output)
    elif output is None:
        raise TypeError("output is None; pass the model's output text (use '' for an empty output)")
    elif isinstance(output, (bytes, bytearray)):
        raise TypeError("output is bytes; decode it first, e.g. data.decode('utf-8')")
    else:
        raise TypeError(f"output must be a str (or a parsed dict/list), not {type(output).__name__}")

    errors: tuple[SchemaViolation, ...] = ()
    required: list[tuple[str, bool]] = []
    if validator is not None:
        walker = _RequiredWalker(schema)
        walker.walk(schema, parsed.data if parsed.ok else _ABSENT, "$", frozenset())
        required = walker.result
        if parsed.ok:
            errors = _schema_errors(validator, parsed.data)
    return JsonValidity(
        valid=parsed.ok and not errors,
        parsed=parsed.ok,
        source=parsed.source,
        parse_error=parsed.error,
        errors=errors,
        required_total=len(required),
        missing_required=tuple(path for path, present in required if not present),
        field_count=_count_leaves(parsed.data) if parsed.ok else 0,
        schema_given=validator is not None,
        data=parsed.data,
    )


def _shown(pattern: str, limit: int = 80) -> str:
    """A pattern for a message: quoted, cut at ``limit`` characters."""
    return repr(pattern if len(pattern) <= limit else pattern[:limit - 1] + "…")


def _schema_errors(validator: Any, data: Any) -> tuple[SchemaViolation, ...]:
    from referencing.exceptions import Unresolvable

    try:
        raw = list(validator.iter_errors(data))
    except Unresolvable as exc:
        raise SchemaCheckError(f"schema has a $ref that cannot be resolved ({exc}); fix the reference in the schema") \
            from None
    except _PatternTimeout as exc:
        raise SchemaCheckError(
            f"the schema's pattern {_shown(exc.pattern)} took more than {PATTERN_TIMEOUT_S:g} s on a "
            f"{exc.length:,}-character string of the output (catastrophic backtracking); simplify the pattern"
        ) from None
    except RecursionError:  # the output is at most MAX_JSON_DEPTH deep: the schema recurses on its own
        raise SchemaCheckError(
            f"checking the output against the schema went deeper than Python's recursion limit (about "
            f"{sys.getrecursionlimit():,} calls): the schema refers to itself without descending into the output "
            '(as {"$ref": "#"} does); fix the schema') from None

    def order(e: Any) -> tuple[Any, ...]:  # by path: array indices numerically, keys by name
        where = tuple((0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.absolute_path)
        return (where, "/".join(map(str, e.absolute_schema_path)), e.message)

    return tuple(
        SchemaViolation(
            path=e.json_path,
            message=e.message,
            keyword=str(e.validator),
            schema_path="/".join(str(p) for p in e.absolute_schema_path),
        )
        for e in sorted(raw, key=order)
    )


# --- XML -------------------------------------------------------------------------------------------------------------

_XML_LANGS = ("xml", "html", "xhtml", "svg")


class _ForbiddenDeclaration(ValueError):
    pass


def _forbid_entity(name: str, *args: Any) -> None:
    raise _ForbiddenDeclaration(
        f"the XML declares the entity {name!r}; entity declarations are refused (they allow entity expansion "
        "attacks): remove the <!ENTITY> declaration"
    )


def _parse_xml(text: str) -> Any:
    """Parse ``text`` into an ``xml.etree.ElementTree.Element`` with expat, refusing every entity declaration.

    Built on ``xml.parsers.expat`` directly (the C ``ElementTree.XMLParser`` hides its expat handlers): no entity can
    be declared, so none can be expanded (billion laughs, quadratic blow-up) and no external entity is ever read.
    """
    builder = TreeBuilder()
    parser = expat.ParserCreate(encoding="utf-8")  # the text is re-encoded below: a declared encoding is overridden
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.EntityDeclHandler = _forbid_entity
    parser.UnparsedEntityDeclHandler = _forbid_entity
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.Parse(text.encode("utf-8", "surrogatepass"), True)  # a lone surrogate is invalid XML: expat says where
    return builder.close()


_XML_ERRORS = (ExpatError, _ForbiddenDeclaration)


def _xml_error(exc: Exception) -> str:
    if isinstance(exc, _ForbiddenDeclaration):
        return str(exc)
    if isinstance(exc, ExpatError):
        return f"{expat.ErrorString(exc.code)} at line {exc.lineno} column {exc.offset + 1}"
    return str(exc)


def parse_xml_output(text: str) -> tuple[Any, Source | None, str | None]:
    """Find and parse the XML in a model's output: ``(root element, source, None)`` or ``(None, None, error)``.

    Tried in order: the whole text (surrounding whitespace ignored), then each Markdown fence tagged ``xml`` (or
    untagged). Entity declarations are refused (see :func:`xml_validity`).

    Args:
        text: the model's output.

    Returns:
        ``(root element, source, None)`` or ``(None, None, error)``.

    >>> root, source, error = parse_xml_output('```xml\\n<total>9.00</total>\\n```')
    >>> root.tag, root.text, source, error
    ('total', '9.00', 'fence', None)
    """
    stripped = text.strip()
    if not stripped:
        return None, None, "the output is empty"
    try:
        return _parse_xml(stripped), "raw", None
    except _XML_ERRORS as exc:
        error = _xml_error(exc)
    for m in _FENCE.finditer(text):
        if m["lang"] and m["lang"].lower() not in _XML_LANGS:
            continue
        try:
            return _parse_xml(m["body"].strip()), "fence", None
        except _XML_ERRORS as exc:
            return None, None, f"in the ```{m['lang']} block: {_xml_error(exc)}"
    return None, None, error


def _xml_present(root: Any, path: str) -> bool:
    """True when ``path`` (ElementTree ``find`` syntax below the root, or the root's own tag) names a non-empty element."""
    element = root if path in (root.tag, ".") else root.find(path)
    if element is None:
        return False
    return bool((element.text or "").strip()) or len(element) > 0 or bool(element.attrib)


def _check_xml_path(path: str) -> None:
    from xml.etree.ElementTree import Element

    try:
        Element("root").find(path)
    except (SyntaxError, TypeError, KeyError) as exc:  # ElementPath's ways of saying "not a path"
        reason = exc if isinstance(exc, SyntaxError) else "invalid path"
        raise ValueError(f"required path {path!r} is not an ElementTree path ({reason}); write it like "
                         "'invoice/total' or './/total'") from None


def _xml_fields(root: Any) -> int:
    """Leaf elements (no child element) and attributes: the XML counterpart of a JSON document's scalar leaves."""
    return sum((len(element) == 0) + len(element.attrib) for element in root.iter())


def _xsd_errors(text: str, xsd: Any) -> tuple[str, ...]:
    try:
        from lxml import etree  # optional: XSD validation only
    except ImportError:
        raise ImportError("validating against an XSD needs lxml: pip install lxml (or pass xsd=None to check "
                          "well-formedness and required elements only)") from None
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        if isinstance(xsd, (str, bytes)) and (xsd.lstrip()[:1] in ("<", b"<")):
            schema_doc = etree.fromstring(xsd.encode("utf-8") if isinstance(xsd, str) else xsd, parser)
        else:
            schema_doc = etree.parse(os.fspath(xsd), parser)
        schema = etree.XMLSchema(schema_doc)
    except (etree.XMLSyntaxError, etree.XMLSchemaParseError, OSError) as exc:
        raise ValueError(f"xsd is not a readable XML Schema ({exc}); fix the schema or its path") from None
    document = etree.fromstring(text.encode("utf-8"), parser)
    if schema.validate(document):
        return ()
    return tuple(f"line {e.line}: {e.message}" for e in schema.error_log)


@dataclass(frozen=True)
class XmlValidity(_Validity):
    """Well-formedness, XSD and completeness results for one XML model output.

    ``parsed``: the output is well-formed XML (no entity declarations). ``valid``: parsed and, with an XSD, valid
    against it. ``completeness``: the share of ``required`` element paths present and non-empty (text, a child
    element or an attribute); 1.0 when none is required and the output parsed, 0.0 when it did not parse.
    ``field_count``: leaf elements plus attributes. The specification's names are properties: ``is_valid``
    (parsed), ``is_schema_compliant``, ``parsing_error``, ``validation_errors``, ``completeness_score``.
    """

    valid: bool
    parsed: bool
    source: Source | None
    parse_error: str | None
    errors: tuple[str, ...]
    required_total: int
    missing_required: tuple[str, ...]
    field_count: int
    schema_given: bool
    root_tag: str | None = None
    data: Any = field(default=None, compare=False, repr=False)

    output_format = "xml"

    @property
    def validation_errors(self) -> list[str]:
        return list(self.errors)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict with the specification's keys and this project's (as :meth:`JsonValidity.to_dict`)."""
        return {
            "output_format": "xml",
            "is_valid": self.parsed,
            "is_schema_compliant": self.valid,
            "parsing_error": self.parse_error,
            "validation_errors": list(self.errors),
            "completeness_score": self.completeness,
            "field_count": self.field_count,
            "valid": self.valid,
            "parsed": self.parsed,
            "source": self.source,
            "root_tag": self.root_tag,
            "schema_given": self.schema_given,
            "required_present": self.required_present,
            "required_total": self.required_total,
            "missing_required": list(self.missing_required),
            "counts": self.counts(),
        }


def xml_validity(output: str, xsd: str | os.PathLike[str] | None = None, *,
                 required: Sequence[str] = ()) -> XmlValidity:
    """Check that ``output`` is well-formed XML, valid against ``xsd`` (if given), and fills ``required`` elements.

    ``output`` is the model's raw text: XML, or XML in a Markdown fence (```` ```xml ````). Parsing uses the standard
    library's expat with a guard: any ``<!ENTITY>`` declaration is refused (a parse error naming it), so entity
    expansion attacks cannot run and no external entity is read. ``xsd`` (the schema's text or a path) needs
    ``lxml``, imported only then (``ImportError`` naming it when absent); validation errors are listed with their
    line. ``required`` are element paths in ElementTree ``find`` syntax below the root (``"total"``,
    ``"items/item/price"``, ``".//date"``; the root's own tag also works).

    Args:
        output: the model's output.
        xsd: an XSD schema file (needs lxml).
        required: element paths that must be present and non-empty.

    Returns:
        An :class:`XmlValidity`.

    >>> r = xml_validity("<invoice><number>INV-001</number><total/></invoice>", required=["number", "total", "date"])
    >>> r.valid, r.completeness, r.missing_required, r.field_count
    (True, 0.3333333333333333, ('total', 'date'), 2)
    >>> xml_validity("<invoice><total>9.00</invoice>").parse_error
    'mismatched tag at line 1 column 23'
    """
    if output is None:
        raise TypeError("output is None; pass the model's output text (use '' for an empty output)")
    if isinstance(output, (bytes, bytearray)):
        raise TypeError("output is bytes; decode it first, e.g. data.decode('utf-8')")
    if not isinstance(output, str):
        raise TypeError(f"output must be a str, not {type(output).__name__}")
    if isinstance(required, str) or not all(isinstance(p, str) for p in required):
        raise TypeError("required must be a list of element paths (str), e.g. ['invoice_number', 'total']")
    for path in required:
        _check_xml_path(path)
    root, source, error = parse_xml_output(output)
    errors: tuple[str, ...] = ()
    missing: tuple[str, ...] = tuple(required)
    if root is not None:
        missing = tuple(path for path in required if not _xml_present(root, path))
        if xsd is not None:
            errors = _xsd_errors(_xml_text(output, source), xsd)
    return XmlValidity(
        valid=root is not None and not errors,
        parsed=root is not None,
        source=source,
        parse_error=error,
        errors=errors,
        required_total=len(required),
        missing_required=missing,
        field_count=_xml_fields(root) if root is not None else 0,
        schema_given=xsd is not None,
        root_tag=None if root is None else root.tag,
        data=root,
    )


def _xml_text(output: str, source: Source | None) -> str:
    if source == "fence":
        for m in _FENCE.finditer(output):
            if not m["lang"] or m["lang"].lower() in _XML_LANGS:
                return m["body"].strip()
    return output.strip()


def structured_validity(output: str, schema: Any = None, *, output_format: str = "json",
                        required: Sequence[str] = ()) -> JsonValidity | XmlValidity:
    """The specification's "JSON/XML validity" entry point: :func:`json_validity` (``schema`` a JSON Schema) or
    :func:`xml_validity`, by ``output_format``.

    For XML, ``schema`` is an XSD (its text or a path, which needs ``lxml``) or, as the specification's input has it,
    a dict: its ``required`` names become required element paths (with ``required``), which is what a pytest run does
    with a document's schema for XML output. The dict's other keywords (``type``, ``properties``) are JSON types that
    XML text does not carry; they are not checked, and ``schema_given`` stays False (no XSD validated the output).

    Args:
        output: the model's output.
        schema: a JSON Schema (JSON) or an XSD path (XML).
        output_format: ``"json"`` or ``"xml"``.
        required: XML element paths that must be present.

    Returns:
        A :class:`JsonValidity` or :class:`XmlValidity`.

    >>> structured_validity("<a><b>1</b></a>", output_format="xml", required=["b"]).to_dict()["completeness_score"]
    1.0
    >>> r = structured_validity("<invoice><total>9</total></invoice>", {"required": ["total", "date"]},
    ...                         output_format="xml")
    >>> r.is_valid, r.completeness_score, r.missing_required
    (True, 0.5, ('date',))
    """
    if output_format == "json":
        if required:
            raise ValueError("required is for output_format='xml'; for JSON put the fields in the schema's 'required'")
        return json_validity(output, schema)
    if output_format == "xml":
        if isinstance(schema, Mapping):
            named = schema.get("required", [])
            if isinstance(named, str) or not isinstance(named, (list, tuple)):
                raise TypeError("the schema's 'required' must be a list of element names, e.g. ['invoice_number', "
                                f"'total'], not {type(named).__name__}")
            if isinstance(required, str):
                raise TypeError("required must be a list of element paths (str), e.g. ['invoice_number', 'total']")
            return xml_validity(output, None, required=list(dict.fromkeys([*named, *required])))
        return xml_validity(output, schema, required=required)
    import difflib

    close = difflib.get_close_matches(str(output_format).lower(), ["json", "xml"], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"unknown output_format {output_format!r}{hint}; valid: json, xml")
