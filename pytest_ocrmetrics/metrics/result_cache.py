"""Where metric code keeps results that are expensive to compute and never change for the same input.

The math facts' equation layouts (:mod:`pytest_ocrmetrics.metrics.facts.math_layout`) take a headless browser to
compute; kept here, a second run starts none. The plugin points this at its output cache's folder at the start of
each session (``--ocr-cache-dir``, else inside pytest's cache; nothing under ``--ocr-no-cache``), so the results
live, and are cleared, with the engine outputs. A light module (standard library only): setting the folder imports
none of the code that uses it.

>>> use_folder("/tmp/ocr-cache/outputs")
>>> folder()
(PosixPath('/tmp/ocr-cache/outputs'), False)
>>> use_folder(None)
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["use_folder", "folder"]

_FOLDER: Path | None = None
_REFRESH = False


def use_folder(path: Path | str | None, *, refresh: bool = False) -> None:
    """Keep such results under ``path`` from now on in this process (None: in memory only).

    Args:
        path: the folder (each kind of result takes a sub-folder of its own, created when first written), or None.
        refresh: read nothing stored, write every result again (``--ocr-refresh-cache``).
    """
    global _FOLDER, _REFRESH
    _FOLDER = None if path is None else Path(path)
    _REFRESH = refresh


def folder() -> tuple[Path | None, bool]:
    """The folder set by :func:`use_folder` and whether stored results are to be ignored.

    Returns:
        ``(folder, refresh)``: the folder (None when none is set) and True when stored results are to be ignored.
    """
    return _FOLDER, _REFRESH
