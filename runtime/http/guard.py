"""The middleware around every request: the body is bounded in size and time, and no error escapes.

- A body over the size limit → 413 (`payload_too_large`).
- A body not complete within `body_timeout` seconds of the request's start → 408
  (`request_timeout`) and the connection is closed: a client trickling its body cannot hold a
  connection and a task forever.
- A client that disconnects mid-upload is not an error: one info line, no response.
- Any other exception → 500 envelope; the traceback is logged here, never sent.

To the app, a body that will never arrive (the client left, or its time is up) is Starlette's
`ClientDisconnect`, raised from `receive()`; the app's own answer to it is dropped, the guard
answers instead.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from starlette.requests import ClientDisconnect, Request

from runtime.http.errors import send_error

log = logging.getLogger("petgen.runtime")


class BodyTooLarge(Exception):
    pass


async def client_gone(request: Request, exc: Exception) -> None:
    """Starlette exception handler for `ClientDisconnect`: nobody is left to answer, so send nothing."""


class GuardMiddleware:
    def __init__(self, app: Callable[..., Any], *, max_body: int, body_timeout: float = 10.0) -> None:
        self.app = app
        self.max_body = max_body
        self.body_timeout = body_timeout

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and (not value.isdigit() or int(value) > self.max_body):
                await self._too_large(send)
                return
        started = False
        stopped: str | None = None  # why the body stopped short: "too large", "timeout" or "disconnect"
        received = 0
        complete = False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        # One timer per request, armed at the first read of the body and cancelling a read still waiting at the
        # deadline (an `asyncio.timeout` around every read cost ten times as much, on every POST).
        timer: asyncio.TimerHandle | None = None
        reader: asyncio.Task[Any] | None = None  # the task while it waits in receive()
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            if reader is not None:
                reader.cancel()

        async def guarded_receive() -> dict[str, Any]:
            nonlocal received, complete, stopped, timer, reader
            if complete:  # after the body only http.disconnect comes, whenever it does (streaming responses wait)
                return await receive()  # type: ignore[no-any-return]
            if expired or loop.time() >= deadline:
                stopped = "timeout"
                raise ClientDisconnect
            if timer is None:
                timer = loop.call_at(deadline, expire)
            reader = asyncio.current_task()
            try:
                message = await receive()
            except asyncio.CancelledError:
                if not expired:
                    raise
                if reader is not None:
                    reader.uncancel()  # the cancellation was ours: the task goes on, to answer 408
                stopped = "timeout"
                raise ClientDisconnect from None
            finally:
                reader = None
            if message["type"] == "http.disconnect":
                stopped = "disconnect"
                raise ClientDisconnect
            received += len(message.get("body", b""))
            if received > self.max_body:
                stopped = "too large"
                raise BodyTooLarge
            complete = not message.get("more_body", False)
            return message  # type: ignore[no-any-return]

        async def guarded_send(message: dict[str, Any]) -> None:
            nonlocal started
            if stopped:  # the app's answer to a body that stopped short; the guard answers below
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, guarded_receive, guarded_send)
        except Exception:
            if not stopped:
                log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
                if not started:
                    await send_error(send, 500, "Internal server error.", "the error was logged; try again later")
                return
        finally:
            if timer is not None:
                timer.cancel()
        if stopped == "disconnect":
            log.info("client left during the upload: %s %s after %d bytes", scope["method"], scope["path"], received)
        elif stopped == "timeout":
            log.info("body not complete within %g s: %s %s after %d bytes; closing", self.body_timeout,
                     scope["method"], scope["path"], received)
            if not started:
                await send_error(send, 408, f"Request body not complete within {self.body_timeout:g} s.",
                                 "send the whole body at once, right after the headers",
                                 headers=[(b"connection", b"close")])
        elif stopped == "too large" and not started:
            await self._too_large(send)

    async def _too_large(self, send: Callable[..., Any]) -> None:
        await send_error(send, 413, f"Request body too large: the limit is {self.max_body} bytes.",
                         "send a smaller body")
