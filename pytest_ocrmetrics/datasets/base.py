"""What every dataset format shares: the :class:`Dataset` value, errors, and checks on ground-truth entries.

A dataset loader reads one on-disk format into a :class:`Dataset`: an immutable, id-sorted tuple of
:class:`~pytest_ocrmetrics.documents.Document` plus the entries it skipped. The helpers here are the single place that
turns a path written in a ground-truth file into an image path (refusing paths that leave the dataset folder), that
checks a ground-truth entry (``full_text``, ``fields``, ``thresholds``, ``tags``, ``schema``, ``facts``, ``tasks``),
and that checks every document's image (:func:`finish`: it must exist, stay inside the dataset folder once symbolic
links are followed, and be an image by its first bytes), so every format reports the same mistakes with the same
sentence.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import posixpath
import stat
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Iterator, Mapping, Protocol, runtime_checkable

from pytest_ocrmetrics.documents import Document, not_an_image_reason, sniff_image_format

__all__ = [
    "Dataset",
    "DatasetError",
    "DatasetLoader",
    "SkippedEntry",
    "ENTRY_KEYS",
    "closest_existing_path",
    "document_from_entry",
    "entry_error",
    "finish",
    "image_error",
    "json_error_message",
    "read_text",
    "resolve_inside",
]

ENTRY_KEYS = ("full_text", "fields", "thresholds", "tags", "schema", "facts", "tasks")
"""The keys a ground-truth entry may have (formats 1 and 4; format 4 adds ``image``)."""


class DatasetError(ValueError):
    """A dataset that cannot be loaded: no known format, malformed ground truth, or a path leaving the folder.

    The message is one sentence naming the file, the entry (and line where there is one) and what is wrong.
    """


@dataclass(frozen=True)
class SkippedEntry:
    """A ground-truth entry that was left out (e.g. a label-file line without a tab).

    ``source`` is ``"file:line"`` (the file as the dataset path was given), ``reason`` one sentence.
    """

    source: str
    reason: str


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: documents sorted by id, plus the entries that were skipped while loading.

    ``root`` is the folder image paths and document ids are relative to; ``format`` the loader's name
    (``ground_truth_json``, ``label_file``, ``sidecar``, ``jsonl``).

    Example::

        >>> dataset = load_dataset("example_suites/plates/data")   # doctest: +SKIP
        >>> [d.id for d in dataset][:2]                           # doctest: +SKIP
        ['plate_01.png', 'plate_02.png']
    """

    name: str
    root: Path
    format: str
    documents: tuple[Document, ...]
    skipped: tuple[SkippedEntry, ...] = ()

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)


@runtime_checkable
class DatasetLoader(Protocol):
    """One on-disk format.

    ``name`` is the format's name (``Dataset.format``), ``description`` a short phrase for the "no dataset here"
    error. ``detect`` must be cheap (look at names and at most a few bytes); ``load`` raises :class:`DatasetError`
    for malformed ground truth.
    """

    name: str
    description: str

    def detect(self, path: Path) -> bool: ...

    def load(self, path: Path, *, name: str) -> Dataset: ...


# -- reading files ---------------------------------------------------------------------------------------------------
def read_text(path: Path, what: str = "ground-truth file") -> str:
    """Read ``path`` as UTF-8 (a leading byte-order mark is dropped); a decoding error is a :class:`DatasetError`."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: {what} is not valid UTF-8 (byte {exc.start}); save it as UTF-8.") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read {what}: {exc.strerror or exc}.") from None


def jsonl_lines(path: Path, what: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of each non-blank line of a JSON Lines file read with :func:`read_text`. Lines are
    split on ``"\\n"`` only: ``str.splitlines()`` would also split on U+2028 and friends, which JSON strings may hold.
    """
    for number, line in enumerate(read_text(path, what).split("\n"), start=1):
        if line.strip():
            yield number, line


def parse_json(text: str, **options: Any) -> Any:
    r"""``json.loads`` for ground truth: a control character inside a string (a tab or an ESC typed into the file,
    which strict JSON forbids) is read as the character it is, not a reason to refuse the whole dataset; reports show
    it as a visible mark.

    >>> parse_json('{"full_text": "a\tb"}')  # a real tab inside the string
    {'full_text': 'a\tb'}
    """
    return json.loads(text, strict=False, **options)


def json_error_message(path: Path | str, exc: json.JSONDecodeError, line: int | None = None) -> str:
    """One sentence for a JSON syntax error; ``line`` is the file line for JSONL (the error's own line otherwise)."""
    where = f"line {line}, column {exc.colno}" if line is not None else f"line {exc.lineno}, column {exc.colno}"
    return f"{path}: invalid JSON at {where}: {exc.msg}."


# -- paths -----------------------------------------------------------------------------------------------------------
def resolve_inside(root: Path, written: str, *, source: str) -> tuple[str, Path]:
    """Turn a path written in a ground-truth file into ``(document id, image path)``.

    ``written`` is relative to ``root`` (or absolute inside it). The id is the path relative to ``root`` with ``/``
    separators and no ``./`` parts. A path that leaves ``root`` (``../x.png``, an absolute path elsewhere) raises
    :class:`DatasetError`: a dataset describes its own folder. The check is lexical; where symbolic links lead is
    checked per document by :func:`finish` (a link out of the folder makes that document's test error).

    Example::

        >>> resolve_inside(Path("/data"), "./sub/x.png", source="labels.txt:3")
        ('sub/x.png', PosixPath('/data/sub/x.png'))
    """
    if not written or not written.strip():
        raise DatasetError(f"{source}: the image path is empty.")
    if os.sep == "/" and not written.startswith("/"):  # the usual case, in string operations (pathlib: 3x slower)
        relative = posixpath.normpath(written)
        if relative not in ("", ".", "..") and not relative.startswith("../"):
            return relative, root / relative
    candidate = Path(written)
    if candidate.is_absolute():
        absolute_root = os.path.normpath(os.path.abspath(root))
        normalized = os.path.normpath(str(candidate))
        if os.path.commonpath([absolute_root, normalized]) != absolute_root:
            raise DatasetError(
                f"{source}: image path {written!r} is outside the dataset folder {str(root)!r}; "
                "use a path relative to the dataset folder."
            )
        relative = Path(os.path.relpath(normalized, absolute_root)).as_posix()
    else:
        relative = posixpath.normpath(candidate.as_posix())
        if relative == ".." or relative.startswith("../"):
            raise DatasetError(
                f"{source}: image path {written!r} leaves the dataset folder {str(root)!r}; "
                "keep the images inside the dataset folder."
            )
    if relative in ("", "."):
        raise DatasetError(f"{source}: image path {written!r} names the dataset folder itself, not an image.")
    return relative, root / PurePosixPath(relative)


def image_error(image_path: Path, root: Path | None = None, *, source: str = "") -> str | None:
    """The load-time error for a document's image (its test errors with it), else None.

    The image must exist and be a file; with ``root`` (the dataset folder), it must also stay inside ``root`` once
    symbolic links are followed, and its first bytes must be those of an image
    (:func:`~pytest_ocrmetrics.documents.sniff_image_format`): a text file named ``x.png`` never reaches an engine
    (Tesseract would read it as a list of image paths and recognise the files it names). ``source`` (the
    ground-truth entry) is named in the fix.
    """
    unnameable = _unnameable(image_path)
    if unnameable:  # pathlib would only say it does not exist; os.lstat would raise and lose the whole dataset
        where = f" ({source})" if source else ""
        return f"image path {str(image_path)!r} cannot name a file on this system: it holds {unnameable}{where}"
    if not image_path.is_file():
        if image_path.exists():
            return f"image {str(image_path)!r} is not a file"
        return f"image {str(image_path)!r} does not exist"
    if root is None:
        return None
    where = f" in {source}" if source else ""
    try:
        resolved = image_path.resolve(strict=True)
        inside = resolved.is_relative_to(root.resolve(strict=True))
    except (OSError, RuntimeError) as exc:  # a symbolic link loop
        return f"image {str(image_path)!r} cannot be resolved ({exc})"
    if not inside:
        return (f"image {str(image_path)!r} is a symbolic link to {str(resolved)!r}, outside the dataset folder "
                f"{str(root)!r}; copy the image into the dataset folder or fix its path{where}")
    try:
        with image_path.open("rb") as handle:
            head = handle.read(16)
    except OSError as exc:
        return f"image {str(image_path)!r} cannot be read: {exc.strerror or exc}"
    if sniff_image_format(head) is None:
        return (f"image {str(image_path)!r} is not an image ({not_an_image_reason(head)}); "
                f"replace the file or fix its path{where}")
    return None


def _unnameable(path: Path) -> str | None:
    """What in ``path`` no file name on this system can hold (a NUL, a lone surrogate from a ``\\ud800`` escape in
    the ground truth), or None.

    >>> _unnameable(Path("images/a\\ud800.png")), _unnameable(Path("a\\x00.png")), _unnameable(Path("a.png"))
    ('a lone surrogate U+D800', 'a NUL character', None)
    """
    text = str(path)
    if "\0" in text:
        return "a NUL character"
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        return f"a lone surrogate U+{ord(text[exc.start]):04X}"
    return None


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


class _ImageChecker:
    """:func:`image_error` for the many images of one dataset folder, in a few system calls each.

    A regular file (not a symbolic link) whose folder lies inside ``root`` once resolved, and whose first bytes are
    an image's, is fine; every other image (missing, a link, a folder, outside, not an image, unreadable) is judged
    by :func:`image_error` itself, so the messages are its own. The resolved root and folders are looked up once.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root: str | None = None
        self._folders: dict[str, str] = {}

    def __call__(self, image_path: Path, source: str = "") -> str | None:
        if self._fine(os.fspath(image_path)):
            return None
        return image_error(image_path, self.root, source=source)

    def _fine(self, path: str) -> bool:
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return False
            if self._root is None:
                self._root = os.path.join(str(self.root.resolve(strict=True)), "")
            folder, _ = os.path.split(path)
            resolved = self._folders.get(folder)
            if resolved is None:
                resolved = self._folders[folder] = os.path.join(str(Path(folder or ".").resolve(strict=True)), "")
            if not resolved.startswith(self._root):
                return False
            descriptor = os.open(path, _READ_FLAGS)  # no file object: a third of the cost of open()
            try:
                head = os.read(descriptor, 16)
            finally:
                os.close(descriptor)
        except (OSError, RuntimeError, ValueError):  # ValueError: a path no file can have (image_error says why)
            return False
        return sniff_image_format(head) is not None


# -- ground-truth entries --------------------------------------------------------------------------------------------
def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _check_thresholds(value: Any, where: str) -> dict[str, float]:
    """The entry's ``thresholds``, each a number or a percentage string (``{"cer": "5%"}``), read by
    :func:`~pytest_ocrmetrics.thresholds.parse_limit` as every other limit is: ``{"cer": 5}`` (a percent typo) or
    ``{"field_f1": 90}`` raises :class:`DatasetError`, which errors this entry's document only."""
    from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message
    from pytest_ocrmetrics.thresholds import LimitError, parse_limit

    if not isinstance(value, Mapping):
        raise DatasetError(f"{where}: 'thresholds' must be an object like {{\"cer\": 0.1}}, got {_type_name(value)}.")
    thresholds: dict[str, float] = {}
    for metric, limit in value.items():
        if metric not in METRICS:
            raise DatasetError(f"{where}: {unknown_metric_message(metric, kind='threshold metric')}.")
        if isinstance(limit, str) and not limit.strip().endswith("%"):  # JSON has numbers: "0.1" is a mistake
            raise DatasetError(f"{where}: threshold {metric!r} must be a number such as 0.1 or a percentage such as "
                               f"\"10%\", got {json.dumps(limit)}.")
        if not isinstance(limit, str) and (isinstance(limit, bool) or not isinstance(limit, (int, float))
                                           or not math.isfinite(limit)):
            raise DatasetError(f"{where}: threshold {metric!r} must be a finite number, got {json.dumps(limit)}.")
        written = f"{json.dumps(metric)}: {json.dumps(limit)}"
        try:
            thresholds[str(metric)] = parse_limit(metric, limit, lambda v: f"{json.dumps(metric)}: {_json_limit(v)}",
                                                  where=f"{where}: thresholds", typed=f"{where}: thresholds: {written}")
        except LimitError as exc:
            raise DatasetError(f"{exc}.") from None
    return thresholds


def _json_limit(written: str) -> str:
    """A limit as JSON: ``0.05``, or the string ``"5%"``."""
    return json.dumps(written) if written.endswith("%") else written


def _check_schema(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise DatasetError(f"{where}: 'schema' must be a JSON Schema object, got {_type_name(value)}.")
    import jsonschema  # type: ignore[import-untyped,unused-ignore]  # lazily: only datasets with schemas pay

    try:
        jsonschema.validators.validator_for(value).check_schema(value)
    except jsonschema.SchemaError as exc:
        raise DatasetError(f"{where}: 'schema' is not a valid JSON Schema: {exc.message}.") from None
    return dict(value)


def entry_error(doc_id: str, message: str, *, dataset: str, source: str, image_path: Path | None = None) -> Document:
    """The document of a ground-truth entry that cannot be read (a malformed entry, an image path that leaves the
    folder, a broken fields file): its test errors with ``message``, one sentence naming the file and the entry, and
    the rest of the dataset runs. Problems of the whole file (not JSON, not UTF-8, duplicate keys) still stop the
    dataset: then no entry can be trusted."""
    return Document(id=doc_id, dataset=dataset, image_path=image_path, source=source, error=message)


def document_from_entry(
    entry: Any,
    *,
    doc_id: str,
    image_path: Path,
    dataset: str,
    source: str,
    where: str,
    extra_keys: tuple[str, ...] = (),
) -> Document:
    """Check one ground-truth entry (formats 1 and 4) and build its :class:`Document`.

    ``where`` prefixes error messages (``"data/ground_truth.json, entry 'doc_001.png'"``). ``full_text`` may be
    absent (a fields-only document) but must be a string when present; ``fields`` and ``schema`` must be objects,
    ``thresholds`` must map registered metric names to numbers, ``tags`` must be a list of strings, ``tasks`` a list
    of downstream tasks (see :func:`_check_tasks`). Keys that look
    like a misspelt known key (``threshold``, ``full-text``) are errors; other extra keys are ignored (metadata).
    The image is not looked at here: :func:`finish` checks every document's image, once. A malformed entry gives a
    document whose test errors with the problem (:func:`entry_error`); the other entries load.
    """
    try:
        return _document_from_entry(entry, doc_id=doc_id, image_path=image_path, dataset=dataset, source=source,
                                    where=where, extra_keys=extra_keys)
    except DatasetError as exc:
        return entry_error(doc_id, str(exc), dataset=dataset, source=source, image_path=image_path)


def _document_from_entry(entry: Any, *, doc_id: str, image_path: Path, dataset: str, source: str, where: str,
                         extra_keys: tuple[str, ...]) -> Document:
    if not isinstance(entry, Mapping):
        raise DatasetError(f"{where}: an entry must be an object with 'full_text', got {_type_name(entry)}.")
    known = ENTRY_KEYS + extra_keys
    for key in entry:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.75)
            if close:
                raise DatasetError(f"{where}: unknown key {key!r}; did you mean {close[0]!r}?")
    text = entry.get("full_text")
    if text is not None and not isinstance(text, str):
        raise DatasetError(f"{where}: 'full_text' must be a string, got {_type_name(text)}.")
    fields = entry.get("fields")
    if fields is not None and not isinstance(fields, Mapping):
        raise DatasetError(f"{where}: 'fields' must be an object of field name to value, got {_type_name(fields)}.")
    thresholds = _check_thresholds(entry["thresholds"], where) if entry.get("thresholds") is not None else {}
    tags = entry.get("tags")
    if tags is None:
        tags = []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise DatasetError(f"{where}: 'tags' must be a list of strings, got {json.dumps(tags, ensure_ascii=False)}.")
    schema = _check_schema(entry["schema"], where) if entry.get("schema") is not None else None
    facts = _check_facts(entry["facts"], where) if entry.get("facts") is not None else ()
    tasks = _check_tasks(entry["tasks"], where) if entry.get("tasks") is not None else ()
    return Document(
        id=doc_id,
        dataset=dataset,
        image_path=image_path,
        reference_text=text,
        fields=None if fields is None else dict(fields),
        thresholds=thresholds,
        tags=tuple(tags),
        schema=schema,
        source=source,
        facts=facts,
        tasks=tasks,
    )


TASK_KEYS = ("type", "reference")
"""The keys of one downstream task in a ground-truth entry's ``tasks`` list."""

_TASK_REFERENCE_SHAPES = {
    "extraction": "an object of field name to value with at least one field",
    "qa": "{\"answer\": ...} with a string, or a list of accepted strings",
    "classification": "{\"class\": ...} with a string or number",
}


def _check_tasks(value: Any, where: str) -> tuple[dict[str, Any], ...]:
    """A document's ``tasks``: a list of ``{"type": ..., "reference": {...}}`` downstream tasks.

    The reference is the specification's ground-truth dict of the task: the fields (``extraction``), ``{"answer":
    ...}`` (``qa``; a list of accepted answers works too) or ``{"class": ...}`` (``classification``). A task of
    another type is kept as written: it scores as the specification says, a failure with ``error_type``
    ``"unknown_task_type"`` (:func:`pytest_ocrmetrics.metrics.downstream.downstream_task`).
    """
    if not isinstance(value, list):
        raise DatasetError(f"{where}: 'tasks' must be a list of task objects like "
                           f"{{\"type\": \"qa\", \"reference\": {{\"answer\": \"42\"}}}}, got {_type_name(value)}.")
    tasks = []
    for number, task in enumerate(value, start=1):
        at = f"{where}, task {number}"
        if not isinstance(task, Mapping):
            raise DatasetError(f"{at}: a task must be an object with 'type' and 'reference', got {_type_name(task)}.")
        for key in task:
            if key not in TASK_KEYS:
                close = difflib.get_close_matches(str(key), TASK_KEYS, n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}?" if close else "a task has only 'type' and 'reference'."
                raise DatasetError(f"{at}: unknown key {key!r}; {hint}")
        kind = task.get("type")
        if not isinstance(kind, str) or not kind:
            raise DatasetError(f"{at}: 'type' must be a task name (extraction, qa or classification), "
                               f"got {_type_name(kind)}.")
        reference = task.get("reference")
        shape = _TASK_REFERENCE_SHAPES.get(kind)
        problem = None if shape is None else _task_reference_problem(kind, reference)
        if problem is not None:
            raise DatasetError(f"{at}: the {kind!r} task's 'reference' must be {shape}, got {problem}.")
        tasks.append({"type": kind, "reference": dict(reference) if isinstance(reference, Mapping) else reference})
    return tuple(tasks)


def _task_reference_problem(kind: str, reference: Any) -> str | None:
    """What is wrong with a known task's reference (for the error message), or None when it is usable."""
    if not isinstance(reference, Mapping):
        return "nothing" if reference is None else _type_name(reference)
    if kind == "extraction":
        return None if reference else "an empty object"
    key = "answer" if kind == "qa" else "class"
    if key not in reference:
        close = difflib.get_close_matches(key, [str(k) for k in reference], n=1, cutoff=0.6)
        return f"{close[0]!r} instead of {key!r}" if close else f"an object without {key!r}"
    answer = reference[key]
    if kind == "qa":
        ok = isinstance(answer, str) or (isinstance(answer, list) and bool(answer)
                                         and all(isinstance(a, str) for a in answer))
    else:
        ok = isinstance(answer, (str, int, float)) and not isinstance(answer, bool)
    return None if ok else f"{key!r} {_type_name(answer)}"


def _check_facts(value: Any, where: str) -> tuple[Any, ...]:
    """A document's ``facts``: a list of olmOCR-bench fact objects (``id``, ``type`` and the type's fields; ``pdf``
    and ``page`` are not needed), see :mod:`pytest_ocrmetrics.metrics.facts`."""
    from pytest_ocrmetrics.metrics.facts import FactError, parse_fact

    if not isinstance(value, list):
        raise DatasetError(f"{where}: 'facts' must be a list of fact objects, got {_type_name(value)}.")
    facts = []
    for number, data in enumerate(value, start=1):
        try:
            facts.append(parse_fact(data, source=f"{where}, fact {number}", group="facts", require_location=False))
        except FactError as exc:
            raise DatasetError(str(exc)) from None
    ids = [fact.id for fact in facts]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise DatasetError(f"{where}: fact id {duplicate!r} is used twice; ids must be unique.")
    return tuple(facts)


def finish(
    documents: list[Document],
    *,
    name: str,
    root: Path,
    format: str,
    skipped: list[SkippedEntry] | tuple[SkippedEntry, ...] = (),
    duplicate_hint: str = "",
) -> Dataset:
    """Sort documents by id, refuse duplicate ids, check each image (:func:`image_error`), build the :class:`Dataset`.

    A document whose image is missing, leads outside ``root`` or is not an image keeps loading: it gets ``error``
    and only its test errors, the rest of the dataset runs.
    """
    check = _ImageChecker(root)
    documents = sorted(
        (document if document.error is not None or document.image_path is None
         or (error := check(document.image_path, document.source)) is None
         else replace(document, error=error)
         for document in documents),
        key=lambda d: d.id,
    )
    for previous, current in zip(documents, documents[1:]):
        if previous.id == current.id:
            raise DatasetError(
                f"{current.source}: document {current.id!r} appears twice (also {previous.source}){duplicate_hint}; "
                "each image may have one ground-truth entry."
            )
    return Dataset(name=name, root=root, format=format, documents=tuple(documents), skipped=tuple(skipped))


def closest_existing_path(path: Path) -> Path | None:
    """For a ``path`` that does not exist: the existing path it most likely meant, or None when no name is close.

    The first part of ``path`` that does not exist is compared with the names in the folder above it
    (``example_suites/receipt/data`` → ``example_suites/receipts/data``, or ``example_suites/receipts`` when the
    rest does not exist under it either). Relative paths stay relative, as typed.

    >>> closest_existing_path(Path("/no-such-folder-here/x")) is None
    True
    """
    parts = path.parts
    if not parts:
        return None
    depth = len(parts) - 1
    while depth > 0 and not Path(*parts[:depth]).is_dir():
        depth -= 1
    folder = Path(*parts[:depth]) if depth else Path(".")
    try:
        with os.scandir(folder) as entries:
            names = [entry.name for entry, _ in zip(entries, range(10_000))]  # a huge folder: its first 10,000
    except OSError:
        return None
    close = difflib.get_close_matches(parts[depth], names, n=1, cutoff=0.6)
    if not close:
        return None
    guess = folder / close[0] if depth else Path(close[0])
    rest = parts[depth + 1:]
    return guess.joinpath(*rest) if rest and guess.joinpath(*rest).exists() else guess
