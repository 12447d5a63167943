"""What every dataset format shares: the :class:`Dataset` value, errors, and checks on ground-truth entries.

A dataset loader reads one on-disk format into a :class:`Dataset`: an immutable, id-sorted tuple of
:class:`~pytest_ocrmetrics.core.documents.Document` plus the entries it skipped. The helpers here are the single place that
turns a path written in a ground-truth file into an image path (refusing paths that leave the dataset folder), that
checks a ground-truth entry (``full_text``, ``fields``, ``thresholds``, ``tags``, ``schema``, ``facts``, ``tasks``),
and that checks every document's image (:func:`finish`: it must exist, stay inside the dataset folder once symbolic
links are followed, and be an image by its first bytes), so every format reports the same mistakes with the same
sentence. Every other file a dataset reads (``ground_truth.json``, a manifest, a label file, sidecars, fields files,
fact files) goes through :class:`DatasetFolder` too: it must be a regular file (a FIFO would block the run for ever,
``/dev/zero`` never ends) and stay inside the dataset folder, the same boundary as for images.
"""

from __future__ import annotations

import difflib
import errno
import json
import math
import os
import posixpath
import stat
import sys
import warnings
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any, Iterator, Mapping, Protocol, Sequence, runtime_checkable

from pytest_ocrmetrics.core.documents import Document, not_an_image_reason, sniff_image_format

__all__ = [
    "Dataset",
    "DatasetError",
    "DatasetFolder",
    "DatasetLoader",
    "SkippedEntry",
    "SkippedLog",
    "MAX_SKIPPED_LISTED",
    "capped_skipped",
    "ENTRY_KEYS",
    "closest_existing_path",
    "document_from_entry",
    "entry_error",
    "file_kind",
    "finish",
    "image_error",
    "json_error_message",
    "nested_too_deep",
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
    count: int = 1
    """How many entries this one stands for: above 1 it summarises the entries past the first
    :data:`MAX_SKIPPED_LISTED` of one file (``reason`` begins "and N more ... skipped")."""


MAX_SKIPPED_LISTED = 10
"""Skipped entries of one file listed (and warned) one by one; the rest become one summarising entry."""


class SkippedLog:
    """The entries one file's loading skips: the first :data:`MAX_SKIPPED_LISTED` in full (each warned with
    ``category`` when given), the rest only counted, then summarised by :meth:`entries` in one entry and one
    warning: a file of a million bad lines is a few lines of output, not a million (issue 20)."""

    def __init__(self, file: Path | str, *, noun: str = "line", category: type[Warning] | None = None) -> None:
        self.file, self.noun, self.category = str(file), noun, category
        self.listed: list[SkippedEntry] = []
        self.more = 0
        self._first_more = ""

    def __len__(self) -> int:
        return len(self.listed) + self.more

    def add(self, source: str, reason: str) -> None:
        """Skip the entry at ``source`` (``file:line``) for ``reason``."""
        if len(self.listed) < MAX_SKIPPED_LISTED:
            entry = SkippedEntry(source, reason)
            self.listed.append(entry)
            if self.category is not None:
                warnings.warn(f"{source}: {self.noun} skipped: {reason}", self.category, stacklevel=3)
            return
        if not self.more:
            self._first_more = f"the first at {source}: {reason}"
        self.more += 1

    def entries(self) -> list[SkippedEntry]:
        """The listed entries plus, past the cap, one entry (``count``) summarising the rest (warned once)."""
        if not self.more:
            return list(self.listed)
        reason = f"and {self.more:,} more {self.noun}{'s' if self.more != 1 else ''} skipped ({self._first_more})"
        if self.category is not None:
            warnings.warn(f"{self.file}: {reason}", self.category, stacklevel=2)
        return [*self.listed, SkippedEntry(self.file, reason, count=self.more)]


def capped_skipped(skipped: Sequence[SkippedEntry], file: Path | str, *, noun: str = "entry") -> list[SkippedEntry]:
    """``skipped`` with at most :data:`MAX_SKIPPED_LISTED` entries listed, the rest summarised in one (no warning):
    for loaders that collect single skipped entries without :class:`SkippedLog`."""
    log = SkippedLog(file, noun=noun)
    for entry in skipped:
        log.add(entry.source, entry.reason)
    return log.entries()


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
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))

# O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer (for ever); fstat then says
# what was opened. Regular files ignore the flag.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a sentence (``mode`` from :func:`os.stat`).

    >>> file_kind(stat.S_IFIFO), file_kind(stat.S_IFCHR)
    ('a FIFO (named pipe)', 'a character device')
    """
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def not_regular_message(path: Path | str, what: str, mode: int) -> str:
    """``PATH: WHAT is a FIFO (named pipe), not a regular file; ...`` (naming where a symbolic link leads)."""
    link = ""
    if os.path.islink(path):
        link = f"a symbolic link to {os.path.realpath(path)!r}, which is "
    return (f"{path}: {what} is {link}{file_kind(mode)}, not a regular file; "
            "replace it with a regular file (it is not opened: reading it could block the run or never end).")


def read_regular(path: Path | str) -> bytes:
    """The bytes of ``path`` if it is a regular file, never opening anything else in a way that blocks.

    It is opened with ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor (no window between a check
    and the open): a FIFO, a device, a socket or a folder raises :class:`NotRegularFileError` (an :class:`OSError`
    carrying the ``st_mode``); other failures raise the :class:`OSError` of the open.
    """
    descriptor = os.open(path, _OPEN_FLAGS)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(mode, path)
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read()


class NotRegularFileError(OSError):
    """:func:`read_regular` was given a path that is not a regular file; ``mode`` says what it is."""

    def __init__(self, mode: int, path: Path | str) -> None:
        super().__init__(f"{path} is {file_kind(mode)}, not a regular file")
        self.mode = mode


class DatasetFolder:
    """The dataset folder as a boundary: every file a dataset reads must be a regular file inside it.

    The folder and each sub-folder are resolved once (a dataset of many sidecar files costs one ``lstat`` per file in
    the usual case). :meth:`outside` is the one check of where a path leads that images
    (:func:`image_error`) and every other file of the dataset (:meth:`read_text`) share.

    Example::

        >>> folder = DatasetFolder(Path("data"))                            # doctest: +SKIP
        >>> folder.read_text(Path("data/page.gt.txt"), "ground-truth file")  # doctest: +SKIP
        'the page text'
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._resolved_root: str | None = None
        self._folders: dict[str, str] = {}

    def _root_prefix(self) -> str:
        if self._resolved_root is None:
            self._resolved_root = os.path.join(str(self.root.resolve(strict=True)), "")
        return self._resolved_root

    def resolved_folder_inside(self, folder: str) -> bool:
        """Whether ``folder`` (a path string) lies inside the dataset folder once resolved (cached per folder)."""
        resolved = self._folders.get(folder)
        if resolved is None:
            resolved = self._folders[folder] = os.path.join(str(Path(folder or ".").resolve(strict=True)), "")
        return resolved.startswith(self._root_prefix())

    def outside(self, path: Path) -> Path | None:
        """Where ``path`` leads once symbolic links are followed, when that is outside the dataset folder; else None.

        Raises :class:`OSError` for a missing file or a name too long and :class:`RuntimeError` for a link loop.
        """
        text = os.fspath(path)
        if not stat.S_ISLNK(os.lstat(text).st_mode) and self.resolved_folder_inside(os.path.split(text)[0]):
            return None
        resolved = path.resolve(strict=True)
        return None if os.path.join(str(resolved), "").startswith(self._root_prefix()) else resolved

    def file_error(self, path: Path, what: str) -> str | None:
        """Why ``path`` (a file of this dataset, ``what`` it is: ``"fields file"``) must not be read, else None:
        it cannot be looked at (missing, a name too long), is not a regular file, or leads outside the folder.
        One sentence starting with the path."""
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError) as exc:
            return f"{path}: cannot read {what}: {_reason(exc)}."
        if not stat.S_ISREG(mode):
            return not_regular_message(path, what, mode)
        try:
            leads = self.outside(path)
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop
            return f"{path}: {what} cannot be resolved ({exc})."
        if leads is not None:
            return (f"{path}: {what} is a symbolic link to {str(leads)!r}, outside the dataset folder "
                    f"{str(self.root)!r}; copy the file into the dataset folder (a dataset reads only its own files).")
        return None

    def read_text(self, path: Path, what: str = "ground-truth file") -> str:
        """:func:`read_text` for a file of this dataset: refused with :meth:`file_error`'s sentence first."""
        problem = self.file_error(path, what)
        if problem is not None:
            raise DatasetError(problem)
        return read_text(path, what)


def _reason(exc: BaseException) -> str:
    """An OS error as a phrase (``File name too long``), without the errno and path Python adds."""
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return "its name is too long for this system (File name too long)"
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


def read_text(path: Path, what: str = "ground-truth file", *, root: Path | DatasetFolder | None = None) -> str:
    """Read ``path`` as UTF-8 (a leading byte-order mark is dropped); a decoding error is a :class:`DatasetError`.

    Only a regular file is read (:func:`read_regular`): a FIFO or a device is a :class:`DatasetError` saying what it
    is. With ``root`` (the dataset folder), the file must also stay inside it (:meth:`DatasetFolder.file_error`).
    """
    if root is not None:
        folder = root if isinstance(root, DatasetFolder) else DatasetFolder(root)
        return folder.read_text(path, what)
    try:
        data = read_regular(path)
    except NotRegularFileError as exc:
        raise DatasetError(not_regular_message(path, what, exc.mode)) from None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: cannot read {what}: {_reason(exc)}.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: {what} is not valid UTF-8 (byte {exc.start}); save it as UTF-8.") from None


def jsonl_lines(path: Path, what: str, *, root: Path | DatasetFolder | None = None) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of each non-blank line of a JSON Lines file read with :func:`read_text`. Lines are
    split on ``"\\n"`` only: ``str.splitlines()`` would also split on U+2028 and friends, which JSON strings may hold.
    """
    for number, line in enumerate(read_text(path, what, root=root).split("\n"), start=1):
        if line.strip():
            yield number, line


def nested_too_deep(where: str) -> str:
    """The sentence for JSON nested deeper than Python's parser allows (it raises :class:`RecursionError`)."""
    return (f"{where} is nested deeper than Python's JSON parser allows (more than about "
            f"{sys.getrecursionlimit():,} levels of brackets); flatten it.")


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


def image_error(image_path: Path, root: Path | DatasetFolder | None = None, *, source: str = "") -> str | None:
    """The load-time error for a document's image (its test errors with it), else None.

    The image must exist and be a regular file (a FIFO is never opened: reading it would block the run); with
    ``root`` (the dataset folder), it must also stay inside ``root`` once symbolic links are followed
    (:meth:`DatasetFolder.outside`, the check every file of a dataset passes), and its first bytes must be those of an
    image (:func:`~pytest_ocrmetrics.core.documents.sniff_image_format`): a text file named ``x.png`` never reaches an
    engine (Tesseract would read it as a list of image paths and recognise the files it names). ``source`` (the
    ground-truth entry) is named in the fix.
    """
    unnameable = _unnameable(image_path)
    if unnameable:  # pathlib would only say it does not exist; os.lstat would raise and lose the whole dataset
        where = f" ({source})" if source else ""
        return f"image path {str(image_path)!r} cannot name a file on this system: it holds {unnameable}{where}"
    try:
        mode = os.stat(image_path).st_mode
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # ELOOP: a symbolic link loop
            return f"image {str(image_path)!r} does not exist"
        where = f" ({source})" if source else ""
        return f"image path {str(image_path)!r} cannot be looked at: {_reason(exc)}{where}"
    if not stat.S_ISREG(mode):
        return f"image {str(image_path)!r} is {file_kind(mode)}, not a file"
    if root is None:
        return None
    folder = root if isinstance(root, DatasetFolder) else DatasetFolder(root)
    where = f" in {source}" if source else ""
    try:
        resolved = folder.outside(image_path)
    except (OSError, RuntimeError) as exc:  # a symbolic link loop
        return f"image {str(image_path)!r} cannot be resolved ({exc})"
    if resolved is not None:
        return (f"image {str(image_path)!r} is a symbolic link to {str(resolved)!r}, outside the dataset folder "
                f"{str(folder.root)!r}; copy the image into the dataset folder or fix its path{where}")
    try:
        head = read_regular_head(image_path, 16)
    except NotRegularFileError as exc:  # replaced by a FIFO since the stat above
        return f"image {str(image_path)!r} is {file_kind(exc.mode)}, not a file"
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


_READ_FLAGS = _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0)


def read_regular_head(path: Path | str, size: int, *, follow: bool = True) -> bytes:
    """The first ``size`` bytes of ``path``, a regular file (else :class:`NotRegularFileError`), opened without
    blocking (see :func:`read_regular`); ``follow=False`` refuses a symbolic link (``ELOOP``)."""
    descriptor = os.open(path, _OPEN_FLAGS if follow else _READ_FLAGS)  # no file object: a third of open()'s cost
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(mode, path)
        return os.read(descriptor, size)
    finally:
        os.close(descriptor)


class _ImageChecker:
    """:func:`image_error` for the many images of one dataset folder, in a few system calls each.

    A regular file (not a symbolic link) whose folder lies inside ``root`` once resolved, and whose first bytes are
    an image's, is fine; every other image (missing, a link, a folder, a FIFO, outside, not an image, unreadable) is
    judged by :func:`image_error` itself, so the messages are its own. The resolved root and folders are looked up
    once (:class:`DatasetFolder`).
    """

    def __init__(self, root: Path | DatasetFolder) -> None:
        self.folder = root if isinstance(root, DatasetFolder) else DatasetFolder(root)
        self.root = self.folder.root

    def __call__(self, image_path: Path, source: str = "") -> str | None:
        if self._fine(os.fspath(image_path)):
            return None
        return image_error(image_path, self.folder, source=source)

    def _fine(self, path: str) -> bool:
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return False
            if not self.folder.resolved_folder_inside(os.path.split(path)[0]):
                return False
            head = read_regular_head(path, 16, follow=False)
        except (OSError, RuntimeError, ValueError):  # ValueError: a path no file can have (image_error says why)
            return False
        return sniff_image_format(head) is not None


# -- ground-truth entries --------------------------------------------------------------------------------------------
def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def _check_thresholds(value: Any, where: str) -> dict[str, float]:
    """The entry's ``thresholds``, each a number or a percentage string (``{"cer": "5%"}``), read by
    :func:`~pytest_ocrmetrics.metrics.thresholds.parse_limit` as every other limit is: ``{"cer": 5}`` (a percent typo) or
    ``{"field_f1": 90}`` raises :class:`DatasetError`, which errors this entry's document only."""
    from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message
    from pytest_ocrmetrics.metrics.thresholds import LimitError, parse_limit

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
            thresholds[str(metric)] = parse_limit(metric, limit, lambda v: f"{json.dumps(metric)}: {_json_limit(v)}",  # noqa: B023
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
    except RecursionError:  # a schema nested just below the parser's limit, which the schema checker walks again
        message = (f"{where}: the entry is nested too deeply to be checked (more than about "
                   f"{sys.getrecursionlimit():,} levels, Python's recursion limit); flatten it.")
        return entry_error(doc_id, message, dataset=dataset, source=source, image_path=image_path)


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
    folder: DatasetFolder | None = None,
) -> Dataset:
    """Sort documents by id, refuse duplicate ids, check each image (:func:`image_error`), build the :class:`Dataset`.

    A document whose image is missing, leads outside ``root`` or is not an image keeps loading: it gets ``error``
    and only its test errors, the rest of the dataset runs. ``folder`` is the loader's :class:`DatasetFolder` of
    ``root`` when it has one (its resolved folders are reused).
    """
    check = _ImageChecker(folder if folder is not None else root)
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
