"""Private temporary files and folders that must not outlive the process, even when it is stopped.

A ``finally`` removes a temporary file on every exception, KeyboardInterrupt included, but not when the process ends
without unwinding: at interpreter exit while a background thread (the prefetcher) is still inside a ``with`` block,
or on SIGTERM, whose default action ends the process on the spot (pytest-xdist's workers on Ctrl-C, a CI job's
cancel). Paths registered here are removed at interpreter exit (:mod:`atexit`) and on SIGTERM, by a handler that then
restores the default action and sends itself the signal again, so the process still ends the way it was told to.
The handler is installed only from the main thread and only where SIGTERM still has its default action (a handler the
application installed stays). SIGKILL cannot be handled: what it interrupts stays behind.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import threading
from pathlib import Path

__all__ = ["register", "unregister", "remove_registered", "install_sigterm_handler"]

_PATHS: dict[str, None] = {}  # insertion-ordered set of paths to remove
_LOCK = threading.Lock()
_ATEXIT = False
_SIGTERM = False


def register(path: str | Path) -> None:
    """Remove ``path`` (a file or a folder) at interpreter exit and on SIGTERM unless :func:`unregister`-ed first."""
    global _ATEXIT
    with _LOCK:
        _PATHS[os.fspath(path)] = None
        if not _ATEXIT:
            atexit.register(remove_registered)
            _ATEXIT = True
    install_sigterm_handler()


def unregister(path: str | Path) -> None:
    """Forget ``path`` (its owner removed it, or renamed it into place)."""
    with _LOCK:
        _PATHS.pop(os.fspath(path), None)


def remove_registered() -> None:
    """Remove every registered path now (no lock: this also runs inside the signal handler)."""
    for name in list(_PATHS):
        _PATHS.pop(name, None)
        if os.path.isdir(name) and not os.path.islink(name):
            shutil.rmtree(name, ignore_errors=True)
        else:
            try:
                os.unlink(name)
            except OSError:
                pass


def install_sigterm_handler() -> None:
    """Install the SIGTERM handler now if this is the main thread (signal handlers can only be set there): an owner
    whose paths are registered from a background thread (the prefetcher) calls this when it is created."""
    global _SIGTERM
    if _SIGTERM or threading.current_thread() is not threading.main_thread():
        return
    try:
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            _SIGTERM = True  # someone else handles SIGTERM (and is expected to exit through atexit)
            return
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError, AttributeError):  # no signals here (an embedded interpreter, Windows quirks)
        return
    _SIGTERM = True


def _on_sigterm(signum: int, frame: object) -> None:
    remove_registered()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
