"""A run stopped midway leaves nothing in ``$TMPDIR`` and no hidden report file beside its reports (issue 20 A16).

The session runs Tesseract through a subclass that, on its second page, stops the run while that page's private
image copy (``engines.base.image_temp_file`` in the engine's folder) exists, after the first page went through the
binary (pytesseract's files): by Ctrl-C (SIGINT to the whole process group, as a terminal sends it, so xdist's
controller and workers all get it) or by SIGTERM to the whole group (a CI job being cancelled), with and without
``-n 2``, and once with the page in the prefetch thread instead of the main thread. Each session runs in its own
process group and its own ``$TMPDIR``; the test waits until every process of the group is gone, then asserts that
the ``$TMPDIR`` is empty. No assertion is about time: the waits only guard against a hang.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from tests.helpers.plugin import make_dataset
from tests.test_memory_bounds import blank_png

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups read from /proc")

# Tesseract, except that on doc_002 it records what its folder holds and then stops the run from inside the page
STOPPING_ENGINE = """
import os, signal, threading
from pathlib import Path
from pytest_ocrmetrics.engines.base import EngineSpec, image_temp_file, read_image
from pytest_ocrmetrics.engines.tesseract import TesseractEngine, check

SIGNAL = {"int": signal.SIGINT, "term": signal.SIGTERM}[os.environ["OCR_TEST_STOP"]]

class Stopping(TesseractEngine):
    name = "stopping"
    def recognize(self, document):
        if document.id == "doc_002.png":
            with image_temp_file(read_image(document), suffix=".png", directory=self.temp_dir, prefix="image-"):
                seen = sorted(p.name for p in self.temp_dir.iterdir())
                Path(os.environ["OCR_TEST_SEEN"]).write_text(
                    f"{threading.current_thread() is threading.main_thread()} {' '.join(seen)}\\n")
                os.killpg(os.getpgid(0), SIGNAL)
                # the signal is handled in the main thread: here (interrupting this wait) or while this prefetch
                # thread waits, so that it makes no file after the run was told to stop
                threading.Event().wait(120)
        return super().recognize(document)

def pytest_ocrmetrics_register_engines(registry):
    registry.register(EngineSpec("stopping", lambda arg, options: Stopping(**check(arg, options))))
"""


def _group_alive(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that still run (zombies excluded: they hold no files)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(entry.name))
    return alive


@pytest.fixture
def tesseract_ready() -> None:
    import importlib.util

    if shutil.which("tesseract") is None or importlib.util.find_spec("pytesseract") is None:
        pytest.skip("needs the tesseract binary and pytesseract")


@contextlib.contextmanager
def _ctrl_c_passed_on() -> Iterator[None]:
    """A child started here gets Ctrl-C's default disposition even when this process ignores it (a test run started
    in the background by a shell without job control inherits SIGINT ignored, and so would the child: it could not
    be interrupted, and the test would measure the shell, not the plugin). Only the main thread may set it."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)  # reset to SIG_DFL in the child by exec
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.usefixtures("tesseract_ready")
@pytest.mark.parametrize("stop", ["int", "term"], ids=["ctrl-c", "sigterm"])
@pytest.mark.parametrize("mode", ["main-thread", "prefetch-thread", "xdist-2"])
def test_a_stopped_run_leaves_no_temporary_files(pytester: pytest.Pytester, stop: str, mode: str) -> None:
    if mode == "xdist-2":
        pytest.importorskip("xdist")
    dataset = make_dataset(pytester.path)
    for number, name in enumerate(sorted(os.listdir(dataset / "images")), start=1):
        (dataset / "images" / name).write_bytes(blank_png(40 + number, 24))  # images Tesseract can read
    pytester.makeconftest(STOPPING_ENGINE)
    temp = pytester.path / "tmp"
    temp.mkdir()
    seen = pytester.path / "seen.txt"
    args = ["--ocr-dataset=invoices", "--ocr-engine=stopping", "--ocr-no-cache", "--ocr-json=run.json",
            "--ocr-html=report.html", "-p", "no:cacheprovider", "-p", "no:randomly"]
    args += {"main-thread": ["--ocr-concurrency=1"], "prefetch-thread": [], "xdist-2": ["--ocr-concurrency=1", "-n", "2"]}[mode]
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "TMPDIR": str(temp), "OCR_TEST_STOP": stop, "OCR_TEST_SEEN": str(seen),
           "PYTHONPATH": os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    with _ctrl_c_passed_on():
        process = subprocess.Popen([sys.executable, "-m", "pytest", *args], cwd=pytester.path, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=300)
        deadline = time.monotonic() + 120  # xdist's workers may end a moment after their controller
        while _group_alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group_alive(process.pid), output
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass

    main_thread, *files = seen.read_text().split()  # the stop came while the engine's files were there
    assert main_thread == {"main-thread": "True", "prefetch-thread": "False", "xdist-2": "True"}[mode]
    assert any(name.startswith("image-") for name in files), files
    if stop == "int":
        assert process.returncode == pytest.ExitCode.INTERRUPTED, output
        if mode == "main-thread":  # stopped in doc_002's test: the reports of the stopped run are written
            assert (pytester.path / "run.json").is_file() and (pytester.path / "report.html").is_file(), output
    else:
        assert process.returncode == -signal.SIGTERM, output
    assert sorted(p.name for p in temp.iterdir()) == [], output  # no image copy, no tess_* file, no folder
    hidden = [p.name for p in pytester.path.iterdir() if p.name.startswith(".")]
    assert hidden == [], hidden  # no half-written report
