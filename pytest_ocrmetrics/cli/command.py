"""The parser of the ``ocrmetrics`` command, assembled from its subcommands, and :func:`main`, which runs one.

Each subcommand is a module of :mod:`pytest_ocrmetrics.cli` with two functions: ``add_parser(sub)`` adds its
subparser and ``run(args, out)`` runs it and returns the exit code; :data:`COMMANDS` lists them in the order the help
shows them. A new subcommand is a new module plus one entry there.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from types import ModuleType
from typing import Sequence, TextIO

from pytest_ocrmetrics.cli import biblicus_compare, compare, evaluate, merge, report, score, serve
from pytest_ocrmetrics.cli.common import UsageError
from pytest_ocrmetrics.core.collector import collector_paused

#: subcommand name -> its module (``add_parser``, ``run``), in the order of ``ocrmetrics --help``
COMMANDS: dict[str, ModuleType] = {
    "score": score, "compare": compare, "report": report, "biblicus-compare": biblicus_compare,
    "evaluate": evaluate, "serve": serve, "merge": merge,
}

#: subcommands that read run files, write reports and end: they run with the cyclic garbage collector paused (the
#: decoded runs hold millions of containers and no cycles; its full passes over them found nothing, and a 20,000-document
#: ``compare`` took 1.4x as long). ``serve`` runs for hours and ``evaluate`` runs engines: they keep it.
RUN_FILE_COMMANDS = frozenset({"compare", "report", "merge"})


def build_parser() -> argparse.ArgumentParser:
    """The ``ocrmetrics`` parser: the global options and one subparser per module of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="ocrmetrics",
        description="OCR quality from the command line: score texts, compare runs against a baseline, render reports.",
        epilog="Exit codes: 0 ok, 1 regression, failing gate or a baseline matching no document (compare, merge), "
               "2 usage error.",
    )
    from pytest_ocrmetrics import __version__

    parser.add_argument("--version", action="version", version=f"ocrmetrics (pytest-ocrmetrics) {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: Sequence[str] | None = None, *, stdout: TextIO | None = None) -> int:
    """Run the ``ocrmetrics`` command; returns the exit code (0 ok, 1 regression, failing gate or a baseline that
    matched nothing, 2 usage error)."""
    out = stdout or sys.stdout
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    commands = _subparsers(parser)
    try:
        if words and words[0] in commands:
            # options may come between the paths: ocrmetrics score REF.txt --json HYP.txt
            args = commands[words[0]].parse_intermixed_args(words[1:])
            args.command = words[0]
        else:
            args = parser.parse_args(words)
    except SystemExit as exc:  # argparse already printed the usage error (or the help)
        return int(exc.code or 0)
    try:
        with collector_paused() if args.command in RUN_FILE_COMMANDS else contextlib.nullcontext():
            return COMMANDS[args.command].run(args, out)
    except UsageError as exc:
        print(f"ocrmetrics {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # ocrmetrics compare ... | head: stop quietly, as other command line tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
