"""``ocrmetrics serve``: the OCR Metrics Evaluator page and its JSON API on a local web server."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from pytest_ocrmetrics.cli.common import UsageError, argtype, load_run_file, non_negative_int


def _port(text: str) -> int:
    value = non_negative_int(text)
    if value > 65535:
        raise ValueError(f"a port is 0 to 65535, got {value}")
    return value


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics serve``: the evaluator page on a local web server (:mod:`pytest_ocrmetrics.evaluator.serve`) until Ctrl-C."""
    from pytest_ocrmetrics.evaluator.serve.server import is_loopback, make_server

    if args.image_root and not args.run:
        raise UsageError("--image-root says where a run's page images are; give the run too: --run RUN.json")
    run = load_run_file(args.run, "") if args.run else None
    try:
        server = make_server(args.host, args.port, run=run, run_label=Path(args.run).name if args.run else None,
                             image_root=args.image_root,
                             run_folder=Path(args.run).resolve().parent if args.run else None)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host} port {args.port} ({exc.strerror or exc}); pick another "
                         f"with --port (0 takes any free one) or check --host") from None
    if not is_loopback(args.host):
        exposed = "use the page and read the run's texts" if run else "use the page"
        print(f"ocrmetrics serve: warning: listening on {args.host}, not 127.0.0.1: anyone who can reach this "
              f"machine can {exposed}; use --host 127.0.0.1 to keep it local", file=sys.stderr, flush=True)
    print(f"OCR Metrics Evaluator at {server.url}" + (f" with run {args.run}" if run else "") + " (Ctrl-C to stop)",
          file=out, flush=True)
    if args.open:
        import threading
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(server.url,), daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def add_parser(sub: Any) -> None:
    """Add ``ocrmetrics serve`` to the subcommands ``sub``."""
    serve = sub.add_parser(
        "serve", help="the OCR Metrics Evaluator page: compare texts in a browser (word precision, recall, F1, CRR)",
        description="Serve the OCR Metrics Evaluator page and its JSON API (POST /api/analyze, POST /api/batch) on a "
                    "local web server until Ctrl-C. With --run, the page also lists the run's documents and shows "
                    "each one's reference and output coloured.")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only; anything else is reachable "
                            "from the network, and says so)")
    serve.add_argument("--port", type=argtype(_port), default=8765, help="port (default 8765; 0: any free port)")
    serve.add_argument("--open", action="store_true", help="open the page in the default web browser")
    serve.add_argument("--image-root", metavar="DIR",
                       help="with --run: folder holding the datasets' page images on this machine (as for "
                            "ocrmetrics report); default: where the run had them, then next to the run file")
    serve.add_argument("--run", metavar="RUN.json", help="a run file (pytest --ocr-json=PATH) whose documents the page "
                                                         "lists; read once, at start")
