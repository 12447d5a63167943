"""Run files that travel: a dataset's name does not depend on the checkout folder (issue 19, item 3), and a run file
moved to another machine still finds its page images (item 4)."""

from __future__ import annotations

import io
import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.evaluator.serve.server import make_server, serve_in_thread
from tests.helpers.plugin import make_dataset

Image = pytest.importorskip("PIL.Image")

REPLAY = "--ocr-engine=replay:preds"


def _checkout(root: Path, dataset: str = "data") -> Path:
    """A checkout folder with its own ``pytest.ini`` (its own rootdir) holding the test dataset as ``dataset``/."""
    root.mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    make_dataset(root)
    (root / "invoices").rename(root / dataset)
    return root


def _real_images(dataset: Path) -> None:
    """Replace the dataset's stand-in images with decodable PNGs (the HTML report embeds what Pillow can read)."""
    for number, image in enumerate(sorted((dataset / "images").iterdir())):
        Image.new("RGB", (40, 20), (number * 60, 120, 200)).save(image, "PNG")


def _run(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------ dataset identity


def test_a_baseline_from_one_checkout_matches_the_same_dataset_in_another(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, plugin_args: list[str]) -> None:
    """``checkoutA/data`` and ``checkoutB/data`` are both dataset 'data' (the old rule named a generic folder after
    its parent: 'checkoutA' and 'checkoutB', and the baseline matched none)."""
    first, second = _checkout(pytester.path / "checkoutA"), _checkout(pytester.path / "checkoutB")
    monkeypatch.chdir(first)
    pytester.runpytest("--ocr-dataset=data", REPLAY, "--ocr-json=run.json", *plugin_args).assert_outcomes(passed=3)
    assert {doc["dataset"] for doc in _run(first / "run.json")["documents"]} == {"data"}
    monkeypatch.chdir(second)
    result = pytester.runpytest("--ocr-dataset=data", REPLAY, f"--ocr-baseline={first / 'run.json'}",
                                "--ocr-max-regression=cer:0.01", "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["compared with baseline *: 3 documents, 0 new, 0 missing"])
    assert _run(second / "run.json")["baseline"]["compared"] == 3


def test_an_explicit_name_matches_a_dataset_in_another_folder(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, plugin_args: list[str]) -> None:
    """``--ocr-dataset=NAME=PATH`` and the ini key's ``NAME=PATH`` (its path relative to the ini file) name the
    dataset; the name is what the run file records and what a baseline is matched by."""
    first = _checkout(pytester.path / "checkoutA", "data")
    second = _checkout(pytester.path / "checkoutB", "scans")
    monkeypatch.chdir(first)
    pytester.runpytest("--ocr-dataset=receipts=data", REPLAY, "--ocr-json=run.json",
                       *plugin_args).assert_outcomes(passed=3)
    assert {doc["dataset"] for doc in _run(first / "run.json")["documents"]} == {"receipts"}
    (second / "pytest.ini").write_text("[pytest]\nocr_datasets = receipts=scans\n", encoding="utf-8")
    (second / "sub").mkdir()
    monkeypatch.chdir(second / "sub")  # the ini key's path is relative to the ini file, not to where pytest runs
    result = pytester.runpytest(f"--ocr-engine=replay:{second / 'preds'}", f"--ocr-baseline={first / 'run.json'}",
                                "--ocr-json=run.json", *plugin_args)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["replay *receipts *3 *", "compared with baseline *: 3 documents, 0 new, 0 missing"])
    assert {doc["dataset"] for doc in _run(second / "sub" / "run.json")["documents"]} == {"receipts"}


def test_a_folder_outside_the_rootdir_is_named_by_its_folder(
        pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, plugin_args: list[str]) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "ci" / "work"
    outside.mkdir(parents=True)
    make_dataset(outside)
    pytester.runpytest(f"--ocr-dataset={outside / 'invoices'}", f"--ocr-engine=replay:{outside / 'preds'}",
                       "--ocr-json=run.json", *plugin_args).assert_outcomes(passed=3)
    run = _run(pytester.path / "run.json")
    assert {doc["dataset"] for doc in run["documents"]} == {"invoices"}
    assert run["datasets"] == {"invoices": {"root": str(outside / "invoices")}}


def test_a_baseline_naming_the_dataset_otherwise_says_both_names_and_the_fix(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """A baseline written with the old rule ('checkoutA' for checkoutA/data) names both sides and how to match."""
    first = _checkout(pytester.path / "checkoutA")
    monkeypatch.chdir(first)
    pytester.runpytest("--ocr-dataset=data", REPLAY, "--ocr-json=old.json").assert_outcomes(passed=3)
    old = first / "old.json"
    old.write_text(old.read_text(encoding="utf-8").replace('"dataset": "data"', '"dataset": "checkoutA"'),
                   encoding="utf-8")
    result = pytester.runpytest("--ocr-dataset=data", REPLAY, f"--ocr-baseline={old}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["ERROR: baseline * matched none of the 3 document(s) of this run, so nothing was "
                                 "compared: the baseline has replay / checkoutA, this run has replay / data (engine / "
                                 "dataset): the same documents are dataset 'checkoutA' in the baseline and 'data' "
                                 "here * --ocr-dataset=checkoutA=PATH *"])
    result = pytester.runpytest("--ocr-dataset=checkoutA=data", REPLAY, f"--ocr-baseline={old}")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["compared with baseline *: 3 documents, 0 new, 0 missing"])


# ------------------------------------------------------------------------------------------ portable run files


@pytest.mark.xdist_transport
def test_the_run_file_holds_no_path_of_the_folder_it_ran_in(pytester: pytest.Pytester, dataset: Path,
                                                             plugin_args: list[str]) -> None:
    """Images are relative to their dataset's folder; the folder itself is recorded once, in ``datasets``, which (like
    ``environment``) says where the run was made."""
    pytester.runpytest("--ocr-dataset=invoices", REPLAY, "--ocr-json=run.json", *plugin_args).assert_outcomes(passed=3)
    run = _run(pytester.path / "run.json")
    assert [doc["image"] for doc in run["documents"]] == [f"images/doc_00{n}.png" for n in (1, 2, 3)]
    assert run["datasets"] == {"invoices": {"root": str(dataset)}}
    where_it_ran = {"datasets", "environment"}
    rest = json.dumps({key: value for key, value in run.items() if key not in where_it_ran})
    assert str(pytester.path) not in rest and "doc_001.png" in rest


@pytest.fixture
def moved_run(pytester: pytest.Pytester, dataset: Path, tmp_path_factory: pytest.TempPathFactory,
              ) -> tuple[Path, Path]:
    """A run made in pytester's folder, then its run file downloaded to one folder and its dataset checked out in
    another, and the original dataset deleted: ``(run file, new checkout)``."""
    _real_images(dataset)
    pytester.runpytest("--ocr-dataset=invoices", REPLAY, "--ocr-json=run.json").assert_outcomes(passed=3)
    downloads, checkout = tmp_path_factory.mktemp("downloads"), tmp_path_factory.mktemp("checkout")
    shutil.copy(pytester.path / "run.json", downloads / "run.json")
    shutil.copytree(dataset, checkout / "invoices")
    shutil.rmtree(dataset)
    return downloads / "run.json", checkout


@pytest.mark.parametrize("root", ["checkout", "dataset"])
def test_a_moved_run_file_renders_its_pages_with_image_root(moved_run: tuple[Path, Path], root: str) -> None:
    """``--image-root`` may be the checkout (DIR/<dataset name>/<image>) or the dataset folder (DIR/<image>)."""
    run_file, checkout = moved_run
    image_root = checkout if root == "checkout" else checkout / "invoices"
    out = io.StringIO()
    html = run_file.parent / "report.html"
    assert main(["report", str(run_file), "--html", str(html), "--image-root", str(image_root)], stdout=out) == 0
    page = html.read_text(encoding="utf-8")
    assert page.count('<img id="image-') == 3 and page.count('src="data:image/jpeg;base64,') == 3
    assert "not found" not in page


def test_a_moved_run_file_renders_without_images_and_says_so(moved_run: tuple[Path, Path]) -> None:
    run_file, _ = moved_run
    html = run_file.parent / "report.html"
    assert main(["report", str(run_file), "--html", str(html)], stdout=io.StringIO()) == 0
    page = html.read_text(encoding="utf-8")
    assert "data:image" not in page and 'class="thumb"' not in page
    assert ("3 of 3 page images were not found on this machine; give the folder that holds the datasets with "
            "ocrmetrics report --image-root DIR.") in page
    assert page.count("image not found: ") == 3


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def test_serve_finds_the_pages_of_a_moved_run_file(moved_run: tuple[Path, Path]) -> None:
    run_file, checkout = moved_run
    run = _run(run_file)
    for image_root, found in ((checkout, True), (None, False)):
        server = make_server(port=0, run=run, run_label="run.json", quiet=True, image_root=image_root,
                             run_folder=run_file.parent)
        thread = serve_in_thread(server)
        try:
            status, _, body = _get(server.url + "api/run/document?index=0")
            doc = json.loads(body)
            status, kind, image = _get(server.url + "api/run/image?index=0")
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=10)
        if found:
            assert doc["image_url"] == "/api/run/image?index=0" and "image_note" not in doc
            assert (status, kind) == (200, "image/png") and image.startswith(b"\x89PNG")
        else:
            assert "image_url" not in doc and "--image-root DIR" in doc["image_note"]
            assert status == 404 and "--image-root DIR" in json.loads(image)["error"]
