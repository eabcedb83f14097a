"""Logging owned by the runtime: one plain line per event on stderr, nothing rendered on the request path.

The MCP SDK calls `logging.basicConfig` with rich's `RichHandler` when an `MCPServer` is created, on a
root logger that has no handler yet. A rich traceback reads source files and lays out boxes on the
event loop's thread — about 0.2 s per logged error, which froze all traffic when clients aborted
uploads. So the root logger is ours: `configure_logging()` for `petgen serve`/`dev` and a bare ASGI
factory, and `root_logger_kept()` around code that would change it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import sys
from collections.abc import Iterator

import orjson

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# uvicorn's loggers carry their own handlers when uvicorn configures them; ours go through the root.
SERVER_LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.asgi")


class OneLineFormatter(logging.Formatter):
    """The standard format with a traceback folded into the same line, so one event is one line that
    grep, journald and log shippers keep together."""

    def format(self, record: logging.LogRecord) -> str:
        return super().format(record).replace("\n", " | ")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, the traceback as `error`
    if there is one, and an access line's fields under `access` (runtime/http/observe.py)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        access = getattr(record, "access", None)
        if access is not None:
            line["access"] = access
        return orjson.dumps(line).decode()


def configure_logging(level: str = "info", log_format: str = "text") -> None:
    """Send every record at `level` or above to stderr, one line each (plain text or JSON); replace any
    root handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else OneLineFormatter(FORMAT))
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name in SERVER_LOGGERS:
        server_logger = logging.getLogger(name)
        server_logger.handlers.clear()
        server_logger.propagate = True
    # The MCP SDK logs every request at INFO ("Terminating session: None", each tool error with the client's
    # arguments in it): an access log by another name. Its warnings and errors still show; debug shows all.
    logging.getLogger("mcp").setLevel(logging.DEBUG if level.lower() == "debug" else logging.WARNING)


def ensure_logging(level: str = "info", log_format: str = "text") -> None:
    """Configure logging unless the host process already did (a bare `create_app()` under an ASGI server)."""
    if not logging.getLogger().handlers:
        configure_logging(level, log_format)


@contextlib.contextmanager
def root_logger_kept() -> Iterator[None]:
    """Undo whatever the code inside does to the root logger's handlers and level."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
