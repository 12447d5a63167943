"""``ocrmetrics serve``'s JSON API against a real server on 127.0.0.1 (port 0), and the ``serve`` command itself.

The specification's examples are checked with the values of its own formulas: "The quick brown fox" vs "The quik
brown" is P 2/3, R 2/4; the manual example's average CRR is (7 x 1 + 0.8) / 8 = 0.975 and the batch example's CRR
for google_vision and aws_textract is (3 + 0.8) / 4 = 0.95 (the document's table says 93.75%, which its formula
does not give).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from serve_helpers import Client, multipart, sample_run

from pytest_ocrmetrics import cli
from pytest_ocrmetrics.evaluator.serve.api import MAX_BODY_BYTES, MAX_TOKENS, ApiError, analyze_texts, parse_multipart
from pytest_ocrmetrics.evaluator.serve.server import EvaluatorServer, make_server

QUICK = {"ground_truth": "The quick brown fox", "ocr_output": "The quik brown"}
MANUAL = {"ground_truth": "The quick brown fox jumps over the lazy dog",
          "ocr_output": "The quik brown fox jumps over lazy dog"}
BATCH = [("gt.txt", b"Hello world from Python"), ("tesseract_out.txt", b"Hello world from Python"),
         ("google_vision_out.txt", b"Helo world from Python"), ("aws_textract_out.txt", b"Hello wrld from Python")]


def classes(result: dict[str, Any], side: str) -> list[tuple[str, str]]:
    return [(t["text"], t["class"]) for t in result["tokens"][side]]


# ---------------------------------------------------------------------------------------------- /api/analyze


def test_precision_and_recall_example(client: Client) -> None:
    answer = client.analyze(**QUICK)
    assert answer.status == 200 and answer.headers["content-type"].startswith("application/json")
    result = answer.json()
    assert result["precision"] == pytest.approx(2 / 3) and result["recall"] == pytest.approx(2 / 4)
    assert result["f1"] == pytest.approx(2 * 2 / 7)
    assert (result["exact_matches"], result["fuzzy_matches"], result["ground_truth_words"], result["ocr_words"]) == (2, 1, 4, 3)
    assert classes(result, "ground_truth") == [("The", "exact"), ("quick", "fuzzy"), ("brown", "exact"), ("fox", "unmatched")]
    assert classes(result, "ocr_output") == [("The", "exact"), ("quik", "fuzzy"), ("brown", "exact")]
    quick = result["tokens"]["ground_truth"][1]
    assert (quick["partner"], quick["partner_index"], quick["distance"], quick["crr"]) == ("quik", 1, 1, 0.8)
    assert result["crr"] == pytest.approx((1 + 1 + 0.8) / 3)
    assert result["message"] is None


def test_manual_example_average_crr_is_0_975(client: Client) -> None:
    result = client.analyze(**MANUAL, threshold=1, case_sensitive=False, ignore_punctuation=True).json()
    assert result["precision"] == pytest.approx(7 / 8) and result["recall"] == pytest.approx(7 / 9)
    assert result["f1"] == pytest.approx(0.8235294117647058) and result["crr"] == pytest.approx(0.975)
    assert (result["exact_matches"], result["fuzzy_matches"], result["unmatched_ground_truth"], result["unmatched_ocr"]) == (7, 1, 1, 0)
    # the second "the" is the ground-truth word without a partner
    assert [t for t in result["tokens"]["ground_truth"] if t["class"] == "unmatched"] == [
        {"text": "the", "index": 6, "line": 0, "class": "unmatched"}]
    assert all(0.0 <= result[k] <= 1.0 for k in ("precision", "recall", "f1", "crr"))


def test_duplicates_pair_as_multisets(client: Client) -> None:
    result = client.analyze(ground_truth="the the the cat", ocr_output="the the cat cat").json()
    assert result["exact_matches"] == 3 and result["precision"] == 0.75 and result["recall"] == 0.75
    assert classes(result, "ground_truth") == [("the", "exact"), ("the", "exact"), ("the", "unmatched"), ("cat", "exact")]
    assert classes(result, "ocr_output") == [("the", "exact"), ("the", "exact"), ("cat", "exact"), ("cat", "unmatched")]


@pytest.mark.parametrize(("threshold", "fuzzy", "crr"), [(0, 0, 1.0), (1, 1, 0.975)])
def test_threshold_zero_turns_fuzzy_matching_off(client: Client, threshold: int, fuzzy: int, crr: float) -> None:
    result = client.analyze(**MANUAL, threshold=threshold).json()
    assert result["fuzzy_matches"] == fuzzy and result["crr"] == pytest.approx(crr)
    assert result["precision"] == pytest.approx(7 / 8)  # fuzzy matches never change precision or recall
    assert ("quick", "unmatched" if threshold == 0 else "fuzzy") in classes(result, "ground_truth")


def test_threshold_five_matches_distant_words(client: Client) -> None:
    at_five = client.analyze(ground_truth="hello", ocr_output="world", threshold=5).json()
    assert at_five["fuzzy_matches"] == 1 and at_five["tokens"]["ocr_output"][0]["distance"] == 4
    assert at_five["crr"] == pytest.approx(1 - 4 / 5) and at_five["precision"] == 0.0
    at_three = client.analyze(ground_truth="hello", ocr_output="world", threshold=3).json()
    assert at_three["fuzzy_matches"] == 0 and at_three["crr"] == 0.0


def test_case_and_punctuation_options(client: Client) -> None:
    assert client.analyze(ground_truth="Hello word.", ocr_output="hello word").json()["exact_matches"] == 2
    strict = client.analyze(ground_truth="Hello word.", ocr_output="hello word", threshold=0,
                            case_sensitive=True, ignore_punctuation=False).json()
    assert strict["exact_matches"] == 0 and strict["unmatched_ground_truth"] == 2
    near = client.analyze(ground_truth="Hello word.", ocr_output="hello word", case_sensitive=True,
                          ignore_punctuation=False).json()
    assert near["fuzzy_matches"] == 2
    # a punctuation-only word is shown but not counted
    dash = client.analyze(ground_truth="a - b", ocr_output="a b").json()
    assert classes(dash, "ground_truth") == [("a", "exact"), ("-", "ignored"), ("b", "exact")]
    assert dash["ground_truth_words"] == 2


@pytest.mark.parametrize(("gt", "ocr", "message", "values"), [
    ("", "", "Both texts are empty", 1.0),
    ("   \n ", "", "Both texts are empty", 1.0),
    ("some words", "", "The OCR output is empty", 0.0),
    ("", "some words", "The ground truth is empty", 0.0),
])
def test_empty_input_is_a_message_not_an_error(client: Client, gt: str, ocr: str, message: str, values: float) -> None:
    answer = client.analyze(ground_truth=gt, ocr_output=ocr)
    assert answer.status == 200
    result = answer.json()
    assert result["message"].startswith(message)
    assert result["precision"] == result["recall"] == values


def test_lines_are_kept_for_display(client: Client) -> None:
    result = client.analyze(ground_truth="TOTAL 12.50\n\nCASH 20.00", ocr_output="TOTAL 12.50 CASH 20.00").json()
    assert [t["line"] for t in result["tokens"]["ground_truth"]] == [0, 0, 2, 2]
    assert [t["line"] for t in result["tokens"]["ocr_output"]] == [0, 0, 0, 0]


@pytest.mark.parametrize(("fields", "status", "words"), [
    ({"ground_truth": "a", "ocr_output": "a", "threshold": 6}, 400, "threshold must be a whole number from 0 to 5"),
    ({"ground_truth": "a", "ocr_output": "a", "threshold": -1}, 400, "got -1"),
    ({"ground_truth": "a", "ocr_output": "a", "threshold": True}, 400, "got True"),
    ({"ground_truth": "a", "ocr_output": "a", "threshold": 1.5}, 400, "got 1.5"),
    ({"ground_truth": "a", "ocr_output": "a", "case_sensitive": "maybe"}, 400, "case_sensitive must be true or false"),
    ({"ground_truth": "a", "ocr_output": "a", "treshold": 2}, 400, "unknown field 'treshold' (did you mean 'threshold'?)"),
    ({"ground_truth": "a"}, 400, "missing field 'ocr_output'"),
    ({"ground_truth": 12, "ocr_output": "a"}, 400, "ground_truth must be a string, got int"),
])
def test_bad_requests_get_one_sentence(client: Client, fields: dict[str, Any], status: int, words: str) -> None:
    answer = client.analyze(**fields)
    assert answer.status == status
    assert words in answer.json()["error"]


def test_bad_bodies(client: Client) -> None:
    not_json = client.request("POST", "/api/analyze", b"{nope", {"Content-Type": "application/json"})
    assert not_json.status == 400 and "not valid JSON" in not_json.json()["error"]
    a_list = client.request("POST", "/api/analyze", b"[1]", {"Content-Type": "application/json"})
    assert a_list.status == 400 and "JSON object" in a_list.json()["error"]
    form = client.request("POST", "/api/analyze", b"ground_truth=a", {"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status == 415 and "application/json" in form.json()["error"]
    latin1 = client.request("POST", "/api/analyze", '{"ground_truth": "caf\u00e9"}'.encode("latin-1"),
                            {"Content-Type": "application/json"})
    assert latin1.status == 400 and "not UTF-8" in latin1.json()["error"]
    deep = client.request("POST", "/api/analyze", b"[" * 100_000, {"Content-Type": "application/json"})
    assert deep.status == 400


def test_hostile_text_comes_back_as_data(client: Client) -> None:
    body = ('{"ground_truth": "caf\\ud800 <script>alert(1)</script> nul\\u0000 esc\\u001b[31m \\u202egnp", '
            '"ocr_output": "caf <script>alert(1)</script>"}').encode("ascii")
    answer = client.request("POST", "/api/analyze", body, {"Content-Type": "application/json"})
    assert answer.status == 200
    result = answer.json()
    assert result["replaced_characters"] == 1  # the lone surrogate, which UTF-8 cannot carry
    words = [t["text"] for t in result["tokens"]["ground_truth"]]
    assert words[0] == "caf\ufffd" and "<script>alert(1)</script>" in words and "nul\x00" in words
    assert answer.body.decode("utf-8")  # valid UTF-8 JSON


def test_huge_text_is_scored_whole_and_listed_in_part() -> None:
    text = "word " * (MAX_TOKENS + 10)
    result = analyze_texts(text, text + " extra")
    assert result["exact_matches"] == MAX_TOKENS + 10 and result["tokens_truncated"] is True
    assert len(result["tokens"]["ground_truth"]) == MAX_TOKENS


def test_body_over_10_mb_is_refused_before_it_is_read(server: EvaluatorServer) -> None:
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"POST /api/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n".encode())
        sock.shutdown(socket.SHUT_WR)  # not a byte of the body: the answer cannot depend on reading it
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413")
    assert "over the 10 MB limit" in json.loads(body)["error"]


def test_body_over_10_mb_sent_in_full_still_gets_its_413(client: Client) -> None:
    answer = client.batch([("gt.txt", b"x"), ("big_out.txt", b"word " * (MAX_BODY_BYTES // 5 + 10))])
    assert answer.status == 413 and "10.0 MB" in answer.json()["error"]


def test_expect_100_continue_is_refused_before_the_body_is_sent(server: EvaluatorServer) -> None:
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"POST /api/batch HTTP/1.1\r\nHost: localhost\r\nContent-Length: {MAX_BODY_BYTES * 3}\r\n"
                     f"Content-Type: multipart/form-data; boundary=x\r\nExpect: 100-continue\r\n\r\n".encode())
        first = sock.recv(65536)
    assert first.startswith(b"HTTP/1.1 413") and b"100 Continue" not in first


def test_chunked_body_is_refused(server: EvaluatorServer) -> None:
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"POST /api/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
        first = sock.recv(65536)
    assert first.startswith(b"HTTP/1.1 411") and b"Content-Length" in first


def test_other_host_names_are_not_answered(client: Client) -> None:
    """DNS rebinding: a page on evil.example whose name now points at 127.0.0.1 gets nothing."""
    answer = client.request("POST", "/api/analyze", json.dumps(QUICK).encode(),
                            {"Content-Type": "application/json", "Host": "evil.example:8765"})
    assert answer.status == 421
    assert client.request("GET", "/", headers={"Host": "evil.example"}).status == 421
    assert client.request("GET", "/", headers={"Host": "localhost:1234"}).status == 200


def test_page_is_self_contained_with_a_strict_policy(client: Client) -> None:
    answer = client.request("GET", "/")
    assert answer.status == 200 and answer.headers["content-type"] == "text/html; charset=utf-8"
    policy = answer.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'sha256-" in policy and "connect-src 'self'" in policy
    html = answer.body.decode("utf-8")
    assert "Manual Input" in html and "Batch Upload" in html and "/*JS*/" not in html and "/*CSS*/" not in html
    assert "http://" not in html and "https://" not in html and " src=" not in html  # nothing from elsewhere


def test_a_defect_still_gets_a_json_answer(client: Client, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    import pytest_ocrmetrics.evaluator.serve.server as server_module

    def broken(data: Any) -> Any:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(server_module, "analyze", broken)
    answer = client.analyze(**QUICK)
    assert answer.status == 500
    assert answer.json()["error"].startswith("internal error (ZeroDivisionError: division by zero)")
    assert "Traceback" in capsys.readouterr().err


def test_unknown_paths_and_the_run_endpoints_without_a_run(client: Client) -> None:
    missing = client.request("GET", "/api/nothing")
    assert missing.status == 404 and "POST /api/analyze" in missing.json()["error"]
    assert client.request("GET", "/etc/passwd").status == 404
    no_run = client.request("GET", "/api/run")
    assert no_run.status == 404 and "--run" in no_run.json()["error"]
    assert client.request("POST", "/api/run", b"{}", {"Content-Type": "application/json"}).status == 404


# ------------------------------------------------------------------------------------------------ /api/batch


def test_batch_example(client: Client) -> None:
    answer = client.batch(BATCH, {"threshold": "1", "case_sensitive": "false", "ignore_punctuation": "true"})
    assert answer.status == 200
    result = answer.json()
    assert result["errors"] == []
    models = {m["model"]: m for m in result["models"]}
    assert [m["model"] for m in result["models"]] == ["tesseract", "google_vision", "aws_textract"]  # upload order
    assert models["tesseract"]["precision"] == models["tesseract"]["crr"] == 1.0
    for name in ("google_vision", "aws_textract"):
        assert (models[name]["precision"], models[name]["recall"], models[name]["f1"]) == (0.75, 0.75, 0.75)
        assert models[name]["crr"] == pytest.approx(0.95)
        assert models[name]["file"] == f"{name}_out.txt"
    assert ("Helo", "fuzzy") in classes(models["google_vision"], "ocr_output")
    assert ("Hello", "fuzzy") in classes(models["google_vision"], "ground_truth")
    # the options come from the form fields
    exact_only = client.batch(BATCH, {"threshold": "0"}).json()
    assert {m["model"]: m["crr"] for m in exact_only["models"]}["google_vision"] == 1.0


def test_badly_named_files_are_reported_not_dropped(client: Client) -> None:
    result = client.batch(BATCH[:2] + [("notes.txt", b"x"), ("tesseract_output.txt", b"x"), ("GT.txt", b"x"),
                                       ("_out.txt", b"x"), ("tesseract_out.txt", b"again")]).json()
    assert [m["model"] for m in result["models"]] == ["tesseract"]
    errors = {e["file"]: e["error"] for e in result["errors"]}
    assert set(errors) == {"notes.txt", "tesseract_output.txt", "GT.txt", "_out.txt", "tesseract_out.txt"}
    assert errors["notes.txt"].startswith("notes.txt is not named gt.txt or <model>_out.txt")
    assert errors["notes.txt"].endswith("e.g. notes_out.txt")
    assert errors["tesseract_output.txt"].endswith("e.g. tesseract_out.txt")
    assert errors["GT.txt"].endswith("e.g. gt.txt")
    assert "uploaded twice" in errors["tesseract_out.txt"]


def test_non_utf8_file_is_named(client: Client) -> None:
    result = client.batch(BATCH[:2] + [("latin_out.txt", "caf\u00e9 cr\u00e8me".encode("latin-1"))]).json()
    assert [m["model"] for m in result["models"]] == ["tesseract"]
    assert result["errors"] == [{"file": "latin_out.txt", "error": "latin_out.txt is not UTF-8 text (byte 3 is 0xe9); "
                                                                   "save it as UTF-8 and upload it again"}]
    bad_reference = client.batch([("gt.txt", b"\xff\xfeH\x00i\x00"), BATCH[1]])
    assert bad_reference.status == 400 and bad_reference.json()["error"].startswith("gt.txt is not UTF-8 text")


def test_batch_needs_exactly_one_reference(client: Client) -> None:
    none = client.batch(BATCH[1:])
    assert none.status == 400 and "no gt.txt among the uploaded files (tesseract_out.txt" in none.json()["error"]
    two = client.batch(BATCH[:2] + [BATCH[0]])
    assert two.status == 400 and "2 files named gt.txt" in two.json()["error"]
    alone = client.batch(BATCH[:1]).json()
    assert alone["models"] == [] and "add at least one <model>_out.txt" in alone["errors"][0]["error"]


def test_batch_options_and_odd_files(client: Client) -> None:
    typo = client.batch(BATCH, {"treshold": "2"})
    assert typo.status == 400 and "did you mean 'threshold'" in typo.json()["error"]
    assert client.batch(BATCH, {"threshold": "9"}).status == 400
    text_not_file = client.batch(BATCH, {"files": "gt.txt"})  # curl -F files=gt.txt, without the @
    assert text_not_file.status == 400 and "-F files=@FILE" in text_not_file.json()["error"]
    bom = client.batch([("gt.txt", "\ufeffHello world".encode("utf-8")), ("m_out.txt", b"Hello world\r\n"),
                        ("empty_out.txt", b"")]).json()
    models = {m["model"]: m for m in bom["models"]}
    assert models["m"]["exact_matches"] == 2 and models["empty"]["message"].startswith("The OCR output is empty")
    wrong_type = client.request("POST", "/api/batch", b"{}", {"Content-Type": "application/json"})
    assert wrong_type.status == 415 and "multipart/form-data" in wrong_type.json()["error"]


# -------------------------------------------------------------------------------------------------- multipart


def test_multipart_parser_round_trip() -> None:
    data = b"line one\r\n--not-the-boundary\r\nline\x00three\r\n"
    body, content_type = multipart([("gt.txt", data), ("empty_out.txt", b"")], {"threshold": "2"})
    parts = parse_multipart(body, content_type)
    assert [(p.name, p.filename, p.data) for p in parts] == [
        ("threshold", None, b"2"), ("files", "gt.txt", data), ("files", "empty_out.txt", b"")]


@pytest.mark.parametrize(("disposition", "filename"), [
    ('form-data; name="files"; filename="a \\"quoted\\" name_out.txt"', 'a "quoted" name_out.txt'),
    ("form-data; name=files; filename=plain_out.txt", "plain_out.txt"),
    ('form-data; name="files"; filename="C:\\\\Users\\\\me\\\\gt.txt"', "gt.txt"),
    ("form-data; name=\"files\"; filename=\"x.txt\"; filename*=UTF-8''caf%C3%A9_out.txt", "caf\u00e9_out.txt"),
    ('form-data; name="files"; filename="r\u00e9sum\u00e9_out.txt"', "r\u00e9sum\u00e9_out.txt"),
])
def test_multipart_file_names(disposition: str, filename: str) -> None:
    body = (f"--b\r\nContent-Disposition: {disposition}\r\n\r\nx\r\n--b--\r\n").encode()
    assert parse_multipart(body, "multipart/form-data; boundary=b")[0].filename == filename


@pytest.mark.parametrize(("body", "content_type", "words"), [
    (b"--b\r\nContent-Disposition: form-data; name=a\r\n\r\nx", "multipart/form-data; boundary=b", "cut off"),
    (b"no boundary here", "multipart/form-data; boundary=b", "does not contain its boundary"),
    (b"--b\r\n\r\nx\r\n--b--", "multipart/form-data; boundary=b", "no Content-Disposition name"),
    (b"--b\r\nContent-Disposition: form-data; name=a\r\nx\r\n--b--", "multipart/form-data; boundary=b", "no blank line"),
    (b"", "multipart/form-data", "no boundary parameter"),
    (b"", "text/plain", "multipart/form-data"),
])
def test_multipart_parser_refuses_broken_bodies(body: bytes, content_type: str, words: str) -> None:
    with pytest.raises(ApiError, match=words):
        parse_multipart(body, content_type)


# ---------------------------------------------------------------------------------------------------- no files


def test_no_file_is_opened_on_behalf_of_a_request(client: Client, run_client: Client, tmp_path: Path) -> None:
    """Every request kind, with file-like names in it; an audit hook sees every open() the process makes meanwhile
    (the control: the one file this test opens itself is seen)."""
    control = tmp_path / "control.txt"
    control.write_text("x", encoding="utf-8")
    opened: list[str] = []
    recording = threading.Event()

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if recording.is_set() and event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if not path.endswith((".py", ".pyc", ".so")):  # a module imported for the first time
                opened.append(path)

    sys.addaudithook(hook)  # cannot be removed; inert once the event is cleared
    recording.set()
    try:
        assert client.request("GET", "/").status == 200
        assert client.analyze(ground_truth="/etc/passwd", ocr_output="gt.txt").status == 200
        assert client.batch([("gt.txt", b"a"), ("..%2F..%2Fetc%2Fpasswd_out.txt", b"a"), ("../../x_out.txt", b"a")]).status == 200
        assert run_client.request("GET", "/api/run").status == 200
        assert run_client.request("GET", "/api/run/document?index=0&path=/etc/passwd").status == 200
        assert run_client.request("GET", "/api/run/document?index=../../etc/passwd").status == 400
        control.read_text(encoding="utf-8")
    finally:
        recording.clear()
    assert opened == [str(control)]


# ------------------------------------------------------------------------------------------------------- run


def test_run_documents_are_listed_and_shown_by_index(run_client: Client) -> None:
    listing = run_client.request("GET", "/api/run").json()
    docs = listing["documents"]
    assert [(d["index"], d["id"], d["outcome"], d["has_texts"]) for d in docs] == [
        (0, "r1.png", "failed", True), (1, "r2.png", "passed", True), (2, "r3.png", "error", False),
        (3, "r4\u202egnp.exe", "passed", True)]
    assert docs[0]["metrics"] == {"cer": 0.25, "wer": 0.5} and listing["normalization"]["name"] == "nfc"
    doc = run_client.request("GET", "/api/run/document?index=0").json()
    assert (doc["reference"], doc["hypothesis"]) == ("TOTAL 12.50\nCASH 20.00", "T0TAL 12.50\nCASH <b>20.00</b>")
    assert doc["message"] == "CER 25.00% above 5.00%"
    assert run_client.request("GET", "/api/run/document?index=2").json()["hypothesis"] is None
    hostile = run_client.request("GET", "/api/run/document?index=3").json()
    assert hostile["reference"] == "esc\x1b[31m nul\x00 sur\ufffd ok"  # the surrogate replaced when the run was read
    for bad in ("4", "-1", "", "x"):
        answer = run_client.request("GET", f"/api/run/document?index={bad}")
        assert answer.status == 400 and "from 0 to 3" in answer.json()["error"]


def test_page_turns_on_the_run_tab_only_with_a_run(run_client: Client, client: Client) -> None:
    assert 'data-run-mode="true" data-run-label="run.json"' in run_client.request("GET", "/").body.decode()
    assert 'data-run-mode="false"' in client.request("GET", "/").body.decode()
    unlabelled = make_server(port=0, run=sample_run(), quiet=True)
    try:
        assert b'data-run-mode="true"' in unlabelled.page.html
    finally:
        unlabelled.server_close()
    hostile = make_server(port=0, run=sample_run(), run_label='"><script>x</script>.json', quiet=True)
    try:
        assert b"<script>x" not in hostile.page.html and b"&quot;&gt;&lt;script&gt;" in hostile.page.html
    finally:
        hostile.server_close()


# ------------------------------------------------------------------------------------------ the serve command


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "pytest_ocrmetrics.cli", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stop(process: subprocess.Popen[str]) -> str:
    process.terminate()
    _, err = process.communicate(timeout=30)
    return err


def test_serve_command_prints_its_address_and_answers(tmp_path: Path) -> None:
    run_path = tmp_path / "run.json"
    run_path.write_text(json.dumps(sample_run()), encoding="utf-8")
    process = _start("--run", str(run_path))
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("OCR Metrics Evaluator at http://127.0.0.1:") and "run.json" in line
        url = line.split(" at ", 1)[1].split()[0]
        host, port = url[len("http://"):].rstrip("/").split(":")
        import http.client

        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("GET", "/api/run")
        assert len(json.loads(connection.getresponse().read())["documents"]) == 4
        connection.close()
    finally:
        err = _stop(process)
    assert "warning" not in err


def test_serve_on_another_address_says_so() -> None:
    process = _start("--host", "0.0.0.0")
    try:
        assert process.stdout.readline().startswith("OCR Metrics Evaluator at http://127.0.0.1:")  # type: ignore[union-attr]
    finally:
        err = _stop(process)
    assert "warning: listening on 0.0.0.0, not 127.0.0.1: anyone who can reach this machine can use the page" in err


def test_serve_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["serve", "--run", str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert cli.main(["serve", "--port", str(taken.getsockname()[1])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ocrmetrics serve: error: cannot listen on 127.0.0.1 port") and "--port" in err
    assert len(err.strip().splitlines()) == 1
    assert cli.main(["serve", "--port", "70000"]) == 2
    assert "a port is 0 to 65535" in capsys.readouterr().err


def test_serve_open_opens_the_page(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import webbrowser

    opened: list[str] = []
    done = threading.Event()
    monkeypatch.setattr(webbrowser, "open", lambda url: (opened.append(url), done.set()))
    monkeypatch.setattr(EvaluatorServer, "serve_forever", lambda self: done.wait(10))
    assert cli.main(["serve", "--port", "0", "--open"]) == 0
    url = capsys.readouterr().out.split(" at ", 1)[1].split()[0]
    assert opened == [url]


def _trickle(server: EvaluatorServer, head: bytes, body: bytes, every_s: float) -> bytes:
    """Send ``head`` at once, then ``body`` a byte every ``every_s`` seconds (until the server hangs up); the answer."""
    import time

    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(head)
        try:
            for byte in body:
                sock.sendall(bytes([byte]))
                time.sleep(every_s)
        except OSError:  # the server closed the connection
            pass
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except OSError:
            pass
    return answer


def test_a_body_trickled_past_the_deadline_is_cut_off(server: EvaluatorServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Slowloris: a byte every 0.2 s never trips the 30 s read timeout; the request's total deadline does."""
    import pytest_ocrmetrics.evaluator.serve.server as server_module

    monkeypatch.setattr(server_module, "_REQUEST_DEADLINE_S", 1.0)
    body = json.dumps(QUICK).encode()
    head = (f"POST /api/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) + 100}\r\n\r\n").encode()
    answer = _trickle(server, head, body + b" " * 100, every_s=0.2)
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 seconds" in answer


def test_headers_trickled_past_the_deadline_close_the_connection(server: EvaluatorServer,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_ocrmetrics.evaluator.serve.server as server_module

    monkeypatch.setattr(server_module, "_REQUEST_DEADLINE_S", 1.0)
    answer = _trickle(server, b"GET / HTTP/1.1\r\n", b"X-Slow: " + b"a" * 40 + b"\r\n\r\n", every_s=0.2)
    assert answer == b""  # closed without an answer, as the standard library does on a timeout


def test_a_request_within_the_deadline_is_answered_and_the_work_is_not_limited(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_ocrmetrics.evaluator.serve.server as server_module

    monkeypatch.setattr(server_module, "_REQUEST_DEADLINE_S", 1.0)
    answer = client.analyze(**QUICK)
    assert answer.status == 200 and answer.json()["exact_matches"] == 2


# ------------------------------------------------------------------- other web pages, load and odd parameters


def _calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    """Record every call of the server's ``analyze`` or ``batch`` (still computing the answer)."""
    import pytest_ocrmetrics.evaluator.serve.server as server_module

    calls: list[Any] = []
    original = getattr(server_module, name)

    def recording(data: Any) -> Any:
        calls.append(data)
        return original(data)

    monkeypatch.setattr(server_module, name, recording)
    return calls


CROSS_ORIGIN = [{"Origin": "http://evil.example"}, {"Origin": "null"}, {"Origin": "http://127.0.0.1:1"},
                {"Origin": "https://attacker.test", "Sec-Fetch-Site": "cross-site"},
                {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}]


@pytest.mark.parametrize("headers", CROSS_ORIGIN)
def test_api_requests_from_another_web_page_are_refused_unread(client: Client, run_client: Client,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               headers: dict[str, str]) -> None:
    """Any page the user has open can post a multipart form to 127.0.0.1 (no CORS preflight): it gets 403, unscored."""
    batches, analyses = _calls(monkeypatch, "batch"), _calls(monkeypatch, "analyze")
    body, content_type = multipart(BATCH, {})
    answer = client.request("POST", "/api/batch", body, {"Content-Type": content_type, **headers})
    assert answer.status == 403
    error = answer.json()["error"]
    assert "another web page" in error and "\n" not in error and client.url in error
    analysis = client.request("POST", "/api/analyze", json.dumps(QUICK).encode(),
                              {"Content-Type": "application/json", **headers})
    assert analysis.status == 403 and batches == [] and analyses == []
    for path in ("/api/run", "/api/run/document?index=0", "/api/run/image?index=0"):
        refused = run_client.request("GET", path, headers=headers)
        assert refused.status == 403 and "another web page" in refused.json()["error"]
    assert client.request("GET", "/", headers=headers).status == 200  # a link to the page itself still opens it


@pytest.mark.parametrize("same", [{"Origin": "{origin}"}, {"Origin": "{origin}", "Sec-Fetch-Site": "same-origin"},
                                  {"Sec-Fetch-Site": "same-origin"}, {"Sec-Fetch-Site": "none"}, {}])
def test_the_page_itself_and_clients_without_a_browser_are_answered(client: Client, run_client: Client,
                                                                    same: dict[str, str]) -> None:
    headers = {k: v.format(origin=client.url.rstrip("/")) for k, v in same.items()}
    assert client.batch(BATCH, {}).status == 200  # no Origin at all: curl, scripts
    body, content_type = multipart(BATCH, {})
    answer = client.request("POST", "/api/batch", body, {"Content-Type": content_type, **headers})
    assert answer.status == 200 and len(answer.json()["models"]) == 3
    run_headers = {k: v.format(origin=run_client.url.rstrip("/")) for k, v in same.items()}
    assert run_client.request("GET", "/api/run/document?index=1", headers=run_headers).status == 200


def test_the_origin_is_compared_with_the_host_the_request_was_sent_to(client: Client) -> None:
    """``localhost`` and ``127.0.0.1`` are both this server, but a page on one is another origin than the other."""
    port = client.url.rstrip("/").rsplit(":", 1)[1]
    ok = client.request("POST", "/api/analyze", json.dumps(QUICK).encode(),
                        {"Content-Type": "application/json", "Host": f"localhost:{port}",
                         "Origin": f"http://localhost:{port}"})
    assert ok.status == 200
    other = client.request("POST", "/api/analyze", json.dumps(QUICK).encode(),
                           {"Content-Type": "application/json", "Host": f"localhost:{port}",
                            "Origin": f"http://127.0.0.1:{port}"})
    assert other.status == 403


def test_a_body_over_the_set_limit_is_refused_before_it_is_read() -> None:
    from pytest_ocrmetrics.evaluator.serve.server import serve_in_thread

    small = make_server("127.0.0.1", 0, quiet=True, max_body_bytes=1024)
    thread = serve_in_thread(small)
    try:
        host, port = small.server_address[:2]
        with socket.create_connection((host, port), timeout=10) as sock:
            sock.sendall(b"POST /api/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                         b"boundary=x\r\nContent-Length: 2048\r\n\r\n")
            sock.shutdown(socket.SHUT_WR)  # no body at all: the 413 cannot come from reading it
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413") and "limit" in json.loads(body)["error"]
        assert Client(small).analyze(**QUICK).status == 200  # a body within the limit is still answered
    finally:
        small.shutdown()
        small.server_close()
        thread.join(timeout=10)


@pytest.mark.parametrize(("length", "status"), [("²", 400), ("١٢", 400), ("-1", 400), ("9" * 5000, 413)])
def test_odd_content_lengths_get_one_sentence(server: EvaluatorServer, length: str, status: int) -> None:
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"POST /api/analyze HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {length}\r\n\r\n".encode())
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status}".encode()), head
    assert json.loads(body)["error"]


def test_at_most_two_computations_at_once_and_the_next_gets_503(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic: the first two requests are held inside the computation until the test lets them go."""
    import pytest_ocrmetrics.evaluator.serve.server as server_module
    from pytest_ocrmetrics.evaluator.serve.server import MAX_COMPUTATIONS, serve_in_thread

    assert MAX_COMPUTATIONS == 2
    busy = make_server("127.0.0.1", 0, quiet=True)
    thread = serve_in_thread(busy)
    client = Client(busy)
    try:
        # refused and failing requests give their slot back: otherwise the held ones below could not both start
        for _ in range(3):
            assert client.request("POST", "/api/analyze", b"{not json", {"Content-Type": "application/json"}).status == 400
        entered = threading.Semaphore(0)
        release = threading.Event()
        original = server_module.analyze

        def held(data: Any) -> Any:
            entered.release()
            assert release.wait(30)
            return original(data)

        monkeypatch.setattr(server_module, "analyze", held)
        answers: list[Any] = []
        workers = [threading.Thread(target=lambda: answers.append(client.analyze(**QUICK))) for _ in range(2)]
        for worker in workers:
            worker.start()
        assert entered.acquire(timeout=30) and entered.acquire(timeout=30)  # both are computing now
        body, content_type = multipart(BATCH, {})
        third = client.request("POST", "/api/batch", body, {"Content-Type": content_type})
        assert third.status == 503 and third.headers["retry-after"] == "1"
        assert "busy" in third.json()["error"]
        assert client.analyze(**QUICK).status == 503
        release.set()
        for worker in workers:
            worker.join(timeout=30)
        assert [a.status for a in answers] == [200, 200]
        monkeypatch.setattr(server_module, "analyze", original)
        assert client.batch(BATCH).status == 200  # the slots are free again
    finally:
        busy.shutdown()
        busy.server_close()
        thread.join(timeout=10)


BAD_INDEXES = ["%C2%B2", "\u00b2", "abc", "-1", "4", "1.0", "0x1", "%D9%A3", "99999999999999999999", "9" * 5000, ""]


def test_every_bad_index_is_a_json_400_on_a_connection_that_stays_open(run_server: EvaluatorServer) -> None:
    """``index=²`` passed ``str.isdigit`` and then raised in ``int()``: the connection closed with no answer."""
    import http.client
    import urllib.parse as parse

    host, port = run_server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        for endpoint in ("/api/run/document", "/api/run/image"):
            for bad in BAD_INDEXES:
                value = bad if "%" in bad else parse.quote(bad)
                connection.request("GET", f"{endpoint}?index={value}")
                response = connection.getresponse()
                body = response.read()
                assert response.status == 400, (endpoint, bad, body)
                error = json.loads(body)["error"]
                assert "from 0 to 3" in error and len(error) < 200
            connection.request("GET", f"{endpoint}?index=1")  # the same connection still answers
            response = connection.getresponse()
            response.read()
            assert response.status in (200, 404)  # 404: r2.png has no image on this machine
    finally:
        connection.close()


def test_a_defect_in_a_get_is_a_json_500_not_a_dropped_connection(run_client: Client, run_server: EvaluatorServer,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(run_server, "documents", [None] * len(run_server.documents))  # {**None}: a TypeError
    answer = run_client.request("GET", "/api/run/document?index=0")
    assert answer.status == 500 and answer.json()["error"].startswith("internal error (TypeError")
    assert "Traceback" in capsys.readouterr().err
