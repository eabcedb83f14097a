"""The one error envelope: `{"error": {"code", "message", "hint"?, "docs"?}, "license"}`."""

from __future__ import annotations

import orjson
from starlette.responses import Response

JSON = "application/json; charset=utf-8"
LICENSE = {"name": "CC BY 4.0", "url": "https://creativecommons.org/licenses/by/4.0/"}  # until a dist is loaded


def use_license(license: dict[str, str]) -> None:
    """Carry the loaded site's license (with its attribution) in every error body, like every other body."""
    LICENSE.clear()
    LICENSE.update(license)
DOCS = "/openapi.json"

CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    431: "headers_too_large",
    500: "internal_error",
    503: "service_unavailable",
}


def error_body(status: int, message: str, hint: str | None = None, *, code: str | None = None) -> bytes:
    error: dict[str, str] = {"code": code or CODES.get(status, "error"), "message": message}
    if hint:
        error["hint"] = hint
    error["docs"] = DOCS
    return orjson.dumps({"error": error, "license": LICENSE})


def error_response(status: int, message: str, hint: str | None = None, *, headers: dict[str, str] | None = None,
                   code: str | None = None) -> Response:
    return Response(error_body(status, message, hint, code=code), status_code=status, headers=headers,
                    media_type=JSON)


async def send_error(send, status: int, message: str, hint: str | None = None,  # type: ignore[no-untyped-def]
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """Send an error envelope from plain ASGI code (middleware), outside Starlette."""
    body = error_body(status, message, hint)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", JSON.encode()), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *(headers or []),
    ]})
    await send({"type": "http.response.body", "body": body})
