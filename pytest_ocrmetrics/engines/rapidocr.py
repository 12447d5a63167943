"""``rapidocr``: RapidOCR 3.x (PP-OCR models) on onnxruntime, working offline right after ``pip install``.

The PP-OCR detection, recognition and orientation models ship inside the ``rapidocr`` wheel. This adapter passes
their paths explicitly, so RapidOCR never reaches its download code (by default it would check the files' hashes and
download them again when they differ); a missing bundled model is an
:class:`~pytest_ocrmetrics.engines.base.EngineUnavailable`, not a download.

RapidOCR returns text lines in detection order. They are put back in reading order from their boxes: lines whose
vertical extents overlap by at least half the smaller height form one row, rows go top to bottom, lines in a row
left to right and are joined by one space (:func:`reading_order`). The orientation classifier is off by default: on
upright documents it flips some short lines upside down.

Settings (``--ocr-engine-option rapidocr.KEY=VALUE``):

``use_cls``        run the text-line orientation classifier (default false)
``text_score``     drop lines whose recognition score is below this (default 0.5)
``box_thresh``     detection box score threshold (default 0.5)
``unclip_ratio``   how far detection boxes are grown around the text (default 1.6)
``max_side_len``   larger images are scaled down to this many pixels on their long side first (default 2000)
``det_limit_type``, ``det_limit_side_len``  how the detector resizes: ``min`` (default) scales the short side up
                   to ``det_limit_side_len`` (default 736), ``max`` only scales the long side down to it. ``max`` with
                   960 is several times faster on small images (plates, single lines) at similar accuracy
``use_det``        detect text lines first (default true); false recognises the whole image as one line, for
                   images that are already cropped to one line (plates, line datasets), and is much faster
``word_boxes``     ``OcrOutput.words`` holds words (single characters for CJK) instead of lines (default false)
``threads``        onnxruntime threads per model (default: all cores)
``det_model``, ``rec_model``, ``cls_model``  other ONNX model files instead of the bundled ones
``rec_keys``       character list for a ``rec_model`` without one embedded

Confidences are RapidOCR's recognition scores (0..1); the document's confidence is the mean over its lines.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping, Sequence

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import (
    Box,
    EngineError,
    EngineOptionError,
    EngineSpec,
    EngineUnavailable,
    OcrOutput,
    Word,
    image_decode_problem,
    read_image,
)
from pytest_ocrmetrics.engines.settings import bool_setting, float_setting, int_setting

__all__ = ["RapidOcrEngine", "RapidOcrSettings", "SPEC", "check", "create", "reading_order", "INSTALL_PACKAGE"]

INSTALL_PACKAGE = 'pip install "pytest-ocrmetrics[rapidocr]"'


def _import_rapidocr() -> Any:
    try:
        import onnxruntime  # type: ignore[import-untyped,unused-ignore]  # noqa: F401 - checked for a clear message
        import rapidocr
    except ImportError as exc:
        raise EngineUnavailable(f"the rapidocr engine needs {exc.name or 'rapidocr'}: {INSTALL_PACKAGE}") from None
    return rapidocr


def reading_order(boxes: Sequence[Box]) -> list[list[int]]:
    """Group line boxes ``(x1, y1, x2, y2)`` into rows and order them for reading.

    A box joins the row whose vertical band (the mean top and bottom of its boxes) it overlaps most, when the overlap
    is at least half the smaller height; otherwise it starts a row. Rows are sorted top to bottom by band centre,
    boxes in a row left to right. Returns rows of indices into ``boxes``.

    >>> reading_order([(300, 10, 400, 30), (10, 12, 100, 32), (10, 50, 100, 70)])
    [[1, 0], [2]]
    """
    rows: list[dict[str, Any]] = []
    for i in sorted(range(len(boxes)), key=lambda i: ((boxes[i][1] + boxes[i][3]) / 2, boxes[i][0])):
        top, bottom = boxes[i][1], boxes[i][3]
        height = max(bottom - top, 1e-6)
        best, best_ratio = None, 0.5
        for row in rows:
            row_top, row_bottom = row["top"], row["bottom"]
            overlap = min(bottom, row_bottom) - max(top, row_top)
            ratio = overlap / max(min(height, row_bottom - row_top), 1e-6)
            if ratio >= best_ratio:
                best, best_ratio = row, ratio
        if best is None:
            rows.append({"members": [i], "top": top, "bottom": bottom})
        else:
            best["members"].append(i)
            count = len(best["members"])
            best["top"] += (top - best["top"]) / count
            best["bottom"] += (bottom - best["bottom"]) / count
    rows.sort(key=lambda row: (row["top"] + row["bottom"]) / 2)
    return [sorted(row["members"], key=lambda i: (boxes[i][0], boxes[i][1])) for row in rows]


def _box(quad: Any) -> Box:
    xs = [float(point[0]) for point in quad]
    ys = [float(point[1]) for point in quad]
    return (min(xs), min(ys), max(xs), max(ys))


def _model_file(options: Mapping[str, str], key: str) -> Path | None:
    value = options.get(key, "").strip()
    if not value:
        return None
    path = Path(value)
    if not path.is_file():
        raise EngineOptionError(f"rapidocr.{key}: model file {value!r} does not exist")
    return path


@dataclass(frozen=True)
class RapidOcrSettings:
    """Every RapidOCR setting this adapter exposes (see the module docstring)."""

    use_cls: bool = False
    text_score: float = 0.5
    box_thresh: float = 0.5
    unclip_ratio: float = 1.6
    max_side_len: int = 2000
    det_limit_type: str = "min"
    det_limit_side_len: int = 736
    use_det: bool = True
    word_boxes: bool = False
    threads: int | None = None
    det_model: Path | None = None
    rec_model: Path | None = None
    cls_model: Path | None = None
    rec_keys: Path | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> RapidOcrSettings:
        limit_type = options.get("det_limit_type", "").strip().lower() or "min"
        if limit_type not in ("min", "max"):
            raise EngineOptionError(f"rapidocr.det_limit_type must be min or max, got {options['det_limit_type']!r}")
        return cls(
            det_limit_type=limit_type,
            det_limit_side_len=int_setting("rapidocr", options, "det_limit_side_len", 736, minimum=32, maximum=10000),
            use_det=bool_setting("rapidocr", options, "use_det", True),
            use_cls=bool_setting("rapidocr", options, "use_cls", False),
            text_score=float_setting("rapidocr", options, "text_score", 0.5, minimum=0, maximum=1),
            box_thresh=float_setting("rapidocr", options, "box_thresh", 0.5, minimum=0, maximum=1),
            unclip_ratio=float_setting("rapidocr", options, "unclip_ratio", 1.6, minimum=0.1, maximum=10),
            max_side_len=int_setting("rapidocr", options, "max_side_len", 2000, minimum=32, maximum=100000),
            word_boxes=bool_setting("rapidocr", options, "word_boxes", False),
            threads=int_setting("rapidocr", options, "threads", None, minimum=1),
            det_model=_model_file(options, "det_model"),
            rec_model=_model_file(options, "rec_model"),
            cls_model=_model_file(options, "cls_model"),
            rec_keys=_model_file(options, "rec_keys"),
        )


def _bundled_models() -> dict[str, tuple[Path, str | None]]:
    """``{"det"|"cls"|"rec": (path inside the wheel, sha256 from RapidOCR's model table)}`` for the default config."""
    from rapidocr.inference_engine.base import FileInfo, InferSession
    from rapidocr.main import DEFAULT_CFG_PATH, root_dir
    from rapidocr.utils.parse_parameters import ParseParams

    config = ParseParams.load(DEFAULT_CFG_PATH)
    models: dict[str, tuple[Path, str | None]] = {}
    for section in ("Det", "Cls", "Rec"):
        part = config[section]
        info = InferSession.get_model_url(FileInfo(
            engine_type=part.engine_type, ocr_version=part.ocr_version, task_type=part.task_type,
            lang_type=part.lang_type, model_type=part.model_type,
        ))
        models[section.lower()] = (Path(root_dir) / "models" / Path(str(info["model_dir"])).name, info.get("SHA256"))
    return models


def _decode(data: bytes) -> Any:
    """The image as rapidocr decodes a file path: opened with Pillow, EXIF orientation applied."""
    import io

    from PIL import Image, ImageOps

    picture = Image.open(io.BytesIO(data))
    try:
        return ImageOps.exif_transpose(picture) or picture
    except Exception:  # noqa: BLE001 - rapidocr ignores a broken EXIF block the same way
        return picture


class RapidOcrEngine:
    """RapidOCR with the bundled PP-OCR models; the RapidOCR object is built once (loading models is expensive).

    Example::

        >>> engine = RapidOcrEngine(RapidOcrSettings(text_score=0.6))   # doctest: +SKIP
        >>> engine.recognize(document).text                             # doctest: +SKIP
        'This is a lot of 12 point text to test the\\n...'
    """

    name = "rapidocr"
    concurrent = False

    def __init__(self, settings: RapidOcrSettings | None = None) -> None:
        self.settings = settings or RapidOcrSettings()
        rapidocr = _import_rapidocr()
        try:
            bundled = _bundled_models()
        except Exception as exc:  # noqa: BLE001 - RapidOCR's internals moved: say so instead of downloading
            raise EngineUnavailable(
                f"cannot find the models bundled with rapidocr {metadata.version('rapidocr')} ({exc}); "
                f"this adapter supports rapidocr 3.x: {INSTALL_PACKAGE}"
            ) from None
        chosen = {"det": self.settings.det_model, "cls": self.settings.cls_model, "rec": self.settings.rec_model}
        self.models: dict[str, tuple[Path, str | None]] = {}
        for task, (path, sha256) in bundled.items():
            if chosen[task] is not None:
                self.models[task] = (Path(chosen[task]), None)  # type: ignore[arg-type]
            elif path.is_file():
                self.models[task] = (path, sha256)
            else:
                raise EngineUnavailable(
                    f"rapidocr's bundled model {path.name} is missing from {path.parent}; reinstall it with "
                    "pip install --force-reinstall rapidocr"
                )
        params: dict[str, Any] = {
            "Global.use_det": self.settings.use_det,
            "Global.use_cls": self.settings.use_cls,
            "Global.text_score": self.settings.text_score,
            "Global.max_side_len": self.settings.max_side_len,
            "Global.return_word_box": self.settings.word_boxes,
            "Global.log_level": "error",
            "Det.limit_type": self.settings.det_limit_type,
            "Det.limit_side_len": self.settings.det_limit_side_len,
            "Det.box_thresh": self.settings.box_thresh,
            "Det.unclip_ratio": self.settings.unclip_ratio,
            "Det.model_path": str(self.models["det"][0]),
            "Cls.model_path": str(self.models["cls"][0]),
            "Rec.model_path": str(self.models["rec"][0]),
        }
        if self.settings.rec_keys is not None:
            params["Rec.rec_keys_path"] = str(self.settings.rec_keys)
        if self.settings.threads is not None:
            params["EngineConfig.onnxruntime.intra_op_num_threads"] = self.settings.threads
        try:
            self._ocr = rapidocr.RapidOCR(params=params)
            loaders = (("_load_det_model",) if self.settings.use_det else ()) + ("_load_rec_model",) + (
                ("_load_cls_model",) if self.settings.use_cls else ())
            for loader in loaders:
                getattr(self._ocr, loader, lambda: None)()  # load now: errors at startup, not in the first test
        except Exception as exc:  # noqa: BLE001 - a broken model or runtime is an environment problem
            raise EngineUnavailable(f"rapidocr could not load its models: {type(exc).__name__}: {exc}") from None
        self._hashes: dict[str, str] = {}

    def identity(self) -> Mapping[str, Any]:
        """Versions, each model file with its sha256, and the settings that change the output (not ``threads``)."""
        models = {}
        for task, (path, sha256) in sorted(self.models.items()):
            if (task == "cls" and not self.settings.use_cls) or (task == "det" and not self.settings.use_det):
                continue
            if sha256 is None:
                if task not in self._hashes:
                    self._hashes[task] = hashlib.sha256(path.read_bytes()).hexdigest()
                sha256 = self._hashes[task]
            models[task] = {"file": path.name, "sha256": sha256}
        settings = self.settings
        return {
            "engine": self.name,
            "rapidocr": metadata.version("rapidocr"),
            "onnxruntime": metadata.version("onnxruntime"),
            "models": models,
            "rec_keys": None if settings.rec_keys is None else str(settings.rec_keys),
            "use_cls": settings.use_cls,
            "text_score": settings.text_score,
            "box_thresh": settings.box_thresh,
            "unclip_ratio": settings.unclip_ratio,
            "max_side_len": settings.max_side_len,
            "use_det": settings.use_det,
            "det_limit_type": settings.det_limit_type,
            "det_limit_side_len": settings.det_limit_side_len,
            "word_boxes": settings.word_boxes,
        }

    def recognize(self, document: Document) -> OcrOutput:
        image_bytes = read_image(document)  # the checked bytes the output cache hashed, decoded from memory
        image = document.image_path or Path(document.id)
        start = time.perf_counter()
        try:
            result = self._ocr(_decode(image_bytes))
        except Exception as exc:  # noqa: BLE001 - unreadable image, runtime error: this document errors
            raise EngineError(
                f"rapidocr failed on {str(image)!r} (document {document.id!r}): {image_decode_problem(exc, image_bytes)}"
            ) from None
        elapsed = time.perf_counter() - start
        texts = list(getattr(result, "txts", None) or ())
        scores = [float(s) for s in (getattr(result, "scores", None) or ())]
        quads = getattr(result, "boxes", None)
        if quads is None:  # recognition only (use_det=false): no boxes; the score filter is ours to apply
            kept = [(t, s) for t, s in zip(texts, scores) if t.strip() and s >= self.settings.text_score]
            texts, scores = [t for t, _ in kept], [s for _, s in kept]
        if not texts:
            return OcrOutput(text="", engine=self.name, words=(), confidence=None, elapsed_s=elapsed)
        if quads is None:
            return OcrOutput(
                text="\n".join(texts), engine=self.name, words=tuple(Word(t, None, s) for t, s in zip(texts, scores)),
                confidence=sum(scores) / len(scores), elapsed_s=elapsed, metadata={"lines": len(texts), "rows": len(texts)},
            )
        return self._detected_output(result, texts, scores, quads, elapsed)

    def _detected_output(self, result: Any, texts: list[str], scores: list[float], quads: Any,
                         elapsed: float) -> OcrOutput:
        """The output of detection + recognition: lines in reading order (rows of boxes), with a word per line, or
        per recognised word when ``word_boxes`` is on and the result has them."""
        boxes = [_box(q) for q in quads]
        rows = reading_order(boxes)
        order = [i for row in rows for i in row]
        text = "\n".join(" ".join(texts[i] for i in row) for row in rows)
        word_results = getattr(result, "word_results", None) or ()
        if self.settings.word_boxes and len(word_results) == len(texts):
            words = tuple(
                Word(str(item[0]), _box(item[2]), float(item[1]))
                for i in order for item in word_results[i] if len(item) == 3 and item[2] is not None
            )
        else:
            words = tuple(Word(texts[i], boxes[i], scores[i]) for i in order)
        return OcrOutput(
            text=text,
            engine=self.name,
            words=words,
            confidence=sum(scores) / len(scores),
            elapsed_s=elapsed,
            metadata={"lines": len(texts), "rows": len(rows)},
        )

    def close(self) -> None:
        self._ocr = None


def check(arg: str | None, options: Mapping[str, str]) -> RapidOcrSettings:
    """The settings of ``--ocr-engine=rapidocr`` (which takes no ``:ARG``), every value checked.

    Cheap (rapidocr and onnxruntime are not imported), so it runs at startup: ``rapidocr.text_score=abc`` is one
    usage error. A missing package or model is found when the engine is created (its tests are skipped).
    """
    if arg:
        raise EngineOptionError(f"rapidocr takes no argument after ':' (got {arg!r}); use rapidocr.KEY=VALUE settings")
    return RapidOcrSettings.from_options(options)


def create(arg: str | None, options: Mapping[str, str]) -> RapidOcrEngine:
    """Factory for ``--ocr-engine=rapidocr`` (see :func:`check`)."""
    return RapidOcrEngine(check(arg, options))


SPEC = EngineSpec(
    name="rapidocr",
    factory=create,
    check=check,
    options={
        "use_cls": "run the text-line orientation classifier (default false: it flips upright lines)",
        "text_score": "drop lines whose recognition score is below this (default 0.5)",
        "box_thresh": "detection box score threshold (default 0.5)",
        "unclip_ratio": "how far detection boxes are grown around the text (default 1.6)",
        "max_side_len": "scale larger images down to this long side first (default 2000)",
        "det_limit_type": "min (default: scale the short side up to det_limit_side_len) or max (scale the long side down)",
        "det_limit_side_len": "the detector's resize target in pixels (default 736)",
        "use_det": "detect lines first (default true); false reads the whole image as one line (plates, line crops)",
        "word_boxes": "OcrOutput.words holds words (characters for CJK) instead of lines (default false)",
        "threads": "onnxruntime threads per model (default: all cores)",
        "det_model": "detection ONNX model file instead of the bundled one",
        "rec_model": "recognition ONNX model file instead of the bundled one",
        "cls_model": "orientation ONNX model file instead of the bundled one",
        "rec_keys": "character list file for a rec_model without one embedded",
    },
    description="RapidOCR (PP-OCR on onnxruntime, models bundled in the wheel, works offline)",
    install_hint=INSTALL_PACKAGE,
)
