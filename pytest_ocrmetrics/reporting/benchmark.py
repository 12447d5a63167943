"""A run in the benchmark protocol's results layout: ``config.json``, ``results.json``, ``summary.json``.

The DeepSeek-vs-Tesseract benchmark protocol (specification document 000, "Benchmark Protocol") stores each run as::

    results/benchmarks/{run_id}/
        config.json      # Run configuration
        results.json     # Per-image results
        summary.json     # Aggregated metrics

:func:`benchmark_files` builds the three from a JSON run file (``pytest --ocr-json=PATH``), so one pytest command
with two ``--ocr-engine`` options and one ``ocrmetrics report RUN.json --benchmark-dir DIR`` give the protocol's
files. Values are the run file's: fractions (0.0714 for the document's "7.14 %"), metric names from the registry.

- ``config.json``: the run id (the folder's name), when the run was made, the models (engines as selected) and
  their identities (engine, version, settings: what the output cache keys on), the datasets and document counts, the
  normalization and word-matching settings, the metrics computed, the environment, and the pytest command that runs
  the benchmark again.
- ``results.json``: one record per image and engine: the document, its outcome, the ground truth and the predicted
  text, every metric with its counts, the time and whether the output came from the cache.
- ``summary.json``: per engine and dataset the documents, passed / failed / errors and every metric's aggregates
  (micro rate, mean, median, p95, interval); and per dataset that more than one engine read, each metric's micro
  value per engine with the better engine (by the registry's direction; ``"tie"`` when equal).
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any, Mapping

from pytest_ocrmetrics.metrics.registry import METRICS

__all__ = ["BENCHMARK_FILES", "benchmark_files", "write_benchmark_dir"]

BENCHMARK_FILES = ("config.json", "results.json", "summary.json")
_AGGREGATES = ("micro", "mean", "median", "p95", "min", "max", "n", "ci_low", "ci_high")
_RECORD_KEYS = ("id", "dataset", "engine", "outcome", "message", "image", "reference", "hypothesis", "confidence",
                "metrics", "counts", "elapsed_s", "cached", "truncated")


def _engines(run: Mapping[str, Any]) -> list[str]:
    names = [str(row.get("engine")) for row in run.get("summary") or ()]
    names += [str(doc.get("engine")) for doc in run.get("documents") or ()]
    return list(dict.fromkeys(names))


def _dataset_folder(run: Mapping[str, Any], dataset: str) -> str | None:
    """The dataset's folder as far as the run tells it: the folder it recorded (``datasets``), else (older run files,
    absolute image paths) the common folder of its images (less a last ``images``)."""
    recorded = (run.get("datasets") or {}).get(dataset)
    if isinstance(recorded, Mapping) and isinstance(recorded.get("root"), str):
        return str(recorded["root"])
    folders = {os.path.dirname(str(doc["image"])) for doc in run.get("documents") or ()
               if doc.get("dataset") == dataset and doc.get("image")}
    if not folders:
        return None
    try:
        common = os.path.commonpath(sorted(folders))
    except ValueError:  # relative and absolute paths mixed
        return None
    return os.path.dirname(common) if os.path.basename(common) == "images" else common


def _engine_choice(identity: Mapping[str, Any], label: str) -> str:
    """How ``--ocr-engine`` chose the engine, with a replay folder made absolute (the identity's ``dir``): the
    command must run from any folder, as the dataset folders it names do."""
    selected = str(identity.get("selected_as") or label.split("#")[0])
    folder = identity.get("dir")
    if (selected.startswith("replay:") and isinstance(folder, str) and os.path.isabs(folder)
            and not os.path.isabs(selected[len("replay:"):])):
        return f"replay:{folder}"
    return selected


def _command(run: Mapping[str, Any], engines: list[str], datasets: list[str]) -> str:
    """The pytest command that runs this benchmark again (datasets from the image folders; ``DATASET`` where the
    run does not say)."""
    identities = (run.get("environment") or {}).get("engines") or {}
    normalization = run.get("normalization") or {}
    words = ["pytest"]
    words += [f"--ocr-dataset={_dataset_folder(run, d) or d}" for d in datasets]
    words += [f"--ocr-engine={_engine_choice(identities.get(e) or {}, e)}" for e in engines]
    if normalization.get("name", "nfc") != "nfc":
        words.append(f"--ocr-normalize={normalization['name']}")
    for key, option in (("unit", "--ocr-unit"), ("tokenizer", "--ocr-tokenizer"), ("field_compare", "--ocr-field-compare")):
        default = {"unit": "grapheme", "tokenizer": "whitespace", "field_compare": "lowercase"}[key]
        if normalization.get(key, default) != default:
            words.append(f"{option}={normalization[key]}")
    word_match = normalization.get("word_match") or {}
    if word_match.get("distance", 1) != 1:
        words.append(f"--ocr-word-distance={word_match['distance']}")
    if word_match.get("case_sensitive"):
        words.append("--ocr-word-case-sensitive")
    if word_match.get("ignore_punctuation") is False:
        words.append("--ocr-word-keep-punctuation")
    from pytest_ocrmetrics.scoring.document import DEFAULT_TEXT_METRICS

    default_metrics = set(DEFAULT_TEXT_METRICS) | {"field_f1", "field_precision", "field_recall", "json_valid",
                                                   "parse_success", "completeness", "fact_pass_rate"}
    extra = [name for name in _metrics(run) if name not in default_metrics]
    words += [f"--ocr-metric={name}" for name in extra]
    words.append("--ocr-json=run.json")
    return " ".join(shlex.quote(word) for word in words)


def _metrics(run: Mapping[str, Any]) -> list[str]:
    present = {name for doc in run.get("documents") or () for name in (doc.get("metrics") or {})}
    return [name for name in METRICS if name in present]


def _config(run: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    documents = list(run.get("documents") or ())
    engines = _engines(run)
    datasets = list(dict.fromkeys(str(doc.get("dataset")) for doc in documents))
    environment = dict(run.get("environment") or {})
    identities = environment.pop("engines", {}) or {}
    return {
        "run_id": run_id,
        "created": run.get("created"),
        "models": engines,
        "engines": {name: identities.get(name, {}) for name in engines},
        "datasets": {name: {"path": _dataset_folder(run, name),
                            "documents": len({str(d.get("id")) for d in documents if d.get("dataset") == name})}
                     for name in datasets},
        "normalization": run.get("normalization"),
        "metrics": _metrics(run),
        "environment": environment,
        "shard": run.get("shard"),
        "interrupted": bool(run.get("interrupted")),
        "command": _command(run, engines, datasets),
    }


def _results(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{("predicted" if key == "hypothesis" else "ground_truth" if key == "reference" else key): doc.get(key)
             for key in _RECORD_KEYS}
            for doc in sorted(run.get("documents") or (), key=lambda d: (str(d.get("dataset")), str(d.get("id")),
                                                                         str(d.get("engine"))))]


def _summary(run: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    rows = []
    by_dataset: dict[str, dict[str, Mapping[str, Any]]] = {}
    for row in run.get("summary") or ():
        metrics = {name: {k: v for k, v in aggregate.items() if k in _AGGREGATES}
                   for name, aggregate in (row.get("metrics") or {}).items() if isinstance(aggregate, Mapping)}
        rows.append({"engine": row.get("engine"), "dataset": row.get("dataset"), "documents": row.get("documents"),
                     **{k: row.get(k, 0) for k in ("passed", "failed", "errors", "skipped", "filtered")},
                     "metrics": metrics})
        by_dataset.setdefault(str(row.get("dataset")), {})[str(row.get("engine"))] = metrics
    comparisons = []
    for dataset, engines in by_dataset.items():
        if len(engines) < 2:
            continue
        names = [name for name in METRICS if any(name in m for m in engines.values())]
        for name in names:
            values = {engine: m[name]["micro"] for engine, m in engines.items()
                      if name in m and isinstance(m[name].get("micro"), (int, float))}
            if len(values) < 2:
                continue
            best_value = (min if METRICS[name].lower_is_better else max)(values.values())
            best = [engine for engine, value in values.items() if value == best_value]
            comparisons.append({"dataset": dataset, "metric": name,
                                "better": "lower" if METRICS[name].lower_is_better else "higher",
                                "values": values, "best": best[0] if len(best) == 1 else "tie"})
    return {"run_id": run_id, "models": _engines(run), "by_engine_dataset": rows, "comparison": comparisons}


def benchmark_files(run: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    """The three files of the protocol's results layout, by file name, as JSON values.

    >>> files = benchmark_files({"summary": [], "documents": []}, "run-1")
    >>> sorted(files), files["config.json"]["run_id"]
    (['config.json', 'results.json', 'summary.json'], 'run-1')
    """
    return {"config.json": _config(run, run_id), "results.json": _results(run), "summary.json": _summary(run, run_id)}


def write_benchmark_dir(run: Mapping[str, Any], folder: str | Path) -> list[Path]:
    """Write ``config.json``, ``results.json`` and ``summary.json`` into ``folder`` (created; its name is the run id),
    each atomically; returns the paths written."""
    from pytest_ocrmetrics.core.safe_text import write_text_atomic

    folder = Path(folder)
    written = []
    for name, value in benchmark_files(run, folder.resolve().name).items():
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        written.append(write_text_atomic(folder / name, text))
    return written
