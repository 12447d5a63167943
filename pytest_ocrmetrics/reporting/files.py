"""The report files of a run: the JSON run file (written line by line) and the HTML, CSV and Markdown reports, each
written atomically, none stopping the others (:func:`write_reports`)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Sequence

if TYPE_CHECKING:
    from pytest_ocrmetrics.gating.verdict import Verdict

__all__ = ["dump_run", "run_lines", "ReportError", "REPORT_TITLES", "write_reports"]


def dump_run(run: Mapping[str, Any]) -> str:
    """The run file's text: one line per document and per summary row (diff-friendly), the rest on top.

    Each line is encoded by :mod:`json`'s C encoder (an ``indent`` would switch to the pure-Python one, several times
    slower on large runs). NaN and infinity are refused, as the schema requires. :func:`run_lines` gives the same
    text piece by piece (what the plugin writes, so a large run is never held as one string).
    """
    return "".join(piece if isinstance(piece, str) else piece.decode("utf-8") for piece in run_lines(run))


def run_lines(run: Mapping[str, Any]) -> Iterator[str | bytes]:
    """The text of :func:`dump_run`, one document (or summary row, or top-level member) at a time; a piece is the
    UTF-8 bytes of its text where the documents kept them (a shard's lines copied by ``ocrmetrics merge``).

    A shard's run file (one with a ``shard`` entry) ends with its merge index, after the documents: what
    ``ocrmetrics merge`` reads of each document and a digest of the document lines
    (:mod:`~pytest_ocrmetrics.runfile.merge_index`); any ``merge_index`` the run holds is left out (it described the
    documents as they were written before).

    >>> "".join(run_lines({"schema": "s", "documents": [{"id": "a"}, {"id": "b"}]}))
    '{"schema": "s",\\n"documents": [\\n{"id": "a"},\\n{"id": "b"}\\n]}\\n'
    """
    def encode(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    listed = ("summary", "documents", "facts")  # one line per row
    indexed = "shard" in run and "documents" in run
    members = [f"{encode(key)}: {encode(value)}" for key, value in run.items()
               if key not in listed and key != _INDEX_KEY]
    lists = [key for key in listed if key in run]
    yield "{" + ",\n".join(members)
    first = not members
    digest = None
    for key in lists:
        opening = ("" if first else ",\n") + f"{encode(key)}: ["
        first = False
        pieces: Iterator[str | bytes] = _list_pieces(run[key], encode)
        if digest is None:
            yield opening
            if indexed and key == "documents":  # the digest covers what follows the documents' "["
                from pytest_ocrmetrics.runfile import merge_index

                digest = merge_index.new_digest()
                pieces = merge_index.hashed(pieces, digest)
        else:  # a list after the documents: the digest covers it
            pieces = merge_index.hashed(itertools.chain((opening,), pieces), digest)
        yield from pieces
    if digest is not None:
        entries = merge_index.index_pieces(merge_index.index_entries(run["documents"]))
        yield from merge_index.hashed(entries, digest)
        yield merge_index.index_close(digest)
    yield "}\n"


_INDEX_KEY = "merge_index"  # runfile.merge_index.INDEX_KEY (not imported for a run file without it)


def _list_pieces(values: Any, encode: Any) -> Iterator[str | bytes]:
    """A listed member's text after its ``[``: one value per line, then ``]`` (a value kept as bytes, with its
    separator in bytes)."""
    json_texts = getattr(values, "json_texts", None)  # spooled documents: most are written without decoding
    texts = json_texts(encode) if callable(json_texts) else map(encode, values)
    text = next(texts, None)
    if text is None:
        yield "]"
        return
    yield (b"\n" if isinstance(text, bytes) else "\n") + text
    for text in texts:
        yield (b",\n" if isinstance(text, bytes) else ",\n") + text
    yield "\n]"


class ReportError(Exception):
    """Some report files could not be written; every other one was.

    ``problems`` has one line per file that failed (``could not write the HTML report PATH: reason``), ``written``
    the paths that were written, by kind, as :func:`write_reports` returns them.
    """

    def __init__(self, problems: Sequence[str], written: Mapping[str, Path]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)
        self.written = dict(written)


REPORT_TITLES = {"json": "JSON run file", "html": "HTML report", "csv": "CSV report", "markdown": "Markdown summary",
                 "baseline": "baseline (--ocr-baseline-update)"}


def write_reports(run: Mapping[str, Any], verdict: Verdict, *, json_path: Path | None = None, html: Path | None = None,
                  csv: Path | None = None, markdown: Path | None = None,
                  html_options: Mapping[str, Any] | None = None, baseline: Path | None = None) -> dict[str, Path]:
    """Write the requested report files (the JSON run file among them), for the plugin and ``ocrmetrics report``.

    ``html_options`` go to :func:`~pytest_ocrmetrics.reporting.html.render_html` (``image_root``, ``max_details``).
    ``baseline`` is the ``--ocr-baseline-update`` path: the run file written there too, as the next runs' baseline.
    Returns the paths written, by kind (``json``, ``html``, ``csv``, ``markdown``, ``baseline``).

    Total by design: text that cannot be encoded (lone surrogates, non-characters) is replaced and counted first
    (:func:`~pytest_ocrmetrics.core.safe_text.sanitize_run`, the count goes into the run file as
    ``replaced_characters``), each file is written to a temporary file and renamed (a failure keeps the previous
    file), and a report that fails does not stop the others: after trying every one, :class:`ReportError` names
    each that failed.
    """
    from pytest_ocrmetrics.core.safe_text import ReportPathError, sanitize_run, write_lines_atomic

    run = sanitize_run(run)
    gates = list(verdict.gates)

    def json_report(path: Path) -> Path:
        return write_lines_atomic(path, run_lines(run))  # document by document: never the whole text at once

    def html_report(path: Path) -> Path:
        from pytest_ocrmetrics.reporting.html import write_html

        return write_html(run, path, comparison=verdict.comparison, gates=gates, **(html_options or {}))

    def csv_report(path: Path) -> Path:
        from pytest_ocrmetrics.reporting.csv_report import write_csv

        return write_csv(run, path)

    def markdown_report(path: Path) -> Path:
        from pytest_ocrmetrics.reporting.markdown import write_markdown

        return write_markdown(run, path, comparison=verdict.comparison, gates=gates)

    written: dict[str, Path] = {}
    problems: list[str] = []
    for kind, path, writer in (("json", json_path, json_report), ("html", html, html_report),
                               ("csv", csv, csv_report), ("markdown", markdown, markdown_report),
                               ("baseline", baseline, json_report)):
        if path is None:
            continue
        try:
            written[kind] = writer(Path(path))
        except ReportPathError as exc:  # a FIFO, a folder: the sentence says what it is
            problems.append(f"could not write the {REPORT_TITLES[kind]} {path}: {exc.reason}")
        except Exception as exc:  # one report's failure must not cost the others
            reason = str(exc).splitlines()[0] if str(exc).strip() else ""
            problems.append(f"could not write the {REPORT_TITLES[kind]} {path}: {type(exc).__name__}"
                            + (f": {reason}" if reason else ""))
    if problems:
        raise ReportError(problems, written)
    return written
