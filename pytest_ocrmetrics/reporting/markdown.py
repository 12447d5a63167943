"""The Markdown summary (``--ocr-markdown=PATH``): compact enough to append to ``$GITHUB_STEP_SUMMARY``.

Sections: a verdict heading and line (passed, failed or interrupted, with the failed and errored documents, failed
gates and regressions counted), the engine x dataset table with micro values (and deltas against the baseline),
gate results, the baseline comparison (gated aggregates with their bootstrap interval, regressed / new / missing
documents, improvements in a collapsed block), the datasets that could not be loaded, the ground-truth entries
skipped while loading and the worst documents. Every piece of text from the run is escaped for GitHub-flavoured
Markdown, so an id like ``*x*|<b>``
shows as written and cannot break the table; control characters show as marks (``␀``, ``␛``, ``⟨RLO⟩``:
:mod:`~pytest_ocrmetrics.core.safe_text`).

>>> from pytest_ocrmetrics.reporting.markdown import md_escape
>>> md_escape("a|b <script>*x*")
'a\\\\|b &lt;script&gt;\\\\*x\\\\*'
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core.safe_text import show_controls, write_text_atomic
from pytest_ocrmetrics.gating import AggregateDelta, Comparison, Improvement
from pytest_ocrmetrics.metrics.registry import METRICS
from pytest_ocrmetrics.reporting.common import (
    VERDICT_ORDER,
    GateLike,
    collection_errors,
    direction_arrow,
    format_delta,
    format_value,
    gate_results,
    primary_metric,
    run_metrics,
    run_verdict,
    skipped_count,
    skipped_entries,
    worst_first,
)

__all__ = ["render_markdown", "write_markdown", "md_escape"]

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")  # user text never starts a line, so - + # need no escape
MAX_LISTED = 10
_WHITESPACE = "\t\n\x0b\x0c\r"  # collapsed to one space by md_escape, not marked


def md_escape(value: Any) -> str:
    """Escape text for a Markdown table cell or paragraph: HTML-escaped, Markdown punctuation backslashed, control
    characters shown as marks, one line."""
    text = html.escape(show_controls("" if value is None else str(value), keep=_WHITESPACE), quote=False)
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return " ".join(text.split())


def _code(text: str) -> str:
    """A code span when the text allows one (no backtick, no pipe), escaped text otherwise."""
    text = show_controls(text)
    return f"`{text}`" if "`" not in text and "|" not in text else md_escape(text)


def _title(metric: str) -> str:
    spec = METRICS.get(metric)
    if spec is None:
        return md_escape(metric)
    return f"{md_escape(spec.title)} {direction_arrow(metric)}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: Sequence[str]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render_markdown(
    run: Mapping[str, Any],
    *,
    comparison: Comparison | None = None,
    gates: Sequence[GateLike] | None = None,
    title: str = "OCR metrics",
    worst: int = MAX_LISTED,
) -> str:
    """Render a run as a compact Markdown summary; ``gates`` are expressions, gates or gate results.

    >>> text = render_markdown({"documents": [], "summary": [{"engine": "e", "dataset": "d", "documents": 1,
    ...     "passed": 1, "failed": 0, "metrics": {"cer": {"micro": 0.02, "mean": 0.02, "n": 1}}}]}, gates=["cer<=0.03"])
    >>> print(text.splitlines()[0])
    ## ✅ OCR metrics: passed
    >>> print(text.splitlines()[2])
    **passed**: 1 gate passed
    """
    metrics = run_metrics(run)
    results = gate_results(gates, run)
    verdict = run_verdict(run, results, comparison)
    icon = {"passed": "✅", "failed": "❌"}.get(verdict.status, "⚠️")
    status, _, details = verdict.text.partition(": ")
    lines = [f"## {icon} {md_escape(title)}: {verdict.status}", "", f"**{md_escape(status)}**: {md_escape(details)}"]
    documents = list(run.get("documents", ()) or ())
    norm = run.get("normalization") or {}
    facts = [_counted(len(documents), "document"), _counted(len({d["engine"] for d in documents}), "engine"),
             _counted(len({d["dataset"] for d in documents}), "dataset")]
    if norm:
        facts.append(f"normalization {md_escape(norm.get('name'))} ({md_escape(norm.get('unit'))}, "
                     f"{md_escape(norm.get('tokenizer'))} words)")
    lines += ["", " · ".join(facts), ""]
    lines += _summary_lines(run, metrics, comparison)
    lines += _tag_lines(run, metrics)
    lines += _facts_lines(run)
    lines += _omnidoc_lines(run)
    lines += _gate_lines(results)
    if comparison is not None:
        lines += ["", *_comparison_lines(comparison)]
    lines += _loading_lines(run)
    if documents and worst > 0:
        lines += _worst_lines(documents, metrics, primary_metric(run), worst)
    return "\n".join(lines) + "\n"


def _counted(count: int, noun: str) -> str:
    """``1 engine``, ``2 engines``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _summary_lines(run: Mapping[str, Any], metrics: Sequence[str], comparison: Comparison | None) -> list[str]:
    """The engine x dataset table (micro values, the change against the baseline in brackets) and its note."""
    aggregates = {(a.engine, a.dataset, a.metric): a for a in comparison.aggregates} if comparison else {}
    header = ["Engine", "Dataset", "Docs", "Evaluated", "Passed", "Failed"] + [_title(m) for m in metrics]
    rows = []
    for row in run.get("summary", ()) or ():
        engine, dataset = str(row.get("engine")), str(row.get("dataset"))
        evaluated = row.get("evaluated", int(row.get("passed") or 0) + int(row.get("failed") or 0))
        cells = [md_escape(engine), md_escape(dataset), str(row.get("documents", "")), str(evaluated),
                 str(row.get("passed", "")),
                 str(row.get("failed", "") if not row.get("errors") else f"{row.get('failed', 0)} (+{row['errors']} errors)")]
        cells += [_summary_value(metric, (row.get("metrics") or {}).get(metric), aggregates.get((engine, dataset, metric)))
                  for metric in metrics]
        rows.append(cells)
    if not rows:
        return ["No engine x dataset was scored in this run."]
    note = "Micro (corpus) values"
    if comparison is not None:
        note += "; in brackets the change against the baseline over the documents in both runs (bold: regression)"
    return [*_table(header, rows, ["l", "l", "r", "r", "r", "r"] + ["r"] * len(metrics)), "", f"<sub>{note}.</sub>"]


def _omnidoc_lines(run: Mapping[str, Any]) -> list[str]:
    """OmniDocBench's leaderboard numbers per engine x dataset, when the run has such pages."""
    from pytest_ocrmetrics.reporting.omnidoc import omnidoc_lines

    lines = omnidoc_lines(run.get("summary", ()) or ())
    return ["", "### OmniDocBench", "", *(f"- {md_escape(line)}" for line in lines)] if lines else []


def _summary_value(metric: str, stats: Mapping[str, Any] | None, agg: Any) -> str:
    """A summary cell: the micro value, with the delta against the baseline (bold when it is a regression)."""
    value = format_value(metric, stats.get("micro")) if stats else "-"
    if agg is not None and stats:
        value += f" ({format_delta(metric, agg.delta)})"
        if agg.verdict == "regression":
            value = f"**{value}**"
    return value


def _gate_lines(results: Sequence[Any]) -> list[str]:
    """The gates' table; nothing without gates."""
    if not results:
        return []
    icon = {"passed": "✅", "failed": "❌", "unmatched": "⚠️"}
    gate_rows = [[icon[r.status], _code(r.gate.expression),
                  md_escape(f"{r.engine} / {r.dataset}") if r.matched else "matched nothing",
                  format_value(r.gate.metric, r.actual)] for r in results]
    return ["", "### Gates", "", *_table(["", "Gate", "Engine / dataset", "Value"], gate_rows, ["l", "l", "l", "r"])]


def _loading_lines(run: Mapping[str, Any]) -> list[str]:
    """The datasets that could not be loaded and the ground-truth entries skipped while loading (folded)."""
    lines: list[str] = []
    errors = collection_errors(run)
    if errors:
        lines += ["", f"### Datasets that could not be loaded ({len(errors)})", ""]
        lines += [f"- **{md_escape(error.get('dataset'))}**: {md_escape(error.get('message'))}" for error in errors]
    entries = skipped_entries(run)
    if entries:
        total = skipped_count(entries)
        lines += ["", f"<details><summary>{total:,} ground-truth entr{'y' if total == 1 else 'ies'} "
                      f"skipped while loading (not checked)</summary>", ""]
        lines += [f"- {md_escape(entry.get('dataset'))}: {md_escape(entry.get('source'))}: {md_escape(entry.get('reason'))}"
                  for entry in entries[:MAX_LISTED]]
        if len(entries) > MAX_LISTED:
            lines.append(f"- … and {len(entries) - MAX_LISTED} more (see the JSON run file)")
        lines += ["", "</details>"]
    return lines


def _worst_lines(documents: Sequence[Mapping[str, Any]], metrics: Sequence[str], primary: str | None,
                 worst: int) -> list[str]:
    """The ``worst`` worst documents with their first three metrics."""
    shown = worst_first(documents, primary)[:worst]
    doc_metrics = metrics[:3]
    doc_rows = [[str(i), md_escape(d["id"]), md_escape(f"{d['engine']} / {d['dataset']}"), md_escape(d.get("outcome")),
                 *[format_value(m, (d.get("metrics") or {}).get(m)) for m in doc_metrics]]
                for i, d in enumerate(shown, start=1)]
    return ["", f"### Worst documents ({len(shown)} of {len(documents)})", "",
            *_table(["#", "Document", "Engine / dataset", "Outcome", *[_title(m) for m in doc_metrics]], doc_rows,
                    ["r", "l", "l", "l"] + ["r"] * len(doc_metrics))]


def _tag_lines(run: Mapping[str, Any], metrics: Sequence[str]) -> list[str]:
    """The summary's rows per document tag (``summary_by_tag``), folded: tag, engine / dataset, counts, metrics."""
    rows = [row for row in run.get("summary_by_tag") or () if isinstance(row, Mapping)]
    if not rows:
        return []
    table = [[md_escape(row.get("tag")), md_escape(f"{row.get('engine')} / {row.get('dataset')}"),
              str(row.get("documents", "")), str(row.get("evaluated", "")), str(row.get("passed", "")),
              str(row.get("failed", "")),
              *[format_value(m, ((row.get("metrics") or {}).get(m) or {}).get("micro")) for m in metrics]]
             for row in rows[:MAX_LISTED * 5]]
    lines = ["", f"<details><summary>Per document tag ({len(rows)} row{'s' if len(rows) != 1 else ''}; a document "
                 f"with several tags counts in each)</summary>", ""]
    lines += _table(["Tag", "Engine / dataset", "Docs", "Evaluated", "Passed", "Failed", *[_title(m) for m in metrics]],
                    table, ["l", "l", "r", "r", "r", "r"] + ["r"] * len(metrics))
    if len(rows) > MAX_LISTED * 5:
        lines.append(f"\n… and {len(rows) - MAX_LISTED * 5} more rows (see the JSON run file's summary_by_tag)")
    return lines + ["", "</details>"]


def _facts_lines(run: Mapping[str, Any]) -> list[str]:
    """The page-level facts: per engine x dataset the olmOCR-bench score (mean of per-file pass rates) with its
    interval, passed / total and the rate per fact type; then the first failing facts."""
    rows = [row for row in run.get("facts_summary") or () if isinstance(row, Mapping)]
    if not rows:
        return []
    lines = ["", "### Page-level facts", ""]
    table = []
    for row in rows:
        interval = row.get("interval")
        score = format_value("fact_pass_rate", row.get("headline"))
        if interval:
            score += f" [{format_value('fact_pass_rate', interval[0])}, {format_value('fact_pass_rate', interval[1])}]"
        types = ", ".join(f"{md_escape(kind)} {format_value('fact_pass_rate', rate)}"
                          for kind, rate in (row.get("by_type") or {}).items())
        table.append([md_escape(f"{row.get('engine')} / {row.get('dataset')}"), score,
                      f"{row.get('passed')}/{row.get('checked', row.get('total'))}", str(row.get("flaky", 0)), types])
    lines += _table(["Engine / dataset", "Score", "Passed", "Flaky", "By type"], table, ["l", "r", "r", "r", "l"])
    lines += ["", "<sub>Score: olmOCR-bench's, the mean of the per-JSONL-file pass rates, with its bootstrap "
                  "interval.</sub>"]
    from pytest_ocrmetrics.metrics.facts.summary import coverage_text

    lines += [f"\n**Not checked** ({md_escape(row.get('engine'))} / {md_escape(row.get('dataset'))}): "
              f"score {md_escape(coverage_text(row))}" for row in rows if row.get("not_checked")]
    failing = [f for f in run.get("facts") or () if isinstance(f, Mapping) and f.get("passed") is False]
    if failing:
        lines += ["", f"<details><summary>{len(failing)} failing fact{'s' if len(failing) != 1 else ''}</summary>", ""]
        lines += [f"- {_code(str(f.get('id')))} ({md_escape(f.get('type'))}) on {md_escape(f.get('document'))}: "
                  f"{md_escape(str(f.get('explanation') or '')[:300])}" for f in failing[:MAX_LISTED]]
        if len(failing) > MAX_LISTED:
            lines.append(f"- … and {len(failing) - MAX_LISTED} more (see the JSON run file)")
        lines += ["", "</details>"]
    return lines


def _comparison_lines(comparison: Comparison) -> list[str]:
    """The baseline comparison: its settings, the aggregates with a tolerance, the documents and facts that got
    worse, the documents new to or missing from the run, and the improvements (folded)."""
    lines = ["### Against the baseline", ""]
    for part in (_tolerance_lines, _aggregate_lines, _regression_lines, _fact_regression_lines, _reference_lines,
                 _improvement_lines):
        lines += part(comparison)
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def _tolerance_lines(comparison: Comparison) -> list[str]:
    """The tolerances and bootstrap settings, or that none was given (nothing fails)."""
    lines: list[str] = []
    tolerances = ", ".join(str(t) for t in comparison.tolerances.values())
    if tolerances:
        sig = (f"; regressions count only when significant at {comparison.significance:g}"
               if comparison.significance is not None else "")
        lines.append(f"Tolerances {md_escape(tolerances)}{sig}; paired bootstrap, {comparison.resamples} resamples, "
                     f"seed {comparison.seed}.")
    else:
        lines.append("No tolerance given (`--max-regression METRIC:AMOUNT`): differences are shown, nothing fails.")
    lines.append("")
    return lines


def _aggregate_lines(comparison: Comparison) -> list[str]:
    """The aggregates with a tolerance, worst verdict first, with the delta's interval."""
    lines: list[str] = []
    icon = {"regression": "❌", "not-significant": "〰️", "improvement": "⬆️", "unchanged": "✅", "ungated": ""}
    gated = sorted((a for a in comparison.aggregates if a.tolerance is not None), key=lambda a: VERDICT_ORDER[a.verdict])
    if gated:
        rows = []
        for a in gated:
            interval = (f"{format_delta(a.metric, a.interval[0])} .. {format_delta(a.metric, a.interval[1])}"
                        if a.interval else "-")
            rows.append([f"{icon[a.verdict]} {a.verdict}", _title(a.metric), md_escape(f"{a.engine_label} / {a.dataset}"),
                         format_value(a.metric, a.old), format_value(a.metric, a.new), format_delta(a.metric, a.delta),
                         interval, str(a.n)])
        level = f"{gated[0].level:.0%} interval"
        lines += _table(["Verdict", "Metric", "Engine / dataset", "Baseline", "Now", "Delta", level, "n"], rows,
                        ["l", "l", "l", "r", "r", "r", "r", "r"])
        lines.append("")
    return lines


def _regression_lines(comparison: Comparison) -> list[str]:
    """The document metrics worse than the baseline beyond tolerance (the first ones)."""
    lines: list[str] = []
    if comparison.regressions:
        docs = comparison.regressed_documents
        effect = (" (`--ocr-document-regressions=fail`: their tests failed)" if comparison.document_policy == "fail"
                  else " (listed, not failed: the aggregates decide; `--ocr-document-regressions=fail` fails them)")
        lines.append(f"**{len(docs)} document(s) got worse than the baseline beyond tolerance** "
                     f"({len(comparison.regressions)} document metric(s)){effect}:")
        lines.append("")
        lines += [f"- {md_escape(r.dataset)}/{md_escape(r.document)} ({md_escape(r.engine_label)}): {_title(r.metric)} "
                  f"{format_value(r.metric, r.old)} → {format_value(r.metric, r.new)} "
                  f"({format_delta(r.metric, r.delta)})" for r in comparison.regressions[:MAX_LISTED]]
        if len(comparison.regressions) > MAX_LISTED:
            lines.append(f"- … and {len(comparison.regressions) - MAX_LISTED} more (see the HTML report)")
        lines.append("")
    return lines


def _fact_regression_lines(comparison: Comparison) -> list[str]:
    """The facts that passed in the baseline and fail now (the first ones)."""
    lines: list[str] = []
    if comparison.fact_regressions:
        effect = ("" if comparison.facts_gated and comparison.document_policy == "fail"
                  else " (listed, not failed)" if comparison.facts_gated
                  else " (no tolerance on fact_pass_rate: shown, not failed)")
        lines.append(f"**{len(comparison.fact_regressions)} fact(s) passed in the baseline and fail now**{effect}:")
        lines.append("")
        lines += [f"- {_code(change.fact)} ({md_escape(change.type)}) on {md_escape(change.dataset)}/"
                  f"{md_escape(change.document)} ({md_escape(change.engine)})"
                  for change in comparison.fact_regressions[:MAX_LISTED]]
        if len(comparison.fact_regressions) > MAX_LISTED:
            lines.append(f"- … and {len(comparison.fact_regressions) - MAX_LISTED} more (see the JSON run file)")
        lines.append("")
    return lines


def _reference_lines(comparison: Comparison) -> list[str]:
    """The documents new to the run and those of the baseline missing from it (folded)."""
    lines: list[str] = []
    for title, refs in (("new document(s), not in the baseline", comparison.new_documents),
                        ("document(s) of the baseline missing from this run", comparison.missing_documents)):
        if refs:
            lines.append(f"<details><summary>{len(refs)} {title}</summary>")
            lines.append("")
            lines += [f"- {md_escape(ref.dataset)}/{md_escape(ref.id)} ({md_escape(ref.engine_label)}): {md_escape(ref.reason)}"
                      for ref in refs[:MAX_LISTED]]
            if len(refs) > MAX_LISTED:
                lines.append(f"- … and {len(refs) - MAX_LISTED} more")
            lines += ["", "</details>", ""]
    return lines


def _improvement_lines(comparison: Comparison) -> list[str]:
    """The aggregates and documents improved beyond tolerance (folded)."""
    lines: list[str] = []
    improvements: list[AggregateDelta | Improvement] = [*comparison.aggregate_improvements, *comparison.improvements]
    if improvements:
        lines.append(f"<details><summary>{len(improvements)} improvement(s) beyond tolerance: "
                     f"the baseline can be updated</summary>")
        lines.append("")
        for item in improvements[:MAX_LISTED]:
            where = (f"{md_escape(item.dataset)}/{md_escape(item.document)} ({md_escape(item.engine_label)})"
                     if isinstance(item, Improvement)
                     else f"{md_escape(item.engine_label)} / {md_escape(item.dataset)} (aggregate)")
            lines.append(f"- {where}: {_title(item.metric)} {format_value(item.metric, item.old)} → "
                         f"{format_value(item.metric, item.new)} ({format_delta(item.metric, item.delta)})")
        if len(improvements) > MAX_LISTED:
            lines.append(f"- … and {len(improvements) - MAX_LISTED} more")
        lines += ["", "</details>", ""]
    return lines


def write_markdown(run: Mapping[str, Any], path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`render_markdown` to ``path`` (UTF-8, parent folders created, through a temporary file renamed
    over ``path``); returns the path."""
    return write_text_atomic(path, render_markdown(run, **kwargs))
