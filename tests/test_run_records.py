"""The document record and the run have one owner (``runfile/record.py``): its builders, the envelope that keeps
transport-only data out of the record, and the schema beside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ocrmetrics.core.documents import Document
from pytest_ocrmetrics.engines.base import OcrOutput
from pytest_ocrmetrics.runfile import record as records
from pytest_ocrmetrics.runfile.read import validate_run
from pytest_ocrmetrics.runfile.record import (
    RECORD_ENCODER,
    RUN_SCHEMA_ID,
    SCHEMA_PATH,
    DocumentRecord,
    Run,
    Transport,
    clean_envelope,
    envelope,
    light_record,
    pack_envelope,
    record_texts,
    run_schema,
    scored_record,
    unpack_envelope,
    unscored_record,
)
from pytest_ocrmetrics.runfile.results import RunResults
from pytest_ocrmetrics.scoring.document import score_document


def _scored(tmp_path: Path) -> DocumentRecord:
    document = Document("a.png", "d", tmp_path / "images" / "a.png", "INVOICE 1", fields={"total": "1"})
    score = score_document(document, OcrOutput(text="INV0ICE 1", confidence=0.9), engine="e")
    return scored_record(score, root=tmp_path)


def test_the_schema_and_its_id_live_beside_the_record_types() -> None:
    assert SCHEMA_PATH.parent == Path(records.__file__).parent
    assert run_schema()["properties"]["schema"]["const"] == RUN_SCHEMA_ID
    document_keys = set(run_schema()["properties"]["documents"]["items"]["properties"])
    assert set(DocumentRecord.__annotations__) == document_keys  # the type names every key the schema documents
    assert set(Run.__annotations__) == set(run_schema()["properties"])


def test_a_scored_record_lists_the_document_the_output_then_the_scores(tmp_path: Path) -> None:
    record = _scored(tmp_path)
    assert list(record) == ["id", "dataset", "engine", "metrics", "counts", "elapsed_s", "image", "reference",
                            "hypothesis", "confidence", "cached", "truncated", "confusions", "details"]
    assert record["image"] == "images/a.png"  # relative to the dataset's folder
    assert record["metrics"]["cer"] == pytest.approx(1 / 9)


def test_an_unscored_record_says_a_check_was_declared() -> None:
    record = unscored_record(Document("a.png", "d", None, "x"), "e", declared_checks=True, details={"facts": []})
    assert list(record)[-2:] == ["declared_checks", "details"]
    assert "hypothesis" not in record and record["metrics"] == {}


def test_transport_travels_beside_the_record_never_in_it(tmp_path: Path) -> None:
    sent = envelope(_scored(tmp_path), nodeid="t.py::test[e-a.png]", checks=[{"metric": "cer"}],
                    unchecked_thresholds=["field_f1", "field_f1"], tags=["scan"], filtered="confidence 0.1 < 0.5",
                    engine_identity={"engine": "e"}, dataset_root=str(tmp_path),
                    dataset_skipped=[{"source": "b.png", "reason": "no text"}])
    record, transport = sent["record"], sent["transport"]
    assert record is not None
    assert not {"engine_identity", "dataset_root", "dataset_skipped", "filtered"} & set(record)
    assert transport == {"filtered": True, "engine_identity": {"engine": "e"}, "dataset_root": str(tmp_path),
                         "dataset_skipped": [{"source": "b.png", "reason": "no text"}]}
    assert record["unchecked_thresholds"] == ["field_f1"] and record["message"] == "confidence 0.1 < 0.5"

    results = RunResults()
    results.add(record, "passed", transport=sent["transport"])
    run = results.to_run(plugin_version="0", pytest_version="0", resamples=0)
    (document,) = run["documents"]
    assert document["outcome"] == "filtered"
    assert not {"engine_identity", "dataset_root", "dataset_skipped", "filtered"} & set(document)
    assert run["environment"]["engines"] == {"e": {"engine": "e"}}
    assert run["datasets"] == {"d": {"root": str(tmp_path)}}
    assert run["skipped_entries"] == [{"dataset": "d", "source": "b.png", "reason": "no text"}]
    validate_run(json.loads(json.dumps(run, default=list)))


def test_a_worker_counts_the_replaced_characters_of_the_whole_envelope_once() -> None:
    record: DocumentRecord = {"id": "a\ud800", "dataset": "d", "engine": "e", "metrics": {}, "counts": {},
                              "elapsed_s": 0.0}
    transport: Transport = {"dataset_root": "/data/\udcff"}
    cleaned = clean_envelope({"nodeid": "t::a\ud800", "record": record, "transport": transport})
    assert cleaned["nodeid"] == "t::a\ufffd"
    assert cleaned["record"] is not None and cleaned["record"]["replaced_characters"] == 2  # the node id is the record's
    assert cleaned["transport"] == {"dataset_root": "/data/\ufffd"}


def test_a_worker_sends_the_record_as_one_json_text_that_comes_back_equal(tmp_path: Path) -> None:
    record = _scored(tmp_path)
    record["metrics"]["odd"] = float("nan")  # kept (refused only when the run file is written)
    sent = envelope(record, nodeid="t::a", checks=[], dataset_root="/data")
    packed = pack_envelope(sent)
    assert packed["record"] is None and isinstance(packed["record_json"], str)  # one string for execnet
    back = unpack_envelope(packed)
    assert back["nodeid"] == "t::a" and back["transport"] == sent["transport"]
    whole = json.loads(json.dumps(record))
    assert json.dumps(json.loads(back["record_json"])) == json.dumps(whole)
    # the controller decodes the light form: the texts and pairs left out, every key in its place
    assert back["record"] is not None and json.dumps(back["record"]) == json.dumps(light_record(whole))
    assert list(back["record"]) == list(record) and back["record"]["hypothesis"] == "" != record["hypothesis"]
    assert back["record"]["confusions"] == [] != record["confusions"]
    assert back["record"]["metrics"] == whole["metrics"] and back["record"]["counts"] == whole["counts"]
    assert unpack_envelope(sent) is sent  # an envelope that was not packed (no xdist) is left as it is


@pytest.mark.parametrize("where", ["record", "transport"])
def test_a_packed_envelope_is_cleaned_and_counts_its_replacements_once(where: str) -> None:
    record: DocumentRecord = {"id": "a\ud800" if where == "record" else "a", "dataset": "d", "engine": "e",
                              "metrics": {}, "counts": {}, "elapsed_s": 0.0}
    transport: Transport = {"dataset_root": "/data/\udcff" if where == "transport" else "/data"}
    packed = pack_envelope({"nodeid": "t::a", "record": record, "transport": transport})
    packed["record_json"].encode("utf-8")  # what execnet must be able to send
    back = unpack_envelope(packed)
    assert back["record"] is not None and back["record"]["replaced_characters"] == 1
    assert json.loads(back.pop("record_json")) == back["record"]
    assert back == clean_envelope({"nodeid": "t::a", "record": record, "transport": transport})


def test_the_run_members_come_in_the_run_files_order() -> None:
    results = RunResults()
    results.add({"id": "a", "dataset": "d", "engine": "e", "metrics": {}, "counts": {}, "elapsed_s": 0.0,
                 "nodeid": "t::a", "unchecked_thresholds": ["cer"]}, "passed",
                transport={"dataset_root": "/d"})
    run = results.to_run(plugin_version="0", pytest_version="0", resamples=0, bootstrap={"seed": 1, "resamples": 0},
                         shard={"index": 1, "count": 2})
    assert list(run) == ["schema", "created", "environment", "normalization", "documents", "summary",
                         "skipped_entries", "collection_errors", "interrupted", "datasets", "unchecked_thresholds",
                         "bootstrap", "shard"]


def test_a_run_without_bootstrap_intervals_is_a_valid_run_file() -> None:
    """``--ocr-bootstrap=0`` writes ``ci_low``/``ci_high`` as null: the schema accepts what the plugin writes (it
    refused such a file when it was read back, as a baseline or by ``ocrmetrics report``)."""
    results = RunResults()
    results.add({"id": "a", "dataset": "d", "engine": "e", "metrics": {"cer": 0.5}, "counts": {}, "elapsed_s": 0.0,
                 "nodeid": "t::a"}, "passed")
    run = results.to_run(plugin_version="0", pytest_version="0", resamples=0)
    assert run["summary"][0]["metrics"]["cer"]["ci_low"] is None
    validate_run(json.loads(json.dumps(run, default=list)))


@pytest.mark.parametrize(("outcome", "message"), [("passed", None), ("failed", "cer = 0.5, must be <= 0.1\nref: é"),
                                                  ("skipped", "no engine"), ("error", None)])
def test_the_controller_spools_a_workers_record_text_as_it_would_encode_the_record(
        tmp_path: Path, outcome: str, message: str | None) -> None:
    scored = _scored(tmp_path)
    scored["metrics"]["odd"] = float("nan")
    records: list[DocumentRecord] = [
        scored,
        {"id": "é.png", "dataset": "d", "engine": "e", "metrics": {}, "counts": {}, "elapsed_s": 0.0},
        {"id": "f.png", "dataset": "d", "engine": "e", "metrics": {}, "counts": {}, "elapsed_s": 0.0,
         "message": "low confidence"},  # finished_record replaces a key: encoded again
    ]
    for record in records:
        sent = unpack_envelope(pack_envelope(envelope(record, nodeid=f"t::{record['id']}", checks=[])))
        assert sent["record"] is not None
        direct, from_text = RunResults(), RunResults()
        direct.add(json.loads(sent["record_json"]), outcome, message)  # the whole record, as without xdist
        encoded: list[object] = []
        original = from_text._clean_json

        def counting(rec: Any, encoded: list[object] = encoded, original: Any = original) -> bytes:
            encoded.append(rec)
            return original(rec)

        from_text._clean_json = counting  # type: ignore[method-assign]
        from_text.add(sent["record"], outcome, message, text=sent["record_json"])
        assert len(encoded) == ("message" in record)  # only a record whose key finished_record replaces is encoded
        assert [e[:5] for e in from_text.records] == [e[:5] for e in direct.records]
        written = [dict(d) for d in from_text.documents()]
        assert json.dumps(written, allow_nan=True) == json.dumps([dict(d) for d in direct.documents()], allow_nan=True)
        assert list(from_text.documents().json_texts(json.dumps)) == list(direct.documents().json_texts(json.dumps))


_JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=8))
_JSON = st.recursive(_JSON_LEAF, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                          st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                     max_leaves=8)
_KEYS = st.sampled_from(["id", "metrics", "reference", "hypothesis", "confusions", "details", "", '"', "reference\""])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _JSON, max_size=7), st.sets(st.sampled_from(["reference", "hypothesis", "confusions"])))
def test_a_records_two_texts_are_what_the_encoder_writes(record: dict[str, Any], nulls: set[str]) -> None:
    # the worker encodes the members its whole and its light record share once (runfile.record.record_texts):
    # byte for byte the encoder's texts of both, whatever the keys' order, values, and which texts are missing
    for key in nulls & set(record):
        record[key] = None
    whole, light = record_texts(record)
    assert whole == RECORD_ENCODER.encode(record)
    expected = light_record(record)
    if light is None:  # no text or pairs to leave out: the controller decodes the whole text, the same record
        assert expected is None
    else:
        assert expected is not None and light == RECORD_ENCODER.encode(expected)
