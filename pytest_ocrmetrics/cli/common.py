"""What the subcommands of ``ocrmetrics`` share: the usage error, argument types, reading run files, the
baseline comparison and gating options, writing the reports and the exit code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from pytest_ocrmetrics.gating import (
    CLI_OPTIONS,
    RunFileError,
    compare_runs,
    load_run,
    normalization_mismatch,
    parse_gate,
    parse_significance,
    parse_tolerance,
)


class UsageError(Exception):
    """A mistake on the command line or in the given files: printed as one line, exit code 2."""


def argtype(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """An argparse ``type`` from a parser that raises ``ValueError``: its message becomes argparse's usage error."""
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__
    return convert


def non_negative_int(text: str) -> int:
    """A whole number, 0 or more, else ``ValueError`` with one sentence."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise ValueError(f"must be 0 or more, got {value}")
    return value


def load_run_file(path: str, what: str, args: argparse.Namespace | None = None) -> dict[str, Any]:
    """The run file at ``path``, checked against the full JSON schema, or (``merge``, ``compare`` and ``report``
    without ``--validate``: ``args.validate`` false) its structure only; a file that is not one is a
    :class:`UsageError` starting with ``what``."""
    schema = True if args is None else bool(getattr(args, "validate", True))
    try:
        return load_run(path, schema=schema)
    except RunFileError as exc:
        raise UsageError(f"{what} {exc}" if what else str(exc)) from None


def shown(path: Any) -> str:
    """A path as printed: characters that do not print (a control character, a byte that is not UTF-8) escaped."""
    from pytest_ocrmetrics.core.safe_text import printable

    return printable(str(path))


def exit_code(args: argparse.Namespace, code: int) -> int:
    """``code``, or 2 when it is 0 but a report could not be written (a regression's 1 stays 1)."""
    return code or (2 if getattr(args, "reports_failed", False) else 0)


def run_folder(args: argparse.Namespace, run_path: str) -> Path:
    """The run file's folder: where the HTML report looks for page images last, after ``--image-root`` and the
    dataset folders the run recorded (:class:`~pytest_ocrmetrics.reporting.images.ImageFinder`)."""
    return Path(run_path).resolve().parent


def baseline_comparison(args: argparse.Namespace, baseline: dict[str, Any], run: dict[str, Any]) -> Any:
    """The comparison of ``run`` with ``baseline``; runs made with other normalization settings are a usage error
    unless ``--allow-mismatch`` (then the comparison carries a warning)."""
    mismatch = normalization_mismatch(baseline.get("normalization") or {}, run.get("normalization") or {},
                                      baseline_name=f"baseline {args.baseline!r}", current_name=repr(args.run),
                                      override="--allow-mismatch")
    if mismatch is not None and not args.allow_mismatch:
        raise UsageError(mismatch)
    return compare_runs(baseline, run, args.max_regression or [], significance=args.significance, seed=args.seed,
                        resamples=args.resamples, baseline_source=args.baseline,
                        document_regressions=args.document_regressions,
                        engine_map=getattr(args, "engine_pairs", None), options=CLI_OPTIONS)


def unevaluated_pairs(args: argparse.Namespace, run: dict[str, Any]) -> tuple[list[str], bool]:
    """The run's engine × dataset pairs with no document evaluated (as pytest says them), and whether a verdict was
    asked for: a gate, a tolerance, or a check made or declared on some document."""
    from pytest_ocrmetrics.gating.verdict import documents_ask_for_checks, unevaluated_rows, unevaluated_sentences

    if not unevaluated_rows(run):  # the usual case: no document is read back
        return [], False
    requested = bool(args.gate or args.max_regression or documents_ask_for_checks(run.get("documents") or ()))
    return unevaluated_sentences(run, requested), requested


def write_reports(args: argparse.Namespace, run: dict[str, Any], comparison: Any, gates: Sequence[Any],
                   run_folder: Path | None) -> list[str]:
    """Write the requested reports (the plugin's own writer); returns one ``KIND: PATH`` line per file written.

    A report that cannot be written (a folder in the way, a full disk) does not stop the others: each failure is one
    line on stderr, and ``args.reports_failed`` makes the command exit with 2 (see :func:`exit_code`).
    """
    from pytest_ocrmetrics.gating.verdict import Verdict
    from pytest_ocrmetrics.reporting.files import ReportError, write_reports

    if not any(getattr(args, name, None) for name in ("html", "csv", "markdown", "output")):
        return []  # nothing asked for: not even the run's sanitising pass (compare without reports)
    try:
        written = write_reports(
            run, Verdict(tuple(gates), comparison),
            html=getattr(args, "html", None), csv=getattr(args, "csv", None), markdown=getattr(args, "markdown", None),
            json_path=getattr(args, "output", None),
            html_options={"image_root": getattr(args, "image_root", None), "run_folder": run_folder,
                          "max_details": args.max_details} if getattr(args, "html", None) else None,
        )
    except ReportError as exc:
        for problem in exc.problems:
            print(f"ocrmetrics {args.command}: error: {problem}", file=sys.stderr)
        args.reports_failed = True
        written = exc.written
    titles = {"json": "run file", "html": "HTML report", "csv": "CSV report", "markdown": "Markdown summary"}
    return [f"{titles[kind]}: {shown(path)}" for kind, path in written.items()]


def add_gating_options(parser: argparse.ArgumentParser) -> None:
    """Add the baseline and gate options of ``compare``, ``report`` and ``merge`` (the plugin's rules) to ``parser``."""
    parser.add_argument("--max-regression", action="append", type=argtype(parse_tolerance), metavar="METRIC:AMOUNT",
                        help="allowed worsening per metric, absolute (cer:0.005) or relative to the baseline "
                             "(field_f1:2%%); '*:1%%' for every metric without its own (repeatable)")
    parser.add_argument("--gate", action="append", type=argtype(parse_gate), metavar="EXPR",
                        help="suite gate on the (new) run, e.g. 'cer<=0.03', 'mean:field_f1>=0.9', "
                             "'p95:cer<=0.2 [engine=tesseract, dataset=receipts]' (repeatable)")
    parser.add_argument("--significance", type=argtype(parse_significance), metavar="ALPHA",
                        help="count an aggregate regression only when its paired bootstrap interval at 1-ALPHA "
                             "excludes zero (e.g. 0.05)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0): same seed, same verdict")
    parser.add_argument("--resamples", type=argtype(non_negative_int), default=1000,
                        help="bootstrap resamples (default 1000; 0 for no intervals)")
    parser.add_argument("--document-regressions", choices=("warn", "fail", "off"), default="warn",
                        help="a document that got worse beyond its tolerance: warn (default: listed, the aggregates "
                             "decide the exit status), fail (exit 1) or off (not listed), as pytest's "
                             "--ocr-document-regressions")
    parser.add_argument("--allow-mismatch", action="store_true",
                        help="compare runs made with another normalization profile, unit or tokenizer (with a "
                             "warning) instead of refusing them")


def add_validate_option(parser: argparse.ArgumentParser) -> None:
    """``--validate``: the full JSON schema for every run file read (default: their structure)."""
    parser.add_argument("--validate", action="store_true",
                        help="check every run file read against the full JSON schema, element by element (default: "
                             "the structure of what is read, in plain Python, ~10x faster on a big run; NaN, "
                             "infinity and a wrong type where a reader looks are refused either way)")


def add_report_options(parser: argparse.ArgumentParser) -> None:
    """Add the report options (``--html``, ``--csv``, ``--markdown``, ``--image-root``, ``--max-details``) to
    ``parser``."""
    parser.add_argument("--html", metavar="PATH", help="write the self-contained HTML report")
    parser.add_argument("--csv", metavar="PATH", help="write the CSV report (one row per document x engine)")
    parser.add_argument("--markdown", metavar="PATH", help="write the Markdown summary (for $GITHUB_STEP_SUMMARY)")
    parser.add_argument("--image-root", metavar="DIR",
                        help="folder holding the datasets' page images on this machine (a checkout, or a dataset "
                             "folder): images are looked for here first, then where the run had them, then next to "
                             "the run file")
    parser.add_argument("--max-details", type=argtype(non_negative_int), default=200,
                        help="documents with a detail view in the HTML report, worst first (default 200)")


def pixel_limit(text: str) -> int:
    """``--max-image-pixels``: a whole number of pixels from 1 (no 'off': see docs/reference/limits.md)."""
    from pytest_ocrmetrics.evaluator import check_limit

    return check_limit(text, "--max-image-pixels", "pixels")


def output_limit(text: str) -> int:
    """``--max-output-chars``: a whole number of characters from 1 (no 'off': see docs/reference/limits.md)."""
    from pytest_ocrmetrics.evaluator import check_limit

    return check_limit(text, "--max-output-chars", "characters")


def default_output_limit() -> int:
    """The plugin's default bound on scored output length (``--ocr-max-output-chars``)."""
    from pytest_ocrmetrics.scoring.document import MAX_SCORED_CHARACTERS

    return MAX_SCORED_CHARACTERS
