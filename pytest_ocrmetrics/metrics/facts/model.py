"""Facts: small pass/fail checks on one page's output, with olmOCR-bench's types, fields and verdicts.

A fact is one line of an olmOCR-bench JSONL file (``olmocr/bench/tests.py``), or one entry of a document's ``facts``
list in any other dataset format. :func:`parse_fact` checks it as the benchmark's dataclasses do (plus a clear error
for an unknown field, with a did-you-mean); :func:`check_fact` gives the benchmark's verdict and explanation for one
output; :func:`check_repeats` combines several outputs of the same page by strict majority, keeping each verdict.

One deliberate difference (allenai/olmocr#461): an output that is empty or whitespace-only passes no ``present``
fact and fails no ``absent`` fact merely for being empty (the benchmark passes ``present`` on a single space).

>>> fact = parse_fact({"pdf": "a.pdf", "page": 1, "id": "a_00", "type": "present", "text": "Total 12.50"})
>>> check_fact(fact, "Subtotal 10.00\\nTotal 12.50").passed
True
>>> check_fact(fact, " ").explanation
'the output is whitespace only (olmOCR-bench would pass it: allenai/olmocr#461)'
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from pytest_ocrmetrics.metrics.facts.text import (
    FuzzySearchMissing,
    alnum_count,
    near_match_starts,
    ngram_repeats,
    normalize_text,
    normalized_output,
)

__all__ = ["FACT_TYPES", "FACT_FIELDS", "Fact", "FactError", "FactVerdict", "FactResult", "parse_fact", "check_fact",
           "check_repeats", "baseline_fact", "not_checked", "EXCERPT_CHARS", "NOT_CHECKED", "INSTALL_FACTS"]

EXCERPT_CHARS = 300
"""The most characters of output a verdict's ``excerpt`` holds (plus an ellipsis at a cut end)."""

_BASE_FIELDS = ("pdf", "page", "id", "type", "max_diffs", "checked", "url")
FACT_FIELDS: dict[str, tuple[str, ...]] = {
    "present": ("text", "case_sensitive", "first_n", "last_n"),
    "absent": ("text", "case_sensitive", "first_n", "last_n"),
    "order": ("before", "after"),
    "table": ("cell", "up", "down", "left", "right", "top_heading", "left_heading", "ignore_markdown_tables"),
    "math": ("math", "ignore_dollar_delimited"),
    "baseline": ("max_length", "max_length_skips_image_alt_tags", "max_repeats", "check_disallowed_characters"),
    "format": ("text", "format", "case_sensitive"),
    "footnote": ("marker", "appears_before_marker", "appears_after_marker"),
}
"""Each fact type's own fields (besides ``pdf``, ``page``, ``id``, ``type``, ``max_diffs``, ``checked``, ``url``)."""
FACT_TYPES = tuple(FACT_FIELDS)

_REQUIRED = {"present": ("text",), "absent": ("text",), "order": ("before", "after"), "table": ("cell",),
             "math": ("math",), "baseline": (), "format": ("text", "format"), "footnote": ("marker",)}
_DEFAULTS: dict[str, dict[str, Any]] = {
    "present": {"case_sensitive": True, "first_n": None, "last_n": None},
    "absent": {"case_sensitive": True, "first_n": None, "last_n": None},
    "order": {},
    "table": {"up": "", "down": "", "left": "", "right": "", "top_heading": "", "left_heading": "",
              "ignore_markdown_tables": False},
    "math": {"ignore_dollar_delimited": False},
    "baseline": {"max_length": None, "max_length_skips_image_alt_tags": False, "max_repeats": 30,
                 "check_disallowed_characters": True},
    "format": {"case_sensitive": True},
    "footnote": {"appears_before_marker": None, "appears_after_marker": None},
}
_TEXT_FIELDS = {"text", "before", "after", "cell", "up", "down", "left", "right", "top_heading", "left_heading",
                "math", "format", "marker", "appears_before_marker", "appears_after_marker"}
_BOOL_FIELDS = {"case_sensitive", "ignore_markdown_tables", "ignore_dollar_delimited",
                "max_length_skips_image_alt_tags", "check_disallowed_characters"}
_INT_FIELDS = {"first_n", "last_n", "max_length", "max_repeats"}


class FactError(ValueError):
    """A fact that cannot be checked (unknown type or field, a field of the wrong kind); the message names its
    source (``file:line``) and the fix."""


@dataclass(frozen=True)
class Fact:
    """One checked fact. ``params`` holds the type's fields with defaults filled in and texts normalized as the
    benchmark normalizes them; ``source`` is ``"file:line"``; ``group`` the JSONL file it came from (the
    benchmark's per-file score), ``"baseline"`` for an added baseline fact."""

    id: str
    type: str
    params: Mapping[str, Any]
    max_diffs: int = 0
    pdf: str | None = None
    page: int | None = None
    source: str = ""
    group: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "pdf": self.pdf, "page": self.page, "max_diffs": self.max_diffs,
                **dict(self.params), "source": self.source, "group": self.group}


@dataclass(frozen=True)
class FactVerdict:
    """One output's verdict on a fact: ``explanation`` is empty when it passed (or says what differs from the
    benchmark), ``notes`` name steps that were skipped (the math layout step). ``excerpt`` is the part of the output
    where the check looked, at most :data:`EXCERPT_CHARS` characters with some context: the best-matching window
    (``present``, ``absent``, normalized as searched), the span of the ``before`` and ``after`` matches (``order``),
    the matched cell's row (``table``), the closest equation (``math``), the formatted text or the text around the
    footnote marker; for ``baseline`` the part that failed it; empty when nothing was found.

    ``passed`` is ``None`` when the check could not run (a missing package, no browser for the math layout step, an
    unexpected error in the checker): no verdict, ``explanation`` is ``"not checked: <reason>"`` and ``reason`` says
    why (and what to install)."""

    passed: bool | None
    explanation: str = ""
    notes: tuple[str, ...] = ()
    excerpt: str = ""
    reason: str = ""


NOT_CHECKED = "not checked: "
"""How the explanation of a fact that could not be checked begins (its ``reason`` follows)."""
INSTALL_FACTS = "install pytest-ocrmetrics[facts]"


def not_checked(reason: str, *, notes: tuple[str, ...] = (), excerpt: str = "") -> FactVerdict:
    """The verdict of a check that could not run: ``passed`` ``None``, the ``reason`` in the explanation.

    >>> not_checked("no browser").explanation
    'not checked: no browser'
    """
    return FactVerdict(None, NOT_CHECKED + reason, notes=notes, excerpt=excerpt, reason=reason)


@dataclass(frozen=True)
class FactResult:
    """A fact's verdict over one or more repeats: passed when a strict majority passed, failed when a strict
    majority cannot pass; ``flaky`` when checked repeats disagree. ``passed`` is ``None`` (not checked) when repeats
    that could not be checked leave the majority open: whatever they would give decides it (one repeat: whenever it
    could not be checked)."""

    fact: Fact
    repeats: tuple[FactVerdict, ...]

    @property
    def passes(self) -> int:
        return sum(v.passed is True for v in self.repeats)

    @property
    def unchecked(self) -> int:
        """Repeats that could not be checked."""
        return sum(v.passed is None for v in self.repeats)

    @property
    def passed(self) -> bool | None:
        if not self.repeats:
            return False
        if self.passes * 2 > len(self.repeats):
            return True
        if (self.passes + self.unchecked) * 2 <= len(self.repeats):  # even if every unchecked one passed
            return False
        return None

    @property
    def flaky(self) -> bool:
        return 0 < self.passes < len(self.repeats) - self.unchecked

    @property
    def reason(self) -> str:
        """Why the fact could not be checked (the first such repeat's reason); ``""`` when it has a verdict."""
        return next((v.reason for v in self.repeats if v.passed is None), "") if self.passed is None else ""

    def _telling(self) -> FactVerdict | None:
        """The repeat the explanation speaks of: the first unchecked one when there is no verdict, else the first
        failing one."""
        wanted = None if self.passed is None else False
        return next((v for v in self.repeats if v.passed is wanted), None)

    @property
    def excerpt(self) -> str:
        """The telling repeat's excerpt (the one the explanation speaks of), else the first repeat's."""
        telling = self._telling()
        if telling is not None:
            return telling.excerpt
        return self.repeats[0].excerpt if self.repeats else ""

    @property
    def explanation(self) -> str:
        """The first failing repeat's explanation (the benchmark's choice; the first unchecked one's when there is
        no verdict), else the first note or ``""``."""
        if not self.repeats:
            return "no output to check"
        telling = self._telling()
        if telling is not None and telling.passed is not True:
            prefix = ""
            if len(self.repeats) > 1:
                prefix = f"{self.passes}/{len(self.repeats)} repeats passed"
                prefix += f", {self.unchecked} not checked; " if self.unchecked else "; "
            return prefix + telling.explanation
        return next((v.explanation for v in self.repeats if v.explanation), "")

    def to_dict(self) -> dict[str, Any]:
        notes = sorted({note for v in self.repeats for note in v.notes})
        passed = self.passed
        return {"id": self.fact.id, "type": self.fact.type, "passed": passed, "flaky": self.flaky,
                "explanation": self.explanation, "excerpt": self.excerpt, "group": self.fact.group,
                "source": self.fact.source,
                "repeats": [{"passed": v.passed, "explanation": v.explanation, "excerpt": v.excerpt}
                            for v in self.repeats],
                **({"notes": notes} if notes else {}),
                **({"unchecked": True, "reason": self.reason} if passed is None else {})}


# -- parsing ---------------------------------------------------------------------------------------------------------
def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def parse_fact(data: Any, *, source: str = "", group: str = "", require_location: bool = True) -> Fact:
    """Check one fact object and build its :class:`Fact`; :class:`FactError` (naming ``source``) when it is wrong.

    ``require_location``: olmOCR-bench facts name their page (``pdf`` and ``page``); facts listed under a document
    of another dataset format need not.
    """
    where = f"{source}: " if source else ""
    if not isinstance(data, Mapping):
        raise FactError(f"{where}a fact must be a JSON object, got {_kind(data)}.")
    fact_id = data.get("id")
    label = f"{where}fact {fact_id!r}" if isinstance(fact_id, str) and fact_id else f"{where}fact"
    fact_type = data.get("type")
    if fact_type not in FACT_FIELDS:
        close = difflib.get_close_matches(str(fact_type), FACT_TYPES, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise FactError(f"{label}: unknown fact type {fact_type!r}{hint}; valid types: {', '.join(FACT_TYPES)}.")
    if not isinstance(fact_id, str) or not fact_id:
        raise FactError(f"{label}: 'id' must be a non-empty string.")
    _check_field_names(data, fact_type, label)
    pdf, page = _location(data, require_location, label)
    max_diffs = data.get("max_diffs", 0)
    if isinstance(max_diffs, bool) or not isinstance(max_diffs, int) or max_diffs < 0:
        raise FactError(f"{label}: 'max_diffs' must be a whole number >= 0, got {json.dumps(max_diffs)}.")
    params = _params(data, fact_type, label)
    _check_type_rules(fact_type, params, max_diffs, label)
    return Fact(id=fact_id, type=fact_type, params=params, max_diffs=max_diffs, pdf=pdf, page=page, source=source,
                group=group)


def _check_field_names(data: Mapping[str, Any], fact_type: str, label: str) -> None:
    """Every field is one a fact of ``fact_type`` has (with a did-you-mean), and its required ones are there."""
    known = _BASE_FIELDS + FACT_FIELDS[fact_type]
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else f"valid fields: {', '.join(known)}."
            raise FactError(f"{label}: unknown field {key!r} for a {fact_type} fact; {hint}")
    for key in _REQUIRED[fact_type]:
        if data.get(key) is None:
            raise FactError(f"{label}: a {fact_type} fact needs {key!r}.")


def _location(data: Mapping[str, Any], require_location: bool, label: str) -> tuple[Any, Any]:
    """The fact's ``pdf`` and ``page``, each checked when required or given."""
    pdf, page = data.get("pdf"), data.get("page")
    if (require_location or pdf is not None) and (not isinstance(pdf, str) or not pdf):
        raise FactError(f"{label}: 'pdf' must be the PDF's path under pdfs/, got {json.dumps(pdf)}.")
    if (require_location or page is not None) and (isinstance(page, bool) or not isinstance(page, int) or page < 1):
        raise FactError(f"{label}: 'page' must be a page number from 1, got {json.dumps(page)}.")
    return pdf, page


def _params(data: Mapping[str, Any], fact_type: str, label: str) -> dict[str, Any]:
    """The fact type's parameters: its defaults, overridden by the fields given, each of the right kind."""
    params = dict(_DEFAULTS[fact_type])
    for key in FACT_FIELDS[fact_type]:
        if key not in data:
            continue
        value = data[key]
        if key in _TEXT_FIELDS and not (value is None and key in _DEFAULTS[fact_type]) and not isinstance(value, str):
            raise FactError(f"{label}: {key!r} must be a string, got {_kind(value)}.")
        if key in _BOOL_FIELDS and not isinstance(value, bool):
            raise FactError(f"{label}: {key!r} must be true or false, got {json.dumps(value)}.")
        if key in _INT_FIELDS and value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                                         or value < 0):
            raise FactError(f"{label}: {key!r} must be a whole number >= 0 or null, got {json.dumps(value)}.")
        params[key] = value
    return params


def _check_type_rules(fact_type: str, params: dict[str, Any], max_diffs: int, label: str) -> None:
    """The benchmark's ``__post_init__`` checks and normalizations."""
    if fact_type in ("present", "absent", "format"):
        params["text"] = normalize_text(params["text"])
        if not params["text"].strip():
            raise FactError(f"{label}: 'text' is empty.")
    if fact_type == "format" and params["format"] not in ("heading", "bold", "italic"):
        raise FactError(f"{label}: 'format' must be 'heading', 'bold' or 'italic', got {params['format']!r}.")
    if fact_type == "order":
        params["before"], params["after"] = normalize_text(params["before"]), normalize_text(params["after"])
        for key in ("before", "after"):
            if not params[key].strip():
                raise FactError(f"{label}: {key!r} is empty.")
        if max_diffs > len(params["before"]) // 2 or max_diffs > len(params["after"]) // 2:
            raise FactError(f"{label}: 'max_diffs' {max_diffs} is more than half of 'before' or 'after'; lower it.")
    if fact_type == "table":
        for key in ("cell", "up", "down", "left", "right", "top_heading", "left_heading"):
            params[key] = normalize_text(params[key])
    if fact_type == "math":
        if not params["math"].strip():
            raise FactError(f"{label}: 'math' is empty.")
        from pytest_ocrmetrics.metrics.facts.equations import MathRenderError, katex_available, render_mathml

        if katex_available():
            try:
                render_mathml(params["math"])
            except MathRenderError as exc:
                raise FactError(f"{label}: the reference equation cannot be rendered ({exc}); fix 'math'.") from None
    if fact_type == "footnote":
        if " " in params["marker"]:
            raise FactError(f"{label}: 'marker' cannot contain spaces.")
        if not params["marker"]:
            raise FactError(f"{label}: 'marker' is empty.")
        for key in ("appears_before_marker", "appears_after_marker"):
            if params[key]:
                params[key] = normalize_text(params[key])
                if not params[key].strip():
                    raise FactError(f"{label}: {key!r} is empty.")


def baseline_fact(pdf: str, *, page: int = 1) -> Fact:
    """The ``baseline`` fact the benchmark adds for a PDF that has none: id ``<pdf>_baseline``, on page 1."""
    return Fact(id=f"{pdf}_baseline", type="baseline", params=dict(_DEFAULTS["baseline"]), pdf=pdf, page=page,
                source="added for every PDF without a baseline fact", group="baseline")


# -- checking --------------------------------------------------------------------------------------------------------
def excerpt_of(text: str, start: int, end: int, *, limit: int = EXCERPT_CHARS) -> str:
    """``text[start:end]`` with context either side, at most ``limit`` characters (a longer match keeps its start);
    an ellipsis marks each end that was cut.

    >>> excerpt_of("0123456789" * 10, 50, 52, limit=12)
    '…567890123456…'
    >>> excerpt_of("short text", 0, 5)
    'short text'
    """
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    if end < start:
        start, end = end, start
    context = max(0, (limit - (end - start)) // 2)
    low = max(0, start - context)
    high = min(len(text), end + context)
    spare = limit - (high - low)  # context one side could not use (the text's edge): give it to the other
    if spare > 0:
        low, high = max(0, low - spare), min(len(text), high + spare)
    high = min(high, low + limit)
    return ("…" if low > 0 else "") + text[low:high] + ("…" if high < len(text) else "")


def _threshold(max_diffs: int, text: str) -> float:
    return 1.0 - (max_diffs / (len(text) if len(text) > 0 else 1))


_SHORT_NEEDLE = 64
"""rapidfuzz searches a text of up to this many characters in one bit-parallel pass over the output: always fast."""
FULL_SEARCH_WORK = 2e10
"""Up to this ``longer × shorter²`` (characters) a present/absent fact computes the best ratio in full (well under a
second); above it the search stops at the threshold (the verdict is the same, the failing ratio is not given)."""
BOUNDED_SEARCH_WORK = 3e11
"""Above this ``longer × shorter² × (allowed-difference share + 1 / shorter)`` a present/absent fact whose text does
not occur verbatim is not checked (a search that long would take minutes: a 5,000-character text with a 10 %
allowance against 1 MB); seconds at most below it (under 2 s for 5,000 characters with max_diffs 500 against 100 KB)."""


def _presence(fact: Fact, text: str) -> FactVerdict:
    from rapidfuzz import fuzz

    p = fact.params
    if not text.strip():  # allenai/olmocr#461: being empty proves neither presence nor absence
        if not text:
            return FactVerdict(fact.type == "absent", "" if fact.type == "absent" else "the output is empty")
        if fact.type == "present":
            return FactVerdict(False, "the output is whitespace only (olmOCR-bench would pass it: allenai/olmocr#461)")
        return FactVerdict(True, "the output is whitespace only (olmOCR-bench would fail it: allenai/olmocr#461)")
    query = p["text"]
    first_n, last_n = p["first_n"], p["last_n"]

    def searched(content: str) -> str:
        if first_n and last_n:
            return content[:first_n] + content[-last_n:]
        if first_n:
            return content[:first_n]
        if last_n:
            return content[-last_n:]
        return content

    normalized = normalized_output(text)
    shown = content = searched(normalized)  # shown: the excerpt's text, as searched but in its own case
    if not p["case_sensitive"]:  # lowered before the cut, as the benchmark does (lower() may lengthen a text)
        query, content = query.lower(), searched(normalized.lower())
    threshold = _threshold(fact.max_diffs, query)
    shorter, longer = sorted((len(query), len(content)))
    work = longer * shorter * shorter  # rapidfuzz's partial_ratio costs about this for a needle over 64 characters
    bounded = shorter > _SHORT_NEEDLE and work > FULL_SEARCH_WORK
    if bounded and query not in content \
            and work * (1.0 - threshold + 1.0 / shorter) > BOUNDED_SEARCH_WORK:
        article = "an" if fact.type == "absent" else "a"
        return not_checked(f"{article} {fact.type} fact of {len(query):,} characters against a {len(content):,}-character "
                           f"output with max_diffs {fact.max_diffs} is beyond the fuzzy search's bound "
                           f"(length × text length² × allowed-difference share over {BOUNDED_SEARCH_WORK:.0e}); "
                           f"shorten the fact's text or lower its max_diffs", notes=("fuzzy search bound",))
    # Above FULL_SEARCH_WORK only whether the best ratio reaches the threshold is searched (a score cutoff lets
    # rapidfuzz drop most windows); the verdict is the same, a failing present's best ratio is then not computed.
    cutoff = max(0.0, threshold * 100.0 - 1e-6) if bounded else 0.0
    alignment = fuzz.partial_ratio_alignment(query, content, score_cutoff=cutoff)
    ratio = (alignment.score if alignment is not None else 0.0) / 100.0
    found = excerpt = ""
    if alignment is not None and alignment.score > 0:
        start, end = (alignment.dest_start, alignment.dest_end) if len(query) <= len(content) else (0, len(content))
        found = content[start:end]
        excerpt = excerpt_of(shown if len(shown) == len(content) else content, start, end)
    best = f"; best match {found[:60]!r}" if found else ""
    if fact.type == "present":
        if ratio >= threshold:
            return FactVerdict(True, excerpt=excerpt)
        if bounded and alignment is None:
            return FactVerdict(False, f"Expected '{query[:40]}...' with threshold {threshold} but no match reached "
                                      f"it (the best ratio is not computed for a {len(query):,}-character text "
                                      f"against a {len(content):,}-character output)")
        return FactVerdict(False, f"Expected '{query[:40]}...' with threshold {threshold} but best match ratio was "
                                  f"{ratio:.3f}{best}", excerpt=excerpt)
    if ratio < threshold:
        return FactVerdict(True, excerpt=excerpt)
    return FactVerdict(False, f"Expected absence of '{query[:40]}...' with threshold {threshold} but best match ratio "
                              f"was {ratio:.3f}{best}", excerpt=excerpt)


def _order(fact: Fact, text: str) -> FactVerdict:
    content = normalized_output(text)
    before, after = fact.params["before"], fact.params["after"]
    try:
        before_starts = near_match_starts(before, content, fact.max_diffs)
        after_starts = near_match_starts(after, content, fact.max_diffs)
    except FuzzySearchMissing as exc:
        return not_checked(str(exc), notes=("fuzzysearch missing",))
    if not before_starts:
        excerpt = excerpt_of(content, max(after_starts), max(after_starts) + len(after)) if after_starts else ""
        return FactVerdict(False, f"'before' text '{before[:40]}...' not found with max_l_dist {fact.max_diffs}",
                           excerpt=excerpt)
    if not after_starts:
        return FactVerdict(False, f"'after' text '{after[:40]}...' not found with max_l_dist {fact.max_diffs}",
                           excerpt=excerpt_of(content, min(before_starts), min(before_starts) + len(before)))
    first_before, last_after = min(before_starts), max(after_starts)
    excerpt = _span_excerpt(content, (first_before, first_before + len(before)), (last_after, last_after + len(after)))
    if first_before < last_after:
        return FactVerdict(True, excerpt=excerpt)
    return FactVerdict(False, f"Could not find a location where '{before[:40]}...' appears before '{after[:40]}...'.",
                       excerpt=excerpt)


def _span_excerpt(text: str, first: tuple[int, int], second: tuple[int, int]) -> str:
    """The region from one match to another, or, when that is longer than :data:`EXCERPT_CHARS`, each match with
    its context (in text order) joined by an ellipsis."""
    (a_start, a_end), (b_start, b_end) = sorted((first, second))
    if max(a_end, b_end) - a_start <= EXCERPT_CHARS:
        return excerpt_of(text, a_start, max(a_end, b_end))
    half = EXCERPT_CHARS // 2
    left, right = excerpt_of(text, a_start, a_end, limit=half), excerpt_of(text, b_start, b_end, limit=half)
    return left.rstrip("…") + " … " + right.lstrip("…")



def _relations(table: Any) -> list[tuple[str, Callable[[tuple[int, int]], Iterable[tuple[int, int]]]]]:
    """The table's relations of a cell, by name: up, down, left, right and the two headings."""
    return [
        ("up", lambda rc: table.up_relations[rc]), ("down", lambda rc: table.down_relations[rc]),
        ("left", lambda rc: table.left_relations[rc]), ("right", lambda rc: table.right_relations[rc]),
        ("left_heading", lambda rc: table.left_heading_relations(*rc)),
        ("top_heading", lambda rc: table.top_heading_relations(*rc)),
    ]


def _table(fact: Fact, text: str) -> FactVerdict:
    from rapidfuzz import fuzz

    from pytest_ocrmetrics.metrics.facts.tables import parse_html_tables, parse_markdown_tables

    p = fact.params
    threshold = max(0.5, _threshold(fact.max_diffs, p["cell"]))
    tables = ([] if p["ignore_markdown_tables"] else parse_markdown_tables(text)) + parse_html_tables(text)
    if not tables:
        return FactVerdict(False, "No tables found in the content")
    reasons: list[str] = []
    closest, closest_region, failed_region = -1.0, "", ""  # excerpts: the closest cell's, the first matched cell's
    for table in tables:
        cells = {position: normalize_text(content) for position, content in table.cell_text.items()}
        ratios = {pos: fuzz.ratio(p["cell"], content) / 100.0 for pos, content in cells.items()}
        matches = [pos for pos, ratio in ratios.items() if ratio >= threshold]
        if ratios and not matches and not reasons:
            top = max(ratios, key=lambda pos: ratios[pos])
            if ratios[top] > closest:
                closest, closest_region = ratios[top], _cell_region(cells, top)
        relations = _relations(table)
        for position in matches:
            current: list[str] = []
            for key, related in relations:
                expected = p[key]
                if not expected:
                    continue
                best, best_text, satisfied = 0.0, None, False
                needed = max(0.5, _threshold(fact.max_diffs, expected))
                for neighbour in related(position):
                    similarity = fuzz.ratio(expected, cells[neighbour]) / 100.0
                    if similarity > best:
                        best, best_text = similarity, cells[neighbour]
                    if similarity >= needed:
                        satisfied = True
                if not satisfied:
                    current.append(f"Cell compared to '{best_text}' doesn't match expected '{expected}' "
                                   f"(best similarity: {best:.2f})")
            if not current:
                return FactVerdict(True, excerpt=_cell_region(cells, position))
            if not reasons:
                failed_region = _cell_region(cells, position)
            reasons.extend(current)
    if not reasons:
        return FactVerdict(False, f"No cell matching '{p['cell']}' found in any table with threshold {threshold}",
                           excerpt=closest_region)
    return FactVerdict(False, f"Found cells matching '{p['cell']}' but relationships were not satisfied: "
                              f"{'; '.join(reasons)}", excerpt=failed_region)


def _cell_region(cells: Mapping[tuple[int, int], str], position: tuple[int, int]) -> str:
    """A cell with the rows above and below it, as Markdown table lines, cut to :data:`EXCERPT_CHARS` around it."""
    row = position[0]
    lines, start, end, offset = [], 0, 0, 0
    for r in (row - 1, row, row + 1):
        columns = sorted(c for (rr, c) in cells if rr == r)
        if not columns:
            continue
        line = "|"
        for c in columns:
            if (r, c) == position:
                start, end = offset + len(line) + 1, offset + len(line) + 1 + len(cells[r, c])
            line += f" {cells[r, c]} |"
        lines.append(line)
        offset += len(line) + 1
    return excerpt_of("\n".join(lines), start, end)


_DISALLOWED = re.compile(r"[\u4e00-\u9FFF\u3040-\u309F\u30A0-\u30FF\U0001F600-\U0001F64F\U0001F300-\U0001F5FF"
                         r"\U0001F680-\U0001F6FF\U0001F1E0-\U0001F1FF]", flags=re.UNICODE)
_IMAGE_TAG = re.compile(r"!\[.*?\]\(.*?\)")


def _baseline(fact: Fact, text: str) -> FactVerdict:
    p = fact.params
    length = alnum_count(text)  # the benchmark's len("".join(c for c in text if c.isalnum()).strip())
    if p["max_length"] is not None:
        if p["max_length_skips_image_alt_tags"]:
            length = alnum_count(_IMAGE_TAG.sub("", text))
        if length > p["max_length"]:
            return FactVerdict(False, f"{length} characters were output for a page we expected to be blank",
                               excerpt=_head(text))
        return FactVerdict(True)
    if length == 0:
        return FactVerdict(False, "The text contains no alpha numeric characters", excerpt=_head(text))
    for index, count in enumerate(ngram_repeats(text, 5)):
        if count > p["max_repeats"]:
            return FactVerdict(False, f"Text ends with {count} repeating {index + 1}-grams, invalid",
                               excerpt=excerpt_of(text, len(text), len(text)))
    disallowed = _DISALLOWED.findall(text)
    if p["check_disallowed_characters"] and disallowed:
        first = _DISALLOWED.search(text)
        return FactVerdict(False, f"Text contains disallowed characters {disallowed}",
                           excerpt=excerpt_of(text, first.start(), first.end()) if first else "")
    return FactVerdict(True)


def _head(text: str) -> str:
    """The start of ``text``, :data:`EXCERPT_CHARS` characters."""
    return excerpt_of(text, 0, 0)


def _math(fact: Fact, text: str) -> FactVerdict:
    from rapidfuzz import fuzz

    from pytest_ocrmetrics.metrics.facts.equations import (
        KatexMissing,
        MathRenderError,
        mathml_contains,
        output_equations,
        render_mathml,
    )

    reference = fact.params["math"]
    equations = output_equations(text, ignore_dollar_delimited=fact.params["ignore_dollar_delimited"])
    if reference in equations:
        return FactVerdict(True, excerpt=_head(reference))
    message = f"No match found for {reference} anywhere in content"
    if not equations:
        return FactVerdict(False, message)
    equations.sort(key=lambda e: -fuzz.ratio(e, reference))
    closest_excerpt = _head(equations[0])  # the closest candidate, shown when none matches
    try:
        reference_mathml = render_mathml(reference)
    except KatexMissing as exc:  # only KaTeX can say whether a different spelling is the same equation
        return not_checked(str(exc), notes=("katex-mathml skipped",), excerpt=closest_excerpt)
    except MathRenderError as exc:  # checked when the fact was read: KaTeX changed its mind
        return not_checked(f"the reference equation cannot be rendered ({exc})", excerpt=closest_excerpt)
    for equation in equations:
        if mathml_contains(reference_mathml, equation):
            return FactVerdict(True, excerpt=_head(equation))
    from pytest_ocrmetrics.metrics.facts.math_layout import LayoutUnavailable, render_spans, spans_match

    try:
        reference_spans = render_spans(reference)
        for equation in equations:
            try:
                if spans_match(reference_spans, render_spans(equation)):
                    return FactVerdict(True, excerpt=_head(equation))
            except ValueError:  # KaTeX rejects the candidate: no match
                continue
    except (LayoutUnavailable, ValueError) as exc:  # the layout step could accept a candidate: no verdict
        return not_checked(f"the symbol-layout comparison needs KaTeX in a browser: {exc}",
                           notes=("layout step skipped",), excerpt=closest_excerpt)
    return FactVerdict(False, message, excerpt=closest_excerpt)


_FORMAT_PATTERNS = {
    "heading": ((r"^#{1,6}\s+(.+?)$", re.MULTILINE), (r"<h[1-6][^>]*>(.*?)</h[1-6]>", re.IGNORECASE | re.DOTALL)),
    "bold": ((r"\*\*(.*?)\*\*", re.DOTALL), (r"__(.*?)__", re.DOTALL),
             (r"<b[^>]*>(.*?)</b>", re.IGNORECASE | re.DOTALL), (r"<strong[^>]*>(.*?)</strong>", re.IGNORECASE | re.DOTALL)),
    "italic": ((r"(?<!\*)\*(?!\*)(.*?)(?<!\*)\*(?!\*)", re.DOTALL), (r"(?<!_)_(?!_)(.*?)(?<!_)_(?!_)", re.DOTALL),
               (r"<i[^>]*>(.*?)</i>", re.IGNORECASE | re.DOTALL), (r"<em[^>]*>(.*?)</em>", re.IGNORECASE | re.DOTALL)),
}


def _format(fact: Fact, text: str) -> FactVerdict:
    from rapidfuzz import fuzz

    kind = fact.params["format"]
    found = [normalize_text(m) for pattern, flags in _FORMAT_PATTERNS[kind] for m in re.findall(pattern, text, flags)]
    search = fact.params["text"]
    if not fact.params["case_sensitive"]:
        search, found = search.lower(), [t.lower() for t in found]
    threshold = _threshold(fact.max_diffs, search)
    closest, closest_text = -1.0, ""
    for candidate in found:
        ratio = fuzz.partial_ratio(search, candidate) / 100.0
        if ratio >= threshold:
            return FactVerdict(True, excerpt=_head(candidate))
        if ratio > closest:
            closest, closest_text = ratio, candidate
    if found:
        sample = ", ".join(f"'{t[:20]}...'" if len(t) > 20 else f"'{t}'" for t in found[:3])
        seen = f"Found {kind} text: {sample}"
    else:
        seen = f"No {kind} formatted text found"
    return FactVerdict(False, f"Text '{fact.params['text'][:40]}...' not found with {kind} formatting. {seen}",
                       excerpt=_head(closest_text))


_SUPERSCRIPTS = dict(zip("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _footnote(fact: Fact, text: str) -> FactVerdict:
    from rapidfuzz import fuzz

    marker = fact.params["marker"]
    positions = [(m.start(), m.end()) for m in re.finditer(rf"\[\^{re.escape(marker)}\](?!:)", text)]
    positions += [(m.start(), m.end()) for m in re.finditer(rf"<sup[^>]*>{re.escape(marker)}</sup>", text,
                                                             re.IGNORECASE)]
    if all(c in _SUPERSCRIPTS for c in marker):
        superscript = "".join(_SUPERSCRIPTS[c] for c in marker)
        positions += [(m.start(), m.end()) for m in re.finditer(re.escape(superscript), text)]
    if not positions:
        return FactVerdict(False, f"Footnote marker '{marker}' not found as [^{marker}], <sup>{marker}</sup>, or "
                                  "superscript")

    def clean(value: str) -> str:
        return "".join(c for c in normalize_text(value) if c.isalnum()).lower()

    def near(target: str | None, before: bool) -> bool:
        if not target:
            return True
        wanted = clean(target)
        threshold = _threshold(fact.max_diffs, target)
        for start, end in positions:
            window = clean(text[max(0, start - 200):start] if before else text[end:min(len(text), end + 200)])
            if window:
                length = min(len(window), len(wanted) * 2)
                piece = (window[-length:] if before else window[:length]) if length > 0 else window
                if fuzz.partial_ratio(wanted, piece) / 100.0 >= threshold:
                    return True
        return False

    failures = []
    before_text, after_text = fact.params["appears_before_marker"], fact.params["appears_after_marker"]
    if before_text and not near(before_text, True):
        failures.append(f"Text '{before_text[:40]}...' not found before any occurrence of marker '{marker}'")
    if after_text and not near(after_text, False):
        failures.append(f"Text '{after_text[:40]}...' not found after any occurrence of marker '{marker}'")
    first_start, first_end = min(positions)
    return FactVerdict(not failures, "; ".join(failures), excerpt=excerpt_of(text, first_start, first_end))


_CHECKS: dict[str, Callable[[Fact, str], FactVerdict]] = {
    "present": _presence, "absent": _presence, "order": _order, "table": _table, "math": _math,
    "baseline": _baseline, "format": _format, "footnote": _footnote,
}


def check_fact(fact: Fact, text: str) -> FactVerdict:
    """The verdict of ``fact`` on one output ``text`` (Markdown/HTML as the engine returned it); ``passed`` is
    ``None`` (:func:`not_checked`) when the check could not run, whatever stopped it: never a failure it did not
    find."""
    try:
        return _CHECKS[fact.type](fact, text)
    except ImportError as exc:  # a package the check needs (the facts extra)
        return not_checked(f"{exc}; {INSTALL_FACTS}")
    except Exception as exc:  # noqa: BLE001 - a fault in the check is no verdict on the output
        return not_checked(f"the {fact.type} check raised {type(exc).__name__}: {exc}")


def check_repeats(fact: Fact, texts: Sequence[str]) -> FactResult:
    """``fact`` checked on every repeat of the page's output; see :class:`FactResult` for the majority rule."""
    return FactResult(fact=fact, repeats=tuple(check_fact(fact, text) for text in texts))
