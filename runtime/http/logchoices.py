"""The choices of the runtime's logging settings, without the logging module: the command line builds its options
from them, and `petgen build` should not import what only a server uses (runtime/http/logs.py)."""

LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")
