"""Key-field extraction metrics: field-level precision / recall / F1, and DocVQA ANLS.

``field_f1`` compares a reference record (``{"company": ..., "date": ..., "total": ...}``) with what a model
extracted. Nested objects compare by key path (``address.city``); lists of records are matched by an optimal
assignment (the pairing that maximises the number of correct fields), never by position. Four comparison modes:

- ``"lowercase"`` (default): the values are equal after ``str(v).strip().lower()``, as the specification's
  ``calculate_field_extraction_f1`` compares them.
- ``"exact"``: the values' string forms are identical.
- ``"normalized"``: both values go through :func:`normalize_field_value` (dates to ISO, amounts to a plain decimal,
  other text casefolded with punctuation and extra whitespace removed) and must then be identical.
- ``"fuzzy"``: ANLS-style, the normalized values have a similarity ``1 - lev / max(len)`` of at least ``threshold``.

>>> r = field_f1({"date": "19/10/2018", "total": "RM60.30"}, {"date": "2018-10-19", "total": "60.3"},
...              compare="normalized")
>>> r.f1, r.correct
(1.0, ('date', 'total'))
>>> field_f1({"total": "RM60.30"}, {"total": " rm60.30"}).f1  # the default: str(v).strip().lower()
1.0

``anls`` is the DocVQA metric for one question (max over accepted answers of the thresholded similarity) and
``anls_corpus`` its mean over questions.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import difflib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from rapidfuzz.distance import Levenshtein

from pytest_ocrmetrics.metrics.normalize import NormalizationProfile, get_profile, strip_punctuation
from pytest_ocrmetrics.metrics.rates import share
from pytest_ocrmetrics.metrics.units import check_text

__all__ = [
    "COMPARE_MODES",
    "CompareMode",
    "FieldComparison",
    "FieldF1Result",
    "field_f1",
    "normalize_field_value",
    "parse_date",
    "parse_amount",
    "AnlsResult",
    "AnlsCorpusResult",
    "anls",
    "anls_corpus",
    "max_weight_assignment",
    "locate_value",
]

CompareMode = Literal["lowercase", "exact", "normalized", "fuzzy"]
COMPARE_MODES: tuple[str, ...] = ("lowercase", "exact", "normalized", "fuzzy")  # the first is the default


# --------------------------------------------------------------------------------------------------------------------
# Value normalization: dates, amounts, text
# --------------------------------------------------------------------------------------------------------------------

_MONTHS: dict[str, int] = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
    "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
    "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}
_ORD = r"(?:st|nd|rd|th)?"
_DATE_YMD = re.compile(r"(\d{4})([-/.])(\d{1,2})\2(\d{1,2})")
_DATE_NUMERIC = re.compile(r"(\d{1,2})([-/. ])(\d{1,2})\2(\d{4}|\d{2})")
_DATE_COMPACT = re.compile(r"\d{8}")
_DATE_D_MON_Y = re.compile(rf"(\d{{1,2}}){_ORD}[-/. ]*([a-z]{{3,9}})\.?[-/., ]*(\d{{4}}|\d{{2}})")
_DATE_MON_D_Y = re.compile(rf"([a-z]{{3,9}})\.?[-/. ]*(\d{{1,2}}){_ORD},?[-/. ]*(\d{{4}}|\d{{2}})")
_DATE_Y_MON_D = re.compile(r"(\d{4})[-/. ]([a-z]{3,9})\.?[-/. ](\d{1,2})")


def _year(text: str) -> int:
    year = int(text)
    if len(text) == 2:  # the POSIX strptime %y rule: 69-99 -> 1969-1999, 00-68 -> 2000-2068
        year += 1900 if year >= 69 else 2000
    return year


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return _dt.date(year, month, day).isoformat()
    except ValueError:
        return None


def _day_month(first: int, second: int, year: int, day_first: bool) -> str | None:
    day, month = (first, second) if day_first else (second, first)
    # the preferred order first; the other only when the preferred one is not a valid date (12/13/2016)
    return _iso(year, month, day) or _iso(year, day, month)


def parse_date(text: str, *, day_first: bool = True) -> str | None:
    """Return ``text`` as an ISO date (``YYYY-MM-DD``) if it is a whole date in a common printed format, else ``None``.

    Numeric dates with ``/``, ``-``, ``.`` or space (``19/10/2018``, ``18-10-17``, ``19.10.2018``) are read
    day-first by default (``day_first=False`` reads month-first); when that order gives no valid date the other order
    is tried (``12/13/2016`` is 13 December). ``yyyy-mm-dd`` / ``yyyy/mm/dd`` are always year-month-day; eight digits
    are ``yyyymmdd`` when that is a valid date in 1900-2099, else ``ddmmyyyy`` (``mmddyyyy`` with ``day_first=False``).
    English month names and abbreviations work in ``02/JAN/2017``, ``10 OCT 2017``, ``5th January 2024``,
    ``Jan 5, 2024`` and ``2024-Jan-05``. Two-digit years follow POSIX ``%y``: 69-99 are 19xx, 00-68 are 20xx.

    Args:
        text: the printed date.
        day_first: read ambiguous dates day first.

    Returns:
        ``YYYY-MM-DD`` or ``None``.

    >>> parse_date("25032018"), parse_date("Jan 5, 2024"), parse_date("12/13/2016"), parse_date("60.30")
    ('2018-03-25', '2024-01-05', '2016-12-13', None)
    """
    text = text.strip().casefold()
    if not text or not text[0].isalnum():
        return None
    if m := _DATE_YMD.fullmatch(text):
        return _iso(int(m[1]), int(m[3]), int(m[4]))
    if m := _DATE_NUMERIC.fullmatch(text):
        return _day_month(int(m[1]), int(m[3]), _year(m[4]), day_first)
    if _DATE_COMPACT.fullmatch(text):
        year = int(text[:4])
        if 1900 <= year <= 2099 and (iso := _iso(year, int(text[4:6]), int(text[6:]))):
            return iso
        return _day_month(int(text[:2]), int(text[2:4]), int(text[4:]), day_first)
    if (m := _DATE_D_MON_Y.fullmatch(text)) and m[2] in _MONTHS:
        return _iso(_year(m[3]), _MONTHS[m[2]], int(m[1]))
    if (m := _DATE_MON_D_Y.fullmatch(text)) and m[1] in _MONTHS:
        return _iso(_year(m[3]), _MONTHS[m[1]], int(m[2]))
    if (m := _DATE_Y_MON_D.fullmatch(text)) and m[2] in _MONTHS:
        return _iso(int(m[1]), _MONTHS[m[2]], int(m[3]))
    return None


_CURRENCY = (
    r"(?:rm|myr|usd|us\$|eur|gbp|jpy|cny|rmb|sgd|s\$|aud|a\$|cad|c\$|chf|inr|rs\.?|idr|rp|thb|php|hkd|hk\$|krw|"
    r"[$€£¥₹₩₽฿₫₱₺₪])"
)
_AMOUNT_SHAPE = re.compile(
    rf"(?P<s1>[+-])?\s*(?:{_CURRENCY}\s*)?(?P<s2>[+-])?\s*(?P<num>\d[\d.,'\u00a0\u202f ]*\d|\d)"
    rf"\s*(?:{_CURRENCY})?\s*(?P<s3>-)?"
)
_PLAIN_NUMBER = re.compile(r"(?P<int>\d+)(?:(?P<dec>[.,])(?P<frac>\d+))?")
_GROUPED_NUMBER = re.compile(
    r"(?P<int>\d{1,3}(?P<sep>[,.'\u00a0\u202f ])\d{3}(?:(?P=sep)\d{3})*)(?:(?P<dec>[.,])(?P<frac>\d+))?"
)


def parse_amount(text: str) -> str | None:
    """Return ``text`` as a plain decimal string if it is a whole monetary amount or number, else ``None``.

    A currency symbol or code before or after the number is dropped (``RM``, ``$``, ``€``, ``£``, ``¥``, ``EUR``,
    ``USD``, ...), and so are thousands separators (``,`` ``.`` ``'`` or a space between groups of three digits). With
    two kinds of separator the last one is the decimal mark (``1.234,56`` and ``1,234.56`` are both 1234.56). A
    single ``,`` followed by exactly three digits after at most three digits is a thousands separator (``1,234`` is
    1234); otherwise a single ``,`` or ``.`` is the decimal mark (``12,50`` is 12.5, ``1.234`` is 1.234). The result
    has no trailing zeros: ``60.30`` and ``60.3`` are both ``60.3``; ``75.00`` is ``75``.

    Args:
        text: the printed amount.

    Returns:
        The plain decimal string, or ``None``.

    >>> parse_amount("RM41.45"), parse_amount("1.234,56 EUR"), parse_amount("$1,234.50"), parse_amount("No. 5A")
    ('41.45', '1234.56', '1234.5', None)
    """
    m = _AMOUNT_SHAPE.fullmatch(text.strip().casefold())
    if not m:
        return None
    signs = [s for s in (m["s1"], m["s2"], m["s3"]) if s]
    if len(signs) > 1:
        return None
    num = m["num"]
    if p := _PLAIN_NUMBER.fullmatch(num):
        int_part, dec, frac = p["int"], p["dec"], p["frac"] or ""
        if dec == "," and len(frac) == 3 and len(int_part) <= 3:
            int_part, frac = int_part + frac, ""
    elif (g := _GROUPED_NUMBER.fullmatch(num)) and g["dec"] != g["sep"]:
        int_part, frac = re.sub(r"\D", "", g["int"]), g["frac"] or ""
    else:
        return None
    value = decimal.Decimal(f"{int_part}.{frac}" if frac else int_part)
    if signs and signs[0] == "-":
        value = -value
    if value == 0:
        return "0"
    return format(value.normalize(), "f")


_DROP_APOSTROPHES = str.maketrans(dict.fromkeys("'\u2019\u02bc\u2018`"))


def _normalize_text(text: str) -> str:
    text = strip_punctuation(text.casefold().translate(_DROP_APOSTROPHES), " ")
    return " ".join(text.split())


def normalize_field_value(value: str, *, day_first: bool = True) -> str:
    """The canonical form ``compare="normalized"`` and ``"fuzzy"`` compare: a date, an amount, or normalized text.

    NFKC first; then a whole date becomes ``YYYY-MM-DD`` (:func:`parse_date`), a whole amount a plain decimal
    (:func:`parse_amount`); any other text is casefolded, apostrophes are dropped (``WATSON'S`` is ``watsons``), every
    other punctuation character (Unicode category P*) becomes a space, and whitespace runs collapse to one space (so
    ``"NO.53,JALAN"`` and ``"No. 53, Jalan"`` agree).

    Args:
        value: the field's text.
        day_first: read ambiguous dates day first.

    Returns:
        The canonical text.

    >>> normalize_field_value("10 OCT 2017"), normalize_field_value("RM 60.30"), normalize_field_value(" SDN.  BHD.")
    ('2017-10-10', '60.3', 'sdn bhd')
    """
    text = unicodedata.normalize("NFKC", value).strip()
    return parse_date(text, day_first=day_first) or parse_amount(text) or _normalize_text(text)


@lru_cache(maxsize=4096)
def _cached_normalize(text: str, day_first: bool) -> str:
    return normalize_field_value(text, day_first=day_first)


# --------------------------------------------------------------------------------------------------------------------
# Optimal assignment (Hungarian algorithm)
# --------------------------------------------------------------------------------------------------------------------


def max_weight_assignment(weights: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """Pair rows with columns so that the total weight is maximal (Hungarian algorithm, O(n^2 m)).

    Returns ``min(rows, columns)`` ``(row, column)`` pairs sorted by row. Used to match lists of records; ``n`` is
    small (line items on a page), so this plain-Python version is fast enough and needs no scipy.

    Args:
        weights: a rows × columns matrix of weights.

    Returns:
        The ``(row, column)`` pairs.

    >>> max_weight_assignment([[1, 2], [2, 5]])
    [(0, 0), (1, 1)]
    >>> max_weight_assignment([[0, 3, 0], [0, 4, 2]])
    [(0, 1), (1, 2)]
    """
    rows = len(weights)
    cols = len(weights[0]) if rows else 0
    if rows == 0 or cols == 0:
        return []
    transposed = rows > cols
    if transposed:
        weights = [[weights[i][j] for i in range(rows)] for j in range(cols)]
        rows, cols = cols, rows
    top = max(max(row) for row in weights)
    cost = [[top - w for w in row] for row in weights]  # minimise cost == maximise weight
    inf = float("inf")
    u = [0.0] * (rows + 1)
    v = [0.0] * (cols + 1)
    owner = [0] * (cols + 1)  # owner[j]: the row (1-based) assigned to column j, 0 = free
    way = [0] * (cols + 1)
    for i in range(1, rows + 1):
        owner[0] = i
        j0 = 0
        minv = [inf] * (cols + 1)
        used = [False] * (cols + 1)
        while True:
            used[j0] = True
            i0 = owner[j0]
            delta = inf
            j1 = 0
            row = cost[i0 - 1]
            for j in range(1, cols + 1):
                if not used[j]:
                    cur = row[j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(cols + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    pairs = [(owner[j] - 1, j - 1) for j in range(1, cols + 1) if owner[j]]
    if transposed:
        pairs = [(c, r) for r, c in pairs]
    return sorted(pairs)


# --------------------------------------------------------------------------------------------------------------------
# field_f1
# --------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldComparison:
    """One reference field that had an extracted counterpart: both values as strings and their similarity.

    ``similarity`` is ``1 - lev / max(len)`` of the compared forms (the normalized forms in ``"normalized"`` and
    ``"fuzzy"`` mode, the stripped lowercased forms in ``"lowercase"`` mode, the raw string forms in ``"exact"``
    mode).
    """

    path: str
    reference: str
    extracted: str
    similarity: float
    correct: bool

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "reference": self.reference, "extracted": self.extracted,
                "similarity": self.similarity, "correct": self.correct}


@dataclass(frozen=True)
class FieldF1Result:
    """Field-level scores of one document.

    ``correct`` / ``incorrect`` / ``missing`` are reference key paths; ``extra`` are key paths in the extracted
    object (list indices there are the extracted list's own). Every reference field (a scalar leaf that is not
    ``None``; ``""`` is a field with an empty value) is exactly one of correct, incorrect, missing; every extracted
    field exactly one of correct, incorrect, extra.
    ``mismatches`` says what was expected and found for each incorrect or missing field, in reference order:
    ``(path, expected, found)``, ``found`` ``None`` for a missing field.
    """

    correct: tuple[str, ...]
    incorrect: tuple[str, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    comparisons: tuple[FieldComparison, ...]
    compare: str
    threshold: float
    day_first: bool
    list_matches: tuple[tuple[str, int, int], ...] = ()  # (list path, reference index, extracted index)
    mismatches: tuple[tuple[str, str, str | None], ...] = ()  # (path, expected, found or None)

    @property
    def correct_count(self) -> int:
        return len(self.correct)

    @property
    def extracted_count(self) -> int:
        return len(self.correct) + len(self.incorrect) + len(self.extra)

    @property
    def reference_count(self) -> int:
        return len(self.correct) + len(self.incorrect) + len(self.missing)

    @property
    def precision(self) -> float:
        """correct / extracted; 0.0 when nothing was extracted (the specification's code, two empty records too)."""
        return share(self.correct_count, self.extracted_count, both_empty=False)

    @property
    def recall(self) -> float:
        """correct / reference; 0.0 when the reference has no field (the specification's code)."""
        return share(self.correct_count, self.reference_count, both_empty=False)

    @property
    def f1(self) -> float:
        """2 * correct / (extracted + reference) (= 2PR / (P + R)); 0.0 when both sides have no field."""
        return share(2 * self.correct_count, self.extracted_count + self.reference_count, both_empty=False)

    @property
    def value(self) -> float:
        return self.f1

    def counts(self) -> dict[str, int]:
        """Counts that add up over documents: micro F1 = sum(f1_numerator) / sum(f1_denominator)."""
        return {
            "correct": self.correct_count,
            "extracted": self.extracted_count,
            "reference": self.reference_count,
            "f1_numerator": 2 * self.correct_count,
            "f1_denominator": self.extracted_count + self.reference_count,
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: first the specification's output keys (``field_precision``, ``field_recall``,
        ``field_f1``, ``correct_fields``, ``missing_fields``, ``incorrect_fields``, ``extra_fields``), then this
        project's (short names, mode, counts, per-field comparisons, list matches, mismatches)."""
        return {
            "field_precision": self.precision,
            "field_recall": self.recall,
            "field_f1": self.f1,
            "correct_fields": list(self.correct),
            "missing_fields": list(self.missing),
            "incorrect_fields": list(self.incorrect),
            "extra_fields": list(self.extra),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "compare": self.compare,
            "threshold": self.threshold,
            "day_first": self.day_first,
            "counts": self.counts(),
            "correct": list(self.correct),
            "incorrect": list(self.incorrect),
            "missing": list(self.missing),
            "extra": list(self.extra),
            "comparisons": [c.to_dict() for c in self.comparisons],
            "list_matches": [list(m) for m in self.list_matches],
            "mismatches": [{"field": path, "expected": expected, "found": found}
                           for path, expected, found in self.mismatches],
        }


_ABSENT = object()


def _is_container(value: Any) -> bool:
    return isinstance(value, (Mapping, list, tuple))


def _scalar_text(value: Any, path: str) -> str | None:
    """The string form of a scalar field, or ``None`` when there is no field (the key is absent, or ``None``).

    An empty or whitespace-only string is a field with an empty value, as in the specification's code (every key is a
    field; an empty extracted value for a non-empty reference value is incorrect, two empty values agree)."""
    if value is None or value is _ABSENT:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, decimal.Decimal)):
        return str(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    raise TypeError(
        f"field {path or '<root>'!r} has a {type(value).__name__} value; use str, int, float, bool, None, "
        "dict or list (JSON types)"
    )


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _leaf_items(value: Any, path: str) -> list[tuple[str, str]]:
    """``(path, text)`` of the scalar leaves under ``value`` (``None`` leaves are no fields)."""
    if isinstance(value, Mapping):
        return [leaf for key, sub in value.items() for leaf in _leaf_items(sub, _join(path, key))]
    if isinstance(value, (list, tuple)):
        return [leaf for i, sub in enumerate(value) for leaf in _leaf_items(sub, f"{path}[{i}]")]
    text = _scalar_text(value, path)
    return [] if text is None else [(path, text)]


def _leaves(value: Any, path: str) -> list[str]:
    """Paths of the scalar leaves under ``value`` (``None`` leaves are no fields)."""
    return [leaf for leaf, _ in _leaf_items(value, path)]


@dataclass
class _Outcome:
    correct: list[str]
    incorrect: list[str]
    missing: list[str]
    extra: list[str]
    comparisons: list[FieldComparison]
    list_matches: list[tuple[str, int, int]]
    mismatches: list[tuple[str, str, str | None]]
    graded: float = 0.0  # summed similarity over reference leaves: the assignment's tie-breaker

    @classmethod
    def empty(cls) -> _Outcome:
        return cls([], [], [], [], [], [], [])

    def add(self, other: _Outcome) -> None:
        self.correct += other.correct
        self.incorrect += other.incorrect
        self.missing += other.missing
        self.extra += other.extra
        self.comparisons += other.comparisons
        self.list_matches += other.list_matches
        self.mismatches += other.mismatches
        self.graded += other.graded

    def add_missing(self, reference: Any, path: str) -> None:
        """Every leaf of ``reference`` (at ``path``) is missing."""
        items = _leaf_items(reference, path)
        self.missing += [leaf for leaf, _ in items]
        self.mismatches += [(leaf, text, None) for leaf, text in items]


class _Comparer:
    def __init__(self, compare: str, threshold: float, day_first: bool) -> None:
        self.compare = compare
        self.threshold = threshold
        self.day_first = day_first

    def form(self, text: str) -> str:
        if self.compare == "lowercase":
            return text.strip().lower()
        return text if self.compare == "exact" else _cached_normalize(text, self.day_first)

    def node(self, ref: Any, ext: Any, ref_path: str, ext_path: str) -> _Outcome:
        out = _Outcome.empty()
        if isinstance(ref, Mapping):
            if isinstance(ext, Mapping):
                for key, sub in ref.items():
                    out.add(self.node(sub, ext.get(key, _ABSENT), _join(ref_path, key), _join(ext_path, key)))
                for key, sub in ext.items():
                    if key not in ref:
                        out.extra += _leaves(sub, _join(ext_path, key))
                return out
        elif isinstance(ref, (list, tuple)):
            if isinstance(ext, (list, tuple)):
                return self.sequence(ref, ext, ref_path, ext_path)
        else:
            ref_text = _scalar_text(ref, ref_path)
            ext_text = None if _is_container(ext) else _scalar_text(ext, ext_path)
            if ref_text is None:
                pass  # None: not a reference field, anything extracted here is extra
            elif ext_text is None:
                out.add_missing(ref, ref_path)
                return self._with_extra(out, ext, ext_path)
            else:
                a, b = self.form(ref_text), self.form(ext_text)
                similarity = Levenshtein.normalized_similarity(a, b)
                ok = similarity >= self.threshold if self.compare == "fuzzy" else a == b
                (out.correct if ok else out.incorrect).append(ref_path)
                if not ok:
                    out.mismatches.append((ref_path, ref_text, ext_text))
                out.comparisons.append(FieldComparison(ref_path, ref_text, ext_text, similarity, ok))
                out.graded = similarity
                return out
        # structure differs (or the reference is None): reference leaves are missing, extracted leaves extra
        out.add_missing(ref, ref_path)
        return self._with_extra(out, ext, ext_path)

    @staticmethod
    def _with_extra(out: _Outcome, ext: Any, ext_path: str) -> _Outcome:
        if ext is not _ABSENT:
            out.extra += _leaves(ext, ext_path)
        return out

    def sequence(self, ref: Sequence[Any], ext: Sequence[Any], ref_path: str, ext_path: str) -> _Outcome:
        outcomes = [[self.node(r, e, f"{ref_path}[{i}]", f"{ext_path}[{j}]") for j, e in enumerate(ext)]
                    for i, r in enumerate(ref)]
        # maximise correct fields first; summed similarity (< 1 in total) only breaks ties
        eps = 1.0 / (len(_leaves(ref, ref_path)) + 1)
        weights = [[len(o.correct) + eps * o.graded for o in row] for row in outcomes]
        out = _Outcome.empty()
        matched_ref: set[int] = set()
        matched_ext: set[int] = set()
        for i, j in max_weight_assignment(weights):
            if weights[i][j] > 0:  # a pair with nothing in common is reported as missing + extra instead
                out.add(outcomes[i][j])
                out.list_matches.append((ref_path or "<root>", i, j))
                matched_ref.add(i)
                matched_ext.add(j)
        for i, r in enumerate(ref):
            if i not in matched_ref:
                out.add_missing(r, f"{ref_path}[{i}]")
        for j, e in enumerate(ext):
            if j not in matched_ext:
                out.extra += _leaves(e, f"{ext_path}[{j}]")
        return out


def field_f1(
    reference_fields: Mapping[str, Any],
    extracted_fields: Mapping[str, Any] | None,
    *,
    compare: CompareMode = "lowercase",
    threshold: float = 0.8,
    day_first: bool = True,
) -> FieldF1Result:
    """Precision, recall and F1 of extracted key fields against the reference fields.

    Every scalar leaf of ``reference_fields`` is one reference field, named by its key path (``address.city``,
    ``items[0].price``); every leaf of ``extracted_fields`` one extracted field. As in the specification's code, a key
    is a field whatever its value: an empty (``""`` or whitespace) extracted value for a non-empty reference value is
    *incorrect* (it was extracted, wrongly), and two empty values agree. ``None`` (JSON ``null``) is no field: an
    extracted ``None`` is missing, a reference ``None`` asks for nothing (anything extracted there is extra). Lists are
    matched by the optimal assignment that maximises the number of correct fields (ties: the larger summed
    similarity), not by position.

    - precision = correct / extracted, recall = correct / reference, F1 = 2 * correct / (extracted + reference);
    - a share whose denominator is 0 is 0.0, so two records without fields score 0.0, as the specification's code
      does. Never NaN.

    ``compare``: ``"lowercase"`` (the default and the specification's comparison: equal after
    ``str(v).strip().lower()``), ``"exact"`` (identical string forms; numbers and booleans as JSON would print
    them), ``"normalized"`` (identical after :func:`normalize_field_value`: dates, amounts, punctuation), or
    ``"fuzzy"`` (normalized forms with ``1 - lev / max(len) >= threshold``). ``day_first`` picks how ``01/02/2024``
    is read in the last two modes. ``extracted_fields=None`` (nothing extracted) is treated as ``{}``.

    The specification's example: 2 of 4 extracted fields correct (``total`` misread, ``customer`` extra,
    ``vendor`` missing):

    Args:
        reference_fields: the ground-truth fields (nested mappings allowed).
        extracted_fields: the fields the system extracted (``None``: nothing extracted).
        compare: ``"lowercase"`` (default), ``"exact"``, ``"normalized"`` or ``"fuzzy"``.
        threshold: similarity a ``"fuzzy"`` match needs.
        day_first: read ``03/04/2024`` as 3 April.

    Returns:
        A :class:`FieldF1Result` with precision, recall, F1 and the mismatches.

    >>> r = field_f1({"invoice_number": "INV-2024-001", "date": "2024-03-15", "total": "$150.00", "vendor": "Acme"},
    ...              {"invoice_number": "inv-2024-001 ", "date": "2024-03-15", "total": "$15O.OO", "customer": "J"})
    >>> r.precision, r.recall, r.f1, r.incorrect, r.missing, r.extra
    (0.5, 0.5, 0.5, ('total',), ('vendor',), ('customer',))
    >>> ref, ext = {"address": {"city": "Johor"}}, {"address": {"city": "JOHOR."}}  # nested: key path address.city
    >>> field_f1(ref, ext).f1, field_f1(ref, ext, compare="normalized").f1  # the full stop is punctuation
    (0.0, 1.0)
    >>> field_f1({"total": "60.30"}, {"total": "60.31"}, compare="fuzzy", threshold=0.8).f1
    1.0
    >>> r = field_f1({"a": "x", "b": "y"}, {"a": "x", "b": ""})  # an empty value is extracted, wrongly
    >>> r.precision, r.recall, r.f1, r.incorrect, field_f1({}, {}).f1
    (0.5, 0.5, 0.5, ('b',), 0.0)
    """
    if not isinstance(reference_fields, Mapping):
        raise TypeError(
            f"reference_fields must be a mapping (dict) of field names to values, not {type(reference_fields).__name__}"
        )
    if extracted_fields is None:
        extracted_fields = {}
    if not isinstance(extracted_fields, Mapping):
        hint = "; parse the model output first, e.g. json_validity(text).data" if isinstance(extracted_fields, str) else ""
        raise TypeError(f"extracted_fields must be a mapping (dict) or None, not {type(extracted_fields).__name__}{hint}")
    if compare not in COMPARE_MODES:
        close = difflib.get_close_matches(str(compare).lower(), COMPARE_MODES, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown compare mode {compare!r}{hint}; valid: {', '.join(COMPARE_MODES)}")
    threshold = _check_threshold(threshold)
    out = _Comparer(compare, threshold, bool(day_first)).node(reference_fields, extracted_fields, "", "")
    return FieldF1Result(
        correct=tuple(out.correct),
        incorrect=tuple(out.incorrect),
        missing=tuple(out.missing),
        extra=tuple(out.extra),
        comparisons=tuple(out.comparisons),
        compare=compare,
        threshold=threshold,
        day_first=bool(day_first),
        list_matches=tuple(out.list_matches),
        mismatches=tuple(out.mismatches),
    )


def _check_threshold(threshold: float, name: str = "threshold") -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"{name} must be a number between 0 and 1, not {type(threshold).__name__}")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {threshold!r}")
    return float(threshold)


# --------------------------------------------------------------------------------------------------------------------
# ANLS (DocVQA)
# --------------------------------------------------------------------------------------------------------------------


def _docvqa_normalize(text: str) -> str:
    return " ".join(text.strip().lower().split())


@dataclass(frozen=True)
class AnlsResult:
    """ANLS of one question: ``score`` is the best thresholded similarity over the accepted answers."""

    score: float
    similarity: float  # the best similarity before the threshold was applied
    best_answer: str | None
    answers: tuple[str, ...]
    prediction: str
    threshold: float
    normalize: str

    @property
    def value(self) -> float:
        return self.score

    def counts(self) -> dict[str, float]:
        """``score_sum`` / ``questions`` over a corpus is the corpus ANLS (the mean)."""
        return {"score_sum": self.score, "questions": 1}

    def to_dict(self) -> dict[str, Any]:
        return {"anls": self.score, "similarity": self.similarity, "best_answer": self.best_answer,
                "answers": list(self.answers), "prediction": self.prediction, "threshold": self.threshold,
                "normalize": self.normalize}


@dataclass(frozen=True)
class AnlsCorpusResult:
    """ANLS over questions: the mean of the per-question scores (0.0 for no questions)."""

    results: tuple[AnlsResult, ...]

    @property
    def scores(self) -> tuple[float, ...]:
        return tuple(r.score for r in self.results)

    @property
    def value(self) -> float:
        return sum(self.scores) / len(self.results) if self.results else 0.0

    def counts(self) -> dict[str, float]:
        return {"score_sum": sum(self.scores), "questions": len(self.results)}

    def to_dict(self) -> dict[str, Any]:
        return {"anls": self.value, "questions": len(self.results), "scores": list(self.scores)}


def _answers_tuple(answers: str | Sequence[str], name: str = "answers") -> tuple[str, ...]:
    if isinstance(answers, str):
        return (answers,)
    if not isinstance(answers, Sequence) or isinstance(answers, (bytes, bytearray)):
        raise TypeError(f"{name} must be a str or a list of accepted answers (str), not {type(answers).__name__}")
    items = tuple(check_text(a, f"{name}[{i}]") for i, a in enumerate(answers))
    if not items:
        raise ValueError(f"{name} is empty; give at least one accepted answer (use [''] for 'no answer')")
    return items


def anls(
    answers: str | Sequence[str],
    prediction: str,
    *,
    threshold: float = 0.5,
    normalize: str | NormalizationProfile = "docvqa",
) -> AnlsResult:
    """DocVQA ANLS for one question: max over the accepted answers of the thresholded normalized similarity.

    Follows the official DocVQA / RRC evaluation: both strings are lowercased, stripped and inner whitespace
    collapsed (``normalize="docvqa"``; any normalization profile name may be given instead), then
    ``NL = lev(a, p) / max(len(a), len(p))`` (0 when both are empty), similarity ``s = 1 - NL``, and the score is
    ``s`` if ``s >= threshold`` else 0 (so a similarity of exactly 0.5 scores 0.5, as in the official script).
    Lengths are code points. The official script measures ``max(len)`` on the raw, un-normalized strings; that only
    differs here when the inputs carry extra spaces and need an edit.

    Args:
        answers: the accepted answer(s).
        prediction: the model's answer.
        threshold: similarities below it count 0.
        normalize: profile applied to both sides.

    Returns:
        An :class:`AnlsResult`.

    >>> anls(["Denver Broncos", "Denver R. Broncos"], "denver broncos").score
    1.0
    >>> anls("12/15/88", "12/15/89").score
    0.875
    >>> anls("Dr. Lobo", "Dear Mr. Smith").score
    0.0
    """
    items = _answers_tuple(answers)
    prediction = check_text(prediction, "prediction")
    threshold = _check_threshold(threshold)
    if isinstance(normalize, str) and normalize == "docvqa":
        norm, norm_name = _docvqa_normalize, "docvqa"
    else:
        profile = get_profile(normalize)
        norm, norm_name = profile, profile.name
    pred = norm(prediction)
    best_similarity, best_answer = -1.0, None
    for answer in items:
        similarity = Levenshtein.normalized_similarity(norm(answer), pred)
        if similarity > best_similarity:
            best_similarity, best_answer = similarity, answer
    score = best_similarity if best_similarity >= threshold else 0.0
    return AnlsResult(score, best_similarity, best_answer, items, prediction, threshold, norm_name)


def anls_corpus(
    answers: Sequence[str | Sequence[str]],
    predictions: Sequence[str],
    *,
    threshold: float = 0.5,
    normalize: str | NormalizationProfile = "docvqa",
) -> AnlsCorpusResult:
    """ANLS over many questions: the mean of :func:`anls` per question (``answers[i]`` are question i's answers).

    Args:
        answers: each question's accepted answers.
        predictions: each question's predicted answer.
        threshold: similarities below it count 0.
        normalize: profile applied to both sides.

    Returns:
        An :class:`AnlsCorpusResult`.

    >>> anls_corpus([["Denver Broncos"], ["12/15/88"]], ["Denver Broncos", "12/15/89"]).value
    0.9375
    """
    if isinstance(answers, str) or not isinstance(answers, Sequence):
        raise TypeError(f"answers must be a list with one entry (str or list of str) per question, not {type(answers).__name__}")
    if isinstance(predictions, str) or not isinstance(predictions, Sequence):
        raise TypeError(f"predictions must be a list of str, one per question, not {type(predictions).__name__}")
    if len(answers) != len(predictions):
        raise ValueError(f"answers has {len(answers)} questions but predictions has {len(predictions)}; give one prediction per question")
    return AnlsCorpusResult(tuple(anls(a, p, threshold=threshold, normalize=normalize) for a, p in zip(answers, predictions)))


# --------------------------------------------------------------------------------------------------------------------
# Locating a value in plain text (engines without structured fields)
# --------------------------------------------------------------------------------------------------------------------


def _clean_edges(text: str, start: int, end: int) -> int:
    """How many of the span's two ends fall on a token boundary: neither whitespace inside the span nor a letter or
    digit cut in two (the span ends mid-word or mid-number)."""
    clean = 0
    if not text[start].isspace() and (start == 0 or not (text[start - 1].isalnum() and text[start].isalnum())):
        clean += 1
    if not text[end - 1].isspace() and (end == len(text) or not (text[end].isalnum() and text[end - 1].isalnum())):
        clean += 1
    return clean


def locate_value(needle: str, haystack: str) -> tuple[int, int] | None:
    """The ``(start, end)`` of ``haystack``'s span that best matches ``needle``, or None when nothing matches.

    rapidfuzz's ``partial_ratio_alignment`` finds the best score; several spans often tie (the reference ``14.65``
    scores the same against `` 14.6`` and ``14.64`` in ``Total 14.64``) and it returns the first. The spans of the
    same length starting up to two characters before or after it are scored too (``fuzz.ratio``); of the
    best-scoring, the one whose ends fall on token boundaries is taken, so a located field reads as the text writes
    it. ``needle`` is not longer than ``haystack`` (the caller takes the whole text otherwise).

    Args:
        needle: the reference value.
        haystack: the OCR text.

    Returns:
        ``(start, end)`` or ``None``.

    >>> text = "Total 14.64"
    >>> start, end = locate_value("14.65", text)
    >>> text[start:end]
    '14.64'
    """
    from rapidfuzz import fuzz

    alignment = fuzz.partial_ratio_alignment(needle, haystack)
    if alignment is None or alignment.score == 0:
        return None
    first = (alignment.dest_start, alignment.dest_end)
    best = (fuzz.ratio(needle, haystack[first[0]:first[1]]), _clean_edges(haystack, *first), 0)
    chosen = first
    length = first[1] - first[0]
    for start in range(max(0, first[0] - 2), min(len(haystack) - length, first[0] + 2) + 1):
        rank = (fuzz.ratio(needle, haystack[start:start + length]), _clean_edges(haystack, start, start + length),
                -abs(start - first[0]))
        if rank > best:
            best, chosen = rank, (start, start + length)
    return chosen
