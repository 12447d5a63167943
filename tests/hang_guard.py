"""A guard for tests of calls that must never block (a FIFO opened for a blocking read waits for ever).

:func:`within` runs the call in a daemon thread and fails the test after ``seconds`` instead of hanging the suite
when the fix regresses; the FIFOs it is given are then opened for writing once, which wakes a reader blocked in
``open()`` so the thread ends too. It bounds a hang, it measures nothing: no timing assertion.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable, Iterable, TypeVar

import pytest

T = TypeVar("T")

HANG_SECONDS = 10.0


def within(call: Callable[[], T], *, fifos: Iterable[Path] = (), seconds: float = HANG_SECONDS) -> T:
    """``call()``'s result (or its exception, re-raised); the test fails when it has not returned after ``seconds``."""
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True, name="hang-guard")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:  # a reader blocked in open() returns (and reads end-of-file) once a writer came and went
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        thread.join(seconds)
        pytest.fail(f"still blocked after {seconds:g} s: a file that is not a regular file was opened for reading")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def make_fifo(path: Path) -> Path:
    """A FIFO (named pipe) at ``path``; skips where the system has none."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("this system has no FIFOs (os.mkfifo)")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path
