"""A small JSON-over-HTTP client for remote engines, built on the standard library only.

Remote OCR engines (vision-language models behind vLLM, SGLang, Ollama or a hosted API) fail in ordinary ways:
the server is overloaded (HTTP 429), restarting (502/503), slow (timeouts) or gone (connection refused).
:class:`JsonHttpClient` turns all of that into one policy:

* a per-request timeout, so no request waits forever: it is a total deadline for connecting, sending and reading
  the whole answer (a server that trickles its headers or body one byte a second is cut off when the time is up,
  however often a byte arrives), not a limit per socket read;
* retries with exponential backoff and full jitter on 429, 5xx and connection errors, honouring ``Retry-After``;
* an immediate, clear :class:`~pytest_ocrmetrics.engines.base.EngineError` for anything else (400, 401, 404, a body
  that is not JSON), naming the URL and the status, with the first part of the server's answer;
* no redirect is ever followed: a 3xx answer is an immediate :class:`HttpStatusError` naming both addresses, since
  following it would send the page and the ``Authorization`` header to whatever host the ``Location`` names (and
  turn the POST into a GET whose answer would be scored as OCR output); the fix is to configure the final address;
* a dead-server fast path: once a request has exhausted its retries on connection errors, later requests try once
  (until one succeeds again), so a suite against a dead server ends in a row of errors, not an hour of backoff;
* an answer is read up to ``max_response_bytes`` (default :data:`MAX_RESPONSE_BYTES`, 64 MiB; the engine setting
  ``ENGINE.max_response_mb``) and no further: a server answering 1 GB (a model
  that never stopped, a proxy's error page streamed forever) is an immediate
  :class:`~pytest_ocrmetrics.engines.base.EngineError` for that document, not a ``MemoryError`` for the run;
* :meth:`JsonHttpClient.cancel` wakes every backoff sleep at once and stops further attempts (Ctrl-C).

The standard library is enough here: requests are few and large (one image each), so connection pooling would not
change the numbers, and remote engines stay usable without any extra dependency.

Secrets: the ``Authorization`` header is sent but never appears in an error message or ``repr``; a server that
echoes it (or the key alone) in an error body has it replaced by ``[redacted]`` (:meth:`JsonHttpClient.redact`)
before the message reaches any report or the terminal.

Example::

    >>> client = JsonHttpClient(timeout_s=30, retry=RetryPolicy(retries=2))
    >>> client.post_json("http://127.0.0.1:9/v1/chat/completions", {"model": "x"})  # doctest: +SKIP
    Traceback (most recent call last):
    EngineError: POST http://127.0.0.1:9/v1/chat/completions failed after 3 attempts: connection error: ...
"""

from __future__ import annotations

import json
import random
import re
import socket
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from pytest_ocrmetrics.engines.base import EngineError

if TYPE_CHECKING:  # urllib.request, email and http.client are imported when a request is first made (~20 ms)
    import ssl
    import urllib.request

__all__ = ["RetryPolicy", "JsonResponse", "HttpStatusError", "JsonHttpClient", "RETRYABLE_STATUS", "redirect_message",
           "MAX_RESPONSE_BYTES"]

RETRYABLE_STATUS: frozenset[int] = frozenset({408, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth retrying: the request was fine, the server was not ready for it (all 5xx are retried too)."""

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""The default of the most bytes of an answer read (64 MiB): an OCR answer is a few kilobytes of JSON; one of a
gigabyte would be decoded into several gigabytes of Python objects (``std::bad_alloc`` / ``MemoryError``). Reading
stops at the limit and that request fails in one sentence (not retried: the server did answer). The remote engines
set it per server with ``openai.max_response_mb`` / ``deepseek.max_response_mb``."""

_BODY_EXCERPT = 300
_READ_CHUNK = 65536
_SECRET_HEADERS = ("authorization", "proxy-authorization", "api-key", "x-api-key")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"',;]+")
REDACTED = "[redacted]"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a failed request.

    ``retries`` is the number of *extra* attempts after the first. The n-th retry (n = 1, 2, ...) waits a random time
    in ``[0, min(max_backoff_s, backoff_s * 2**(n-1))]`` ("full jitter", so many clients that failed together do not
    come back together), or exactly what the server's ``Retry-After`` asks for, capped at ``max_retry_after_s``.

    >>> RetryPolicy(retries=3, backoff_s=0.5).ceiling(3)
    2.0
    """

    retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 20.0
    max_retry_after_s: float = 60.0

    def ceiling(self, attempt: int) -> float:
        """The longest wait before retry number ``attempt`` (1-based), before jitter."""
        return min(self.max_backoff_s, self.backoff_s * (2 ** (attempt - 1)))


@dataclass(frozen=True)
class JsonResponse:
    """A decoded JSON answer: the status, the parsed body and the number of attempts it took."""

    status: int
    body: Any
    attempts: int
    elapsed_s: float


class HttpStatusError(EngineError):
    """The server answered with an error status (after retries, when the status was retryable)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after_s: float | None = None, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s
        self.status = status


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or unreadable.

    >>> parse_retry_after("3")
    3.0
    >>> parse_retry_after("soon") is None
    True
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _excerpt(text: str) -> str:
    text = text.strip().replace("\n", " ")
    return text if len(text) <= _BODY_EXCERPT else text[:_BODY_EXCERPT] + "…"


def redact_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every value in ``secrets`` and every ``Bearer <token>`` / ``Basic <token>`` replaced.

    >>> redact_secrets('{"error": "bad key sk-123 in Authorization: Bearer sk-123"}', ("sk-123",))
    '{"error": "bad key [redacted] in Authorization: Bearer [redacted]"}'
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return _BEARER.sub(lambda match: f"{match.group(1)} {REDACTED}", text)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in recv() on this socket
    except OSError:
        pass


class _Deadline:
    """The total time limit of one request, headers and body together.

    ``urlopen``'s timeout bounds each socket operation, so a server sending one byte at a time could hold a request
    forever. A watchdog timer shuts the connection's socket down when the time is up (the connection registers its
    socket through :data:`_CURRENT` as soon as it has one), and the body is read with at most one system call per
    step, the socket's timeout set to the time left before each.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.fired = threading.Event()
        self.in_body = False  # the headers have arrived
        self.received = 0  # body bytes read so far
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
        if self.fired.is_set():
            _shutdown(sock)

    def _expire(self) -> None:
        self.fired.set()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def cancel(self) -> None:
        self._timer.cancel()


_CURRENT = threading.local()  # .deadline: the _Deadline of the request this thread is sending


def _watch_connection(sock: socket.socket | None) -> None:
    deadline = getattr(_CURRENT, "deadline", None)
    if deadline is not None and sock is not None:
        deadline.watch(sock)


def _default_opener() -> Callable[..., Any]:
    """``urlopen`` whose connections put their sockets under the current request's :class:`_Deadline`."""
    import http.client
    import urllib.request

    class WatchedHTTPConnection(http.client.HTTPConnection):
        def connect(self) -> None:
            super().connect()
            _watch_connection(self.sock)

    class WatchedHTTPSConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            super().connect()
            _watch_connection(self.sock)

    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(WatchedHTTPConnection, req)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        _context: ssl.SSLContext | None  # urllib's own (set by its __init__; private, so typeshed omits it)

        def https_open(self, req: urllib.request.Request) -> Any:
            return self.do_open(WatchedHTTPSConnection, req, context=self._context)

    class RefuseRedirects(urllib.request.HTTPRedirectHandler):
        """Replaces urllib's redirect handler: a 3xx reaches the caller as an HTTPError, never a second request."""

        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(HTTPHandler, HTTPSHandler, RefuseRedirects).open


def redirect_message(method: str, url: str, status: int, location: str | None) -> str:
    """The one sentence for a server that answered a redirect, naming both addresses (``location`` resolved).

    >>> redirect_message("POST", "http://a:1/v1/chat/completions", 302, "http://b:2/x")  # doctest: +ELLIPSIS
    'POST http://a:1/v1/chat/completions answered HTTP 302, a redirect to http://b:2/x; pytest-ocrmetrics ...'
    """
    import urllib.parse

    if location and location.strip():
        target = urllib.parse.urljoin(url, location.strip())
        target = target if len(target) <= _BODY_EXCERPT else target[:_BODY_EXCERPT] + "…"
        where = f"a redirect to {target}"
    else:
        where = "a redirect without a Location header"
    return (f"{method} {url} answered HTTP {status}, {where}; pytest-ocrmetrics does not follow redirects (that would "
            f"send the page and the API key to another address): set base_url to the final address")


def _socket_of(response: Any) -> socket.socket | None:
    """The socket under a ``urlopen`` response or HTTPError (None for a stand-in without one)."""
    for _ in range(3):
        sock = getattr(getattr(response, "raw", None), "_sock", None)
        if isinstance(sock, socket.socket):
            return sock
        response = getattr(response, "fp", None)
        if response is None:
            return None
    return None


class _DeadlinePassed(Exception):
    pass


class _TooLarge(Exception):
    """The body is longer than the limit; ``partial`` holds what was read (up to the limit)."""

    def __init__(self, partial: bytes) -> None:
        super().__init__()
        self.partial = partial


def read_body(response: Any, deadline: _Deadline, limit: int = MAX_RESPONSE_BYTES) -> bytes:
    """Read the whole body of ``response`` before ``deadline`` passes; :class:`_DeadlinePassed` otherwise, and
    :class:`_TooLarge` as soon as more than ``limit`` bytes arrived (nothing past the limit is kept)."""
    read = getattr(response, "read1", None)
    if read is None:  # a stand-in opener's answer (tests): no deadline to keep, but the same size limit
        data = bytes(response.read())
        if len(data) > limit:
            raise _TooLarge(data[:limit])
        return data
    deadline.in_body = True
    sock = _socket_of(response)
    chunks: list[bytes] = []
    while True:
        remaining = deadline.remaining()
        if remaining <= 0 or deadline.fired.is_set():
            raise _DeadlinePassed()
        if sock is not None:
            sock.settimeout(remaining)
        try:
            chunk = read(_READ_CHUNK)
        except TimeoutError:  # the socket waited for exactly the time that was left
            raise _DeadlinePassed() from None
        except http_client_errors(OSError):
            if deadline.fired.is_set():  # the watchdog shut the socket down mid-read
                raise _DeadlinePassed() from None
            raise
        if deadline.fired.is_set():
            raise _DeadlinePassed()
        if not chunk:
            return b"".join(chunks)
        if deadline.received + len(chunk) > limit:
            chunks.append(chunk[: limit - deadline.received])
            raise _TooLarge(b"".join(chunks))
        chunks.append(chunk)
        deadline.received += len(chunk)


class JsonHttpClient:
    """POSTs JSON and decodes JSON answers, with timeouts, retries, backoff and cancellation.

    Thread-safe: one client is shared by all worker threads of an engine. ``headers`` are sent with every request
    (put the ``Authorization`` header here; it never shows in errors). ``rng``, ``opener`` (``urlopen``'s stand-in)
    and ``wait`` (sleeps between attempts; returns True to cancel) are injectable for tests. ``max_response_bytes``
    is the most bytes of one answer read; ``limit_setting`` is how a user changes it (``openai.max_response_mb``),
    named in the error of an answer over it.
    """

    def __init__(
        self,
        *,
        timeout_s: float = 120.0,
        retry: RetryPolicy = RetryPolicy(),
        headers: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
        opener: Callable[..., Any] | None = None,
        wait: Callable[[float], bool] | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        limit_setting: str = "max_response_bytes",
    ) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout_s!r}")
        if int(max_response_bytes) < 1:
            raise ValueError(f"max_response_bytes must be a positive number of bytes, got {max_response_bytes!r}")
        self.timeout_s = float(timeout_s)
        self.max_response_bytes = int(max_response_bytes)
        self.limit_setting = limit_setting  # how the answer-size limit is set, named when an answer exceeds it
        self.retry = retry
        self._headers = dict(headers or {})
        self._rng = rng or random.Random()
        self._rng_lock = threading.Lock()
        self._cancelled = threading.Event()
        self._dead_lock = threading.Lock()
        self._dead_reason: str | None = None
        self._open = opener or _default_opener()
        self._wait = wait or self._cancelled.wait  # returns True when cancelled during the wait
        self.requests_sent = 0
        self.retries_done = 0
        secrets: list[str] = []
        for name, value in self._headers.items():
            if name.lower() in _SECRET_HEADERS and value.strip():
                scheme, _, token = value.strip().partition(" ")
                has_scheme = token.strip() and scheme.lower() in ("bearer", "basic", "token")
                secrets.append(token.strip() if has_scheme else value.strip())  # "Bearer [redacted]" stays readable
        self._secrets = tuple(sorted(set(secrets), key=len, reverse=True))

    def __repr__(self) -> str:
        return f"JsonHttpClient(timeout_s={self.timeout_s}, retry={self.retry!r})"

    def redact(self, text: str) -> str:
        """``text`` with this client's secrets (the API key, alone or as ``Bearer <key>``) replaced by ``[redacted]``.

        Every error message the client builds passes through here; engines use it for messages that quote an answer.
        """
        return redact_secrets(text, self._secrets)

    # -- cancellation ---------------------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop: wake every backoff sleep and refuse further attempts (each raises EngineError "cancelled")."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    # -- requests -------------------------------------------------------------------------------------------------

    def post_json(self, url: str, payload: Mapping[str, Any]) -> JsonResponse:
        """POST ``payload`` as JSON to ``url`` and return the decoded JSON answer.

        Raises :class:`HttpStatusError` for an error status (after retries when retryable) and
        :class:`~pytest_ocrmetrics.engines.base.EngineError` for connection failures after retries, a body that is
        not JSON, or cancellation.
        """
        data = json.dumps(payload).encode("utf-8")
        return self._request("POST", url, data)

    def get_json(self, url: str) -> JsonResponse:
        """GET ``url`` and return the decoded JSON answer (same retry policy as :meth:`post_json`)."""
        return self._request("GET", url, None)

    def _request(self, method: str, url: str, data: bytes | None) -> JsonResponse:
        started = time.monotonic()
        try:
            return self._attempts(method, url, data, started)
        except EngineError as exc:  # one place that keeps the API key out of every message
            message = self.redact(str(exc))
            if message != str(exc):
                exc.args = (message,)
            raise

    def _attempts(self, method: str, url: str, data: bytes | None, started: float) -> JsonResponse:
        with self._dead_lock:
            dead_reason = self._dead_reason
        max_attempts = 1 if dead_reason else self.retry.retries + 1
        last: _Retryable | None = None
        for attempt in range(1, max_attempts + 1):
            if self._cancelled.is_set():
                raise EngineError(f"{method} {url} cancelled")
            try:
                status, body = self._once(method, url, data)
            except EngineError:  # the server answered (an error status or a bad body): it is alive
                with self._dead_lock:
                    self._dead_reason = None
                raise
            except _Retryable as exc:
                last = exc
                if attempt == max_attempts:
                    break
                delay = self._delay(attempt, exc.retry_after_s)
                self.retries_done += 1
                if self._wait(delay) or self._cancelled.is_set():
                    raise EngineError(f"{method} {url} cancelled") from None
                continue
            with self._dead_lock:
                self._dead_reason = None
            return JsonResponse(status=status, body=body, attempts=attempt, elapsed_s=time.monotonic() - started)

        assert last is not None
        if last.status is None:
            with self._dead_lock:
                self._dead_reason = last.reason
        attempts = "1 attempt" if max_attempts == 1 else f"{max_attempts} attempts"
        hint = ""
        if dead_reason and last.status is None:
            hint = " (the server was already unreachable for earlier requests, so this one was not retried)"
        message = f"{method} {url} failed after {attempts}: {last.reason}{hint}"
        if last.status is not None:
            raise HttpStatusError(message, last.status)
        raise EngineError(message)

    def _delay(self, attempt: int, retry_after_s: float | None) -> float:
        if retry_after_s is not None:
            return min(retry_after_s, self.retry.max_retry_after_s)
        with self._rng_lock:
            return self._rng.uniform(0.0, self.retry.ceiling(attempt))

    def _once(self, method: str, url: str, data: bytes | None) -> tuple[int, Any]:
        headers = {"Accept": "application/json", **self._headers}
        if data is not None:
            headers["Content-Type"] = "application/json"
        import urllib.request

        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        self.requests_sent += 1
        deadline = _Deadline(self.timeout_s)
        _CURRENT.deadline = deadline
        try:
            return self._send(request, deadline)
        finally:
            _CURRENT.deadline = None
            deadline.cancel()

    def _send(self, request: urllib.request.Request, deadline: _Deadline) -> tuple[int, Any]:
        import urllib.error

        method, url = request.get_method(), request.full_url

        def timeout() -> _Retryable:
            if deadline.in_body:
                return _Retryable(f"no complete answer within {self.timeout_s:g} s (timeout; the server was still "
                                  f"sending after {deadline.received} bytes of the body)")
            return _Retryable(f"no answer within {self.timeout_s:g} s (timeout)")

        try:
            with self._open(request, timeout=self.timeout_s) as response:
                status = int(response.status)
                if 300 <= status < 400:  # an opener that does not raise for a redirect (a stand-in)
                    location = response.headers.get("Location") if getattr(response, "headers", None) else None
                    raise HttpStatusError(redirect_message(method, url, status, location), status)
                raw = read_body(response, deadline, self.max_response_bytes)
        except _DeadlinePassed:
            raise timeout() from None
        except _TooLarge:
            limit = self.max_response_bytes
            mib = f"{limit / 2**20:g} MiB, " if limit >= 2**20 else ""
            raise EngineError(
                f"{method} {url} answered HTTP {status} with more than {limit:,} bytes ({mib}{self.limit_setting}, the "
                "most read of an answer): reading stopped there; an OCR answer is a few kilobytes, so check the "
                "server (a model that never stopped generating?)"
            ) from None
        except urllib.error.HTTPError as exc:
            if 300 <= int(exc.code) < 400:  # never followed: see redirect_message
                location = exc.headers.get("Location") if exc.headers else None
                exc.close()
                raise HttpStatusError(redirect_message(method, url, int(exc.code), location), int(exc.code)) from None
            try:
                raw = read_body(exc, deadline, self.max_response_bytes)
            except _TooLarge as too_large:  # an error page that never ends: its first part says enough
                raw = too_large.partial
            except http_client_errors(OSError, AttributeError, _DeadlinePassed):
                raw = b""
            finally:
                exc.close()
            status = int(exc.code)
            reason = f"HTTP {status}: {_excerpt(self.redact(raw.decode('utf-8', errors='replace'))) or exc.reason}"
            if status in (401, 403):
                reason += " (check the API key: the environment variable named by the engine's api_key_env setting)"
            if status in RETRYABLE_STATUS or status >= 500:
                retry_after = parse_retry_after(exc.headers.get("Retry-After") if exc.headers else None)
                raise _Retryable(reason, retry_after_s=retry_after, status=status) from None
            raise HttpStatusError(f"{method} {url} failed: {reason}", status) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
            cause = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            if deadline.fired.is_set() or isinstance(cause, (socket.timeout, TimeoutError)):
                raise timeout() from None
            raise _Retryable(f"connection error: {cause}") from None
        except http_client_errors() as exc:  # a server that closed the connection mid-answer
            if deadline.fired.is_set():  # no: the watchdog closed it
                raise timeout() from None
            raise _Retryable(f"connection error: {type(exc).__name__}: {exc}") from None
        try:
            return status, json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            excerpt = _excerpt(self.redact(raw.decode("utf-8", errors="replace")))
            raise EngineError(
                f"{method} {url} answered HTTP {status} with a body that is not JSON ({exc}): {excerpt!r}"
            ) from None


def http_client_errors(*also: type[BaseException]) -> tuple[type[BaseException], ...]:
    """Exceptions of :mod:`http.client` that mean the connection broke mid-answer, after ``also``.

    Args:
        also: more exception types for the same ``except`` clause.

    Returns:
        The tuple an ``except`` clause takes.
    """
    import http.client

    return (*also, http.client.HTTPException)
