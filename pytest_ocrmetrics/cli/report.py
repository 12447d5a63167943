"""``ocrmetrics report``: the HTML / CSV / Markdown reports, the Biblicus report and the benchmark protocol's
files from a saved run file."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from pytest_ocrmetrics.cli.common import (
    UsageError,
    add_gating_options,
    add_report_options,
    add_validate_option,
    baseline_comparison,
    exit_code,
    load_run_file,
    run_folder,
    shown,
    write_reports,
)
from pytest_ocrmetrics.gating import (
    evaluate_gates,
)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics report``: the reports asked for from one run file (with deltas against ``--baseline``)."""
    if not (args.html or args.csv or args.markdown or args.biblicus or args.benchmark_dir):
        raise UsageError("nothing to write: give at least one of --html PATH, --csv PATH, --markdown PATH, "
                         "--biblicus PATH, --benchmark-dir DIR")
    if args.pipeline is not None and not args.biblicus:
        raise UsageError("--pipeline chooses the pipeline of the Biblicus report; give --biblicus PATH too")
    run = load_run_file(args.run, "", args)
    biblicus = _biblicus_report(args, run) if args.biblicus else None  # a missing metric: nothing written
    comparison = baseline_comparison(args, load_run_file(args.baseline, "baseline", args), run) if args.baseline else None
    for kind, text in (("error", comparison and comparison.error), ("warning", comparison and comparison.warning)):
        if text:  # the reports say it too; a report never fails the build, compare does
            print(f"ocrmetrics report: {kind}: {text}", file=sys.stderr)
    gates = evaluate_gates(args.gate or [], run.get("summary", ()))
    if args.html or args.csv or args.markdown:
        for line in write_reports(args, run, comparison, gates, run_folder(args, args.run)):
            print(line, file=out)
    for line in _write_protocol_files(args, run, biblicus):
        print(line, file=out)
    return exit_code(args, 0)


def _biblicus_report(args: argparse.Namespace, run: dict[str, Any]) -> dict[str, Any]:
    from pytest_ocrmetrics.core.safe_text import show_controls
    from pytest_ocrmetrics.reporting.biblicus import BiblicusError, biblicus_report

    try:
        return biblicus_report(run, args.pipeline, source=f"run file {args.run!r}")
    except BiblicusError as exc:  # engine names from the file: control characters shown as marks
        raise UsageError(show_controls(str(exc))) from None


def _write_protocol_files(args: argparse.Namespace, run: dict[str, Any], biblicus: dict[str, Any] | None) -> list[str]:
    """Write the Biblicus report and the benchmark protocol's folder; one ``KIND: PATH`` line per file written. A
    file that cannot be written is one line on stderr and exit code 2, as for the other reports."""
    from pytest_ocrmetrics.core.safe_text import write_text_atomic
    from pytest_ocrmetrics.reporting.benchmark import write_benchmark_dir

    lines = []
    try:
        if biblicus is not None:
            text = json.dumps(biblicus, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
            lines.append(f"Biblicus report: {shown(write_text_atomic(args.biblicus, text))}")
        if args.benchmark_dir:
            lines += [f"benchmark file: {shown(path)}" for path in write_benchmark_dir(run, args.benchmark_dir)]
    except (OSError, ValueError) as exc:
        print(f"ocrmetrics {args.command}: error: cannot write {getattr(exc, 'filename', None) or 'a report'}: "
              f"{getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        args.reports_failed = True
    return lines


def add_parser(sub: Any) -> None:
    """Add ``ocrmetrics report`` to the subcommands ``sub``."""
    report = sub.add_parser("report", help="render HTML / CSV / Markdown / Biblicus reports and the benchmark "
                                           "protocol's files from a saved run file",
                            description="Render reports from a JSON run file written by pytest --ocr-json=PATH.")
    report.add_argument("run", metavar="RUN.json")
    report.add_argument("--baseline", metavar="BASE.json", help="add deltas against this baseline run file")
    add_validate_option(report)
    add_gating_options(report)
    add_report_options(report)
    report.add_argument("--biblicus", metavar="PATH",
                        help="write the run as Biblicus's grouped report (pipeline_name; set_based, order_aware, "
                             "ngram averages)")
    report.add_argument("--pipeline", metavar="NAME",
                        help="the engine the Biblicus report is of (needed when the run has several)")
    report.add_argument("--benchmark-dir", metavar="DIR",
                        help="write the benchmark protocol's results layout into DIR: config.json, results.json, "
                             "summary.json (DIR's name is the run id)")
