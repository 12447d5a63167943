"""OmniDocBench folders as datasets: detection under any file name, one document per page (id = image_path), page
attributes as tags, optional images, malformed pages errored or skipped one by one, hostile files refused with a
sentence; replay of ``<image stem>.md``; the demo ground truth."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.datasets import DatasetError, load_dataset
from pytest_ocrmetrics.datasets.loading import detect_format
from pytest_ocrmetrics.engines.base import EngineError, read_image
from pytest_ocrmetrics.engines.replay import ReplayEngine
from pytest_ocrmetrics.metrics.omnidoc import score_page
from pytest_ocrmetrics.scoring.document import score_document
from tests.dataset_errors import entry_error
from tests.helpers.plugin import PNG_1X1

DEMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "acceptance" / "omnidocbench"


def page(image: str, *, attributes: Any = None, dets: Any = None, relation: Any = None) -> dict[str, Any]:
    """One OmniDocBench page object."""
    return {
        "layout_dets": dets if dets is not None else [
            {"category_type": "title", "order": 1, "text": "Results", "ignore": False, "anno_id": 1},
            {"category_type": "text_block", "order": 2, "text": "The method works.", "ignore": False, "anno_id": 2},
            {"category_type": "page_number", "order": None, "text": "7", "ignore": False, "anno_id": 3},
        ],
        "page_info": {"page_no": 0, "height": 100, "width": 80, "image_path": image,
                      "page_attribute": attributes if attributes is not None else
                      {"language": "english", "layout": "single_column", "special_issue": ["fuzzy_scan"]}},
        "extra": {"relation": relation if relation is not None else []},
    }


def folder(tmp_path: Path, pages: list[Any], *, name: str = "OmniDocBench.json", images: tuple[str, ...] = ()) -> Path:
    root = tmp_path / "omnidoc"
    root.mkdir(exist_ok=True)
    (root / name).write_text(json.dumps(pages, ensure_ascii=False), encoding="utf-8")
    for image in images:
        (root / "images" / image).parent.mkdir(parents=True, exist_ok=True)
        (root / "images" / image).write_bytes(PNG_1X1 + image.encode())
    return root


def test_a_folder_with_the_benchmarks_json_under_any_name_is_detected(tmp_path: Path) -> None:
    root = folder(tmp_path, [page("b.pdf_1.jpg"), page("a.jpg", attributes={"language": "simplified_chinese"})],
                  name="my_pages.json")
    assert detect_format(root).name == "omnidocbench"
    assert detect_format(root / "my_pages.json").name == "omnidocbench"  # the file itself
    dataset = load_dataset(root)
    assert dataset.format == "omnidocbench" and not dataset.skipped
    assert [d.id for d in dataset] == ["a.jpg", "b.pdf_1.jpg"]  # one document per page, sorted, id = image_path
    first, second = dataset.documents
    assert first.tags == ("language:simplified_chinese",)
    assert second.tags == ("language:english", "layout:single_column", "special_issue:fuzzy_scan")
    assert second.omnidoc_page is not None and second.omnidoc_page["page_info"]["image_path"] == "b.pdf_1.jpg"
    assert second.reference_text is None and second.error is None
    assert second.image_path == root / "images" / "b.pdf_1.jpg"
    assert "my_pages.json, page 1" in second.source


def test_other_json_files_are_not_taken_for_the_benchmark(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "config.json").write_text(json.dumps([{"name": "x"}]), encoding="utf-8")  # a list, no page keys
    (root / "meta.json").write_text(json.dumps({"layout_dets": []}), encoding="utf-8")  # an object, not a list
    with pytest.raises(DatasetError, match="not a dataset"):
        detect_format(root)


def test_a_sidecar_fields_file_is_never_taken_for_the_benchmark(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "x.png").write_bytes(PNG_1X1)
    (root / "x.gt.txt").write_text("text", encoding="utf-8")
    (root / "x.fields.json").write_text(json.dumps([{"page_info": {}, "layout_dets": []}]), encoding="utf-8")
    assert detect_format(root).name == "sidecar"


def test_two_ground_truth_files_in_one_folder_are_refused(tmp_path: Path) -> None:
    root = folder(tmp_path, [page("a.jpg")], name="one.json")
    (root / "two.json").write_text(json.dumps([page("b.jpg")]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"2 OmniDocBench ground-truth files \('one.json', 'two.json'\); keep one"):
        load_dataset(root)


def test_images_are_checked_when_there_and_absent_images_only_stop_live_engines(tmp_path: Path) -> None:
    root = folder(tmp_path, [page("there.jpg"), page("absent.jpg"), page("text.jpg")], images=("there.jpg",))
    (root / "images" / "text.jpg").write_text("not an image", encoding="utf-8")
    dataset = load_dataset(root)
    assert "is not an image" in entry_error(dataset, "text.jpg")  # a file that is there but no image: errors
    absent = next(d for d in dataset if d.id == "absent.jpg")
    assert absent.error is None  # replayed predictions still score it
    with pytest.raises(EngineError, match=r"image '.*images/absent.jpg' of document 'absent.jpg' .* does not exist"):
        read_image(absent)  # what a live engine does first: one sentence naming the missing image


def test_no_images_folder_at_all_still_loads_every_page(tmp_path: Path) -> None:
    dataset = load_dataset(folder(tmp_path, [page("a.jpg"), page("b.jpg")]))
    assert [d.error for d in dataset] == [None, None]


def test_a_malformed_page_errors_that_page_and_the_others_load(tmp_path: Path) -> None:
    pages = [
        page("good.jpg"),
        page("dets.jpg", dets={"not": "a list"}),
        page("block.jpg", dets=[{"order": 1, "text": "no category"}]),
        page("text.jpg", dets=[{"category_type": "text_block", "text": ["a", "list"]}]),
        page("order.jpg", dets=[{"category_type": "text_block", "order": "first", "text": "x"}]),
        page("ignore.jpg", dets=[{"category_type": "text_block", "ignore": "yes", "text": "x"}]),
        page("attr.jpg", attributes={"language": 3}),
        page("relation.jpg", relation="none"),
    ]
    dataset = load_dataset(folder(tmp_path, pages))
    errors = {d.id: d.error for d in dataset}
    assert errors.pop("good.jpg") is None
    expected = {
        "dets.jpg": "page 2: 'layout_dets' must be a list of annotated blocks, got an object.",
        "block.jpg": "page 3, block 1: 'category_type' must be a block category",
        "text.jpg": "page 4, block 1: 'text' must be a string, got a list.",
        "order.jpg": "page 5, block 1: 'order' must be a number or null, got a string.",
        "ignore.jpg": "page 6, block 1: 'ignore' must be true or false, got a string.",
        "attr.jpg": "page 7: page attribute 'language' must be a string or a list of strings, got 3.",
        "relation.jpg": "page 8: 'extra.relation' must be a list of objects, got a string.",
    }
    assert set(errors) == set(expected)
    for doc_id, message in expected.items():
        assert message in str(errors[doc_id]), (doc_id, errors[doc_id])
        assert str(errors[doc_id]).startswith(str(dataset.root / "OmniDocBench.json"))


def test_pages_without_an_id_or_repeated_are_skipped_with_a_reason(tmp_path: Path) -> None:
    info_list = page("x.jpg")
    info_list["page_info"] = ["not", "an", "object"]
    no_path = page("x.jpg")
    del no_path["page_info"]["image_path"]
    pages = [page("a.jpg"), "a string", info_list, no_path, page("../outside.jpg"), page("a.jpg"), page("  ")]
    dataset = load_dataset(folder(tmp_path, pages))
    assert [d.id for d in dataset] == ["a.jpg"]
    reasons = [s.reason for s in dataset.skipped]
    assert len(reasons) == 6
    assert "page 2: the page must be an object with 'image_path', got a string" in reasons[0]
    assert "page 3: 'page_info' must be an object with 'image_path', got a list" in reasons[1]
    assert "page 4: 'page_info.image_path' must name the page's image, got null" in reasons[2]
    assert "leaves the dataset folder" in reasons[3]
    assert "page 6: image_path 'a.jpg' is already page 1" in reasons[4]
    assert "page 7: 'page_info.image_path' must name the page's image, got a string" in reasons[5]


@pytest.mark.parametrize(("content", "message"), [
    ("[{\"page_info\": ", "invalid JSON at line 1"),
    ('[{"layout_dets": ' + "[" * 100_000 + "]" * 100_000 + "}]", "nested deeper than Python's JSON parser allows"),
])
def test_a_broken_file_stops_the_dataset_with_one_sentence(tmp_path: Path, content: str, message: str) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "gt.json").write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        load_dataset(root)


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "gt.json").write_bytes(b'[{"page_info": {"image_path": "\xff.jpg"}, "layout_dets": []}]')
    with pytest.raises(DatasetError, match="is not valid UTF-8"):
        load_dataset(root)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")
def test_a_fifo_named_like_the_ground_truth_is_never_opened(tmp_path: Path) -> None:
    root = folder(tmp_path, [page("a.jpg")])
    os.mkfifo(root / "zz.json")  # would block a reader for ever
    assert [d.id for d in load_dataset(root)] == ["a.jpg"]  # detection sniffed it without blocking and left it out


def test_a_ground_truth_file_linked_from_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps([page("a.jpg")]), encoding="utf-8")
    root = tmp_path / "d"
    root.mkdir()
    (root / "gt.json").symlink_to(outside)
    with pytest.raises(DatasetError, match="outside the dataset folder"):
        load_dataset(root)


def test_replay_reads_the_benchmarks_prediction_name_and_keeps_the_markdown(tmp_path: Path) -> None:
    dataset = load_dataset(folder(tmp_path, [page("doc.pdf_3.jpg"), page("sub/other.jpg"), page("none.jpg")]))
    preds = tmp_path / "preds"
    preds.mkdir()
    markdown = "# Results\n\nThe method works.\n\n<table><tr><td>1</td></tr></table>\n"
    (preds / "doc.pdf_3.md").write_text(markdown, encoding="utf-8")
    (preds / "other.md").write_text("flat", encoding="utf-8")  # a page in a sub-folder: also found flat in DIR
    engine = ReplayEngine(preds)
    by_id = {d.id: d for d in dataset}
    output = engine.recognize(by_id["doc.pdf_3.jpg"])
    assert output.text == markdown.rstrip("\n") and output.metadata["prediction"].endswith("doc.pdf_3.md")
    assert engine.recognize(by_id["sub/other.jpg"]).text == "flat"
    with pytest.raises(EngineError, match=r"no prediction for page 'none.jpg': tried .*none.md.*<image stem>.md"):
        engine.recognize(by_id["none.jpg"])


def test_a_page_is_scored_with_the_omnidoc_metrics_and_absent_elements_have_no_value(tmp_path: Path) -> None:
    dataset = load_dataset(folder(tmp_path, [page("a.jpg")]))
    [document] = dataset.documents
    from pytest_ocrmetrics.engines.base import OcrOutput

    score = score_document(document, OcrOutput(text="# Results\n\nThe method wrks."), engine="e")
    expected = score_page(document.omnidoc_page, "# Results\n\nThe method wrks.").as_dict()
    assert {k: v for k, v in expected.items() if v is not None} == score.metrics  # the page metrics, nothing else
    assert set(score.details["omnidoc"]["absent"]) == {k for k, v in expected.items() if v is None}
    assert {"table_teds", "formula_edit"} <= set(score.details["omnidoc"]["absent"])  # this page has neither


needs_demo = pytest.mark.skipif(not (DEMO / "gt" / "OmniDocBench_demo.json").is_file(),
                                reason="the OmniDocBench demo data (../shared/data/acceptance/omnidocbench) is absent")


@needs_demo
def test_the_demo_ground_truth_loads_eighteen_pages_with_their_attributes() -> None:
    dataset = load_dataset(DEMO / "gt")
    assert dataset.format == "omnidocbench" and len(dataset) == 18 and not dataset.skipped
    assert all(d.error is None for d in dataset)  # no images/ in the demo: every page still loads
    tags = {t for d in dataset for t in d.tags}
    assert {"language:english", "language:simplified_chinese", "data_source:book", "layout:double_column"} <= tags
    predictions = {p.stem for p in (DEMO / "candidates" / "demo_pred").glob("*.md")}
    assert {Path(d.id).stem for d in dataset} == predictions  # every page has its <image stem>.md


def test_asserting_a_metric_a_page_has_no_element_for_says_so(tmp_path: Path) -> None:
    from pytest_ocrmetrics.assertions import assert_metric
    from pytest_ocrmetrics.engines.base import OcrOutput

    [document] = load_dataset(folder(tmp_path, [page("a.jpg")])).documents
    score = score_document(document, OcrOutput(text="# Results\n\nThe method works."), engine="e")
    with pytest.raises(AssertionError, match="table_teds has no value for document 'a.jpg': the page has no such "
                                             "element"):
        assert_metric(score, "table_teds", 0.8)
    assert assert_metric(score, "text_block_edit", 1.0) == score.metrics["text_block_edit"]
