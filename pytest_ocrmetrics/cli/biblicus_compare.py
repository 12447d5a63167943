"""``ocrmetrics biblicus-compare``: two pipelines (from run files or Biblicus reports) metric by metric with
a winner column, as Biblicus's benchmark guide compares them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence, TextIO

from pytest_ocrmetrics.cli.common import UsageError, argtype, load_run_file, non_negative_int


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics biblicus-compare``: two pipelines (from run files or Biblicus reports) metric by metric."""
    from pytest_ocrmetrics.core.safe_text import clean_text, show_controls
    from pytest_ocrmetrics.reporting.biblicus import (
        BiblicusError,
        compare_pipelines,
        comparison_names,
        render_comparison,
    )

    try:
        first, second = _two_pipelines(args)
    except BiblicusError as exc:
        raise UsageError(show_controls(str(exc))) from None
    except UsageError as exc:  # names from the files: control characters shown as marks
        raise UsageError(show_controls(str(exc))) from None
    rows = compare_pipelines(first, second, decimals=args.decimals)
    if args.json:
        names = comparison_names(first, second)
        data = {"pipelines": list(names), "rows": [row.to_dict(names) for row in rows]}
        out.write(clean_text(json.dumps(data, indent=2, ensure_ascii=False))[0] + "\n")  # lone surrogates: U+FFFD
    else:
        for line in render_comparison(first, second, rows, decimals=args.decimals):
            print(line, file=out)
    return 0


def _load_files(paths: Sequence[str]) -> list[tuple[str, Any]]:
    """(path, JSON data) of each file; a run file is validated as ``compare`` and ``report`` read it."""
    loaded = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"{path!r} does not exist") from None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise UsageError(f"{path!r} is not a JSON run file or Biblicus report ({exc})") from None
        if isinstance(data, dict) and "schema" in data:  # a run file: validated as compare and report do
            data = load_run_file(path, "")
        loaded.append((path, data))
    return loaded


def _check_wanted(wanted_names: Sequence[str], loaded: Sequence[tuple[str, Any]]) -> None:
    """Each ``--pipeline`` is in the files, checked before any report is built: a typo is said as a typo."""
    import difflib

    from pytest_ocrmetrics.reporting.biblicus import pipelines_of, run_pipelines

    names = [name for path, data in loaded for name in
             (pipelines_of(data) if isinstance(data, dict) and "schema" in data else
              [p["pipeline_name"] for p in run_pipelines(data, repr(path))])]
    for wanted in wanted_names:
        if wanted not in names:
            close = difflib.get_close_matches(wanted, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise UsageError(f"--pipeline {wanted!r}: no such pipeline in the files; {hint}they have "
                             f"{', '.join(map(repr, names))}")


def _two_pipelines(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The two pipelines to compare: every pipeline of the files, or the two ``--pipeline`` names in their order;
    anything but two is a :class:`UsageError`."""
    from pytest_ocrmetrics.reporting.biblicus import run_pipelines

    loaded = _load_files(args.files)
    if args.pipeline:
        _check_wanted(args.pipeline, loaded)
    pipelines: list[dict[str, Any]] = []
    for path, data in loaded:
        pipelines += run_pipelines(data, repr(path), only=args.pipeline)
    if args.pipeline:
        pipelines = [next(p for p in pipelines if p["pipeline_name"] == wanted) for wanted in args.pipeline]
    if len(pipelines) != 2:
        names = ", ".join(repr(p["pipeline_name"]) for p in pipelines) or "none"
        raise UsageError(f"give exactly two pipelines to compare, found {len(pipelines)} ({names}); choose two "
                         f"with --pipeline NAME --pipeline NAME")
    return pipelines


def add_parser(sub: Any) -> None:
    """Add ``ocrmetrics biblicus-compare`` to the subcommands ``sub``."""
    compare = sub.add_parser(
        "biblicus-compare", help="two pipelines metric by metric with a winner column (Biblicus's comparison)",
        description="Compare two pipelines as Biblicus's benchmark guide does: F1, recall, precision, WER, sequence "
                    "accuracy, LCS ratio, bigram and trigram overlap, each with the better pipeline (lower WER, "
                    "higher everything else; a tie when both show the same value). Each FILE is a Biblicus report "
                    "(ocrmetrics report --biblicus) or a run file (each engine a pipeline; run with --ocr-metric "
                    "for set_precision, set_recall, set_f1, sequence_accuracy, lcs_ratio, bigram_overlap, "
                    "trigram_overlap).")
    compare.add_argument("files", nargs="+", metavar="FILE", help="one run file with two engines, or two files")
    compare.add_argument("--pipeline", action="append", metavar="NAME",
                         help="a pipeline (engine) to compare, given twice when the files hold more than two")
    compare.add_argument("--decimals", type=argtype(non_negative_int), default=3,
                         help="decimals shown, and below which two values are a tie (default 3, as the guide)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
