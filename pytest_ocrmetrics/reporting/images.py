"""Finding a run file's page images on this machine, wherever the run was made: :class:`ImageFinder`.

A run file records each document's image relative to its dataset's folder (``images/doc_001.png``) and, once per
dataset, where that folder was on the machine that ran (``datasets[name].root``). The HTML report and
``ocrmetrics serve --run`` look for the image, in this order:

1. under ``--image-root DIR``: ``DIR/<image>``, ``DIR/<dataset name>/<image>`` (DIR is the checkout: the default
   dataset name is the path relative to pytest's rootdir) and ``DIR/<recorded folder's name>/<image>``;
2. in the recorded folder (the same machine, or the same paths);
3. next to the run file: ``<run file's folder>/<image>`` and ``<run file's folder>/<dataset name>/<image>`` (the
   current directory when no run file is known).

An absolute path (a run file written before 0.2, or an image outside its dataset folder) is tried as it is, then its
tails under ``--image-root`` (``DIR/data/images/a.png``, ``DIR/images/a.png``, ``DIR/a.png``, longest first).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

__all__ = ["ImageFinder"]


def _relative_parts(text: str) -> tuple[str, ...] | None:
    """``text``'s parts when it is a relative path that stays inside the folder it is joined to, else None."""
    path = PurePosixPath(text.replace("\\", "/"))
    if path.is_absolute() or not path.parts or ".." in path.parts:
        return None
    return tuple(p for p in path.parts if p != ".")


@dataclass(frozen=True)
class ImageFinder:
    """Where to look for a run's page images (see the module docstring for the order).

    >>> finder = ImageFinder(image_root=Path("/new"), dataset_roots={"scans": "/ci/checkout/data"},
    ...                      run_folder=Path("/downloads"))
    >>> [p.as_posix() for p in finder.candidates("images/a.png", "scans")]   # doctest: +NORMALIZE_WHITESPACE
    ['/new/images/a.png', '/new/scans/images/a.png', '/new/data/images/a.png', '/ci/checkout/data/images/a.png',
     '/downloads/images/a.png', '/downloads/scans/images/a.png']
    """

    image_root: Path | None = None
    dataset_roots: Mapping[str, str] = field(default_factory=dict)
    run_folder: Path | None = None

    @classmethod
    def for_run(cls, run: Mapping[str, Any], *, image_root: str | os.PathLike[str] | None = None,
                run_folder: str | os.PathLike[str] | None = None) -> ImageFinder:
        """The finder for ``run`` (a run file's dict): its ``datasets`` roots, ``image_root`` (``--image-root``) and
        the run file's folder."""
        datasets = run.get("datasets")
        roots = {str(name): str(entry["root"]) for name, entry in (datasets.items() if isinstance(datasets, Mapping)
                                                                    else ())
                 if isinstance(entry, Mapping) and isinstance(entry.get("root"), str)}
        return cls(image_root=None if image_root is None else Path(image_root), dataset_roots=roots,
                   run_folder=None if run_folder is None else Path(run_folder))

    def candidates(self, image: str, dataset: str) -> list[Path]:
        """Every place ``image`` (a record's ``image``) of dataset ``dataset`` may be, most likely first."""
        found: list[Path] = []
        recorded = self.dataset_roots.get(dataset)
        if Path(image).is_absolute() or PurePosixPath(image).is_absolute():
            found.append(Path(image))
            if self.image_root is not None:
                parts = Path(image).parts[1:]
                found += [self.image_root.joinpath(*parts[i:]) for i in range(len(parts))]
            return list(dict.fromkeys(found))
        relative = _relative_parts(image)
        if relative is None:  # leaves its folder ("../x.png"): only where the run put it
            return [Path(recorded) / image] if recorded else []
        named = _relative_parts(dataset) if dataset else None
        if self.image_root is not None:
            found.append(self.image_root.joinpath(*relative))
            if named:
                found.append(self.image_root.joinpath(*named, *relative))
            if recorded:
                found.append(self.image_root / Path(recorded).name / Path(*relative))
        if recorded:
            found.append(Path(recorded).joinpath(*relative))
        base = self.run_folder if self.run_folder is not None else Path.cwd()
        found.append(base.joinpath(*relative))
        if named and self.run_folder is not None:
            found.append(base.joinpath(*named, *relative))
        return list(dict.fromkeys(found))

    def find(self, image: str, dataset: str) -> Path | None:
        """The first of :meth:`candidates` that is a file, or None."""
        return next((path for path in self.candidates(image, dataset) if path.is_file()), None)

    def resolve(self, image: str, dataset: str) -> Path:
        """:meth:`find`'s file, else the most likely place (for a note saying that it was not found there)."""
        found = self.find(image, dataset)
        if found is not None:
            return found
        candidates = self.candidates(image, dataset)
        return candidates[0] if candidates else Path(image)
