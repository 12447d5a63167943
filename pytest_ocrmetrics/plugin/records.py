"""What rides on a test's report: its OCR record in its envelope (built by :mod:`pytest_ocrmetrics.runfile.record`:
the record with the scores and checks, and beside it the engine's identity and the dataset's folder), the JUnit
properties, and the cleaning of what an xdist worker sends."""

from __future__ import annotations

import os
from typing import Any, cast

import pytest

from pytest_ocrmetrics.core.safe_text import clean_text
from pytest_ocrmetrics.plugin.checks import item_state_for
from pytest_ocrmetrics.plugin.items import OcrDocumentItem, case_of
from pytest_ocrmetrics.plugin.keys import ITEM_STATE, plugin_state
from pytest_ocrmetrics.plugin.state import ItemState, PluginState, broken_dataset_of
from pytest_ocrmetrics.plugin.transport import clean_serialized
from pytest_ocrmetrics.runfile.record import (
    DocumentRecord,
    Envelope,
    clean_envelope,
    crash_record,
    envelope,
    scored_record,
    unscored_record,
)
from pytest_ocrmetrics.scoring.document import ScoringError

__all__ = ["add_record", "clean_serialized", "crashed_item_records", "record_from_nodeid"]


def _envelope(item: pytest.Item, state: PluginState, item_state: ItemState) -> Envelope:
    """The test's record (scored, or the document and its output when it got no score) in its envelope."""
    case = item_state.case
    output = item_state.output
    score = None
    if output is not None and not item_state.filtered:
        try:
            score = item_state.context.score_output(output)
        except ScoringError:  # its test errored with the sentence; recorded with its output and no metrics
            pass
    if score is not None:
        record = scored_record(score, confusions=state.run_config.record_confusions, root=case.dataset.root)
    else:
        # a check that never got a score (skipped, filtered, errored): a test function (it exists to check the
        # output), a test's ocr_thresholds, the document's own thresholds or page-level facts, the command line's
        # thresholds; the run then asked for a verdict (and its run file says so, for the reports and the merge)
        declared = bool(not isinstance(item, OcrDocumentItem) or item_state.limits or case.document.thresholds
                        or case.document.facts or state.run_config.settings.command_line_thresholds())
        details = None
        if case.document.facts:  # counted as failed in the facts summary when the test errored (no output)
            from pytest_ocrmetrics.metrics.facts.summary import unchecked_facts

            details = {"facts": unchecked_facts(case.document.facts,
                                                "not checked: the document got no output (its test errored)")}
        record = unscored_record(case.document, case.engine.label, output, root=case.dataset.root,
                                 declared_checks=declared, details=details)
    skipped = [{"source": s.source, "reason": s.reason, **({"count": s.count} if s.count != 1 else {})}
               for s in case.dataset.skipped]
    return envelope(record, nodeid=item.nodeid, checks=item_state.context.checks,
                    unchecked_thresholds=item_state.context.unchecked, tags=case.document.tags,
                    filtered=item_state.filtered or None, engine_identity=state.run_config.runner.identity_once(case.engine),
                    # where the dataset was on this machine, the run file's datasets[name].root (images are relative)
                    dataset_root=os.path.abspath(case.dataset.root), dataset_skipped=skipped)


def add_record(item: pytest.Item, report: Any) -> Any:
    """Put the OCR record of ``item``'s test and its JUnit properties on the first report that can carry them (the
    call's; setup's or teardown's when there was no call), and let go of the output and scores at teardown."""
    when = report.when
    if when == "setup":
        broken = broken_dataset_of(item)
        if broken is not None:  # listed in the run's collection_errors
            report.ocr_collection_error = {"dataset": broken.dataset, "message": broken.message}
    item_state = item.stash.get(ITEM_STATE, None)
    if item_state is None:
        case = case_of(item)
        if case is None or when != "setup" or report.passed:
            return report
        # setup failed before the OCR fixtures or item setup ran
        item_state = item_state_for(item, plugin_state(item.config), case)
    last_chance = when == "teardown" or (when == "setup" and not report.passed)
    if not item_state.recorded and (when == "call" or last_chance):
        state = plugin_state(item.config)
        sent = _envelope(item, state, item_state)
        record = cast(DocumentRecord, sent["record"])
        item_state.recorded = True
        report.ocr_envelope = sent
        # the same text with and without xdist (whose workers must send UTF-8): lone surrogates become U+FFFD here
        properties = [(f"ocr.{key}", clean_text(str(value))[0])
                      for key, value in (("engine", record["engine"]), ("dataset", record["dataset"]),
                                         ("document", record["id"]))]
        wanted = state.run_config.junit_metrics
        if wanted is not None:  # --ocr-junit-properties=default: the metrics that matter, and what this test checked
            wanted = wanted | {str(check.get("metric")) for check in record["checks"]}
        properties += [(f"ocr.{name}", _property_value(value)) for name, value in record["metrics"].items()
                       if wanted is None or name in wanted]
        if record.get("cached"):
            properties.append(("ocr.cached", "true"))
        if record.get("truncated"):
            properties.append(("ocr.truncated", "true"))
        if sent["transport"].get("filtered"):
            properties.append(("ocr.filtered", "true"))
        item.user_properties.extend(properties)
        report.user_properties = list(item.user_properties)
        item_state.junit_properties = properties
    ours = item_state.junit_properties
    if ours and plugin_state(item.config).run_config.is_worker and report.user_properties[-len(ours):] == ours:
        report.ocr_properties = len(ours)  # sent as one text: see transport.clean_serialized
    if when == "teardown":  # the item lives until the session ends; its OCR state need not (a rerun makes it anew)
        del item.stash[ITEM_STATE]
    return report


def _property_value(value: float) -> str:
    return repr(round(float(value), 6)) if isinstance(value, float) else str(value)


def crashed_item_records(session: pytest.Session, nodeids: Any) -> list[Envelope]:
    """On an xdist worker started after another crashed: the envelopes of the records (no output, nothing scored) of the tests that
    were running when the workers crashed (``nodeids``, sent by the controller), made from this worker's own
    collection: a dead worker sends nothing, and the controller collects no item, so only a worker can say which
    dataset, engine and document a node id stands for. Cleaned as a report's record is (they travel through
    xdist's channel)."""
    wanted = set(nodeids)
    state = plugin_state(session.config)
    envelopes: list[Envelope] = []
    for item in session.items:
        if item.nodeid not in wanted:
            continue
        case = case_of(item)
        if case is None:  # not an OCR test: pytest's own crash report is all there is
            envelopes.append({"nodeid": item.nodeid, "record": None, "transport": {}})
            continue
        had_state = ITEM_STATE in item.stash
        sent = _envelope(item, state, item_state_for(item, state, case))
        if not had_state:  # the item may still run here (a plugin rescheduling crashed tests): leave it as it was
            del item.stash[ITEM_STATE]
        envelopes.append(clean_envelope(sent))
    return envelopes


def record_from_nodeid(nodeid: str, engines: Any) -> Envelope | None:
    """The record (in its envelope) of a crashed test that no worker could describe (xdist restarted none): the dataset, engine and
    document read from the test id (``DATASET::ENGINE-DOCUMENT`` for a dataset's items, ``FILE::TEST[ENGINE-DOCUMENT]``
    for a test function), the engine being the longest engine label the id starts with; None when none does (not
    an OCR test, as far as the id tells).

    >>> record_from_nodeid("data/invoices::replay-doc_1.png", ["replay"])["record"]["id"]
    'doc_1.png'
    >>> record_from_nodeid("tests/test_ocr.py::test_text[tesseract-a.png]", ["tesseract"])["record"]["dataset"]
    'tests/test_ocr.py::test_text'
    """
    head, _, name = nodeid.rpartition("::")
    if name.endswith("]") and "[" in name:
        function, _, name = name[:-1].partition("[")
        head = f"{head}::{function}" if head else function
    engine = max((label for label in engines if name.startswith(f"{label}-")), key=len, default="")
    if not engine:
        return None
    return {"nodeid": nodeid, "record": crash_record(nodeid, head or nodeid, engine, name[len(engine) + 1:]),
            "transport": {}}
