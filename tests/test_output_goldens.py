"""Golden outputs: what a whole pytest run writes, recorded once and compared byte for byte (issue 24).

Each scenario is run through ``pytester`` with the ``replay:`` engine only (predictions written by this file, never a
live OCR engine), once serially and once with ``-n 2``, and its outputs are compared with the files in
``tests/goldens/<scenario>/``:

* ``run.json`` -- the ``--ocr-json`` run file,
* ``junit.xml`` -- ``--junitxml``,
* ``terminal.txt`` -- the exit status, then the terminal from the plugin's ``= OCR metrics =`` line to the end,
* ``failures.txt`` -- each failed or errored test's report (``--tb=short``: the assertion messages),
* ``report.md`` -- ``--ocr-markdown``.

Normalisation masks only what changes from run to run or machine to machine (see :func:`normalise_run_file`,
:func:`normalise_junit`, :func:`normalise_terminal`); everything else must be identical, so any real change of output
fails here. Under ``-n 2`` exactly one thing legitimately differs from the serial run: the order in which tests
*finish*, which decides the order of ``<testcase>`` elements in the JUnit XML and of the lines of pytest's short test
summary (pytest-xdist also adds a ``[gwN] ... -- Python ...`` line to each failure report, which
:func:`failure_messages` drops). For the ``-n 2`` run only, both the golden and the output get those two sorted
(:func:`xdist_order`) before comparing; the serial run is compared in its exact order. Everything else (run file,
Markdown, the OCR summary table, the assertion messages) must be the same with and without workers, against the same
golden file.

``OCRMETRICS_UPDATE_GOLDENS=1 pytest tests/test_output_goldens.py`` rewrites the files from the serial runs (the
``-n 2`` variants are skipped then; run once more without the variable to check them). See ``tests/goldens/README.md``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

GOLDENS = Path(__file__).resolve().parent / "goldens"
EXAMPLE_SUITES = Path(__file__).resolve().parents[1] / "example_suites"
UPDATE = os.environ.get("OCRMETRICS_UPDATE_GOLDENS") == "1"
ARTIFACTS = ("run.json", "junit.xml", "terminal.txt", "failures.txt", "report.md")
# the same options for every scenario: no plugin that reorders tests or writes a cache, short tracebacks (a long one
# shows the test's arguments, whose repr is cut at a length that depends on the temporary folder's)
COMMON = ["-p", "no:randomly", "-p", "no:cacheprovider", "--ocr-json=out/run.json", "--junitxml=out/junit.xml",
          "--ocr-markdown=out/report.md", "-rfE", "--tb=short"]

# a valid 1x1 PNG: the replay engine never decodes images, but a document's image must exist
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


# ----------------------------------------------------------------------------------------------------------------
# predictable imperfect OCR outputs
# ----------------------------------------------------------------------------------------------------------------

def corrupt(text: str, index: int) -> str:
    """A deterministic, imperfect reading of ``text``; which error depends on the document's position ``index``.

    Cycles through: exact, letter/digit confusions, a dropped word, case and spacing errors with an extra token, so
    that CER, WER, exact match and field metrics all get non-trivial values.
    """
    kind = index % 4
    if kind == 0:
        return text
    if kind == 1:
        return text.translate(str.maketrans({"O": "0", "l": "1", "S": "5", "京": "东"}))
    if kind == 2:
        words = text.split(" ")
        return " ".join(words[:1] + words[2:]) if len(words) > 2 else text[:-1]
    return text.replace("e", "E").replace(" ", "  ", 1) + " ~"


# ----------------------------------------------------------------------------------------------------------------
# scenarios: each writes its suite into ``root`` (pytester's folder) and returns the pytest arguments
# ----------------------------------------------------------------------------------------------------------------

def _copy_suite(name: str, root: Path) -> None:
    if not (EXAMPLE_SUITES / name).is_dir():
        pytest.skip(f"example suite {name!r} not found under {EXAMPLE_SUITES}")
    shutil.copytree(EXAMPLE_SUITES / name, root, dirs_exist_ok=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def receipts(root: Path, pytester: pytest.Pytester) -> list[str]:
    """example_suites/receipts: ground_truth.json with fields, tags and per-document thresholds."""
    _copy_suite("receipts", root)
    truth = json.loads((root / "data" / "ground_truth.json").read_text(encoding="utf-8"))
    for index, (name, entry) in enumerate(sorted(truth.items())):
        _write(root / "preds" / f"{Path(name).stem}.txt", corrupt(entry["full_text"], index))
    return ["--ocr-engine=replay:preds"]


def plates(root: Path, pytester: pytest.Pytester) -> list[str]:
    """example_suites/plates: a label file (ids with a sub-folder), Chinese plates, an empty reading."""
    _copy_suite("plates", root)
    lines = (root / "data" / "labels.tsv").read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        image, text = line.split("\t")
        reading = "" if index == 4 else corrupt(text, index)
        _write(root / "preds" / str(Path(image).with_suffix(".txt")), reading)
    return ["--ocr-engine=replay:preds"]


def pages(root: Path, pytester: pytest.Pytester) -> list[str]:
    """example_suites/pages: sidecar ground truth, a fields sidecar answered by a structured ``.json`` prediction."""
    _copy_suite("pages", root)
    for index, truth in enumerate(sorted((root / "data").glob("*.gt.txt"))):
        stem = truth.name.removesuffix(".gt.txt")
        _write(root / "preds" / f"{stem}.txt", corrupt(truth.read_text(encoding="utf-8").rstrip("\n"), index))
    _write(root / "preds" / "page_03.json", json.dumps({"fields": {"title": "Release check1ist"}, "confidence": 0.9}))
    return ["--ocr-engine=replay:preds"]


MIXED_TRUTH = {
    "inv_001.png": {"full_text": "INVOICE #12345\nTOTAL: 150.00", "fields": {"invoice": "12345", "total": "150.00"},
                    "tags": ["clean"]},
    "inv_002.png": {"full_text": "Quick brown fox", "thresholds": {"cer": 0.5}, "tags": ["clean"]},
    "inv_003.png": {"full_text": "Straße 7, Köln\nDate 2024-01-31",
                    "fields": {"street": "Straße 7", "date": "2024-01-31"}, "tags": ["degraded"]},
    "inv_004.png": {"full_text": "Hello world", "fields": {}},
    "inv_005.png": {"full_text": "Order 88 of 90\nPaid by card", "fields": {"order": "88"},
                    "thresholds": {"field_f1": 1.0}},
}
MIXED_PREDS = {  # engine 1: one exact, one within its own relaxed threshold, one failing, one regressing later
    "inv_001": "INV0ICE #12345\nTOTAL: 150.00",
    "inv_002": "Quick brwn fx",
    "inv_003": "Strasse 7, Koln\nDate 2024-0l-31",
    "inv_004": "Hello world",
    "inv_005": "Order 88 of 90\nPaid by card",
}
# engine 2: other errors, and for inv_005 a prediction that is not UTF-8, so that document's test errors (a missing
# prediction would do too, but its message names three paths: pytest cuts a JUnit message attribute at 500 characters,
# which a long temporary folder would reach; this one names two)
MIXED_PREDS2 = {
    "inv_001": "INVOICE #12345\nTOTAL: 150.00",
    "inv_002": "Quick brown fox jumps",
    "inv_003": "Straße 7, Köln\nDate 2024-01-31",
    "inv_004": "Hel1o wor1d",
}
NOTES = {"note_a": "first line\nsecond line", "note_b": "pay 12.50 by friday"}


def mixed(root: Path, pytester: pytest.Pytester) -> list[str]:
    """Two datasets, two engines, fields (located in text and structured), per-document thresholds, --ocr-max and
    --ocr-min, two gates (one fails), an erroring document, and a baseline with one regressed document."""
    data = root / "invoices"
    _write(data / "ground_truth.json", json.dumps(MIXED_TRUTH, ensure_ascii=False, indent=1))
    (data / "images").mkdir()
    for name in MIXED_TRUTH:
        (data / "images" / name).write_bytes(PNG_1X1 + name.encode())
    for stem, text in NOTES.items():
        (root / "notes" / f"{stem}.png").parent.mkdir(parents=True, exist_ok=True)
        (root / "notes" / f"{stem}.png").write_bytes(PNG_1X1 + stem.encode())
        _write(root / "notes" / f"{stem}.gt.txt", text + "\n")
    for stem, text in MIXED_PREDS.items():
        _write(root / "preds" / f"{stem}.txt", text)
    _write(root / "preds" / "inv_001.json", json.dumps({"invoice": "12345", "total": "150.0"}))
    for stem, text in MIXED_PREDS2.items():
        _write(root / "preds2" / f"{stem}.txt", text)
    (root / "preds2" / "inv_005.txt").write_bytes(b"Order 88 \xff of 90\nPaid by card")
    for index, (stem, text) in enumerate(NOTES.items()):
        _write(root / "preds" / f"{stem}.txt", corrupt(text, index + 1))
        _write(root / "preds2" / f"{stem}.txt", corrupt(text, index + 2))
    args = ["--ocr-dataset=invoices", "--ocr-dataset=notes", "--ocr-engine=replay:preds", "--ocr-engine=replay:preds2",
            "--ocr-max=cer:0.1", "--ocr-min=field_f1:0.5"]
    baseline = pytester.runpytest(*args, "-p", "no:randomly", "-p", "no:cacheprovider", "--ocr-json=base.json")
    assert (root / "base.json").is_file(), baseline.stdout.str()
    _write(root / "preds" / "inv_004.txt", "Hallo wrld")  # the regression against the baseline
    return [*args, "--ocr-gate=cer<=0.05", "--ocr-gate=mean:wer<=0.5", "--ocr-baseline=base.json",
            "--ocr-max-regression=cer:0.01", "--ocr-document-regressions=fail", "--ocr-summary=full"]


SCENARIOS: dict[str, Callable[[Path, pytest.Pytester], list[str]]] = {
    "receipts": receipts, "plates": plates, "pages": pages, "mixed": mixed}


# ----------------------------------------------------------------------------------------------------------------
# normalisation: mask only what varies between runs and machines
# ----------------------------------------------------------------------------------------------------------------

def _paths(text: str, root: Path) -> str:
    """The run's temporary folder (as given and resolved) becomes ``<TMP>``."""
    for path in sorted({str(root), os.path.realpath(root)}, key=len, reverse=True):
        text = text.replace(path, "<TMP>")
    return text


_ENVIRONMENT_KEYS = ("python", "platform", "implementation", "plugin_version", "pytest_version")


def normalise_run_file(text: str, root: Path) -> str:
    """The run file with its volatile values masked, the bytes otherwise untouched.

    Masked: ``created`` (a timestamp), every ``elapsed_s`` (a timing), the interpreter, platform and version values of
    ``environment``, the replay engine's ``fingerprint`` (it hashes file modification times), and the temporary
    folder in paths. JSON string values escape ``"``, so a key pattern cannot match inside a document's text.
    """
    text = _paths(text, root)
    text = re.sub(r'"created": "[^"]*"', '"created": "<CREATED>"', text)
    text = re.sub(r'"elapsed_s": (-?[0-9][0-9.eE+-]*|null)', '"elapsed_s": "<ELAPSED>"', text)
    text = re.sub(r'"fingerprint": "[0-9a-f]+"', '"fingerprint": "<FINGERPRINT>"', text)
    environment = re.search(r'"environment": \{', text)
    assert environment, "the run file has no environment object"
    head, rest = text[:environment.end()], text[environment.end():]
    for key in _ENVIRONMENT_KEYS:  # the first of each key after "environment": those of the environment object
        rest = re.sub(rf'("{key}": )"[^"]*"', rf'\1"<{key.upper()}>"', rest, count=1)
    return head + rest


def normalise_junit(text: str, root: Path) -> str:
    """The JUnit XML with ``time``, ``timestamp`` and ``hostname`` attributes and temporary paths masked; a line
    break is put between adjacent tags so that a difference reads as a line (pytest writes none there)."""
    text = _paths(text, root)
    text = re.sub(r' (time|timestamp|hostname)="[^"]*"', r' \1="MASKED"', text)
    return text.replace("><", ">\n<")


# pytest's last line, "==== 2 failed, 16 passed in 0.64s ====": the padding around it depends on the duration's length
_DURATION = re.compile(r"=+ (.*) in [0-9.]+s(?: \([0-9:.]+\))? =+")


def normalise_terminal(stdout: str, root: Path) -> str:
    """The terminal from the ``= OCR metrics =`` line to the end, with paths and the final duration masked (the
    last line's ``=`` padding too, as its width follows the duration's)."""
    lines = stdout.splitlines()
    starts = [i for i, line in enumerate(lines) if re.fullmatch(r"=+ OCR metrics =+", line)]
    assert len(starts) == 1, f"expected one '= OCR metrics =' line in the terminal output:\n{stdout}"
    tail = [_DURATION.sub(r"== \1 in <DURATION> ==", _paths(line, root)) for line in lines[starts[0]:]]
    return "\n".join(tail) + "\n"


def failure_messages(stdout: str, root: Path) -> str:
    """Each test's report in pytest's FAILURES and ERRORS sections (``--tb=short``: the plugin's message for a
    dataset item, the test's line and ``E`` lines for a test function), one block per test under its name, blocks
    sorted by name (workers report them in the order they finish, and the serial order is pytest's, not ours)."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_section = False
    for line in stdout.splitlines():
        if re.fullmatch(r"=+ (FAILURES|ERRORS) =+", line):
            in_section = True
            continue
        if re.fullmatch(r"=+ .* =+|-+ .* -+", line):  # the next section, or pytest's "generated xml file" line
            in_section = False
            current = None
            continue
        header = re.fullmatch(r"_+ (.+?) _+", line)
        if in_section and header:
            current = blocks.setdefault(header.group(1), [])
        elif in_section and current is not None and not re.fullmatch(r"\[gw[0-9]+\] .* -- Python .*", line):
            current.append(_paths(line, root))  # (the line skipped is pytest-xdist's: which worker ran the test)
    return "".join(f"{name}\n" + "".join(f"{line}\n" for line in body) + "\n" for name, body in sorted(blocks.items()))


def xdist_order(name: str, text: str) -> str:
    """What may differ under ``-n 2``: the order tests finish in. JUnit ``<testcase>`` elements and the lines of
    pytest's short test summary (each with its message lines) are sorted; nothing else is touched."""
    if name == "junit.xml":
        cases = re.findall(r"<testcase .*?</testcase>\n|<testcase [^>]*/>\n", text, flags=re.S)
        if not cases:
            return text
        first = text.index(cases[0])
        rest = text[first:]
        for case in cases:
            rest = rest.replace(case, "", 1)
        return text[:first] + "".join(sorted(cases)) + rest
    if name == "terminal.txt":
        lines = text.splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if re.fullmatch(r"=+ short test summary info =+\n", line)]
        if not starts:
            return text
        start = starts[0]
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")), len(lines))
        entries: list[list[str]] = []
        for line in lines[start + 1:end]:  # an entry is a FAILED/ERROR line and the lines of its message
            if re.match(r"(FAILED|ERROR|SKIPPED|XFAIL|XPASS|PASSED) ", line) or not entries:
                entries.append([])
            entries[-1].append(line)
        ordered = "".join("".join(entry) for entry in sorted(entries))
        return "".join(lines[:start + 1]) + ordered + "".join(lines[end:])
    return text


# ----------------------------------------------------------------------------------------------------------------
# comparison
# ----------------------------------------------------------------------------------------------------------------

def _readable(name: str, text: str) -> list[str]:
    """Lines to diff: the run file pretty-printed (its lines are whole documents), other outputs as they are."""
    if name == "run.json":
        try:
            return json.dumps(json.loads(text), indent=1, ensure_ascii=False).splitlines(keepends=True)
        except ValueError:
            pass
    return text.splitlines(keepends=True)


def _name_run_file_hunks(diff: list[str], expected: list[str]) -> list[str]:
    """Each hunk header of a pretty-printed run file diff gets where it is: the top-level key and the document."""
    named = []
    for line in diff:
        hunk = re.match(r"@@ -([0-9]+)", line)
        if hunk:
            where = []
            for previous in reversed(expected[:int(hunk.group(1))]):
                key = re.match(r' "([^"]+)": ', previous)
                document = re.match(r'   "id": (".*"),', previous)
                if document and not where:
                    where.append(f"document {document.group(1)}")
                if key:
                    where.insert(0, key.group(1))
                    break
            line = line.rstrip("\n") + " " + " / ".join(where) + "\n"
        named.append(line)
    return named


def _difference(name: str, expected: str, actual: str, limit: int = 60) -> str:
    """A unified diff of the first differences between the golden and the output, at most ``limit`` lines."""
    diff = list(difflib.unified_diff(_readable(name, expected), _readable(name, actual),
                                     f"golden/{name}", f"this run/{name}", n=2))
    if name == "run.json":
        diff = _name_run_file_hunks(diff, _readable(name, expected))
    if not diff:  # the same values, other bytes (layout, key spacing): show the raw lines
        diff = list(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                         f"golden/{name} (raw)", f"this run/{name} (raw)", n=0))
    shown = "".join(line if line.endswith("\n") else line + "\n" for line in diff[:limit])
    more = f"... {len(diff) - limit} more diff lines\n" if len(diff) > limit else ""
    return shown + more


def collect_outputs(result: pytest.RunResult, root: Path) -> dict[str, str]:
    """The normalised outputs of one run, by golden file name."""
    stdout = result.stdout.str()
    out = root / "out"
    missing = [name for name in ("run.json", "junit.xml", "report.md") if not (out / name).is_file()]
    assert not missing, f"the run wrote no {missing}:\n{stdout}\n{result.stderr.str()}"
    return {
        "run.json": normalise_run_file((out / "run.json").read_text(encoding="utf-8"), root),
        "junit.xml": normalise_junit((out / "junit.xml").read_text(encoding="utf-8"), root),
        "terminal.txt": normalise_terminal(stdout, root),
        "failures.txt": failure_messages(stdout, root),
        "report.md": _paths((out / "report.md").read_text(encoding="utf-8"), root),
    }


@pytest.mark.parametrize("mode", ["serial", "xdist-2"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_outputs_match_the_goldens(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, scenario: str,
                                   mode: str) -> None:
    """A whole run's outputs equal the recorded ones after normalisation, serially and with two workers."""
    if mode == "xdist-2":
        pytest.importorskip("xdist")
        if UPDATE:
            pytest.skip("OCRMETRICS_UPDATE_GOLDENS=1 writes goldens from the serial runs; "
                        "rerun without it to check -n 2")
    monkeypatch.setenv("COLUMNS", "120")  # the width of pytest's separator lines
    monkeypatch.setenv("CI", "true")  # pytest then never cuts a short-summary line, whose cut would move with the path
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    root = pytester.path
    args = SCENARIOS[scenario](root, pytester)
    result = pytester.runpytest(*args, *COMMON, *(["-n", "2"] if mode == "xdist-2" else []))
    outputs = collect_outputs(result, root)
    outputs["terminal.txt"] = f"exit status {int(result.ret)}\n" + outputs["terminal.txt"]
    folder = GOLDENS / scenario
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in outputs.items():
            (folder / name).write_text(text, encoding="utf-8", newline="\n")
        return
    problems = []
    for name in ARTIFACTS:
        golden_path = folder / name
        if not golden_path.is_file():
            problems.append(f"no golden {golden_path} (write it with OCRMETRICS_UPDATE_GOLDENS=1)\n")
            continue
        expected = golden_path.read_text(encoding="utf-8")
        actual = outputs[name]
        if mode == "xdist-2":
            expected, actual = xdist_order(name, expected), xdist_order(name, actual)
        if expected != actual:
            problems.append(_difference(name, expected, actual))
    assert not problems, (f"{scenario} ({mode}): outputs differ from tests/goldens/{scenario}/ "
                          "(if the change is intended: OCRMETRICS_UPDATE_GOLDENS=1)\n" + "\n".join(problems))
