"""``ocrmetrics score``: one or many OCR outputs against one reference text, or a batch folder
(``gt.txt`` against every ``<model>_out.txt``), as a table or JSON."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence, TextIO

from pytest_ocrmetrics.cli.common import UsageError, argtype, default_output_limit, output_limit
from pytest_ocrmetrics.metrics.registry import METRICS

#: Columns of ``ocrmetrics score`` (registry names), in order.
SCORE_METRICS: tuple[str, ...] = ("cer", "wer", "ser", "ned", "lcs_ratio", "bow_f1", "crr", "word_f1", "exact_match")


BATCH_REFERENCE = "gt.txt"


BATCH_SUFFIX = "_out.txt"


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
    ref, hyp = text.reference, text.hypothesis  # normalized once, by score_text
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


def run(args: argparse.Namespace, out: TextIO) -> int:
    """``ocrmetrics score``: every output against the reference, as a table or JSON."""
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
    from pytest_ocrmetrics.scoring.document import output_too_long_reason

    for name, path in outputs:
        hypothesis = _read_text(path, "output")
        too_long = output_too_long_reason(hypothesis, reference, args.max_output_chars)
        if too_long is not None:  # aligning it could end the command with a MemoryError
            raise UsageError(f"output {str(path)!r} is not scored: {too_long}")
        scored = score_texts(reference, hypothesis, normalize=profile.name, unit=args.unit,
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


def add_parser(sub: Any) -> None:
    """Add ``ocrmetrics score`` to the subcommands ``sub``."""
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
    score.add_argument("--fuzzy", type=argtype(_fuzzy_distance), default=1, metavar="N",
                       help="word matching (CRR, word F1): pair words within N character edits (0 to 5, default 1; "
                            "0: exact only)")
    score.add_argument("--word-case-sensitive", action="store_true",
                       help="word matching distinguishes case (default: it ignores case, as the plugin does)")
    score.add_argument("--word-keep-punctuation", action="store_true",
                       help="word matching keeps punctuation (default: it strips it, as the plugin does)")
    score.add_argument("--max-output-chars", type=argtype(output_limit), default=default_output_limit(),
                       metavar="N", help="longest output scored, in characters (default 2000000, or twice the "
                                         "reference when that is longer); a longer one is an error (exit 2) instead "
                                         "of gigabytes of memory for its alignment")
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")
