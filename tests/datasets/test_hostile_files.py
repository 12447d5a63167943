"""Dataset files that must never leak, hang or crash a load (issue 20, A2, A8, A13).

* A2: every file a dataset reads (not only its images) must stay inside the dataset folder once symbolic links are
  followed: a sidecar ``x.gt.txt`` linked to ``/etc/passwd`` would be copied into every report.
* A8: a file that is not a regular file (a FIFO, ``/dev/zero``) is never opened for a blocking read and is named for
  what it is.
* A13: one entry nested 100,000 deep, or naming a 300-character file, errors that entry's document only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import pytest

from pytest_ocrmetrics.datasets import Dataset, DatasetError, load_dataset
from tests.dataset_errors import entry_error
from tests.datasets.test_olmocr_bench import MINIMAL_PDF, bench, line
from tests.hang_guard import make_fifo, within

PNG = b"\x89PNG\r\n\x1a\n" + b"rest"
SECRET = "root:x:0:0:the secret the dataset must not read"
DEEP = "[" * 100_000 + "]" * 100_000
LONG_NAME = "n" * 300 + ".png"  # longer than any file name may be (255 bytes on Linux, macOS and Windows)


def _load(path: Path, fifos: tuple[Path, ...] = ()) -> Dataset:
    return within(lambda: load_dataset(path), fifos=fifos)


def _refused(path: Path, fifos: tuple[Path, ...] = ()) -> str:
    with pytest.raises(DatasetError) as info:
        _load(path, fifos)
    return str(info.value)


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text(SECRET, encoding="utf-8")
    return secret


def _sidecars(root: Path, *names: str) -> Path:
    for name in names:
        (root / f"{name}.png").parent.mkdir(parents=True, exist_ok=True)
        (root / f"{name}.png").write_bytes(PNG)
        (root / f"{name}.gt.txt").write_text(f"text of {name}", encoding="utf-8")
    return root


def _ground_truth_json(root: Path, entries: dict[str, object] | str) -> Path:
    (root / "images").mkdir(parents=True, exist_ok=True)
    text = entries if isinstance(entries, str) else json.dumps(entries)
    (root / "ground_truth.json").write_text(text, encoding="utf-8")
    for name in ("a.png", "c.png"):
        (root / "images" / name).write_bytes(PNG)
    return root


# -- A2: the dataset folder is the boundary of every file it reads ---------------------------------------------------
@pytest.mark.parametrize("suffix", [".gt.txt", ".fields.json"])
def test_a_sidecar_file_linked_out_of_the_dataset_errors_only_its_document(tmp_path: Path, suffix: str) -> None:
    secret = _secret(tmp_path)
    root = _sidecars(tmp_path / "set", "a", "b")
    link = root / f"b{suffix}"
    link.unlink(missing_ok=True)
    os.symlink(secret, link)
    dataset = _load(root)
    error = entry_error(dataset, "b.png")
    kind = "ground-truth file" if suffix == ".gt.txt" else "fields file"
    assert error == (f"{link}: {kind} is a symbolic link to {str(secret)!r}, outside the dataset folder {str(root)!r}; "
                     "copy the file into the dataset folder (a dataset reads only its own files).")
    assert all(SECRET not in repr(document) for document in dataset)  # never read, so in no report
    assert dataset.documents[0].reference_text == "text of a"


def test_a_sidecar_file_linked_inside_the_dataset_is_read(tmp_path: Path) -> None:
    root = _sidecars(tmp_path / "set", "a", "b")
    (root / "shared").mkdir()
    (root / "shared" / "b.fields.json").write_text('{"total": "1"}', encoding="utf-8")
    os.symlink(Path("shared") / "b.fields.json", root / "b.fields.json")
    (root / "b.gt.txt").unlink()
    os.symlink(root / "a.gt.txt", root / "b.gt.txt")
    b = _load(root).documents[1]
    assert (b.error, b.reference_text, b.fields) == (None, "text of a", {"total": "1"})


def _linked_ground_truth(root: Path, secret: Path) -> Path:
    _ground_truth_json(root, {})
    (root / "ground_truth.json").unlink()
    secret.write_text(json.dumps({"a.png": {"full_text": SECRET}}), encoding="utf-8")
    os.symlink(secret, root / "ground_truth.json")
    return root / "ground_truth.json"


def _linked_manifest(root: Path, secret: Path) -> Path:
    root.mkdir(parents=True)
    (root / "a.png").write_bytes(PNG)
    secret.write_text(json.dumps({"image": "a.png", "full_text": SECRET}), encoding="utf-8")
    os.symlink(secret, root / "manifest.jsonl")
    return root / "manifest.jsonl"


def _linked_label_file(root: Path, secret: Path) -> Path:
    root.mkdir(parents=True)
    (root / "a.png").write_bytes(PNG)
    secret.write_text(f"a.png\t{SECRET}\n", encoding="utf-8")
    os.symlink(secret, root / "labels.tsv")
    return root / "labels.tsv"


def _linked_fact_file(root: Path, secret: Path) -> Path:
    bench(root.parent, [line(id="a_00", type="present", text="x")])
    secret.write_text(line(id="a_01", type="present", text=SECRET), encoding="utf-8")
    os.symlink(secret, root / "more.jsonl")
    return root / "more.jsonl"


LINKED_GROUND_TRUTH: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "ground_truth.json": (_linked_ground_truth, "ground-truth file"),
    "manifest.jsonl": (_linked_manifest, "manifest"),
    "labels.tsv": (_linked_label_file, "label file"),
    "olmocr-fact-file": (_linked_fact_file, "fact file"),
}


@pytest.mark.parametrize("make", LINKED_GROUND_TRUTH.values(), ids=LINKED_GROUND_TRUTH.keys())
def test_a_ground_truth_file_linked_out_of_the_dataset_is_refused_in_one_sentence(tmp_path: Path, make) -> None:
    build, kind = make
    secret = _secret(tmp_path)
    root = tmp_path / "bench"
    link = build(root, secret)
    message = _refused(root)
    assert message == (f"{link}: {kind} is a symbolic link to {str(secret)!r}, outside the dataset folder "
                       f"{str(root)!r}; copy the file into the dataset folder (a dataset reads only its own files).")
    assert SECRET not in message


def test_a_pdf_linked_out_of_an_olmocr_bench_folder_errors_only_its_pages(tmp_path: Path) -> None:
    root = bench(tmp_path, [line(id="a_00", type="present", text="x")], pdfs=("a.pdf",))
    outside = tmp_path / "elsewhere.pdf"
    outside.write_bytes(MINIMAL_PDF)
    os.symlink(outside, root / "pdfs" / "b.pdf")
    errors = {document.id: document.error for document in _load(root)}
    assert errors["a_pg1"] is None
    assert errors["b_pg1"] == (f"{root / 'pdfs' / 'b.pdf'}: PDF is a symbolic link to {str(outside)!r}, outside the "
                               f"dataset folder {str(root)!r}; copy the file into the dataset folder (a dataset reads "
                               "only its own files)")


# -- A8: never open a file that is not a regular file ----------------------------------------------------------------
FIFO_WORDS = "is a FIFO (named pipe), not a regular file; replace it with a regular file"


@pytest.mark.parametrize("suffix", [".gt.txt", ".fields.json"])
def test_a_fifo_among_sidecar_files_errors_only_its_document(tmp_path: Path, suffix: str) -> None:
    root = _sidecars(tmp_path / "set", "a", "b", "c")
    fifo = root / f"b{suffix}"
    fifo.unlink(missing_ok=True)
    make_fifo(fifo)
    dataset = _load(root, (fifo,))
    kind = "ground-truth file" if suffix == ".gt.txt" else "fields file"
    assert entry_error(dataset, "b.png").startswith(f"{fifo}: {kind} {FIFO_WORDS}")
    assert [d.reference_text for d in dataset if d.id != "b.png"] == ["text of a", "text of c"]


def test_a_fifo_image_errors_only_its_document(tmp_path: Path) -> None:
    root = _sidecars(tmp_path / "set", "a", "b")
    (root / "b.png").unlink()
    fifo = make_fifo(root / "b.png")
    assert entry_error(_load(root, (fifo,)), "b.png") == f"image {str(fifo)!r} is a FIFO (named pipe), not a file"


def test_a_ground_truth_json_that_is_a_fifo_or_dev_zero_says_what_it_is(tmp_path: Path) -> None:
    fifo_root = tmp_path / "fifo"
    (fifo_root / "images").mkdir(parents=True)
    fifo = make_fifo(fifo_root / "ground_truth.json")
    message = _refused(fifo_root, (fifo,))
    assert message.startswith(f"{fifo}: ground-truth file {FIFO_WORDS}")
    assert _refused(fifo, (fifo,)).startswith(f"{fifo}: the dataset path {FIFO_WORDS}")  # given itself
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this system")
    zero_root = tmp_path / "zero"
    (zero_root / "images").mkdir(parents=True)
    os.symlink("/dev/zero", zero_root / "ground_truth.json")
    assert _refused(zero_root) == (
        f"{zero_root / 'ground_truth.json'}: ground-truth file is a symbolic link to '/dev/zero', which is a character "
        "device, not a regular file; replace it with a regular file (it is not opened: reading it could block the run "
        "or never end).")


@pytest.mark.parametrize(("name", "kind"), [("manifest.jsonl", "manifest"), ("labels.tsv", "label file")])
def test_a_manifest_or_label_file_that_is_a_fifo_is_refused(tmp_path: Path, name: str, kind: str) -> None:
    root = tmp_path / "set"
    root.mkdir()
    (root / "a.png").write_bytes(PNG)
    fifo = make_fifo(root / name)
    assert _refused(root, (fifo,)).startswith(f"{fifo}: {kind} {FIFO_WORDS}")
    assert _refused(fifo, (fifo,)).startswith(f"{fifo}: the dataset path {FIFO_WORDS}")


def test_a_fifo_fact_file_is_refused_and_a_fifo_pdf_errors_its_pages(tmp_path: Path) -> None:
    root = bench(tmp_path, [line(id="a_00", type="present", text="x")], pdfs=("a.pdf",))
    pdf = make_fifo(root / "pdfs" / "b.pdf")
    errors = {document.id: document.error for document in _load(root, (pdf,))}
    assert errors["a_pg1"] is None and str(errors["b_pg1"]).startswith(f"{pdf}: PDF {FIFO_WORDS}")
    fifo = make_fifo(root / "more.jsonl")
    assert _refused(root, (fifo, pdf)).startswith(f"{fifo}: fact file {FIFO_WORDS}")


# -- A13: one hostile entry errors its document, the others load -----------------------------------------------------
def test_one_entry_nested_100000_deep_errors_only_its_document(tmp_path: Path) -> None:
    gt = ('{"a.png": {"full_text": "A [x] \\"}"}, '
          '"b.png": {"meta": {"note": "a ] and a \\\\\\" inside", "deep": ' + DEEP + '}, "full_text": "B"},\n'
          ' "c.png": {"full_text": "C"}}')
    root = _ground_truth_json(tmp_path / "set", gt)
    (root / "images" / "b.png").write_bytes(PNG)
    dataset = _load(root)
    assert entry_error(dataset, "b.png") == (
        f"{root / 'ground_truth.json'}, entry 'b.png': the entry is nested deeper than Python's JSON parser allows "
        f"(more than about {__import__('sys').getrecursionlimit():,} levels of brackets); flatten it.")
    assert [d.reference_text for d in dataset] == ['A [x] "}', None, "C"]


@pytest.mark.parametrize(("text", "expected"), [
    (DEEP, "the file is nested deeper than Python's JSON parser allows"),
    ('{"a.png": ' + DEEP + ', "c.png": {"full_text": "C"}', "invalid JSON at line 1, column 200040: Expecting ',' "
                                                            "delimiter"),
    ('{"a.png": ' + DEEP + ', "a.png": {"full_text": "C"}}', "key 'a.png' appears twice in one object"),
    ('{"a.png": ' + DEEP[:-1], "invalid JSON at line 1, column 11: Unterminated value"),
], ids=["top-level", "syntax-error-after", "duplicate-key", "unterminated"])
def test_a_deep_ground_truth_json_keeps_refusing_what_is_wrong_with_the_whole_file(tmp_path: Path, text: str,
                                                                                   expected: str) -> None:
    assert expected in _refused(_ground_truth_json(tmp_path / "set", text))


def test_a_schema_parsed_but_too_deep_to_check_errors_only_its_document(tmp_path: Path) -> None:
    schema = '{"items": ' * 900 + "{}" + "}" * 900  # within the parser's limit, beyond the schema checker's
    root = _ground_truth_json(tmp_path / "set", '{"a.png": {"full_text": "A"}, "b.png": {"schema": ' + schema + "}, "
                                                '"c.png": {"full_text": "C"}}')
    (root / "images" / "b.png").write_bytes(PNG)
    dataset = _load(root)
    assert entry_error(dataset, "b.png") == (
        f"{root / 'ground_truth.json'}, entry 'b.png': the entry is nested too deeply to be checked (more than about "
        f"{__import__('sys').getrecursionlimit():,} levels, Python's recursion limit); flatten it.")
    assert [d.reference_text for d in dataset if d.error is None] == ["A", "C"]


def test_a_jsonl_line_nested_100000_deep_errors_only_its_line(tmp_path: Path) -> None:
    root = tmp_path / "set"
    root.mkdir()
    for name in ("a.png", "c.png"):
        (root / name).write_bytes(PNG)
    lines = [json.dumps({"image": "a.png", "full_text": "A"}), '{"image": "b.png", "x": ' + DEEP + "}",
             json.dumps({"image": "c.png", "full_text": "C"})]
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = _load(root)
    assert entry_error(dataset, "manifest.jsonl:2") == (
        f"{root / 'manifest.jsonl'}:2: the line is nested deeper than Python's JSON parser allows (more than about "
        f"{__import__('sys').getrecursionlimit():,} levels of brackets); flatten it.")
    assert [d.reference_text for d in dataset if d.error is None] == ["A", "C"]


def test_deep_fields_and_fact_lines_error_their_own_entry(tmp_path: Path) -> None:
    root = _sidecars(tmp_path / "set", "a", "b")
    (root / "b.fields.json").write_text(DEEP, encoding="utf-8")
    assert "b.fields.json: the fields file is nested deeper than" in entry_error(_load(root), "b.png")
    bench_root = bench(tmp_path, [line(id="a_00", type="present", text="x"), "[" * 100_000])
    dataset = _load(bench_root)
    assert [entry.source for entry in dataset.skipped] == [f"{bench_root / 'tests.jsonl'}:2"]
    assert "the line is nested deeper than Python's JSON parser allows" in dataset.skipped[0].reason
    assert any(fact.id == "a_00" for document in dataset for fact in document.facts)


def _long_ground_truth_json(root: Path) -> None:
    _ground_truth_json(root, {"a.png": {"full_text": "A"}, LONG_NAME: {"full_text": "L"}, "c.png": {"full_text": "C"}})


def _long_jsonl(root: Path) -> None:
    root.mkdir(parents=True)
    for name in ("a.png", "c.png"):
        (root / name).write_bytes(PNG)
    (root / "manifest.jsonl").write_text("\n".join(json.dumps({"image": n, "full_text": n[0].upper()})
                                                   for n in ("a.png", LONG_NAME, "c.png")), encoding="utf-8")


def _long_label_file(root: Path) -> None:
    root.mkdir(parents=True)
    for name in ("a.png", "c.png"):
        (root / name).write_bytes(PNG)
    (root / "labels.tsv").write_text(f"a.png\tA\n{LONG_NAME}\tL\nc.png\tC\n", encoding="utf-8")


@pytest.mark.parametrize("make", [_long_ground_truth_json, _long_jsonl, _long_label_file],
                         ids=["ground_truth.json", "jsonl", "label-file"])
def test_an_entry_naming_a_300_character_file_errors_only_its_document(tmp_path: Path, make) -> None:
    root = tmp_path / "set"
    make(root)
    dataset = _load(root)
    error = entry_error(dataset, LONG_NAME)
    assert error.startswith("image path '") and LONG_NAME in error
    assert "cannot be looked at: its name is too long for this system (File name too long)" in error
    assert "Errno" not in error
    assert [d.reference_text for d in dataset if d.error is None] == ["A", "C"]
