"""The API's error codes: one catalogue read by the runtime (error bodies), the OpenAPI document
(the `Error` schema) and the docs page (an anchor per code, the target of every error's `docs`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorCode:
    status: int
    code: str
    when: str


ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode(400, "bad_request", "A parameter or the body is missing or invalid; the hint says how to fix it."),
    ErrorCode(401, "unauthorized", "A credential is required (webhook subscriptions only) or was not accepted."),
    ErrorCode(403, "forbidden", "The request's Origin is not allowed by the operator's origin list (/mcp)."),
    ErrorCode(404, "not_found", "No entry, category or endpoint at this path; the hint names the closest match."),
    ErrorCode(405, "method_not_allowed", "The method is not supported here; the `Allow` header lists what is."),
    ErrorCode(406, "not_acceptable", "/mcp only: the Accept header allows neither application/json nor "
              "text/event-stream."),
    ErrorCode(408, "request_timeout", "The request's headers or body arrived too slowly."),
    ErrorCode(409, "conflict", "The webhook subscription exists already for this URL, or the token holds the most "
                               "it may; the hint says what to do."),
    ErrorCode(413, "payload_too_large", "The request body is larger than the limit (64 KiB by default)."),
    ErrorCode(415, "unsupported_media_type", "The body must be sent as `Content-Type: application/json`."),
    ErrorCode(421, "misdirected_request", "The Host header names a host this server does not answer for (/mcp)."),
    ErrorCode(429, "rate_limited", "More than the budget (60 requests per minute per client IP); see `Retry-After`."),
    ErrorCode(431, "headers_too_large", "The request line and headers are larger than 64 KiB."),
    ErrorCode(500, "internal_error", "A fault on the server; it was logged. Try again later."),
    ErrorCode(503, "service_unavailable", "The service is down or overloaded; see `Retry-After` where sent."),
)
CODE_BY_STATUS = {e.status: e.code for e in ERROR_CODES}


def docs_url(base_url: str, code: str) -> str:
    """The absolute URI documenting an error code: its anchor on the docs page."""
    return f"{base_url}/docs#error-{code}"
