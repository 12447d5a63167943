"""A real chat-completions HTTP server on 127.0.0.1 for offline engine tests and benchmarks.

It speaks enough of the OpenAI ``/v1/chat/completions`` schema for the ``openai`` and ``deepseek`` engines, records
every request (headers and JSON body) so tests can check the payload, answers by the SHA-256 of the image in the
request, and injects the failures real servers produce: latency, HTTP 429 (with ``Retry-After``), 500/503, a body
that is not JSON, a dropped connection, ``finish_reason: "length"`` and grounding-tagged output, an answer whose headers come at once
and whose body then trickles one byte per ``trickle_interval_s`` (``trickle``; ``trickle-headers`` trickles the
status line and headers too), and error bodies that echo the
request's ``Authorization`` header and key (``echo-key-401``, ``echo-key-500``, ``echo-key-text``: a 200 whose body is
not JSON), and redirects (``redirect(302, url)``: every request is answered with that status and ``Location``).
It also counts how
many requests are in flight at once, and can hold requests until N are in flight (so a concurrency test needs no
timing assumptions).

No pytest import here: the benchmark uses it too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeChatServer", "RecordedRequest", "Answer", "FAULTS"]

FAULTS = ("429", "500", "503", "400", "401", "malformed", "drop", "empty-choices", "trickle", "trickle-headers",
          "echo-key-401", "echo-key-500", "echo-key-text")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    image_sha256: str | None


@dataclass
class Answer:
    """What the server says for one image."""

    content: str
    finish_reason: str = "stop"


@dataclass
class _State:
    in_flight: int = 0
    max_in_flight: int = 0
    gate_target: int | None = None
    gate_open: bool = True
    requests: list[RecordedRequest] = field(default_factory=list)


def image_sha256_of(body: Any) -> str | None:
    """The SHA-256 of the first data-URL image in a chat-completions body (None when there is none)."""
    try:
        for message in body["messages"]:
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for part in content:
                if part.get("type") == "image_url":
                    url = part["image_url"]["url"]
                    _, _, data = url.partition(";base64,")
                    return hashlib.sha256(base64.b64decode(data)).hexdigest()
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    return None


class FakeChatServer:
    """A threaded HTTP server speaking chat completions; use as a context manager or call start()/stop().

    ``latency_s`` delays every answer. ``answers[sha256] = Answer(...)`` sets the answer for an image (the default
    is ``"text of <first 12 hex digits>"``). ``fail_next("429", "500")`` makes the next requests fail in that order;
    ``fail_image(sha, "500", ...)`` does it for one image only. ``hold_until_in_flight(n)`` keeps requests waiting
    until ``n`` are in flight at once (or 10 s pass).
    """

    def __init__(self, *, latency_s: float = 0.0, model: str = "fake-vlm", retry_after: str = "0") -> None:
        self.latency_s = latency_s
        self.model = model
        self.retry_after = retry_after
        self.trickle_interval_s = 1.0
        self.trickled_bytes = 0  # body bytes a "trickle" answer has sent so far
        self.trickle_finished = threading.Event()  # set when a "trickle" answer's whole body was sent
        self.answers: dict[str, Answer] = {}
        self.redirect_to: tuple[int, str] | None = None  # (status, Location) answered to every request when set
        self._faults: deque[str] = deque()
        self._image_faults: dict[str, deque[str]] = {}
        self._state = _State()
        self._cond = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------------------------

    def start(self) -> FakeChatServer:
        server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._state.gate_open = True
            self._cond.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ------------------------------------------------------------------------------------------------

    def answer(self, image: bytes, content: str, finish_reason: str = "stop") -> None:
        """Answer requests for ``image`` (its bytes) with ``content``."""
        self.answers[hashlib.sha256(image).hexdigest()] = Answer(content, finish_reason)

    def redirect(self, status: int, location: str) -> None:
        """Answer every request (GET or POST) with ``status`` and ``Location: location``."""
        self.redirect_to = (status, location)

    def fail_next(self, *faults: str) -> None:
        for fault in faults:
            assert fault in FAULTS, fault
        with self._cond:
            self._faults.extend(faults)

    def fail_image(self, image: bytes, *faults: str) -> None:
        with self._cond:
            self._image_faults.setdefault(hashlib.sha256(image).hexdigest(), deque()).extend(faults)

    def hold_until_in_flight(self, target: int) -> None:
        with self._cond:
            self._state.gate_target = target
            self._state.gate_open = False

    # -- observations ---------------------------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return list(self._state.requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def max_in_flight(self) -> int:
        with self._cond:
            return self._state.max_in_flight

    @staticmethod
    def default_content(sha256: str) -> str:
        return f"text of {sha256[:12]}"

    # -- handling (called from the handler threads) ----------------------------------------------------------------

    def _enter(self, request: RecordedRequest) -> str | None:
        with self._cond:
            self._state.requests.append(request)
            self._state.in_flight += 1
            self._state.max_in_flight = max(self._state.max_in_flight, self._state.in_flight)
            if self._state.gate_target is not None and self._state.in_flight >= self._state.gate_target:
                self._state.gate_open = True
            self._cond.notify_all()
            deadline = time.monotonic() + 10.0
            while not self._state.gate_open and time.monotonic() < deadline:
                self._cond.wait(0.05)
            sha = request.image_sha256
            if sha is not None and self._image_faults.get(sha):
                return self._image_faults[sha].popleft()
            if self._faults:
                return self._faults.popleft()
            return None

    def _leave(self) -> None:
        with self._cond:
            self._state.in_flight -= 1


class _QuietServer(ThreadingHTTPServer):
    request_queue_size = 256  # listen() backlog: the default 5 drops connections when many clients connect at once
    def handle_error(self, request: Any, client_address: Any) -> None:
        # clients that time out or give up close their end; that is expected here, not worth a traceback
        return None


def _handler_for(owner: FakeChatServer) -> type[BaseHTTPRequestHandler]:  # noqa: C901 - one fake server, every fault in one place
    class Handler(BaseHTTPRequestHandler):
        server_version = "FakeChat/1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output clean
            return None

        def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self._leave_once()  # before the client can read the answer and send its next request
            self.end_headers()
            self.wfile.write(data)

        def _leave_once(self) -> None:
            if getattr(self, "_in_flight", False):
                self._in_flight = False
                owner._leave()

        def _trickle(self, data: bytes, *, headers_too: bool = False) -> None:
            """Headers at once (or trickled too), then the body one byte per ``trickle_interval_s`` (until the client
            hangs up)."""
            head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                    "Connection: close\r\n\r\n").encode()
            if headers_too:
                data = head + data
            else:
                self.wfile.write(head)
                self.wfile.flush()
            self.close_connection = True
            for byte in data:
                time.sleep(owner.trickle_interval_s)
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:  # the client gave up
                    return
                with owner._cond:
                    owner.trickled_bytes += 1
            owner.trickle_finished.set()

        def _redirected(self) -> bool:
            if owner.redirect_to is None:
                return False
            status, location = owner.redirect_to
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self._leave_once()
            self.end_headers()
            return True

        def do_GET(self) -> None:  # noqa: N802
            with owner._cond:  # recorded so a test can tell that a redirect's target received nothing at all
                owner._state.requests.append(RecordedRequest("GET", self.path, dict(self.headers.items()), None, b"",
                                                             None))
            if self._redirected():
                return
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = None
            sha = image_sha256_of(body) if body is not None else None
            request = RecordedRequest("POST", self.path, dict(self.headers.items()), body, raw, sha)
            fault = owner._enter(request)
            self._in_flight = True
            try:
                if self._redirected():
                    return
                if owner.latency_s:
                    time.sleep(owner.latency_s)
                self._respond(body, sha, fault)
            finally:
                self._leave_once()

        def _respond(self, body: Any, sha: str | None, fault: str | None) -> None:
            if fault == "drop":
                self.close_connection = True
                self.connection.close()
                return
            if fault == "429":
                self._send_json(429, {"error": {"message": "rate limited"}}, {"Retry-After": owner.retry_after})
                return
            if fault in ("500", "503", "400", "401"):
                self._send_json(int(fault), {"error": {"message": f"injected {fault}"}})
                return
            if fault in ("trickle", "trickle-headers"):
                self._trickle(b'{"choices": [{"message": {"content": "slow"}, "finish_reason": "stop"}]}',
                              headers_too=fault == "trickle-headers")
                return
            if fault in ("echo-key-401", "echo-key-500", "echo-key-text"):
                header = self.headers.get("Authorization", "")
                key = header.partition(" ")[2]
                message = f"invalid credentials: got header 'Authorization: {header}', key {key} is not valid"
                if fault == "echo-key-text":
                    data = f"<html>{message}</html>".encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(data)))
                    self._leave_once()
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self._send_json(int(fault.rsplit("-", 1)[1]), {"error": {"message": message, "key": key}})
                return
            if fault == "malformed":
                data = b'{"choices": [ {"message": '
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self._leave_once()
                self.end_headers()
                self.wfile.write(data)
                return
            if not self.path.endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}"}})
                return
            if body is None or sha is None:
                self._send_json(400, {"error": {"message": "expected a JSON body with an image_url part"}})
                return
            if fault == "empty-choices":
                self._send_json(200, {"id": "x", "object": "chat.completion", "choices": []})
                return
            answer = owner.answers.get(sha) or Answer(owner.default_content(sha))
            self._send_json(
                200,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "model": body.get("model", owner.model),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": answer.content},
                            "finish_reason": answer.finish_reason,
                        }
                    ],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                },
            )

    return Handler
