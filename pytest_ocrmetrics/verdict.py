"""The session's verdict beyond single tests: suite gates and the baseline comparison, and the report files.

Pytest-free: the plugin hands over the finished run (the JSON run file as a dict) and gets back what failed and the
lines to print; ``ocrmetrics compare`` applies the same rules outside pytest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the gating package is imported by a run that has gates or a baseline, not by every run
    from pytest_ocrmetrics.gating import Baseline, Comparison, Gate, GateResult, Tolerance

__all__ = ["Verdict", "judge_run", "write_reports", "ReportError", "dump_run", "run_lines", "suite_properties",
           "unevaluated_rows", "unevaluated_sentences", "documents_ask_for_checks"]


@dataclass(frozen=True)
class Verdict:
    """Gate results and the baseline comparison of one run; ``failed`` when either should fail the session."""

    gates: tuple[GateResult, ...] = ()
    comparison: Comparison | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    error: bool = False  # the gates and the baseline could not be checked at all: never a pass
    # one sentence per engine × dataset whose documents were all left unscored (skipped, filtered or errored), and
    # whether the run asked for a verdict (thresholds, gates, a baseline's tolerances): then it compared nothing there
    unevaluated: tuple[str, ...] = ()
    checks_requested: bool = False

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if not g.passed]

    @property
    def failed(self) -> bool:
        """A gate failed, an aggregate regressed, the baseline matched no document (so nothing was checked), a
        regression tolerance's metric was compared nowhere, or the run asked for a verdict and some engine × dataset
        had no document evaluated (every one skipped, filtered or errored: its thresholds compared nothing).

        Document regressions fail their own tests, so they are not counted again here.
        """
        comparison = self.comparison
        return self.error or bool(self.failed_gates) or bool(comparison is not None and (
            comparison.aggregate_failed or comparison.matched_nothing or comparison.unmatched_tolerances)) or bool(
            self.unevaluated and self.checks_requested)

    def baseline_entry(self) -> dict[str, Any] | None:
        """The run file's top-level ``baseline`` object (compared / new / missing, normalization), or ``None``."""
        return None if self.comparison is None else self.comparison.baseline_entry()

    def lines(self) -> list[str]:
        """What the terminal summary shows: each gate, then the comparison's summary and update lines."""
        out: list[str] = []
        if self.gates:
            out.append("gates:")
            out += [f"  {'PASS' if g.passed else 'FAIL'} {g.message}" for g in self.gates]
        if self.comparison is not None:
            out += self.comparison.summary_lines()  # includes the "baseline can be updated" lines
        out += list(self.notes)
        kind = "ERROR" if self.checks_requested else "WARNING"
        out += [f"{kind}: {sentence}" for sentence in self.unevaluated]
        return out


def judge_run(
    run: Mapping[str, Any],
    *,
    gates: Sequence[Gate] = (),
    baseline: Baseline | None = None,
    tolerances: Mapping[str, Tolerance] | Sequence[Tolerance] = (),
    significance: float | None = None,
    seed: int = 0,
    checks_requested: bool = False,
) -> Verdict:
    """Evaluate the suite gates on the run's summary and compare the run with the baseline, and find the engine ×
    dataset pairs with no document evaluated (a failure when ``checks_requested``, the run's thresholds, or
    ``gates`` or ``tolerances`` asked for a verdict; a warning otherwise)."""
    gate_results: tuple[GateResult, ...] = ()
    if gates:
        from pytest_ocrmetrics.gating import evaluate_gates

        gate_results = tuple(evaluate_gates(gates, run["summary"]))
    comparison = None
    notes: list[str] = []
    if baseline is not None:
        comparison = baseline.compare(run, tolerances, significance=significance, seed=seed)
        if not tolerances and not comparison.matched_nothing:
            notes.append("no --ocr-max-regression given: differences from the baseline are reported, not enforced")
    requested = bool(checks_requested or gates or tolerances)
    return Verdict(gate_results, comparison, tuple(notes), unevaluated=tuple(unevaluated_sentences(run, requested)),
                   checks_requested=requested)


def unevaluated_rows(run: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The summary rows (engine × dataset) that had documents but evaluated none of them (every one skipped, filtered
    or errored). A run file of 0.1 has no ``evaluated``: none of its rows is taken for one."""
    return [row for row in run.get("summary") or () if row.get("documents") and row.get("evaluated", 1) == 0]


def documents_ask_for_checks(documents: Iterable[Mapping[str, Any]]) -> bool:
    """Whether some document was checked (``checks``) or would have been had it been scored (``declared_checks``):
    then a pair that evaluated nothing compared nothing the run asked for."""
    return any(document.get("checks") or document.get("declared_checks") for document in documents)


def unevaluated_sentences(run: Mapping[str, Any], requested: bool = False) -> list[str]:
    """One sentence for each engine × dataset of the run that had documents but evaluated none of them: why (the
    counts, and the first skip or error message), and, when ``requested``, that its checks compared nothing.

    >>> run = {"summary": [{"engine": "tesseract", "dataset": "receipts", "documents": 2, "evaluated": 0,
    ...                     "skipped": 2}],
    ...        "documents": [{"engine": "tesseract", "dataset": "receipts", "outcome": "skipped",
    ...                       "message": "engine 'tesseract' is not available: no binary"}]}
    >>> unevaluated_sentences(run, requested=True)
    ["tesseract / receipts: none of its 2 documents was evaluated (2 skipped: engine 'tesseract' is not available: no binary), so nothing was checked there"]
    """
    empty = unevaluated_rows(run)
    if not empty:
        return []
    wanted = {(row["engine"], row["dataset"]) for row in empty}
    first: dict[tuple[str, str], str] = {}
    for document in run.get("documents") or ():  # read back only in this rare case
        key = (document.get("engine"), document.get("dataset"))
        if key in wanted and key not in first and document.get("message"):
            first[key] = " ".join(str(document["message"]).split()).removeprefix("filtered: ")[:300]
            if len(first) == len(wanted):
                break
    from pytest_ocrmetrics.reporting.safe_text import show_controls  # names and messages reach a terminal

    sentences = []
    for row in empty:
        counts = ", ".join(f"{row[kind]} {'error' if kind == 'errors' and row[kind] == 1 else kind}"
                           for kind in ("skipped", "filtered", "errors") if row.get(kind))
        reason = first.get((row["engine"], row["dataset"]))
        why = f"{counts}: {reason}" if counts and reason else counts or reason or "no score"
        count = row["documents"]
        sentence = (f"{row['engine']} / {row['dataset']}: {'none of its' if count != 1 else 'its'} {count} "
                    f"document{'s' if count != 1 else ''} {'was' if count != 1 else 'was not'} evaluated ({why})")
        sentences.append(show_controls(sentence + (", so nothing was checked there" if requested else "")))
    return sentences


def dump_run(run: Mapping[str, Any]) -> str:
    """The run file's text: one line per document and per summary row (diff-friendly), the rest on top.

    Each line is encoded by :mod:`json`'s C encoder (an ``indent`` would switch to the pure-Python one, several times
    slower on large runs). NaN and infinity are refused, as the schema requires. :func:`run_lines` gives the same
    text piece by piece (what the plugin writes, so a large run is never held as one string).
    """
    return "".join(run_lines(run))


def run_lines(run: Mapping[str, Any]) -> Iterator[str]:
    """The text of :func:`dump_run`, one document (or summary row, or top-level member) at a time.

    >>> "".join(run_lines({"schema": "s", "documents": [{"id": "a"}, {"id": "b"}]}))
    '{"schema": "s",\\n"documents": [\\n{"id": "a"},\\n{"id": "b"}\\n]}\\n'
    """
    def encode(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    listed = ("summary", "documents", "facts")  # one line per row
    members = [f"{encode(key)}: {encode(value)}" for key, value in run.items() if key not in listed]
    lists = [key for key in listed if key in run]
    yield "{" + ",\n".join(members)
    first = not members
    for key in lists:
        yield ("" if first else ",\n") + f"{encode(key)}: ["
        first = False
        json_texts = getattr(run[key], "json_texts", None)  # spooled documents: most are written without decoding
        texts = json_texts(encode) if callable(json_texts) else map(encode, run[key])
        text = next(texts, None)
        if text is None:
            yield "]"
            continue
        yield "\n" + text
        for text in texts:
            yield ",\n" + text
        yield "\n]"
    yield "}\n"


class ReportError(Exception):
    """Some report files could not be written; every other one was.

    ``problems`` has one line per file that failed (``could not write the HTML report PATH: reason``), ``written``
    the paths that were written, by kind, as :func:`write_reports` returns them.
    """

    def __init__(self, problems: Sequence[str], written: Mapping[str, Path]) -> None:
        super().__init__("\n".join(problems))
        self.problems = list(problems)
        self.written = dict(written)


REPORT_TITLES = {"json": "JSON run file", "html": "HTML report", "csv": "CSV report", "markdown": "Markdown summary"}


def write_reports(run: Mapping[str, Any], verdict: Verdict, *, json_path: Path | None = None, html: Path | None = None,
                  csv: Path | None = None, markdown: Path | None = None,
                  html_options: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write the requested report files (the JSON run file among them), for the plugin and ``ocrmetrics report``.

    ``html_options`` go to :func:`~pytest_ocrmetrics.reporting.html.render_html` (``image_root``, ``max_details``).
    Returns the paths written, by kind (``json``, ``html``, ``csv``, ``markdown``).

    Total by design: text that cannot be encoded (lone surrogates, non-characters) is replaced and counted first
    (:func:`~pytest_ocrmetrics.reporting.safe_text.sanitize_run`, the count goes into the run file as
    ``replaced_characters``), each file is written to a temporary file and renamed (a failure keeps the previous
    file), and a report that fails does not stop the others: after trying every one, :class:`ReportError` names
    each that failed.
    """
    from pytest_ocrmetrics.reporting.safe_text import sanitize_run, write_lines_atomic

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
                               ("csv", csv, csv_report), ("markdown", markdown, markdown_report)):
        if path is None:
            continue
        try:
            written[kind] = writer(Path(path))
        except Exception as exc:  # one report's failure must not cost the others
            reason = str(exc).splitlines()[0] if str(exc).strip() else ""
            problems.append(f"could not write the {REPORT_TITLES[kind]} {path}: {type(exc).__name__}"
                            + (f": {reason}" if reason else ""))
    if problems:
        raise ReportError(problems, written)
    return written


def suite_properties(run: Mapping[str, Any], verdict: Verdict) -> list[tuple[str, str]]:
    """JUnit ``<testsuite>`` properties: ``ocr.<engine>.<dataset>.<metric>`` (micro) and ``...<metric>.mean``,
    document counts (``.documents``, ``.evaluated``), with page-level facts ``...facts.score`` (olmOCR-bench's
    headline, ``.low``/``.high`` its interval), ``.passed``, ``.total``, ``.flaky``, ``.unchecked``, one ``ocr.gate.<expression>`` = passed/failed per gate and, with a baseline,
    ``ocr.baseline.regressed``, ``.compared``, ``.new``, ``.missing``, ``.fact_regressions``/``.fact_fixes`` when
    facts flipped, and, when there is one, ``.error`` (it matched no
    document) or ``.warning`` (other normalization settings, compared anyway); ``ocr.unevaluated.error`` (or
    ``.warning`` when no check was asked for) lists the engine × dataset pairs that evaluated no document."""
    props: list[tuple[str, str]] = []
    for row in run["summary"]:
        prefix = f"ocr.{row['engine']}.{row['dataset']}"
        props.append((f"{prefix}.documents", str(row["documents"])))
        if "evaluated" in row:
            props.append((f"{prefix}.evaluated", str(row["evaluated"])))
        for name, stats in row["metrics"].items():
            if stats.get("micro") is not None:
                props.append((f"{prefix}.{name}", repr(round(stats["micro"], 6))))
            if stats.get("mean") is not None:
                props.append((f"{prefix}.{name}.mean", repr(round(stats["mean"], 6))))
    for row in run.get("facts_summary") or ():  # page-level facts: the olmOCR-bench score and its counts
        prefix = f"ocr.{row['engine']}.{row['dataset']}.facts"
        props.append((f"{prefix}.score", repr(round(row["headline"], 6))))
        if row.get("interval"):
            props += [(f"{prefix}.score.low", repr(round(row["interval"][0], 6))),
                      (f"{prefix}.score.high", repr(round(row["interval"][1], 6)))]
        props += [(f"{prefix}.{key}", str(row.get(key, 0))) for key in ("passed", "total", "flaky", "unchecked")]
    for gate in verdict.gates:
        props.append((f"ocr.gate.{gate.gate.expression}", "passed" if gate.passed else "failed"))
    if verdict.comparison is not None:
        comparison = verdict.comparison
        props.append(("ocr.baseline.regressed", "true" if comparison.aggregate_failed else "false"))
        props += [("ocr.baseline.compared", str(comparison.compared)),
                  ("ocr.baseline.new", str(len(comparison.new_documents))),
                  ("ocr.baseline.missing", str(len(comparison.missing_documents)))]
        if comparison.fact_regressions or comparison.fact_fixes:
            props += [("ocr.baseline.fact_regressions", str(len(comparison.fact_regressions))),
                      ("ocr.baseline.fact_fixes", str(len(comparison.fact_fixes)))]
        error = comparison.error or "; ".join(comparison.unmatched_tolerances)
        props += [(f"ocr.baseline.{kind}", text) for kind, text in (("error", error),
                                                                    ("warning", comparison.warning)) if text]
    if verdict.unevaluated:  # pairs that scored nothing: the exit status's reason, where a dashboard reads it
        props.append((f"ocr.unevaluated.{'error' if verdict.checks_requested else 'warning'}",
                      "; ".join(verdict.unevaluated)))
    return props
