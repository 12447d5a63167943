"""load_dataset: detection order, names, limits, errors for paths that are no dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ocrmetrics.datasets import LOADERS, DatasetError, DatasetLoader, detect_format, load_dataset


def test_every_builtin_loader_satisfies_the_protocol() -> None:
    assert [loader.name for loader in LOADERS] == ["ground_truth_json", "olmocr_bench", "omnidocbench", "jsonl", "label_file", "sidecar"]
    assert all(isinstance(loader, DatasetLoader) for loader in LOADERS)


def test_a_folder_without_any_format_lists_the_formats_looked_for(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path}: not a dataset; looked for ")
    for words in ("ground_truth.json", "manifest.jsonl", "label file", ".gt.txt"):
        assert words in message


def test_an_empty_folder_says_it_is_empty(tmp_path: Path) -> None:
    (tmp_path / ".hidden").mkdir()  # hidden entries do not count
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: the folder is empty; a dataset folder holds images and their ground truth "
        "(ground_truth.json, *.jsonl, labels file or .gt.txt sidecars)."
    )


def test_a_folder_of_images_without_ground_truth_says_how_many_images_and_what_is_missing(tmp_path: Path) -> None:
    for name in ("a.png", "b.JPG", "sub/c.tif"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"\x89PNG\r\n\x1a\nimg")
    (tmp_path / "notes.txt").write_text("no tab here", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: the folder has 3 images but no ground truth (ground_truth.json, *.jsonl, labels file or "
        ".gt.txt sidecars); add one of them."
    )
    (tmp_path / "b.JPG").unlink()
    (tmp_path / "sub" / "c.tif").unlink()
    with pytest.raises(DatasetError, match="has 1 image but no ground truth"):
        load_dataset(tmp_path)


def test_the_images_folder_of_a_dataset_names_the_dataset_to_pass(tmp_path: Path) -> None:
    (tmp_path / "receipts" / "images").mkdir(parents=True)
    (tmp_path / "receipts" / "images" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nimg")
    (tmp_path / "receipts" / "ground_truth.json").write_text(json.dumps({"a.png": {"full_text": "A"}}), encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path / "receipts" / "images")
    dataset = str(tmp_path / "receipts")
    assert str(info.value) == (
        f"{tmp_path / 'receipts' / 'images'}: looks like the images/ folder of the dataset {dataset!r}; "
        f"pass {dataset!r} instead."
    )
    assert len(load_dataset(tmp_path / "receipts")) == 1
    (tmp_path / "receipts" / "ground_truth.json").unlink()  # a manifest dataset: same sentence
    (tmp_path / "receipts" / "manifest.jsonl").write_text('{"image": "images/a.png", "full_text": "A"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="looks like the images/ folder of the dataset"):
        load_dataset(tmp_path / "receipts" / "images")


def test_a_folder_holding_datasets_names_them(tmp_path: Path) -> None:
    for name in ("plates", "receipts"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "labels.tsv").write_text("a.png\tA\n", encoding="utf-8")
    (tmp_path / "loose.png").write_bytes(b"\x89PNG\r\n\x1a\nimg")
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: not a dataset itself but holds 2 datasets ({str(tmp_path / 'plates')!r}, "
        f"{str(tmp_path / 'receipts')!r}); pass one of them."
    )


def test_a_missing_path_is_a_dataset_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="dataset path does not exist"):
        load_dataset(tmp_path / "nope")


def test_a_mistyped_dataset_path_gets_the_closest_existing_one(tmp_path: Path) -> None:
    (tmp_path / "receipts" / "data").mkdir(parents=True)
    (tmp_path / "plates").mkdir()
    cases = {
        tmp_path / "receipt": tmp_path / "receipts",
        tmp_path / "receipt" / "data": tmp_path / "receipts" / "data",  # the rest exists under the guess
        tmp_path / "receipts" / "dat": tmp_path / "receipts" / "data",
        tmp_path / "receipt" / "nope": tmp_path / "receipts",  # the rest does not: the folder that does
    }
    for typed, meant in cases.items():
        with pytest.raises(DatasetError) as info:
            load_dataset(typed)
        assert str(info.value) == f"{typed}: dataset path does not exist (did you mean {str(meant)!r}?)."
    with pytest.raises(DatasetError) as info:
        load_dataset(tmp_path / "zzzz" / "x")
    assert str(info.value) == f"{tmp_path / 'zzzz' / 'x'}: dataset path does not exist."


def test_a_mistyped_relative_dataset_path_is_suggested_as_typed(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "invoices").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DatasetError, match=r"^invoice: dataset path does not exist \(did you mean 'invoices'\?\)\.$"):
        load_dataset("invoice", format="sidecar")


def test_ground_truth_json_wins_over_sidecars(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(b"\x89PNG\r\n\x1a\nimg")
    (tmp_path / "images" / "a.gt.txt").write_text("sidecar", encoding="utf-8")
    (tmp_path / "ground_truth.json").write_text(json.dumps({"a.png": {"full_text": "json"}}), encoding="utf-8")
    assert detect_format(tmp_path).name == "ground_truth_json"
    assert load_dataset(tmp_path).documents[0].reference_text == "json"
    sidecar = load_dataset(tmp_path / "images", format="sidecar")
    assert sidecar.documents[0].reference_text == "sidecar"


def test_limit_keeps_the_first_documents_after_sorting(shared_data: Path) -> None:
    dataset = load_dataset(shared_data / "sroie_receipts", limit=2)
    assert [d.id for d in dataset] == ["001.jpg", "020.jpg"]
    assert len(load_dataset(shared_data / "sroie_receipts", limit=0)) == 0
    with pytest.raises(ValueError, match="limit"):
        load_dataset(shared_data / "sroie_receipts", limit=-1)


def test_unknown_forced_format(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="unknown dataset format 'csv'; valid formats: ground_truth_json"):
        load_dataset(tmp_path, format="csv")


def test_default_name_of_a_relative_dot_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "my_set"
    folder.mkdir()
    (folder / "labels.tsv").write_text("a.png\tA\n", encoding="utf-8")
    monkeypatch.chdir(folder)
    assert load_dataset(".").name == "my_set"


def test_default_name_is_the_path_relative_to_the_rootdir(tmp_path: Path) -> None:
    """The same dataset in two checkouts gets one name (the old rule named generic folders after their parent, so
    checkoutA/data and checkoutB/data differed); a folder outside the rootdir, or no rootdir, is its folder's name."""
    from pytest_ocrmetrics.datasets import dataset_name

    for checkout in ("checkoutA", "checkoutB"):
        (tmp_path / checkout / "data").mkdir(parents=True)
        (tmp_path / checkout / "data" / "labels.tsv").write_text("a.png\tA\n", encoding="utf-8")
        assert dataset_name(tmp_path / checkout / "data", tmp_path / checkout) == "data"
        assert dataset_name(tmp_path / checkout / "data" / "labels.tsv", tmp_path / checkout) == "data/labels.tsv"
        assert load_dataset(tmp_path / checkout / "data", rootdir=tmp_path / checkout).name == "data"
    assert dataset_name(tmp_path / "checkoutA", tmp_path / "checkoutA") == "."
    assert dataset_name(tmp_path / "checkoutA" / "data", tmp_path / "checkoutB") == "data"  # outside: folder name
    assert dataset_name(tmp_path / "checkoutA" / "data" / "labels.tsv") == "labels"
    assert load_dataset(tmp_path / "checkoutA" / "data").name == "data"
    assert load_dataset(tmp_path / "checkoutA" / "data", name="receipts", rootdir=tmp_path).name == "receipts"


@pytest.mark.parametrize(("text", "expected"), [
    ("receipts=data/receipts", ("receipts", "data/receipts")),
    ("data/receipts", (None, "data/receipts")),
    ("data/a=b", (None, "data/a=b")),  # a '/' before the '=': a path
    ("=data", (None, "=data")),
    ("receipts=", (None, "receipts=")),
    ("a=b=c", ("a", "b=c")),
])
def test_an_explicit_name_is_written_name_equals_path(text: str, expected: tuple[str | None, str]) -> None:
    from pytest_ocrmetrics.datasets import split_dataset_argument

    assert split_dataset_argument(text, "/nonexistent") == expected


def test_a_folder_whose_name_holds_an_equals_sign_is_still_a_path(tmp_path: Path) -> None:
    from pytest_ocrmetrics.datasets import rebase_dataset_argument, split_dataset_argument

    (tmp_path / "v=2").mkdir()
    assert split_dataset_argument("v=2", tmp_path) == (None, "v=2")
    assert rebase_dataset_argument("v=2", tmp_path) == str(tmp_path / "v=2")
    assert rebase_dataset_argument("scans=v=2", tmp_path) == f"scans={tmp_path / 'v=2'}"
