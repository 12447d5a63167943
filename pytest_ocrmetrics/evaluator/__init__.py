"""The licence-plate dataset evaluator (specification documents 003 and 004), usable without pytest.

One OCR model, one label file of ``<image path>\\t<ground truth>`` lines, three numbers::

    >>> from pytest_ocrmetrics import OCRDatasetEvaluator                      # doctest: +SKIP
    >>> evaluator = OCRDatasetEvaluator(ocr_model)                             # doctest: +SKIP
    >>> result = evaluator.evaluate_dataset("dataset/val.txt", "dataset")      # doctest: +SKIP
    指标              完全准确率  归一化编辑距离  编辑距离相似度
    OCR评估           0.9250      0.0450          0.9550
    ...
    >>> result["accuracy"]                                                    # doctest: +SKIP
    0.925

``ocr_model`` is either

* an OCRONNX-style model: a callable taking an image and returning ``(predicted_text, confidence, char_confidences)``
  or ``(predicted_text, confidence)``. It gets the image's path as a string, or whatever ``image_loader(path)``
  returns (``OCRDatasetEvaluator(model, image_loader=cv2.imread)`` hands it arrays); or
* a registered engine: its name as ``--ocr-engine`` takes it (``"tesseract"``, ``"replay:DIR"``, settings in
  ``engine_options``), or an engine instance (:class:`~pytest_ocrmetrics.engines.base.OcrEngine`), called with a
  :class:`~pytest_ocrmetrics.core.documents.Document` whose id is the image path as written in the label file.

The metrics are the documents' definitions, on the texts exactly as they are (code points, no normalization):

* ``accuracy``: samples whose prediction equals the ground truth / evaluated samples;
* ``normalized_edit_distance``: the mean over evaluated samples of Levenshtein(prediction, ground truth) /
  max(len(prediction), len(ground truth)) (0.0 for two empty texts; an empty prediction scores len(gt) edits, 1.0);
* ``edit_distance_similarity``: the mean of 1 - that, i.e. 1 - ``normalized_edit_distance``.

With no sample evaluated (everything skipped or filtered) they are 0.0, 1.0 and 0.0, the worst values, with a
warning: a gate on them fails instead of passing on nothing.

What happens to each label-file line (document 004's error table); every line counts in ``total_samples`` and in
exactly one of ``evaluated_samples``, ``filtered_samples`` and ``skipped_samples``. Messages go to the logger
``pytest_ocrmetrics.evaluator``, each naming the label file and line:

=================================================  =======================  =========
line                                               counted as               log level
=================================================  =======================  =========
label file missing or not a file                   raises, nothing counted  ERROR
no tab, or an empty image path (a bad line)        skipped                  WARNING
empty or whitespace-only ground truth              skipped                  WARNING
image missing, or not an image by its first bytes  skipped                  WARNING
image with more pixels than ``max_image_pixels``   skipped                  WARNING
inference raised, or returned something unusable   skipped                  ERROR
prediction longer than ``max_output_chars``        skipped                  ERROR
confidence below ``conf_threshold``                filtered                 DEBUG
empty prediction                                   evaluated (ed=len(gt))   DEBUG
=================================================  =======================  =========

A confidence of None (an engine that gives none) is never filtered; one that is not a number in [0, 1] (NaN,
negative, above 1) is an unusable result, and so is None from ``image_loader``. Blank lines are not samples. The
ground truth is everything after the
first tab, verbatim but for a trailing ``\\r``, as :mod:`pytest_ocrmetrics.datasets.label_file` reads it. Image paths
are relative to ``dataset_base_path`` or absolute; each line is one sample, in file order (a duplicated image is
evaluated twice). Progress is logged at INFO every 50 lines as ``处理进度: {current}/{total} ({percentage}%)``.

Skipped samples are logged one by one for the first :data:`~pytest_ocrmetrics.datasets.base.MAX_SKIPPED_LISTED` of
each level (WARNING, ERROR); the rest are counted and said once at the end, at the same level, with the first of them
(``and 999,990 more samples skipped (the first at val.txt:12: ...)``): a label file of a million bad lines is a few
lines of output, as in the plugin. The counts in the result are exact either way.

Two resource limits apply, as in the plugin (``docs/reference/limits.md``): ``max_image_pixels`` (default
:data:`~pytest_ocrmetrics.core.documents.MAX_IMAGE_PIXELS`) skips an image whose header declares more pixels before any
model or engine decodes it, and ``max_output_chars`` (default
:data:`~pytest_ocrmetrics.scoring.document.MAX_SCORED_CHARACTERS`, or twice the ground truth when that is longer) skips a
prediction too long to score instead of aligning it (about 160 bytes of memory per character).
"""

from __future__ import annotations

import json
import logging
import math
import os
import posixpath
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, TextIO

from pytest_ocrmetrics.core.documents import (
    MAX_IMAGE_PIXELS,
    Document,
    not_an_image_reason,
    sniff_image_format,
    too_many_pixels_reason,
)
from pytest_ocrmetrics.engines.base import OcrEngine
from pytest_ocrmetrics.scoring.document import MAX_SCORED_CHARACTERS, output_too_long_reason

if TYPE_CHECKING:
    from pytest_ocrmetrics.engines.registry import EngineRegistry

__all__ = [
    "OCRDatasetEvaluator",
    "OCREvaluationResult",
    "SampleEvaluation",
    "LabelEntry",
    "OUTPUT_FORMATS",
    "PROGRESS_EVERY",
    "check_conf_threshold",
    "check_max_images",
    "check_limit",
    "format_table",
    "format_json",
    "score_sample",
]

logger = logging.getLogger(__name__)

OUTPUT_FORMATS = ("table", "json")
PROGRESS_EVERY = 50
"""Lines between two progress messages."""
NAME_WIDTH = 18
"""Display cells of the table's name column (six CJK characters and room)."""
VALUE_WIDTH = 12
"""Display cells of a value column; a wider header widens its column to the header plus two cells."""
_SNIFF_BYTES = 16


# ------------------------------------------------------------------------------------------------------ values


@dataclass(frozen=True)
class LabelEntry:
    """One sample line of a label file: the image path as written, the ground truth, the 1-based line number."""

    image_path: str
    ground_truth: str
    line_number: int


@dataclass(frozen=True)
class SampleEvaluation:
    """One evaluated sample. ``is_correct`` is True exactly when ``edit_distance`` is 0.

    ``confidence`` is None when the engine gives none.
    """

    image_path: str
    ground_truth: str
    predicted_text: str
    confidence: float | None
    is_correct: bool
    edit_distance: int
    normalized_edit_distance: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "image_path": self.image_path,
            "ground_truth": self.ground_truth,
            "predicted_text": self.predicted_text,
            "confidence": self.confidence,
            "is_correct": self.is_correct,
            "edit_distance": self.edit_distance,
            "normalized_edit_distance": self.normalized_edit_distance,
        }


@dataclass(frozen=True)
class OCREvaluationResult:
    """Everything :meth:`OCRDatasetEvaluator.evaluate_dataset` measured (document 004's ``OCREvaluationResult``).

    ``total_samples`` = ``evaluated_samples`` + ``filtered_samples`` + ``skipped_samples``. ``per_sample_results``
    holds the evaluated samples (those the three metrics average over), in file order, when they were asked for.
    """

    accuracy: float
    normalized_edit_distance: float
    edit_distance_similarity: float
    total_samples: int
    evaluated_samples: int
    filtered_samples: int
    skipped_samples: int
    evaluation_time: float
    avg_inference_time_ms: float
    per_sample_results: tuple[SampleEvaluation, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The document's JSON keys, in its order; ``per_sample_results`` only when it was asked for."""
        data: dict[str, Any] = {
            "accuracy": self.accuracy,
            "normalized_edit_distance": self.normalized_edit_distance,
            "edit_distance_similarity": self.edit_distance_similarity,
            "total_samples": self.total_samples,
            "evaluated_samples": self.evaluated_samples,
            "filtered_samples": self.filtered_samples,
            "skipped_samples": self.skipped_samples,
            "evaluation_time": self.evaluation_time,
            "avg_inference_time_ms": self.avg_inference_time_ms,
        }
        if self.per_sample_results is not None:
            data["per_sample_results"] = [sample.to_dict() for sample in self.per_sample_results]
        return data


def score_sample(ground_truth: str, predicted_text: str) -> tuple[int, float]:
    """``(Levenshtein distance, distance / max(len(prediction), len(ground truth)))`` over code points, the texts
    unchanged (the project's :func:`~pytest_ocrmetrics.metrics.normalized_edit_distance` with ``unit="codepoint"``,
    ``normalize="none"``).

    Args:
        ground_truth: the label.
        predicted_text: the model's text.

    Returns:
        ``(distance, normalized distance)``.

    >>> score_sample("京A12345", "京A12346")
    (1, 0.14285714285714285)
    >>> score_sample("京A12345", "")
    (7, 1.0)
    """
    from pytest_ocrmetrics.metrics.text import normalized_edit_distance

    result = normalized_edit_distance(ground_truth, predicted_text, unit="codepoint", normalize="none")
    return result.distance, result.value


# -------------------------------------------------------------------------------------------------- validation


def check_conf_threshold(value: object) -> float:
    """``value`` as a float if it is a number in [0, 1], else a ``ValueError`` saying so.

    Args:
        value: the threshold given.

    Returns:
        The threshold as a float.

    >>> check_conf_threshold(0.7)
    0.7
    """
    given = value
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise ValueError(f"conf_threshold must be a number in [0, 1], got {given!r}")
    return float(value)


def check_max_images(value: object) -> int | None:
    """``value`` if it is None or a whole number of 1 or more, else a ``ValueError`` saying so.

    Args:
        value: the limit given.

    Returns:
        The limit, or ``None`` for no limit.
    """
    if value is None:
        return None
    given = value
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            value = None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_images must be a whole number of 1 or more (or None for all), got {given!r}")
    return value


def check_limit(value: object, name: str, unit: str) -> int:
    """``value`` as a resource limit (``max_image_pixels``, ``max_output_chars``): a whole number of 1 or more, else a
    ``ValueError`` in one sentence naming ``name`` (the plugin's rule:
    :func:`~pytest_ocrmetrics.core.limits.parse_resource_limit`). 0 and None do not turn a limit off (one input could
    then exhaust memory); give a large number instead.

    Args:
        value: the limit as given (a number, or text such as ``"2,000,000"``).
        name: the setting's name, for the error sentence.
        unit: what the limit counts (``pixels``, ``characters``).

    Returns:
        The limit.

    >>> check_limit("1000", "max_output_chars", "characters")
    1000
    """
    from pytest_ocrmetrics.core.limits import parse_resource_limit

    return parse_resource_limit(value, name, unit)


def _check_output_format(value: object) -> str:
    if value in OUTPUT_FORMATS:
        return str(value)
    from pytest_ocrmetrics.core.hints import did_you_mean

    hint = did_you_mean(value, OUTPUT_FORMATS) if isinstance(value, str) else ""
    raise ValueError(f"output_format must be 'table' or 'json', got {value!r}{hint}")


def _check_label_file(label_file: str | os.PathLike[str]) -> Path:
    path = Path(label_file)
    if not path.is_file():
        what = "is not a file" if path.exists() else "does not exist"
        message = f"label file {str(path)!r} {what}; give the '<image path>\\t<text>' list (e.g. val.txt)"
        logger.error(message, extra={"ocr_raised": True})  # raised too: a command line shows it once
        raise (IsADirectoryError if path.is_dir() else FileNotFoundError)(message)
    return path


def _check_base_path(dataset_base_path: str | os.PathLike[str]) -> Path:
    path = Path(dataset_base_path)
    if not path.is_dir():
        fix = "give the folder the label file's image paths are relative to"
        if path.exists():
            raise NotADirectoryError(f"dataset base path {str(path)!r} is not a directory; {fix}")
        raise FileNotFoundError(f"dataset base path {str(path)!r} does not exist; {fix}")
    return path


# --------------------------------------------------------------------------------------------------- label file


def _label_lines(label_file: Path) -> list[tuple[int, str]]:
    """The non-blank lines of ``label_file`` with their 1-based numbers (UTF-8, a byte-order mark dropped)."""
    from pytest_ocrmetrics.datasets.base import read_text

    numbered = enumerate(read_text(label_file, "label file").split("\n"), start=1)
    return [(number, line.removesuffix("\r")) for number, line in numbered if line.strip()]


def _parse_line(number: int, line: str) -> LabelEntry | str:
    """The entry of one non-blank line, or why the line is skipped (the label-file loader's rules)."""
    written, tab, text = line.partition("\t")
    if not tab:
        return "no tab between image path and text (expected '<image path>\\t<text>')"
    if not written.strip():
        return "the image path before the tab is empty"
    if not text.strip():
        return "the ground truth after the tab is empty; write the expected text after the tab or remove the line"
    return LabelEntry(image_path=written.strip(), ground_truth=text, line_number=number)


def _image_problem(path: Path, max_image_pixels: int = MAX_IMAGE_PIXELS) -> str | None:
    """Why the sample's image cannot be given to the model, or None: missing, unreadable, not an image by its first
    bytes, or declaring more than ``max_image_pixels`` pixels in its header (checked before anything decodes it)."""
    if not path.is_file():
        return f"image {str(path)!r} {'is not a file' if path.exists() else 'does not exist'}"
    try:
        with path.open("rb") as handle:
            data = handle.read()
    except OSError as exc:
        return f"image {str(path)!r} cannot be read: {exc.strerror or exc}"
    head = data[:_SNIFF_BYTES]
    if sniff_image_format(head) is None:
        return f"image {str(path)!r} is not an image ({not_an_image_reason(head)})"
    too_big = too_many_pixels_reason(data, max_image_pixels)
    if too_big:
        return f"image {str(path)!r} {too_big}"
    return None


def _document_id(written: str, image: Path, base: Path) -> str:
    """The id an engine sees: the path as written (``/`` separators, no ``./``), relative to the base path when an
    absolute path lies inside it (so ``replay:DIR`` finds ``DIR/<id>.txt``)."""
    if Path(written).is_absolute():
        absolute_base = os.path.abspath(base)
        if os.path.commonpath([absolute_base, os.path.abspath(image)]) == absolute_base:
            return Path(os.path.relpath(image, absolute_base)).as_posix()
        return Path(written).as_posix()
    return posixpath.normpath(Path(written).as_posix())


class _SkipLog:
    """The skipped samples' messages of one evaluation: the first
    :data:`~pytest_ocrmetrics.datasets.base.MAX_SKIPPED_LISTED` of each level logged one by one, the rest counted and
    said once by :meth:`summarise` (the plugin's cap on skipped entries, issue 20)."""

    def __init__(self, label_path: Path) -> None:
        from pytest_ocrmetrics.datasets.base import MAX_SKIPPED_LISTED

        self.label_path = label_path
        self.cap = MAX_SKIPPED_LISTED
        self.logged = {logging.WARNING: 0, logging.ERROR: 0}
        self.more = {logging.WARNING: 0, logging.ERROR: 0}
        self.first_more: dict[int, str] = {}

    def skip(self, level: int, where: str, message: str) -> None:
        """Log ``where: message`` at ``level`` unless the cap of that level is reached; count it either way."""
        if self.logged[level] < self.cap:
            self.logged[level] += 1
            logger.log(level, "%s: %s", where, message)
            return
        if not self.more[level]:
            self.first_more[level] = f"the first at {where}: {message}"
        self.more[level] += 1

    def summarise(self) -> None:
        """One message per level that went past the cap: how many more were skipped, and the first of them."""
        for level, more in self.more.items():
            if more:
                logger.log(level, "%s: and %s more sample%s skipped (%s)", self.label_path, f"{more:,}",
                           "s" if more != 1 else "", self.first_more[level])


# ----------------------------------------------------------------------------------------------------- outputs


class _UnusableOutput(ValueError):
    """The model or engine ran but returned something that cannot be scored (a NaN confidence, no text): logged as
    an unusable result, not as a failed inference."""


def _valid_confidence(value: object) -> float | None:
    if value is None:
        return None
    if hasattr(value, "item") and not isinstance(value, (int, float)):  # a numpy scalar
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise _UnusableOutput(f"the confidence must be a number in [0, 1] or None, got {value!r}")
    return float(value)


def _model_output(result: object) -> tuple[str, float | None]:
    """``(text, confidence)`` from what an OCRONNX-style model returned; a ``ValueError`` for anything else."""
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        shown = type(result).__name__ if not isinstance(result, (tuple, list)) else f"{len(result)} items"
        raise _UnusableOutput("the model must return (predicted_text, confidence[, char_confidences]), "
                         f"got {shown}")
    text = result[0]
    if not isinstance(text, str):
        raise _UnusableOutput(f"the predicted text must be a string, got {type(text).__name__}")
    return str(text), _valid_confidence(result[1])


# --------------------------------------------------------------------------------------------------- formatting


def _pad(text: str, width: int) -> str:
    from pytest_ocrmetrics.scoring.diff import display_width

    return text + " " * max(0, width - display_width(text))


def _block(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows padded to the name column (18 cells) and value columns (12), by display width (CJK counts 2)."""
    from pytest_ocrmetrics.scoring.diff import display_width

    columns = len(rows[0])
    widths = [max([NAME_WIDTH if i == 0 else VALUE_WIDTH] + [display_width(row[i]) + 2 for row in rows])
              for i in range(columns)]
    return ["".join(_pad(cell, width) for cell, width in zip(row, widths)).rstrip() for row in rows]


def format_table(result: OCREvaluationResult | Mapping[str, Any]) -> str:
    """Document 003's two-row console table: the three metrics, then the four counts (4 decimals; no timing, so
    the same evaluation always prints the same table).

    Args:
        result: an evaluation result.

    Returns:
        The table, as printed.

    >>> print(format_table({"accuracy": 0.925, "normalized_edit_distance": 0.045, "edit_distance_similarity": 0.955,
    ...                     "total_samples": 1000, "evaluated_samples": 980, "filtered_samples": 15,
    ...                     "skipped_samples": 5}))
    指标              完全准确率  归一化编辑距离  编辑距离相似度
    OCR评估           0.9250      0.0450          0.9550
    <BLANKLINE>
    统计信息          总样本数    评估数      过滤数      跳过数
    样本统计          1000        980         15          5
    """
    data = result.to_dict() if isinstance(result, OCREvaluationResult) else result
    metrics = _block([
        ["指标", "完全准确率", "归一化编辑距离", "编辑距离相似度"],
        ["OCR评估"] + [f"{float(data[key]):.4f}" for key in
                     ("accuracy", "normalized_edit_distance", "edit_distance_similarity")],
    ])
    counts = _block([
        ["统计信息", "总样本数", "评估数", "过滤数", "跳过数"],
        ["样本统计"] + [str(int(data[key])) for key in
                    ("total_samples", "evaluated_samples", "filtered_samples", "skipped_samples")],
    ])
    return "\n".join(metrics + [""] + counts)


def format_json(result: OCREvaluationResult | Mapping[str, Any]) -> str:
    """The result as indented JSON, CJK kept readable (characters JSON cannot carry as UTF-8, such as a lone
    surrogate from a model, are escaped instead).

    Args:
        result: an evaluation result.

    Returns:
        The JSON text.
    """
    data = result.to_dict() if isinstance(result, OCREvaluationResult) else dict(result)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=2, ensure_ascii=True)
    return text


# ---------------------------------------------------------------------------------------------------- evaluator


class OCRDatasetEvaluator:
    """Evaluates one OCR model on a label file (see the module documentation for the model, metrics and counts).

    ``engine_options`` are the settings of an engine given by name (``{"lang": "deu"}`` for ``"tesseract"``);
    ``registry`` is the engine registry to look the name up in (default: the built-ins and installed entry points).
    ``max_image_pixels`` and ``max_output_chars`` are the resource limits (see the module documentation); a bad
    value is a ``ValueError``.
    An engine created here is closed by :meth:`close` (or leaving a ``with`` block); one passed in is not.

    >>> def model(image):
    ...     return "京A12345", 0.98, []
    >>> evaluator = OCRDatasetEvaluator(model)
    """

    def __init__(
        self,
        ocr_model: Any,
        *,
        engine_options: Mapping[str, str] | None = None,
        image_loader: Callable[[str], Any] | None = None,
        registry: EngineRegistry | None = None,
        max_image_pixels: int = MAX_IMAGE_PIXELS,
        max_output_chars: int = MAX_SCORED_CHARACTERS,
    ) -> None:
        self.max_image_pixels = check_limit(max_image_pixels, "max_image_pixels", "pixels")
        self.max_output_chars = check_limit(max_output_chars, "max_output_chars", "characters")
        self.ocr_model = ocr_model
        self.image_loader = image_loader
        self._engine: OcrEngine | None = None
        self._owns_engine = False
        if isinstance(ocr_model, str):
            if registry is None:
                from pytest_ocrmetrics.engines.registry import default_registry

                registry = default_registry()
            self._engine = registry.create(ocr_model, dict(engine_options or {}))
            self._owns_engine = True
        elif isinstance(ocr_model, OcrEngine):
            self._engine = ocr_model
        elif not callable(ocr_model):
            raise TypeError(
                "ocr_model must be a callable returning (predicted_text, confidence[, char_confidences]), an engine "
                f"name such as 'tesseract' or 'replay:DIR', or an engine instance; got {type(ocr_model).__name__}"
            )
        if engine_options and self._engine is None:
            raise TypeError("engine_options only apply to an engine given by name, e.g. OCRDatasetEvaluator('tesseract', "
                            "engine_options={'lang': 'deu'})")

    def close(self) -> None:
        """Close the engine this evaluator created from a name (an engine or model passed in is left alone)."""
        if self._owns_engine and self._engine is not None:
            self._engine.close()
            self._owns_engine = False

    def __enter__(self) -> OCRDatasetEvaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the public entry point --------------------------------------------------------------------------------------
    def evaluate_dataset(
        self,
        label_file: str | os.PathLike[str],
        dataset_base_path: str | os.PathLike[str],
        conf_threshold: float = 0.5,
        max_images: int | None = None,
        output_format: str = "table",
        *,
        include_per_sample_results: bool = False,
        stream: TextIO | None = None,
    ) -> dict[str, Any]:
        """Evaluate the model on ``label_file``, print the result to ``stream`` (default stdout) as the two-row table
        (``output_format='table'``) or as JSON (``'json'``), and return it as a dict with document 004's keys.

        ``max_images`` limits the evaluation to the first N sample lines. ``per_sample_results`` (every evaluated
        sample) is in the result, and in the JSON, only with ``include_per_sample_results=True``.

        Raises ``FileNotFoundError`` (or ``IsADirectoryError``) for a missing label file, ``FileNotFoundError`` /
        ``NotADirectoryError`` for a base path that is not a directory, ``ValueError`` for a threshold outside
        [0, 1], a bad ``max_images``, an unknown output format or a label file that is not UTF-8, each one sentence.

        >>> result = evaluator.evaluate_dataset("dataset/val.txt", "dataset", conf_threshold=0.7)  # doctest: +SKIP
        >>> sorted(result)[:3]                                                                      # doctest: +SKIP
        ['accuracy', 'avg_inference_time_ms', 'edit_distance_similarity']
        """
        output_format = _check_output_format(output_format)
        result = self.evaluate(label_file, dataset_base_path, conf_threshold, max_images,
                               include_per_sample_results=include_per_sample_results)
        text = format_json(result) if output_format == "json" else format_table(result)
        print(text, file=stream if stream is not None else sys.stdout)
        return result.to_dict()

    def evaluate(
        self,
        label_file: str | os.PathLike[str],
        dataset_base_path: str | os.PathLike[str],
        conf_threshold: float = 0.5,
        max_images: int | None = None,
        *,
        include_per_sample_results: bool = False,
    ) -> OCREvaluationResult:
        """:meth:`evaluate_dataset` without printing: the :class:`OCREvaluationResult` itself."""
        start = time.perf_counter()
        label_path = _check_label_file(label_file)
        base = _check_base_path(dataset_base_path)
        threshold = check_conf_threshold(conf_threshold)
        limit = check_max_images(max_images)
        lines = _label_lines(label_path)
        if limit is not None:
            lines = lines[:limit]
        total = len(lines)
        samples: list[SampleEvaluation] = []
        filtered = skipped = 0
        inference_s: list[float] = []
        skips = _SkipLog(label_path)
        for current, (number, line) in enumerate(lines, start=1):
            where = f"{label_path}:{number}"
            outcome = self._evaluate_line(where, number, line, base, label_path, threshold, inference_s, skips)
            if isinstance(outcome, SampleEvaluation):
                samples.append(outcome)
            elif outcome == "filtered":
                filtered += 1
            else:
                skipped += 1
            if current % PROGRESS_EVERY == 0:
                logger.info("处理进度: %d/%d (%.1f%%)", current, total, current / total * 100)
        skips.summarise()
        if samples:
            accuracy = sum(sample.is_correct for sample in samples) / len(samples)
            ned = sum(sample.normalized_edit_distance for sample in samples) / len(samples)
        else:
            accuracy, ned = 0.0, 1.0
            logger.warning("%s: no sample was evaluated (%d skipped, %d filtered by confidence < %g); the metrics are "
                           "reported as 0 accuracy and 0 similarity", label_path, skipped, filtered, threshold)
        return OCREvaluationResult(
            accuracy=accuracy,
            normalized_edit_distance=ned,
            edit_distance_similarity=1.0 - ned,
            total_samples=total,
            evaluated_samples=len(samples),
            filtered_samples=filtered,
            skipped_samples=skipped,
            evaluation_time=time.perf_counter() - start,
            avg_inference_time_ms=sum(inference_s) / len(inference_s) * 1000 if inference_s else 0.0,
            per_sample_results=tuple(samples) if include_per_sample_results else None,
        )

    # -- one line ----------------------------------------------------------------------------------------------------
    def _evaluate_line(self, where: str, number: int, line: str, base: Path, label_path: Path, threshold: float,
                       inference_s: list[float], skips: _SkipLog) -> SampleEvaluation | str:
        """The sample's evaluation, or ``"filtered"`` / ``"skipped"`` (logged here, through ``skips``)."""
        entry = _parse_line(number, line)
        if isinstance(entry, str):
            skips.skip(logging.WARNING, where, f"line skipped: {entry}")
            return "skipped"
        written = Path(entry.image_path)
        image = written if written.is_absolute() else base / written
        problem = _image_problem(image, self.max_image_pixels)
        if problem is not None:
            skips.skip(logging.WARNING, where, f"sample skipped: {problem}")
            return "skipped"
        began = time.perf_counter()
        try:
            text, confidence = self._recognize(image, entry, base, label_path)
        except _UnusableOutput as exc:  # it ran, but its answer cannot be scored: not an inference failure
            skips.skip(logging.ERROR, where, f"sample skipped: unusable result for {str(image)!r}: {exc}")
            return "skipped"
        except Exception as exc:  # noqa: BLE001 - document 004: an inference failure skips the sample
            skips.skip(logging.ERROR, where,
                       f"sample skipped: inference failed on {str(image)!r}: {type(exc).__name__}: {exc}")
            return "skipped"
        inference_s.append(time.perf_counter() - began)
        too_long = output_too_long_reason(text, entry.ground_truth, self.max_output_chars)
        if too_long is not None:  # aligning it could exhaust memory: not scored (document 004's unusable result)
            skips.skip(logging.ERROR, where, f"sample skipped: unusable result for {str(image)!r}: {too_long}")
            return "skipped"
        if confidence is not None and confidence < threshold:
            logger.debug("%s: sample filtered: confidence %g < conf_threshold %g", where, confidence, threshold)
            return "filtered"
        if not text:
            logger.debug("%s: empty prediction, scored as %d edits", where, len(entry.ground_truth))
        distance, ned = score_sample(entry.ground_truth, text)
        return SampleEvaluation(
            image_path=entry.image_path,
            ground_truth=entry.ground_truth,
            predicted_text=text,
            confidence=confidence,
            is_correct=distance == 0,
            edit_distance=distance,
            normalized_edit_distance=ned,
        )

    def _recognize(self, image: Path, entry: LabelEntry, base: Path, label_path: Path) -> tuple[str, float | None]:
        if self._engine is not None:
            document = Document(
                id=_document_id(entry.image_path, image, base), dataset=label_path.stem, image_path=image,
                reference_text=entry.ground_truth, source=f"{label_path}:{entry.line_number}",
                max_image_pixels=self.max_image_pixels,
            )
            output = self._engine.recognize(document)
            return output.text, _valid_confidence(output.confidence)
        loaded = self.image_loader(str(image)) if self.image_loader is not None else str(image)
        if loaded is None:  # cv2.imread's answer for an image it cannot decode
            raise _UnusableOutput(f"image_loader returned None for {str(image)!r} (it cannot decode the image)")
        return _model_output(self.ocr_model(loaded))
