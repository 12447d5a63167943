"""Files written whole or not at all: a cache entry is written to a temporary file beside it and renamed, so a reader
(another xdist worker, a later run) sees the old entry or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_bytes_atomic"]


def write_bytes_atomic(path: Path, data: bytes, *, prefix: str) -> None:
    """Write ``data`` to ``path`` atomically (its folder made first); the temporary file starts with ``prefix``.

    Args:
        path: the file to write.
        data: its whole content.
        prefix: the temporary file's name prefix (hidden: start it with a dot).

    Raises:
        OSError: the folder or the file could not be written; no temporary file is left behind.
    """
    tmp_name: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp_name, path)
        tmp_name = None
    finally:
        if tmp_name is not None:
            try:
                os.unlink(tmp_name)
            except OSError:
                pass
