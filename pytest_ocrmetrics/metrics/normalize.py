"""Normalization profiles: what is done to both texts before they are compared.

A profile is a small, frozen, named recipe of steps. It is recorded in every metric result, so two numbers are only
compared when they were computed under the same profile.

Profiles are written as a ``+``-joined list of step names, applied in a fixed order whatever the order written::

    >>> from pytest_ocrmetrics.metrics.normalize import get_profile
    >>> p = get_profile("nfc+casefold+whitespace")
    >>> p("  Straße\\n  ABC ")
    'strasse abc'
    >>> get_profile("none")("e\\u0301") == "e\\u0301"
    True

Steps (in the order they are applied):

========== ==========================================================================================
markdown   a VLM's Markdown as plain text: drop images (``![alt](src)``) and LaTeX delimiters (``$``, ``$$``,
           ``\\(``, ``\\)``, ``\\[``, ``\\]``), then everything ``markup`` does
markup     remove Markdown and HTML markup (tags, entities, emphasis, headings, table pipes, code fences)
nfc        Unicode NFC composition (``nfkc``, ``nfd``, ``nfkd`` are also accepted; only one form at once)
quotes     fold typographic quotes, TeX quotes (two backticks or apostrophes become ", one backtick becomes '),
           dashes and hyphens to their ASCII forms
casefold   ``str.casefold`` (full Unicode case folding: "ß" becomes "ss")
lowercase  ``str.lower`` (simple lowercasing; ``casefold`` is usually what you want)
punctuation remove every character of Unicode category P* (punctuation)
whitespace collapse every run of whitespace into one space and strip both ends
lines      like ``whitespace`` but keep line breaks (collapse spaces inside lines, drop empty lines)
strip      remove leading and trailing whitespace (jiwer's ``Strip``, part of its default CER transform)
========== ==========================================================================================

Presets: ``none`` (nothing at all), ``nfc`` (the default: only NFC), ``nfkc``, ``lenient``
(``nfkc+quotes+casefold+punctuation+whitespace``), ``model-output`` (``markup+nfc+lines``, for Markdown/HTML model output).
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union, cast

__all__ = ["NormalizationProfile", "get_profile", "strip_punctuation", "PRESETS", "STEPS", "ProfileLike"]

_UNICODE_FORMS = ("nfc", "nfkc", "nfd", "nfkd")
STEPS: tuple[str, ...] = (
    "markdown",
    "markup",
    *_UNICODE_FORMS,
    "quotes",
    "casefold",
    "lowercase",
    "punctuation",
    "whitespace",
    "lines",
    "strip",
)
PRESETS: dict[str, str] = {
    "none": "",
    "nfc": "nfc",
    "nfkc": "nfkc",
    "lenient": "nfkc+quotes+casefold+punctuation+whitespace",
    "model-output": "markup+nfc+lines",
}

_QUOTE_TABLE = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
        "\u2039": "'", "\u203a": "'", "`": "'",
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
        "\u2e17": "-", "\u00ad": "",
    }
)
_TEX_QUOTES = re.compile(r"``|''")
_WHITESPACE = re.compile(r"\s+")
_INLINE_SPACE = re.compile(r"[^\S\n]+")

# Markdown / HTML markup, as vision-language models emit it.
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_BLOCK_BREAK = re.compile(r"<\s*(br|/p|/div|/tr|/li|/h[1-6]|/table|/thead|/tbody)\s*/?\s*>", re.I)
_HTML_CELL_BREAK = re.compile(r"<\s*/t[dh]\s*>", re.I)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(\s[^<>]*)?/?>")
_MD_FENCE = re.compile(r"^\s*(```|~~~)[^\n]*$", re.M)
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.M)
_MD_LIST = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.M)
_MD_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_MD_RULE = re.compile(r"^\s*(?:[-*_]\s*){3,}$", re.M)
_MD_TABLE_SEP = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$", re.M)
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_MD_IMAGE_WHOLE = re.compile(r"!\[[^\]]*\]\([^)]*\)|<img\b[^>]*>", re.I)
_MD_LATEX_DELIMITER = re.compile(r"\$\$|(?<!\\)\$|\\[()\[\]]")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~|`)(?=\S)(.+?)(?<=\S)\1")
_MD_TABLE_PIPE = re.compile(r"^[ \t]*\|[ \t]*|[ \t]*\|[ \t]*$", re.M)
_MD_INNER_PIPE = re.compile(r"[ \t]*\|[ \t]*")


def _strip_markup(text: str) -> str:
    # every line break (\r\n, \x1e, \u2028, ...) as "\n", so the line-anchored patterns below see every line start
    text = "\n".join(text.splitlines())
    text = _HTML_COMMENT.sub("", text)
    text = _HTML_BLOCK_BREAK.sub("\n", text)
    text = _HTML_CELL_BREAK.sub(" ", text)
    text = _HTML_TAG.sub("", text)
    text = html.unescape(text)
    text = _MD_FENCE.sub("", text)
    text = _MD_TABLE_SEP.sub("", text)
    text = _MD_RULE.sub("", text)
    text = _MD_HEADING.sub("", text)
    text = _MD_QUOTE.sub("", text)
    text = _MD_LIST.sub("", text)
    text = _MD_IMAGE.sub(r"\1", text)
    text = _MD_LINK.sub(r"\1", text)
    for _ in range(2):  # nested emphasis such as ***x***
        text = _MD_EMPHASIS.sub(r"\2", text)
    text = _MD_TABLE_PIPE.sub("", text)
    text = _MD_INNER_PIPE.sub(" ", text)
    return text


@lru_cache(maxsize=1)
def _punctuation_runs() -> Any:
    import regex  # on first use, so that importing the metrics package stays fast

    return regex.compile(r"\p{P}+")


def strip_punctuation(text: str, replacement: str = "") -> str:
    """Replace every run of punctuation (Unicode category P*) in ``text`` with ``replacement``.

    The one definition of punctuation in the metrics: the ``punctuation`` step, ``word_match`` and field value
    normalization all use it. Categories come from the ``regex`` module's Unicode tables (the ones that also segment
    grapheme clusters), about 50 times faster than asking ``unicodedata`` character by character.

    Args:
        text: the text.
        replacement: what each run of punctuation becomes.

    Returns:
        The text without punctuation.

    >>> strip_punctuation("¿Qué? «Sí», 12.50 $"), strip_punctuation("NO.53,JALAN", " ")
    ('Qué Sí 1250 $', 'NO 53 JALAN')
    """
    if replacement:
        return cast(str, _punctuation_runs().sub(replacement, text))
    if text.isascii():
        return str(text.encode("ascii").translate(None, _ASCII_PUNCTUATION), "ascii")
    # Removing every punctuation character (runs or not): the ASCII ones from the UTF-8 bytes in C (an ASCII byte is
    # never part of a longer UTF-8 sequence), the few distinct non-ASCII ones found by the same regex, each with
    # str.replace; about 20 times faster than the regex over the whole text
    data = text.encode("utf-8", "surrogatepass")
    rest = data.translate(None, _ASCII_BYTES)
    stripped = data.translate(None, _ASCII_PUNCTUATION).decode("utf-8", "surrogatepass")
    if rest:
        for run in _punctuation_runs().findall("".join(set(rest.decode("utf-8", "surrogatepass")))):
            for mark in run:  # distinct characters, adjacent here only by chance
                stripped = stripped.replace(mark, "")
    return stripped


_ASCII_BYTES = bytes(range(128))
# the ASCII characters of Unicode category P* (\p{P}); a test checks this against the regex
_ASCII_PUNCTUATION = b"""!"#%&'()*,-./:;?@[\\]_{}"""


@dataclass(frozen=True)
class NormalizationProfile:
    """A normalization recipe, applied identically to reference and hypothesis.

    ``name`` is the canonical spec string (steps in application order, joined by ``+``; ``"none"`` when empty).
    Call the profile on a string to normalize it; it is idempotent.
    """

    name: str
    unicode_form: str | None = "NFC"
    markup: bool = False
    markdown: bool = False  # markup, plus images and LaTeX delimiters removed
    quotes: bool = False
    casefold: bool = False
    lowercase: bool = False
    punctuation: bool = False
    whitespace: bool = False
    lines: bool = False
    strip: bool = False

    def __call__(self, text: str) -> str:
        if not (self.markup or self.markdown):
            return self._apply(text)
        # markup removal is heuristic: removing one layer can expose another ("> > quote", "    # x" once stripped),
        # so repeat until nothing changes, which keeps the profile idempotent
        for _ in range(8):
            normalized = self._apply(text)
            if normalized == text:
                break
            text = normalized
        return text

    def _apply(self, text: str) -> str:
        if self.markdown:
            text = _strip_markup(_MD_LATEX_DELIMITER.sub("", _MD_IMAGE_WHOLE.sub("", text)))
        elif self.markup:
            text = _strip_markup(text)
        if self.unicode_form:
            text = unicodedata.normalize(self.unicode_form, text)  # type: ignore[arg-type]
        if self.quotes:
            text = _TEX_QUOTES.sub('"', text).translate(_QUOTE_TABLE)
        if self.casefold:  # on ASCII, casefold() is lower(), which has a faster path there
            text = text.lower() if text.isascii() else text.casefold()
        if self.lowercase:
            text = text.lower()
        if self.punctuation:
            text = strip_punctuation(text)
        if self.whitespace:
            text = _WHITESPACE.sub(" ", text).strip()
        elif self.lines:
            lines = (_INLINE_SPACE.sub(" ", line).strip() for line in text.splitlines())
            text = "\n".join(line for line in lines if line)
        if self.strip:
            text = text.strip()
        if self.unicode_form and (self.casefold or self.punctuation or self.markup or self.markdown):
            # casefold and friends can denormalize ("ǰ".casefold() is j + combining caron); renormalize for idempotence
            text = unicodedata.normalize(self.unicode_form, text)  # type: ignore[arg-type]
        return text

    @property
    def is_identity(self) -> bool:
        return self.name == "none"

    def line_preserving(self) -> NormalizationProfile:
        """This profile with ``whitespace`` replaced by ``lines``, so line breaks survive (used for line metrics).

        >>> get_profile("nfc+casefold+whitespace").line_preserving().name
        'nfc+casefold+lines'
        """
        if not self.whitespace:
            return self
        steps = [s for s in self.name.split("+") if s != "whitespace"] + ["lines"]
        return _parse("+".join(steps))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name}

    def __str__(self) -> str:
        return self.name


ProfileLike = Union[str, NormalizationProfile, None]


@lru_cache(maxsize=256)
def _parse(spec: str) -> NormalizationProfile:
    steps: list[str] = []
    for part in spec.replace(",", "+").split("+"):
        part = part.strip().lower()
        if not part:
            continue
        if part in PRESETS:
            steps.extend(s for s in PRESETS[part].split("+") if s)
        elif part in STEPS:
            steps.append(part)
        else:
            from pytest_ocrmetrics.core.hints import did_you_mean  # only for the error

            names = sorted(set(STEPS) | set(PRESETS))
            raise ValueError(f"unknown normalization step {part!r} in {spec!r}{did_you_mean(part, names)}; valid "
                             f"steps and presets: {', '.join(names)}")
    forms = sorted({s for s in steps if s in _UNICODE_FORMS})
    if len(forms) > 1:
        raise ValueError(f"normalization {spec!r} names several Unicode forms ({', '.join(forms)}); pick one")
    ordered = [s for s in STEPS if s in steps]
    name = "+".join(ordered) or "none"
    return NormalizationProfile(
        name=name,
        unicode_form=forms[0].upper() if forms else None,
        markup="markup" in steps,
        markdown="markdown" in steps,
        quotes="quotes" in steps,
        casefold="casefold" in steps,
        lowercase="lowercase" in steps,
        punctuation="punctuation" in steps,
        whitespace="whitespace" in steps,
        lines="lines" in steps and "whitespace" not in steps,
        strip="strip" in steps,
    )


def get_profile(spec: ProfileLike = "nfc") -> NormalizationProfile:
    """Return the profile for ``spec``: a profile, a preset or ``+``-joined steps; ``None`` means the default ``nfc``.

    Args:
        spec: a profile, a preset name or ``+``-joined steps.

    Returns:
        The :class:`NormalizationProfile`.

    >>> get_profile("casefold+nfc").name
    'nfc+casefold'

    An unknown step raises ``ValueError`` naming the valid ones.
    """
    if isinstance(spec, NormalizationProfile):
        return spec
    if spec is None:
        spec = "nfc"
    if not isinstance(spec, str):
        raise TypeError(f"normalize must be a profile name or NormalizationProfile, not {type(spec).__name__}")
    return _parse(spec)
