"""The licence-plate evaluator (documents 003/004): ``OCRDatasetEvaluator`` and ``ocrmetrics evaluate``."""

from __future__ import annotations

import io
import json
import logging
import math
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any, Mapping

import pytest

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import EngineError, EngineSpec, OcrOutput
from pytest_ocrmetrics.engines.registry import EngineRegistry
from pytest_ocrmetrics.evaluator import OCRDatasetEvaluator, format_json, format_table, score_sample
from pytest_ocrmetrics.scoring.diff import display_width

GOLDEN = Path(__file__).parent / "golden"
LOGGER = "pytest_ocrmetrics.evaluator"
SAMPLE_KEYS = ["image_path", "ground_truth", "predicted_text", "confidence", "is_correct", "edit_distance",
               "normalized_edit_distance"]
RESULT_KEYS = ["accuracy", "normalized_edit_distance", "edit_distance_similarity", "total_samples",
               "evaluated_samples", "filtered_samples", "skipped_samples", "evaluation_time", "avg_inference_time_ms"]


def tiny_png() -> bytes:
    """A valid 1x1 grey PNG (the datasets check an image's first bytes)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00\x80")) + chunk(b"IEND", b""))


# The label file of the acceptance test: one line per case of document 004's error table.
LABEL_LINES = [
    "images/p01.png\t京A12345",   # 1 correct
    "images/p02.png\t沪B67890",   # 2 one substitution: NED 1/7
    "images/p03.png 京C00000",    # 3 bad line: no tab -> skipped
    "images/missing.png\t粤D11111",  # 4 missing image -> skipped
    "images/p05.png\t",          # 5 empty ground truth -> skipped
    "images/p06.png\t苏E22222",   # 6 confidence 0.3 < 0.5 -> filtered
    "images/p07.png\t浙F33333",   # 7 empty prediction: 7 edits, NED 1.0
    "images/p08.png\tAB12",      # 8 (text, confidence) without char confidences, correct
    "images/p09.png\tXY99",      # 9 the model raises -> skipped
    "",                          # 10 blank: not a sample
    "images/p10.png\tNOTIMG",    # 11 a text file named .png -> skipped
]
PREDICTIONS: dict[str, Any] = {
    "p01.png": ("京A12345", 0.98, [0.99] * 7),
    "p02.png": ("沪B67B90", 0.9, [0.9] * 7),
    "p06.png": ("苏E22222", 0.3, [0.3] * 7),
    "p07.png": ("", 0.9, []),
    "p08.png": ("AB12", 0.7),
}


def fake_model(image: str) -> Any:
    """An OCRONNX-style model: image path in, (text, confidence[, char confidences]) out."""
    name = Path(image).name
    if name not in PREDICTIONS:
        raise RuntimeError(f"ONNX session failed on {name}")
    return PREDICTIONS[name]


@pytest.fixture
def plates(tmp_path: Path) -> Path:
    """``plates/val.txt`` (LABEL_LINES) with its images; returns the label file."""
    root = tmp_path / "plates"
    (root / "images").mkdir(parents=True)
    for number in (1, 2, 3, 5, 6, 7, 8, 9):
        (root / "images" / f"p{number:02d}.png").write_bytes(tiny_png())
    (root / "images" / "p10.png").write_text("not an image\n", encoding="utf-8")
    label_file = root / "val.txt"
    label_file.write_text("\n".join(LABEL_LINES) + "\n", encoding="utf-8")
    return label_file


def evaluate(label_file: Path, model: Any = fake_model, **kwargs: Any) -> tuple[dict[str, Any], str]:
    out = io.StringIO()
    result = OCRDatasetEvaluator(model).evaluate_dataset(label_file, label_file.parent, stream=out, **kwargs)
    return result, out.getvalue()


# ------------------------------------------------------------------------------------------ the acceptance case


def test_counts_and_metrics_follow_the_documents_error_table(plates: Path) -> None:
    result, _ = evaluate(plates)
    assert list(result) == RESULT_KEYS  # per_sample_results only when asked
    assert (result["total_samples"], result["evaluated_samples"], result["filtered_samples"],
            result["skipped_samples"]) == (10, 4, 1, 5)
    assert result["accuracy"] == 2 / 4
    assert result["normalized_edit_distance"] == pytest.approx((0 + 1 / 7 + 1 + 0) / 4)
    assert result["edit_distance_similarity"] == pytest.approx(1 - (0 + 1 / 7 + 1 + 0) / 4)
    assert result["evaluation_time"] > 0 and result["avg_inference_time_ms"] >= 0


def test_table_is_the_documents_two_row_table(plates: Path) -> None:
    _, printed = evaluate(plates)
    assert printed == (GOLDEN / "evaluator_table.txt").read_text(encoding="utf-8")


def test_table_columns_line_up_in_display_cells() -> None:
    table = format_table({"accuracy": 1, "normalized_edit_distance": 0, "edit_distance_similarity": 1,
                          "total_samples": 123456, "evaluated_samples": 7, "filtered_samples": 0,
                          "skipped_samples": 0}).split("\n")

    def starts(line: str) -> list[int]:  # display column where each cell begins
        cells, column, previous = [], 0, " "
        for ch in line:
            if ch != " " and previous == " ":
                cells.append(column)
            column += display_width(ch)
            previous = ch
        return cells

    # name column 18 cells, value columns 12; the 14-cell headers widen their column to 16
    assert starts(table[0]) == starts(table[1]) == [0, 18, 30, 46]
    assert table[2] == ""
    assert starts(table[3]) == starts(table[4]) == [0, 18, 30, 42, 54]


def test_per_sample_results_only_when_asked(plates: Path) -> None:
    result, _ = evaluate(plates, include_per_sample_results=True)
    samples = result["per_sample_results"]
    assert [list(s) for s in samples] == [SAMPLE_KEYS] * 4
    assert [s["image_path"] for s in samples] == ["images/p01.png", "images/p02.png", "images/p07.png",
                                                  "images/p08.png"]
    first, second, empty, two_tuple = samples
    assert first == {"image_path": "images/p01.png", "ground_truth": "京A12345", "predicted_text": "京A12345",
                     "confidence": 0.98, "is_correct": True, "edit_distance": 0, "normalized_edit_distance": 0.0}
    assert (second["edit_distance"], second["normalized_edit_distance"], second["is_correct"]) == (1, 1 / 7, False)
    assert (empty["predicted_text"], empty["edit_distance"], empty["normalized_edit_distance"]) == ("", 7, 1.0)
    assert two_tuple["confidence"] == 0.7 and two_tuple["is_correct"]
    assert all(s["is_correct"] == (s["edit_distance"] == 0) for s in samples)
    # the metrics are the means over exactly these samples
    assert result["accuracy"] == sum(s["is_correct"] for s in samples) / len(samples)
    assert result["normalized_edit_distance"] == pytest.approx(
        sum(s["normalized_edit_distance"] for s in samples) / len(samples))


def test_each_skipped_line_is_logged_with_its_file_line_and_level(plates: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    evaluate(plates)
    records = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER]
    where = f"{plates}:"
    expected = [
        ("WARNING", f"{where}3: line skipped: no tab"),
        ("WARNING", f"{where}4: sample skipped: image {str(plates.parent / 'images' / 'missing.png')!r} does not exist"),
        ("WARNING", f"{where}5: line skipped: the ground truth after the tab is empty"),
        ("DEBUG", f"{where}6: sample filtered: confidence 0.3 < conf_threshold 0.5"),
        ("DEBUG", f"{where}7: empty prediction, scored as 7 edits"),
        ("ERROR", f"{where}9: sample skipped: inference failed on "),
        ("WARNING", f"{where}11: sample skipped: image "),
    ]
    assert len(records) == len(expected)
    for (level, message), (want_level, start) in zip(records, expected):
        assert level == want_level and message.startswith(start), (level, message)
    assert "RuntimeError: ONNX session failed on p09.png" in records[5][1]
    assert "is not an image" in records[6][1]


def test_progress_is_logged_every_50_images(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "img").mkdir()
    lines = []
    for i in range(120):
        (tmp_path / "img" / f"{i}.png").write_bytes(tiny_png())
        lines.append(f"img/{i}.png\tP{i}")
    (tmp_path / "train.txt").write_text("\n".join(lines), encoding="utf-8")
    caplog.set_level(logging.INFO, logger=LOGGER)
    result, _ = evaluate(tmp_path / "train.txt", lambda image: ("P" + Path(image).stem, 1.0))
    assert result["accuracy"] == 1.0 and result["evaluated_samples"] == 120
    progress = [r for r in caplog.records if r.name == LOGGER and r.levelno == logging.INFO]
    assert [r.getMessage() for r in progress] == ["处理进度: 50/120 (41.7%)", "处理进度: 100/120 (83.3%)"]


def test_max_images_takes_the_first_lines_of_the_file(plates: Path) -> None:
    result, _ = evaluate(plates, max_images=3, include_per_sample_results=True)
    assert (result["total_samples"], result["evaluated_samples"], result["skipped_samples"]) == (3, 2, 1)
    assert [s["image_path"] for s in result["per_sample_results"]] == ["images/p01.png", "images/p02.png"]


def test_a_confidence_equal_to_the_threshold_is_evaluated(plates: Path) -> None:
    assert evaluate(plates, conf_threshold=0.3)[0]["filtered_samples"] == 0
    assert evaluate(plates, conf_threshold=0.0)[0]["filtered_samples"] == 0
    at_one = evaluate(plates, conf_threshold=1.0)[0]
    assert (at_one["evaluated_samples"], at_one["filtered_samples"]) == (0, 5)


def test_nothing_evaluated_reports_the_worst_values_with_a_warning(plates: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    result, _ = evaluate(plates, conf_threshold=1.0)
    assert (result["accuracy"], result["normalized_edit_distance"], result["edit_distance_similarity"]) == (0, 1, 0)
    assert any("no sample was evaluated" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)


def test_json_output_prints_the_returned_result(plates: Path) -> None:
    result, printed = evaluate(plates, output_format="json")
    assert json.loads(printed) == result
    assert "京A12345" not in printed  # no per-sample results unless asked
    result, printed = evaluate(plates, output_format="json", include_per_sample_results=True)
    assert json.loads(printed) == result and "京A12345" in printed  # CJK readable, not \\u escapes


def test_the_metrics_are_the_documents_definitions_on_code_points() -> None:
    assert score_sample("京A12345", "京A12346") == (1, 1 / 7)       # document 003 story 2, scenario 1
    assert score_sample("京A12345", "京A123") == (2, 2 / 7)          # normalised by the longer string
    assert score_sample("京A12345", "") == (7, 1.0)                 # empty prediction: len(gt) edits
    assert score_sample("", "") == (0, 0.0)
    assert score_sample("é", "e\u0301") == (2, 1.0)                 # no normalization: code points as they are
    assert score_sample("AB12", "ab12")[0] == 2                     # case counts


# ------------------------------------------------------------------------------------------------ validation


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"conf_threshold": -0.1}, ValueError, "conf_threshold must be a number in [0, 1], got -0.1"),
    ({"conf_threshold": 1.5}, ValueError, "got 1.5"),
    ({"conf_threshold": math.nan}, ValueError, "got nan"),
    ({"conf_threshold": True}, ValueError, "got True"),
    ({"conf_threshold": "high"}, ValueError, "got 'high'"),
    ({"output_format": "tabel"}, ValueError, "output_format must be 'table' or 'json', got 'tabel' (did you mean 'table'?)"),
    ({"output_format": "csv"}, ValueError, "got 'csv'"),
    ({"max_images": 0}, ValueError, "max_images must be a whole number of 1 or more"),
    ({"max_images": 2.5}, ValueError, "got 2.5"),
])
def test_invalid_arguments_are_one_sentence(plates: Path, kwargs: dict[str, Any], error: type, words: str) -> None:
    with pytest.raises(error) as caught:
        evaluate(plates, **kwargs)
    assert words in str(caught.value)


def test_a_missing_label_file_raises_and_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(FileNotFoundError, match=r"label file '.*val\.txt' does not exist; give the"):
        OCRDatasetEvaluator(fake_model).evaluate_dataset(tmp_path / "val.txt", tmp_path)
    assert [r.levelname for r in caplog.records if r.name == LOGGER] == ["ERROR"]
    with pytest.raises(IsADirectoryError, match="is not a file"):
        OCRDatasetEvaluator(fake_model).evaluate_dataset(tmp_path, tmp_path)


def test_the_base_path_must_be_a_directory(plates: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"dataset base path '.*nowhere' does not exist; give the folder"):
        OCRDatasetEvaluator(fake_model).evaluate_dataset(plates, plates.parent / "nowhere")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        OCRDatasetEvaluator(fake_model).evaluate_dataset(plates, plates)


def test_a_label_file_that_is_not_utf8_is_a_value_error(tmp_path: Path) -> None:
    (tmp_path / "val.txt").write_bytes("a.png\t京A".encode("gb18030"))
    with pytest.raises(ValueError, match="label file is not valid UTF-8"):
        OCRDatasetEvaluator(fake_model).evaluate_dataset(tmp_path / "val.txt", tmp_path)


def test_an_unusable_model_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="ocr_model must be a callable returning"):
        OCRDatasetEvaluator(42)
    with pytest.raises(TypeError, match="engine_options only apply to an engine given by name"):
        OCRDatasetEvaluator(fake_model, engine_options={"lang": "deu"})


@pytest.mark.parametrize(("output", "reason"), [
    (None, "got NoneType"),
    (("A", 0.9, [], "extra"), "got 4 items"),
    ((123, 0.9), "the predicted text must be a string, got int"),
    (("A", math.nan), "the confidence must be a number in [0, 1] or None, got nan"),
    (("A", 1.5), "got 1.5"),
    (("A", -0.2), "got -0.2"),
    (("A", "0.9"), "got '0.9'"),
])
def test_an_unusable_model_output_skips_the_sample(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                   output: Any, reason: str) -> None:
    (tmp_path / "a.png").write_bytes(tiny_png())
    (tmp_path / "val.txt").write_text("a.png\tA\n", encoding="utf-8")
    result, _ = evaluate(tmp_path / "val.txt", lambda image: output)
    assert (result["skipped_samples"], result["evaluated_samples"]) == (1, 0)
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and reason in errors[0]
    # the model ran: its answer is unusable, its inference did not fail (issue 20 C7: a NaN read "inference failed")
    assert f"sample skipped: unusable result for {str(tmp_path / 'a.png')!r}: " in errors[0]
    assert "inference failed" not in errors[0]


def test_label_file_details_bom_crlf_absolute_paths_duplicates(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.png").write_bytes(tiny_png())
    base = tmp_path / "base"
    base.mkdir()
    (base / "a.png").write_bytes(tiny_png())
    (tmp_path / "val.txt").write_bytes(("\ufeffa.png\tA 1 \r\n" + f"{elsewhere / 'x.png'}\tX\r\n" + "a.png\tA 1 \r\n")
                                       .encode("utf-8"))
    seen: list[str] = []

    def model(image: str) -> tuple[str, float]:
        seen.append(image)
        return ("A 1 " if image.endswith("a.png") else "X"), 0.9

    result = OCRDatasetEvaluator(model).evaluate_dataset(tmp_path / "val.txt", base, stream=io.StringIO(),
                                                         include_per_sample_results=True)
    assert (result["total_samples"], result["accuracy"]) == (3, 1.0)  # a duplicated image is two samples
    assert seen == [str(base / "a.png"), str(elsewhere / "x.png"), str(base / "a.png")]
    assert result["per_sample_results"][0]["ground_truth"] == "A 1 "  # verbatim, only the \r dropped


def test_image_loader_hands_the_model_arrays(plates: Path) -> None:
    loaded: list[str] = []

    def loader(path: str) -> Any:
        loaded.append(path)
        return None if path.endswith("p08.png") else {"pixels": path}  # cv2.imread: None for an unreadable image

    def model(image: Mapping[str, str]) -> Any:
        return fake_model(image["pixels"])

    out = io.StringIO()
    result = OCRDatasetEvaluator(model, image_loader=loader).evaluate_dataset(plates, plates.parent, stream=out)
    assert loaded[0] == str(plates.parent / "images" / "p01.png")
    assert (result["evaluated_samples"], result["skipped_samples"]) == (3, 6)  # p08 now unreadable


def test_hostile_texts(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(tiny_png())
    (tmp_path / "b.png").write_bytes(tiny_png())
    huge = "京" * 20000
    (tmp_path / "val.txt").write_text(f"a.png\t\x1b[31mA\x00B\u202e\nb.png\t{huge}\n", encoding="utf-8")
    answers = {"a.png": ("\ud800\x1b[31mA\x00B", 0.9), "b.png": (huge[:-1] + "x", 0.9)}
    result, printed = evaluate(tmp_path / "val.txt", lambda image: answers[Path(image).name], output_format="json",
                               include_per_sample_results=True)
    assert json.loads(printed) == json.loads(format_json(result))
    printed.encode("utf-8")  # a lone surrogate from the model is escaped, so the JSON can be written anywhere
    assert json.loads(printed)["per_sample_results"][0]["predicted_text"] == "\ud800\x1b[31mA\x00B"
    assert result["per_sample_results"][1]["edit_distance"] == 1
    assert "\x1b" not in format_table(result)


# ------------------------------------------------------------------------------------------------------ engines


class UppercaseEngine:
    """An engine registered by the test: the document's reference, uppercased (a confidence only when asked)."""

    name = "upper"

    def __init__(self, confidence: str | None) -> None:
        self.confidence = None if confidence is None else float(confidence)
        self.documents: list[Document] = []
        self.closed = False

    def identity(self) -> Mapping[str, Any]:
        return {"engine": self.name}

    def recognize(self, document: Document) -> OcrOutput:
        self.documents.append(document)
        if document.id.endswith("p09.png"):
            raise EngineError(f"server error on {document.id}")
        return OcrOutput(text=(document.reference_text or "").upper(), engine=self.name, confidence=self.confidence)

    def close(self) -> None:
        self.closed = True


def test_a_registered_engine_by_name_with_settings(plates: Path) -> None:
    created: list[UppercaseEngine] = []

    def factory(arg: str | None, options: Mapping[str, str]) -> UppercaseEngine:
        created.append(UppercaseEngine(options.get("confidence")))
        return created[-1]

    registry = EngineRegistry()
    registry.register(EngineSpec("upper", factory, options={"confidence": "confidence to report"}))
    with OCRDatasetEvaluator("upper", engine_options={"confidence": "0.4"}, registry=registry) as evaluator:
        low = evaluator.evaluate_dataset(plates, plates.parent, stream=io.StringIO())
        high = evaluator.evaluate_dataset(plates, plates.parent, conf_threshold=0.4, stream=io.StringIO())
    assert created[0].closed  # created from a name: the evaluator closes it
    assert (low["evaluated_samples"], low["filtered_samples"]) == (0, 5)
    assert (high["evaluated_samples"], high["skipped_samples"], high["accuracy"]) == (5, 5, 1.0)
    document = created[0].documents[0]
    assert (document.id, document.reference_text, document.image_path) == (
        "images/p01.png", "京A12345", plates.parent / "images" / "p01.png")
    with pytest.raises(ValueError, match=r"unknown setting upper\.confidense \(did you mean 'upper\.confidence'\?\)"):
        OCRDatasetEvaluator("upper", engine_options={"confidense": "1"}, registry=registry)
    with pytest.raises(ValueError, match=r"unknown OCR engine 'uper' \(did you mean 'upper'\?\)"):
        OCRDatasetEvaluator("uper", registry=registry)


def test_an_engine_instance_without_confidence_is_never_filtered(plates: Path) -> None:
    engine = UppercaseEngine(None)
    result = OCRDatasetEvaluator(engine).evaluate_dataset(plates, plates.parent, conf_threshold=1.0,
                                                          include_per_sample_results=True, stream=io.StringIO())
    assert (result["evaluated_samples"], result["filtered_samples"], result["skipped_samples"]) == (5, 0, 5)
    assert result["per_sample_results"][0]["confidence"] is None
    assert not engine.closed  # passed in: left to its owner


def write_replay_predictions(plates: Path) -> Path:
    """Predictions for the ``replay`` engine giving the same outcomes as :func:`fake_model` (p09 has none)."""
    predictions = plates.parent / "predictions"
    (predictions / "images").mkdir(parents=True)
    for name, output in PREDICTIONS.items():
        (predictions / "images" / f"{name}.txt").write_text(output[0], encoding="utf-8")
        (predictions / "images" / f"{name}.json").write_text(json.dumps({"fields": {}, "confidence": output[1]}),
                                                             encoding="utf-8")
    return predictions


def test_the_replay_engine_by_name(plates: Path) -> None:
    predictions = write_replay_predictions(plates)
    out = io.StringIO()
    with OCRDatasetEvaluator(f"replay:{predictions}") as evaluator:
        result = evaluator.evaluate_dataset(plates, plates.parent, stream=out)
    assert (result["evaluated_samples"], result["filtered_samples"], result["skipped_samples"]) == (4, 1, 5)
    assert out.getvalue() == (GOLDEN / "evaluator_table.txt").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- import and CLI


def test_the_evaluator_is_exported_lazily() -> None:
    code = ("import sys, pytest_ocrmetrics; assert 'pytest_ocrmetrics.evaluator' not in sys.modules; "
            "from pytest_ocrmetrics import OCRDatasetEvaluator; print(OCRDatasetEvaluator.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "pytest_ocrmetrics.evaluator"


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), stdout=out), out.getvalue()


def test_cli_prints_the_table_and_logs_to_stderr(plates: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    predictions = write_replay_predictions(plates)
    monkeypatch.chdir(plates.parent.parent)  # relative paths: images are found next to the label file
    code, out = run_cli("evaluate", "plates/val.txt", "--engine", f"replay:{predictions}")
    assert code == 0
    assert out == (GOLDEN / "evaluator_table.txt").read_text(encoding="utf-8")
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("ocrmetrics evaluate: warning: plates/val.txt:3: line skipped: no tab")
    assert any(line.startswith("ocrmetrics evaluate: error: plates/val.txt:9: sample skipped: inference failed")
               for line in err)
    assert not logging.getLogger(LOGGER).handlers  # the command removes its handler


def test_cli_json_with_settings_base_path_and_limits(plates: Path, tmp_path: Path) -> None:
    predictions = write_replay_predictions(plates)
    moved = tmp_path / "labels" / "val.txt"
    moved.parent.mkdir()
    moved.write_bytes(plates.read_bytes())
    code, out = run_cli("evaluate", str(moved), "--engine", "replay", "--engine-option", f"replay.dir={predictions}",
                        "--base-path", str(plates.parent), "--conf-threshold", "0.25", "--json")
    assert code == 0
    result = json.loads(out)
    assert list(result) == RESULT_KEYS
    assert (result["evaluated_samples"], result["filtered_samples"], result["skipped_samples"]) == (5, 0, 5)
    code, out = run_cli("evaluate", str(plates), "--engine", f"replay:{predictions}", "--max-images", "2",
                        "--per-sample")
    assert code == 0
    samples = json.loads(out)["per_sample_results"]
    assert [s["predicted_text"] for s in samples] == ["京A12345", "沪B67B90"]


@pytest.mark.parametrize(("argv", "message"), [
    (["missing.txt", "--engine", "replay:{predictions}"], "label file 'missing.txt' does not exist"),
    (["{label}", "--engine", "replya:{predictions}"], "unknown OCR engine 'replya' (did you mean 'replay'?)"),
    (["{label}", "--engine", "replay:{predictions}", "--conf-threshold", "1.2"],
     "argument --conf-threshold: conf_threshold must be a number in [0, 1], got '1.2'"),
    (["{label}", "--engine", "replay:{predictions}", "--max-images", "0"], "argument --max-images: max_images must"),
    (["{label}", "--engine", "replay", "--engine-option", "tesseract.lang=deu"],
     "--engine-option tesseract.KEY=VALUE is a setting of engine 'tesseract', but --engine is 'replay'"),
    (["{label}", "--engine", "replay:{predictions}", "--base-path", "nowhere"],
     "dataset base path 'nowhere' does not exist"),
    (["{label}"], "the following arguments are required: --engine"),
])
def test_cli_usage_errors_exit_2_with_one_line(plates: Path, capsys: pytest.CaptureFixture[str],
                                               argv: list[str], message: str) -> None:
    predictions = write_replay_predictions(plates)
    words = [w.format(label=plates, predictions=predictions) for w in argv]
    code, out = run_cli("evaluate", *words)
    assert (code, out) == (2, "")
    err = capsys.readouterr().err
    assert f"ocrmetrics evaluate: error: {message}" in err
    assert err.count("error:") == 1


def test_tesseract_on_the_example_plates() -> None:
    """A real engine end to end: the example plate suite through Tesseract (skipped where it is not installed)."""
    from pytest_ocrmetrics.engines.base import EngineUnavailable

    labels = Path(__file__).resolve().parents[1] / "example_suites" / "plates" / "data" / "labels.tsv"
    try:
        evaluator = OCRDatasetEvaluator("tesseract", engine_options={"psm": "7"})
    except EngineUnavailable as exc:
        pytest.skip(str(exc))
    with evaluator:
        result = evaluator.evaluate_dataset(labels, labels.parent, conf_threshold=0.0, stream=io.StringIO(),
                                            include_per_sample_results=True)
    assert (result["total_samples"], result["evaluated_samples"], result["skipped_samples"]) == (10, 10, 0)
    samples = {s["image_path"]: s for s in result["per_sample_results"]}
    assert samples["images/plate_01.png"]["predicted_text"] == "AB12 CDE"  # a clean Latin plate is read exactly
    assert all(0.0 <= s["confidence"] <= 1.0 for s in samples.values())
    assert result["accuracy"] == sum(s["is_correct"] for s in samples.values()) / 10
