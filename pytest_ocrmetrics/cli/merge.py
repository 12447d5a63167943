"""``ocrmetrics merge``: the run files of a sharded run (``pytest --ocr-shard=K/N``) as one, then the gates and
the baseline comparison on it with ``compare``'s rules."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence, TextIO, cast

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
    unevaluated_pairs,
    write_reports,
)
from pytest_ocrmetrics.gating import (
    evaluate_gates,
)


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics merge``: the shards' run files as one (:func:`~pytest_ocrmetrics.runfile.merge.merge_runs`), then
    the gates and the baseline comparison on the merged run with ``compare``'s rules and exit codes, then the
    reports."""
    runs, run = _merged(args)
    comparison = _compared(args, run)
    gates = evaluate_gates(args.gate or [], run["summary"])
    failed = any(not g.passed for g in gates) or bool(comparison is not None and comparison.exit_failed)
    unevaluated, requested = unevaluated_pairs(args, run)
    failed = failed or bool(unevaluated and requested)
    written = write_reports(args, run, comparison, gates, run_folder(args, args.output))
    for name, shard in runs:
        if shard.get("interrupted"):
            print(f"ocrmetrics merge: warning: {name} is from an interrupted run: the merged run holds only the "
                  f"documents that ran", file=sys.stderr)
    print(f"merged {len(runs)} run files: {len(run['documents'])} documents", file=out)
    _print_verdict(args, out, gates, comparison, unevaluated, requested, failed)
    for line in written:
        print(line, file=out)
    return exit_code(args, 1 if failed else 0)


def _merged(args: argparse.Namespace) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """The shards' run files (name, run) and the merged run; a merge refused is a :class:`UsageError`."""
    from pytest_ocrmetrics.core.safe_text import show_controls
    from pytest_ocrmetrics.runfile.merge import MergeError, merge_runs

    runs = [(repr(path), _load_shard(path, args)) for path in args.runs]
    try:
        # the typed Run is the run file's dict; the CLI's helpers (shared with `compare`) take any run file's dict
        return runs, cast("dict[str, Any]", merge_runs(runs))
    except MergeError as exc:  # names from the files: control characters shown as marks, not sent to the terminal
        raise UsageError(show_controls(str(exc))) from None


def _load_shard(path: str, args: argparse.Namespace) -> dict[str, Any]:
    """A shard's run file: with ``--validate`` checked against the full JSON schema (:func:`load_run_file`), else
    read with its documents kept as text where they are written as the run-file writer writes them
    (:func:`~pytest_ocrmetrics.runfile.read.load_shard`: the merged file is the same, written faster)."""
    from pytest_ocrmetrics.runfile.read import RunFileError, load_shard

    if args.validate:
        return load_run_file(path, "", args)
    try:
        return load_shard(path)
    except RunFileError as exc:
        raise UsageError(str(exc)) from None


def _compared(args: argparse.Namespace, run: dict[str, Any]) -> Any:
    """The merged run compared with ``--baseline`` (None without one), recorded in the run as pytest records it."""
    from pytest_ocrmetrics.core.safe_text import clean_run

    if args.seed is None:  # the paired bootstrap of the baseline comparison, as pytest --ocr-seed seeds it
        args.seed = run["bootstrap"]["seed"]
    args.run = args.output  # how the comparison names the merged run
    if not args.baseline:
        return None
    comparison = baseline_comparison(args, load_run_file(args.baseline, "baseline", args), run)
    # the run file says what the baseline compared, as pytest --ocr-baseline writes it
    run["baseline"] = clean_run(comparison.baseline_entry())[0]
    return comparison


def _print_verdict(args: argparse.Namespace, out: TextIO, gates: Sequence[Any], comparison: Any,
                   unevaluated: Sequence[str], requested: bool, failed: bool) -> None:
    """The gates' messages, the comparison's lines, the pairs that evaluated nothing, and the verdict when there
    was anything to judge; control characters of names from the files shown as marks."""
    from pytest_ocrmetrics.core.safe_text import show_controls

    summary_lines = comparison.summary_lines() if comparison is not None else []
    said = [f"{'ERROR' if requested else 'WARNING'}: {sentence}" for sentence in unevaluated]
    for line in [*(gate.message for gate in gates), *summary_lines, *said]:
        print(show_controls(line), file=out)
    if gates or comparison is not None or (unevaluated and requested):
        print(f"ocrmetrics merge: {'FAILED' if failed else 'passed'} ({shown(args.output)})", file=out)


def add_parser(sub: Any) -> None:
    """Add ``ocrmetrics merge`` to the subcommands ``sub``."""
    merge = sub.add_parser(
        "merge", help="merge the run files of a sharded run (pytest --ocr-shard=K/N) into one, then gate it",
        description="Merge the JSON run files of the shards of one run (pytest --ocr-shard=K/N --ocr-json=PATH on each "
                    "machine) into one run file whose summary equals that of the whole run on one machine, then "
                    "check the gates and the baseline on it: exit 1 on a failing gate or a regression, as compare. "
                    "A document in two files, other normalization settings, engines or bootstrap seeds, a "
                    "missing shard, a shard that ran another engine list and a document with a negative count or "
                    "without the counts of a metric it has are refused (exit 2).")
    merge.add_argument("runs", nargs="+", metavar="SHARD.json", help="the run file of every shard")
    merge.add_argument("-o", "--output", required=True, metavar="RUN.json", help="the merged run file to write")
    merge.add_argument("--baseline", metavar="BASE.json", help="compare the merged run with this baseline run file")
    add_validate_option(merge)
    add_gating_options(merge)
    for action in merge._actions:
        if action.dest == "seed":  # pytest --ocr-seed seeds the comparison too: the shards recorded it
            action.default = None
            action.help = "bootstrap seed of the baseline comparison (default: the --ocr-seed the shards ran with)"
    add_report_options(merge)
