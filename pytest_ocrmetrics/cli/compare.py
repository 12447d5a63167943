"""``ocrmetrics compare``: a run file against a baseline run file with the plugin's rules (``--ocr-baseline``),
optionally pairing engines (``--engine OLD=NEW``); exit 1 on a regression or a failing gate."""

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
    argtype,
    baseline_comparison,
    exit_code,
    load_run_file,
    run_folder,
    unevaluated_pairs,
    write_reports,
)
from pytest_ocrmetrics.gating import (
    evaluate_gates,
)


def _engine_text(text: str) -> str:
    """An ``--engine`` value as typed, checked for its ``=`` (the names are checked once the run files are read)."""
    if "=" not in text.strip("="):
        raise ValueError(f"{text!r} is not OLD=NEW: give the baseline's engine and the run's engine compared with it, "
                         f"e.g. --engine tesseract=rapidocr")
    return text


def _engine_names(run: dict[str, Any]) -> list[str]:
    return sorted({str(doc.get("engine")) for doc in run.get("documents", ())})


def _engine_pairs(args: argparse.Namespace, baseline: dict[str, Any], run: dict[str, Any]) -> list[tuple[str, str]]:
    """``--engine OLD=NEW`` as (baseline engine, run engine) pairs
    (:func:`~pytest_ocrmetrics.gating.comparison.parse_engine_pairs`); a name that is not there is a usage error with
    a did-you-mean."""
    from pytest_ocrmetrics.gating.comparison import parse_engine_pairs

    try:
        return parse_engine_pairs(args.engine or (), _engine_names(baseline), _engine_names(run),
                                  baseline_name=f"the baseline {args.baseline!r}", run_name=repr(args.run),
                                  option="--engine")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics compare``: the comparison, the gates and the engines paired; exit 1 when any of them fails."""
    from pytest_ocrmetrics.core.safe_text import show_controls

    baseline = load_run_file(args.baseline, "baseline", args)
    run = load_run_file(args.run, "", args)
    args.engine_pairs = _engine_pairs(args, baseline, run)
    comparison = baseline_comparison(args, baseline, run)
    gates = evaluate_gates(args.gate or [], run.get("summary", ()))
    gate_failed = any(not g.passed for g in gates)
    unevaluated, requested = unevaluated_pairs(args, run)  # NEW.json's pairs that scored nothing, as pytest says them
    failed = comparison.exit_failed or gate_failed or bool(unevaluated and requested)
    written = write_reports(args, run, comparison, gates, run_folder(args, args.run))  # before any output
    said = [f"{'ERROR' if requested else 'WARNING'}: {sentence}" for sentence in unevaluated]
    if args.json:
        data = comparison.to_dict()
        data["gates"] = [{"gate": g.gate.expression, "engine": g.engine, "dataset": g.dataset, "actual": g.actual,
                          "status": g.status, "message": g.message} for g in gates]
        data["unevaluated"] = said
        data.setdefault("engine_map", [])  # the comparison's own (baseline_entry) when engines were paired
        data["unpaired"] = [f"ERROR: {line}" for line in comparison.unpaired_engines]
        data["exit_failed"] = failed
        json.dump(data, out, indent=2, ensure_ascii=False)
        out.write("\n")
        for kind, text in (("error", comparison.error), ("warning", comparison.warning)):
            if text:  # also in the JSON; said where a person reads it too
                print(f"ocrmetrics compare: {kind}: {text}", file=sys.stderr)
        for line in [*(f"ERROR: {sentence}" for sentence in comparison.compared_nothing), *said]:
            print(f"ocrmetrics compare: {line}", file=sys.stderr)
    else:  # names from the run files: control characters shown as marks, not sent to the terminal
        paired = [f"engines paired (baseline -> run): {', '.join(f'{o} -> {n}' for o, n in args.engine_pairs)}"
                  ] if args.engine_pairs else []
        for line in [*paired, *(gate.message for gate in gates), *comparison.summary_lines(), *said]:
            print(show_controls(line), file=out)
        print(f"ocrmetrics compare: {'FAILED' if failed else 'passed'} ({args.baseline} -> {args.run})", file=out)
    for line in written:
        print(line, file=sys.stderr if args.json else out)
    return exit_code(args, 1 if failed else 0)


def add_parser(sub: Any) -> None:
    """Add ``ocrmetrics compare`` to the subcommands ``sub``."""
    compare = sub.add_parser("compare", help="compare a run file with a baseline run file (exit 1 on regression)",
                             description="Compare NEW.json with BASE.json per document and per engine x dataset "
                                         "aggregate, with the plugin's rules; exit 1 on a regression, a failing gate "
                                         "or when no document of NEW.json is in BASE.json.")
    compare.add_argument("baseline", metavar="BASE.json")
    compare.add_argument("run", metavar="NEW.json")
    add_gating_options(compare)
    compare.add_argument("--engine", action="append", type=argtype(_engine_text), metavar="OLD=NEW",
                         help="compare engine OLD of BASE.json with engine NEW of NEW.json, documents paired by "
                              "dataset and id (repeatable; give one file twice to compare two engines of one run)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    add_validate_option(compare)
    add_report_options(compare)
