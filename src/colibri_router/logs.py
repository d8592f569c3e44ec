"""Logging: structlog to stderr, JSON lines off a TTY and console output on one, secrets redacted.

stdout belongs to JSON-RPC on the stdio transport, so nothing here ever writes to it. The CLI calls
:func:`configure_logging` first thing; library users who never configured structlog still get
stderr output (structlog's own default would print to stdout) through :func:`get_logger`.
"""

from __future__ import annotations

import functools
import json
import logging
import operator
import sys
import threading
import time
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

from colibri_router.redaction import redact_log

# Values this module writes itself: they can hold no secret, and redacting them costs every line.
_OWN_FIELDS = frozenset({"timestamp", "level", "logger"})


def _redact_event(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key, value in event_dict.items():
        if isinstance(value, str) and key not in _OWN_FIELDS:
            event_dict[key] = redact_log(value)
    return event_dict


def _console_chain(*, foreign: bool) -> list[Any]:
    """On a terminal: the chain a line goes through before structlog's console renderer; ``foreign``
    lines come from the standard library (its formatter renders them). Off a terminal every line,
    ours and the standard library's, is one JSON line built in one step (:func:`_json_line`,
    :class:`_JsonLineFormatter`)."""
    return [
        structlog.stdlib.add_log_level if foreign else structlog.processors.add_log_level,
        *([structlog.stdlib.add_logger_name] if foreign else []),
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        _redact_event,
        *([] if foreign else [structlog.dev.ConsoleRenderer()]),
    ]


def _json_default(value: Any) -> Any:
    """A value JSON has no form for: its own ``__structlog__()`` if it has one, else its repr
    (structlog's JSONRenderer does the same)."""
    render = getattr(value, "__structlog__", None)
    return render() if callable(render) else repr(value)


# One encoder for every line: json.dumps with an option builds a new encoder each time.
_LINE_ENCODER = json.JSONEncoder(default=_json_default)


def _json_line(logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> str:
    """One JSON line: what the console chain's steps do (level, UTC timestamp, a formatted
    exception, redaction, rendering) in one step. The adapters write a line per call, and structlog
    calls each step of a chain separately."""
    event_dict = structlog.processors.add_log_level(logger, method_name, event_dict)
    event_dict["timestamp"] = _utc_timestamp()
    if "exc_info" in event_dict:
        event_dict = structlog.processors.format_exc_info(logger, method_name, event_dict)
    return _LINE_ENCODER.encode(_redact_event(logger, method_name, event_dict))


class _JsonLineFormatter(logging.Formatter):
    """The standard library's lines (uvicorn's access line on every request, the SDK's) as the same
    JSON lines as ours, in one step. structlog's ProcessorFormatter copies each record and runs a
    chain of steps: about three times the cost, on every HTTP request of the team server."""

    def format(self, record: logging.LogRecord) -> str:
        event: dict[str, Any] = {
            "event": record.getMessage(),
            "level": record.levelname.lower(),
            "logger": record.name,
            "timestamp": _utc_timestamp(),
        }
        if record.exc_info:
            event["exception"] = self.formatException(record.exc_info)
        return _LINE_ENCODER.encode(_redact_event(None, "", event))


def _utc_timestamp() -> str:
    """Now in UTC as ``2026-11-24T02:35:09.123456Z``, its date and time formatted once a second
    (structlog's ISO stamper builds and formats a datetime for every line)."""
    now = time.time()
    whole = int(now)
    return f"{_utc_second(whole)}.{int((now - whole) * 1_000_000):06d}Z"


@functools.lru_cache(maxsize=1)
def _utc_second(whole: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))


class _LineWriter:
    """Writes each rendered line to the stream and flushes it, one thread at a time. A line that
    cannot be written (the host closed our stderr) is dropped: logging must never be the reason a
    call fails."""

    __slots__ = ("_lock", "_stream")

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def msg(self, message: str) -> None:
        try:
            with self._lock:
                self._stream.write(message + "\n")
                self._stream.flush()
        except (OSError, ValueError):
            pass

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def _configure_structlog(numeric_level: int, stream: TextIO) -> None:
    # structlog's own fast path (no detour through the standard library): a filtering logger
    # writing straight to the stream, cached after first use. It runs once per call, in-band.
    structlog.configure(
        processors=_console_chain(foreign=False) if stream.isatty() else [_json_line],
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        logger_factory=lambda *_: _LineWriter(stream),
        cache_logger_on_first_use=True,
    )


def configure_logging(level: str = "info", stream: TextIO | None = None) -> None:
    """Route structlog and the standard library (the MCP SDK, httpx) to ``stream`` (stderr).

    ``level`` is a level name; the CLI passes the one the settings hold (``COLIBRI_LOG_LEVEL``).
    """
    stream = stream or sys.stderr
    numeric_level = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    _configure_structlog(numeric_level, stream)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_standard_library_formatter(stream))
    # No line shows the thread or the process: the standard library need not look them up for every
    # record (uvicorn writes one per HTTP request).
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(numeric_level)
    # httpx logs every request at INFO; that is noise on a server that makes one per tool call.
    logging.getLogger("httpx").setLevel(max(numeric_level, logging.WARNING))


def _standard_library_formatter(stream: TextIO) -> logging.Formatter:
    if not stream.isatty():
        return _JsonLineFormatter()
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_console_chain(foreign=True),
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, structlog.dev.ConsoleRenderer()],
    )


# Each name's bound logger, with the structlog configuration it was bound under. Binding builds a
# lazy proxy and two bound loggers, and the adapters log one line per call; a logger is bound again
# as soon as the configuration changes (``structlog.configure``, ``reset_defaults``), so every line
# goes where the configuration of its moment says, exactly as with a fresh bind.
_bound: dict[str, tuple[tuple[Any, ...], Any]] = {}


def get_logger(name: str = "colibri_router") -> Any:
    """A structlog logger; configures stderr output at info if nobody configured structlog yet."""
    if not structlog.is_configured():
        _configure_structlog(logging.INFO, sys.stderr)
    config = tuple(structlog.get_config().values())
    cached = _bound.get(name)
    if cached is not None and all(map(operator.is_, cached[0], config)):
        return cached[1]
    logger = structlog.get_logger().bind(logger=name)
    _bound[name] = (config, logger)
    return logger
