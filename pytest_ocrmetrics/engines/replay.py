"""``replay:DIR``: predictions made elsewhere (a release pipeline, another machine, a model server) read from files.

This is how CI gates outputs it did not produce itself, and how tests run without an OCR binary.

For a document with id ``sub/x.png`` the text is read from the first file that exists of

1. ``DIR/sub/x.png.txt`` (the id plus ``.txt``),
2. ``DIR/sub/x.txt`` (the image's stem plus ``.txt``, in the same sub-folder as the id).

Each folder of ``DIR`` is listed once, the first time a prediction is looked up in it (a listed ``.txt`` takes its
``.json`` from the listing too); a prediction written after that is still found when no listed file matches the
document. The text is UTF-8; Windows line ends become ``\\n``
and exactly one trailing newline is removed (as for sidecar ground truth). Next to the chosen ``.txt`` an optional
``.json`` with the same base name (``x.png.json`` or ``x.json``) adds structured output. It is either

* ``{"fields": {...}}``, optionally with ``"confidence"`` (0..1), ``"raw"`` (the untouched model output, a string)
  and a qa ``"answer"`` / a ``"class"`` (the document's downstream tasks read them; they are not fields, so field F1
  does not count them as extra), recognised by its ``"fields"`` key, or
* a bare object, taken as the fields themselves (``{"total": "12.50", "date": "2024-01-31"}``).

A document that is a PDF page (an olmOCR-bench dataset, id ``<pdf path without .pdf>_pg<page>``) is read from the
benchmark's candidate files instead: every ``DIR/<id>_repeat<r>.md``, in order of ``r``; the first is the output's
text and all of them are its ``metadata["repeats"]`` (facts are checked on each, :mod:`pytest_ocrmetrics.scoring.document`).

A page of an OmniDocBench dataset (a document with ``omnidoc_page``, id the page's image path ``x.pdf_3.jpg``) is read
from the benchmark's prediction naming first: ``DIR/<image stem>.md`` (``DIR/x.pdf_3.md``; in the id's sub-folder,
then flat in ``DIR``), else from the ``.txt`` files above. The Markdown is kept as it is (one trailing newline
removed).

A missing prediction raises :class:`~pytest_ocrmetrics.engines.base.EngineError` naming the paths tried, so that
document's test errors. Settings: ``replay.dir`` (instead of ``:DIR``).
"""

from __future__ import annotations

import codecs
import hashlib
import json
import math
import os
import posixpath
import re
import sys
import time
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.datasets.base import closest_existing_path, parse_json
from pytest_ocrmetrics.datasets.sidecar import strip_trailing_newline
from pytest_ocrmetrics.engines.base import EngineError, EngineOptionError, EngineSpec, OcrOutput

__all__ = ["ReplayEngine", "SPEC", "check", "create"]

_STRUCTURED_KEYS = frozenset({"fields", "confidence", "raw", "answer", "class"})
_TASK_KEYS = ("answer", "class")  # a qa answer and a class: the downstream tasks' prediction, not fields


def _read_prediction_text(path: Path) -> str:
    """The file's UTF-8 text (a byte-order mark dropped), line ends read as ``Path.read_text`` reads them (``\r\n``
    and ``\r`` become ``\n``), one trailing newline removed; decoded in one call, not through a text stream."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith(codecs.BOM_UTF8):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EngineError(f"prediction {str(path)!r} is not valid UTF-8 (byte {exc.start})") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return strip_trailing_newline(text)


class ReplayEngine:
    """Reads ``DIR/<id>.txt`` (or ``DIR/<stem>.txt``) and an optional ``.json`` of fields.

    Example::

        >>> engine = ReplayEngine("predictions/v2")                       # doctest: +SKIP
        >>> engine.recognize(document).text                               # doctest: +SKIP
        'ACME Corp\\nTotal 12.50'
    """

    name = "replay"
    concurrent = True  # reading files is thread-safe
    cacheable = False  # the predictions are already on disk, and they follow the document id, not the image bytes
    in_process = True  # a file read costs less than handing it to a prefetch thread: no pool

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        path = Path(directory)
        if not path.is_dir():
            raise EngineOptionError(f"replay directory {str(path)!r} {_not_a_folder(path)}; "
                                    "pass --ocr-engine=replay:DIR")
        self.directory = Path(os.path.abspath(path))
        self._root = str(self.directory)
        self._listings: dict[str, frozenset[str]] = {}
        self._fingerprint: str | None = None

    def candidates(self, document: Document) -> list[Path]:
        """The prediction files tried for ``document``, in order."""
        doc_id = PurePosixPath(document.id)
        tried = [self.directory / f"{doc_id}.txt"]
        if doc_id.suffix:
            tried.append(self.directory / doc_id.with_suffix(".txt"))
        if doc_id.parent != PurePosixPath("."):
            # ids with folders (a label file's "images/plate_01.png"): the image's own stem, flat in DIR
            tried.append(self.directory / f"{doc_id.stem}.txt")
        return tried

    def identity(self) -> Mapping[str, Any]:
        """The directory and a fingerprint of its files (names, sizes, modification times): when the predictions
        change, the identity changes, so a cache keyed on it never serves stale output."""
        if self._fingerprint is None:
            digest = hashlib.sha256()
            top = os.fspath(self.directory)
            for root, dirs, files in os.walk(top):
                dirs.sort()
                # the file's path relative to DIR with "/" separators, without a pathlib object per file
                prefix = os.path.relpath(root, top).replace(os.sep, "/") + "/" if root != top else ""
                for name in sorted(files):
                    stat = os.stat(os.path.join(root, name))
                    digest.update(f"{prefix}{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
            self._fingerprint = digest.hexdigest()[:16]
        return {"engine": self.name, "dir": str(self.directory), "fingerprint": self._fingerprint}

    def repeat_files(self, document: Document) -> list[Path]:
        """The benchmark's candidate files of a PDF-page document: ``DIR/<id>_repeat<r>.md``, sorted by ``r``."""
        doc_id = PurePosixPath(document.id)
        folder = self.directory / doc_id.parent
        if not folder.is_dir():
            return []
        pattern = re.compile(rf"^{re.escape(doc_id.name)}_repeat(\d+)\.md$")
        found = [(int(m.group(1)), path) for path in folder.iterdir()
                 if (m := pattern.match(path.name)) and path.is_file()]
        return [path for _, path in sorted(found)]

    def _recognize_repeats(self, document: Document, start: float) -> OcrOutput:
        files = self.repeat_files(document)
        if not files:
            raise EngineError(f"no prediction for document {document.id!r}: expected "
                              f"{self.directory / document.id}_repeat<r>.md (olmOCR-bench candidate naming)")
        texts = []
        for path in files:
            try:
                texts.append(path.read_text(encoding="utf-8"))
            except UnicodeDecodeError as exc:
                raise EngineError(f"prediction {str(path)!r} is not valid UTF-8 (byte {exc.start})") from None
        return OcrOutput(text=texts[0], engine=self.name, elapsed_s=time.perf_counter() - start,
                         metadata={"prediction": str(files[0]), "repeats": texts,
                                   "repeat_files": [str(path) for path in files]})

    def markdown_candidates(self, document: Document) -> list[Path]:
        """The benchmark's prediction files of an OmniDocBench page, in order: ``<image stem>.md`` in the id's
        sub-folder of ``DIR``, then flat in ``DIR``."""
        doc_id = PurePosixPath(document.id)
        tried = [self.directory / doc_id.parent / f"{doc_id.stem}.md"]
        if doc_id.parent != PurePosixPath("."):
            tried.append(self.directory / f"{doc_id.stem}.md")
        return tried

    def recognize(self, document: Document) -> OcrOutput:
        start = time.perf_counter()
        if document.page is not None:
            return self._recognize_repeats(document, start)
        if document.omnidoc_page is not None:
            markdown = next((path for path in self.markdown_candidates(document) if path.is_file()), None)
            if markdown is None and not any(path.is_file() for path in self.candidates(document)):
                paths = ", ".join(str(p) for p in [*self.markdown_candidates(document), *self.candidates(document)])
                raise EngineError(f"no prediction for page {document.id!r}: tried {paths} (OmniDocBench names a "
                                  "page's prediction after its image: <image stem>.md)")
            if markdown is not None:
                return OcrOutput(text=_read_prediction_text(markdown), engine=self.name,
                                 elapsed_s=time.perf_counter() - start, metadata={"prediction": str(markdown)})
        found, json_listed = self._listed_prediction(document.id)
        if found is not None:
            try:
                text = _read_prediction_text(found)
            except FileNotFoundError:  # removed since the folder was listed
                found = None
        if found is None:
            tried = self.candidates(document)
            found = next((path for path in tried if path.is_file()), None)
            if found is None:
                listed = ", ".join(str(p) for p in tried)
                raise EngineError(f"no prediction for document {document.id!r}: tried {listed}")
            text, json_listed = _read_prediction_text(found), True
        extra = self._structured(found.with_suffix(".json")) if json_listed else {}
        return OcrOutput(
            text=text,
            engine=self.name,
            fields=extra.get("fields"),
            confidence=extra.get("confidence"),
            raw=extra.get("raw"),
            elapsed_s=time.perf_counter() - start,
            metadata={"prediction": str(found),
                      **({"task_prediction": extra["task_prediction"]} if extra.get("task_prediction") else {})},
        )

    def _listed_prediction(self, doc_id: str) -> tuple[Path | None, bool]:
        """The first of :meth:`candidates` found in its folder's listing (each folder is listed once, the first time a
        prediction is looked up in it: a set lookup instead of a ``stat`` per candidate), and whether the listing has
        its ``.json``; ``(None, False)`` when no candidate is listed (or the id is not a plain relative path): then
        :meth:`recognize` looks on disk, which also finds files written after the listing."""
        if (not doc_id or doc_id.startswith("/") or posixpath.normpath(doc_id) != doc_id or doc_id == ".."
                or doc_id.startswith("../")):
            return None, False
        folder, name = posixpath.split(doc_id)
        dot = name.rfind(".")
        stem = name[:dot] if 0 < dot < len(name) - 1 else name  # PurePosixPath's stem: no suffix, no change
        names = [(folder, f"{name}.txt")]
        if stem != name:
            names.append((folder, f"{stem}.txt"))
        if folder:
            names.append(("", f"{stem}.txt"))
        for where, candidate in names:
            listing = self._listing(where)
            if candidate in listing:
                path = Path(os.path.join(self._root, where, candidate))
                return path, f"{candidate[:-4]}.json" in listing
        return None, False

    def _listing(self, folder: str) -> frozenset[str]:
        """The names of the files in ``DIR/folder`` (empty when it cannot be listed), read once."""
        listing = self._listings.get(folder)
        if listing is None:
            try:
                with os.scandir(os.path.join(self._root, folder)) as entries:
                    listing = frozenset(entry.name for entry in entries if entry.is_file())
            except OSError:
                listing = frozenset()
            self._listings[folder] = listing
        return listing

    @staticmethod
    def _structured(path: Path) -> dict[str, Any]:
        if not path.is_file():
            return {}
        try:
            data = parse_json(path.read_text(encoding="utf-8-sig"))  # as ground truth is read
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise EngineError(f"prediction {str(path)!r} is not valid JSON: {exc}") from None
        except RecursionError:  # a bare "maximum recursion depth exceeded" would not say which file or why
            raise EngineError(f"prediction {str(path)!r} is nested deeper than Python's JSON parser allows (more "
                              f"than about {sys.getrecursionlimit():,} levels of brackets); flatten it") from None
        if not isinstance(data, dict):
            raise EngineError(f"prediction {str(path)!r} must be a JSON object (fields, or {{\"fields\": {{...}}}})")
        if "fields" not in data:
            return {"fields": data}
        unknown = sorted(set(data) - _STRUCTURED_KEYS)
        if unknown:
            raise EngineError(
                f"prediction {str(path)!r} has unknown key {unknown[0]!r} next to 'fields' "
                f"(allowed: {', '.join(sorted(_STRUCTURED_KEYS))})"
            )
        if not isinstance(data["fields"], dict):
            raise EngineError(f"prediction {str(path)!r}: 'fields' must be an object")
        confidence = data.get("confidence")
        if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, (int, float))
                                       or not math.isfinite(confidence) or not 0 <= confidence <= 1):
            raise EngineError(f"prediction {str(path)!r}: 'confidence' must be a number in 0..1, got {confidence!r}")
        raw = data.get("raw")
        if raw is not None and not isinstance(raw, str):
            raise EngineError(f"prediction {str(path)!r}: 'raw' must be a string")
        answer = data.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise EngineError(f"prediction {str(path)!r}: 'answer' must be a string (the qa answer)")
        tasks = {key: data[key] for key in _TASK_KEYS if data.get(key) is not None}
        return {"fields": data["fields"], "confidence": None if confidence is None else float(confidence), "raw": raw,
                "task_prediction": tasks}

    def close(self) -> None:
        return None


def check(arg: str | None, options: Mapping[str, str]) -> Path:
    """The directory from ``replay:DIR`` or the ``replay.dir`` setting (not both, unless equal), checked to exist.

    Cheap, so it runs at startup: a missing or mistyped folder is one usage error, not an error per document.
    """
    option = (options.get("dir") or "").strip() or None
    if arg and option and Path(arg) != Path(option):
        raise EngineOptionError(
            f"replay got two directories: {arg!r} from --ocr-engine=replay:DIR and {option!r} from replay.dir; "
            "give one"
        )
    directory = arg or option
    if not directory:
        raise EngineOptionError("replay needs a directory of predictions: pass --ocr-engine=replay:DIR "
                                "or --ocr-engine-option=replay.dir=DIR")
    path = Path(directory)
    if not path.is_dir():
        raise EngineOptionError(f"replay directory {str(path)!r} {_not_a_folder(path)}; pass --ocr-engine=replay:DIR "
                                "with the folder of predictions (<id>.txt files)")
    return path


def _not_a_folder(path: Path) -> str:
    """Why ``path`` is no replay folder, with the closest existing folder when its name looks mistyped."""
    if path.exists():
        return "is not a directory"
    if path.is_symlink():  # the closest existing path would be the link itself: name its missing target instead
        return f"is a broken symbolic link to {os.readlink(path)!r}"
    guess = closest_existing_path(path)
    return "does not exist" if guess is None else f"does not exist (did you mean {str(guess)!r}?)"


def create(arg: str | None, options: Mapping[str, str]) -> ReplayEngine:
    """Factory: the directory from ``replay:DIR`` or the ``replay.dir`` setting (see :func:`check`)."""
    return ReplayEngine(check(arg, options))


SPEC = EngineSpec(
    name="replay",
    factory=create,
    check=check,
    options={"dir": "directory of predictions (<id>.txt or <stem>.txt, optional .json; <stem>.md for OmniDocBench "
                    "pages); same as replay:DIR"},
    description="reads predictions made elsewhere from DIR/<id>.txt (or <stem>.txt) and optional .json fields",
)
