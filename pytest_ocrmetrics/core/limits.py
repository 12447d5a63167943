"""Resource limits as users write them (``--ocr-max-image-pixels``, ``max_output_chars=``, ...): one rule for the
plugin, the ``ocrmetrics`` command and the evaluator."""

from __future__ import annotations

import re

__all__ = ["MAX_LIMIT", "parse_resource_limit"]

#: the largest limit accepted (a number beyond any real image or output)
MAX_LIMIT = 10**15

_OFF_WORDS = ("0", "none", "off", "no", "false", "-1")


def parse_resource_limit(value: object, name: str, unit: str) -> int:
    """``value`` as a resource limit: a whole number from 1 to :data:`MAX_LIMIT` (``_`` and ``,`` between digits
    allowed: ``89_478_485``, ``"2,000,000"``). 0, ``None``, ``none`` or ``off`` are refused, since a run without the
    limit can be ended by one input.

    Args:
        value: the limit as given (a number, or its text).
        name: the setting as the user wrote it, for the error sentence (``--ocr-max-output-chars``).
        unit: what the limit counts (``pixels``, ``characters``).

    Returns:
        The limit.

    Raises:
        ValueError: one sentence naming the setting and what to write instead.

    >>> parse_resource_limit("2,000,000", "--ocr-max-output-chars", "characters")
    2000000
    >>> parse_resource_limit("off", "--ocr-max-image-pixels", "pixels")  # doctest: +NORMALIZE_WHITESPACE
    Traceback (most recent call last):
    ...
    ValueError: --ocr-max-image-pixels=off would turn the limit off, which is not possible: one input could exhaust
    memory; give a (large) whole number of pixels instead
    """
    text = str(value).strip().replace("_", "").replace(",", "") if isinstance(value, (str, int)) else ""
    if value is None or value is False or text.lower() in _OFF_WORDS:
        raise ValueError(f"{name}={value} would turn the limit off, which is not possible: one input could exhaust "
                         f"memory; give a (large) whole number of {unit} instead")
    if value is True or not re.fullmatch(r"[0-9]{1,16}", text) or not 1 <= int(text) <= MAX_LIMIT:
        raise ValueError(f"{name}={value} is not a limit; give a whole number of {unit} from 1 to {MAX_LIMIT:,}")
    return int(text)
