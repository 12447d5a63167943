"""The cyclic garbage collector paused while a long-lived heap is built.

Collecting a dataset's items, decoding a run file and the run-file commands (``compare``, ``report``, ``merge``)
each make many containers that hold no reference cycles and live until the work ends. While they are made, every few
hundred allocations start a collection, and the rarer full ones walk the whole growing heap again, finding nothing.
Reference counting still frees everything that is dropped; a cycle made meanwhile waits for the next collection
after the pause.
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, back on afterwards as it was (a block inside another leaves it off).

    >>> import gc
    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
