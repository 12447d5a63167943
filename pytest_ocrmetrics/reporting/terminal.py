"""The terminal summary table, aligned by display width (:func:`pytest_ocrmetrics.scoring.diff.display_width`: measured per
grapheme cluster, so CJK characters and emoji take two columns and combining marks none).

Cells are one line of visible text, printed grapheme cluster by cluster with the marks of the failure excerpts
(:func:`pytest_ocrmetrics.scoring.diff.visible`: ``↵`` for a line break, ``␛`` for ESC, ``⟨RLO⟩``, ``⟨ZWSP⟩``, ...), so a
document id cannot move the cursor, recolour the terminal or reverse the rest of a row, and an emoji family or a
conjunct prints whole.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

import regex

from pytest_ocrmetrics.core.safe_text import clean_text
from pytest_ocrmetrics.metrics.registry import METRICS, in_registry_order
from pytest_ocrmetrics.reporting.common import engine_order, format_delta, format_value
from pytest_ocrmetrics.scoring.diff import display_width, visible
from pytest_ocrmetrics.scoring.document import DEFAULT_TEXT_METRICS

__all__ = ["render_summary", "render_table", "paired_engine_lines"]


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * max(0, width - display_width(text))
    return gap + text if right else text + gap


_GRAPHEME = regex.compile(r"\X")
_PLAIN = regex.compile(r"[ -~]*")


def _cell(value: Any) -> str:
    """A cell's text as the terminal may show it: encodable, one line, every cluster whole or marked."""
    text = clean_text(str(value))[0]
    if _PLAIN.fullmatch(text):
        return text
    return "".join(map(visible, _GRAPHEME.findall(text)))


def render_table(header: Sequence[str], rows: Sequence[Sequence[str]], *, right_from: int = 0) -> list[str]:
    """Rows under a header, columns padded to their display width; columns from ``right_from`` on are right-aligned."""
    table = [[_cell(cell) for cell in row] for row in [header, *rows]]
    widths = [max(display_width(r[i]) for r in table) for i in range(len(header))]
    lines = []
    for n, row in enumerate(table):
        cells = [_pad(cell, widths[i], right=i >= right_from) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


# (title, metric, statistic) of the metric columns, shown when some row has the metric
_METRIC_COLUMNS = (
    ("CER", "cer", "micro"), ("CER mean", "cer", "mean"), ("CER p95", "cer", "p95"), ("WER", "wer", "micro"),
    ("field F1", "field_f1", "micro"), ("JSON valid", "json_valid", "micro"), ("facts", "fact_pass_rate", "micro"),
)
_TITLES = {name: title for title, name, statistic in _METRIC_COLUMNS if statistic == "micro"}
# metrics every run computes when the document has what they need (text, fields, a schema, facts): shown by default
# only as the columns above; every other metric in a summary was asked for (--ocr-metric) and gets a column of its own
_COMPUTED_WITHOUT_ASKING = frozenset({*DEFAULT_TEXT_METRICS, "field_f1", "field_precision", "field_recall",
                                      "json_valid", "parse_success", "completeness", "fact_pass_rate"})
# (title, summary key) of the count columns shown only when some row has a non-zero count
_OPTIONAL_COUNTS = (("skipped", "skipped"), ("cached", "cache_hits"), ("truncated", "truncated"))


def _metric_columns(rows: Sequence[Mapping[str, Any]],
                    columns: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(title, metric, statistic) of the table's metric columns: the chosen ones (``--ocr-columns``), each shown even
    when no row has it ('-'), or the default ones some row has."""
    if columns:
        return [(METRICS[name].title if stat == "micro" else f"{METRICS[name].title} {stat}", name, stat)
                for name, stat in columns]
    shown = [column for column in _METRIC_COLUMNS if any(column[1] in r["metrics"] for r in rows)]
    # a metric computed only when asked for (--ocr-metric=crr, task_success, ...) was asked for: show it too
    asked = dict.fromkeys(name for r in rows for name in r["metrics"] if name not in _COMPUTED_WITHOUT_ASKING)
    return shown + [(METRICS[name].title if name in METRICS else name, name, "micro")
                    for name in in_registry_order(asked)]


def _summary_table(rows: Sequence[Mapping[str, Any]], metrics: Sequence[tuple[str, str, str]],
                   keys: Sequence[str] = ()) -> list[str]:
    """The summary rows as a table: ``keys`` (e.g. ``tag``) first, then engine, dataset, counts and metrics."""
    counts = [("docs", "documents"), ("evaluated", "evaluated"), ("passed", "passed"), ("failed", "failed"),
              ("errors", "errors"), ("filtered", "filtered")]
    counts += [(title, key) for title, key in _OPTIONAL_COUNTS if any(r.get(key) for r in rows)]
    header = [*keys, "engine", "dataset", *(title for title, _ in counts), *(title for title, _, _ in metrics)]
    table = [
        [*(r[key] for key in keys), r["engine"], r["dataset"], *(str(r.get(key, "-")) for _, key in counts),
         *(format_value(metric, (r["metrics"].get(metric) or {}).get(stat)) for _, metric, stat in metrics)]
        for r in rows
    ]
    return render_table(header, table, right_from=len(keys) + 2)


def render_summary(run: Mapping[str, Any], *, mode: str = "short",
                   columns: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The summary lines of a run (the JSON run file's dict): per engine × dataset outcome counts (``evaluated``:
    passed + failed) and headline metrics, or the ``columns`` chosen as ``(metric, statistic)`` pairs
    (``--ocr-columns``); ``mode="full"`` adds the rows per document tag (``summary_by_tag``), the worst documents and
    the most frequent confusions, and, in a run with two or more engines on one dataset, each other engine's paired
    deltas against the first (:func:`paired_engine_lines`)."""
    rows = run["summary"]
    metrics = _metric_columns(rows, columns)
    lines = _summary_table(rows, metrics) if rows else ["no document was scored in this run"]
    missing = [name for name in dict.fromkeys(name for _, name, _ in metrics)
               if not any(name in r["metrics"] for r in rows)]
    if missing and rows:
        lines.append(f"not computed in this run: {', '.join(missing)} (add --ocr-metric="
                     f"{missing[0]}{'' if len(missing) == 1 else ' and the others'}, or the data it needs)")
    if run.get("interrupted"):
        lines.insert(0, "INTERRUPTED: these are the results of the documents checked before the run was stopped")
    skipped_entries = sum(r["skipped_entries"] for r in rows)
    if skipped_entries:
        lines.append(f"{skipped_entries} ground-truth entr{'y was' if skipped_entries == 1 else 'ies were'} skipped "
                     "while loading (see the warnings)")
    replaced = int(run.get("replaced_characters") or 0)
    if replaced:
        lines.append(f"{replaced} character{'s' if replaced != 1 else ''} that cannot be written (lone surrogates, "
                     "non-characters such as U+FFFE) replaced with U+FFFD in every report")
    lines += facts_lines(run.get("facts_summary") or ())
    from pytest_ocrmetrics.reporting.omnidoc import omnidoc_lines

    lines += omnidoc_lines(rows)
    normalization = run["normalization"]
    if rows:  # a table to explain
        lines.append(f"rates are micro averages over documents (sum of errors / sum of reference length) unless "
                     f"marked mean; normalization {normalization.get('name')}, unit {normalization.get('unit')}")
    if mode == "full":
        lines += _by_tag(run.get("summary_by_tag") or (), metrics)
        lines += paired_engine_lines(run, [name for _, name, _ in metrics])
        lines += _worst_documents(run["documents"])
        lines += _top_confusions(run["documents"])
    return lines


def facts_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per engine × dataset with page-level facts: passed / checked, olmOCR-bench's headline (mean of the
    per-JSONL pass rates) with its interval, flaky and unchecked counts, then the pass rate per fact type. Facts that
    could not be checked are left out of the rates, and the line says how many and why.

    >>> facts_lines([{"engine": "e", "dataset": "d", "passed": 3, "total": 4, "headline": 0.75, "interval": [0.5, 1.0],
    ...               "by_type": {"present": 1.0, "table": 0.5}, "flaky": 1, "unchecked": 0}])[0]
    'facts e / d: 3/4 passed; olmOCR-bench score 75.0% [50.0%, 100.0%] (mean of per-file pass rates); 1 flaky'
    >>> facts_lines([{"engine": "e", "dataset": "d", "passed": 2, "total": 3, "checked": 2, "headline": 1.0,
    ...               "interval": None, "not_checked": {"no browser": 1}, "unchecked": 1}])[0]
    'facts e / d: 2/2 passed; olmOCR-bench score 100.0% (mean of per-file pass rates) over 2 of 3 facts; 1 not checked: no browser'
    """
    if not rows:  # most runs have no facts: nor the facts modules' import (a hundredth of a second)
        return []
    from pytest_ocrmetrics.metrics.facts.summary import coverage_text

    lines = []
    for row in rows:
        interval = row.get("interval")
        shown = f" [{interval[0]:.1%}, {interval[1]:.1%}]" if interval else ""
        checked = row.get("checked", row["total"])
        # unchecked: facts of pages without output (failed) and facts not checked (left out, said in the headline)
        counts = {"flaky": row.get("flaky"), "unchecked": (row.get("unchecked") or 0) - (row["total"] - checked)}
        extra = "".join(f"; {value} {key}" for key, value in counts.items() if value)
        score = "none" if row.get("headline") is None else f"{row['headline']:.1%}{shown}"
        coverage = f" {coverage_text(row)}" if checked != row["total"] else ""
        lines.append(f"facts {row['engine']} / {row['dataset']}: {row['passed']}/{checked} passed; olmOCR-bench "
                     f"score {score} (mean of per-file pass rates){coverage}{extra}")
        types = ", ".join(f"{kind} {rate:.1%}" for kind, rate in (row.get("by_type") or {}).items())
        if types:
            lines.append(f"  by type: {types}")
    return lines


def _by_tag(rows: Sequence[Mapping[str, Any]], metrics: Sequence[tuple[str, str, str]]) -> list[str]:
    if not rows:
        return []
    return ["", "per document tag (a document with several tags counts in each):",
            *_summary_table(rows, metrics, ["tag"])]


def paired_engine_lines(run: Mapping[str, Any], metrics: Sequence[str]) -> list[str]:
    """Per dataset scored by two or more engines, each other engine against the first (the first ``--ocr-engine``,
    :func:`~pytest_ocrmetrics.reporting.common.engine_order`):
    the micro delta of each of ``metrics`` over the documents both engines scored (same id), with its paired bootstrap
    interval (the run's ``--ocr-seed`` and ``--ocr-bootstrap``). It is ``ocrmetrics compare RUN.json RUN.json
    --engine FIRST=OTHER``, so the numbers are the same; a run with one engine per dataset imports nothing for it.
    """
    engines = _paired_datasets(run)
    metrics = list(dict.fromkeys(name for name in metrics if name in METRICS))
    if not engines or not metrics:
        return []
    from pytest_ocrmetrics.gating import compare_runs

    documents = _paired_documents(run, engines, metrics)
    bootstrap = run.get("bootstrap") or {}
    seed, resamples = int(bootstrap.get("seed", 0)), int(bootstrap.get("resamples", 1000))
    rows = []
    for dataset, (first, *others) in engines.items():
        docs = {"documents": documents[dataset]}
        comparison = compare_runs(docs, docs, seed=seed, resamples=resamples,
                                  engine_map=[(first, other) for other in others])
        ids = {engine: {d["id"] for d in documents[dataset] if d["engine"] == engine and d["metrics"]}
               for engine in (first, *others)}
        for other in others:
            deltas = {a.metric: a for a in comparison.aggregates if a.engine == other}
            rows.append([dataset, f"{first} -> {other}", str(len(ids[first] & ids[other])),
                         *(_paired_delta(deltas.get(name)) for name in metrics)])
    interval = "; in brackets the 95% paired bootstrap interval" if resamples else "; no intervals: --ocr-bootstrap=0"
    return ["", f"paired deltas against the first engine of each dataset (other minus first, micro over the "
                f"documents both scored{interval}):",
            *render_table(["dataset", "engines", "paired", *(f"{_TITLES.get(name, METRICS[name].title)} delta"
                                                              for name in metrics)],
                          rows, right_from=2)]


def _paired_datasets(run: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each dataset of the summary scored by two or more engines -> its engines, in the run's engine order."""
    engines: dict[str, list[str]] = {}
    for row in run["summary"]:
        engines.setdefault(row["dataset"], [])
        if row["engine"] not in engines[row["dataset"]]:
            engines[row["dataset"]].append(row["engine"])
    engines = {dataset: names for dataset, names in engines.items() if len(names) > 1}
    if engines:
        order = engine_order(run)
        engines = {dataset: sorted(names, key=lambda name: order.index(name) if name in order else len(order))
                   for dataset, names in engines.items()}
    return engines


def _paired_documents(run: Mapping[str, Any], engines: Mapping[str, Any],
                      metrics: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The scored documents of each paired dataset, read once; only what the comparison reads of ``metrics`` kept."""
    from pytest_ocrmetrics.gating import SCORED_OUTCOMES

    documents: dict[str, list[dict[str, Any]]] = {dataset: [] for dataset in engines}
    for doc in run["documents"]:
        if doc["dataset"] in documents and doc.get("outcome") in SCORED_OUTCOMES:
            values, counts = doc.get("metrics") or {}, doc.get("counts") or {}
            documents[doc["dataset"]].append({
                "id": doc["id"], "dataset": doc["dataset"], "engine": doc["engine"], "outcome": doc["outcome"],
                "metrics": {name: values[name] for name in metrics if name in values},
                "counts": {name: counts[name] for name in metrics if name in counts}})
    return documents


def _paired_delta(delta: Any) -> str:
    """``+1.23 pp [+0.40, +2.10]``: an aggregate delta of a comparison with its interval, in the table's units."""
    if delta is None:
        return "-"
    text = format_delta(delta.metric, delta.delta)
    if delta.interval is None:
        return text
    low, high = (format_delta(delta.metric, bound).removesuffix(" pp") for bound in delta.interval)
    return f"{text} [{low}, {high}]"


def _worst_documents(documents: list[Mapping[str, Any]], n: int = 5) -> list[str]:
    scored = [r for r in documents if "cer" in r.get("metrics", {})]
    if not scored:
        return []
    worst = sorted(scored, key=lambda r: (-r["metrics"]["cer"], r["engine"], r["dataset"], r["id"]))[:n]
    rows = [[r["engine"], r["dataset"], r["id"], r["outcome"], format_value("cer", r["metrics"]["cer"]),
             format_value("wer", r["metrics"].get("wer"))] for r in worst]
    return ["", f"worst {len(rows)} documents by CER:",
            *render_table(["engine", "dataset", "document", "outcome", "CER", "WER"], rows, right_from=4)]


_VISIBLE = {" ": "␣ (space)", "\n": "↵ (line break)", "\t": "→ (tab)"}


def _show(ch: str) -> str:
    """A confused character as it can be read in a terminal: ``(none)`` for a deletion/insertion, names for the
    usual spaces; any other character that does not print gets its mark when the table prints it (``␀``, ``⟨NBSP⟩``)."""
    if ch == "":
        return "(none)"
    return _VISIBLE.get(ch, ch)


def _top_confusions(documents: list[Mapping[str, Any]], n: int = 10) -> list[str]:
    counter: Counter[tuple[str, str, str]] = Counter()
    for r in documents:
        for ref, hyp, count in r.get("confusions") or ():
            counter[(r["engine"], ref, hyp)] += count
    if not counter:
        return []
    rows = [[engine, _show(ref), _show(hyp), str(count)]
            for (engine, ref, hyp), count in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
    return ["", f"top {len(rows)} character confusions (reference -> output; (none) = deleted/inserted):",
            *render_table(["engine", "reference", "output", "count"], rows, right_from=3)]
