"""The one "did you mean" of the project: the choice closest to a typo, for one-sentence errors (engine names and
settings, option values, gate and column statistics, normalization steps). A leaf module: it imports nothing of the
project, so every layer can use it."""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(typed: str, choices: Iterable[str], *, prefix: str = "") -> str:
    """`` (did you mean 'X'?)`` for the choice closest to a typo, or an empty string when none is close.

    ``prefix`` is put before the choice shown (``tesseract.`` for setting keys), not compared.

    >>> did_you_mean("tesserct", ["replay", "tesseract"]), did_you_mean("pms", ["psm", "oem"]), did_you_mean("zz", ["psm"])
    (" (did you mean 'tesseract'?)", " (did you mean 'psm'?)", '')
    """
    choices = list(choices)
    lowered = {choice.lower(): choice for choice in choices}
    close = difflib.get_close_matches(typed.lower(), list(lowered), n=1, cutoff=0.6)
    if not close:  # a transposition in a short name ("pms") scores low on ratio; the same letters count as close
        close = [c for c in lowered if sorted(c) == sorted(typed.lower())][:1]
    return f" (did you mean {prefix + lowered[close[0]]!r}?)" if close else ""
