"""A report write that is stopped midway leaves no hidden temporary file (issue 20 A16).

KeyboardInterrupt (and any exception) is handled by ``_write_atomic``'s own ``except BaseException``; SIGTERM ends the
process without unwinding, so the temporary file is registered with :mod:`pytest_ocrmetrics.core.cleanup`, whose handler
removes it and then lets the signal end the process. SIGKILL cannot be handled (documented, not tested).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from pytest_ocrmetrics.core import cleanup
from pytest_ocrmetrics.core.safe_text import write_lines_atomic

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def test_a_keyboard_interrupt_mid_write_removes_the_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")

    def pieces() -> Iterator[str]:
        yield "new part"
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report.json.")]  # being written
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_lines_atomic(target, pieces())
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    assert target.read_text(encoding="utf-8") == "old"
    # nothing of this write left registered (other tests' engines may hold folders of their own until exit)
    assert not [path for path in cleanup._PATHS if str(path).startswith(str(tmp_path))]


SIGTERM_SCRIPT = """
import os, signal, sys
from pytest_ocrmetrics.core.safe_text import write_lines_atomic

def pieces():
    yield "first part"
    os.kill(os.getpid(), signal.SIGTERM)  # the run is stopped while the report is being written
    yield "second part"

write_lines_atomic(sys.argv[1], pieces())
print("not reached", flush=True)
"""


@posix_only
def test_sigterm_mid_write_removes_the_temporary_file_and_still_ends_the_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    completed = subprocess.run([sys.executable, "-c", SIGTERM_SCRIPT, str(tmp_path / "report.json")],
                               capture_output=True, text=True, env=env, timeout=60)
    assert completed.returncode == -signal.SIGTERM, completed.stderr
    assert "not reached" not in completed.stdout
    assert list(tmp_path.iterdir()) == []  # neither the report nor its hidden temporary file


@posix_only
def test_an_applications_own_sigterm_handler_is_kept(tmp_path: Path) -> None:
    script = """
import signal, sys
from pytest_ocrmetrics.core import cleanup
seen = []
signal.signal(signal.SIGTERM, lambda *a: seen.append(1))
cleanup.register(sys.argv[1])
print(signal.getsignal(signal.SIGTERM).__name__)
"""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    path = tmp_path / "left.tmp"
    path.write_text("x")
    completed = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env,
                               timeout=60)
    assert completed.stdout.strip() == "<lambda>", completed.stderr
    assert not path.exists()  # removed at interpreter exit
