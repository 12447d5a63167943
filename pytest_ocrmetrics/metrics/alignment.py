"""One Levenshtein alignment per document and unit, shared by every measure that needs it.

CER counts, the confusion matrix and (later) the diff view all read the same :class:`Alignment`, so the expensive
step, rapidfuzz's bit-parallel ``Levenshtein.editops``, runs once per document and unit.

Units are encoded for rapidfuzz without loss:

- characters: when every grapheme cluster of a text is a single code point (always true for ASCII without CRLF, and
  for most NFC text), the ``str`` itself is passed and nothing is segmented; otherwise only the neighbourhood of the
  characters that can join a cluster is segmented, and each multi-code-point cluster is replaced by one placeholder
  code point that occurs in neither text (a vocabulary shared by both sides), so rapidfuzz still compares two
  ``str``;
- words: each distinct word gets an integer from a vocabulary shared by both sides (as jiwer does), so words are
  compared exactly (no hashing).

>>> a = align_text("INVOICE #12345", "INV0ICE #12345")
>>> a.substitutions, a.deletions, a.insertions, a.hits
(1, 0, 0, 13)
>>> a.editops
(('replace', 3, 3),)
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import accumulate, compress, count
from operator import add, countOf, itemgetter
from typing import AbstractSet, Any, Iterator, Sequence, Union, cast, overload

import regex
from rapidfuzz.distance import Editops, Levenshtein

__all__ = ["ANCHOR_MIN_CHARS", "ANCHOR_MIN_LENGTH", "LINE_ANCHOR_MIN_CHARS", "WORD_ANCHOR_MIN_LENGTH", "Alignment", "AlignedPair",
           "ClusterSequence", "align", "align_text", "align_text_anchored", "align_units", "align_units_with_blocks",
           "align_words", "anchored_editops", "encode_text", "encode_units", "score_hint", "unit_codes", "word_starts"]

_GRAPHEME = regex.compile(r"\X")

Units = Union[str, Sequence[str]]
# (reference unit or None for an insertion, hypothesis unit or None for a deletion)
AlignedPair = tuple[Union[str, None], Union[str, None]]


@dataclass(frozen=True)
class Alignment:
    """An optimal Levenshtein alignment of ``reference`` units to ``hypothesis`` units.

    ``editops`` are rapidfuzz's ``(tag, reference_index, hypothesis_index)`` triples turning the reference into the
    hypothesis, with tag ``"replace"``, ``"delete"`` or ``"insert"``; every unit not touched by an operation is a hit.
    ``reference`` / ``hypothesis`` are the unit sequences (a ``str`` when every unit is one code point).
    When several alignments are optimal, rapidfuzz picks one; the distance (S + D + I) is the same for all of them.
    """

    reference: Units
    hypothesis: Units
    editops: tuple[tuple[str, int, int], ...]
    substitutions: int
    deletions: int
    insertions: int

    @property
    def hits(self) -> int:
        return len(self.reference) - self.substitutions - self.deletions

    @property
    def distance(self) -> int:
        """The Levenshtein distance: substitutions + deletions + insertions."""
        return self.substitutions + self.deletions + self.insertions

    @property
    def reference_length(self) -> int:
        return len(self.reference)

    @property
    def hypothesis_length(self) -> int:
        return len(self.hypothesis)

    @cached_property
    def confusions(self) -> Counter[AlignedPair]:
        """How often each ``(reference unit, hypothesis unit)`` pair was confused, in order of first occurrence.

        Deletions pair a reference unit with ``None``, insertions pair ``None`` with the inserted unit.
        """
        # Counted on the code points rapidfuzz compared (a cluster's placeholder stands for it), then each distinct
        # pair is decoded once: indexing a ClusterSequence per operation would cost a Python call each time.
        counts = self._code_confusions()
        decode = _decoder(self.reference) or _decoder(self.hypothesis)
        if not decode:
            return counts
        get = decode.get  # placeholders are distinct from every character of both texts: no two pairs merge
        return Counter({(get(r, r), get(h, h)): n for (r, h), n in counts.items()})  # type: ignore[arg-type]

    def _code_confusions(self) -> Counter[AlignedPair]:
        """:attr:`confusions` of the codes (before placeholders are decoded)."""
        return _pair_counts(_codes(self.reference), _codes(self.hypothesis), self.editops)

    def opcodes(self) -> list[tuple[str, int, int, int, int]]:
        """The alignment as ``(tag, i1, i2, j1, j2)`` blocks covering both sequences (tags as in ``difflib``).

        >>> align_text("abcd", "axd").opcodes()
        [('equal', 0, 1, 0, 1), ('replace', 1, 2, 1, 2), ('delete', 2, 3, 2, 2), ('equal', 3, 4, 2, 3)]
        """
        blocks: list[tuple[str, int, int, int, int]] = []
        i = j = 0
        n, m = len(self.reference), len(self.hypothesis)

        def add(tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
            if blocks and blocks[-1][0] == tag and blocks[-1][2] == i1 and blocks[-1][4] == j1:
                blocks[-1] = (tag, blocks[-1][1], i2, blocks[-1][3], j2)
            else:
                blocks.append((tag, i1, i2, j1, j2))

        for tag, src, dest in self.editops:
            if src > i or dest > j:
                add("equal", i, src, j, dest)  # rapidfuzz editops keep src - i == dest - j between operations
            if tag == "replace":
                add("replace", src, src + 1, dest, dest + 1)
                i, j = src + 1, dest + 1
            elif tag == "delete":
                add("delete", src, src + 1, dest, dest)
                i, j = src + 1, dest
            else:
                add("insert", src, src, dest, dest + 1)
                i, j = src, dest + 1
        if i < n or j < m:
            add("equal", i, n, j, m)
        return blocks

    def matching_blocks(self) -> list[tuple[int, int, int]]:
        """The runs of hits as ``(reference index, hypothesis index, length)``, ending with ``(n, m, 0)`` (as
        ``difflib`` gives them; counted by rapidfuzz).

        >>> align_text("abcd", "axd").matching_blocks()
        [(0, 0, 1), (3, 2, 1), (4, 3, 0)]
        """
        ops: list[Any] = list(self.editops)
        blocks = Editops(ops, len(self.reference), len(self.hypothesis)).as_matching_blocks()
        return [(block.a, block.b, block.size) for block in blocks]

    def pairs(self) -> Iterator[AlignedPair]:
        """Every aligned position in order: ``(ref, hyp)`` for hits and substitutions, ``(ref, None)`` for
        deletions, ``(None, hyp)`` for insertions (the raw material of a diff view).

        >>> list(align_text("ab", "b").pairs())
        [('a', None), ('b', 'b')]
        """
        ref, hyp = self.reference, self.hypothesis
        for tag, i1, i2, j1, j2 in self.opcodes():
            if tag in ("equal", "replace"):
                yield from zip(ref[i1:i2], hyp[j1:j2])
            elif tag == "delete":
                for i in range(i1, i2):
                    yield ref[i], None
            else:
                for j in range(j1, j2):
                    yield None, hyp[j]


def _pair_counts(ref: Sequence[Any], hyp: Sequence[Any], editops: Sequence[tuple[str, int, int]],
                 counts: Counter[AlignedPair] | None = None) -> Counter[AlignedPair]:
    """``(ref unit, hyp unit)`` of each operation counted (into ``counts``), in order of first occurrence."""
    counts = Counter() if counts is None else counts
    # a list, not a generator: resuming a generator per operation cost a sixth of the counting (real pages)
    counts.update([(ref[i], hyp[j]) if tag == "replace" else (ref[i], None) if tag == "delete" else (None, hyp[j])
                   for tag, i, j in editops])
    return counts


def _count(editops: list[tuple[str, int, int]], n: int, m: int) -> tuple[int, int, int]:
    """(substitutions, deletions, insertions) of an edit script from ``n`` to ``m`` units: only the substitutions
    are counted (in C); D - I = n - m and S + D + I = len(editops) give the rest."""
    s = countOf(map(itemgetter(0), editops), "replace")
    indels = len(editops) - s
    return s, (indels + n - m) // 2, (indels - n + m) // 2


#: Sequences shorter than this are aligned without a hint (the whole matrix is a few machine words per unit).
HINT_MIN_LENGTH = 256
#: From this length on, a hint is also given when at most 1/HINT_SHARE of the units differ (below it, only when at
#: most 31 do: on short texts the longer probes cost more than the hint saves).
HINT_LONG_LENGTH = 1000
HINT_SHARE = 8
_SMALL_BAND = 31  # a band of 2 * 31 + 1 units fits one 64-bit word: that probe costs about one pass over the text


def score_hint(ref_codes: Units | list[int], hyp_codes: Units | list[int]) -> int | None:
    """The ``score_hint`` to pass to rapidfuzz's ``Levenshtein.editops`` for these two sequences, or ``None``.

    With a hint, rapidfuzz first finds the distance in a band around the diagonal that it doubles from the hint,
    then aligns within that band only: several times faster when few units differ, but up to 1.7x slower on
    high-error text (the distance passes are wasted work there). So the hint is given only when a cheap bound says
    the distance is small: ``Levenshtein.distance`` with a ``score_cutoff`` (rapidfuzz gives up early once the
    distance exceeds it, so a far-apart pair costs a few percent of an alignment) of 31, then, for sequences of at
    least :data:`HINT_LONG_LENGTH` units, of 62, 124, ... up to ``n / HINT_SHARE``. The hint is then that exact
    distance (one band, no doubling); otherwise, and under :data:`HINT_MIN_LENGTH` units, there is none. The hint
    changes only the time: rapidfuzz returns the same edit operations with or without it (a test checks this).

    Args:
        ref_codes: the reference's codes.
        hyp_codes: the hypothesis's codes.

    Returns:
        The hint, or ``None`` when a hint would not pay.

    >>> score_hint("a" * 1000, "a" * 990 + "b" * 10), score_hint("a" * 2000, "a" * 1800 + "b" * 200)
    (10, 200)
    >>> score_hint("a" * 1000, "b" * 1000), score_hint("abc", "abd")
    (None, None)
    """
    n, m = len(ref_codes), len(hyp_codes)
    longest = max(n, m)
    if longest < HINT_MIN_LENGTH:
        return None
    limit = longest // HINT_SHARE if longest >= HINT_LONG_LENGTH else _SMALL_BAND
    cutoff = _SMALL_BAND
    lower = abs(n - m)  # a lower bound of the distance
    while lower <= limit:
        if lower <= cutoff:
            distance = Levenshtein.distance(ref_codes, hyp_codes, score_cutoff=cutoff)
            if distance <= cutoff:
                return max(1, distance)
        if cutoff >= limit:
            break
        cutoff = min(2 * cutoff, limit)
    return None


def _hint_for(distance: int, n: int, m: int) -> int | None:
    """:func:`score_hint`'s decision for a pair whose exact ``distance`` is already known (no probe)."""
    longest = max(n, m)
    if longest < HINT_MIN_LENGTH:
        return None
    limit = longest // HINT_SHARE if longest >= HINT_LONG_LENGTH else _SMALL_BAND
    return max(1, distance) if distance <= limit else None


def _run(ref_units: Units, hyp_units: Units, ref_codes: Units | list[int], hyp_codes: Units | list[int], *,
         hint: int | None | bool = True) -> Alignment:
    """Align with rapidfuzz's ``editops``: ``hint`` True chooses the hint with :func:`score_hint`, else it is given."""
    if hint is True:
        hint = score_hint(ref_codes, hyp_codes)
    ops = cast("list[tuple[str, int, int]]",  # as_list() gives (tag, src, dest) tuples
               Levenshtein.editops(ref_codes, hyp_codes, score_hint=hint).as_list())
    return _alignment(ref_units, hyp_units, ops, len(ref_codes), len(hyp_codes))


def align_units_with_blocks(ref_units: Sequence[str], hyp_units: Sequence[str], ref_codes: list[int],
                            hyp_codes: list[int]) -> tuple[Alignment, Sequence[tuple[int, int, int]]]:
    """:func:`align_units`, also returning the alignment's :meth:`Alignment.matching_blocks` (taken from rapidfuzz's
    result directly: what :func:`align_text_anchored` needs).

    Args:
        ref_units: reference units.
        hyp_units: hypothesis units.
        ref_codes: their codes (:func:`unit_codes`).
        hyp_codes: their codes.

    Returns:
        The :class:`Alignment` and its matching blocks.

    >>> words = ["to", "be", "or"], ["to", "or"]
    >>> align_units_with_blocks(*words, *unit_codes(*words)[:2])[1]
    [MatchingBlock(a=0, b=0, size=1), MatchingBlock(a=2, b=1, size=1), MatchingBlock(a=3, b=2, size=0)]
    """
    editops = Levenshtein.editops(ref_codes, hyp_codes, score_hint=score_hint(ref_codes, hyp_codes))
    ops = cast("list[tuple[str, int, int]]", editops.as_list())
    alignment = _alignment(ref_units, hyp_units, ops, len(ref_codes), len(hyp_codes))
    return alignment, cast("Sequence[tuple[int, int, int]]", editops.as_matching_blocks())


def _alignment(ref_units: Units, hyp_units: Units, ops: list[tuple[str, int, int]], n: int, m: int) -> Alignment:
    s, d, i = _count(ops, n, m)
    return Alignment(ref_units, hyp_units, tuple(ops), s, d, i)


# Characters that can share a grapheme cluster with a neighbour (GB3-GB9b, GB9c linkers, GB11 ZWJ, GB12/13). Between
# two characters outside this class there is always a cluster boundary (GB999), so only the neighbourhood of these
# needs the \X segmentation, which costs about 200 ns per character.
_JOINER = regex.compile(
    r"[\r\p{Grapheme_Cluster_Break=Extend}\p{Grapheme_Cluster_Break=ZWJ}\p{Grapheme_Cluster_Break=SpacingMark}"
    r"\p{Grapheme_Cluster_Break=Prepend}\p{Grapheme_Cluster_Break=Regional_Indicator}\p{Grapheme_Cluster_Break=L}"
    r"\p{Grapheme_Cluster_Break=V}\p{Grapheme_Cluster_Break=T}\p{Grapheme_Cluster_Break=LV}"
    r"\p{Grapheme_Cluster_Break=LVT}\p{Indic_Conjunct_Break=Linker}]"
)
# Where joiners can live. Left out, because every code point there is Grapheme_Cluster_Break=Other and not an Indic
# linker: CJK ideographs (U+3400-4DBF, U+4E00-9FFF, planes 2 and 3), surrogates, private use (U+E000-F8FF, planes 15
# and 16) and the unassigned planes 4-13. A test checks this against a scan of every code point.
_JOINER_SCAN_RANGES = ((0, 0x3400), (0x4DC0, 0x4E00), (0xA000, 0xD800), (0xF900, 0x20000), (0xE0000, 0xE1000))


@lru_cache(maxsize=1)
def _joiner_characters() -> frozenset[str]:
    """Every code point in the joiner class, found once per process with the regex module's own tables (~40 ms)."""
    found: set[str] = set()
    for low, high in _JOINER_SCAN_RANGES:
        found.update(_JOINER.findall("".join(map(chr, range(low, high)))))
    return frozenset(found)


class ClusterSequence(Sequence[str]):
    """The grapheme clusters of a text, stored as ``encoded``: the text with each multi-code-point cluster replaced
    by one placeholder code point (``decode`` maps placeholders back). Indexing and iteration give clusters."""

    __slots__ = ("encoded", "decode")

    def __init__(self, encoded: str, decode: dict[str, str]) -> None:
        self.encoded = encoded
        self.decode = decode

    def __len__(self) -> int:
        return len(self.encoded)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            get = self.decode.get
            return [get(c, c) for c in self.encoded[index]]
        c = self.encoded[index]
        return self.decode.get(c, c)

    def __iter__(self) -> Iterator[str]:
        get = self.decode.get
        return (get(c, c) for c in self.encoded)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ClusterSequence, list, tuple, str)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ClusterSequence({list(self)!r})"


def _placeholders(forbidden: set[str]) -> Iterator[str]:
    # supplementary private use planes 15-16, then the unassigned planes 4-13: never in `forbidden` (both texts)
    for low, high in ((0xF0000, 0x10FFFE), (0x40000, 0xE0000)):
        for code in range(low, high):
            ch = chr(code)
            if ch not in forbidden:
                yield ch


class _ClusterEncoder:
    """Encodes both texts of one alignment with one shared cluster -> placeholder vocabulary."""

    def __init__(self, forbidden: set[str]) -> None:
        self.vocabulary: dict[str, str] = {}
        self.decode: dict[str, str] = {}
        self._fresh = _placeholders(forbidden)

    def code(self, cluster: str) -> str:
        if len(cluster) == 1:
            return cluster
        placeholder = self.vocabulary.get(cluster)
        if placeholder is None:
            placeholder = self.vocabulary[cluster] = next(self._fresh)
            self.decode[placeholder] = cluster
        return placeholder

    def encode(self, text: str, present: AbstractSet[str]) -> Units:
        """The units of ``text`` (``present``: the joiner characters it contains)."""
        if not present:
            return text
        if sum(map(text.count, present)) * 8 > len(text):  # dense (Indic, Thai, decomposed text): segment it all
            clusters = _GRAPHEME.findall(text)
            if len(clusters) == len(text):
                return text
            return ClusterSequence("".join(map(self.code, clusters)), self.decode)
        pieces: list[str] = []
        done = 0  # text[:done] is encoded
        changed = False
        for at in sorted(i for ch in present for i in _occurrences(text, ch)):
            if at < done:
                continue
            # text[start - 1] and text[start] are not joiners (or start == done, a cluster end): a boundary
            start = max(done, at - 1)
            pieces.append(text[done:start])
            for match in _GRAPHEME.finditer(text, start):
                cluster = match.group()
                if len(cluster) > 1:
                    changed = True
                pieces.append(self.code(cluster))
                if match.end() > at:
                    done = match.end()
                    break
        if not changed:
            return text
        pieces.append(text[done:])
        return ClusterSequence("".join(pieces), self.decode)


def _occurrences(text: str, ch: str) -> Iterator[int]:
    at = text.find(ch)
    while at >= 0:
        yield at
        at = text.find(ch, at + 1)


_ASCII_BYTES = bytes(range(128))


def _joiners_in(text: str) -> AbstractSet[str]:
    """The joiner characters ``text`` contains. Of ASCII, only the carriage return is one, so only the non-ASCII
    characters are looked up: its UTF-8 bytes less the ASCII ones, taken out in C (``set(text)`` would cost
    about 10 ns a character)."""
    present: AbstractSet[str] = frozenset("\r") if "\r" in text else frozenset()
    if text.isascii():
        return present
    rest = text.encode("utf-8", "surrogatepass").translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
    if len(rest) < _JOINER_TABLE_FROM:  # a few accents or quotes: searched, the table is not worth its 40 ms
        return present | frozenset(_JOINER.findall(rest))
    return present | _joiner_characters().intersection(rest)


# non-ASCII characters in a text from which the joiner table (built once per process) is used instead of a search
_JOINER_TABLE_FROM = 256


def _codes(units: Units) -> str:
    return units.encoded if isinstance(units, ClusterSequence) else units  # type: ignore[return-value]


def _decoder(units: Units) -> dict[str, str] | None:
    """The placeholder -> cluster map of ``units`` (shared by both sides of an alignment), or ``None``."""
    return units.decode if isinstance(units, ClusterSequence) else None


def encode_text(reference: str, hypothesis: str, *, unit: str = "grapheme") -> tuple[Units, Units, str, str]:
    """The character units of two texts and the two ``str`` rapidfuzz compares in their place (one code point a unit).

    Returns ``(reference units, hypothesis units, reference codes, hypothesis codes)``; ``unit`` is ``"grapheme"``
    or ``"codepoint"``. Without multi-code-point clusters all four are the texts themselves.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.

    Returns:
        ``(reference units, hypothesis units, reference string, hypothesis string)``.

    >>> ref_units, hyp_units, ref_codes, hyp_codes = encode_text("ne\\u0301e", "nee")
    >>> len(ref_units), len(ref_codes), hyp_codes
    (3, 3, 'nee')
    """
    if unit == "codepoint":
        return reference, hypothesis, reference, hypothesis
    if unit != "grapheme":
        raise ValueError(f"unknown unit {unit!r}; valid: grapheme, codepoint")
    if (reference.isascii() and "\r\n" not in reference) and (hypothesis.isascii() and "\r\n" not in hypothesis):
        return reference, hypothesis, reference, hypothesis
    ref_present, hyp_present = _joiners_in(reference), _joiners_in(hypothesis)
    if not ref_present and not hyp_present:
        return reference, hypothesis, reference, hypothesis
    encoder = _ClusterEncoder(set(reference) | set(hypothesis))
    ref_units = encoder.encode(reference, ref_present)
    hyp_units = encoder.encode(hypothesis, hyp_present)
    return ref_units, hyp_units, _codes(ref_units), _codes(hyp_units)


def encode_units(reference: Sequence[str], hypothesis: Sequence[str]) -> tuple[list[int], list[int]]:
    """Each distinct unit (a word, say) as one integer, from one vocabulary for both sides: rapidfuzz then compares
    units exactly, with no hashing.

    Args:
        reference: reference units.
        hypothesis: hypothesis units.

    Returns:
        The two integer code lists.

    >>> encode_units(["to", "be", "or"], ["be", "not"])
    ([0, 1, 2], [1, 3])
    """
    vocabulary: dict[str, int] = {}
    ref_codes = [vocabulary.setdefault(u, len(vocabulary)) for u in reference]
    hyp_codes = [vocabulary.setdefault(u, len(vocabulary)) for u in hypothesis]
    return ref_codes, hyp_codes


def unit_codes(reference: Sequence[str], hypothesis: Sequence[str]) -> tuple[list[int], list[int], int, int]:
    """Like :func:`encode_units`, but the codes need not be consecutive (a unit's code is the position where it first
    occurs, counting the hypothesis after the reference), which lets the encoding run in C; rapidfuzz compares the
    codes exactly either way. Also returns how many distinct units the reference has and both sides have together
    (set sizes that token accuracy needs, for free).

    Args:
        reference: reference units.
        hypothesis: hypothesis units.

    Returns:
        ``(reference codes, hypothesis codes, ...)`` as described above.

    >>> unit_codes(["to", "be", "or"], ["be", "not"])
    ([0, 1, 2], [1, 4], 3, 4)
    """
    vocabulary: dict[str, int] = {}
    code = vocabulary.setdefault
    ref_codes = list(map(code, reference, count()))
    ref_distinct = len(vocabulary)
    hyp_codes = list(map(code, hypothesis, count(len(ref_codes))))
    return ref_codes, hyp_codes, ref_distinct, len(vocabulary)


def align_units(ref_units: Sequence[str], hyp_units: Sequence[str], ref_codes: list[int],
                hyp_codes: list[int]) -> Alignment:
    """Align two unit sequences already encoded with :func:`unit_codes` (or :func:`encode_units`).

    Args:
        ref_units: reference units.
        hyp_units: hypothesis units.
        ref_codes: their codes.
        hyp_codes: their codes.

    Returns:
        The :class:`Alignment`.

    >>> words = ["to", "be"], ["be"]
    >>> align_units(*words, *unit_codes(*words)[:2]).deletions
    1
    """
    return _run(ref_units, hyp_units, ref_codes, hyp_codes)


def align_text(reference: str, hypothesis: str, *, unit: str = "grapheme") -> Alignment:
    """Align two (already normalized) texts character by character; ``unit`` is ``"grapheme"`` or ``"codepoint"``.

    Args:
        reference: the ground truth.
        hypothesis: the OCR output.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.

    Returns:
        The :class:`Alignment` of the two texts' characters.

    >>> a = align_text("ne\\u0301e", "nee")
    >>> a.reference_length, a.substitutions
    (3, 1)
    >>> align_text("ne\\u0301e", "nee", unit="codepoint").deletions
    1
    """
    return _run(*encode_text(reference, hypothesis, unit=unit))


def align_words(reference: Sequence[str], hypothesis: Sequence[str]) -> Alignment:
    """Align two token sequences (words), each distinct token mapped to one integer.

    Args:
        reference: reference words.
        hypothesis: hypothesis words.

    Returns:
        The :class:`Alignment` of the words.

    >>> a = align_words("the cat sat".split(), "the hat sat down".split())
    >>> a.substitutions, a.insertions, a.confusions
    (1, 1, Counter({('cat', 'hat'): 1, (None, 'down'): 1}))
    """
    return align(reference, hypothesis)


def align(reference: Sequence[str], hypothesis: Sequence[str]) -> Alignment:
    """Align two sequences of arbitrary string units (each distinct unit mapped to one integer).

    Args:
        reference: reference units.
        hypothesis: hypothesis units.

    Returns:
        The :class:`Alignment` (counts and edit operations).

    >>> align(["ab", "c"], ["ab", "d"]).editops
    (('replace', 1, 1),)
    """
    return _run(reference, hypothesis, *unit_codes(reference, hypothesis)[:2])


# --- anchored character alignment --------------------------------------------------------------------------------
#
# rapidfuzz's editops fills the whole n x m matrix (bit-parallel) and keeps it for the traceback; on a long page that
# costs more than everything else the metrics do. A cheap alignment of the lines (or, on long texts, the word
# alignment made anyway for WER) says which long runs of text both sides share. Taking those runs as fixed matches
# and aligning only the pieces between them costs a small part of the matrix. That alignment is kept only when it is
# optimal: its cost is compared with the exact distance (``Levenshtein.distance`` with the cost as ``score_cutoff``:
# a banded pass, a fraction of an alignment), and when it is not optimal (a run the character alignment would not
# match as a whole) the texts are aligned as a whole as before. Distances and rates never change; which of several
# optimal alignments is picked may.

#: Character alignments whose longer side has fewer units than this are never anchored (the whole matrix is cheap).
ANCHOR_MIN_LENGTH = 1500
#: From this many units on, the anchors are runs of matched words (more of them, each costing more Python work to
#: find); below it, runs of equal lines.
WORD_ANCHOR_MIN_LENGTH = 10_000
#: A run of equal lines is an anchor from this many characters on (its line breaks included): a line alignment
#: matches whole lines, which rarely mislead the character alignment, but an empty or one-character line may.
LINE_ANCHOR_MIN_CHARS = 8
#: A run of matched words is an anchor only when it spans at least this many characters (shorter runs, a lone "1"
#: or "RM", are often matched by the word alignment where the best character alignment does not match them).
ANCHOR_MIN_CHARS = 12

_ASCII_SPACES = str.maketrans("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f", " " * 9)  # every ASCII str.isspace() character
_EXTRA_SPACE = re.compile(r"^\s+|\s\s+")  # whitespace beyond one separator between words (\s is str.isspace)


def word_starts(text: str, words: Sequence[str]) -> list[int] | None:
    """Where each word of ``text.split()`` (``words``) starts in ``text``, or ``None`` when ``words`` are not
    ``text``'s whitespace words.

    Computed in C from the words' lengths when one whitespace character separates them (the common case) or the
    whitespace is spaces and line breaks only (from the pieces of one split on a space); otherwise each longer
    whitespace run (found by a regex) shifts the words after it.

    Args:
        text: the text.
        words: ``text.split()``.

    Returns:
        The start offsets, one per word, or ``None``.

    >>> word_starts("ab  c\\nd", ["ab", "c", "d"])
    [0, 4, 6]
    """
    if not words:
        return []
    lengths = list(accumulate(map(len, words), initial=0))  # of the words before each
    starts = list(map(add, lengths, range(len(words))))  # if one whitespace character separates them
    shift = 0
    breaks: list[tuple[int, int]] = []  # (first word index, shift of the words from there on)
    spaces = len(text) - lengths[-1]
    if spaces == len(words) - 1 or spaces == len(words) and text[-1].isspace():
        runs: Iterator[re.Match[str]] = iter(())  # one separator each (and maybe one trailing): no longer run
    elif text.isascii() or text.count(" ") + text.count("\n") == spaces:  # split on one character
        # one space for each whitespace character (ASCII: translated in C; else only spaces and line breaks)
        parts = (text.translate(_ASCII_SPACES) if text.isascii() else text.replace("\n", " ")).split(" ")
        starts = list(compress(map(add, accumulate(map(len, parts), initial=0), range(len(parts))), parts))
        runs = iter(())
    else:
        runs = _EXTRA_SPACE.finditer(text)
    for match in runs:
        at, end = match.span()
        if at > starts[-1] + shift + len(words[-1]) - 1:
            break  # trailing whitespace
        first = bisect_right(starts, at - shift) if at else 0  # a leading run shifts every word
        shift += end - at - (at > 0)
        breaks.append((first, shift))
    for (first, extra), (stop, _) in zip(breaks, [*breaks[1:], (len(starts), 0)]):
        starts[first:stop] = map(extra.__add__, starts[first:stop])
    last = starts[-1]
    if last + len(words[-1]) > len(text) or text[last:last + len(words[-1])] != words[-1]:
        return None
    return starts


def _anchors(ref: str, hyp: str, ref_words: Sequence[str], hyp_words: Sequence[str],
             blocks: Sequence[tuple[int, int, int]]) -> list[tuple[int, int, int, int]] | None:
    """``(ref start, ref end, hyp start, hyp end)`` of equal, increasing character spans: the runs of matched words
    (``blocks``: the word alignment's ``(ref word, hyp word, count)`` matching blocks) of at least
    :data:`ANCHOR_MIN_CHARS` characters whose text is the same on both sides (runs whose whitespace differs are cut
    where it does)."""
    ref_starts, hyp_starts = word_starts(ref, ref_words), word_starts(hyp, hyp_words)
    if ref_starts is None or hyp_starts is None:
        return None
    anchors: list[tuple[int, int, int, int]] = []
    for a, b, size in blocks:
        last = size - 1
        if size <= 0 or ref_starts[a + last] + len(ref_words[a + last]) - ref_starts[a] < ANCHOR_MIN_CHARS:
            continue
        rs, hs = ref_starts[a], hyp_starts[b]
        re_, he = ref_starts[a + last] + len(ref_words[a + last]), hyp_starts[b + last] + len(hyp_words[b + last])
        if ref[rs:re_] == hyp[hs:he]:
            anchors.append((rs, re_, hs, he))
            continue
        start = 0  # the separators differ somewhere: cut the run there
        for k in range(size):
            if k < last and ref[ref_starts[a + k] + len(ref_words[a + k]):ref_starts[a + k + 1]] == \
                    hyp[hyp_starts[b + k] + len(hyp_words[b + k]):hyp_starts[b + k + 1]]:
                continue
            rs, re_ = ref_starts[a + start], ref_starts[a + k] + len(ref_words[a + k])
            hs, he = hyp_starts[b + start], hyp_starts[b + k] + len(hyp_words[b + k])
            if re_ - rs >= ANCHOR_MIN_CHARS and ref[rs:re_] == hyp[hs:he]:  # words of codes may still differ
                anchors.append((rs, re_, hs, he))
            start = k + 1
    return anchors


def anchored_editops(ref: str, hyp: str, anchors: Sequence[tuple[int, int, int, int]]) -> list[tuple[str, int, int]]:
    """An edit script from ``ref`` to ``hyp`` that matches every anchor span as a whole: the pieces between anchors
    are aligned one by one (each optimally); its cost is an upper bound of the distance.

    Args:
        ref: the reference codes.
        hyp: the hypothesis codes.
        anchors: ``(ref start, ref end, hyp start, hyp end)`` of equal spans, increasing, not overlapping.

    Returns:
        rapidfuzz-style ``(tag, ref index, hyp index)`` operations, in order.

    >>> anchored_editops("xx same text yy", "x same text zyy", [(3, 12, 2, 11)])
    [('delete', 1, 1), ('insert', 13, 12)]
    """
    return _joined(_pieces(ref, hyp, anchors))


# (ref offset, hyp offset, edit operations of the piece, the piece of the reference, the piece of the hypothesis)
Pieces = list[tuple[int, int, list[tuple[str, int, int]], str, str]]


def _pieces(ref: str, hyp: str, anchors: Sequence[tuple[int, int, int, int]]) -> Pieces:
    """The edit operations of each piece between anchors, relative to the piece's start."""
    pieces: Pieces = []
    editops = Levenshtein.editops
    i = j = 0
    for rs, re_, hs, he in [*anchors, (len(ref), len(ref), len(hyp), len(hyp))]:
        if rs < i or hs < j:
            continue  # not increasing: not an anchor
        a, b = ref[i:rs], hyp[j:hs]
        if a != b:
            ops = editops(a, b, score_hint=score_hint(a, b)).as_list()  # a long, similar piece: banded
            pieces.append((i, j, cast("list[tuple[str, int, int]]", ops), a, b))
        i, j = re_, he
    return pieces


def _joined(pieces: Pieces) -> list[tuple[str, int, int]]:
    """The pieces' edit operations at their places in the whole texts."""
    ops: list[tuple[str, int, int]] = []
    extend = ops.extend
    for i, j, piece, _, _ in pieces:
        extend([(tag, x + i, y + j) for tag, x, y in piece] if i or j else piece)
    return ops


class _PiecewiseAlignment(Alignment):
    """An :class:`Alignment` made of pieces: its ``editops`` (one Python step per operation to place) are joined
    when first read, so that a caller reading only the counts does not pay for them, and its confusions are counted
    from the pieces (without placing the operations) until then."""

    def __init__(self, reference: Units, hypothesis: Units, pieces: Pieces, n: int, m: int) -> None:
        operations = [piece for _, _, piece, _, _ in pieces]
        s = sum([countOf(map(itemgetter(0), piece), "replace") for piece in operations])  # no joined list
        indels = sum(map(len, operations)) - s
        for name, value in (("reference", reference), ("hypothesis", hypothesis), ("substitutions", s),
                            ("deletions", (indels + n - m) // 2), ("insertions", (indels - n + m) // 2),
                            ("_pieces", pieces)):
            object.__setattr__(self, name, value)

    @property
    def editops(self) -> tuple[tuple[str, int, int], ...]:
        state = self.__dict__
        ops: tuple[tuple[str, int, int], ...] | None = state.get("_editops")
        if ops is None:
            pieces = state.get("_pieces")
            if pieces is None:  # another thread joined them between the two reads
                return cast("tuple[tuple[str, int, int], ...]", state["_editops"])
            ops = state["_editops"] = tuple(_joined(pieces))  # kept first, then the pieces freed
            state.pop("_pieces", None)
        return ops

    def _code_confusions(self) -> Counter[AlignedPair]:
        pieces = self.__dict__.get("_pieces")
        if pieces is None:  # the edit operations were joined already
            return super()._code_confusions()
        counts: Counter[AlignedPair] = Counter()
        for _, _, piece, ref, hyp in pieces:  # each piece's operations index its own texts: nothing to place
            _pair_counts(ref, hyp, piece, counts)
        return counts


def _line_anchors(ref: str, hyp: str) -> list[tuple[int, int, int, int]]:
    """The runs of equal lines (line breaks included) of an optimal alignment of the two texts' lines, of at least
    :data:`LINE_ANCHOR_MIN_CHARS` characters, as ``(ref start, ref end, hyp start, hyp end)``.

    rapidfuzz compares the lines by their hashes (a third cheaper than coding them exactly with :func:`unit_codes`);
    each run is then compared as text, so that two different lines of equal hash never make an anchor (an anchor
    only has to be equal text: the anchored alignment is kept only when it is optimal)."""
    ref_lines, hyp_lines = ref.splitlines(keepends=True), hyp.splitlines(keepends=True)
    ref_ends = list(accumulate(map(len, ref_lines), initial=0))
    hyp_ends = list(accumulate(map(len, hyp_lines), initial=0))
    return [(rs, re_, hs, he)
            for a, b, size in Levenshtein.editops(ref_lines, hyp_lines).as_matching_blocks()
            if size and (re_ := ref_ends[a + size]) - (rs := ref_ends[a]) >= LINE_ANCHOR_MIN_CHARS
            and ref[rs:re_] == hyp[(hs := hyp_ends[b]):(he := hyp_ends[b + size])]]


def align_text_anchored(reference: str, hypothesis: str, ref_words: Sequence[str] | None = None,
                        hyp_words: Sequence[str] | None = None,
                        word_blocks: Sequence[tuple[int, int, int]] | None = None, *,
                        unit: str = "grapheme") -> Alignment:
    """:func:`align_text`, made cheaper on long texts by anchors: the same distance and counts of an optimal
    alignment (which one may differ when several are optimal).

    Anchors are spans both texts share, kept as matches, so that only the text between them is aligned
    (:func:`anchored_editops`): below :data:`WORD_ANCHOR_MIN_LENGTH` units (or without words), the runs of equal
    lines of a line alignment (of at least :data:`LINE_ANCHOR_MIN_CHARS` characters); from there on, the runs of
    words a word alignment matched (``word_blocks``, its matching blocks, of ``ref_words`` = ``reference.split()``
    and ``hyp_words`` = ``hypothesis.split()``; of at least :data:`ANCHOR_MIN_CHARS` characters). The result is
    kept when its cost equals the exact Levenshtein distance; otherwise, and when the texts are shorter than
    :data:`ANCHOR_MIN_LENGTH`, the texts are aligned as a whole, as :func:`align_text` does. Multi-code-point
    grapheme clusters are anchored on their codes (one placeholder code point each, :func:`encode_text`).

    Args:
        reference: the ground truth (normalized).
        hypothesis: the OCR output (normalized).
        ref_words: ``reference.split()``, or None (line anchors).
        hyp_words: ``hypothesis.split()``, or None.
        word_blocks: the matching blocks ``(ref word, hyp word, count)`` of an alignment of the two word lists.
        unit: ``"grapheme"`` (default) or ``"codepoint"``.

    Returns:
        The :class:`Alignment` of the two texts' characters.

    >>> ref = "INVOICE NUMBER 12345\\n" * 100
    >>> hyp = ref.replace("NUMBER 12345\\nINVOICE", "NUMBFR 12345\\nINV0ICE", 3)
    >>> a = align_text_anchored(ref, hyp)
    >>> a.distance == Levenshtein.distance(ref, hyp) == 6, a.substitutions
    (True, 6)
    """
    ref_units, hyp_units, ref_codes, hyp_codes = encode_text(reference, hypothesis, unit=unit)
    n, m = len(ref_codes), len(hyp_codes)
    if max(n, m) < ANCHOR_MIN_LENGTH:
        return _run(ref_units, hyp_units, ref_codes, hyp_codes)
    ref_text, hyp_text = cast(str, ref_codes), cast(str, hyp_codes)
    if max(n, m) >= WORD_ANCHOR_MIN_LENGTH and ref_words is not None and hyp_words is not None and word_blocks:
        anchors = _word_anchors(reference, hypothesis, ref_text, hyp_text, ref_words, hyp_words, word_blocks)
    else:
        anchors = _line_anchors(ref_text, hyp_text)
    if not anchors:
        return _run(ref_units, hyp_units, ref_codes, hyp_codes)
    pieces = _pieces(ref_text, hyp_text, anchors)
    cost = sum(len(piece) for _, _, piece, _, _ in pieces)
    distance = Levenshtein.distance(ref_codes, hyp_codes, score_cutoff=cost)  # exact: the cost is a bound
    if distance == cost:
        return _PiecewiseAlignment(ref_units, hyp_units, pieces, n, m)
    return _run(ref_units, hyp_units, ref_codes, hyp_codes, hint=_hint_for(distance, n, m))


def _word_anchors(reference: str, hypothesis: str, ref_codes: str, hyp_codes: str, ref_words: Sequence[str],
                  hyp_words: Sequence[str], word_blocks: Sequence[tuple[int, int, int]]
                  ) -> list[tuple[int, int, int, int]] | None:
    """:func:`_anchors` on the codes: multi-code-point clusters are one placeholder each there, so their words are
    the texts' words encoded (the same count, unless a cluster joined whitespace: then none)."""
    ref_code_words = ref_words if ref_codes is reference else ref_codes.split()
    hyp_code_words = hyp_words if hyp_codes is hypothesis else hyp_codes.split()
    if len(ref_code_words) != len(ref_words) or len(hyp_code_words) != len(hyp_words):
        return None
    return _anchors(ref_codes, hyp_codes, ref_code_words, hyp_code_words, word_blocks)
