"""uvicorn's HTTP/1.1 protocol with the deadlines it lacks, and its connection cap answered in JSON.

uvicorn (httptools) arms its only timer, the keep-alive timeout, after a response: a client that
connects and sends nothing, or trickles its headers a byte at a time, holds a connection forever,
and so does one that trickles a body the app never read (every byte cancels the keep-alive timer).
`PetgenHttpProtocol` closes both, caps the request head at MAX_HEAD bytes, and answers what the
app never sees (408, 431, 400, and the 503 of `limit_concurrency`) with the JSON error envelope
instead of uvicorn's plain text. The body deadline is the runtime's (runtime/http/guard.py), so that it
holds under any server. Settings, defaults and what clients see: docs/operations.md.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.flow_control import service_unavailable
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from runtime.http.errors import JSON, error_body, send_error
from runtime.settings import Settings

log = logging.getLogger("petgen.runtime")

FILES_BESIDES_CONNECTIONS = 100  # listening socket, log streams, the watcher, a build writing files
# httptools gathers a header by concatenating bytes: a client streaming one endless header at full speed
# made every request wait seconds (quadratic copying on the event loop). Real request heads are a few KB.
MAX_HEAD = 64 * 1024  # bytes, counted after the first read of a request


class PetgenHttpProtocol(HttpToolsProtocol):
    """One connection: the request line and headers must arrive within `header_timeout` seconds of
    the connect (first request) or of the request's first byte (later requests on a keep-alive
    connection); otherwise a 408 envelope if a request had begun, and the connection is closed.
    A body the app answered without reading must be through within `body_timeout` of the answer."""

    header_timeout: float = Settings.header_timeout
    body_timeout: float = Settings.body_timeout

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.header_timer: asyncio.TimerHandle | None = None
        self.reading_head = False
        self.in_body = False  # between the end of a request's headers and the end of its body
        self.head_bytes = 0
        super().connection_made(transport)
        self._arm_header_timer()

    def data_received(self, data: bytes) -> None:
        if not self.in_body:
            # Counted before the parser runs (it signals a new request only while reading this very data), up to
            # the blank line that ends the headers, so a body sent in the same packet does not count.
            end = data.find(b"\r\n\r\n")
            self.head_bytes += len(data) if end < 0 else end + 4
            if self.head_bytes > MAX_HEAD:
                self._refuse(raw_error(431, f"Request line and headers over {MAX_HEAD // 1024} KB.",
                                       "send fewer or shorter headers", self.server_state.default_headers))
                return
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to bytes that are no HTTP request, as an envelope instead of plain text."""
        self._refuse(raw_error(400, "Invalid HTTP request.", "send an HTTP/1.1 request",
                               self.server_state.default_headers))

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading_head = True
        if self.header_timer is None:  # a later request on a kept-alive connection; the first one's runs from connect
            self._arm_header_timer()

    def on_headers_complete(self) -> None:
        self.reading_head = False
        self.in_body = True
        self.head_bytes = 0
        self._cancel_header_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self.in_body = False
        super().on_message_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        cycle = self.cycle
        if cycle.response_complete and cycle.more_body and not self.transport.is_closing():
            # Answered without reading the body (404, 405, 413 …). Closing at once could reset the connection
            # before the client reads the answer; reading the rest without a limit would let a trickle hold it
            # forever (each byte cancels uvicorn's keep-alive timer). So the rest gets `body_timeout`.
            self.loop.call_later(self.body_timeout, self._close_if_still, cycle)

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        if app is service_unavailable:  # uvicorn's plain-text 503 for `limit_concurrency`
            app = over_capacity
        super()._start_asgi_task(cycle, app)

    def _close_if_still(self, cycle: Any) -> None:
        """Close unless a new request has begun since `cycle` was answered."""
        if self.cycle is cycle and not self.reading_head and not self.transport.is_closing():
            self.transport.close()

    def _arm_header_timer(self) -> None:
        self.header_timer = self.loop.call_later(self.header_timeout, self._header_timeout)

    def _cancel_header_timer(self) -> None:
        if self.header_timer is not None:
            self.header_timer.cancel()
            self.header_timer = None

    def _header_timeout(self) -> None:
        self.header_timer = None
        if self.transport.is_closing():
            return
        if self.reading_head:
            log.info("request headers not complete within %g s from %s; closing", self.header_timeout,
                     self.client[0] if self.client else "?")
            self._refuse(raw_error(408, f"Request headers not complete within {self.header_timeout:g} s.",
                                   "send the request line and all headers at once", self.server_state.default_headers))
        else:
            self.transport.close()

    def _refuse(self, response: bytes) -> None:
        """Answer a request the app never sees, then close; only when no response of ours is being written."""
        if self.cycle is None or self.cycle.response_complete:
            self.transport.write(response)
        self.transport.close()


def raw_error(status: int, message: str, hint: str, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """A complete error response with the envelope, written straight to the socket: there is no request
    yet for the app to answer."""
    body = error_body(status, message, hint)
    headers = [*default_headers, (b"content-type", JSON.encode()), (b"content-length", str(len(body)).encode()),
               (b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"), (b"connection", b"close")]
    status_line = f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n".encode()
    return status_line + b"".join(n + b": " + v + b"\r\n" for n, v in headers) + b"\r\n" + body


async def over_capacity(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """What uvicorn runs instead of the app when `limit_concurrency` is reached: a 503 envelope."""
    await send_error(send, 503, "The server is at its limit of open connections.", "retry in a few seconds",
                     headers=[(b"retry-after", b"1"), (b"connection", b"close")])


def http_protocol(settings: Settings) -> type[asyncio.Protocol]:
    """The protocol class for uvicorn's `http=` option, with this configuration's header timeout."""
    return type("PetgenHttpProtocol", (PetgenHttpProtocol,),
                {"header_timeout": settings.header_timeout, "body_timeout": settings.body_timeout})


def limit_concurrency(settings: Settings) -> int | None:
    """uvicorn's `limit_concurrency` for `max_connections`: uvicorn counts the connection being
    answered too, so one more lets exactly `max_connections` be served."""
    return settings.max_connections + 1 if settings.max_connections else None


def ensure_open_files(settings: Settings) -> None:
    """Raise the soft limit on open files (often 1024) toward the hard one so the connection cap, not
    the file limit, is what a flood meets: at the file limit the server stops accepting for a second
    at a time and logs an error for each attempt."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.max_connections + FILES_BESIDES_CONNECTIONS
    if not settings.max_connections or soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    new = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    if new < wanted:
        log.warning("open-file limit %d is below max_connections + %d; a flood will meet the file limit first",
                    new, FILES_BESIDES_CONNECTIONS)


def __getattr__(name: str) -> type[asyncio.Protocol]:
    """`runtime.http.connections:EnvHttpProtocol`, the protocol class of a worker process that uvicorn starts
    (`petgen serve --workers N`): configured from the environment the main process handed down."""
    if name == "EnvHttpProtocol":
        return http_protocol(Settings.from_env())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
