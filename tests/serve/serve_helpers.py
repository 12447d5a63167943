"""Helpers for the evaluator server tests: an HTTP client, a multipart encoder, a sample run, a server in a thread."""

from __future__ import annotations

import http.client
import json
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from ocr_run_factory import make_doc, make_run

from pytest_ocrmetrics.evaluator.serve.server import EvaluatorServer, make_server, serve_in_thread


@dataclass
class Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8"))


class Client:
    """``http.client`` against one server; each call opens its own connection."""

    def __init__(self, server: EvaluatorServer) -> None:
        self.host, self.port = server.server_address[:2]
        self.url = server.url

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: Mapping[str, str] | None = None) -> Answer:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=dict(headers or {}))
            response = connection.getresponse()
            return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()

    def analyze(self, **fields: Any) -> Answer:
        return self.request("POST", "/api/analyze", json.dumps(fields).encode("utf-8"),
                            {"Content-Type": "application/json"})

    def batch(self, files: list[tuple[str, bytes]], fields: Mapping[str, str] | None = None) -> Answer:
        body, content_type = multipart(files, fields or {})
        return self.request("POST", "/api/batch", body, {"Content-Type": content_type})


def multipart(files: list[tuple[str, bytes]], fields: Mapping[str, str]) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body as a browser sends it: the fields, then each file under the name ``files``."""
    boundary = "----ocrtest" + uuid.uuid4().hex
    chunks = []
    for name, value in fields.items():
        chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode() +
                      value.encode("utf-8") + b"\r\n")
    for filename, data in files:
        chunks.append(f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{filename}"\r\n'
                      f"Content-Type: text/plain\r\n\r\n".encode() + data + b"\r\n")
    chunks.append(f"--{boundary}--\r\n".encode())
    return b"".join(chunks), f"multipart/form-data; boundary={boundary}"


def serve(run: Mapping[str, Any] | None = None) -> Iterator[EvaluatorServer]:
    server = make_server("127.0.0.1", 0, run=run, run_label="run.json" if run is not None else None, quiet=True)
    thread = serve_in_thread(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def sample_run() -> dict[str, Any]:
    """Four documents: a failed one with both texts, a passed one, an engine error without output, and one with
    control characters, a bidi override and a lone surrogate in its id and texts."""
    return make_run([
        make_doc("r1.png", {"cer": 0.25, "wer": 0.5}, outcome="failed", message="CER 25.00% above 5.00%",
                 reference="TOTAL 12.50\nCASH 20.00", hypothesis="T0TAL 12.50\nCASH <b>20.00</b>"),
        make_doc("r2.png", {"cer": 0.0, "wer": 0.0}, reference="Thank you", hypothesis="Thank you"),
        make_doc("r3.png", {}, outcome="error", message="engine failed: tesseract not found", hypothesis=None),
        make_doc("r4\u202egnp.exe", {"cer": 0.5}, reference="esc\x1b[31m nul\x00 sur\ud800 ok",
                 hypothesis="esc\x1b[31m nul sur ok"),
    ])
