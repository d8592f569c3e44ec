"""Logging: structlog to stderr, JSON lines off a TTY and console output on one, secrets redacted.

stdout belongs to JSON-RPC on the stdio transport, so nothing here ever writes to it. The CLI calls
:func:`configure_logging` first thing; library users who never configured structlog still get
stderr output (structlog's own default would print to stdout) through :func:`get_logger`.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

REDACTED = "[redacted]"
# Shapes of credentials that may surface in text we did not write (an upstream error echoing a key,
# an exception message quoting a header). Known key values are also replaced, whatever their shape.
_SECRET_PATTERNS = re.compile(
    r"(?i)(sk-[A-Za-z0-9_\-]{8,}|bearer\s+[A-Za-z0-9._\-]{8,}|x-api-key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._\-]{8,})"
)
_KEY_VARIABLES = ("COLIBRI_KIMI_API_KEY", "ANTHROPIC_API_KEY")


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with every known key value and every credential-shaped token replaced."""
    for secret in (*secrets, *(os.environ.get(name) for name in _KEY_VARIABLES)):
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    return _SECRET_PATTERNS.sub(REDACTED, text)


def _redact_event(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    for key, value in event_dict.items():
        if isinstance(value, str):
            event_dict[key] = redact(value)
    return event_dict


def _shared_processors() -> list[Any]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        _redact_event,
    ]


def _renderer(stream: TextIO) -> Any:
    if stream.isatty():
        return structlog.dev.ConsoleRenderer()
    return structlog.processors.JSONRenderer()


def configure_logging(level: str | None = None, stream: TextIO | None = None) -> None:
    """Route structlog and the standard library (the MCP SDK, httpx) to ``stream`` (stderr).

    ``level`` defaults to ``COLIBRI_LOG_LEVEL`` (read now), else ``info``.
    """
    stream = stream or sys.stderr
    level_name = (level or os.environ.get("COLIBRI_LOG_LEVEL") or "info").upper()
    numeric_level = logging.getLevelNamesMapping().get(level_name, logging.INFO)
    shared = _shared_processors()
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, _renderer(stream)],
        )
    )
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(numeric_level)
    # httpx logs every request at INFO; that is noise on a server that makes one per tool call.
    logging.getLogger("httpx").setLevel(max(numeric_level, logging.WARNING))


def get_logger(name: str = "colibri_router") -> Any:
    """A structlog logger; configures stderr output if nobody configured structlog yet."""
    if not structlog.is_configured():
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info,
                _redact_event,
                _renderer(sys.stderr),
            ],
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        )
    return structlog.get_logger(name)
