"""Under ``-n N`` with the default ``--dist load``, every worker keeps twice ``--ocr-concurrency`` tests queued to the
end, so its prefetch pool keeps that many requests in flight (xdist's own scheduler hands out one or two at the end)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.plugin import make_dataset
from tests.helpers.servers import load_fake_server

pytest.importorskip("xdist")


class _Node:
    """What xdist's scheduler calls on a worker controller."""

    def __init__(self, name: str) -> None:
        self.gateway = type("Gateway", (), {"id": name})()
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def send_runtest_all(self) -> None:  # pragma: no cover - not used by load scheduling
        raise AssertionError("not expected")

    def shutdown(self) -> None:
        self.shutting_down = True


def _fewest_queued_while_tests_were_pending(sched: Any, tests: int) -> tuple[int, list[_Node]]:
    """Run ``tests`` tests on two fake workers, each finishing its oldest test in turn; the smallest queue a worker
    had while the scheduler still held tests, and the workers."""
    nodes = [_Node("gw0"), _Node("gw1")]
    collection = [f"test_x.py::test[{i}]" for i in range(tests)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    fewest = tests
    done: set[int] = set()
    while any(sched.node2pending[node] for node in nodes):
        for node in nodes:
            if sched.node2pending[node]:
                index = sched.node2pending[node][0]
                done.add(index)
                sched.mark_test_complete(node, index, duration=0.2)  # a slow test: xdist would hold back
                if sched.pending:
                    fewest = min(fewest, len(sched.node2pending[node]))
    assert done == set(range(tests)) and sorted(nodes[0].sent + nodes[1].sent) == list(range(tests))
    assert all(node.shutting_down for node in nodes)
    return fewest, nodes


def test_each_worker_keeps_the_concurrency_queued_until_the_tests_run_out(pytester: pytest.Pytester) -> None:
    from xdist.scheduler.load import LoadScheduling

    from pytest_ocrmetrics.plugin.xdist_scheduler import prefetching_load_scheduler

    config = pytester.parseconfig("--tx=2*popen")
    fewest, _ = _fewest_queued_while_tests_were_pending(prefetching_load_scheduler(config, None, 8), 64)
    assert fewest >= 8
    xdist_fewest, _ = _fewest_queued_while_tests_were_pending(LoadScheduling(config, None), 64)
    assert xdist_fewest <= 2  # what the scheduler is for: xdist's own leaves a worker one or two tests


def _run(pytester: pytest.Pytester, server: Any, *args: str) -> pytest.RunResult:
    docs = {f"p{i:02d}.png": {"full_text": "x"} for i in range(40)}
    make_dataset(pytester.path, docs, {})
    for i, name in enumerate(docs):  # distinct image bytes, so the server can tell the pages apart
        (pytester.path / "invoices" / "images" / name).write_bytes(b"\x89PNG\r\n\x1a\n" + bytes([i]))
    pytester.makeconftest(
        """
        import pytest

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtestloop(session):
            yield
            sched = getattr(session.config.pluginmanager.getplugin("dsession"), "sched", None)
            if sched is not None:
                (session.config.rootpath / "scheduler.txt").write_text(type(sched).__name__)
        """
    )
    return pytester.runpytest_subprocess(
        "--ocr-dataset=invoices", "--ocr-engine=openai", f"--ocr-engine-option=openai.base_url={server.base_url}",
        "--ocr-engine-option=openai.model=fake-vlm", "--ocr-no-cache", "-n", "2", *args)


@pytest.mark.parametrize(("args", "scheduler"), [
    ((), "PrefetchingLoadScheduling"),
    (("--ocr-concurrency=4", "--dist", "load"), "PrefetchingLoadScheduling"),
    (("--dist", "loadfile"), "LoadFileScheduling"),  # a mode the user chose is left alone
    (("--maxschedchunk", "1"), "LoadScheduling"),  # and so is a chunk limit
    (("--ocr-concurrency=1",), "LoadScheduling"),  # one request at a time: xdist's floor of two tests is enough
])
def test_the_scheduler_of_a_run(pytester: pytest.Pytester, args: tuple[str, ...], scheduler: str) -> None:
    with load_fake_server().FakeChatServer(latency_s=0.05) as server:
        result = _run(pytester, server, *args)
        result.assert_outcomes(passed=40)
        assert len(server.chat_requests) == 40  # each page once
    assert (pytester.path / "scheduler.txt").read_text() == scheduler
