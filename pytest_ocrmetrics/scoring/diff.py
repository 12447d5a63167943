"""A short aligned excerpt of where two texts differ most, for assertion messages, and terminal display widths.

>>> print(worst_region("INVOICE #12345 TOTAL", "INV0ICE #I2345 TOTAL", width=20))
ref: INVOICE #12345 TOTAL
hyp: INV0ICE #I2345 TOTAL
        ^     ^

The two texts are aligned on **grapheme clusters** (what a reader sees as one character, UAX #29), so a cluster is
never split: ``क्ष``, ``é`` written as ``e`` + U+0301 and an emoji family ``👨‍👩‍👧‍👦`` each print whole in one
column. Each column is padded to the display width of the wider side, so the two rows stay aligned with wide (CJK,
emoji) and zero-width characters.

Marks in the excerpt (every one of them narrow, so a column keeps its width):

======================  ==============================================================================================
``∅``                   nothing on this side: the character on the other side is missing here (a deletion or an
                        insertion). U+2205 EMPTY SET: narrow in every terminal and almost never read from a page.
``␣``                   a space, shown so only in a column that differs (elsewhere a space prints as a space)
``↵`` ``␍↵`` ``→``      line feed, CR LF, tab
``␀`` … ``␟``, ``␡``    any other C0 control character (U+2400 control pictures), e.g. ``␛`` for ESC, and DEL
``⟨NAME⟩``              an invisible or format character: ``⟨NBSP⟩`` U+00A0, ``⟨SHY⟩`` soft hyphen U+00AD,
                        ``⟨ALM⟩`` U+061C, ``⟨MVS⟩`` U+180E, ``⟨ZWSP⟩`` U+200B, ``⟨ZWNJ⟩`` U+200C, ``⟨ZWJ⟩`` U+200D,
                        ``⟨LRM⟩`` U+200E, ``⟨RLM⟩`` U+200F, ``⟨LSEP⟩`` U+2028, ``⟨PSEP⟩`` U+2029, ``⟨LRE⟩`` U+202A,
                        ``⟨RLE⟩`` U+202B, ``⟨PDF⟩`` U+202C, ``⟨LRO⟩`` U+202D, ``⟨RLO⟩`` U+202E, ``⟨NNBSP⟩`` U+202F,
                        ``⟨WJ⟩`` U+2060, ``⟨LRI⟩`` U+2066, ``⟨RLI⟩`` U+2067, ``⟨FSI⟩`` U+2068, ``⟨PDI⟩`` U+2069,
                        ``⟨IDSP⟩`` U+3000, ``⟨BOM⟩`` U+FEFF
``⟨U+XXXX⟩``            any other character that does not print: other controls (C1), format characters, other
                        spaces, line/paragraph separators, lone surrogates, private use, non-characters, unassigned
``◌``                   the base drawn under a combining mark (or other joining character) that has none
======================  ==============================================================================================

ZWJ and ZWNJ *between* two parts of a cluster with a visible base (an emoji ZWJ sequence, an Indic conjunct written
with ZWJ) print as they are: they are part of the character. Anywhere else (alone, at the end of a cluster) they are
marked, so a stray joiner is a visible difference. No control, bidi or format character ever reaches the terminal raw.

Long texts are aligned within bounds: after the common beginning and end are set aside, the rest is aligned exactly
when it is short or when the texts are close (the Levenshtein distance is then small and rapidfuzz's banded
alignment is fast); two long texts that differ a lot are aligned only over their first
:data:`FIRST_DIFFERENCE_SPAN` characters after the common beginning, and the excerpt says so on a fourth line.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from functools import lru_cache
from typing import Any, Sequence, cast

import regex
from rapidfuzz.distance import Editops, Levenshtein

from pytest_ocrmetrics.metrics.alignment import Alignment, encode_text

__all__ = ["worst_region", "display_width", "visible", "GAP", "FIRST_DIFFERENCE_SPAN", "TRUNCATED_NOTE"]

GAP = "\u2205"  # ∅: nothing on this side
_SPACE_MARK = "\u2423"  # ␣: a space in a column that differs
_BASE = "\u25cc"  # ◌: the base of a combining mark that has none

# Alignment bounds. Full alignment when the differing middle parts have at most _FULL_CELLS cells (rapidfuzz is
# bit-parallel: cells / 64 word operations); otherwise exact banded alignment when the distance is at most
# _BAND_CELLS / length; otherwise only the first FIRST_DIFFERENCE_SPAN clusters after the common beginning.
_FULL_CELLS = 2_000_000_000
_BAND_CELLS = 20_000_000_000
FIRST_DIFFERENCE_SPAN = 10_000
TRUNCATED_NOTE = ("(texts too long and too different to align fully: aligned the first {span:,} characters after "
                  "their common beginning)")

_SPECIAL = {"\n": "\u21b5", "\r\n": "\u240d\u21b5", "\t": "\u2192", "\r": "\u240d", "\x7f": "\u2421"}
_NAMES = {
    0x00A0: "NBSP", 0x00AD: "SHY", 0x061C: "ALM", 0x180E: "MVS", 0x200B: "ZWSP", 0x200C: "ZWNJ", 0x200D: "ZWJ",
    0x200E: "LRM", 0x200F: "RLM", 0x2028: "LSEP", 0x2029: "PSEP", 0x202A: "LRE", 0x202B: "RLE", 0x202C: "PDF",
    0x202D: "LRO", 0x202E: "RLO", 0x202F: "NNBSP", 0x2060: "WJ", 0x2066: "LRI", 0x2067: "RLI", 0x2068: "FSI",
    0x2069: "PDI", 0x3000: "IDSP", 0xFEFF: "BOM",
}
_MARKED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"))
_JOINERS_IN_CLUSTER = frozenset("\u200c\u200d")  # ZWNJ, ZWJ: part of the character inside a cluster
_GRAPHEME = regex.compile(r"\X")
_NEEDS_BASE = regex.compile(r"[\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}"
                            r"\p{Grapheme_Cluster_Break=SpacingMark}]")
_WIDE = regex.compile(r"[\p{East_Asian_Width=W}\p{East_Asian_Width=F}\p{Emoji_Presentation}\uFE0F]")
_ZERO_WIDTH = regex.compile(r"[\p{Mn}\p{Me}\p{Mc}\p{Cf}\p{Cc}\p{Zl}\p{Zp}\u1160-\u11FF\uD7B0-\uD7FF]")


def _mark(ch: str) -> str:
    """The visible stand-in of one code point that does not print (see the module docstring)."""
    code = ord(ch)
    if code < 0x20:
        return _SPECIAL.get(ch) or chr(0x2400 + code)
    if ch in _SPECIAL:
        return _SPECIAL[ch]
    name = _NAMES.get(code)
    return f"\u27e8{name}\u27e9" if name else f"\u27e8U+{code:04X}\u27e9"


@lru_cache(maxsize=1 << 16)
def _needs_mark(ch: str) -> bool:
    return ch != " " and (ch == "\x7f" or unicodedata.category(ch) in _MARKED_CATEGORIES)


@lru_cache(maxsize=1 << 16)
def visible(cluster: str) -> str:
    """How one grapheme cluster prints in an excerpt: as itself, or with the marks of the module docstring.

    >>> visible("\\x1b"), visible("\\u200f"), visible("\\u0301"), visible("\\U0001F468\\u200d\\U0001F469") == "👨‍👩"
    ('␛', '⟨RLM⟩', '◌́', True)
    """
    special = _SPECIAL.get(cluster)
    if special is not None:
        return special
    # a joiner between two parts of a cluster with a visible base is part of the character; elsewhere it is marked
    joins = len(cluster) > 2 and not _needs_mark(cluster[0]) and not cluster[0].isspace()
    last = len(cluster) - 1
    out = "".join(_mark(ch) if _needs_mark(ch) and not (joins and 0 < k < last and ch in _JOINERS_IN_CLUSTER) else ch
                  for k, ch in enumerate(cluster))
    if out and _NEEDS_BASE.match(out):
        out = _BASE + out
    return out


@lru_cache(maxsize=1 << 16)
def _cluster_width(cluster: str) -> int:
    """2 for a wide (East Asian wide/full-width) or emoji-presentation cluster, 0 when every code point in it is
    zero-width (combining marks, format and control characters, Hangul medial jamo), else 1."""
    if _WIDE.search(cluster):
        return 2
    return 0 if all(_ZERO_WIDTH.fullmatch(ch) for ch in cluster) else 1


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes, cluster by cluster: a wide (CJK) or emoji cluster counts 2 (an emoji ZWJ
    family is one cluster: 2), a cluster of combining marks, format or control characters 0, any other 1.

    >>> display_width("abc"), display_width("京A"), display_width("e\\u0301"), display_width("👨\\u200d👩\\u200d👧")
    (3, 3, 1, 2)
    """
    if text.isascii():
        return sum(1 for ch in text if " " <= ch <= "~")
    return sum(map(_cluster_width, _GRAPHEME.findall(text)))


# --- bounded alignment -------------------------------------------------------------------------------------------

_Block = tuple[str, int, int, int, int]  # (tag, i1, i2, j1, j2) as in difflib


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search with C-speed comparisons: O(n log n) bytes compared, no Python loop per character
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.endswith(b[len(b) - mid:len(b) - lo], 0, len(a) - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _align(a: str, b: str) -> tuple[list[_Block], bool]:
    """difflib-style blocks aligning ``a`` and ``b`` (one code point per unit), and whether the alignment was cut
    short (only the first :data:`FIRST_DIFFERENCE_SPAN` units after the common beginning are aligned)."""
    n, m = len(a), len(b)
    p = _common_prefix(a, b)
    s = _common_suffix(a, b, min(n, m) - p)
    mid_a, mid_b = a[p:n - s], b[p:m - s]
    la, lb = len(mid_a), len(mid_b)
    hint = max(1, abs(la - lb))
    truncated = False
    if la * lb <= _FULL_CELLS:
        ops = Levenshtein.opcodes(mid_a, mid_b, score_hint=hint)
    else:
        cutoff = max(hint, _BAND_CELLS // max(la, lb))
        distance = Levenshtein.distance(mid_a, mid_b, score_cutoff=cutoff, score_hint=hint)
        if distance <= cutoff:  # close texts: the banded alignment costs about length * distance / 64
            ops = Levenshtein.opcodes(mid_a, mid_b, score_hint=max(1, distance))
        else:
            ops = Levenshtein.opcodes(mid_a[:FIRST_DIFFERENCE_SPAN], mid_b[:FIRST_DIFFERENCE_SPAN])
            truncated = True
    blocks: list[_Block] = [("equal", 0, p, 0, p)] if p else []
    blocks += [(tag, i1 + p, i2 + p, j1 + p, j2 + p) for tag, i1, i2, j1, j2 in cast("list[_Block]", ops.as_list())]
    if s and not truncated:
        blocks.append(("equal", n - s, n, m - s, m))
    return blocks, truncated


def _best_window(run_starts: Sequence[int], run_ends: Sequence[int], n: int, width: int) -> int:
    """Start of the ``width`` of ``n`` columns holding most error columns, shifted to centre the errors it holds (the
    first such window when several hold as many). The error columns are given as runs, in order: run ``r`` covers
    columns ``run_starts[r]`` to ``run_ends[r] - 1`` (adjacent runs may touch).

    A best window can always start at an error, and then at the start of a run: moving a window that starts inside a
    run back to the run's start gains that many errors on the left and loses at most as many on the right. So only
    the runs' starts are tried, in one sweep (each run enters and leaves the window once): no step per column.
    """
    runs = len(run_starts)
    if n <= width or not runs:
        return 0
    best = best_k = best_j = -1
    j = 0  # the runs k .. j - 1 start inside the window starting at run k; ``errors``: their columns
    errors = 0
    for k in range(runs):
        end = run_starts[k] + width
        while j < runs and run_starts[j] < end:
            errors += run_ends[j] - run_starts[j]
            j += 1
        past = run_ends[j - 1] - end  # the columns of the last run past the window's end
        held = errors - past if past > 0 else errors
        if held > best:  # the first window holding the most
            best, best_k, best_j = held, k, j
        errors -= run_ends[k] - run_starts[k]
    first = run_starts[best_k]
    last = min(first + width, run_ends[best_j - 1]) - 1  # the last error column in that window
    centred = (first + last + 1) // 2 - width // 2
    # any start in [last - width + 1, first] keeps every error of the window in it
    return min(max(centred, last - width + 1, 0), first, n - width)


@lru_cache(maxsize=1 << 16)
def _shown_width(shown: str) -> int:
    """:func:`display_width` of one rendered cell (cells repeat: a page has few distinct ones)."""
    return display_width(shown)


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _shown_width(text))


def worst_region(reference: str, hypothesis: str, *, width: int = 60, alignment: Alignment | None = None) -> str:
    """Three lines (reference, hypothesis, markers) around the window of ``width`` aligned columns with most errors.

    Each column is one grapheme cluster (or ``∅`` where one side has nothing); ``^`` marks a column that differs.
    Invisible characters show as the marks listed in the module docstring. A fourth line is added when the texts
    were too long and too different to align fully (:data:`TRUNCATED_NOTE`).

    ``alignment``: the grapheme-cluster alignment the metrics already made of these two texts (a score's): its edit
    operations are used instead of aligning again, so the excerpt shows the errors the metrics counted. Where the
    metrics aligned the whole texts with rapidfuzz, the columns are those of aligning again (its alignment depends
    only on the two texts; a hint changes how the distance is found, not the operations; a test checks this); a
    long text the metrics aligned piecewise (``align_text_anchored``) may show another of the optimal alignments.
    Texts too long to align fully are aligned here as before.

    >>> print(worst_region("ab c", "abc"))
    ref: ab␣c
    hyp: ab∅c
           ^
    """
    if alignment is not None and len(alignment.reference) * len(alignment.hypothesis) <= _FULL_CELLS:
        ref_units, hyp_units = alignment.reference, alignment.hypothesis
        n_ref, n_hyp = len(ref_units), len(hyp_units)
        editops: Any = Editops(cast(Any, list(alignment.editops)), n_ref, n_hyp)  # as_opcodes: not in the stubs
        blocks = cast("list[_Block]", editops.as_opcodes().as_list())
        truncated = False
    else:
        ref_units, hyp_units, ref_codes, hyp_codes = encode_text(reference, hypothesis, unit="grapheme")
        n_ref, n_hyp = len(ref_codes), len(hyp_codes)
        blocks, truncated = _align(ref_codes, hyp_codes) if n_ref or n_hyp else ([], False)
    if not n_ref and not n_hyp:
        return "ref: (empty)\nhyp: (empty)\n     "
    columns = [0]  # each block's first column (a block is as wide as its longer side), then the total
    run_starts: list[int] = []  # the blocks that differ: their first and past-the-end columns
    run_ends: list[int] = []
    n = 0
    for tag, i1, i2, j1, j2 in blocks:
        size = i2 - i1 if i2 - i1 > j2 - j1 else j2 - j1
        if tag != "equal":
            run_starts.append(n)
            run_ends.append(n + size)
        n += size
        columns.append(n)
    width = max(1, min(width, n))
    start = _best_window(run_starts, run_ends, n, width)
    ref_cells, hyp_cells, marks = _render(blocks, columns, ref_units, hyp_units, start, start + width)
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + width < n or truncated else ""
    pad = " " * len(prefix)
    lines = [f"ref: {prefix}{''.join(ref_cells)}{suffix}", f"hyp: {prefix}{''.join(hyp_cells)}{suffix}",
             f"     {pad}{''.join(marks).rstrip()}"]
    if truncated:
        lines.append("     " + TRUNCATED_NOTE.format(span=FIRST_DIFFERENCE_SPAN))
    return "\n".join(lines)


def _render(blocks: list[_Block], columns: Sequence[int], ref_units: Sequence[str], hyp_units: Sequence[str],
            start: int, end: int) -> tuple[list[str], list[str], list[str]]:
    """The padded reference cells, hypothesis cells and markers of columns ``start`` to ``end`` (``columns``: each
    block's first column); only the blocks in the window are visited."""
    ref_cells: list[str] = []
    hyp_cells: list[str] = []
    marks: list[str] = []
    cells = _COLUMNS
    first = bisect_right(columns, start) - 1  # the block holding column ``start``
    for b in range(first, len(blocks)):
        column = columns[b]
        if column >= end:
            break
        tag, i1, i2, j1, j2 = blocks[b]
        size = columns[b + 1] - column
        differs = tag != "equal"
        for k in range(max(0, start - column), min(size, end - column)):
            key = (ref_units[i1 + k] if i1 + k < i2 else None, hyp_units[j1 + k] if j1 + k < j2 else None, differs)
            shown = cells.get(key)
            if shown is None:
                shown = _column(*key)
                if len(cells) >= _COLUMNS_KEPT:
                    cells.clear()
                cells[key] = shown
            ref_cells.append(shown[0])
            hyp_cells.append(shown[1])
            marks.append(shown[2])
    return ref_cells, hyp_cells, marks


# (reference cluster, hypothesis cluster, differs) -> the column's padded cells and marker: a page repeats few pairs
_COLUMNS: dict[tuple[str | None, str | None, bool], tuple[str, str, str]] = {}
_COLUMNS_KEPT = 1 << 16


def _column(ref: str | None, hyp: str | None, differs: bool) -> tuple[str, str, str]:
    """One column: both sides' cells padded to the wider one, and its marker (``^`` where the sides differ)."""
    a, b = _cell(ref, differs), _cell(hyp, differs)
    cell = max(_shown_width(a), _shown_width(b), 1)
    return _pad(a, cell), _pad(b, cell), ("^" if differs else " ").ljust(cell)


def _cell(cluster: str | None, differs: bool) -> str:
    if cluster is None:
        return GAP
    if cluster == " ":
        return _SPACE_MARK if differs else " "
    return visible(cluster)
