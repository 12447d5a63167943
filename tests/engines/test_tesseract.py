"""The tesseract engine: real runs on the shared data, and a fake binary for environment, timeout and errors."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import unicodedata
from pathlib import Path

import pytest

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineError, EngineOptionError, EngineUnavailable
from pytest_ocrmetrics.engines.registry import default_registry
from pytest_ocrmetrics.engines.tesseract import TesseractEngine, parse_tsv, text_from_data

pytest.importorskip("pytesseract", reason='pip install "pytest-ocrmetrics[tesseract]"')

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="the fake tesseract binary is a shell script")


def cer(reference: str, hypothesis: str) -> float:
    from rapidfuzz.distance import Levenshtein

    reference, hypothesis = unicodedata.normalize("NFC", reference), unicodedata.normalize("NFC", hypothesis)
    return Levenshtein.distance(reference, hypothesis) / max(len(reference), 1)


def create(options: dict[str, str] | None = None, arg: str = "") -> TesseractEngine:
    try:
        engine = default_registry(entry_points=False).create("tesseract" + (f":{arg}" if arg else ""), options or {})
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    assert isinstance(engine, TesseractEngine)
    return engine


@pytest.fixture(scope="module")
def tesseract() -> TesseractEngine:
    return create()


def page(shared_data: Path, name: str, dataset: str = "ocr_pages_lines") -> Document:
    from pytest_ocrmetrics.datasets import load_dataset

    return next(d for d in load_dataset(shared_data / dataset) if d.id == name)


def test_phototest_comes_back_nearly_perfect_with_tesseracts_layout(tesseract: TesseractEngine, shared_data: Path) -> None:
    document = page(shared_data, "page-tesseract-phototest.tif")
    output = tesseract.recognize(document)
    assert cer(document.reference_text or "", output.text) < 0.01
    assert "of file format.\n\nThe quick brown dog" in output.text  # the paragraph break of Tesseract's own output
    assert output.engine == "tesseract" and output.elapsed_s > 0
    assert output.words is not None and len(output.words) == len(output.text.split())
    first = output.words[0]
    assert first.text == "This" and first.box is not None and first.box[0] < first.box[2] and first.box[1] < first.box[3]
    confidences = [w.confidence for w in output.words if w.confidence is not None]
    assert all(0 <= c <= 1 for c in confidences)
    assert output.confidence == pytest.approx(sum(confidences) / len(confidences))
    assert output.confidence > 0.8


def test_single_line_with_psm_7(shared_data: Path) -> None:
    engine = create({"psm": "7"})
    document = page(shared_data, "line-uw3-test-010001.bin.png")
    assert cer(document.reference_text or "", engine.recognize(document).text) < 0.05


def test_identity_has_versions_models_and_settings(shared_data: Path) -> None:
    engine = create({"psm": "6", "oem": "1", "config": "--dpi 300", "timeout": "30"})
    identity = json.loads(json.dumps(engine.identity()))
    assert identity["engine"] == "tesseract" and identity["tesseract"][0].isdigit()
    assert identity["lang"] == "eng" and len(identity["traineddata"]["eng"]) == 16
    assert (identity["psm"], identity["oem"], identity["config"]) == (6, 1, "--dpi 300")
    assert "timeout" not in identity  # does not change the output
    assert create({"lang": "deu"}).identity()["traineddata"].keys() == {"deu"}
    assert create(arg="deu+eng").identity()["lang"] == "deu+eng"


def test_unreadable_image_errors_the_document(tesseract: TesseractEngine, tmp_path: Path) -> None:
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"not an image")  # a PNG signature, then garbage: tesseract fails
    with pytest.raises(EngineError, match=r"tesseract failed on .*bad.png.* \(document 'bad.png'\)"):
        tesseract.recognize(Document("bad.png", "d", bad))
    with pytest.raises(EngineError, match="does not exist"):
        tesseract.recognize(Document("gone.png", "d", tmp_path / "gone.png"))


def test_a_truncated_image_is_one_sentence_not_a_decoding_crash(tesseract: TesseractEngine, tmp_path: Path) -> None:
    """A PNG cut off after its signature: Leptonica echoes the file's bytes into tesseract's error output, which
    pytesseract then fails to decode as UTF-8 (a UnicodeDecodeError with its traceback was the test's error)."""
    cut = tmp_path / "cut.png"
    cut.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(EngineError) as info:
        tesseract.recognize(Document("cut.png", "d", cut))
    assert str(info.value) == (f"tesseract failed on {str(cut)!r} (document 'cut.png'): it starts like a PNG file "
                               "but cannot be decoded (damaged, or a variant the decoder does not support)")


def test_missing_language_data_names_the_package(tesseract: TesseractEngine) -> None:
    with pytest.raises(EngineUnavailable, match=r"'zzz_test' is not installed .*apt-get install tesseract-ocr-zzz-test"):
        default_registry(entry_points=False).create("tesseract", {"lang": "eng+zzz_test"})


@pytest.mark.parametrize(("options", "expected"), [
    ({"psm": "14"}, "tesseract.psm must be a whole number 0..13"),
    ({"oem": "x"}, "tesseract.oem must be a whole number 0..3"),
    ({"timeout": "soon"}, "tesseract.timeout must be a number of seconds >= 0"),
    ({"timeout": "-1"}, "tesseract.timeout must be a number of seconds >= 0"),
    ({"config": "-c 'unbalanced"}, "cannot be split into arguments"),
])
def test_bad_settings(options: dict[str, str], expected: str) -> None:
    with pytest.raises(EngineOptionError, match=expected):  # checked before the binary is looked for
        default_registry(entry_points=False).create("tesseract", {"cmd": "/nonexistent/tesseract", **options})


def test_missing_binary_gives_the_install_command() -> None:
    with pytest.raises(EngineUnavailable) as info:
        TesseractEngine(cmd="/nonexistent/tesseract")
    assert "apt-get install tesseract-ocr" in str(info.value) and "brew install tesseract" in str(info.value)


def test_missing_pytesseract_gives_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pytesseract", None)
    with pytest.raises(EngineUnavailable, match=r'pip install "pytest-ocrmetrics\[tesseract\]"'):
        TesseractEngine()


# -- a fake binary: what the subprocess sees, and timeouts -----------------------------------------------------------
FAKE = """#!/bin/sh
case "$1" in
  --version) echo "tesseract 9.8.7"; exit 0;;
  --list-langs) echo 'List of available languages in "{tessdata}" (1):'; echo eng; exit 0;;
  --tessdata-dir) echo "List of available languages in \\"$2\\" (1):"; echo eng; exit 0;;
esac
{sleep}
printf 'level\\tpage_num\\tblock_num\\tpar_num\\tline_num\\tword_num\\tleft\\ttop\\twidth\\theight\\tconf\\ttext\\n' > "$2.tsv"
printf '5\\t1\\t1\\t1\\t1\\t1\\t10\\t20\\t30\\t40\\t91.25\\tOMP=%s\\n' "$OMP_THREAD_LIMIT" >> "$2.tsv"
printf '5\\t1\\t1\\t1\\t1\\t2\\t50\\t20\\t30\\t40\\t-1\\t \\n' >> "$2.tsv"
printf '5\\t1\\t1\\t1\\t2\\t1\\t10\\t70\\t30\\t40\\t-1\\tnoconf\\n' >> "$2.tsv"
"""


def fake_tesseract(tmp_path: Path, sleep: str = "") -> str:
    (tmp_path / "tessdata").mkdir()
    (tmp_path / "tessdata" / "eng.traineddata").write_bytes(b"fake model")
    script = tmp_path / "tesseract"
    script.write_text(FAKE.format(tessdata=tmp_path / "tessdata", sleep=sleep), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.fixture
def image(tmp_path: Path) -> Document:
    path = tmp_path / "x.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n any bytes: the fake binary does not decode them")
    return Document("x.png", "d", path)


@posix_only
def test_subprocess_runs_with_omp_thread_limit_1(tmp_path: Path, image: Document, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    engine = TesseractEngine(cmd=fake_tesseract(tmp_path))
    output = engine.recognize(image)
    assert output.text == "OMP=1\nnoconf"
    assert "OMP_THREAD_LIMIT" not in os.environ  # only the subprocess got it
    assert [w.confidence for w in output.words or ()] == [0.9125, None]
    assert output.confidence == pytest.approx(0.9125)  # words without a confidence (-1) do not count
    assert engine.identity()["tesseract"] == "9.8.7"
    assert engine.identity()["traineddata"] == {"eng": hashlib.sha256(b"fake model").hexdigest()[:16]}
    import pytesseract

    assert pytesseract.pytesseract.tesseract_cmd == "tesseract"  # the swap is undone after the call


@posix_only
def test_tessdata_dir_in_config_is_where_languages_and_models_are_found(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "eng.traineddata").write_bytes(b"other model")
    engine = TesseractEngine(cmd=fake_tesseract(tmp_path), config=f"--tessdata-dir {other}")
    assert engine.tessdata == str(other)
    assert engine.identity()["traineddata"] == {"eng": hashlib.sha256(b"other model").hexdigest()[:16]}


def test_two_different_languages_are_refused() -> None:
    with pytest.raises(EngineOptionError, match="tesseract got two languages"):
        default_registry(entry_points=False).create("tesseract:deu", {"lang": "eng"})


@posix_only
def test_an_explicit_omp_thread_limit_is_respected(tmp_path: Path, image: Document, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_THREAD_LIMIT", "3")
    assert TesseractEngine(cmd=fake_tesseract(tmp_path)).recognize(image).text.startswith("OMP=3")


@posix_only
def test_timeout_errors_the_document(tmp_path: Path, image: Document) -> None:
    engine = default_registry(entry_points=False).create(
        "tesseract", {"cmd": fake_tesseract(tmp_path, sleep="sleep 5"), "timeout": "0.3"})
    with pytest.raises(EngineError, match=r"tesseract took longer than 0.3 s on document 'x.png' and was stopped"):
        engine.recognize(image)


def test_text_from_data_follows_tesseracts_layout() -> None:
    rows = parse_tsv("\n".join([
        "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext",
        "1\t1\t0\t0\t0\t0\t0\t0\t100\t100\t-1\t",
        "5\t1\t1\t1\t1\t1\t0\t0\t1\t1\t90\tone",
        "5\t1\t1\t1\t1\t2\t0\t0\t1\t1\t90\ttwo",
        "5\t1\t1\t1\t2\t1\t0\t0\t1\t1\t90\tthree",
        "5\t1\t1\t2\t1\t1\t0\t0\t1\t1\t90\tfour",
        "5\t1\t2\t1\t1\t1\t0\t0\t1\t1\t95\t  ",
        "5\t1\t3\t1\t1\t1\t0\t0\t1\t1\t95\tfive",
        "5\t1\t3\t1\t1\t2\t0\t0\t1\t1\t-1",
    ]))
    assert rows["conf"][-1] == -1.0 and rows["text"][-1] == ""
    assert text_from_data(rows) == "one two\nthree\n\nfour\n\nfive"
    assert text_from_data(parse_tsv("")) == ""


# -- temporary files (issue 20 A16) ------------------------------------------------------------------------------------
@posix_only
def test_image_copies_and_pytesseracts_files_go_to_the_engines_folder_removed_by_close(
        tmp_path: Path, image: Document) -> None:
    log = tmp_path / "args.txt"
    engine = TesseractEngine(cmd=fake_tesseract(tmp_path, sleep=f'echo "$1" > {log}; echo "$2" >> {log}'))
    assert engine._temp_dir is None  # nothing made before the first page
    engine.recognize(image)
    folder = engine.temp_dir
    assert folder.name.startswith("ocrmetrics-tesseract-")
    input_path, output_base = log.read_text().split()
    assert Path(input_path).parent == folder and Path(output_base).parent == folder  # copy and tess_* files
    assert Path(output_base).name.startswith("tess_")
    assert list(folder.iterdir()) == []  # each page's files are removed after it
    engine.close()
    assert not folder.exists()
    engine.recognize(image)  # a page after close() gets a new folder
    assert engine.temp_dir.is_dir()
    engine.close()


@posix_only
@pytest.mark.parametrize("failure", ["binary fails", "interrupted"])
def test_a_page_that_fails_midway_leaves_nothing_in_the_folder(
        tmp_path: Path, image: Document, monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    engine = TesseractEngine(cmd=fake_tesseract(tmp_path, sleep="echo broken >&2; exit 3"))
    if failure == "interrupted":  # Ctrl-C while Tesseract runs
        def interrupted(*args: object, **kwargs: object) -> str:
            assert len(list(engine.temp_dir.iterdir())) == 1  # the image copy
            raise KeyboardInterrupt

        monkeypatch.setattr(engine._pytesseract, "image_to_data", interrupted)
    with pytest.raises(EngineError if failure == "binary fails" else KeyboardInterrupt):
        engine.recognize(image)
    folder = engine.temp_dir
    assert list(folder.iterdir()) == []
    engine.close()
    assert not folder.exists()


EXIT_SCRIPT = """
import os, sys, threading, time
from pathlib import Path
from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.tesseract import TesseractEngine

cmd, image, marker, how = sys.argv[1:]
engine = TesseractEngine(cmd=cmd)  # made in the main thread, the pages run in another one, like the prefetcher's
thread = threading.Thread(target=engine.recognize, args=(Document("x.png", "d", Path(image)),), daemon=True)
thread.start()
while not os.path.exists(marker):
    time.sleep(0.02)
folder = engine._temp_dir  # made by the thread's page
print(folder, len(os.listdir(folder)), flush=True)
if how == "exit":
    sys.exit(0)  # the process ends while its page is inside Tesseract
thread.join()
"""


@posix_only
@pytest.mark.parametrize("how", ["exit", "sigterm"])
def test_the_folder_is_removed_at_exit_and_on_sigterm_without_close(tmp_path: Path, image: Document, how: str) -> None:
    """A process that ends without close() while a background thread's page is inside Tesseract: at interpreter
    exit (an xdist worker ending on Ctrl-C) or by SIGTERM (xdist or CI ending the workers)."""
    import signal
    import subprocess

    marker = tmp_path / "running"
    cmd = fake_tesseract(tmp_path, sleep=f"touch {marker}; sleep 60")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    process = subprocess.Popen([sys.executable, "-c", EXIT_SCRIPT, cmd, str(image.image_path), str(marker), how],
                               stdout=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        name, files = process.stdout.readline().split()  # type: ignore[union-attr]
        folder = Path(name)
        assert int(files) >= 2  # the image copy and pytesseract's files are in the folder
        if how == "sigterm":
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the fake binary's sleep
        except OSError:
            pass
    assert process.returncode == (-signal.SIGTERM if how == "sigterm" else 0)  # still ended by the signal
    assert not folder.exists()
