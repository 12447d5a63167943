"""The JSON HTTP client: retries, backoff, Retry-After, timeouts, the dead-server fast path and cancellation."""

from __future__ import annotations

import email.utils
import random
import threading
import time
import urllib.error

import pytest

from pytest_ocrmetrics.engines.base import EngineError
from pytest_ocrmetrics.engines.http import HttpStatusError, JsonHttpClient, RetryPolicy, parse_retry_after

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _payload(image: bytes = PNG_MAGIC + b"x") -> dict:
    import base64

    url = "data:image/png;base64," + base64.b64encode(image).decode()
    return {"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]}


class Waits:
    """Stands in for the sleep between attempts: records each delay, never sleeps."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, delay: float) -> bool:
        self.delays.append(delay)
        return False


def client(**kwargs) -> tuple[JsonHttpClient, Waits]:
    waits = Waits()
    kwargs.setdefault("retry", RetryPolicy(retries=3, backoff_s=0.5))
    return JsonHttpClient(timeout_s=kwargs.pop("timeout_s", 5.0), wait=waits, rng=random.Random(1), **kwargs), waits


def url(server) -> str:
    return server.base_url + "/chat/completions"


def test_success_returns_decoded_json_after_one_attempt(chat_server):
    http, waits = client()
    response = http.post_json(url(chat_server), _payload())
    assert response.status == 200
    assert response.attempts == 1
    assert response.body["choices"][0]["message"]["content"].startswith("text of ")
    assert waits.delays == []


@pytest.mark.parametrize("fault", ["429", "500", "503", "drop"])
def test_retryable_failures_are_retried(chat_server, fault):
    chat_server.fail_next(fault, fault)
    http, waits = client()
    response = http.post_json(url(chat_server), _payload())
    assert response.attempts == 3
    assert len(chat_server.chat_requests) == 3
    assert len(waits.delays) == 2


def test_retry_after_header_is_honoured(chat_server):
    chat_server.retry_after = "7"
    chat_server.fail_next("429")
    http, waits = client()
    http.post_json(url(chat_server), _payload())
    assert waits.delays == [7.0]


def test_retry_after_is_capped(chat_server):
    chat_server.retry_after = "3600"
    chat_server.fail_next("429")
    http, waits = client(retry=RetryPolicy(retries=1, max_retry_after_s=30.0))
    http.post_json(url(chat_server), _payload())
    assert waits.delays == [30.0]


def test_backoff_is_exponential_with_full_jitter(chat_server):
    chat_server.fail_next("500", "500", "500", "500")
    http, waits = client(retry=RetryPolicy(retries=4, backoff_s=1.0, max_backoff_s=3.0))
    http.post_json(url(chat_server), _payload())
    ceilings = [1.0, 2.0, 3.0, 3.0]
    assert len(waits.delays) == 4
    assert all(0.0 <= delay <= ceiling for delay, ceiling in zip(waits.delays, ceilings))
    assert len(set(waits.delays)) == 4  # jittered, not a fixed schedule


def test_exhausted_retries_raise_a_clear_error_with_the_status(chat_server):
    chat_server.fail_next("500", "500", "500")
    http, _ = client(retry=RetryPolicy(retries=2))
    with pytest.raises(HttpStatusError) as excinfo:
        http.post_json(url(chat_server), _payload())
    assert excinfo.value.status == 500
    message = str(excinfo.value)
    assert "failed after 3 attempts" in message and "HTTP 500" in message and "injected 500" in message
    assert url(chat_server) in message


@pytest.mark.parametrize("fault", ["400", "401"])
def test_client_errors_are_not_retried(chat_server, fault):
    chat_server.fail_next(fault)
    http, waits = client()
    with pytest.raises(HttpStatusError) as excinfo:
        http.post_json(url(chat_server), _payload())
    assert excinfo.value.status == int(fault)
    assert len(chat_server.chat_requests) == 1 and waits.delays == []


def test_the_api_key_never_appears_in_errors(chat_server):
    chat_server.fail_next("401")
    http, _ = client(headers={"Authorization": "Bearer sk-secret-123"})
    with pytest.raises(HttpStatusError) as excinfo:
        http.post_json(url(chat_server), _payload())
    assert "sk-secret-123" not in str(excinfo.value)
    assert "api_key_env" in str(excinfo.value)
    assert "sk-secret" not in repr(http)
    assert chat_server.chat_requests[0].headers["Authorization"] == "Bearer sk-secret-123"


def test_a_body_that_is_not_json_is_a_clear_error_without_retry(chat_server):
    chat_server.fail_next("malformed")
    http, waits = client()
    with pytest.raises(EngineError, match="not JSON"):
        http.post_json(url(chat_server), _payload())
    assert len(chat_server.chat_requests) == 1 and waits.delays == []


def test_timeout_is_per_request_and_reported(chat_server):
    chat_server.latency_s = 1.0
    http, _ = client(timeout_s=0.1, retry=RetryPolicy(retries=1))
    with pytest.raises(EngineError, match=r"no answer within 0\.1 s \(timeout\)"):
        http.post_json(url(chat_server), _payload())
    assert len(chat_server.chat_requests) == 2


def test_dead_server_fails_fast_after_the_first_exhausted_request(chat_server):
    dead_url = url(chat_server)
    chat_server.stop()
    http, waits = client(retry=RetryPolicy(retries=2))
    with pytest.raises(EngineError, match="failed after 3 attempts: connection error"):
        http.post_json(dead_url, _payload())
    assert len(waits.delays) == 2
    with pytest.raises(EngineError, match="already unreachable"):
        http.post_json(dead_url, _payload())
    assert len(waits.delays) == 2  # the second request was tried once, without backoff


def test_a_success_ends_the_dead_server_fast_path():
    calls: list[str] = []

    class Response:
        status = 200

        def read(self) -> bytes:
            return b'{"ok": true}'

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

    def opener(request, timeout):
        calls.append(request.full_url)
        if len(calls) <= 3:
            raise urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))
        return Response()

    waits = Waits()
    http = JsonHttpClient(retry=RetryPolicy(retries=2), opener=opener, wait=waits)
    with pytest.raises(EngineError):
        http.post_json("http://127.0.0.1:9/x", {})
    assert http.post_json("http://127.0.0.1:9/x", {}).attempts == 1  # fast path: one attempt, it worked
    calls.clear()
    with pytest.raises(EngineError, match="failed after 3 attempts"):  # back to full retries
        http.post_json("http://127.0.0.1:9/x", {})


def test_cancel_stops_further_attempts(chat_server):
    http, _ = client()
    http.cancel()
    with pytest.raises(EngineError, match="cancelled"):
        http.post_json(url(chat_server), _payload())
    assert chat_server.chat_requests == []


def test_cancel_wakes_a_request_sleeping_in_backoff(chat_server):
    chat_server.fail_next(*["500"] * 10)
    http = JsonHttpClient(timeout_s=5, retry=RetryPolicy(retries=5, backoff_s=600.0, max_backoff_s=600.0),
                          rng=random.Random(0))
    errors: list[BaseException] = []

    def run() -> None:
        try:
            http.post_json(url(chat_server), _payload())
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not chat_server.chat_requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert chat_server.chat_requests
    http.cancel()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(errors) == 1 and "cancelled" in str(errors[0])


def test_parse_retry_after_accepts_seconds_and_http_dates():
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after(None) is None and parse_retry_after("later") is None
    when = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after(when, now=1_000_000) == pytest.approx(30.0)
    assert parse_retry_after(email.utils.formatdate(10, usegmt=True), now=1_000_000) == 0.0


def test_an_error_answer_also_ends_the_dead_server_fast_path():
    import email.message
    import io

    calls: list[int] = []

    def opener(request, timeout):
        calls.append(1)
        if len(calls) <= 3:
            raise urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))
        raise urllib.error.HTTPError(request.full_url, 400, "Bad Request", email.message.Message(),
                                     io.BytesIO(b'{"error": "bad image"}'))

    http = JsonHttpClient(retry=RetryPolicy(retries=2), opener=opener, wait=Waits())
    with pytest.raises(EngineError, match="failed after 3 attempts"):
        http.post_json("http://127.0.0.1:9/x", {})
    with pytest.raises(HttpStatusError, match="bad image"):  # the server is back: it answered
        http.post_json("http://127.0.0.1:9/x", {})
    calls[:] = [1, 1]  # the next call fails once more with a connection error, then gets the 400 again
    with pytest.raises(HttpStatusError):
        http.post_json("http://127.0.0.1:9/x", {})
    assert len(calls) == 4  # it was retried: the fast path had ended


def test_a_body_that_trickles_is_cut_off_by_the_total_deadline(chat_server):
    chat_server.fail_next("trickle")  # headers at once, then one byte a second: every single read is quick
    http, _ = client(timeout_s=1.0, retry=RetryPolicy(retries=0))
    with pytest.raises(EngineError, match=r"no complete answer within 1 s \(timeout; the server was still sending "
                                          r"after \d+ bytes of the body\)"):
        http.post_json(url(chat_server), _payload())
    assert not chat_server.trickle_finished.is_set()  # the answer was incomplete when the client gave up
    assert chat_server.trickled_bytes < 20


def test_headers_that_trickle_are_cut_off_by_the_total_deadline(chat_server):
    chat_server.fail_next("trickle-headers")  # even the status line comes one byte a second
    http, _ = client(timeout_s=1.0, retry=RetryPolicy(retries=0))
    with pytest.raises(EngineError, match=r"failed after 1 attempt: no answer within 1 s \(timeout\)$"):
        http.post_json(url(chat_server), _payload())
    assert not chat_server.trickle_finished.is_set() and chat_server.trickled_bytes < 20


def test_a_body_that_trickles_is_retried_like_a_timeout(chat_server):
    chat_server.fail_next("trickle")
    http, waits = client(timeout_s=0.5, retry=RetryPolicy(retries=1))
    response = http.post_json(url(chat_server), _payload())
    assert response.attempts == 2 and len(waits.delays) == 1


SECRET = "sk-secret-key-0123456789"


@pytest.mark.parametrize("fault", ["echo-key-401", "echo-key-500", "echo-key-text"])
def test_an_error_body_echoing_the_api_key_is_redacted(chat_server, fault):
    chat_server.fail_next(fault, fault)
    http, _ = client(headers={"Authorization": f"Bearer {SECRET}"}, retry=RetryPolicy(retries=1))
    with pytest.raises(EngineError) as excinfo:
        http.post_json(url(chat_server), _payload())
    message = str(excinfo.value)
    assert SECRET not in message and SECRET[:12] not in message
    assert "invalid credentials" in message and "[redacted]" in message
    assert "Authorization: Bearer [redacted]" in message
    assert chat_server.chat_requests[0].headers["Authorization"] == f"Bearer {SECRET}"


def test_redaction_covers_bearer_tokens_the_client_did_not_send():
    from pytest_ocrmetrics.engines.http import redact_secrets

    assert redact_secrets("proxy said: Authorization: bearer abc.def-123, retry") == (
        "proxy said: Authorization: bearer [redacted], retry"
    )
    assert redact_secrets("key k3y-value leaked twice: k3y-value", ("k3y-value",)) == (
        "key [redacted] leaked twice: [redacted]"
    )


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_never_followed_and_names_both_addresses(chat_server, status):
    from tests.helpers.servers import load_fake_server

    with load_fake_server().FakeChatServer() as elsewhere:
        target = elsewhere.base_url + "/chat/completions"
        chat_server.redirect(status, target)
        http, waits = client(headers={"Authorization": f"Bearer {SECRET}"})
        with pytest.raises(HttpStatusError) as excinfo:
            http.post_json(url(chat_server), _payload())
        assert elsewhere.requests == []  # nothing reached the other host: no page, no key, no GET
    message = str(excinfo.value)
    assert excinfo.value.status == status
    assert f"POST {url(chat_server)} answered HTTP {status}, a redirect to {target};" in message
    assert "does not follow redirects" in message and "base_url" in message
    assert SECRET not in message
    assert len(chat_server.requests) == 1 and waits.delays == []  # not retried either


def test_a_relative_redirect_is_named_as_the_address_it_resolves_to(chat_server):
    chat_server.redirect(307, "/elsewhere/chat/completions")
    http, _ = client()
    with pytest.raises(HttpStatusError, match=r"a redirect to http://127\.0\.0\.1:\d+/elsewhere/chat/completions;"):
        http.post_json(url(chat_server), _payload())
    assert [r.path for r in chat_server.requests] == ["/v1/chat/completions"]


def test_a_redirect_from_a_stand_in_opener_is_refused_too():
    import email.message

    class Redirected:
        status = 302

        def __init__(self) -> None:
            self.headers = email.message.Message()
            self.headers["Location"] = "http://other.example/v1/chat/completions"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self) -> bytes:  # pragma: no cover - must not be reached
            raise AssertionError("the body of a redirect was read")

    http, _ = client(opener=lambda request, timeout: Redirected())
    with pytest.raises(HttpStatusError, match="a redirect to http://other.example/v1/chat/completions;"):
        http.post_json("http://127.0.0.1:9/v1/chat/completions", _payload())


def test_an_answer_past_the_size_limit_is_one_sentence_and_not_retried(chat_server):
    http, waits = client(max_response_bytes=50)  # a normal answer is a few hundred bytes
    with pytest.raises(EngineError, match=r"answered HTTP 200 with more than 50 bytes \(max_response_bytes, the most "
                                          r"read of an answer\): reading stopped there"):
        http.post_json(url(chat_server), _payload())
    assert len(chat_server.chat_requests) == 1 and waits.delays == []


def test_the_default_size_limit_is_64_mib():
    from pytest_ocrmetrics.engines.http import MAX_RESPONSE_BYTES

    assert JsonHttpClient().max_response_bytes == MAX_RESPONSE_BYTES == 64 * 1024 * 1024


def test_reading_stops_at_the_limit_of_an_endless_answer():
    """A server streaming an answer of a gigabyte (declared, and sent until the client hangs up): the client keeps
    at most the limit, then stops reading, instead of holding the whole answer in memory."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    sent = [0]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
            block = b"[" * 65536
            try:
                while sent[0] < 1_000_000_000:
                    conn.sendall(block)
                    sent[0] += len(block)
            except OSError:  # the client closed the connection
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    http, _ = client(max_response_bytes=1024 * 1024, retry=RetryPolicy(retries=0))
    address = f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"
    with pytest.raises(EngineError, match=r"with more than 1,048,576 bytes \(1 MiB"):
        http.post_json(address, _payload())
    thread.join(timeout=10)
    listener.close()
    assert not thread.is_alive()
    assert sent[0] < 100 * 1024 * 1024  # the server gave up long before the gigabyte: the client stopped reading
