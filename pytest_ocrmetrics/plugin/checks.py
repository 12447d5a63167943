"""Running one OCR test: recognising its document, the limits of its ``ocr_thresholds`` marker, and checking every
threshold and baseline regression that applies to its scores."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from pytest_ocrmetrics.engines.base import EngineError, EngineUnavailable, OcrOutput
from pytest_ocrmetrics.metrics.registry import METRICS, unknown_metric_message
from pytest_ocrmetrics.metrics.thresholds import applicable_thresholds, parse_limit
from pytest_ocrmetrics.plugin.keys import ITEM_STATE, plugin_state
from pytest_ocrmetrics.plugin.state import ItemState, PluginState
from pytest_ocrmetrics.scoring.context import OcrTestContext
from pytest_ocrmetrics.scoring.document import DocumentScore, ScoringError, not_applicable, with_metrics
from pytest_ocrmetrics.scoring.messages import failure_message
from pytest_ocrmetrics.scoring.runner import EngineCreationError, OcrCase, printable_id


class OcrTruncatedWarning(UserWarning):
    """An engine stopped at its token limit: the output is incomplete."""


def item_state_for(item: pytest.Item, state: PluginState, case: OcrCase) -> ItemState:
    """The OCR state of ``item``'s test, made on first use: its ``ocr_thresholds`` limits (or why they are wrong)
    and its per-test context, whose scoring also computes the metrics the limits and the document's thresholds name.

    Args:
        item: the test (a test function using the OCR fixtures, or a dataset's document item).
        state: the run's state.
        case: the document × engine of the test.

    Returns:
        The state kept in ``item.stash[ITEM_STATE]`` until the test's teardown report is made.
    """
    if ITEM_STATE not in item.stash:
        limits, error = {}, None
        try:
            limits = marker_limits(item, item.nodeid)
        except ValueError as exc:  # a bad marker fails the test when its limits are checked
            error = str(exc)
        options = state.run_config.runner.scoring
        if limits or case.document.thresholds:  # the metrics they name are computed too
            options = with_metrics(options, [*limits, *case.document.thresholds])
        context = OcrTestContext(document=case.document, engine=case.engine.label, options=options)
        item.stash[ITEM_STATE] = ItemState(case=case, context=context, limits=limits, limits_error=error)
    return item.stash[ITEM_STATE]


def engine_creation_message(exc: EngineCreationError) -> str:
    """The one line every test of an engine that could not be created shows (control characters made visible)."""
    from pytest_ocrmetrics.core.safe_text import show_controls

    return show_controls(str(exc))


def recognize(item: pytest.Item, state: PluginState, item_state: ItemState) -> OcrOutput:
    """Recognise the test's document once (then processed by ``pytest_ocrmetrics_process_output`` hooks), keep the
    output on ``item_state`` and mark it filtered below ``--ocr-min-confidence``; an engine that fails errors the
    test with one sentence, an unavailable one skips it.

    Args:
        item: the test.
        state: the run's state.
        item_state: the test's OCR state (from :func:`item_state_for`).

    Returns:
        The engine's output for the document.
    """
    if item_state.output is not None:
        return item_state.output
    case = item_state.case
    try:
        output = state.run_config.runner.recognize(case)
    except EngineUnavailable as exc:
        pytest.skip(f"engine {case.engine.name!r} is not available: {exc}")
    except EngineCreationError as exc:  # the same one line in every test of this engine
        raise pytest.fail.Exception(engine_creation_message(exc), pytrace=False) from None
    except (EngineError, OSError) as exc:
        # one sentence, no traceback from inside the engine: the document's test errors, the session goes on
        message = str(exc) if str(exc).startswith(case.engine.name) else f"{case.engine.label}: {exc}"
        if case.document.id not in message:
            message += f" (document {case.document.id!r})"
        if case.document.source and not _names_ground_truth(message, case.document.source):
            message += f" [ground truth: {case.document.source}]"
        # names from the ground truth (an ESC, a lone surrogate) are written as escapes, never sent raw
        raise pytest.fail.Exception(printable_id(message), pytrace=False) from None
    hook = item.config.hook.pytest_ocrmetrics_process_output
    processed = hook(document=case.document, output=output, engine=case.engine.label) if hook.get_hookimpls() else None
    if processed is not None:
        output = processed
    item_state.output = output
    if output.truncated:
        warnings.warn(OcrTruncatedWarning(
            f"{case.engine.label} output for {case.document.id!r} was cut off at the token limit (truncated); "
            "its metrics count the missing text as deleted"), stacklevel=1)
    minimum = state.run_config.settings.min_confidence
    if minimum is not None and output.confidence is not None and output.confidence < minimum:
        item_state.filtered = f"filtered: engine confidence {output.confidence:.3f} is below --ocr-min-confidence={minimum:g}"
    if isinstance(item, pytest.Function):  # a test function's facts: judged after it, but known now (in its setup)
        fail_unchecked_facts(item_state)
    return output


def fail_unchecked_facts(item_state: ItemState, score: DocumentScore | None = None, only: str | None = None) -> None:
    """Error the test (called in its setup) when some of its page's facts (``only`` the one of a fact item) could
    not be checked (a missing package, no browser): the run cannot claim a verdict it did not reach. One sentence
    naming the facts and why; the run file keeps each such fact with ``passed`` null."""
    if not item_state.case.document.facts or item_state.filtered or item_state.output is None:
        return
    if score is None:
        try:
            score = item_state.context.score_output(item_state.output)
        except ScoringError as exc:  # the document cannot be scored (its schema): the sentence, no traceback
            raise pytest.fail.Exception(printable_id(str(exc)), pytrace=False) from None
    unchecked = [f for f in score.details.get("facts", ()) if f.get("passed") is None
                 and (only is None or f.get("id") == only)]
    if unchecked:
        raise pytest.fail.Exception(unchecked_facts_message(unchecked, score, alone=only is not None), pytrace=False)


def unchecked_facts_message(unchecked: list[dict[str, Any]], score: DocumentScore, *, alone: bool = False) -> str:
    """One sentence: ``fact 'm1' (math) of 'doc' (engine) could not be checked, so this test has no verdict: <why>``
    for one fact (the page's only one, or a fact item's: ``alone``), else ``2 of 5 facts of 'doc' (engine) could not
    be checked, ...: fact 'm1' (math): <why>; ...`` (at most three named, then how many more)."""
    total = len(score.details.get("facts", ()))
    where = f"of {score.document.id!r} ({score.engine}) could not be checked, so this test has no verdict"
    if len(unchecked) == 1 and (alone or total == 1):
        fact = unchecked[0]
        message = f"fact {fact['id']!r} ({fact['type']}) {where}: {fact.get('reason') or fact.get('explanation')}"
    else:
        named = "; ".join(f"fact {f['id']!r} ({f['type']}): {f.get('reason') or f.get('explanation')}"
                          for f in unchecked[:3])
        more = f"; and {len(unchecked) - 3} more" if len(unchecked) > 3 else ""
        message = f"{len(unchecked)} of {total} facts {where}: {named}{more}"
    return printable_id(message)


def _names_ground_truth(message: str, source: str) -> bool:
    """Whether ``message`` already names the ground-truth file of ``source`` (``FILE: key``, ``FILE:line`` or
    ``FILE``), as a malformed entry's own sentence does: then no ``[ground truth: ...]`` is added to it.

    >>> _names_ground_truth("gt.json, entry 'a.png': bad", "gt.json: a.png"), _names_ground_truth("x", "m.jsonl:3")
    (True, False)
    """
    file = source.partition(": ")[0]
    head, colon, line = file.rpartition(":")
    return (head if colon and line.isdigit() else file) in message


def marker_limits(node: pytest.Item | pytest.Function, where: str) -> dict[str, float]:
    """The ``ocr_thresholds`` limits on ``node`` (the closest marker wins), each a number or a percentage
    (``cer="5%"``); a metric name that is not registered or a value that is not a sensible limit (``field_f1=90``,
    ``cer=5``: :func:`~pytest_ocrmetrics.metrics.thresholds.parse_limit`) raises ``ValueError`` with one sentence."""
    limits: dict[str, float] = {}
    for marker in reversed(list(node.iter_markers("ocr_thresholds"))):
        for name, value in marker.kwargs.items():
            if name not in METRICS:
                raise ValueError(f"{where}: ocr_thresholds({name}=...): {unknown_metric_message(name)}")
            written = f"ocr_thresholds({name}={value!r})"
            limits[name] = parse_limit(name, value, lambda v: f"ocr_thresholds({name}={_python_limit(v)})",  # noqa: B023
                                       where=f"{where}: {written}")
    return limits


def _python_limit(written: str) -> str:
    """A limit as Python source: ``0.05``, or the string ``"5%"``."""
    return f'"{written}"' if written.endswith("%") else written


def _test_limits(item: pytest.Item) -> dict[str, float]:
    """The test's ``ocr_thresholds`` limits, as read when its OCR state was made (checked at collection too; a marker
    added after collection that is wrong fails its test here)."""
    item_state = item.stash[ITEM_STATE]
    if item_state.limits_error is not None:
        raise pytest.fail.Exception(item_state.limits_error, pytrace=False)
    return item_state.limits


def check_thresholds(item: pytest.Item, state: PluginState, score: DocumentScore, *, facts: bool = True) -> None:
    """Check every threshold that applies and was not already asserted by a helper; fail with all violations.

    ``facts=False``: not the implicit every-fact-passes threshold, nor fact regressions (fact items judge those)."""
    __tracebackhide__ = True
    context = item.stash[ITEM_STATE].context
    asserted = {check["metric"] for check in context.checks}
    failures = []
    for threshold in _applicable_thresholds(state, score.document, _test_limits(item), facts=facts):
        if threshold.metric in asserted:
            continue
        if threshold.metric not in score.metrics:  # the document lacks what it needs (fields, a schema, a text)
            if not not_applicable(score, threshold.metric):  # a page without a table: no value, nothing to check
                context.unchecked.append(threshold.metric)  # listed in the run file, said under the summary
            continue
        check = threshold.check(score.metrics[threshold.metric])
        context.checks.append(check)
        if not check["passed"]:
            failures.append(failure_message(score, threshold, check["value"]))
    run_config = state.run_config
    if run_config.baseline is not None and run_config.tolerances and run_config.settings.document_regressions == "fail":
        regressions = run_config.baseline.check_document(score.document.dataset, score.engine, score.document.id,
                                                         score.metrics, run_config.tolerances)
        if not facts:  # --ocr-fact-items: the page's facts are judged by their own items
            regressions = [regression for regression in regressions if regression.metric != "fact_pass_rate"]
        failures += [regression.message for regression in regressions]
    if facts:
        failures += fact_regressions(state, score)
    if failures:
        raise AssertionError("\n\n".join(failures))


def _applicable_thresholds(state: PluginState, document: Any, limits: dict[str, float], *, facts: bool) -> Any:
    """:func:`~pytest_ocrmetrics.metrics.thresholds.applicable_thresholds`; for a document without thresholds or facts of
    its own in a test without limits (the usual case), the command line's, worked out once per run."""
    if limits or document.thresholds or document.facts:
        return applicable_thresholds(document, limits, state.run_config.settings.command_line_thresholds(), facts=facts)
    thresholds = state.collection.configured_thresholds.get(facts)
    if thresholds is None:  # the command line's merged once per run, not once per test
        thresholds = state.collection.configured_thresholds[facts] = tuple(
            applicable_thresholds(document, limits, state.run_config.settings.command_line_thresholds(), facts=facts))
    return thresholds


def fact_regressions(state: PluginState, score: DocumentScore, only: str | None = None) -> list[str]:
    """Facts of this document that passed in the baseline and fail now (with a tolerance on fact_pass_rate and
    ``--ocr-document-regressions=fail``; under ``warn`` the session's comparison lists them)."""
    run_config = state.run_config
    if (run_config.baseline is None or not score.details.get("facts")  # the usual case: nothing to import or check
            or run_config.settings.document_regressions != "fail"):
        return []
    from pytest_ocrmetrics.gating import tolerance_for

    if tolerance_for(run_config.tolerances, "fact_pass_rate") is None:
        return []
    facts = [f for f in score.details["facts"] if only is None or f["id"] == only]
    return [regression.message for regression in run_config.baseline.check_facts(
        score.document.dataset, score.engine, score.document.id, facts)]


def check_test_function(item: pytest.Item) -> None:
    """After a test function that used the OCR fixtures: check the thresholds its assertion helpers did not."""
    __tracebackhide__ = True
    item_state = item.stash[ITEM_STATE]
    if item_state.output is not None and not item_state.filtered:
        try:
            score = item_state.context.score_output(item_state.output)
        except ScoringError as exc:  # the document cannot be scored (its schema): the sentence, no traceback
            raise pytest.fail.Exception(printable_id(str(exc)), pytrace=False) from None
        check_thresholds(item, plugin_state(item.config), score)
