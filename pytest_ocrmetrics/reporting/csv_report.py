"""The CSV report (``--ocr-csv=PATH``): one row per document x engine, every metric as a column.

Columns, in order: ``dataset, engine, id, outcome, elapsed_s, cached, confidence``, then one column per metric
present in the run (registry order, raw values: fractions stay fractions, ``0.0714`` not ``7.14%``), then
``message, image, nodeid``. Missing values are empty cells. The file is UTF-8 with a header row, ready for pandas
(``pd.read_csv``) or a spreadsheet.

Text from the run is untrusted: a text cell that starts with ``=``, ``+``, ``-``, ``@`` or a tab gets a leading
``'`` so a spreadsheet shows it instead of evaluating it as a formula (OWASP's advice; numbers such as ``-0.5`` stay
numbers), and control characters other than line breaks (``\r\n`` becomes ``\n``) and tabs show as marks (``␀``,
``␛``, a lone carriage return ``␍``: :mod:`~pytest_ocrmetrics.core.safe_text`).

>>> from pytest_ocrmetrics.reporting.csv_report import render_csv
>>> print(render_csv({"documents": [{"id": "a.png", "dataset": "d", "engine": "e", "outcome": "passed",
...     "metrics": {"cer": 0.25}, "counts": {}, "elapsed_s": 0.5}], "summary": []}), end="")
dataset,engine,id,outcome,elapsed_s,cached,confidence,cer,message,image,nodeid
d,e,a.png,passed,0.5,,,0.25,,,
>>> print(render_csv({"documents": [{"id": "=1+2", "dataset": "d", "engine": "e", "outcome": "passed",
...     "metrics": {"cer": -0.0}, "counts": {}, "elapsed_s": 0.5}], "summary": []}).splitlines()[1])
d,e,'=1+2,passed,0.5,,,-0.0,,,
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Mapping

from pytest_ocrmetrics.core.safe_text import show_controls, write_text_atomic
from pytest_ocrmetrics.reporting.common import run_metrics

__all__ = ["render_csv", "write_csv", "csv_columns"]

_LEADING = ("dataset", "engine", "id", "outcome", "elapsed_s", "cached", "confidence")
_TRAILING = ("message", "image", "nodeid")
_FORMULA_START = ("=", "+", "-", "@", "\t")


def csv_columns(run: Mapping[str, Any]) -> list[str]:
    """The header row for ``run``."""
    return [*_LEADING, *run_metrics(run), *_TRAILING]


def _cell(value: Any) -> Any:
    """A value as a CSV cell: numbers as they are, text made safe to open in a spreadsheet."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    text = show_controls(str(value).replace("\r\n", "\n"), keep="\n\t")
    return "'" + text if text.startswith(_FORMULA_START) else text


def render_csv(run: Mapping[str, Any]) -> str:
    """The CSV report as a string (``\\n`` line endings)."""
    columns = csv_columns(run)
    metrics = set(run_metrics(run))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for doc in run.get("documents", ()):
        values = doc.get("metrics") or {}
        writer.writerow([_cell(values.get(col) if col in metrics else doc.get(col)) for col in columns])
    return buffer.getvalue()


def write_csv(run: Mapping[str, Any], path: str | Path) -> Path:
    """Write the CSV report of ``run`` to ``path`` (UTF-8, parent folders created, through a temporary file renamed
    over ``path``); returns the path."""
    return write_text_atomic(path, render_csv(run))
