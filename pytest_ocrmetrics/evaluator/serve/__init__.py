"""``ocrmetrics serve``: the OCR Metrics Evaluator page and its JSON API, on a local web server.

- :mod:`pytest_ocrmetrics.evaluator.serve.api`: the API as plain functions (options, one comparison, a batch of files, the
  multipart parser), testable without a socket;
- :mod:`pytest_ocrmetrics.evaluator.serve.server`: the standard library HTTP server that serves the page and the API;
- ``static/``: the page's HTML, stylesheet and script (package data, inlined into the one page the server sends).

Nothing here imports pytest; ``import pytest_ocrmetrics.evaluator.serve`` starts no server.
"""

from pytest_ocrmetrics.evaluator.serve.api import ApiError, MatchOptions, analyze, analyze_texts, batch, parse_multipart
from pytest_ocrmetrics.evaluator.serve.server import EvaluatorServer, make_server, serve_in_thread

__all__ = ["ApiError", "MatchOptions", "analyze", "analyze_texts", "batch", "parse_multipart", "EvaluatorServer",
           "make_server", "serve_in_thread"]
