"""OmniDocBench's per-category normalisation: text blocks, display formulas and HTML tables.

Each function reproduces the rule the benchmark applies before it compares a ground-truth block with a predicted one
(``utils/data_preprocess.py`` of OmniDocBench); the rules are restated here, not imported, so the product does not
depend on the benchmark's code. The quirks are the benchmark's and are kept on purpose: a score that differs from the
leaderboard's is worth less than a tidier rule.
"""

from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from typing import Callable

# a `$...$` or `\(...\)` span on one line: the benchmark's inline-formula pattern
INLINE_FORMULA = re.compile(r"\$(.*?)\$|\\\((.*?)\\\)")
_ESCAPED = re.compile(r"\\([\\_&%^])")
_NOT_WORD = re.compile(r"[^\w\u4e00-\u9fff]")

# removed from a formula before comparing, in this order (`\text` twice, as the benchmark lists it)
_FORMULA_NOISE = (
    "\\mathbf", "\\mathrm", "\\mathnormal", "\\mathit", "\\mathbb", "\\mathcal", "\\mathscr", "\\mathfrak", "\\mathsf",
    "\\mathtt", "\\textbf", "\\text", "\\boldmath", "\\boldsymbol", "\\operatorname", "\\bm", "\\symbfit",
    "\\mathbfcal", "\\symbf", "\\scriptscriptstyle", "\\notag", "\\setlength", "\\coloneqq", "\\space",
    "\\thickspace", "\\thinspace", "\\medspace", "\\nobreakspace", "\\negmedspace", "\\quad", "\\qquad",
    "\\enspace", "\\substackw", " ", "$$", "\\left", "\\right", "\\displaystyle", "\\text",
)
_DISPLAY_BRACKETS = re.compile(r"\\\[(.+?)(?<!\\)\\\]")
_FORMULA_DROPS = tuple(re.compile(p) for p in (
    r"\\tag\{.*?\}", r"\\hspace\{.*?\}", r"\\begin\{.*?\}", r"\\end\{.*?\}", r"\\arraycolsep.*?\}"))


@lru_cache(maxsize=1)
def _latex_to_text() -> Callable[[str], str]:  # pylatexenc on first use: `import pytest_ocrmetrics` stays light
    from pylatexenc.latex2text import LatexNodes2Text  # type: ignore[import-untyped,import-not-found,unused-ignore]

    to_text: Callable[[str], str] = LatexNodes2Text().latex_to_text
    return to_text


@lru_cache(maxsize=4096)
def latex_to_unicode(latex: str) -> str:
    """LaTeX to plain Unicode text with pylatexenc, as the benchmark does for inline formulas and text-like formulas.

    Args:
        latex: a LaTeX fragment.

    Returns:
        Its text rendering (``\\alpha`` -> ``α``).
    """
    return _latex_to_text()(latex)


def clean_text(text: str) -> str:
    """Keep only word characters (letters, digits, underscore, CJK): the benchmark's text-block normalisation.

    Args:
        text: a text block (after :func:`inline_formulas_to_unicode`).

    Returns:
        The text without spaces, punctuation, tabs or newlines (also the two-character ``\\t``, ``\\n``, ``/t``, ``/n``).

    >>> clean_text("Hello, world!\\n2024")
    'Helloworld2024'
    """
    for noise in ("\\t", "\\n", "\t", "\n", "/t", "/n"):
        text = text.replace(noise, "")
    return _NOT_WORD.sub("", text)


def inline_formulas_to_unicode(text: str) -> str:
    """Replace each inline formula that has a ``\\``, ``^`` or ``_`` by its Unicode rendering; others stay as written.

    Args:
        text: a text block, possibly with ``$...$`` or ``\\(...\\)`` spans.

    Returns:
        The text with those formulas rendered (a formula pylatexenc cannot render is left unchanged).
    """
    replacements: list[tuple[int, int, str]] = []
    for match in INLINE_FORMULA.finditer(text):
        content = match.group(1) if match.group(1) is not None else match.group(2)
        content = _ESCAPED.sub("", content)
        if not any(char in content for char in "\\^_"):
            continue
        if content.endswith("\\"):
            content += " "
        try:
            rendered = latex_to_unicode(content)
        except Exception:  # noqa: BLE001, S112 - the benchmark skips any formula its renderer rejects
            continue
        replacements.append((match.start(), match.end(), rendered))
    for start, end, rendered in reversed(replacements):
        text = text[:start] + rendered.strip() + text[end:]
    return text


def normalize_text_block(text: str) -> str:
    """The text-block normalisation: inline formulas to Unicode, then :func:`clean_text`.

    Args:
        text: a ground-truth or predicted text block.

    Returns:
        The normalised text compared by the edit distance.
    """
    return clean_text(inline_formulas_to_unicode(text))


def normalize_formula(latex: str) -> str:
    """The display-formula normalisation: delimiters, tags, environments, font and spacing commands removed, lower case.

    Args:
        latex: a formula, with or without ``$$``/``\\[ \\]`` delimiters.

    Returns:
        The normalised formula compared by the edit distance.

    >>> normalize_formula("\\\\[ \\\\mathbf{x} = 1 \\\\tag{2} \\\\]")
    '{x}=1'
    """
    text = latex.strip().strip("$").strip("\n")
    bracketed = _DISPLAY_BRACKETS.search(text)
    if bracketed:
        text = bracketed.group(1).strip()
    for pattern in _FORMULA_DROPS:
        text = pattern.sub("", text)
    text = text.strip(".")
    for noise in _FORMULA_NOISE:
        text = text.replace(noise, "")
    return text.lower()


_TABLE_BODY = re.compile(r"<table\b[^>]*>(.*)</table>", re.DOTALL | re.IGNORECASE)
_TABLE_ATTRIBUTES = tuple(re.compile(f'( {name}=".*?")') for name in ("style", "height", "width", "align", "class"))
_TBODY = re.compile("</?tbody>")
_SPACES = re.compile(r"\s+")
_COLGROUP = re.compile("<colgroup>.*?</colgroup>")


def _simplify_table_markup(markup: str) -> str:
    """``th`` -> ``td``; ``thead``/``span`` unwrapped; MathML ``<math alttext>`` -> ``$alttext$`` (html.parser)."""
    from bs4 import BeautifulSoup  # type: ignore[import-untyped,import-not-found,unused-ignore]

    soup = BeautifulSoup(markup, "html.parser")
    for cell in soup.find_all("th"):
        cell.name = "td"
    for head in soup.find_all("thead"):
        head.unwrap()
    for math in soup.find_all("math"):
        math.replace_with(f"${math.get('alttext', '')}$")
    for span in soup.find_all("span"):
        span.unwrap()
    return str(soup)


def normalize_html_table(markup: str) -> str:
    """The table normalisation: one canonical ``<html><body><table border="1" >…</table></body></html>`` string.

    Entities are unescaped, NFKC applied, presentation attributes (style, height, width, align, class), ``tbody``,
    ``sup``/``sub``/``span``/``div``/``p`` tags and ``colgroup`` removed, whitespace collapsed. Text outside the first
    ``<table`` … last ``</table>`` is dropped.

    Args:
        markup: an HTML table (ground truth, or a prediction's HTML or converted pipe table).

    Returns:
        The normalised table, or ``""`` when the markup holds no ``<table``.
    """
    if "<table" not in markup.replace(" ", "").replace("'", '"'):
        return ""
    table = html.unescape(_simplify_table_markup(markup)).replace("\n", "")
    table = unicodedata.normalize("NFKC", table).strip()
    table = "".join(_TABLE_BODY.findall(table))
    for pattern in _TABLE_ATTRIBUTES:
        table = pattern.sub("", table)
    table = _TBODY.sub("", table)
    table = _SPACES.sub(" ", table)
    table = '<html><body><table border="1" >' + table + "</table></body></html>"
    for tag in ("sup", "sub", "span", "div", "p"):
        table = table.replace(f"<{tag}>", "").replace(f"</{tag}>", "")
    table = table.replace('<spandata-span-identity="">', "")
    return _COLGROUP.sub("", table)
