"""Fixtures for engine tests: a real chat-completions server on 127.0.0.1 and documents with small images."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

import pytest

from pytest_ocrmetrics.core.documents import Document
from tests.helpers.servers import load_fake_server

fake_server = load_fake_server()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def chat_server() -> Iterator[fake_server.FakeChatServer]:
    """A started :class:`FakeChatServer` (answers at once; set ``latency_s`` or inject faults per test)."""
    with fake_server.FakeChatServer() as server:
        yield server


@pytest.fixture
def make_document(tmp_path: Path) -> Callable[..., Document]:
    """``make_document("a")`` writes a small, unique PNG-looking file and returns its Document.

    The bytes start with the PNG signature (so engines send them as image/png) and are never decoded by the fake
    server, which only hashes them.
    """

    def make(name: str, *, payload: bytes | None = None, fields=None, schema=None, reference: str | None = None):
        path = tmp_path / "images" / f"{name}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(PNG_MAGIC + (payload if payload is not None else name.encode()))
        return Document(
            id=f"{name}.png",
            dataset="fake",
            image_path=path,
            reference_text=reference,
            fields=fields,
            schema=schema,
            source=f"ground_truth.json: {name}.png",
        )

    return make
