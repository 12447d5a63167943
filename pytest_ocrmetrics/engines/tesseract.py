"""``tesseract``: Tesseract OCR through pytesseract.

One Tesseract run per document (``image_to_data``, the TSV output) gives word boxes and confidences, and the text is
rebuilt from the same rows: words joined by one space, lines by ``\\n``, a blank line between paragraphs. That is
exactly the layout of Tesseract's own text output (``image_to_string``; checked equal on every image of the shared
sample data, psm 3 and 6) at half the cost of running Tesseract twice.

Settings (``--ocr-engine-option tesseract.KEY=VALUE``):

``lang``      language(s), ``eng`` by default; ``deu+eng`` for several (each must be installed)
``psm``       page segmentation mode 0..13 (Tesseract's default is 3; 6 = one uniform block, 7 = one line)
``oem``       OCR engine mode 0..3
``timeout``   seconds per image before the run is killed and the document errors (default 120; 0 = none)
``config``    extra command-line arguments, e.g. ``--dpi 300 -c preserve_interword_spaces=1``
``cmd``       the tesseract binary (default: ``tesseract`` on PATH, or pytesseract's ``tesseract_cmd``)

Tesseract runs with ``OMP_THREAD_LIMIT=1`` unless the environment sets it: with OpenMP threads, Tesseract is several
times slower on small machines where pytest (or xdist) already keeps the cores busy. Word confidences are in 0..1;
the document's confidence is the mean over its words with a confidence (Tesseract reports -1 for none), or None when
it found no words.

Temporary files: the private copy of each image and pytesseract's own files (``tess_*``: its empty name file and
Tesseract's ``.tsv`` output) go into one folder per engine, ``$TMPDIR/ocrmetrics-tesseract-*``, made at the first
page and removed by :meth:`TesseractEngine.close`, at interpreter exit and on SIGTERM
(:mod:`pytest_ocrmetrics.core.cleanup`): a run stopped with Ctrl-C, also under pytest-xdist whose workers are ended while
their prefetch thread is inside Tesseract, leaves nothing behind (SIGKILL excepted).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from pytest_ocrmetrics.core import cleanup
from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import (
    EngineError,
    EngineOptionError,
    EngineSpec,
    EngineUnavailable,
    OcrOutput,
    Word,
    image_decode_problem,
    image_temp_file,
    read_image,
)
from pytest_ocrmetrics.engines.settings import float_setting, int_setting

__all__ = ["TesseractEngine", "SPEC", "check", "create", "parse_tsv", "text_from_data", "INSTALL_BINARY", "INSTALL_PACKAGE"]

INSTALL_BINARY = "apt-get install tesseract-ocr (Debian/Ubuntu) or brew install tesseract (macOS)"
INSTALL_PACKAGE = 'pip install "pytest-ocrmetrics[tesseract]"'
DEFAULT_TIMEOUT_S = 120.0

# pytesseract passes its module-level ``environ`` to every subprocess; we swap in a copy with OMP_THREAD_LIMIT for
# the duration of one call. The lock keeps two engines in one process from swapping at the same time.
_PYTESSERACT_LOCK = threading.Lock()


def _import_pytesseract() -> Any:
    try:
        import pytesseract  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise EngineUnavailable(f"the tesseract engine needs pytesseract: {INSTALL_PACKAGE}") from None
    return pytesseract


_TSV_COLUMNS = ("level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top", "width", "height",
                "conf", "text")


def parse_tsv(tsv: str) -> dict[str, list[Any]]:
    r"""Parse Tesseract's TSV output into columns (``conf`` as float, ``text`` as str, the rest as int).

    pytesseract's own ``Output.DICT`` truncates confidences to whole numbers; this keeps them exact.

    >>> parse_tsv("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
    ...           "5\t1\t1\t1\t1\t1\t10\t20\t30\t40\t96.5\tHello")["conf"]
    [96.5]
    """
    data: dict[str, list[Any]] = {column: [] for column in _TSV_COLUMNS}
    lines = [line for line in tsv.split("\n") if line.strip()]
    if not lines:
        return data
    header = lines[0].rstrip("\r").split("\t")
    for line in lines[1:]:
        cells = line.rstrip("\r").split("\t")
        cells += [""] * (len(header) - len(cells))  # Tesseract drops the last cell when the text is empty
        for column, cell in zip(header, cells):
            if column == "text":
                value: Any = cell
            elif column == "conf":
                value = float(cell) if cell else -1.0
            else:
                value = int(float(cell)) if cell else 0
            data.setdefault(column, []).append(value)
    return data


def text_from_data(data: Mapping[str, list[Any]]) -> str:
    """Rebuild Tesseract's text layout from ``image_to_data`` rows (``Output.DICT``).

    Word rows (level 5) with non-blank text are joined by one space per line; lines are separated by ``\\n`` and
    paragraphs (a new ``block_num``/``par_num``) by an empty line, as in Tesseract's own text output.

    >>> rows = {"level": [5, 5, 5], "text": ["Hello", "world", "Bye"], "block_num": [1, 1, 2],
    ...         "par_num": [1, 1, 1], "line_num": [1, 1, 1]}
    >>> text_from_data(rows)
    'Hello world\\n\\nBye'
    """
    parts: list[str] = []
    line: tuple[int, int, int] | None = None
    for i, text in enumerate(data["text"]):
        if int(data["level"][i]) != 5 or not str(text).strip():
            continue
        key = (int(data["block_num"][i]), int(data["par_num"][i]), int(data["line_num"][i]))
        if key != line:
            if line is not None:
                parts.append("\n\n" if key[:2] != line[:2] else "\n")
            line = key
        else:
            parts.append(" ")
        parts.append(str(text))
    return "".join(parts)


class TesseractEngine:
    """Tesseract through pytesseract; one instance per session.

    Example::

        >>> engine = TesseractEngine(lang="eng", psm=6)          # doctest: +SKIP
        >>> engine.recognize(document).words[0]                  # doctest: +SKIP
        Word(text='This', box=(36.0, 92.0, 96.0, 116.0), confidence=0.96)
    """

    name = "tesseract"
    concurrent = False

    def __init__(
        self,
        *,
        lang: str = "eng",
        psm: int | None = None,
        oem: int | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        config: str = "",
        cmd: str | None = None,
    ) -> None:
        self._pytesseract = _import_pytesseract()
        self.cmd = cmd or self._pytesseract.pytesseract.tesseract_cmd
        self.lang = lang
        self.psm = psm
        self.oem = oem
        self.timeout = timeout
        self.config = config
        try:
            self._config_args = shlex.split(config)
        except ValueError as exc:
            raise EngineOptionError(f"tesseract.config {config!r} cannot be split into arguments: {exc}") from None
        self._env = {**os.environ}
        self._env.setdefault("OMP_THREAD_LIMIT", "1")
        self.version = self._version()
        self.tessdata, installed = self._languages()
        missing = [code for code in lang.split("+") if code not in installed]
        if missing:
            packages = " ".join(f"tesseract-ocr-{code.replace('_', '-').lower()}" for code in missing)
            raise EngineUnavailable(
                f"tesseract language data {'+'.join(missing)!r} is not installed (installed: "
                f"{', '.join(sorted(installed)) or 'none'}): apt-get install {packages}"
            )
        self._traineddata: dict[str, str] | None = None
        self._temp_dir: str | None = None  # made at the first page (a fully cached run makes none)
        self._temp_lock = threading.Lock()
        cleanup.install_sigterm_handler()  # pages may run in the prefetch thread, where no handler can be set

    # -- setup -------------------------------------------------------------------------------------------------------
    def _run_binary(self, *args: str) -> str:
        try:
            completed = subprocess.run(
                [self.cmd, *args], capture_output=True, env=self._env, stdin=subprocess.DEVNULL, timeout=60,
            )
        except FileNotFoundError:
            raise EngineUnavailable(f"the tesseract binary {self.cmd!r} was not found: {INSTALL_BINARY}") from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EngineUnavailable(f"the tesseract binary {self.cmd!r} does not run ({exc}): {INSTALL_BINARY}") from None
        return (completed.stdout + completed.stderr).decode("utf-8", "replace")

    def _version(self) -> str:
        output = self._run_binary("--version")
        match = re.search(r"tesseract\s+v?(\d+\.\d+[^\s]*)", output, re.IGNORECASE)
        if not match:
            raise EngineUnavailable(f"{self.cmd!r} --version did not report a Tesseract version: {INSTALL_BINARY}")
        return match.group(1)

    def _languages(self) -> tuple[str | None, set[str]]:
        args = ["--list-langs"]
        if "--tessdata-dir" in self._config_args:
            index = self._config_args.index("--tessdata-dir")
            args = self._config_args[index:index + 2] + args
        output = self._run_binary(*args)
        match = re.search(r'languages in "([^"]*)"', output)
        lines = [line.strip() for line in output.splitlines()[1:] if line.strip()]
        return (match.group(1) if match else None), {line for line in lines if re.fullmatch(r"[\w.-]+", line)}

    def _command_config(self) -> str:
        parts = []
        if self.psm is not None:
            parts.append(f"--psm {self.psm}")
        if self.oem is not None:
            parts.append(f"--oem {self.oem}")
        if self.config:
            parts.append(self.config)
        return " ".join(parts)

    def identity(self) -> Mapping[str, Any]:
        """Engine, binary and pytesseract versions, languages with a hash of each ``.traineddata`` file, and every
        setting that changes the output (``timeout`` does not, so it is left out)."""
        if self._traineddata is None:
            hashes: dict[str, str] = {}
            for code in self.lang.split("+"):
                path = Path(self.tessdata or "") / f"{code}.traineddata"
                hashes[code] = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else "unknown"
            self._traineddata = hashes
        return {
            "engine": self.name,
            "tesseract": self.version,
            "pytesseract": str(getattr(self._pytesseract, "__version__", "unknown")),
            "lang": self.lang,
            "traineddata": dict(self._traineddata),
            "psm": self.psm,
            "oem": self.oem,
            "config": self.config,
        }

    # -- recognition -------------------------------------------------------------------------------------------------
    @property
    def temp_dir(self) -> Path:
        """This engine's folder for image copies and pytesseract's files (made on first use, removed by close())."""
        with self._temp_lock:
            if self._temp_dir is None or not os.path.isdir(self._temp_dir):
                self._temp_dir = tempfile.mkdtemp(prefix="ocrmetrics-tesseract-")
                cleanup.register(self._temp_dir)
            return Path(self._temp_dir)

    @contextmanager
    def _pytesseract_call(self, temp_dir: Path | None = None) -> Iterator[Any]:
        """pytesseract with this engine's environment, binary and temporary folder (module globals it reads, swapped
        under a lock for the duration of one call)."""
        module = self._pytesseract.pytesseract
        named_temporary_file = functools.partial(tempfile.NamedTemporaryFile, dir=temp_dir or self.temp_dir)
        with _PYTESSERACT_LOCK:
            saved = module.environ, module.tesseract_cmd, module.NamedTemporaryFile
            module.environ = {**os.environ, "OMP_THREAD_LIMIT": self._env["OMP_THREAD_LIMIT"]}
            module.tesseract_cmd, module.NamedTemporaryFile = self.cmd, named_temporary_file
            try:
                yield self._pytesseract
            finally:
                module.environ, module.tesseract_cmd, module.NamedTemporaryFile = saved

    def recognize(self, document: Document) -> OcrOutput:
        # the checked bytes (a text file named x.png would be read by tesseract as a list of image paths), given to
        # the binary as a private copy: exactly the bytes the output cache hashed, not re-encoded
        image_bytes = read_image(document)
        image = document.image_path or Path(document.id)
        with (image_temp_file(image_bytes, suffix=image.suffix, directory=self.temp_dir, prefix="image-") as copy,
              self._pytesseract_call(copy.parent) as pytesseract):
            start = time.perf_counter()
            try:
                data = parse_tsv(pytesseract.image_to_data(
                    str(copy), lang=self.lang, config=self._command_config(),
                    timeout=self.timeout or 0, output_type=pytesseract.Output.STRING,
                ))
            except pytesseract.TesseractNotFoundError:
                raise EngineUnavailable(f"the tesseract binary {self.cmd!r} was not found: {INSTALL_BINARY}") from None
            except pytesseract.TesseractError as exc:
                raise EngineError(
                    f"tesseract failed on {str(image)!r} (document {document.id!r}): "
                    f"{exc.message or f'exit status {exc.status}'}"
                ) from None
            except UnicodeDecodeError:  # pytesseract decoding an error output that is not UTF-8 (Leptonica
                # echoes a damaged image's bytes): what the file looked like says more than the decoder's complaint
                raise EngineError(
                    f"tesseract failed on {str(image)!r} (document {document.id!r}): "
                    f"{image_decode_problem(ValueError(), image_bytes)}"
                ) from None
            except RuntimeError as exc:
                if "timeout" in str(exc).lower():
                    raise EngineError(
                        f"tesseract took longer than {self.timeout:g} s on document {document.id!r} and was stopped; "
                        "raise tesseract.timeout"
                    ) from None
                raise EngineError(f"tesseract failed on document {document.id!r}: {exc}") from None
        elapsed = time.perf_counter() - start
        words: list[Word] = []
        confidences: list[float] = []
        for i, text in enumerate(data["text"]):
            if int(data["level"][i]) != 5 or not str(text).strip():
                continue
            conf = float(data["conf"][i])
            left, top = float(data["left"][i]), float(data["top"][i])
            box = (left, top, left + float(data["width"][i]), top + float(data["height"][i]))
            confidence = conf / 100.0 if conf >= 0 else None
            if confidence is not None:
                confidences.append(confidence)
            words.append(Word(str(text), box, confidence))
        return OcrOutput(
            text=text_from_data(data),
            engine=self.name,
            words=tuple(words),
            confidence=sum(confidences) / len(confidences) if confidences else None,
            elapsed_s=elapsed,
        )

    def close(self) -> None:
        """Remove this engine's temporary folder (a later page makes a new one)."""
        with self._temp_lock:
            folder, self._temp_dir = self._temp_dir, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
            cleanup.unregister(folder)


def check(arg: str | None, options: Mapping[str, str]) -> dict[str, Any]:
    """The :class:`TesseractEngine` arguments for ``tesseract[:LANG]`` and its settings, every value checked.

    Cheap (no binary run, pytesseract not imported), so it runs at startup: ``tesseract.psm=42`` is one usage error.
    Whether the binary and the languages are installed is found when the engine is created (its tests are skipped).
    """
    timeout = float_setting("tesseract", options, "timeout", DEFAULT_TIMEOUT_S, minimum=0, unit="seconds")
    lang_option = (options.get("lang") or "").strip()
    if arg and lang_option and arg != lang_option:
        raise EngineOptionError(f"tesseract got two languages: {arg!r} (tesseract:LANG) and {lang_option!r} "
                                "(tesseract.lang); give one")
    lang = lang_option or arg or "eng"
    if not re.fullmatch(r"[\w.-]+(\+[\w.-]+)*", lang):
        raise EngineOptionError(f"tesseract.lang must be language codes joined by '+', e.g. eng or deu+eng, got {lang!r}")
    config = options.get("config", "")
    try:
        shlex.split(config)
    except ValueError as exc:
        raise EngineOptionError(f"tesseract.config {config!r} cannot be split into arguments: {exc}") from None
    return {
        "lang": lang,
        "psm": int_setting("tesseract", options, "psm", None, minimum=0, maximum=13),
        "oem": int_setting("tesseract", options, "oem", None, minimum=0, maximum=3),
        "timeout": timeout,
        "config": config,
        "cmd": (options.get("cmd") or "").strip() or None,
    }


def create(arg: str | None, options: Mapping[str, str]) -> TesseractEngine:
    """Factory for ``--ocr-engine=tesseract`` (an argument after ``:`` is a language: ``tesseract:deu``)."""
    return TesseractEngine(**check(arg, options))


SPEC = EngineSpec(
    name="tesseract",
    factory=create,
    check=check,
    options={
        "lang": "language(s), e.g. eng (default), deu, deu+eng",
        "psm": "page segmentation mode 0..13 (6 = one block of text, 7 = one line)",
        "oem": "OCR engine mode 0..3",
        "timeout": f"seconds per image before it errors (default {DEFAULT_TIMEOUT_S:g}; 0 = no limit)",
        "config": "extra tesseract arguments, e.g. '--dpi 300 -c preserve_interword_spaces=1'",
        "cmd": "path of the tesseract binary (default: tesseract on PATH)",
    },
    description="Tesseract OCR (pytesseract): words, boxes and confidences from image_to_data",
    install_hint=f"{INSTALL_BINARY}; {INSTALL_PACKAGE}",
)
