"""A run in Biblicus's grouped benchmark report, and two pipelines compared metric by metric with a winner.

Biblicus (specification document 001, "Interpreting Benchmark Results") reports one extraction pipeline as::

    {"pipeline_name": "paddleocr",
     "metrics": {"set_based": {"avg_precision": 0.792, "avg_recall": 0.782, "avg_f1": 0.787},
                 "order_aware": {"avg_wer": 0.533, "avg_sequence_accuracy": 0.031, "avg_lcs_ratio": 0.621},
                 "ngram": {"avg_bigram_overlap": 0.521, "avg_trigram_overlap": 0.412}}}

Here a pipeline is an engine of a run, and each ``avg_*`` is the mean over that engine's documents of the registry
metric of the same definition (``set_precision``, ``set_recall``, ``set_f1``, ``wer``, ``sequence_accuracy``,
``lcs_ratio``, ``bigram_overlap``, ``trigram_overlap``): the run file summary's ``mean``, weighted by ``n`` across
datasets. All but ``wer`` are computed only when asked for (``--ocr-metric``); a run without them is refused with
the options to add, never written with zeros.

>>> row = {"engine": "paddleocr", "dataset": "forms", "documents": 2,
...        "metrics": {name: {"micro": 0.5, "mean": 0.5, "n": 2} for name in BIBLICUS_METRICS}}
>>> biblicus_report({"summary": [row]})["metrics"]["ngram"]
{'avg_bigram_overlap': 0.5, 'avg_trigram_overlap': 0.5}
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.metrics.registry import METRICS

__all__ = ["BIBLICUS_GROUPS", "BIBLICUS_METRICS", "BiblicusError", "ComparisonRow", "biblicus_report",
           "compare_pipelines", "comparison_names", "pipelines_of", "render_comparison", "run_pipelines"]

#: the report's groups: (group, ((report key, registry metric), ...)), in the document's order
BIBLICUS_GROUPS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("set_based", (("avg_precision", "set_precision"), ("avg_recall", "set_recall"), ("avg_f1", "set_f1"))),
    ("order_aware", (("avg_wer", "wer"), ("avg_sequence_accuracy", "sequence_accuracy"),
                     ("avg_lcs_ratio", "lcs_ratio"))),
    ("ngram", (("avg_bigram_overlap", "bigram_overlap"), ("avg_trigram_overlap", "trigram_overlap"))),
)
BIBLICUS_METRICS: tuple[str, ...] = tuple(metric for _, keys in BIBLICUS_GROUPS for _, metric in keys)

#: rows of the comparison: (label, group, key), the document's table order (F1, Recall, Precision, WER, Bigram)
#: with the report's other metrics in between
_COMPARISON_ROWS: tuple[tuple[str, str, str], ...] = (
    ("F1", "set_based", "avg_f1"),
    ("Recall", "set_based", "avg_recall"),
    ("Precision", "set_based", "avg_precision"),
    ("WER", "order_aware", "avg_wer"),
    ("Sequence accuracy", "order_aware", "avg_sequence_accuracy"),
    ("LCS ratio", "order_aware", "avg_lcs_ratio"),
    ("Bigram", "ngram", "avg_bigram_overlap"),
    ("Trigram", "ngram", "avg_trigram_overlap"),
)
_METRIC_OF = {(group, key): metric for group, keys in BIBLICUS_GROUPS for key, metric in keys}
TIE = "tie"


class BiblicusError(ValueError):
    """A run or report that cannot give the grouped report or the comparison; the message says what to do."""


def pipelines_of(run: Mapping[str, Any]) -> list[str]:
    """The run's engines (its pipelines), in the order of its summary."""
    return list(dict.fromkeys(str(row.get("engine")) for row in run.get("summary") or ()))


def _choose(names: Sequence[str], pipeline: str | None, source: str) -> str:
    if pipeline is None:
        if len(names) == 1:
            return names[0]
        if not names:
            raise BiblicusError(f"{source} has no scored document, so no pipeline to report")
        raise BiblicusError(f"{source} has {len(names)} pipelines (engines) {', '.join(map(repr, names))}; "
                            f"choose one with --pipeline NAME")
    if pipeline not in names:
        close = difflib.get_close_matches(pipeline, names, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise BiblicusError(f"{source} has no pipeline (engine) {pipeline!r}; {hint}its pipelines: "
                            f"{', '.join(map(repr, names)) or 'none'}")
    return pipeline


def biblicus_report(run: Mapping[str, Any], pipeline: str | None = None, *, source: str = "the run") -> dict[str, Any]:
    """The grouped report of one engine (``pipeline``; may be left out when the run has one engine).

    Each average is the mean over the engine's documents (summary ``mean`` weighted by ``n`` over its datasets).
    Raises :class:`BiblicusError` naming the ``--ocr-metric`` options to add when the run lacks a metric.
    """
    name = _choose(pipelines_of(run), pipeline, source)
    rows = [row for row in run.get("summary") or () if str(row.get("engine")) == name]
    averages: dict[str, float] = {}
    for metric in BIBLICUS_METRICS:
        total = weighted = 0.0
        for row in rows:
            aggregate = (row.get("metrics") or {}).get(metric)
            if isinstance(aggregate, Mapping) and isinstance(aggregate.get("mean"), (int, float)):
                n = float(aggregate.get("n") or row.get("documents") or 1)
                total += n
                weighted += float(aggregate["mean"]) * n
        if total:
            averages[metric] = weighted / total
    missing = [metric for metric in BIBLICUS_METRICS if metric not in averages]
    if missing:
        raise BiblicusError(
            f"{source} has no {', '.join(missing)} for pipeline {name!r} (they are computed only when asked for); "
            f"run pytest again with {' '.join(f'--ocr-metric={m}' for m in missing)}")
    return {"pipeline_name": name,
            "metrics": {group: {key: averages[metric] for key, metric in keys} for group, keys in BIBLICUS_GROUPS}}


def _check_report(data: Any, source: str) -> dict[str, Any]:
    """``data`` if it is a grouped report with every number; else :class:`BiblicusError` naming what is wrong."""
    if not isinstance(data, Mapping) or not isinstance(data.get("pipeline_name"), str) \
            or not isinstance(data.get("metrics"), Mapping):
        raise BiblicusError(f"{source} is neither a run file nor a Biblicus report (an object with pipeline_name and "
                            f"metrics)")
    for group, keys in BIBLICUS_GROUPS:
        values = data["metrics"].get(group)
        for key, _ in keys:
            value = values.get(key) if isinstance(values, Mapping) else None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
                raise BiblicusError(f"{source}: pipeline {data['pipeline_name']!r} has no number at "
                                    f"metrics.{group}.{key}; write the report again with ocrmetrics report --biblicus")
    return dict(data)


def run_pipelines(data: Any, source: str, *, only: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The grouped reports in one loaded JSON file: a run file gives one per engine (only those in ``only`` when it
    is given: another engine may lack the metrics), a Biblicus report itself, a list of Biblicus reports each of
    them."""
    if isinstance(data, Mapping) and "summary" in data and "documents" in data:  # a run file
        return [biblicus_report(data, name, source=source) for name in pipelines_of(data)
                if only is None or name in only]
    if isinstance(data, list):
        return [_check_report(item, f"{source} item {i}") for i, item in enumerate(data)]
    return [_check_report(data, source)]


@dataclass(frozen=True)
class ComparisonRow:
    """One metric of two pipelines: the values and the winner (a pipeline's name, or ``"tie"``)."""

    label: str
    metric: str
    key: str
    values: tuple[float, float]
    winner: str

    def to_dict(self, names: tuple[str, str]) -> dict[str, Any]:
        return {"metric": self.label, "registry_metric": self.metric, "key": self.key,
                "values": {names[0]: self.values[0], names[1]: self.values[1]}, "winner": self.winner}


def compare_pipelines(first: Mapping[str, Any], second: Mapping[str, Any], *, decimals: int = 3) -> list[ComparisonRow]:
    """Two grouped reports metric by metric; the winner is the better value by the registry's direction (lower WER,
    higher everything else), ``"tie"`` when both round to the same value at ``decimals`` (what the table shows).

    >>> paddle = {"pipeline_name": "PaddleOCR", "metrics": {"set_based": {"avg_precision": 0.792, "avg_recall": 0.782,
    ...           "avg_f1": 0.787}, "order_aware": {"avg_wer": 0.533, "avg_sequence_accuracy": 0.031,
    ...           "avg_lcs_ratio": 0.621}, "ngram": {"avg_bigram_overlap": 0.521, "avg_trigram_overlap": 0.412}}}
    >>> [(row.label, row.winner) for row in compare_pipelines(paddle, paddle)][:2]
    [('F1', 'tie'), ('Recall', 'tie')]
    """
    names = comparison_names(first, second)
    rows = []
    for label, group, key in _COMPARISON_ROWS:
        metric = _METRIC_OF[(group, key)]
        a, b = float(first["metrics"][group][key]), float(second["metrics"][group][key])
        if round(a, decimals) == round(b, decimals):
            winner = TIE
        else:
            a_better = a < b if METRICS[metric].lower_is_better else a > b
            winner = names[0] if a_better else names[1]
        rows.append(ComparisonRow(label, metric, f"{group}.{key}", (a, b), winner))
    return rows


def comparison_names(first: Mapping[str, Any], second: Mapping[str, Any]) -> tuple[str, str]:
    """The two column names of a comparison (numbered when both pipelines have one name)."""
    names = (str(first["pipeline_name"]), str(second["pipeline_name"]))
    return (names[0] + " (1)", names[1] + " (2)") if names[0] == names[1] and first != second else names


def render_comparison(first: Mapping[str, Any], second: Mapping[str, Any], rows: Sequence[ComparisonRow], *,
                      decimals: int = 3) -> list[str]:
    """The document's comparison table: Metric, one column per pipeline, Winner (values at ``decimals``)."""
    from pytest_ocrmetrics.core.safe_text import clean_text, show_controls
    from pytest_ocrmetrics.reporting.terminal import render_table

    names = comparison_names(first, second)
    body = [[row.label, f"{row.values[0]:.{decimals}f}", f"{row.values[1]:.{decimals}f}", row.winner] for row in rows]
    lines = render_table(["Metric", names[0], names[1], "Winner"], body, right_from=1)
    wins = [sum(row.winner == name for row in rows) for name in names]
    shown = [show_controls(clean_text(name)[0]) for name in names]  # names from files: controls as marks
    lines.append(f"{shown[0]} wins {wins[0]}, {shown[1]} wins {wins[1]}, ties {len(rows) - sum(wins)} "
                 f"(WER: lower is better; the others: higher)")
    return lines
