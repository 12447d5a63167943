"""The evaluator and the ``ocrmetrics`` command line apply the plugin's resource limits and its cap on skipped-line
messages (issue 20 A12, A14, A15): a label file of many bad lines is a few log lines, an image with too many pixels
and a runaway prediction are skipped samples, and each limit is a setting."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from pytest_ocrmetrics.cli import main
from pytest_ocrmetrics.engines.base import EngineSpec, OcrOutput
from pytest_ocrmetrics.engines.registry import EngineRegistry
from pytest_ocrmetrics.evaluator import OCRDatasetEvaluator
from tests.test_evaluator import tiny_png
from tests.test_memory_bounds import png_header

LOGGER = "pytest_ocrmetrics.evaluator"


def _records(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in caplog.records if r.name == LOGGER and r.levelno >= logging.WARNING]


def _evaluate(label_file: Path, model: Any, **kwargs: Any) -> dict[str, Any]:
    evaluator = OCRDatasetEvaluator(model, **kwargs)
    return evaluator.evaluate_dataset(label_file, label_file.parent, stream=io.StringIO())


def _good_model(image: str) -> tuple[str, float]:
    return "AB12", 0.9


def test_many_bad_lines_are_summarised_after_the_first_ten(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "p.png").write_bytes(tiny_png())
    bad = [f"bad line {n} without a tab" for n in range(1, 1001)]
    label = tmp_path / "val.txt"
    label.write_text("p.png\tAB12\n" + "\n".join(bad) + "\n", encoding="utf-8")
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    result = _evaluate(label, _good_model)
    assert (result["total_samples"], result["evaluated_samples"], result["skipped_samples"]) == (1001, 1, 1000)
    records = _records(caplog)
    assert len(records) == 11  # the first ten, then one line for the 990 others
    assert all(level == "WARNING" for level, _ in records)
    assert [message.split(": ", 1)[0] for _, message in records[:10]] == [f"{label}:{n}" for n in range(2, 12)]
    assert records[10][1] == (f"{label}: and 990 more samples skipped (the first at {label}:12: line skipped: no tab "
                              "between image path and text (expected '<image path>\\t<text>'))")


def test_errors_are_capped_on_their_own_level(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "p.png").write_bytes(tiny_png())
    label = tmp_path / "val.txt"
    label.write_text("".join(f"p.png\tT{n}\n" for n in range(12)) + "missing.png\tX\n", encoding="utf-8")

    def failing(image: str) -> tuple[str, float]:
        raise RuntimeError("session failed")

    caplog.set_level(logging.DEBUG, logger=LOGGER)
    result = _evaluate(label, failing)
    assert result["skipped_samples"] == 13
    records = _records(caplog)
    levels = [level for level, _ in records]
    assert levels.count("ERROR") == 11 and levels.count("WARNING") == 2  # 10 + summary; the missing image + "none"
    assert (f"{label}: and 2 more samples skipped (the first at {label}:11: sample skipped: inference failed on "
            in "\n".join(message for _, message in records))


def test_max_image_pixels_skips_only_the_large_image_before_the_model_sees_it(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "big.png").write_bytes(png_header(30, 20))  # 600 pixels
    (tmp_path / "small.png").write_bytes(tiny_png())
    label = tmp_path / "val.txt"
    label.write_text("big.png\tAB12\nsmall.png\tAB12\n", encoding="utf-8")
    seen: list[str] = []

    def model(image: str) -> tuple[str, float]:
        seen.append(Path(image).name)
        return "AB12", 0.9

    assert _evaluate(label, model)["evaluated_samples"] == 2  # the default limit
    seen.clear()
    caplog.set_level(logging.WARNING, logger=LOGGER)
    result = _evaluate(label, model, max_image_pixels=599)
    assert (result["evaluated_samples"], result["skipped_samples"]) == (1, 1) and seen == ["small.png"]
    (level, message), = _records(caplog)
    assert level == "WARNING" and message.startswith(f"{label}:1: sample skipped: image ")
    assert "is 30 × 20 pixels (600), more than the 599 allowed (set by --ocr-max-image-pixels, or " \
           "--max-image-pixels of ocrmetrics evaluate)" in message


def test_max_image_pixels_reaches_a_registered_engine(tmp_path: Path) -> None:
    """An engine given by name reads the image through the document, under the same limit."""
    (tmp_path / "big.png").write_bytes(png_header(30, 20))
    label = tmp_path / "val.txt"
    label.write_text("big.png\tAB12\n", encoding="utf-8")
    limits: list[int] = []

    class Reading:
        name = "reading"

        def identity(self) -> dict[str, str]:
            return {"engine": "reading"}

        def recognize(self, document: Any) -> OcrOutput:
            limits.append(document.max_image_pixels)
            return OcrOutput(text="AB12", engine="reading")

        def close(self) -> None:
            pass

    registry = EngineRegistry()
    registry.register(EngineSpec("reading", lambda arg, options: Reading()))
    evaluator = OCRDatasetEvaluator("reading", registry=registry, max_image_pixels=1000)
    result = evaluator.evaluate_dataset(label, tmp_path, stream=io.StringIO())
    assert result["evaluated_samples"] == 1 and limits == [1000]


def test_a_runaway_prediction_is_skipped_not_aligned(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "p.png").write_bytes(tiny_png())
    (tmp_path / "q.png").write_bytes(tiny_png() + b"q")
    label = tmp_path / "val.txt"
    label.write_text("p.png\tAB12\nq.png\tAB12\n", encoding="utf-8")

    def model(image: str) -> tuple[str, float]:
        return ("Z" * 100 if image.endswith("p.png") else "AB12"), 0.9

    assert _evaluate(label, model)["evaluated_samples"] == 2  # 100 characters are within the default bound
    caplog.set_level(logging.WARNING, logger=LOGGER)
    result = _evaluate(label, model, max_output_chars=50)
    assert (result["evaluated_samples"], result["skipped_samples"], result["accuracy"]) == (1, 1, 1.0)
    (level, message), = _records(caplog)
    assert level == "ERROR" and message.startswith(f"{label}:1: sample skipped: unusable result for ")
    assert "the output is 100 characters, more than the 50 scored (set by --ocr-max-output-chars" in message


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"max_image_pixels": 0}, "max_image_pixels=0 would turn the limit off, which is not possible"),
    ({"max_output_chars": None}, "max_output_chars=None would turn the limit off, which is not possible"),
    ({"max_output_chars": 2.5}, "max_output_chars=2.5 is not a limit; give a whole number of characters"),
])
def test_a_bad_limit_is_a_value_error(kwargs: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        OCRDatasetEvaluator(_good_model, **kwargs)


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), stdout=out), out.getvalue()


def test_cli_evaluate_takes_both_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "big.png").write_bytes(png_header(30, 20))
    (tmp_path / "p.png").write_bytes(tiny_png())
    predictions = tmp_path / "preds"
    predictions.mkdir()
    (predictions / "big.txt").write_text("AB12", encoding="utf-8")
    (predictions / "p.txt").write_text("Z" * 100, encoding="utf-8")
    label = tmp_path / "val.txt"
    label.write_text("big.png\tAB12\np.png\tAB12\n", encoding="utf-8")
    code, out = run_cli("evaluate", str(label), "--engine", f"replay:{predictions}", "--json")
    assert code == 0 and json.loads(out)["evaluated_samples"] == 2
    code, out = run_cli("evaluate", str(label), "--engine", f"replay:{predictions}", "--json",
                        "--max-image-pixels", "599", "--max-output-chars", "50")
    assert code == 0 and (json.loads(out)["evaluated_samples"], json.loads(out)["skipped_samples"]) == (0, 2)
    err = capsys.readouterr().err
    assert "more than the 599 allowed" in err and "more than the 50 scored" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["--max-image-pixels", "0"], "argument --max-image-pixels: --max-image-pixels=0 would turn the limit off, which "
                                  "is not possible: one input could exhaust memory; give a (large) whole number of "
                                  "pixels instead"),
    (["--max-output-chars", "none"], "argument --max-output-chars: --max-output-chars=none would turn the limit off, "
                                     "which is not possible: one input could exhaust memory; give a (large) whole "
                                     "number of characters instead"),
])
def test_cli_evaluate_refuses_a_bad_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                          message: str) -> None:
    code, out = run_cli("evaluate", str(tmp_path / "val.txt"), "--engine", "replay", *argv)
    assert (code, out) == (2, "")
    err = capsys.readouterr().err
    assert f"ocrmetrics evaluate: error: {message}" in err and err.count("error:") == 1


def test_cli_score_applies_the_output_length_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ref.txt").write_text("AB12", encoding="utf-8")
    (tmp_path / "hyp.txt").write_text("Z" * 100, encoding="utf-8")
    code, out = run_cli("score", str(tmp_path / "ref.txt"), str(tmp_path / "hyp.txt"), "--json")
    assert code == 0 and json.loads(out)["results"][0]["metrics"]["cer"] > 1  # scored under the default bound
    code, out = run_cli("score", str(tmp_path / "ref.txt"), str(tmp_path / "hyp.txt"), "--max-output-chars", "50")
    assert (code, out) == (2, "")
    err = capsys.readouterr().err.strip()
    assert err == (f"ocrmetrics score: error: output {str(tmp_path / 'hyp.txt')!r} is not scored: the output is 100 "
                   "characters, more than the 50 scored (set by --ocr-max-output-chars, or --max-output-chars of "
                   "ocrmetrics; twice the reference when that is longer): aligning it would take about 16 kB of "
                   "memory; the engine probably looped or returned a binary file as text")
