"""The engine protocol and what an engine returns.

An engine turns a :class:`~pytest_ocrmetrics.core.documents.Document` into an :class:`OcrOutput`. Engines never import
pytest; heavy backends are imported inside the adapter that needs them.
"""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol, runtime_checkable

from pytest_ocrmetrics.core.documents import Document, sniff_image_format

__all__ = [
    "Box",
    "Word",
    "OcrOutput",
    "OcrEngine",
    "EngineWrapper",
    "EngineFactory",
    "EngineSpec",
    "EngineError",
    "require_image_file",
    "read_image",
    "with_image_bytes",
    "image_temp_file",
    "image_decode_problem",
    "EngineUnavailable",
    "EngineOptionError",
]

Box = tuple[float, float, float, float]  # x1, y1, x2, y2 in the engine's coordinate system


@dataclass(frozen=True)
class Word:
    """A recognised word or line with its box and confidence (0..1) when the engine has them."""

    text: str
    box: Box | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class OcrOutput:
    """What an engine returned for one document.

    ``text`` is what text metrics compare. ``raw`` keeps the engine's untouched output (e.g. Markdown with grounding
    tags), ``fields`` the structured fields when the engine extracts them, ``confidence`` a document-level confidence
    in 0..1 (mean word confidence when the engine gives only word confidences). ``truncated`` marks output cut off by a
    token limit. ``cached`` is set when the output came from the output cache instead of the engine.
    """

    text: str
    engine: str = ""
    words: tuple[Word, ...] | None = None
    confidence: float | None = None
    fields: Mapping[str, Any] | None = None
    raw: str | None = None
    elapsed_s: float = 0.0
    truncated: bool = False
    cached: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "engine": self.engine,
            "words": None if self.words is None else [
                {"text": w.text, "box": list(w.box) if w.box else None, "confidence": w.confidence} for w in self.words
            ],
            "confidence": self.confidence,
            "fields": None if self.fields is None else dict(self.fields),
            "raw": self.raw,
            "elapsed_s": self.elapsed_s,
            "truncated": self.truncated,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OcrOutput:
        words = data.get("words")
        return cls(
            text=data["text"],
            engine=data.get("engine", ""),
            words=None if words is None else tuple(
                Word(w["text"], tuple(w["box"]) if w.get("box") else None, w.get("confidence")) for w in words
            ),
            confidence=data.get("confidence"),
            fields=data.get("fields"),
            raw=data.get("raw"),
            elapsed_s=float(data.get("elapsed_s", 0.0)),
            truncated=bool(data.get("truncated", False)),
            metadata=data.get("metadata") or {},
        )


@runtime_checkable
class OcrEngine(Protocol):
    """The engine protocol.

    ``name`` is what users type (``tesseract``, ``replay:DIR`` shows as ``replay``). ``identity()`` returns everything
    that determines the output (engine version, model id/revision/files, parameters, prompt), JSON-serializable and
    free of secrets; the output cache keys on it. ``recognize`` must be safe to call from several threads when the
    engine sets ``concurrent = True`` (remote engines); ``close`` releases resources at session end.
    """

    name: str

    def identity(self) -> Mapping[str, Any]: ...

    def recognize(self, document: Document) -> OcrOutput: ...

    def close(self) -> None: ...


class EngineWrapper:
    """Base of an engine that wraps another (``self.engine``: the output cache, the repeats): whatever the wrapper does
    not define itself is the wrapped engine's (``concurrent``, ``in_process``, ``batch_size``, ...).

    ``_own`` names the wrapper's own attributes, which are looked up here only before ``__init__`` set them (while
    unpickling): raising then instead of delegating avoids an endless recursion.
    """

    engine: Any
    _own: tuple[str, ...] = ("engine",)

    def __getattr__(self, attribute: str) -> Any:
        if attribute in self._own:
            raise AttributeError(attribute)
        return getattr(self.engine, attribute)


EngineFactory = Callable[[str | None, Mapping[str, str]], OcrEngine]
"""Builds an engine from the part after ``:`` in ``--ocr-engine=name:arg`` (or None) and its settings."""


@dataclass(frozen=True)
class EngineSpec:
    """A registered engine: its name, factory, valid setting keys and a one-line description.

    ``check`` (optional) validates ``(arg, settings)`` the way the factory would, cheaply: no engine created, no heavy
    library imported, no binary run. It runs at startup and raises
    :class:`EngineOptionError` for a bad value, a missing required setting or a missing folder, so those are one
    usage error instead of an error in every test; a missing binary or package is left to the factory
    (:class:`EngineUnavailable`, a skip).
    """

    name: str
    factory: EngineFactory
    options: Mapping[str, str] = field(default_factory=dict)  # setting key -> one-line help
    description: str = ""
    install_hint: str = ""
    check: Callable[[str | None, Mapping[str, str]], object] | None = None


class EngineError(RuntimeError):
    """Recognition of one document failed (bad image, timeout, server error); that document's test errors."""


def require_image_file(document: Document) -> Path:
    """The document's image path; a missing image is an :class:`EngineError`.

    Only for a backend that must open the file itself and where reading a copy will not do: the file is not checked
    to be an image and may differ from the bytes the output cache hashed. Prefer :func:`read_image`.

    Args:
        document: the document.

    Returns:
        Its image's path.
    """
    try:
        return document.image_file()
    except FileNotFoundError as exc:
        raise EngineError(str(exc)) from None


def read_image(document: Document) -> bytes:
    """The bytes an engine recognises: ``document.image_bytes()`` (the bytes already read when the document carries
    them, so they are the ones the output cache hashed), checked to be an image.

    A missing or unreadable image, or a file that is not an image (a text file named ``x.png``), is an
    :class:`EngineError` naming the file and the document. Engines read images only through this function (or
    :func:`with_image_bytes`), never from ``document.image_path``.

    Args:
        document: the document.

    Returns:
        The image's bytes.
    """
    try:
        return document.image_bytes()
    except OSError as exc:
        raise EngineError(str(exc)) from None


def with_image_bytes(document: Document) -> Document:
    """``document`` carrying its image bytes (read and checked once); an :class:`EngineError` as for :func:`read_image`.

    Args:
        document: the document.

    Returns:
        The document with its bytes.
    """
    try:
        return document.with_image_bytes()
    except OSError as exc:
        raise EngineError(str(exc)) from None


def image_decode_problem(exc: BaseException, data: bytes) -> str:
    """What went wrong decoding ``data`` (an image read into memory), for an error message naming the file.

    Pillow names the in-memory buffer (``cannot identify image file <_io.BytesIO object at 0x...>``), which tells a
    user nothing; this says what the file looked like instead.

    Args:
        exc: the decoding error.
        data: the bytes that failed.

    Returns:
        A short description.
    """
    text = re.sub(r"\s*<_io\.BytesIO object at 0x[0-9a-fA-F]+>", "", str(exc)).strip()
    if not text or text == "cannot identify image file":
        kind = sniff_image_format(data[:16])
        return (f"it starts like a {kind} file but cannot be decoded (damaged, or a variant the decoder does not "
                "support)" if kind else "it cannot be decoded as an image")
    return f"{type(exc).__name__}: {text}"


@contextmanager
def image_temp_file(data: bytes, *, suffix: str = "", directory: str | os.PathLike[str] | None = None,
                    prefix: str = "ocrmetrics-") -> Iterator[Path]:
    """A private temporary file holding exactly ``data``, for a backend that only reads paths; removed afterwards.

    Giving such a backend these bytes instead of the dataset's path keeps the image it reads the one that was
    checked and hashed; re-encoding through Pillow instead would change JPEG pixels and thus the output.
    ``directory`` (default: the system's temporary folder) is where it is made, e.g. an engine's own folder that is
    removed when the run ends or is interrupted.

    Args:
        data: the image's bytes.
        suffix: the file's suffix (``.png``).
        directory: where to create it (default: the system's temporary folder).
        prefix: the file name's prefix.

    Returns:
        A context manager yielding the file's path.
    """
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        yield Path(name)
    finally:
        try:
            os.unlink(name)
        except OSError:
            pass


class EngineUnavailable(RuntimeError):
    """The engine cannot run here (missing binary or package); tests using it are skipped with this message."""


class EngineOptionError(ValueError):
    """A bad engine setting (unknown key, bad value); a usage error at startup."""
