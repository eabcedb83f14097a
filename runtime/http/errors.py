"""The one error envelope: `{"error": {"code", "message", "hint"?, "docs"}, "license", "licenseUrl"}`.

`docs` is an absolute URI: the error code's anchor on the loaded site's docs page.
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson
from starlette.responses import Response

from petgen.content.model import Site
from petgen.contract.errors import CODE_BY_STATUS, docs_url
from petgen.contract.resources import license_of

JSON = "application/json; charset=utf-8"


class _Context:
    """What every error body names: the loaded site's license and base URL (defaults until a dist loads)."""

    license: ClassVar[dict[str, str]] = {"license": "CC BY 4.0", "licenseUrl": "https://creativecommons.org/licenses/by/4.0/"}
    base_url: str = ""


def use_site(site: Site) -> None:
    """Name the loaded site's license and docs in every error body, like every other body."""
    _Context.license = license_of(site)
    _Context.base_url = site.base_url


def error_body(status: int, message: str, hint: str | None = None, *, code: str | None = None) -> bytes:
    code = code or CODE_BY_STATUS.get(status, "internal_error" if status >= 500 else "bad_request")
    error: dict[str, Any] = {"code": code, "message": message}
    if hint:
        error["hint"] = hint
    if _Context.base_url:
        error["docs"] = docs_url(_Context.base_url, code)
    return orjson.dumps({"error": error, **_Context.license})


def error_response(status: int, message: str, hint: str | None = None, *, headers: dict[str, str] | None = None,
                   code: str | None = None) -> Response:
    response = Response(error_body(status, message, hint, code=code), status_code=status, headers=headers,
                        media_type=JSON)
    response.headers["cache-control"] = "no-store"
    return response


async def send_error(send, status: int, message: str, hint: str | None = None,  # type: ignore[no-untyped-def]
                     headers: list[tuple[bytes, bytes]] | None = None, *, code: str | None = None) -> None:
    """Send an error envelope from plain ASGI code (middleware), outside Starlette."""
    body = error_body(status, message, hint, code=code)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", JSON.encode()), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *(headers or []),
    ]})
    await send({"type": "http.response.body", "body": body})
