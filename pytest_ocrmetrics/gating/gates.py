"""Suite gates: conditions on a run's aggregates (``cer<=0.03``, ``p95:cer<=0.2 [engine=tesseract]``), no baseline.

A gate reads one statistic of one metric from each engine x dataset row of a run's summary. Its direction comes from
the metric registry, so a gate that would fail when quality improves (``cer>=0.03``) is refused as a typo.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any, Iterable, Literal, Mapping

from pytest_ocrmetrics.gating._numbers import EPS, fmt_number
from pytest_ocrmetrics.metrics.registry import METRICS, MetricSpec, unknown_metric_message
from pytest_ocrmetrics.metrics.thresholds import format_limit, parse_limit

__all__ = ["STATISTICS", "OPERATORS", "Gate", "GateResult", "parse_gate", "evaluate_gates"]

#: Per engine x dataset statistics a gate can read (keys of a summary row's ``metrics[name]``).
STATISTICS: tuple[str, ...] = ("micro", "mean", "median", "p90", "p95", "min", "max", "ci_low", "ci_high")
#: Gate comparison operators.
OPERATORS: tuple[str, ...] = ("<=", "<", ">=", ">")
_SCOPE_KEYS: tuple[str, ...] = ("engine", "dataset")


@dataclass(frozen=True)
class Gate:
    """One suite-level condition on an aggregate metric, e.g. ``cer<=0.03`` on the micro CER of every row.

    ``engine`` and ``dataset`` are ``fnmatch`` patterns (``None`` matches everything).
    """

    metric: str
    operator: str
    threshold: float
    statistic: str = "micro"
    engine: str | None = None
    dataset: str | None = None

    @property
    def spec(self) -> MetricSpec:
        return METRICS[self.metric]

    @property
    def expression(self) -> str:
        """The canonical expression: ``parse_gate(gate.expression) == gate``."""
        prefix = "" if self.statistic == "micro" else f"{self.statistic}:"
        scope = ", ".join(f"{key}={value}" for key, value in (("engine", self.engine), ("dataset", self.dataset))
                          if value is not None)
        limit = format_limit(self.metric, self.threshold)
        return f"{prefix}{self.metric}{self.operator}{limit}" + (f" [{scope}]" if scope else "")

    def __str__(self) -> str:
        return self.expression

    def matches(self, engine: str, dataset: str) -> bool:
        """True when the row ``engine`` x ``dataset`` is in this gate's scope."""
        return ((self.engine is None or fnmatch.fnmatchcase(engine, self.engine))
                and (self.dataset is None or fnmatch.fnmatchcase(dataset, self.dataset)))

    def check(self, value: float) -> bool:
        """True when ``value`` satisfies the gate."""
        if self.operator == "<=":
            return value <= self.threshold + EPS
        if self.operator == "<":
            return value < self.threshold
        if self.operator == ">=":
            return value >= self.threshold - EPS
        return value > self.threshold


_GATE_RE = re.compile(
    r"""^\s*
    (?:(?P<stat>[A-Za-z0-9_]+)\s*:\s*)?
    (?P<metric>[A-Za-z_][A-Za-z0-9_]*)\s*
    (?P<op>[<>=!]+)?\s*
    (?P<value>[^\s\[\]]*)\s*
    (?:\[(?P<scope>[^\]]*)\])?\s*$""",
    re.X,
)


def parse_gate(expr: str) -> Gate:
    """Parse a gate expression ``[STATISTIC:]METRIC OP VALUE [engine=PATTERN, dataset=PATTERN]``.

    ``STATISTIC`` is one of :data:`STATISTICS` (default ``micro``, the corpus value); ``OP`` one of ``<= < >= >``;
    the optional bracket restricts the gate to engines / datasets matching ``fnmatch`` patterns. The operator must
    point the metric's good way (``cer<=``, ``field_f1>=``): a gate that would fail when quality *improves* is a
    typo and is refused. ``VALUE`` is read as every limit is (:func:`~pytest_ocrmetrics.metrics.thresholds.parse_limit`): a
    fraction or an explicit percentage (``cer<=3%`` is ``cer<=0.03``); a plain number above 1 on a fraction metric
    is a percent typo and is refused (``cer<=5``, ``field_f1>=90``).
    Every mistake raises a one-sentence ``ValueError`` naming the expression and the valid choices.

    >>> parse_gate("p95:cer<=0.2 [engine=tesseract]")
    Gate(metric='cer', operator='<=', threshold=0.2, statistic='p95', engine='tesseract', dataset=None)
    >>> parse_gate("cer>=0.03")
    Traceback (most recent call last):
    ...
    ValueError: gate 'cer>=0.03': cer is lower-is-better, so the gate must be an upper bound such as 'cer<=0.03'
    """
    if not isinstance(expr, str) or not expr.strip():
        raise ValueError("empty gate expression; write e.g. 'cer<=0.03' or 'mean:field_f1>=0.9 [engine=tesseract]'")
    where = f"gate {expr.strip()!r}"
    match = _GATE_RE.match(expr)
    if match is None:
        raise ValueError(f"{where}: expected [STATISTIC:]METRIC OP VALUE [engine=..., dataset=...], "
                         f"e.g. 'cer<=0.03' or 'p95:cer<=0.2 [dataset=receipts]'")
    stat = (match["stat"] or "micro").lower()
    metric, op, value, scope = match["metric"], match["op"], match["value"], match["scope"]
    if stat not in STATISTICS:
        from pytest_ocrmetrics.core.hints import did_you_mean

        raise ValueError(f"{where}: unknown statistic {stat!r}{did_you_mean(stat, STATISTICS)}; "
                         f"valid statistics: {', '.join(STATISTICS)}")
    if metric not in METRICS:
        raise ValueError(f"{where}: {unknown_metric_message(metric)}")
    spec = METRICS[metric]
    if op not in OPERATORS:
        raise ValueError(f"{where}: {'missing' if not op else 'unknown'} operator{'' if not op else f' {op!r}'}; "
                         f"valid operators: {', '.join(OPERATORS)}")
    if not value:
        raise ValueError(f"{where}: missing threshold value after {op!r}, e.g. '{metric}{op}0.05'")
    upper = op in ("<=", "<")
    if spec.lower_is_better and not upper:
        raise ValueError(f"{where}: {metric} is lower-is-better, so the gate must be an upper bound "
                         f"such as '{metric}<={value}'")
    if not spec.lower_is_better and upper:
        raise ValueError(f"{where}: {metric} is higher-is-better, so the gate must be a lower bound "
                         f"such as '{metric}>={value}'")
    prefix = f"{match['stat']}:" if match["stat"] else ""
    threshold = parse_limit(metric, value, lambda v: f"{prefix}{metric}{op}{v}", where=where)
    engine = dataset = None
    if scope is not None:
        for part in (p.strip() for p in scope.split(",")):
            key, sep, pattern = (s.strip() for s in part.partition("="))
            if not sep or not pattern:
                raise ValueError(f"{where}: scope entries are written key=value, e.g. [engine=tesseract, "
                                 f"dataset=receipts], got {part!r}")
            if key not in _SCOPE_KEYS:
                raise ValueError(f"{where}: unknown scope key {key!r}; valid keys: {', '.join(_SCOPE_KEYS)}")
            if key == "engine":
                engine = pattern
            else:
                dataset = pattern
    return Gate(metric, op, threshold, stat, engine, dataset)


@dataclass(frozen=True)
class GateResult:
    """The verdict of one gate on one engine x dataset row, or on no row at all (``matched`` False).

    A gate that matches no row (or no row has its metric) fails: a gate that cannot look is not a passing gate.
    """

    gate: Gate
    passed: bool
    actual: float | None
    engine: str | None
    dataset: str | None
    n: int | None = None
    matched: bool = True

    @property
    def threshold(self) -> float:
        return self.gate.threshold

    @property
    def status(self) -> Literal["passed", "failed", "unmatched"]:
        return "unmatched" if not self.matched else ("passed" if self.passed else "failed")

    @property
    def message(self) -> str:
        """One line: ``gate cer<=0.03 failed for tesseract / receipts: micro cer = 0.0412 (n=40)``."""
        if not self.matched:
            return (f"gate {self.gate} matched no engine x dataset with {self.gate.statistic} {self.gate.metric} "
                    f"in this run; check the metric and the [engine=..., dataset=...] scope")
        verdict = "passed" if self.passed else "FAILED"
        n = f" (n={self.n})" if self.n is not None else ""
        return (f"gate {self.gate} {verdict} for {self.engine} / {self.dataset}: "
                f"{self.gate.statistic} {self.gate.metric} = {fmt_number(self.actual)}{n}")


def evaluate_gates(gates: Iterable[Gate], summary_rows: Iterable[Mapping[str, Any]]) -> list[GateResult]:
    """Check every gate against every summary row (engine x dataset) in its scope.

    ``summary_rows`` are the ``summary`` entries of a run file. A row without the gate's metric (a text-only
    dataset for ``field_f1``) is skipped; a gate that finds no row at all yields one failing, unmatched result.

    >>> rows = [{"engine": "a", "dataset": "d", "documents": 3, "metrics": {"cer": {"micro": 0.05, "mean": 0.04, "n": 3}}}]
    >>> [r.status for r in evaluate_gates([parse_gate("cer<=0.03"), parse_gate("wer<=0.1")], rows)]
    ['failed', 'unmatched']
    """
    rows = list(summary_rows)
    results: list[GateResult] = []
    for gate in gates:
        found = False
        for row in rows:
            engine, dataset = str(row.get("engine", "")), str(row.get("dataset", ""))
            if not gate.matches(engine, dataset):
                continue
            stats = (row.get("metrics") or {}).get(gate.metric)
            if not stats or stats.get(gate.statistic) is None or stats.get("n", 1) == 0:
                continue
            actual = float(stats[gate.statistic])
            found = True
            results.append(GateResult(gate, gate.check(actual), actual, engine, dataset, stats.get("n")))
        if not found:
            results.append(GateResult(gate, False, None, gate.engine, gate.dataset, None, matched=False))
    return results
