"""Number helpers shared by the gating modules: float noise, finiteness, and how values print in messages."""

from __future__ import annotations

import math
from typing import Any

EPS = 1e-12  # float noise allowed before a difference counts (0.025 - 0.02 is 0.005000000000000001)


def finite(value: Any) -> bool:
    """True for an int or float that is neither NaN nor infinite."""
    return isinstance(value, (int, float)) and math.isfinite(value)


def fmt_number(value: float | None) -> str:
    """A value in a message: four decimals, ``n/a`` for none."""
    if value is None:
        return "n/a"
    if math.isinf(value) or math.isnan(value):
        return str(value)
    return f"{value:.4f}"


def fmt_delta(value: float) -> str:
    """A signed difference in a message: ``+0.0310``, ``-0.0020``, ``\u00b10.0000``."""
    return "\u00b10.0000" if value == 0 else f"{value:+.4f}"
