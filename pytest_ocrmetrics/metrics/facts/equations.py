"""``math`` facts: is the reference equation among the output's LaTeX equations (``olmocr/bench/tests.py::MathTest``).

The benchmark compares in three steps: (1) an equation of the output equals the reference exactly; (2) KaTeX renders
both and the reference's MathML (without its annotation, whitespace removed) is contained in the candidate's;
(3) the rendered symbols' layout matches (bounding boxes from a browser). Step 2 runs in-process with ``pykatex``
(KaTeX in an embedded JavaScript engine, the ``facts`` extra; no browser); step 3 in headless Chromium
(:mod:`pytest_ocrmetrics.metrics.facts.math_layout`). Without pykatex, or without a browser for step 3, a fact that
only the missing step could decide is not checked (``passed`` ``None``): its explanation and the verdict's ``notes``
say which step could not run.

>>> output_equations(r"Euler: $e^{i\\pi}+1=0$ and \\[a^2+b^2=c^2\\]")
['a^2+b^2=c^2', 'e^{i\\\\pi}+1=0']
"""

from __future__ import annotations

import functools
import re

__all__ = ["output_equations", "render_mathml", "mathml_contains", "KATEX_AVAILABLE_NOTE", "MathRenderError",
           "KatexMissing"]

_PATTERNS = (r"\\\((.+?)\\\)", r"\\\[(.+?)\\\]")
_DOLLAR_PATTERNS = (r"\$\$(.+?)\$\$", r"\$(.+?)\$")
_SPACES = re.compile(r"[\s\u200a-\u200d\u2060\ufeff]+", flags=re.UNICODE)
_SEMANTICS = re.compile(r"<semantics>(.*?)</semantics>", re.DOTALL)
_ANNOTATION = re.compile(r"<annotation\b[^>]*>.*?</annotation>", re.DOTALL)

KATEX_AVAILABLE_NOTE = "the KaTeX MathML comparison needs pykatex: install pytest-ocrmetrics[facts]"


class MathRenderError(ValueError):
    """KaTeX cannot render an equation (a LaTeX error), or no KaTeX is installed (:class:`KatexMissing`)."""


class KatexMissing(MathRenderError):
    """pykatex (the ``facts`` extra) is not installed: the MathML step cannot run."""


def output_equations(text: str, *, ignore_dollar_delimited: bool = False) -> list[str]:
    """The equations of an output, as the benchmark extracts them: ``\\(..\\)``, ``\\[..\\]``, then (unless
    ``ignore_dollar_delimited``) ``$$..$$`` and ``$..$``, each pattern's matches removed before the next, stripped."""
    patterns = _PATTERNS + (() if ignore_dollar_delimited else _DOLLAR_PATTERNS)
    equations: list[str] = []
    for pattern in patterns:
        equations.extend(match.strip() for match in re.findall(pattern, text, re.DOTALL))
        text = re.sub(pattern, "", text, flags=re.DOTALL)
    return equations


@functools.lru_cache(maxsize=4096)
def render_mathml(equation: str) -> str:
    """KaTeX's MathML for ``equation`` in display mode, reduced as the benchmark compares it: the ``<semantics>``
    content without the TeX annotation, all whitespace removed. Raises :class:`MathRenderError` when KaTeX rejects
    the equation or is not installed.

    Kept on disk by content when a cache folder is set (:func:`~pytest_ocrmetrics.metrics.facts.math_layout.
    mathml_cache`, beside the layouts; keyed by the KaTeX version), rejections included: a run whose equations are
    all stored renders none and never starts KaTeX's JavaScript engine (about 20 ms)."""
    from pytest_ocrmetrics.metrics.facts.math_layout import mathml_cache

    cache = mathml_cache()
    stored = cache.get(equation) if cache is not None else None
    if stored is not None:
        mathml, error = stored
        if error is not None:
            raise MathRenderError(error)
        return mathml
    try:
        import pykatex  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        raise KatexMissing(KATEX_AVAILABLE_NOTE) from None
    try:
        html = pykatex.renderToString(equation, displayMode=True, output=pykatex.OUTPUT_MATHML)
    except Exception as exc:  # pykatex.ParseError and anything KaTeX throws
        message = f"KaTeX cannot render {equation!r}: {exc}"
        if cache is not None:
            cache.put(equation, "", message)
        raise MathRenderError(message) from None
    match = _SEMANTICS.search(html)
    inner = _ANNOTATION.sub("", match.group(1)) if match else html
    reduced = _SPACES.sub("", inner)
    if cache is not None:
        cache.put(equation, reduced)
    return reduced


def katex_available() -> bool:
    """True when the MathML step can run (``pykatex`` imports)."""
    try:
        import pykatex  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return False
    return True


def mathml_contains(reference_mathml: str, candidate: str) -> bool:
    """Step 2: the reference's reduced MathML is contained in the candidate equation's (False when KaTeX rejects
    the candidate: the benchmark's rendering then yields an error text, which contains no MathML)."""
    try:
        return reference_mathml in render_mathml(candidate)
    except MathRenderError:
        return False
