"""Finding a dataset's format and loading it: :func:`load_dataset`."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

from pytest_ocrmetrics.datasets.base import (
    Dataset,
    DatasetError,
    DatasetLoader,
    closest_existing_path,
    not_regular_message,
)
from pytest_ocrmetrics.datasets.ground_truth_json import GROUND_TRUTH_FILE, GroundTruthJsonLoader
from pytest_ocrmetrics.datasets.jsonl import JsonlManifestLoader
from pytest_ocrmetrics.datasets.label_file import LabelFileLoader
from pytest_ocrmetrics.datasets.olmocr_bench import OlmocrBenchLoader
from pytest_ocrmetrics.datasets.omnidocbench import OmniDocBenchLoader
from pytest_ocrmetrics.datasets.sidecar import GT_SUFFIX, IMAGE_SUFFIXES, SidecarLoader

__all__ = ["LOADERS", "load_dataset", "detect_format", "dataset_name", "split_dataset_argument",
           "rebase_dataset_argument"]

LOADERS: tuple[DatasetLoader, ...] = (
    GroundTruthJsonLoader(),
    OlmocrBenchLoader(),
    OmniDocBenchLoader(),
    JsonlManifestLoader(),
    LabelFileLoader(),
    SidecarLoader(),
)
"""The built-in formats in detection order: the first whose ``detect`` says yes loads the path."""


def detect_format(path: str | os.PathLike[str]) -> DatasetLoader:
    """The loader for ``path`` (first match in :data:`LOADERS` order); :class:`DatasetError` when none matches.

    Example::

        >>> detect_format("example_suites/receipts/data").name   # doctest: +SKIP
        'ground_truth_json'
    """
    path = Path(path)
    if not path.exists():
        raise DatasetError(_missing_path_message(path))
    _refuse_special_file(path)
    for loader in LOADERS:
        if loader.detect(path):
            return loader
    raise DatasetError(_not_a_dataset_message(path))


def _refuse_special_file(path: Path) -> None:
    """A dataset path that is neither a folder nor a regular file (a FIFO, ``/dev/zero``) is refused before any
    loader looks at it: detecting a format reads a file's first bytes, which would block on a FIFO."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # the loaders say what is wrong with it
    if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
        raise DatasetError(not_regular_message(path, "the dataset path", mode))


def _missing_path_message(path: Path) -> str:
    """``PATH: dataset path does not exist.``, with the closest existing path when a name in it looks mistyped."""
    guess = closest_existing_path(path)
    return f"{path}: dataset path does not exist{'' if guess is None else f' (did you mean {str(guess)!r}?)'}."


_GROUND_TRUTH_KINDS = f"{GROUND_TRUTH_FILE}, *.jsonl, labels file or {GT_SUFFIX} sidecars"


def _not_a_dataset_message(path: Path) -> str:
    """Why ``path`` (which exists and no loader detected) is not a dataset, in one sentence that says which case it is.

    A folder inside a dataset (its ``images/``: pass the folder above it), an empty folder, a folder of images without
    ground truth and anything else each get their own sentence.
    """
    if path.is_dir():
        message = _not_a_dataset_folder_message(path)
        if message is not None:
            return message
    looked_for = "; ".join(loader.description for loader in LOADERS)
    return f"{path}: not a dataset; looked for {looked_for}."


def _not_a_dataset_folder_message(path: Path) -> str | None:
    """The sentence for a folder that is not a dataset (inside one, empty, holding datasets, images without ground
    truth), or None when it is none of these cases."""
    absolute = Path(os.path.abspath(path))
    parent = absolute.parent
    # the formats that describe a folder from its top level (sidecars would have been found here already)
    if absolute != parent and any(loader.detect(parent) for loader in LOADERS if loader.name != "sidecar"):
        shown = path.parent if path.name else parent  # as the user wrote it, unless that was "."
        return (f"{path}: looks like the {absolute.name}/ folder of the dataset {str(shown)!r}; "
                f"pass {str(shown)!r} instead.")
    try:
        entries = [p for p in path.rglob("*") if not any(part.startswith(".") for part in p.relative_to(path).parts)]
    except OSError as exc:
        return f"{path}: cannot list the folder ({exc.strerror or exc}); not a dataset."
    return _folder_contents_message(path, entries)


def _folder_contents_message(path: Path, entries: list[Path]) -> str | None:
    """What the folder's ``entries`` (not hidden) say it is instead of a dataset: empty, a folder of datasets, images
    without ground truth; None when they say none of these."""
    if not entries:
        return (f"{path}: the folder is empty; a dataset folder holds images and their ground truth "
                f"({_GROUND_TRUTH_KINDS}).")
    inner = sorted(p for p in entries if p.parent == path and p.is_dir()
                   and any(loader.detect(p) for loader in LOADERS))
    if inner:
        names = ", ".join(repr(str(p)) for p in inner[:3]) + (", ..." if len(inner) > 3 else "")
        one = "a dataset" if len(inner) == 1 else f"{len(inner)} datasets"
        return f"{path}: not a dataset itself but holds {one} ({names}); pass {'it' if len(inner) == 1 else 'one of them'}."
    images = sum(1 for p in entries if p.name.lower().endswith(IMAGE_SUFFIXES) and p.is_file())
    if images:
        noun = "image" if images == 1 else "images"
        return f"{path}: the folder has {images} {noun} but no ground truth ({_GROUND_TRUTH_KINDS}); add one of them."
    return None


def dataset_name(path: str | os.PathLike[str], rootdir: str | os.PathLike[str] | None = None) -> str:
    """The default name of the dataset at ``path``: the same on every machine and in every checkout.

    Inside ``rootdir`` (pytest's rootdir) it is the path relative to it with ``/`` separators, as pytest's node ids
    are: ``data/receipts`` in ``/home/me/checkoutA`` and in ``/ci/work/checkoutB`` alike. The rootdir itself is
    ``.``. Outside ``rootdir``, or without one, it is the folder's name (a file's name without its suffix): no part of
    the path above it, which differs from machine to machine. A name given explicitly (``--ocr-dataset=NAME=PATH``,
    ``name=`` of the ``ocr_dataset`` marker) replaces it.

    >>> dataset_name("/home/me/checkoutA/data/receipts", "/home/me/checkoutA")
    'data/receipts'
    >>> dataset_name("/ci/work/checkoutB/data/receipts", "/ci/work/checkoutB")
    'data/receipts'
    >>> dataset_name("/mnt/shared/receipts", "/ci/work/checkoutB"), dataset_name("/mnt/shared/receipts")
    ('receipts', 'receipts')
    """
    absolute = Path(os.path.abspath(path))
    if rootdir is not None:
        for root, candidate in ((Path(os.path.abspath(rootdir)), absolute),
                                (Path(os.path.realpath(rootdir)), Path(os.path.realpath(path)))):
            try:
                return candidate.relative_to(root).as_posix() or "."
            except ValueError:
                continue
    return (absolute.stem if absolute.is_file() else absolute.name) or absolute.as_posix()


def split_dataset_argument(text: str, base: str | os.PathLike[str] = ".") -> tuple[str | None, str]:
    """An ``--ocr-dataset`` value (or ``ocr_datasets`` line) split into its explicit name and its path.

    ``NAME=PATH`` names the dataset ``NAME`` (``receipts=data/receipts``): the text before the first ``=`` is a name
    when it is not empty and holds no path separator, and the whole value is not itself an existing path (relative
    to ``base``), so a folder whose name holds ``=`` still works as it did. Anything else is a path, named by
    :func:`dataset_name`.

    >>> split_dataset_argument("receipts=data/receipts"), split_dataset_argument("data/receipts")
    (('receipts', 'data/receipts'), (None, 'data/receipts'))
    >>> split_dataset_argument("data/a=b")
    (None, 'data/a=b')
    """
    name, sep, rest = text.partition("=")
    if (not sep or not name.strip() or not rest.strip() or "/" in name or os.sep in name
            or (os.altsep is not None and os.altsep in name) or (Path(base) / text).exists()):
        return None, text
    return name.strip(), rest


def rebase_dataset_argument(text: str, base: str | os.PathLike[str]) -> str:
    """``text`` (``PATH`` or ``NAME=PATH``) with its path joined to ``base`` (an ini file's folder), its name kept.

    >>> rebase_dataset_argument("receipts=data", "/repo"), rebase_dataset_argument("data", "/repo")
    ('receipts=/repo/data', '/repo/data')
    """
    name, path = split_dataset_argument(text, base)
    joined = os.path.join(os.fspath(base), path)
    return joined if name is None else f"{name}={joined}"


def load_dataset(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    limit: int | None = None,
    format: str | None = None,
    rootdir: str | os.PathLike[str] | None = None,
) -> Dataset:
    """Load the dataset at ``path``, detecting its format (see :data:`LOADERS` for the order).

    ``name`` defaults to :func:`dataset_name`: the path relative to ``rootdir`` (pytest's rootdir: the same in every
    checkout), else the folder's name (or the file's name without suffix when a file is given). ``limit`` keeps
    the first N documents after sorting by id (quick runs). ``format`` forces a loader by name instead of detecting.
    A missing image does not fail loading: that document gets ``error`` and its test errors. Malformed ground truth,
    a path that leaves the dataset folder, or a path that is no dataset raise :class:`DatasetError`.

    Example::

        >>> dataset = load_dataset("example_suites/receipts/data", limit=2)   # doctest: +SKIP
        >>> dataset.format, len(dataset), dataset.documents[0].id             # doctest: +SKIP
        ('ground_truth_json', 2, 'receipt_01.png')
    """
    path = Path(path)
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be a non-negative number of documents, got {limit}")
    if format is None:
        loader = detect_format(path)
    else:
        by_name = {loader.name: loader for loader in LOADERS}
        if format not in by_name:
            raise DatasetError(f"unknown dataset format {format!r}; valid formats: {', '.join(by_name)}.")
        if not path.exists():
            raise DatasetError(_missing_path_message(path))
        _refuse_special_file(path)
        loader = by_name[format]
    dataset = loader.load(path, name=name or dataset_name(path, rootdir))
    if limit is not None:
        dataset = replace(dataset, documents=dataset.documents[:limit])
    return dataset
