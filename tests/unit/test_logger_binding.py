"""The default logger is bound once per structlog configuration: a line always goes where the
configuration of its moment says, and a changed configuration is obeyed by the next line."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest
import structlog

from colibri_router.logs import configure_logging, get_logger


@pytest.fixture(autouse=True)
def _restore_structlog() -> Iterator[None]:
    saved, was_configured = structlog.get_config(), structlog.is_configured()
    yield
    structlog.reset_defaults()
    if was_configured:
        structlog.configure(**saved)


def test_a_reconfigured_stream_gets_the_next_line() -> None:
    first, second = io.StringIO(), io.StringIO()

    configure_logging("info", first)
    get_logger("colibri_router").info("one")
    configure_logging("info", second)
    get_logger("colibri_router").info("two")

    assert [json.loads(line)["event"] for line in first.getvalue().splitlines()] == ["one"]
    assert [json.loads(line)["event"] for line in second.getvalue().splitlines()] == ["two"]


def test_a_configuration_made_with_structlog_itself_is_obeyed() -> None:
    configure_logging("info", io.StringIO())
    get_logger("colibri_router").info("before")
    captured = io.StringIO()
    structlog.configure(
        processors=[structlog.processors.JSONRenderer()],
        logger_factory=structlog.WriteLoggerFactory(captured),
        cache_logger_on_first_use=False,
    )

    get_logger("colibri_router").info("after")

    assert json.loads(captured.getvalue()) == {"logger": "colibri_router", "event": "after"}


def test_each_name_is_bound_under_its_own_name() -> None:
    stream = io.StringIO()
    configure_logging("info", stream)

    get_logger("a").info("x")
    get_logger("b").info("y")
    get_logger("a").info("z")

    assert [json.loads(line)["logger"] for line in stream.getvalue().splitlines()] == ["a", "b", "a"]


def test_after_a_reset_the_default_stderr_logger_is_configured_again(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", io.StringIO())
    get_logger().info("to the stream")
    structlog.reset_defaults()

    get_logger().info("to stderr")

    captured = capsys.readouterr()
    assert captured.out == ""
    assert json.loads(captured.err)["event"] == "to stderr"
