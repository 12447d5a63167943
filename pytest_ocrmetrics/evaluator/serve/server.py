"""The HTTP side of ``ocrmetrics serve``: the standard library's :class:`~http.server.ThreadingHTTPServer`.

Routes:

- ``GET /``: the page, one HTML document with its stylesheet and script inlined and allowed by a hash-based
  Content-Security-Policy (nothing is fetched from elsewhere; the page works offline);
- ``POST /api/analyze`` (JSON) and ``POST /api/batch`` (``multipart/form-data``): see :mod:`pytest_ocrmetrics.evaluator.serve.api`;
- with ``--run``: ``GET /api/run`` (the run's documents), ``GET /api/run/document?index=N`` (one document's
  reference and output) and ``GET /api/run/image?index=N`` (its page image, found as the HTML report finds it:
  ``--image-root``, the dataset folder the run recorded, the run file's folder; see
  :class:`~pytest_ocrmetrics.reporting.images.ImageFinder`). The run file is read once, at start; no request names a
  file. The only files a request makes the server read are the run's page images, by document number, and only
  files that start like an image (a run file naming ``/etc/passwd`` as an image gets it refused).

Every answer of the API is JSON; an error is ``{"error": "one sentence"}`` with a 4xx status. A body is refused with
413 from its ``Content-Length`` before any of it is read; a body without a length (chunked) is refused with 411.

Any web page the user has open can send requests to 127.0.0.1 (a multipart form post needs no CORS preflight), so:

- API requests from another origin are refused with 403: an ``Origin`` header naming another host and port than the
  one the request was sent to, or ``Sec-Fetch-Site: cross-site`` / ``same-site``. Requests with neither header
  (curl, scripts, the page's own GETs) and the page's own requests (``same-origin``, ``none``) are answered;
- at most ``max_computations`` (default :data:`MAX_COMPUTATIONS`) requests read a body and compute at once; one
  more is answered 503 with ``Retry-After`` before its body is read (the page retries it). ``GET /api/run/image``
  (which reads a page image and may convert it with Pillow) takes one of the same slots. With the body limit this
  bounds the memory the API can take, whoever sends the requests.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import re
import socket
import sys
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from pytest_ocrmetrics.core.safe_text import clean_run
from pytest_ocrmetrics.evaluator.serve.api import MAX_BODY_BYTES, ApiError, analyze, batch, parse_multipart
from pytest_ocrmetrics.reporting.assets import csp_hash
from pytest_ocrmetrics.reporting.images import ImageFinder

__all__ = ["EvaluatorServer", "make_server", "serve_in_thread", "run_documents", "page_html", "is_loopback",
           "MAX_COMPUTATIONS"]

#: How many API requests may read their body and compute at the same time (each holds up to MAX_BODY_BYTES of body
#: and the work on it); one more is answered 503 with Retry-After.
MAX_COMPUTATIONS = 2
_RETRY_AFTER_S = 1
_INDEX = re.compile(r"[0-9]{1,12}")  # ASCII digits only: int() also takes "²", "٣" and 5,000-digit strings

_READ_TIMEOUT_S = 30.0  # a client that stops sending mid-request is cut off after this long without a byte
_REQUEST_DEADLINE_S = 120.0  # and one that trickles bytes: a request (line, headers, body) must arrive within this


class _DeadlineReader:
    """The request stream with a total deadline: every socket read waits at most the time left (and at most the
    per-read timeout), so a client trickling a byte at a time cannot hold a thread for ever. Reads go through the
    buffer one socket read at a time (``peek``/``read1``), so the deadline is checked between them. ``deadline`` is
    set when a request starts and cleared once its body is read (the answer's work is not limited)."""

    def __init__(self, raw: Any, connection: socket.socket) -> None:
        self._raw = raw
        self._connection = connection
        self.deadline: float | None = None

    def _arm(self) -> None:
        if self.deadline is None:
            return
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self._connection.settimeout(min(_READ_TIMEOUT_S, left))

    def read(self, size: int = -1) -> bytes:
        if self.deadline is None or size is None or size < 0:
            self._arm()
            return self._raw.read(size)
        parts, got = [], 0
        while got < size:
            self._arm()
            chunk = self._raw.read1(size - got)
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)

    def readline(self, limit: int = -1) -> bytes:
        if self.deadline is None:
            return self._raw.readline(limit)
        parts, got = [], 0
        while limit < 0 or got < limit:
            self._arm()
            buffered = self._raw.peek(1)  # what is buffered, or one socket read
            if not buffered:
                break
            end = buffered.find(b"\n")
            take = len(buffered) if end < 0 else end + 1
            if limit >= 0:
                take = min(take, limit - got)
            chunk = self._raw.read(take)  # already buffered: does not wait
            parts.append(chunk)
            got += len(chunk)
            if chunk.endswith(b"\n"):
                break
        return b"".join(parts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


_LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
#: page image formats (:func:`~pytest_ocrmetrics.core.documents.sniff_image_format`) browsers show: sent unchanged
_BROWSER_IMAGES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WebP": "image/webp",
                   "BMP": "image/bmp"}
_MAX_RAW_IMAGE_BYTES = 64 * 1024 * 1024


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine (``127.0.0.1``, ``::1``, ``localhost``)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _asset(name: str) -> str:
    static = resources.files("pytest_ocrmetrics.evaluator.serve").joinpath("static")
    return static.joinpath(name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Page:
    """The page's HTML and the Content-Security-Policy that lets exactly its own style and script run."""

    html: bytes
    csp: str


def page_html(*, run_label: str | None = None) -> Page:
    """The page, with ``page.css`` and ``page.js`` (package data) inlined; a ``run_label`` (the run file's name, shown
    on the page) turns on the Run tab."""
    css, js = _asset("page.css"), _asset("page.js")
    html = (_asset("page.html").replace("/*CSS*/", css).replace("/*JS*/", js)
            .replace("{{RUN_LABEL}}", escape(run_label or "", quote=True))
            .replace("{{RUN_MODE}}", "false" if run_label is None else "true"))
    csp = (f"default-src 'none'; style-src {csp_hash(css)}; script-src {csp_hash(js)}; connect-src 'self'; "
           "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    return Page(html.encode("utf-8"), csp)


def run_documents(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The list ``GET /api/run`` answers: per document its index, id, dataset, engine, outcome, message, a few
    metrics and whether both texts are in the run file (a document whose engine failed has no output)."""
    listing = []
    for index, doc in enumerate(run.get("documents", ())):
        metrics = doc.get("metrics") or {}
        listing.append({
            "index": index, "id": doc.get("id"), "dataset": doc.get("dataset"), "engine": doc.get("engine"),
            "outcome": doc.get("outcome"), "message": doc.get("message"),
            "metrics": {k: metrics[k] for k in ("cer", "wer", "crr", "word_f1") if isinstance(metrics.get(k), (int, float))},
            "has_texts": isinstance(doc.get("reference"), str) and isinstance(doc.get("hypothesis"), str),
        })
    return listing


class EvaluatorServer(ThreadingHTTPServer):
    """A threading HTTP server holding the page and, with a run, the run (read once, before serving)."""

    daemon_threads = True
    allow_reuse_address = True
    quiet = False  # True: no access log on stderr

    def __init__(self, address: tuple[str, int], *, run: Mapping[str, Any] | None = None,
                 run_label: str | None = None, images: ImageFinder | None = None,
                 max_computations: int = MAX_COMPUTATIONS, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        if max_computations < 1:
            raise ValueError(f"max_computations must be at least 1, got {max_computations!r}")
        host = address[0]
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__(address, EvaluatorHandler)
        self.run = clean_run(dict(run))[0] if run is not None else None
        self.documents = run_documents(self.run) if self.run is not None else []
        self.images = images if images is not None else ImageFinder.for_run(self.run or {})
        self.page = page_html(run_label=(run_label or "the run") if run is not None else None)
        self.loopback = is_loopback(host)
        self.max_computations = max_computations
        self.max_body_bytes = max_body_bytes  # a larger request is refused with 413 before any of it is read
        self.computations = threading.BoundedSemaphore(max_computations)  # taken without waiting: 503 when none

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]  # an IP socket's: the host is text
        shown = f"[{host}]" if ":" in host else host
        if shown in ("0.0.0.0", "[::]"):
            shown = "127.0.0.1" if shown == "0.0.0.0" else "[::1]"
        return f"http://{shown}:{port}/"


class EvaluatorHandler(BaseHTTPRequestHandler):
    server: EvaluatorServer
    protocol_version = "HTTP/1.1"
    server_version = "ocrmetrics-serve"
    timeout = _READ_TIMEOUT_S

    # ------------------------------------------------------------------------------------------------ plumbing

    def setup(self) -> None:
        super().setup()
        self.rfile = _DeadlineReader(self.rfile, self.connection)  # type: ignore[assignment]

    def handle_one_request(self) -> None:
        """One request, whose line, headers and body must arrive within ``_REQUEST_DEADLINE_S`` (a timeout is
        answered as the base class does: the connection is closed)."""
        self.rfile.deadline = time.monotonic() + _REQUEST_DEADLINE_S  # type: ignore[attr-defined]
        try:
            super().handle_one_request()
        finally:
            self.rfile.deadline = None  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if self.server.quiet:
            return
        sys.stderr.write(f"{self.address_string()} - {format % args}\n")

    def _send(self, status: int, body: bytes, content_type: str, extra: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any, extra: Mapping[str, str] | None = None) -> None:
        body = json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
        self._send(status, body, "application/json; charset=utf-8", extra)

    def _error(self, status: int, message: str, extra: Mapping[str, str] | None = None) -> None:
        self._json(status, {"error": message}, extra)

    def _cross_origin(self) -> str | None:
        """Why this request comes from a page of another origin (None when it does not): its ``Origin`` names another
        host or port than the ``Host`` it was sent to, or the browser says ``Sec-Fetch-Site: cross-site``/``same-site``
        (another port of localhost is the same site). Requests without either header are not from a browser page."""
        fetch_site = (self.headers.get("Sec-Fetch-Site") or "").strip().lower()
        if fetch_site in ("cross-site", "same-site"):
            return f"Sec-Fetch-Site: {fetch_site}"
        origin = self.headers.get("Origin")
        if origin is None:
            return None
        host = (self.headers.get("Host") or "").strip().lower()
        try:
            netloc = urllib.parse.urlsplit(origin.strip()).netloc.lower()
        except ValueError:
            netloc = ""
        if not netloc or netloc != host:
            return f"Origin: {origin.strip()[:100]!r}"
        return None

    def _refuse_cross_origin(self) -> None:
        why = self._cross_origin()
        if why is not None:
            raise ApiError(403, f"this API only answers the evaluator page itself, and this request came from another "
                                f"web page ({why}); open the page at {self.server.url}")

    def _host_allowed(self) -> bool:
        """On a loopback address only requests for a loopback host name are answered (a web page elsewhere cannot
        reach the API through DNS rebinding)."""
        if not self.server.loopback:
            return True
        host = (self.headers.get("Host") or "").strip()
        if host.startswith("["):
            name = host[1:].partition("]")[0]
        else:
            name = host.rpartition(":")[0] if host.count(":") == 1 else host
        return is_loopback(name)

    def _body_length(self) -> int:
        """The request's declared body length, checked against the limit before anything is read."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            raise ApiError(411, "send the body with a Content-Length (chunked uploads are not accepted)")
        raw = self.headers.get("Content-Length")
        if raw is None:
            self.close_connection = True
            raise ApiError(411, "the request has no Content-Length; send the body with its length")
        raw = raw.strip()
        if not re.fullmatch(r"[0-9]+", raw):  # ASCII digits only (int() takes others)
            self.close_connection = True
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            raise ApiError(400, f"Content-Length {shown!r} is not a byte count") from None
        length = int(raw) if len(raw) <= 18 else 10 ** 18  # over any limit, without converting 5,000 digits
        if length > self.server.max_body_bytes:
            self.close_connection = True
            raise ApiError(413, f"the request body is {length / 1048576:.1f} MB, over the "
                                f"{self.server.max_body_bytes / 1048576:g} MB limit; upload smaller or fewer files")
        return length

    def handle_expect_100(self) -> bool:
        """Refuse an oversized body before the client sends it (``Expect: 100-continue``, as curl does)."""
        try:
            self._refuse_cross_origin()
            self._body_length()
        except ApiError as exc:
            self._error(exc.status, exc.message)
            return False
        return super().handle_expect_100()

    def _read_body(self, length: int) -> bytes:
        chunks, left = [], length
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 20))
            if not chunk:
                self.close_connection = True
                raise ApiError(400, f"the request body ended after {length - left} of {length} bytes")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _linger(self, length: int) -> None:
        """After refusing a body unread: stop writing, then drop what the client still sends (at most ``length``
        bytes, at most 2 seconds) so that closing the socket does not reset the connection before the client has
        read the answer."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + 2.0
            left = length
            self.connection.settimeout(0.5)
            while left > 0 and time.monotonic() < deadline:
                data = self.connection.recv(min(left, 1 << 16))
                if not data:
                    break
                left -= len(data)
        except OSError:
            pass

    # ------------------------------------------------------------------------------------------------- routes

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        """A GET (or HEAD): every failure, a defect included, is a JSON answer, never a dropped connection."""
        try:
            self._get()
        except ApiError as exc:
            self._error(exc.status, exc.message, exc.headers)
        except Exception as exc:  # a defect: the page still gets an answer it can show, the log the traceback
            self._defect(exc)

    def _defect(self, exc: Exception) -> None:
        traceback.print_exc(file=sys.stderr)
        self.close_connection = True
        self._error(500, f"internal error ({type(exc).__name__}: {exc}); please report it with the input that "
                         "caused it")

    def _index(self, query: Mapping[str, list[str]]) -> int:
        """The ``index`` parameter as a document number of the run; 400 with one sentence for anything else (only
        ASCII digits are read: ``int()`` would take ``²``-like digits, and raise on them)."""
        raw = (query.get("index") or [""])[0]
        count = len(self.server.documents)
        if not _INDEX.fullmatch(raw) or int(raw) >= count:
            shown = raw if len(raw) <= 40 else raw[:40] + "…"
            raise ApiError(400, f"index must be a document number from 0 to {count - 1}, got {shown!r}")
        return int(raw)

    def _get(self) -> None:
        if not self._host_allowed():
            self._error(421, "this server only answers requests for localhost or 127.0.0.1")
            return
        url = urllib.parse.urlsplit(self.path)
        if url.path.startswith("/api/"):
            self._refuse_cross_origin()
        if url.path in ("/", "/index.html"):
            self._send(200, self.server.page.html, "text/html; charset=utf-8",
                       {"Content-Security-Policy": self.server.page.csp, "X-Frame-Options": "DENY"})
        elif url.path == "/api/run":
            if self.server.run is None:
                self._error(404, "no run is open; start the server with ocrmetrics serve --run RUN.json")
                return
            self._json(200, {"documents": self.server.documents,
                             "normalization": self.server.run.get("normalization"),
                             "created": self.server.run.get("created")})
        elif url.path == "/api/run/document":
            self._run_document(urllib.parse.parse_qs(url.query))
        elif url.path == "/api/run/image":
            self._bounded(lambda: self._run_image(urllib.parse.parse_qs(url.query)))
        elif url.path.startswith("/api/"):
            self._error(404, f"no API endpoint {url.path}; the endpoints are POST /api/analyze, POST /api/batch"
                             + (", GET /api/run, GET /api/run/document?index=N, GET /api/run/image?index=N"
                                if self.server.run is not None else ""))
        else:
            self._error(404, f"nothing at {url.path}; the page is at /")

    def _run_document(self, query: Mapping[str, list[str]]) -> None:
        if self.server.run is None:
            self._error(404, "no run is open; start the server with ocrmetrics serve --run RUN.json")
            return
        index = self._index(query)
        doc = self.server.run["documents"][index]
        answer = {**self.server.documents[index], "reference": doc.get("reference"),
                  "hypothesis": doc.get("hypothesis")}
        if doc.get("image"):  # where it is looked for is checked (no file is opened); the page then asks for it
            found = self.server.images.find(str(doc["image"]), str(doc.get("dataset", "")))
            answer["image_url" if found else "image_note"] = (
                f"/api/run/image?index={index}" if found else
                f"page image {doc['image']} not found on this machine; start the server with --image-root DIR, "
                "the folder that holds the datasets")
        self._json(200, answer)

    def _bounded(self, work: Any) -> None:
        """Run ``work`` (a request that reads files and may decode an image) under one of the server's computation
        slots, as the upload endpoints do: 503 with ``Retry-After`` when every slot is taken."""
        if not self.server.computations.acquire(blocking=False):
            raise ApiError(503, f"the server is busy with {self.server.max_computations} other requests; try again "
                                f"in a moment", {"Retry-After": str(_RETRY_AFTER_S)})
        try:
            work()
        finally:
            self.server.computations.release()

    def _run_image(self, query: Mapping[str, list[str]]) -> None:
        """The page image of document ``index``: sniffed (only image files are sent), as it is when browsers show its
        format, else (TIFF, JPEG 2000, PNM) converted with Pillow to PNG or JPEG at up to 4 megapixels."""
        if self.server.run is None:
            self._error(404, "no run is open; start the server with ocrmetrics serve --run RUN.json")
            return
        index = self._index(query)
        doc = self.server.run["documents"][index]
        if not doc.get("image"):
            self._error(404, f"document {index} has no page image in the run file")
            return
        path = self.server.images.find(str(doc["image"]), str(doc.get("dataset", "")))
        if path is None:
            self._error(404, f"page image {doc['image']} not found on this machine; start the server with "
                             "--image-root DIR, the folder that holds the datasets")
            return
        from pytest_ocrmetrics.core.documents import sniff_image_format

        try:
            with path.open("rb") as handle:
                head = handle.read(16)
        except OSError as exc:
            self._error(404, f"page image {doc['image']} cannot be read ({exc.strerror or exc})")
            return
        kind = sniff_image_format(head)
        if kind is None:
            self._error(404, f"{doc['image']} is not an image file; only page images are served")
            return
        if kind in _BROWSER_IMAGES and path.stat().st_size <= _MAX_RAW_IMAGE_BYTES:  # as it is: full quality
            self._send(200, path.read_bytes(), _BROWSER_IMAGES[kind])
            return
        from pytest_ocrmetrics.reporting.html import image_data_url

        url, note = image_data_url(path, max_pixels=4_000_000, max_side=4000)
        if url is None:
            self._error(404, note or f"page image {doc['image']} cannot be shown")
            return
        mime, _, data = url[len("data:"):].partition(";base64,")
        self._send(200, base64.b64decode(data), mime)

    def do_POST(self) -> None:
        declared = (self.headers.get("Content-Length") or "").strip()
        # what a refused request may still be sending (ASCII digits only; 0 once the body is read)
        self._unread = int(declared) if _INDEX.fullmatch(declared) else 0
        try:
            if not self._host_allowed():
                self.close_connection = True
                raise ApiError(421, "this server only answers requests for localhost or 127.0.0.1")
            try:
                self._refuse_cross_origin()
            except ApiError:
                self.close_connection = True
                raise
            path = urllib.parse.urlsplit(self.path).path
            if path not in ("/api/analyze", "/api/batch"):
                self.close_connection = True
                raise ApiError(404, f"no API endpoint POST {path}; use POST /api/analyze or POST /api/batch")
            length = self._body_length()
            if not self.server.computations.acquire(blocking=False):
                self.close_connection = True
                raise ApiError(503, f"the server is busy with {self.server.max_computations} other requests; try again "
                                    f"in a moment", {"Retry-After": str(_RETRY_AFTER_S)})
            try:
                result = self._compute(path, length)
            finally:
                self.server.computations.release()
        except ApiError as exc:
            self._error(exc.status, exc.message, exc.headers)
            if self.close_connection and self._unread:
                self._linger(self._unread)
            return
        except Exception as exc:  # a defect: the page still gets an answer it can show, the log the traceback
            self._defect(exc)
            return
        self._json(200, result)

    def _compute(self, path: str, length: int) -> Any:
        """Read the body of ``length`` bytes and answer ``path`` (under one of the server's computation slots)."""
        try:
            body = self._read_body(length)
        except TimeoutError:
            self.close_connection = True
            raise ApiError(408, f"the request body did not arrive within {_REQUEST_DEADLINE_S:g} seconds") from None
        self._unread = 0
        self.rfile.deadline = None  # type: ignore[attr-defined]  # read: the work that follows is not limited
        self.connection.settimeout(_READ_TIMEOUT_S)
        content_type = self.headers.get("Content-Type") or ""
        if path == "/api/analyze":
            if content_type.split(";")[0].strip().lower() != "application/json":
                raise ApiError(415, "send the body as application/json")
            try:
                data = json.loads(body.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise ApiError(400, f"the body is not UTF-8 (byte {exc.start}); send JSON in UTF-8") from None
            except (json.JSONDecodeError, RecursionError) as exc:
                raise ApiError(400, f"the body is not valid JSON ({exc})") from None
            return analyze(data)
        return batch(parse_multipart(body, content_type))


def make_server(host: str = "127.0.0.1", port: int = 8765, *, run: Mapping[str, Any] | None = None,
                run_label: str | None = None, quiet: bool = False, image_root: str | Path | None = None,
                run_folder: str | Path | None = None, max_computations: int = MAX_COMPUTATIONS,
                max_body_bytes: int = MAX_BODY_BYTES) -> EvaluatorServer:
    """A bound, not yet serving, evaluator server (``port=0`` picks a free port; see ``server.url``).

    At most ``max_computations`` API requests are read and computed at once (503 beyond), and a request body over
    ``max_body_bytes`` is refused with 413 before it is read.

    The run's page images are looked for under ``image_root`` (``--image-root``), in the dataset folders the run
    recorded, then in ``run_folder`` (the run file's folder).

    >>> server = make_server(port=0, quiet=True)
    >>> server.url.startswith("http://127.0.0.1:")
    True
    >>> server.server_close()
    """
    images = ImageFinder.for_run(run or {}, image_root=image_root, run_folder=run_folder)
    server = EvaluatorServer((host, port), run=run, run_label=run_label, images=images,
                             max_computations=max_computations, max_body_bytes=max_body_bytes)
    server.quiet = quiet
    return server


def serve_in_thread(server: EvaluatorServer) -> threading.Thread:
    """Start ``server.serve_forever`` in a daemon thread (for tests and notebooks); stop with ``server.shutdown()``."""
    thread = threading.Thread(target=server.serve_forever, name="ocrmetrics-serve", daemon=True)
    thread.start()
    return thread
