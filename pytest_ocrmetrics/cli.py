"""The ``ocrmetrics`` command line tool: score texts, compare runs, render reports, all without pytest.

::

    ocrmetrics score REF.txt HYP.txt [HYP2.txt ...]     one or many outputs against one reference
    ocrmetrics score FOLDER                              batch: FOLDER/gt.txt against every FOLDER/<model>_out.txt
    ocrmetrics compare BASE.json NEW.json --max-regression=cer:0.005 [--gate=...] [--significance=0.05]
                       [--engine OLD=NEW ...]          two engines paired (RUN.json RUN.json: two engines of one run)
    ocrmetrics report RUN.json --html out.html [--csv out.csv] [--markdown out.md] [--baseline BASE.json]
                      [--biblicus OUT.json [--pipeline NAME]] [--benchmark-dir DIR]
    ocrmetrics biblicus-compare A.json [B.json] [--pipeline NAME --pipeline NAME] [--json]
                                                         two pipelines metric by metric with a winner column
    ocrmetrics evaluate LABEL_FILE --engine NAME [--base-path DIR] [--conf-threshold X] [--max-images N] [--json]
    ocrmetrics serve [--host 127.0.0.1] [--port 8765] [--open] [--run RUN.json]   the evaluator page in a browser
    ocrmetrics merge SHARD.json... -o RUN.json [--gate=...] [--baseline BASE.json --max-regression=...]
                                                         the run files of a sharded run (pytest --ocr-shard=K/N) as one

Exit codes: 0 success, 1 a regression, a failing gate or a baseline that matched no document of the run
(``compare``, ``merge``), 2 a usage error (bad option, bad gate or tolerance expression, a file that is missing, not a
run file or holding NaN, runs made with other normalization settings without ``--allow-mismatch``, run files that
``merge`` refuses). ``compare`` and ``merge`` follow
exactly the rules of the plugin's ``--ocr-baseline`` (see :mod:`pytest_ocrmetrics.gating`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from pytest_ocrmetrics.gating import (
    RunFileError,
    compare_runs,
    evaluate_gates,
    load_run,
    normalization_mismatch,
    parse_gate,
    parse_significance,
    parse_tolerance,
)
from pytest_ocrmetrics.metrics.registry import METRICS

__all__ = ["main", "build_parser", "score_texts", "SCORE_METRICS"]

#: Columns of ``ocrmetrics score`` (registry names), in order.
SCORE_METRICS: tuple[str, ...] = ("cer", "wer", "ser", "ned", "lcs_ratio", "bow_f1", "crr", "word_f1", "exact_match")
BATCH_REFERENCE = "gt.txt"
BATCH_SUFFIX = "_out.txt"


class UsageError(Exception):
    """A mistake on the command line or in the given files: printed as one line, exit code 2."""


# ---------------------------------------------------------------------------------------------------- scoring


def score_texts(
    reference: str,
    hypothesis: str,
    *,
    normalize: str = "nfc",
    unit: str = "grapheme",
    tokenizer: str = "whitespace",
    max_distance: int = 1,
    word_case_sensitive: bool = False,
    word_ignore_punctuation: bool = True,
) -> dict[str, Any]:
    """Every text metric of ``ocrmetrics score`` for one output: values, counts and the word-match breakdown.

    The same functions the plugin uses: :func:`~pytest_ocrmetrics.metrics.text.score_text` (one alignment for
    cer/wer/ser/ned/exact match), :func:`~pytest_ocrmetrics.metrics.word_match.word_match` (crr, word F1) and the
    layout metrics (lcs_ratio, bow_f1), all after the ``normalize`` profile.

    >>> result = score_texts("INVOICE #12345", "INV0ICE #12345")
    >>> round(result["metrics"]["cer"], 4), result["word_match"]["fuzzy"]
    (0.0714, 1)
    """
    from pytest_ocrmetrics.metrics.layout import bag_of_words, lcs_ratio
    from pytest_ocrmetrics.metrics.normalize import get_profile
    from pytest_ocrmetrics.metrics.text import score_text
    from pytest_ocrmetrics.metrics.word_match import word_match

    profile = get_profile(normalize)
    text = score_text(reference, hypothesis, unit=unit, tokenizer=tokenizer, normalize=profile)
    ref, hyp = profile(reference), profile(hypothesis)
    words = word_match(ref, hyp, max_distance=max_distance, case_sensitive=word_case_sensitive,
                       ignore_punctuation=word_ignore_punctuation)
    metrics = {name: float(value) for name, value in text.values().items()}
    metrics["lcs_ratio"] = float(lcs_ratio(ref, hyp).value)
    metrics["bow_f1"] = float(bag_of_words(ref, hyp).f1)
    metrics["crr"] = float(words.crr)
    metrics["word_f1"] = float(words.f1)
    return {
        "metrics": metrics,
        "counts": text.counts(),
        "word_match": {
            "exact": words.exact_count, "fuzzy": words.fuzzy_count,
            "unmatched_reference": len(words.unmatched_reference),
            "unmatched_hypothesis": len(words.unmatched_hypothesis),
            "precision": words.precision, "recall": words.recall,
        },
        "confusions": [[r or "", h or "", n] for r, h, n in text.confusion.top(10)],
        "normalization": profile.name,
    }


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{what} {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {str(path)!r} is a folder; give a text file (or only the folder, for batch mode)") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {str(path)!r} is not UTF-8 text (byte {exc.start}); convert it first") from None
    except OSError as exc:
        raise UsageError(f"{what} {str(path)!r} cannot be read: {exc.strerror}") from None


def _score_inputs(paths: Sequence[str]) -> tuple[Path, list[tuple[str, Path]]]:
    """The reference and the named outputs, from ``REF HYP...`` or a batch folder."""
    if len(paths) == 1:
        folder = Path(paths[0])
        if not folder.is_dir():
            raise UsageError(f"give a reference and at least one output (REF.txt HYP.txt ...), or a folder with "
                             f"{BATCH_REFERENCE} and <model>{BATCH_SUFFIX} files; got only {paths[0]!r}")
        reference = folder / BATCH_REFERENCE
        if not reference.is_file():
            raise UsageError(f"batch folder {str(folder)!r} has no {BATCH_REFERENCE} (the reference text)")
        outputs = sorted(p for p in folder.iterdir() if p.name.endswith(BATCH_SUFFIX) and p.is_file())
        if not outputs:
            raise UsageError(f"batch folder {str(folder)!r} has no <model>{BATCH_SUFFIX} files to score")
        return reference, [(p.name[: -len(BATCH_SUFFIX)] or p.name, p) for p in outputs]
    return Path(paths[0]), [(p, Path(p)) for p in paths[1:]]


def _cmd_score(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_ocrmetrics.metrics.normalize import get_profile
    from pytest_ocrmetrics.reporting.common import direction_arrow, format_value
    from pytest_ocrmetrics.reporting.terminal import render_table

    steps = [args.normalize] + (["casefold"] if args.ignore_case else []) + (["punctuation"] if args.ignore_punctuation else [])
    try:
        profile = get_profile("+".join(s for s in steps if s and s != "none") or "none")
    except ValueError as exc:
        raise UsageError(f"--normalize: {exc}") from None
    reference_path, outputs = _score_inputs(args.paths)
    reference = _read_text(reference_path, "reference")
    results = []
    for name, path in outputs:
        scored = score_texts(reference, _read_text(path, "output"), normalize=profile.name, unit=args.unit,
                             tokenizer=args.tokenizer, max_distance=args.fuzzy,
                             word_case_sensitive=args.word_case_sensitive,
                             word_ignore_punctuation=not args.word_keep_punctuation)
        results.append({"name": name, "path": str(path), **scored})
    options = {"normalize": profile.name, "unit": args.unit, "tokenizer": args.tokenizer, "fuzzy": args.fuzzy,
               "word_case_sensitive": args.word_case_sensitive,
               "word_ignore_punctuation": not args.word_keep_punctuation}
    if args.json:
        json.dump({"reference": str(reference_path), "options": options, "results": results}, out, indent=2,
                  ensure_ascii=False)
        out.write("\n")
        return 0
    header = ["output"] + [f"{METRICS[m].title}{direction_arrow(m)}" for m in SCORE_METRICS]
    header.append("words exact/fuzzy/missed/extra")
    rows = []
    for result in results:
        wm = result["word_match"]
        rows.append([result["name"]] + [format_value(m, result["metrics"].get(m)) for m in SCORE_METRICS]
                    + [f"{wm['exact']}/{wm['fuzzy']}/{wm['unmatched_reference']}/{wm['unmatched_hypothesis']}"])
    print(f"reference {reference_path} · normalization {profile.name} · unit {args.unit} · "
          f"words {args.tokenizer} · fuzzy word distance <= {args.fuzzy}", file=out)
    for line in render_table(header, rows, right_from=1):
        print(line, file=out)
    return 0


# ------------------------------------------------------------------------------------------ compare / report


def _load(path: str, what: str, args: argparse.Namespace | None = None) -> dict[str, Any]:
    """The run file at ``path``, checked against the full JSON schema, or (``merge``, ``compare`` and ``report``
    without ``--validate``: ``args.validate`` false) its structure only; a bad file is a usage error naming it."""
    schema = True if args is None else bool(getattr(args, "validate", True))
    try:
        return load_run(path, schema=schema)
    except RunFileError as exc:
        raise UsageError(f"{what} {exc}" if what else str(exc)) from None


def _comparison(args: argparse.Namespace, baseline: dict[str, Any], run: dict[str, Any]) -> Any:
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
                        engine_map=getattr(args, "engine_pairs", None))


def _engine_text(text: str) -> str:
    """An ``--engine`` value as typed, checked for its ``=`` (the names are checked once the run files are read)."""
    if "=" not in text.strip("="):
        raise ValueError(f"{text!r} is not OLD=NEW: give the baseline's engine and the run's engine compared with it, "
                         f"e.g. --engine tesseract=rapidocr")
    return text


def _engine_names(run: dict[str, Any]) -> list[str]:
    return sorted({str(doc.get("engine")) for doc in run.get("documents", ())})


def _engine_pairs(args: argparse.Namespace, baseline: dict[str, Any], run: dict[str, Any]) -> list[tuple[str, str]]:
    """``--engine OLD=NEW`` as (baseline engine, run engine) pairs: OLD an engine of BASE.json, NEW one of NEW.json
    (split at the ``=`` that makes both names known, for a name holding ``=``), each of NEW.json's engines paired
    once. A name that is not there is a usage error with a did-you-mean."""
    from pytest_ocrmetrics.hints import did_you_mean

    olds, news = _engine_names(baseline), _engine_names(run)
    pairs: list[tuple[str, str]] = []
    for text in args.engine or ():
        splits = [(text[:i], text[i + 1:]) for i, char in enumerate(text) if char == "="]
        old, new = next(((o, n) for o, n in splits if o in olds and n in news), splits[0])
        for name, names, where in ((old, olds, f"the baseline {args.baseline!r}"), (new, news, repr(args.run))):
            if name not in names:
                swapped = old in news and new in olds  # NEW=OLD typed
                hint = f" (the baseline's engine comes first: --engine {new}={old})" if swapped else did_you_mean(
                    name, names)
                raise UsageError(f"--engine {text!r}: {where} has no engine {name!r}{hint}; its engines are "
                                 f"{', '.join(map(repr, names)) or 'none'}")
        paired = dict((n, o) for o, n in pairs)
        if paired.get(new, old) != old:
            raise UsageError(f"--engine pairs {new!r} of {args.run!r} with two baseline engines, {paired[new]!r} and "
                             f"{old!r}; pair each engine of the run once")
        if (old, new) not in pairs:
            pairs.append((old, new))
    return pairs


def _unpaired_lines(pairs: Sequence[tuple[str, str]], baseline: dict[str, Any], run: dict[str, Any]) -> list[str]:
    """One ``ERROR:`` line per ``--engine`` pair with no document scored by both engines (same dataset and id): with
    several pairs, one that compares nothing would hide behind the others."""
    from pytest_ocrmetrics.gating import scored_documents

    old_keys, new_keys = scored_documents(baseline), scored_documents(run)
    lines = []
    for old, new in pairs:
        olds = {(dataset, doc_id) for dataset, engine, doc_id in old_keys if engine == old}
        if not any((dataset, doc_id) in olds for dataset, engine, doc_id in new_keys if engine == new):
            lines.append(f"ERROR: --engine {old}={new} compared nothing: no document scored by {old!r} in the baseline "
                         f"is scored by {new!r} in this run (same dataset and id)")
    return lines


def _shown(path: Any) -> str:
    """A path as printed: characters that do not print (a control character, a byte that is not UTF-8) escaped."""
    from pytest_ocrmetrics.reporting.safe_text import printable

    return printable(str(path))


def _write_reports(args: argparse.Namespace, run: dict[str, Any], comparison: Any, gates: Sequence[Any],
                   run_folder: Path | None) -> list[str]:
    """Write the requested reports (the plugin's own writer); returns one ``KIND: PATH`` line per file written.

    A report that cannot be written (a folder in the way, a full disk) does not stop the others: each failure is one
    line on stderr, and ``args.reports_failed`` makes the command exit with 2 (see :func:`_exit_code`).
    """
    from pytest_ocrmetrics.reporting.files import ReportError, write_reports
    from pytest_ocrmetrics.verdict import Verdict

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
    return [f"{titles[kind]}: {_shown(path)}" for kind, path in written.items()]


def _cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    from pytest_ocrmetrics.reporting.safe_text import show_controls

    baseline = _load(args.baseline, "baseline", args)
    run = _load(args.run, "", args)
    args.engine_pairs = _engine_pairs(args, baseline, run)
    comparison = _comparison(args, baseline, run)
    unpaired = _unpaired_lines(args.engine_pairs, baseline, run) if comparison.compared else []
    gates = evaluate_gates(args.gate or [], run.get("summary", ()))
    gate_failed = any(not g.passed for g in gates)
    unevaluated, requested = _unevaluated(args, run)  # NEW.json's pairs that scored nothing, as pytest says them
    failed = comparison.exit_failed or gate_failed or bool(unevaluated and requested) or bool(unpaired)
    written = _write_reports(args, run, comparison, gates, _image_root(args, args.run))  # before any output
    said = [f"{'ERROR' if requested else 'WARNING'}: {sentence}" for sentence in unevaluated]
    if args.json:
        data = comparison.to_dict()
        data["gates"] = [{"gate": g.gate.expression, "engine": g.engine, "dataset": g.dataset, "actual": g.actual,
                          "status": g.status, "message": g.message} for g in gates]
        data["unevaluated"] = said
        data["engine_map"] = [{"baseline_engine": old, "engine": new} for old, new in args.engine_pairs]
        data["unpaired"] = unpaired
        data["exit_failed"] = failed
        json.dump(data, out, indent=2, ensure_ascii=False)
        out.write("\n")
        for kind, text in (("error", comparison.error), ("warning", comparison.warning)):
            if text:  # also in the JSON; said where a person reads it too
                print(f"ocrmetrics compare: {kind}: {text}", file=sys.stderr)
        for line in [*said, *unpaired]:
            print(f"ocrmetrics compare: {line}", file=sys.stderr)
    else:  # names from the run files: control characters shown as marks, not sent to the terminal
        paired = [f"engines paired (baseline -> run): {', '.join(f'{o} -> {n}' for o, n in args.engine_pairs)}"
                  ] if args.engine_pairs else []
        for line in [*paired, *(gate.message for gate in gates), *comparison.summary_lines(), *said, *unpaired]:
            print(show_controls(line), file=out)
        print(f"ocrmetrics compare: {'FAILED' if failed else 'passed'} ({args.baseline} -> {args.run})", file=out)
    for line in written:
        print(line, file=sys.stderr if args.json else out)
    return _exit_code(args, 1 if failed else 0)


def _exit_code(args: argparse.Namespace, code: int) -> int:
    """``code``, or 2 when it is 0 but a report could not be written (a regression's 1 stays 1)."""
    return code or (2 if getattr(args, "reports_failed", False) else 0)


def _image_root(args: argparse.Namespace, run_path: str) -> Path:
    """The run file's folder: where the HTML report looks for page images last, after ``--image-root`` and the
    dataset folders the run recorded (:class:`~pytest_ocrmetrics.reporting.images.ImageFinder`)."""
    return Path(run_path).resolve().parent


def _cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    if not (args.html or args.csv or args.markdown or args.biblicus or args.benchmark_dir):
        raise UsageError("nothing to write: give at least one of --html PATH, --csv PATH, --markdown PATH, "
                         "--biblicus PATH, --benchmark-dir DIR")
    if args.pipeline is not None and not args.biblicus:
        raise UsageError("--pipeline chooses the pipeline of the Biblicus report; give --biblicus PATH too")
    run = _load(args.run, "", args)
    biblicus = _biblicus_report(args, run) if args.biblicus else None  # a missing metric: nothing written
    comparison = _comparison(args, _load(args.baseline, "baseline", args), run) if args.baseline else None
    for kind, text in (("error", comparison and comparison.error), ("warning", comparison and comparison.warning)):
        if text:  # the reports say it too; a report never fails the build, compare does
            print(f"ocrmetrics report: {kind}: {text}", file=sys.stderr)
    gates = evaluate_gates(args.gate or [], run.get("summary", ()))
    if args.html or args.csv or args.markdown:
        for line in _write_reports(args, run, comparison, gates, _image_root(args, args.run)):
            print(line, file=out)
    for line in _write_protocol_files(args, run, biblicus):
        print(line, file=out)
    return _exit_code(args, 0)


# ------------------------------------------------------------------------------- Biblicus / benchmark protocol


def _biblicus_report(args: argparse.Namespace, run: dict[str, Any]) -> dict[str, Any]:
    from pytest_ocrmetrics.reporting.biblicus import BiblicusError, biblicus_report
    from pytest_ocrmetrics.reporting.safe_text import show_controls

    try:
        return biblicus_report(run, args.pipeline, source=f"run file {args.run!r}")
    except BiblicusError as exc:  # engine names from the file: control characters shown as marks
        raise UsageError(show_controls(str(exc))) from None


def _write_protocol_files(args: argparse.Namespace, run: dict[str, Any], biblicus: dict[str, Any] | None) -> list[str]:
    """Write the Biblicus report and the benchmark protocol's folder; one ``KIND: PATH`` line per file written. A
    file that cannot be written is one line on stderr and exit code 2, as for the other reports."""
    from pytest_ocrmetrics.reporting.benchmark import write_benchmark_dir
    from pytest_ocrmetrics.reporting.safe_text import write_text_atomic

    lines = []
    try:
        if biblicus is not None:
            text = json.dumps(biblicus, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
            lines.append(f"Biblicus report: {_shown(write_text_atomic(args.biblicus, text))}")
        if args.benchmark_dir:
            lines += [f"benchmark file: {_shown(path)}" for path in write_benchmark_dir(run, args.benchmark_dir)]
    except (OSError, ValueError) as exc:
        print(f"ocrmetrics {args.command}: error: cannot write {getattr(exc, 'filename', None) or 'a report'}: "
              f"{getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        args.reports_failed = True
    return lines


def _cmd_biblicus_compare(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics biblicus-compare``: two pipelines (from run files or Biblicus reports) metric by metric."""
    import difflib

    from pytest_ocrmetrics.reporting.biblicus import (BiblicusError, compare_pipelines, comparison_names,
                                                      pipelines_of, render_comparison, run_pipelines)
    from pytest_ocrmetrics.reporting.safe_text import show_controls

    pipelines: list[dict[str, Any]] = []
    try:
        loaded = []
        for path in args.files:
            try:
                data = json.loads(Path(path).read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise UsageError(f"{path!r} does not exist") from None
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise UsageError(f"{path!r} is not a JSON run file or Biblicus report ({exc})") from None
            if isinstance(data, dict) and "schema" in data:  # a run file: validated as compare and report do
                data = _load(path, "")
            loaded.append((path, data))
        if args.pipeline:  # names checked before any report is built: a typo is said as a typo
            names = [name for path, data in loaded for name in
                     (pipelines_of(data) if isinstance(data, dict) and "schema" in data else
                      [p["pipeline_name"] for p in run_pipelines(data, repr(path))])]
            for wanted in args.pipeline:
                if wanted not in names:
                    close = difflib.get_close_matches(wanted, names, n=1)
                    hint = f"did you mean {close[0]!r}? " if close else ""
                    raise UsageError(f"--pipeline {wanted!r}: no such pipeline in the files; {hint}they have "
                                     f"{', '.join(map(repr, names))}")
        for path, data in loaded:
            pipelines += run_pipelines(data, repr(path), only=args.pipeline)
        if args.pipeline:
            pipelines = [next(p for p in pipelines if p["pipeline_name"] == wanted) for wanted in args.pipeline]
        if len(pipelines) != 2:
            names = ", ".join(repr(p["pipeline_name"]) for p in pipelines) or "none"
            raise UsageError(f"give exactly two pipelines to compare, found {len(pipelines)} ({names}); choose two "
                             f"with --pipeline NAME --pipeline NAME")
    except BiblicusError as exc:
        raise UsageError(show_controls(str(exc))) from None
    except UsageError as exc:
        raise UsageError(show_controls(str(exc))) from None
    first, second = pipelines
    rows = compare_pipelines(first, second, decimals=args.decimals)
    if args.json:
        names = comparison_names(first, second)
        from pytest_ocrmetrics.reporting.safe_text import clean_text

        data = {"pipelines": list(names), "rows": [row.to_dict(names) for row in rows]}
        out.write(clean_text(json.dumps(data, indent=2, ensure_ascii=False))[0] + "\n")  # lone surrogates: U+FFFD
    else:
        for line in render_comparison(first, second, rows, decimals=args.decimals):
            print(line, file=out)
    return 0


def _add_biblicus_compare_parser(sub: Any) -> None:
    compare = sub.add_parser(
        "biblicus-compare", help="two pipelines metric by metric with a winner column (Biblicus's comparison)",
        description="Compare two pipelines as Biblicus's benchmark guide does: F1, recall, precision, WER, sequence "
                    "accuracy, LCS ratio, bigram and trigram overlap, each with the better pipeline (lower WER, "
                    "higher everything else; a tie when both show the same value). Each FILE is a Biblicus report "
                    "(ocrmetrics report --biblicus) or a run file (each engine a pipeline; run with --ocr-metric "
                    "for set_precision, set_recall, set_f1, sequence_accuracy, lcs_ratio, bigram_overlap, "
                    "trigram_overlap).")
    compare.add_argument("files", nargs="+", metavar="FILE", help="one run file with two engines, or two files")
    compare.add_argument("--pipeline", action="append", metavar="NAME",
                         help="a pipeline (engine) to compare, given twice when the files hold more than two")
    compare.add_argument("--decimals", type=_argtype(_non_negative_int), default=3,
                         help="decimals shown, and below which two values are a tie (default 3, as the guide)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")


# ---------------------------------------------------------------------------------------------------- merge


def _cmd_merge(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics merge``: the shards' run files as one (:func:`~pytest_ocrmetrics.merge.merge_runs`), then the gates
    and the baseline comparison on the merged run with ``compare``'s rules and exit codes, then the reports."""
    from pytest_ocrmetrics.merge import MergeError, merge_runs
    from pytest_ocrmetrics.reporting.safe_text import clean_run, show_controls

    runs = [(repr(path), _load(path, "", args)) for path in args.runs]
    try:
        run = merge_runs(runs)
    except MergeError as exc:  # names from the files: control characters shown as marks, not sent to the terminal
        raise UsageError(show_controls(str(exc))) from None
    if args.seed is None:  # the paired bootstrap of the baseline comparison, as pytest --ocr-seed seeds it
        args.seed = run["bootstrap"]["seed"]
    args.run = args.output  # how the comparison names the merged run
    comparison = _comparison(args, _load(args.baseline, "baseline", args), run) if args.baseline else None
    if comparison is not None:  # the run file says what the baseline compared, as pytest --ocr-baseline writes it
        run["baseline"] = clean_run(comparison.baseline_entry())[0]
    gates = evaluate_gates(args.gate or [], run["summary"])
    failed = any(not g.passed for g in gates) or bool(comparison is not None and comparison.exit_failed)
    unevaluated, requested = _unevaluated(args, run)
    failed = failed or bool(unevaluated and requested)
    written = _write_reports(args, run, comparison, gates, _image_root(args, args.output))
    for name, shard in runs:
        if shard.get("interrupted"):
            print(f"ocrmetrics merge: warning: {name} is from an interrupted run: the merged run holds only the "
                  f"documents that ran", file=sys.stderr)
    print(f"merged {len(runs)} run files: {len(run['documents'])} documents", file=out)
    summary_lines = comparison.summary_lines() if comparison is not None else []
    said = [f"{'ERROR' if requested else 'WARNING'}: {sentence}" for sentence in unevaluated]
    for line in [*(gate.message for gate in gates), *summary_lines, *said]:  # control characters shown as marks
        print(show_controls(line), file=out)
    if gates or comparison is not None or (unevaluated and requested):
        print(f"ocrmetrics merge: {'FAILED' if failed else 'passed'} ({_shown(args.output)})", file=out)
    for line in written:
        print(line, file=out)
    return _exit_code(args, 1 if failed else 0)


def _unevaluated(args: argparse.Namespace, run: dict[str, Any]) -> tuple[list[str], bool]:
    """The run's engine × dataset pairs with no document evaluated (as pytest says them), and whether a verdict was
    asked for: a gate, a tolerance, or a check made or declared on some document."""
    from pytest_ocrmetrics.verdict import documents_ask_for_checks, unevaluated_rows, unevaluated_sentences

    if not unevaluated_rows(run):  # the usual case: no document is read back
        return [], False
    requested = bool(args.gate or args.max_regression or documents_ask_for_checks(run.get("documents") or ()))
    return unevaluated_sentences(run, requested), requested


def _add_merge_parser(sub: Any) -> None:
    merge = sub.add_parser(
        "merge", help="merge the run files of a sharded run (pytest --ocr-shard=K/N) into one, then gate it",
        description="Merge the JSON run files of the shards of one run (pytest --ocr-shard=K/N --ocr-json=PATH on each "
                    "machine) into one run file whose summary equals that of the whole run on one machine, then "
                    "check the gates and the baseline on it: exit 1 on a failing gate or a regression, as compare. "
                    "A document in two files, other normalization settings, engines or bootstrap seeds, a "
                    "missing shard, a shard that ran another engine list and a document with a negative count or "
                    "without the counts of a metric it has are refused (exit 2).")
    merge.add_argument("runs", nargs="+", metavar="SHARD.json", help="the run file of every shard")
    merge.add_argument("-o", "--output", required=True, metavar="RUN.json", help="the merged run file to write")
    merge.add_argument("--baseline", metavar="BASE.json", help="compare the merged run with this baseline run file")
    _add_validate_option(merge)
    _add_gating_options(merge)
    for action in merge._actions:
        if action.dest == "seed":  # pytest --ocr-seed seeds the comparison too: the shards recorded it
            action.default = None
            action.help = "bootstrap seed of the baseline comparison (default: the --ocr-seed the shards ran with)"
    _add_report_options(merge)


# ---------------------------------------------------------------------------------------------------- evaluate


class _EvaluateLogFormat(logging.Formatter):
    """Progress lines as they are; warnings and errors as ``ocrmetrics evaluate: warning: ...``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.levelno >= logging.WARNING:
            return f"ocrmetrics evaluate: {record.levelname.lower()}: {message}"
        return message


def _cmd_evaluate(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics evaluate``: :class:`~pytest_ocrmetrics.evaluator.OCRDatasetEvaluator` with a registered engine;
    the table (or JSON) on stdout, progress and skipped lines on stderr."""
    from pytest_ocrmetrics.engines.base import EngineOptionError, EngineUnavailable
    from pytest_ocrmetrics.engines.registry import parse_engine_options, split_engine_arg
    from pytest_ocrmetrics.evaluator import OCRDatasetEvaluator

    name = split_engine_arg(args.engine)[0]
    try:
        settings = parse_engine_options(args.engine_option or [])
    except EngineOptionError as exc:
        raise UsageError(f"--engine-option: {exc}") from None
    others = sorted(set(settings) - {name})
    if others:
        raise UsageError(f"--engine-option {others[0]}.KEY=VALUE is a setting of engine {others[0]!r}, but --engine is "
                         f"{name!r}; give settings of the engine used, e.g. {name}.KEY=VALUE")
    label_file = Path(args.label_file)
    base_path = args.base_path if args.base_path is not None else str(label_file.parent)
    log = logging.getLogger("pytest_ocrmetrics.evaluator")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_EvaluateLogFormat())
    handler.addFilter(lambda record: not getattr(record, "ocr_raised", False))  # said once, as the usage error
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        with OCRDatasetEvaluator(args.engine, engine_options=settings.get(name, {})) as evaluator:
            evaluator.evaluate_dataset(label_file, base_path, args.conf_threshold, args.max_images,
                                       "json" if args.json or args.per_sample else "table",
                                       include_per_sample_results=args.per_sample, stream=out)
    except (EngineOptionError, EngineUnavailable, OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    return 0


def _add_evaluate_parser(sub: Any) -> None:
    from pytest_ocrmetrics.evaluator import check_conf_threshold, check_max_images

    evaluate = sub.add_parser(
        "evaluate", help="evaluate an engine on a '<image path>\\t<text>' label file (exact match, NED, similarity)",
        description="Evaluate an engine on a label file of '<image path>\\t<ground truth>' lines, as "
                    "pytest_ocrmetrics.OCRDatasetEvaluator does: exact-match accuracy, normalized edit distance, "
                    "edit-distance similarity and the evaluated / filtered / skipped counts.")
    evaluate.add_argument("label_file", metavar="LABEL_FILE")
    evaluate.add_argument("--engine", required=True, metavar="NAME[:ARG]",
                          help="registered engine, as --ocr-engine takes it (tesseract, rapidocr, replay:DIR, ...)")
    evaluate.add_argument("--engine-option", action="append", metavar="ENGINE.KEY=VALUE",
                          help="engine setting, e.g. tesseract.lang=chi_sim (repeatable)")
    evaluate.add_argument("--base-path", metavar="DIR",
                          help="folder the label file's image paths are relative to (default: the label file's folder)")
    evaluate.add_argument("--conf-threshold", type=_argtype(check_conf_threshold), default=0.5, metavar="X",
                          help="samples with a confidence below X (0..1) are filtered, not evaluated (default 0.5)")
    evaluate.add_argument("--max-images", type=_argtype(check_max_images), metavar="N",
                          help="evaluate only the first N samples of the label file")
    evaluate.add_argument("--json", action="store_true", help="print the result as JSON instead of the table")
    evaluate.add_argument("--per-sample", action="store_true",
                          help="include per_sample_results (every evaluated sample) in the JSON; implies --json")


# ---------------------------------------------------------------------------------------------------- serve


def _port(text: str) -> int:
    value = _non_negative_int(text)
    if value > 65535:
        raise ValueError(f"a port is 0 to 65535, got {value}")
    return value


def _cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics serve``: the evaluator page on a local web server (:mod:`pytest_ocrmetrics.serve`) until Ctrl-C."""
    from pytest_ocrmetrics.serve.server import is_loopback, make_server

    if args.image_root and not args.run:
        raise UsageError("--image-root says where a run's page images are; give the run too: --run RUN.json")
    run = _load(args.run, "") if args.run else None
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


def _add_serve_parser(sub: Any) -> None:
    serve = sub.add_parser(
        "serve", help="the OCR Metrics Evaluator page: compare texts in a browser (word precision, recall, F1, CRR)",
        description="Serve the OCR Metrics Evaluator page and its JSON API (POST /api/analyze, POST /api/batch) on a "
                    "local web server until Ctrl-C. With --run, the page also lists the run's documents and shows "
                    "each one's reference and output coloured.")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: this machine only; anything else is reachable "
                            "from the network, and says so)")
    serve.add_argument("--port", type=_argtype(_port), default=8765, help="port (default 8765; 0: any free port)")
    serve.add_argument("--open", action="store_true", help="open the page in the default web browser")
    serve.add_argument("--image-root", metavar="DIR",
                       help="with --run: folder holding the datasets' page images on this machine (as for "
                            "ocrmetrics report); default: where the run had them, then next to the run file")
    serve.add_argument("--run", metavar="RUN.json", help="a run file (pytest --ocr-json=PATH) whose documents the page "
                                                         "lists; read once, at start")


# ---------------------------------------------------------------------------------------------------- parser


def _argtype(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = parse.__name__
    return convert


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise ValueError(f"must be 0 or more, got {value}")
    return value


def _fuzzy_distance(text: str) -> int:
    """``score --fuzzy``: a word-match distance from 0 to 5, refused with the page's sentence otherwise."""
    from pytest_ocrmetrics.metrics.word_match import MAX_DISTANCE, distance_out_of_range

    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= MAX_DISTANCE:
        raise ValueError(distance_out_of_range("the word distance", value))
    return value


def _add_gating_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-regression", action="append", type=_argtype(parse_tolerance), metavar="METRIC:AMOUNT",
                        help="allowed worsening per metric, absolute (cer:0.005) or relative to the baseline "
                             "(field_f1:2%%); '*:1%%' for every metric without its own (repeatable)")
    parser.add_argument("--gate", action="append", type=_argtype(parse_gate), metavar="EXPR",
                        help="suite gate on the (new) run, e.g. 'cer<=0.03', 'mean:field_f1>=0.9', "
                             "'p95:cer<=0.2 [engine=tesseract, dataset=receipts]' (repeatable)")
    parser.add_argument("--significance", type=_argtype(parse_significance), metavar="ALPHA",
                        help="count an aggregate regression only when its paired bootstrap interval at 1-ALPHA "
                             "excludes zero (e.g. 0.05)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0): same seed, same verdict")
    parser.add_argument("--resamples", type=_argtype(_non_negative_int), default=1000,
                        help="bootstrap resamples (default 1000; 0 for no intervals)")
    parser.add_argument("--document-regressions", choices=("warn", "fail", "off"), default="warn",
                        help="a document that got worse beyond its tolerance: warn (default: listed, the aggregates "
                             "decide the exit status), fail (exit 1) or off (not listed), as pytest's "
                             "--ocr-document-regressions")
    parser.add_argument("--allow-mismatch", action="store_true",
                        help="compare runs made with another normalization profile, unit or tokenizer (with a "
                             "warning) instead of refusing them")


def _add_validate_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--validate", action="store_true",
                        help="check every run file read against the full JSON schema, element by element (default: "
                             "the structure of what is read, in plain Python, ~10x faster on a big run; NaN, "
                             "infinity and a wrong type where a reader looks are refused either way)")


def _add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", metavar="PATH", help="write the self-contained HTML report")
    parser.add_argument("--csv", metavar="PATH", help="write the CSV report (one row per document x engine)")
    parser.add_argument("--markdown", metavar="PATH", help="write the Markdown summary (for $GITHUB_STEP_SUMMARY)")
    parser.add_argument("--image-root", metavar="DIR",
                        help="folder holding the datasets' page images on this machine (a checkout, or a dataset "
                             "folder): images are looked for here first, then where the run had them, then next to "
                             "the run file")
    parser.add_argument("--max-details", type=_argtype(_non_negative_int), default=200,
                        help="documents with a detail view in the HTML report, worst first (default 200)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ocrmetrics",
        description="OCR quality from the command line: score texts, compare runs against a baseline, render reports.",
        epilog="Exit codes: 0 ok, 1 regression, failing gate or a baseline matching no document (compare, merge), "
               "2 usage error.",
    )
    from pytest_ocrmetrics import __version__

    parser.add_argument("--version", action="version", version=f"ocrmetrics (pytest-ocrmetrics) {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    score = sub.add_parser("score", help="score one or many OCR outputs against one reference text",
                           description="Score OCR outputs against a reference: REF.txt HYP.txt [HYP2.txt ...], or "
                                       f"a folder with {BATCH_REFERENCE} and <model>{BATCH_SUFFIX} files.")
    score.add_argument("paths", nargs="+", metavar="PATH", help="REF.txt HYP.txt [HYP2.txt ...], or one FOLDER")
    score.add_argument("--normalize", default="nfc", metavar="PROFILE",
                       help="normalization profile for every metric (default nfc), e.g. nfkc, lenient, model-output")
    score.add_argument("--ignore-case", action="store_true", help="fold case before every metric (adds casefold)")
    score.add_argument("--ignore-punctuation", action="store_true",
                       help="remove punctuation before every metric (adds punctuation)")
    score.add_argument("--unit", choices=("grapheme", "codepoint"), default="grapheme", help="character unit of CER")
    score.add_argument("--tokenizer", choices=("whitespace", "unicode"), default="whitespace", help="words of WER")
    score.add_argument("--fuzzy", type=_argtype(_fuzzy_distance), default=1, metavar="N",
                       help="word matching (CRR, word F1): pair words within N character edits (0 to 5, default 1; "
                            "0: exact only)")
    score.add_argument("--word-case-sensitive", action="store_true",
                       help="word matching distinguishes case (default: it ignores case, as the plugin does)")
    score.add_argument("--word-keep-punctuation", action="store_true",
                       help="word matching keeps punctuation (default: it strips it, as the plugin does)")
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")

    compare = sub.add_parser("compare", help="compare a run file with a baseline run file (exit 1 on regression)",
                             description="Compare NEW.json with BASE.json per document and per engine x dataset "
                                         "aggregate, with the plugin's rules; exit 1 on a regression, a failing gate "
                                         "or when no document of NEW.json is in BASE.json.")
    compare.add_argument("baseline", metavar="BASE.json")
    compare.add_argument("run", metavar="NEW.json")
    _add_gating_options(compare)
    compare.add_argument("--engine", action="append", type=_argtype(_engine_text), metavar="OLD=NEW",
                         help="compare engine OLD of BASE.json with engine NEW of NEW.json, documents paired by "
                              "dataset and id (repeatable; give one file twice to compare two engines of one run)")
    compare.add_argument("--json", action="store_true", help="print the comparison as JSON")
    _add_validate_option(compare)
    _add_report_options(compare)

    report = sub.add_parser("report", help="render HTML / CSV / Markdown / Biblicus reports and the benchmark "
                                           "protocol's files from a saved run file",
                            description="Render reports from a JSON run file written by pytest --ocr-json=PATH.")
    report.add_argument("run", metavar="RUN.json")
    report.add_argument("--baseline", metavar="BASE.json", help="add deltas against this baseline run file")
    _add_validate_option(report)
    _add_gating_options(report)
    _add_report_options(report)
    report.add_argument("--biblicus", metavar="PATH",
                        help="write the run as Biblicus's grouped report (pipeline_name; set_based, order_aware, "
                             "ngram averages)")
    report.add_argument("--pipeline", metavar="NAME",
                        help="the engine the Biblicus report is of (needed when the run has several)")
    report.add_argument("--benchmark-dir", metavar="DIR",
                        help="write the benchmark protocol's results layout into DIR: config.json, results.json, "
                             "summary.json (DIR's name is the run id)")
    _add_biblicus_compare_parser(sub)
    _add_evaluate_parser(sub)
    _add_serve_parser(sub)
    _add_merge_parser(sub)
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
    handler = {"score": _cmd_score, "compare": _cmd_compare, "report": _cmd_report,
               "evaluate": _cmd_evaluate, "serve": _cmd_serve, "merge": _cmd_merge,
               "biblicus-compare": _cmd_biblicus_compare}[args.command]
    try:
        return handler(args, out)
    except UsageError as exc:
        print(f"ocrmetrics {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # ocrmetrics compare ... | head: stop quietly, as other command line tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
