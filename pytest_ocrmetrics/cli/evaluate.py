"""``ocrmetrics evaluate``: an engine on a ``<image path>\\t<text>`` label file
(:class:`~pytest_ocrmetrics.evaluator.OCRDatasetEvaluator`)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any, TextIO

from pytest_ocrmetrics.cli.common import UsageError, argtype, default_output_limit, output_limit, pixel_limit


class _EvaluateLogFormat(logging.Formatter):
    """Progress lines as they are; warnings and errors as ``ocrmetrics evaluate: warning: ...``."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.levelno >= logging.WARNING:
            return f"ocrmetrics evaluate: {record.levelname.lower()}: {message}"
        return message


def run(args: argparse.Namespace, out: TextIO) -> int:
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
        with OCRDatasetEvaluator(args.engine, engine_options=settings.get(name, {}),
                                 max_image_pixels=args.max_image_pixels,
                                 max_output_chars=args.max_output_chars) as evaluator:
            evaluator.evaluate_dataset(label_file, base_path, args.conf_threshold, args.max_images,
                                       "json" if args.json or args.per_sample else "table",
                                       include_per_sample_results=args.per_sample, stream=out)
    except (EngineOptionError, EngineUnavailable, OSError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    return 0


def add_parser(sub: Any) -> None:
    """Add ``ocrmetrics evaluate`` to the subcommands ``sub``."""
    from pytest_ocrmetrics.core.documents import MAX_IMAGE_PIXELS
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
    evaluate.add_argument("--conf-threshold", type=argtype(check_conf_threshold), default=0.5, metavar="X",
                          help="samples with a confidence below X (0..1) are filtered, not evaluated (default 0.5)")
    evaluate.add_argument("--max-images", type=argtype(check_max_images), metavar="N",
                          help="evaluate only the first N samples of the label file")
    evaluate.add_argument("--max-image-pixels", type=argtype(pixel_limit), default=MAX_IMAGE_PIXELS, metavar="N",
                          help="most pixels (width x height) an image may have (default 89478485, Pillow's limit); "
                               "a larger one is skipped before anything decodes it")
    evaluate.add_argument("--max-output-chars", type=argtype(output_limit), default=default_output_limit(),
                          metavar="N", help="longest prediction scored, in characters (default 2000000, or twice the "
                                            "ground truth when that is longer); a longer one is skipped")
    evaluate.add_argument("--json", action="store_true", help="print the result as JSON instead of the table")
    evaluate.add_argument("--per-sample", action="store_true",
                          help="include per_sample_results (every evaluated sample) in the JSON; implies --json")
