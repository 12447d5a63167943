"""The OmniDocBench matcher and metrics on small hand-made pages: each case one rule of the benchmark."""

from __future__ import annotations

import random
from typing import Any

import pytest

for _module in ("apted", "lxml", "pylatexenc", "scipy", "bs4"):
    pytest.importorskip(_module, reason="the omnidoc extra is not installed (pip install pytest-ocrmetrics[omnidoc])")

from pytest_ocrmetrics.metrics.omnidoc import (
    MAX_PREDICTION_CHARS,
    OMNIDOC_METRICS,
    OmniDocInputError,
    PageScores,
    TableTooLargeError,
    page_has,
    score_page,
)
from pytest_ocrmetrics.metrics.omnidoc import teds as teds_module
from pytest_ocrmetrics.metrics.omnidoc.segment import segment_markdown


def make_page(*blocks: tuple[str, str], relations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A ground-truth page: ``(category, content)`` blocks in reading order (content is text, LaTeX or HTML)."""
    dets = []
    for number, (category, content) in enumerate(blocks, start=1):
        item: dict[str, Any] = {"category_type": category, "order": number, "anno_id": number, "ignore": False}
        key = {"table": "html", "equation_isolated": "latex"}.get(category, "text")
        item[key] = content
        dets.append(item)
    return {"page_info": {"image_path": "hand.jpg", "page_attribute": {}}, "layout_dets": dets,
            "extra": {"relation": relations or []}}


LONG = "The quick brown fox jumps over the lazy dog and keeps running far away into the hills"
OTHER = "Meanwhile the farmer counted his chickens twice before going to bed"
TABLE = "<table><tr><td>Name</td><td>Score</td></tr><tr><td>Ann</td><td>12</td></tr></table>"


def text_matches(scores: PageScores) -> list[tuple[str, str, float]]:
    return [(m.ground_truth, m.prediction, m.edit) for m in scores.matches if m.category == "text"]


def test_a_block_split_in_two_is_joined_back() -> None:
    page = make_page(("text_block", LONG), ("text_block", OTHER))
    half = LONG.index("the lazy")
    split = f"{LONG[:half]}\n\n{LONG[half:]}\n\n{OTHER}"
    scores = score_page(page, split)
    assert scores.text_block_edit == 0.0
    assert scores.reading_order_edit == 0.0
    normalised = "Thequickbrownfoxjumpsoverthelazydogandkeepsrunningfarawayintothehills"
    assert (normalised, normalised, 0.0) in text_matches(scores)


def test_two_blocks_merged_into_one_are_matched_together() -> None:
    page = make_page(("text_block", LONG), ("text_block", OTHER), ("text_block", "A third block stays alone here"))
    scores = score_page(page, f"{LONG} {OTHER}\n\nA third block stays alone here")
    assert scores.text_block_edit == 0.0
    merged = [m for m in text_matches(scores) if m[0].startswith("Thequick")]
    assert merged == [(merged[0][1], merged[0][1], 0.0)]
    assert merged[0][0].endswith("beforegoingtobed")  # both ground-truth blocks in one pair


def test_a_missing_table_scores_edit_one_and_teds_zero() -> None:
    scores = score_page(make_page(("text_block", LONG), ("table", TABLE)), LONG)
    assert (scores.table_edit, scores.table_teds, scores.table_teds_s) == (1.0, 0.0, 0.0)
    assert scores.text_block_edit == 0.0


def test_an_extra_table_is_not_scored_and_does_not_hurt_the_text() -> None:
    scores = score_page(make_page(("text_block", LONG), ("text_block", OTHER)), f"{LONG}\n\n{TABLE}\n\n{OTHER}")
    assert (scores.table_edit, scores.table_teds, scores.table_teds_s) == (None, None, None)
    assert scores.text_block_edit == 0.0
    assert not [m for m in scores.matches if m.category == "table"]


def test_a_pipe_table_and_an_html_table_with_the_same_cells_have_teds_one() -> None:
    page = make_page(("text_block", LONG), ("table", TABLE))
    html = score_page(page, f"{LONG}\n\n{TABLE}")
    pipe = score_page(page, f"{LONG}\n\n| Name | Score |\n|---|---|\n| Ann | 12 |\n")
    assert (html.table_teds, html.table_teds_s, html.table_edit) == (1.0, 1.0, 0.0)
    assert (pipe.table_teds, pipe.table_teds_s) == (1.0, 1.0)
    # the benchmark's pipe-table conversion writes colspan="1" rowspan="1" on every cell: the string edit sees them
    assert pipe.table_edit is not None and 0.0 < pipe.table_edit < 0.5
    assert 'colspan="1"' in next(m.prediction for m in pipe.matches if m.category == "table")


def test_rowspan_and_colspan_count_in_teds_s() -> None:
    spanned = '<table><tr><td colspan="2">Total</td></tr><tr><td rowspan="2">a</td><td>b</td></tr><tr><td>c</td></tr></table>'
    flat = "<table><tr><td>Total</td><td></td></tr><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>"
    page = make_page(("text_block", LONG), ("table", spanned))
    same = score_page(page, f"{LONG}\n\n{spanned}")
    assert (same.table_teds, same.table_teds_s) == (1.0, 1.0)
    lost = score_page(page, f"{LONG}\n\n{flat}")
    # two span renames (colspan 2 -> 1, rowspan 2 -> 1) and one inserted empty cell, over the flat table's 8 nodes
    assert (lost.table_teds, lost.table_teds_s) == (pytest.approx(1 - 3 / 8), pytest.approx(1 - 3 / 8))


@pytest.mark.parametrize("formula", ["$$E = mc^{2}$$", "\\[E = mc^{2}\\]", "$$\nE = mc^{2}\n$$"])
def test_display_formula_delimiters_do_not_matter(formula: str) -> None:
    page = make_page(("text_block", LONG), ("equation_isolated", "$$E=mc^{2}$$"), ("text_block", OTHER))
    scores = score_page(page, f"{LONG}\n\n{formula}\n\n{OTHER}")
    assert scores.formula_edit == 0.0
    assert [m.prediction for m in scores.matches if m.category == "formula"] == ["e=mc^{2}"]
    assert scores.text_block_edit == 0.0


def test_a_wrong_formula_has_its_edit_distance() -> None:
    page = make_page(("text_block", LONG), ("equation_isolated", "$$E=mc^{2}$$"))
    assert score_page(page, LONG + "\n\n$$E=mc^{3}$$").formula_edit == pytest.approx(1 / 8)


def test_cjk_text_keeps_its_characters_and_drops_punctuation() -> None:
    page = make_page(("text_block", "你好，世界。这是一个测试。"), ("text_block", "第二段文字在这里。"))
    assert score_page(page, "你好世界这是一个测试\n\n第二段文字在这里").text_block_edit == 0.0
    one_wrong = score_page(page, "你好，世界。这是一个测验。\n\n第二段文字在这里。")
    assert one_wrong.text_block_edit == pytest.approx(1 / (10 + 8))


def test_an_empty_prediction_scores_the_worst_and_keeps_none_where_there_is_nothing() -> None:
    page = make_page(("text_block", LONG), ("table", TABLE), ("equation_isolated", "x^2"))
    scores = score_page(page, "")
    assert scores.as_dict() == {"text_block_edit": 1.0, "reading_order_edit": 1.0, "table_edit": 1.0,
                                "table_teds": 0.0, "table_teds_s": 0.0, "formula_edit": 1.0}
    text_only = score_page(make_page(("text_block", LONG)), "")
    assert (text_only.table_teds, text_only.formula_edit) == (None, None)


def test_a_prediction_with_no_markdown_is_split_on_single_newlines() -> None:
    page = make_page(("title", "Plain Title"), ("text_block", LONG), ("text_block", OTHER))
    scores = score_page(page, f"Plain Title\n{LONG}\n{OTHER}")
    assert scores.text_block_edit == 0.0
    assert scores.reading_order_edit == 0.0
    assert [b.category for b in segment_markdown(f"Plain Title\n{LONG}\n{OTHER}")] == ["text_all"] * 3


def test_reading_order_counts_swapped_blocks() -> None:
    page = make_page(("text_block", LONG), ("text_block", OTHER), ("text_block", "Third block of text here"))
    scores = score_page(page, f"{OTHER}\n\n{LONG}\n\nThird block of text here")
    assert scores.text_block_edit == 0.0
    assert scores.reading_order_edit == pytest.approx(2 / 3)  # [1, 2, 3] read as [2, 1, 3]


def test_ignored_categories_count_in_no_metric() -> None:
    page = make_page(("header", "Journal of Tests 2024"), ("text_block", LONG), ("page_number", "17"),
                     ("text_block", OTHER))
    with_header = score_page(page, f"Journal of Tests 2024\n\n{LONG}\n\n{OTHER}\n\n17")
    without = score_page(page, f"{LONG}\n\n{OTHER}")
    assert with_header.text_block_edit == without.text_block_edit == 0.0
    assert {m.category for m in with_header.matches} >= {"header"}


def test_truncated_blocks_are_joined_before_matching() -> None:
    page = make_page(("text_block", "The first half of a sentence "), ("text_block", "continues on the next column."),
                     relations=[{"source_anno_id": 2, "target_anno_id": 1, "relation_type": "truncated"}])
    scores = score_page(page, "The first half of a sentence continues on the next column.")
    assert scores.text_block_edit == 0.0
    assert len(text_matches(scores)) == 1


def test_page_has_and_as_dict_name_the_six_metrics() -> None:
    page = make_page(("text_block", LONG), ("table", TABLE))
    assert page_has(page) == {"text_block_edit", "reading_order_edit", "table_edit", "table_teds", "table_teds_s"}
    assert page_has(make_page(("equation_isolated", "x"))) == {"formula_edit"}
    assert page_has(make_page(("header", "only a header"))) == set()
    assert tuple(score_page(page, LONG).as_dict()) == OMNIDOC_METRICS


# hostile input: bounded, one sentence


def _one_sentence(error: BaseException) -> str:
    message = str(error)
    assert "\n" not in message and message.endswith(".") and message.count(". ") == 0, message
    return message


def test_a_huge_predicted_table_is_refused_in_one_sentence() -> None:
    huge = "<table>" + "<tr><td>1</td><td>2</td></tr>" * 2500 + "</table>"
    with pytest.raises(TableTooLargeError) as caught:
        score_page(make_page(("text_block", LONG), ("table", TABLE)), f"{LONG}\n\n{huge}")
    assert "7500 HTML elements" in _one_sentence(caught.value)


def test_a_deeply_nested_table_is_refused_in_one_sentence() -> None:
    deep = "<table><tr><td>" + "<b>" * 100 + "x" + "</b>" * 100 + "</td></tr></table>"
    with pytest.raises(TableTooLargeError) as caught:
        score_page(make_page(("text_block", LONG), ("table", TABLE)), f"{LONG}\n\n{deep}")
    assert "nested more than" in _one_sentence(caught.value)


def test_nested_tables_are_one_table() -> None:
    nested = "<table><tr><td><table><tr><td>in</td></tr></table></td></tr></table>"
    blocks = segment_markdown(f"before\n\n{nested}\n\nafter")
    assert [(b.category, b.content) for b in blocks if b.category == "html_table"] == [("html_table", nested)]
    scores = score_page(make_page(("text_block", "before"), ("table", TABLE), ("text_block", "after")),
                        f"before\n\n{nested}\n\nafter")
    assert scores.table_teds is not None and 0.0 <= scores.table_teds < 1.0


def test_an_unclosed_table_does_not_hang() -> None:
    scores = score_page(make_page(("text_block", LONG), ("table", TABLE)), f"{LONG}\n\n<table><tr><td>x" * 200)
    assert scores.table_edit is not None


@pytest.mark.parametrize(("page", "prediction", "fragment"), [
    ({"layout_dets": "nope"}, "x", "'layout_dets'"),
    ({"layout_dets": [{"text": "no category"}]}, "x", "layout_dets[0]"),
    ({"layout_dets": [{"category_type": "text_block", "order": 1}]}, "x", "(text_block) of the ground-truth page"),
    ({"layout_dets": [{"category_type": "equation_isolated", "latex": None}]}, "x", "no 'latex' text"),
    ({"layout_dets": [{"category_type": "title", "text": "t", "order": "first"}]}, "x", "non-numeric 'order'"),
    (make_page(("text_block", "x")), b"bytes", "must be text"),
    (make_page(("text_block", "x")), "x" * (MAX_PREDICTION_CHARS + 1), "characters, more than"),
])
def test_bad_input_is_one_sentence(page: Any, prediction: Any, fragment: str) -> None:
    with pytest.raises(OmniDocInputError) as caught:
        score_page(page, prediction)
    assert fragment in _one_sentence(caught.value)


# the fast table tree edit distance against apted (the benchmark's algorithm), on random tables


def _random_table(rng: random.Random) -> str:
    rows = []
    for _ in range(rng.randint(0, 5)):
        cells = []
        for _ in range(rng.randint(0, 5)):
            span = rng.choice(["", "", "", ' colspan="2"', ' rowspan="2"'])
            text = "".join(rng.choice("abcd ") for _ in range(rng.randint(0, 4)))
            if rng.random() < 0.2:
                text = f"<b>{text}</b>x"
            cells.append(f"<td{span}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return '<html><body><table border="1" >' + "".join(rows) + "</table></body></html>"


def test_fast_tree_edit_distance_equals_apted() -> None:
    rng = random.Random(20240)
    for _ in range(300):
        first, second = teds_module._table(_random_table(rng)), teds_module._table(_random_table(rng))
        for structure_only in (False, True):
            fast = teds_module._fast_distance(first, second, structure_only)
            slow = teds_module._apted_distance(first, second, structure_only, 1)
            assert fast == pytest.approx(slow, abs=1e-9)


def test_a_table_of_another_shape_goes_to_apted() -> None:
    odd = '<html><body><table border="1" ><caption>c</caption><tr><td>a</td></tr></table></body></html>'
    plain = '<html><body><table border="1" ><tr><td>a</td></tr></table></body></html>'
    assert teds_module._fast_distance(teds_module._table(odd), teds_module._table(plain), False) is None
    # the caption (a node without td content) is deleted: distance 1 over the larger tree's 3 nodes
    assert teds_module.teds_pair(odd, plain) == (pytest.approx(1 - 1 / 3), pytest.approx(1 - 1 / 3))


def test_the_quick_match_falls_back_to_the_simple_match_past_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_ocrmetrics.metrics.omnidoc import match

    calls: list[int] = []
    simple = match.simple_text_match
    monkeypatch.setattr(match, "simple_text_match", lambda g, p: calls.append(1) or simple(g, p))
    page = make_page(("text_block", LONG), ("text_block", OTHER), ("text_block", "A third block"))
    split = f"{LONG[:40]}\n\n{LONG[40:]}\n\n{OTHER}\n\nA third block"
    assert score_page(page, split).text_block_edit == 0.0 and not calls  # the split block is joined back
    monkeypatch.setattr(match, "WINDOW_BUDGET", 10)
    fallback = score_page(page, split)
    assert calls == [1]
    assert fallback.text_block_edit is not None and fallback.text_block_edit > 0.0  # no split handling there


def test_a_runaway_repetition_is_scored_within_bounds() -> None:
    page = make_page(("text_block", LONG), ("text_block", OTHER), ("table", TABLE))
    scores = score_page(page, (LONG + " ") * 5000 + "\n\n" + "\n\n".join(["word"] * 3000))
    assert scores.text_block_edit is not None and scores.text_block_edit > 0.9
    assert scores.table_teds == 0.0


def test_a_missing_extra_is_named_in_one_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "apted" else real(name, *a))
    with pytest.raises(OmniDocInputError) as caught:
        score_page(make_page(("text_block", "x")), "x")
    assert "(missing: apted)" in _one_sentence(caught.value)
    assert "pytest-ocrmetrics[omnidoc]" in str(caught.value)


def test_importing_the_package_loads_none_of_the_heavy_modules() -> None:
    import subprocess
    import sys

    code = ("import sys, pytest_ocrmetrics.metrics.omnidoc; "
            "print(sorted(m for m in ('numpy', 'scipy', 'bs4', 'lxml', 'apted', 'pylatexenc', 'pytest') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
