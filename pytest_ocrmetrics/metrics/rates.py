"""How counts become rates: the conventions for empty inputs that every metric module shares.

- :func:`share`: a "higher is better" share such as precision, recall, F1 or accuracy. 0/0 is 1.0 when both sides
  are empty (nothing to find, nothing found) and 0.0 otherwise, so a value is never NaN.
- :func:`normalized_distance`: an edit distance over the longer length, 0.0 for two empty sequences.
- :func:`json_float`: a value as JSON can hold it (JSON has no NaN or infinity).

>>> share(3, 4, both_empty=False), share(0, 0, both_empty=True), share(0, 0, both_empty=False)
(0.75, 1.0, 0.0)
>>> normalized_distance(2, 6, 7), normalized_distance(0, 0, 0)
(0.2857142857142857, 0.0)
"""

from __future__ import annotations

import math

__all__ = ["share", "normalized_distance", "json_float"]


def share(part: float, total: float, *, both_empty: bool) -> float:
    """``part / total``; when ``total`` is 0: 1.0 if ``both_empty`` (reference and hypothesis have nothing), else 0.0.

    Args:
        part: the numerator.
        total: the denominator.
        both_empty: whether both sides are empty.

    Returns:
        The share.
    """
    if total:
        return part / total
    return 1.0 if both_empty else 0.0


def normalized_distance(distance: int, reference_length: int, hypothesis_length: int) -> float:
    """``distance / max(reference_length, hypothesis_length)``, in [0, 1] for a Levenshtein distance; 0.0 when both
    lengths are 0. ``1 -`` this is the similarity of DocVQA's ANLS and of rapidfuzz's ``normalized_similarity``.

    Args:
        distance: the edit distance.
        reference_length: the reference's length.
        hypothesis_length: the hypothesis's length.

    Returns:
        The normalized distance.
    """
    longest = max(reference_length, hypothesis_length)
    return distance / longest if longest else 0.0


def json_float(value: float | None) -> float | None:
    """``value`` if JSON can hold it, else ``None`` (NaN and infinities; ``None`` stays ``None``).

    Args:
        value: a number or ``None``.

    Returns:
        ``value``, or ``None`` where JSON cannot hold it.
    """
    return value if value is None or math.isfinite(value) else None
