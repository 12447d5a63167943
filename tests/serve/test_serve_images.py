"""``GET /api/run/image?index=N``: a run's page images, found as the HTML report finds them, and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from ocr_run_factory import make_doc, make_run
from serve_helpers import Client

from pytest_ocrmetrics.evaluator.serve.server import EvaluatorServer, make_server, serve_in_thread

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


@pytest.fixture
def images_server(tmp_path: Path) -> Iterator[tuple[EvaluatorServer, Path]]:
    """A run made elsewhere ('/ci/work/...', gone here) whose images are under ``tmp_path/checkout``: a relative
    image, an old run file's absolute one, a text file posing as an image, a document without an image."""
    checkout = tmp_path / "checkout"
    (checkout / "scans" / "images").mkdir(parents=True)
    (checkout / "scans" / "images" / "a.png").write_bytes(PNG)
    (checkout / "scans" / "images" / "old.png").write_bytes(PNG + b"old")
    secret = tmp_path / "secret.png"
    secret.write_text("password=hunter2\n", encoding="utf-8")
    docs = [make_doc("a.png", {"cer": 0.1}, dataset="scans", image="images/a.png"),
            make_doc("old.png", {"cer": 0.1}, dataset="scans", image="/ci/work/repo/scans/images/old.png"),
            make_doc("secret.png", {"cer": 0.1}, dataset="scans", image=str(secret)),
            make_doc("none.png", {"cer": 0.1}, dataset="scans", image=None)]
    run: dict[str, Any] = {**make_run(docs), "datasets": {"scans": {"root": "/ci/work/repo/scans"}}}
    server = make_server(port=0, run=run, run_label="run.json", quiet=True, image_root=checkout)
    thread = serve_in_thread(server)
    try:
        yield server, checkout
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_run_images_are_found_under_the_image_root_and_only_images_are_sent(
        images_server: tuple[EvaluatorServer, Path]) -> None:
    server, checkout = images_server
    client = Client(server)
    by_id = {doc["id"]: doc["index"] for doc in client.request("GET", "/api/run").json()["documents"]}
    relative = client.request("GET", f"/api/run/image?index={by_id['a.png']}")
    assert (relative.status, relative.headers["content-type"]) == (200, "image/png") and relative.body == PNG
    old = client.request("GET", f"/api/run/image?index={by_id['old.png']}")  # its tail under the image root
    assert old.status == 200 and old.body == (checkout / "scans" / "images" / "old.png").read_bytes()
    secret = client.request("GET", f"/api/run/image?index={by_id['secret.png']}")
    assert secret.status == 404 and "is not an image file" in secret.json()["error"] and b"hunter2" not in secret.body
    none = client.request("GET", f"/api/run/image?index={by_id['none.png']}")
    assert none.status == 404 and "has no page image" in none.json()["error"]
    assert list(by_id) == ["a.png", "old.png", "secret.png", "none.png"]  # the run file's order
    for bad in ("9", "-1", "", "../a.png"):
        answer = client.request("GET", f"/api/run/image?index={bad}")
        assert answer.status == 400 and "from 0 to 3" in answer.json()["error"]
    shown = client.request("GET", f"/api/run/document?index={by_id['a.png']}").json()
    assert shown["image_url"] == f"/api/run/image?index={by_id['a.png']}"
    assert "image_url" not in client.request("GET", f"/api/run/document?index={by_id['none.png']}").json()


def test_run_images_are_under_the_servers_computation_bound(images_server: tuple[EvaluatorServer, Path]) -> None:
    """Reading (and converting) a page image takes one of the slots the upload endpoints take: with every slot
    held, one more image request is answered 503 with Retry-After, and once a slot is free it is answered again
    (issue 20 A4)."""
    server, _ = images_server
    client = Client(server)
    held = 0
    try:
        while server.computations.acquire(blocking=False):  # what max_computations running requests hold
            held += 1
        assert held == server.max_computations
        busy = client.request("GET", "/api/run/image?index=0")
        assert busy.status == 503 and busy.headers["retry-after"] == "1"
        assert "busy" in busy.json()["error"]
        assert client.request("GET", "/api/run").status == 200  # listing reads no file: not bounded
    finally:
        for _ in range(held):
            server.computations.release()
    for _ in range(server.max_computations + 1):  # each answered request gave its slot back
        assert client.request("GET", "/api/run/image?index=0").body == PNG
        assert client.request("GET", "/api/run/image?index=2").status == 404  # a refused image too


def test_serve_image_root_needs_a_run(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_ocrmetrics.cli import main

    assert main(["serve", "--image-root", "x", "--port", "0"]) == 2
    assert "--image-root says where a run's page images are; give the run too: --run RUN.json" in capsys.readouterr().err


def test_run_tab_shows_the_page_image(browser: Any, images_server: tuple[EvaluatorServer, Path]) -> None:
    from test_serve_browser import Page, expect_text

    server, _ = images_server
    view = Page(browser, server)
    page = view.page
    try:
        page.wait_for_selector("#run-table tbody tr")
        page.click("#run-table tbody tr[data-index='0'] button")  # a.png
        from playwright.sync_api import expect

        expect(page.locator("#run-detail-image img")).to_have_js_property("naturalWidth", 1)  # loaded: a 1x1 PNG
        page.click("#run-table tbody tr[data-index='2'] button")  # secret.png: a file, but no image
        expect_text(page.locator("#run-detail-image"), "The page image could not be shown.")
        refused = [p for p in view.problems if "404" in p]  # the browser logs the refused image, nothing else
        assert len(refused) == 1 and len(view.problems) == 1
        view.problems.clear()
        page.click("#run-table tbody tr[data-index='3'] button")  # none.png: no image recorded
        expect_text(page.locator("#run-detail-title"), "none.png")
        assert page.locator("#run-detail-image img").count() == 0
    finally:
        view.close()
