"""Tolerances of a baseline comparison: how much worse each metric may get (``cer:0.005``, ``field_f1:2%``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Union

from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message

__all__ = ["Tolerance", "ToleranceLike", "parse_tolerance", "resolve_tolerances", "tolerance_for"]

@dataclass(frozen=True)
class Tolerance:
    """How much worse a metric may get than the baseline before it counts as a regression.

    ``amount`` is absolute (in the metric's unit) or, when ``relative``, a fraction of the baseline value.
    ``metric`` ``"*"`` is the default for every metric without its own tolerance.
    """

    metric: str
    amount: float
    relative: bool = False

    def allowed(self, old: float) -> float:
        """The largest allowed worsening from the baseline value ``old``."""
        return self.amount * abs(old) if self.relative else self.amount

    def __str__(self) -> str:
        return f"{self.metric}:{self.amount * 100:g}%" if self.relative else f"{self.metric}:{self.amount:g}"


ToleranceLike = Union[Tolerance, str]


def parse_tolerance(item: str) -> Tolerance:
    """Parse ``METRIC:AMOUNT`` (absolute) or ``METRIC:PERCENT%`` (relative to the baseline value).

    ``=`` works as separator too (``cer=0.005``); ``*:1%`` applies to every metric without its own tolerance.
    Direction comes from the registry: ``cer:0.005`` allows CER to *rise* by 0.005, ``field_f1:2%`` allows F1 to
    *fall* by 2 % of its baseline value.

    >>> parse_tolerance("field_f1:2%")
    Tolerance(metric='field_f1', amount=0.02, relative=True)
    """
    if not isinstance(item, str) or not item.strip():
        raise ValueError("empty tolerance; write METRIC:AMOUNT or METRIC:PERCENT%, e.g. 'cer:0.005' or 'field_f1:2%'")
    where = f"tolerance {item.strip()!r}"
    name, sep, value = item.partition(":")
    if not sep:
        name, sep, value = item.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not value:
        raise ValueError(f"{where}: expected METRIC:AMOUNT or METRIC:PERCENT%, e.g. 'cer:0.005' or 'field_f1:2%'")
    if name != "*" and name not in METRICS:
        raise ValueError(f"{where}: {unknown_metric_message(name)} (or '*' for all)")
    relative = value.endswith("%")
    number = value[:-1].strip() if relative else value
    try:
        amount = float(number)
    except ValueError:
        raise ValueError(f"{where}: {number!r} is not a number; write e.g. '{name}:0.005' or '{name}:2%'") from None
    if not math.isfinite(amount) or amount < 0:
        raise ValueError(f"{where}: the tolerance must be a non-negative number (how much worse is still allowed)")
    return Tolerance(name, amount / 100 if relative else amount, relative)


def resolve_tolerances(
    tolerances: Iterable[ToleranceLike] | Mapping[str, Tolerance | float] | None,
) -> dict[str, Tolerance]:
    """Normalize tolerances given as ``Tolerance`` objects, strings or ``{metric: amount}`` into ``{metric: Tolerance}``.

    Later entries override earlier ones for the same metric (the command line after the ini file).
    """
    result: dict[str, Tolerance] = {}
    if tolerances is None:
        return result
    if isinstance(tolerances, Mapping):
        items: list[Tolerance] = []
        for key, value in tolerances.items():
            items.append(value if isinstance(value, Tolerance) else parse_tolerance(f"{key}:{value}"))
    else:
        items = [t if isinstance(t, Tolerance) else parse_tolerance(t) for t in tolerances]
    for tolerance in items:
        result[tolerance.metric] = tolerance
    return result


def tolerance_for(tolerances: Mapping[str, Tolerance], metric: str) -> Tolerance | None:
    """The tolerance of ``metric``: its own, else the ``*`` default, else ``None`` (compared, never judged)."""
    return tolerances.get(metric) or tolerances.get("*")

