"""The router_call service: threads, the ledger, budgets and the cost cap, on a real SQLite file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from colibri_router import store as store_module
from colibri_router.call.service import serve
from colibri_router.errors import ColibriError, ConfigError
from colibri_router.schema import RouterCallInput
from colibri_router.settings import load_settings
from colibri_router.store import open_store

Handler = Callable[[httpx.Request], httpx.Response]


def claude_reply(text: str = "ok", *, tool: tuple[str, dict[str, Any]] | None = None) -> httpx.Response:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if tool is not None:
        content.append({"type": "tool_use", "id": "toolu_01", "name": tool[0], "input": tool[1]})
    body = {
        "type": "message",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "tool_use" if tool else "end_turn",
        "usage": {"input_tokens": 1000, "output_tokens": 100},
    }
    return httpx.Response(200, json=body)


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "claude-key-123456")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://claude.test")
    monkeypatch.setenv("COLIBRI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(store_module, "_shared", {})
    return tmp_path / "state"


async def call(handler: Handler, principal: str | None = None, **args: Any) -> tuple[Any, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return handler(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as client:
        request = RouterCallInput.model_validate({"model": "claude-sonnet-4-5", **args})
        result = await serve(request, principal=principal, client=client)
    return result, sent


def store() -> Any:
    return store_module.shared_store(load_settings())


async def test_a_thread_keeps_the_conversation_and_the_host_sends_only_new_turns() -> None:
    first, _ = await call(lambda _: claude_reply("4", tool=("calc", {"x": 2})), prompt="what is 2+2?", thread_id="new")
    thread_id = first.thread_id
    assert thread_id is not None and thread_id.startswith("th_")
    assert first.message is None  # the thread holds the turn
    tool_result = [{"type": "tool_result", "tool_use_id": first.tool_calls[0].id, "content": "4"}]
    second, sent = await call(
        lambda _: claude_reply("It is 4."), messages=[{"role": "user", "content": tool_result}], thread_id=thread_id
    )
    assert second.thread_id == thread_id
    roles = [m["role"] for m in sent[0]["messages"]]
    assert roles == ["user", "assistant", "user"]  # the stored history, then the new turn
    stored = await store().load_thread(thread_id, None)
    assert [m["role"] for m in stored.messages] == ["user", "assistant", "user", "assistant"]
    assert stored.messages[-1] == {"role": "assistant", "content": "It is 4."}


async def test_an_unknown_thread_is_an_invalid_request_naming_it() -> None:
    with pytest.raises(ColibriError) as caught:
        await call(lambda _: claude_reply(), prompt="hi", thread_id="th_nope")
    assert caught.value.code == "INVALID_REQUEST"
    assert "th_nope" in caught.value.message


async def test_every_call_writes_one_ledger_row_success_or_failure() -> None:
    await call(lambda _: claude_reply(), prompt="hi")
    with pytest.raises(ColibriError):
        await call(
            lambda _: httpx.Response(
                400, json={"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
            ),
            prompt="hi",
        )
    report = await store().usage_report(None, "all", None)
    assert (report.total.calls, report.total.errors) == (2, 1)
    assert report.total.input_tokens == 1000


async def test_usage_totals_equal_the_sum_of_the_calls_costs() -> None:
    costs = [(await call(lambda _: claude_reply(), prompt=f"q{i}"))[0].cost_usd for i in range(3)]
    report = await store().usage_report(None, "today", "model")
    assert report.total.cost_usd == pytest.approx(sum(costs), abs=1e-6)
    assert [g.key for g in report.groups] == ["claude-sonnet-4-5"]


async def test_a_reached_daily_budget_stops_the_call_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    await call(lambda _: claude_reply(), prompt="spend")
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", "0.001")
    asked: list[httpx.Request] = []
    with pytest.raises(ColibriError) as caught:
        await call(lambda r: asked.append(r) or claude_reply(), prompt="more")
    assert asked == []  # nothing went upstream
    assert caught.value.code == caught.value.kind == "BUDGET_EXCEEDED"
    assert not caught.value.retryable_later
    assert "resets at" in caught.value.message


async def test_the_per_user_daily_budget_stops_only_the_caller_who_reached_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await call(lambda _: claude_reply(), principal="alice", prompt="spend")
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD_PER_USER", "0.001")
    with pytest.raises(ColibriError) as caught:
        await call(lambda _: claude_reply(), principal="alice", prompt="more")
    assert caught.value.code == "BUDGET_EXCEEDED"
    assert "daily budget per caller" in caught.value.message
    result, _ = await call(lambda _: claude_reply(), principal="bob", prompt="mine")
    assert result.content == "ok"


async def test_max_cost_usd_refuses_a_call_whose_worst_case_is_above_it() -> None:
    asked: list[httpx.Request] = []
    with pytest.raises(ColibriError) as caught:
        await call(lambda r: asked.append(r) or claude_reply(), prompt="x" * 3000, max_tokens=4000, max_cost_usd=0.0001)
    assert caught.value.kind == "BUDGET_EXCEEDED"
    assert asked == []
    result, _ = await call(lambda _: claude_reply(), prompt="tiny", max_tokens=10, max_cost_usd=1.0)
    assert result.content == "ok"


async def test_a_cancelled_call_still_has_its_ledger_row() -> None:
    started = anyio.Event()

    async def run() -> None:
        async def slow(request: httpx.Request) -> httpx.Response:
            started.set()
            await anyio.sleep(30)
            return claude_reply()

        async with httpx.AsyncClient(transport=httpx.MockTransport(slow)) as client:
            await serve(RouterCallInput.model_validate({"model": "claude-sonnet-4-5", "prompt": "hi"}), client=client)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await started.wait()
        group.cancel_scope.cancel()
    report = await store().usage_report(None, "all", None)
    assert (report.total.calls, report.total.errors) == (1, 1)


async def test_with_the_store_off_threads_and_budgets_are_config_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_STORE", "off")
    with pytest.raises(ConfigError, match="COLIBRI_STORE is off"):
        await call(lambda _: claude_reply(), prompt="hi", thread_id="new")
    monkeypatch.setenv("COLIBRI_BUDGET_MONTHLY_USD", "5")
    with pytest.raises(ConfigError, match="COLIBRI_BUDGET"):
        await call(lambda _: claude_reply(), prompt="hi")
    monkeypatch.delenv("COLIBRI_BUDGET_MONTHLY_USD")
    result, _ = await call(lambda _: claude_reply(), prompt="hi", max_cost_usd=1.0)  # the cap needs no store
    assert result.content == "ok"


async def test_a_corrupt_database_never_breaks_a_call(environment: Path) -> None:
    environment.mkdir(parents=True)
    (environment / "colibri.db").write_bytes(b"this is not a database" * 100)
    result, _ = await call(lambda _: claude_reply("still answered"), prompt="hi")
    assert result.content == "still answered"
    assert "the ledger row could not be written to the local SQLite file; see the server log" in result.warnings


async def test_a_thread_the_postgresql_store_could_not_keep_is_said_of_postgresql(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # PostgreSQL down (nothing listens at its port): the answer comes, without a thread, and the
    # warning names the PostgreSQL database, not a local file the user does not have.
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("COLIBRI_DATABASE_URL", f"postgresql://colibri@127.0.0.1:{port}/colibri")
    result, _ = await call(lambda _: claude_reply("answered"), prompt="hi", thread_id="new")
    assert (result.content, result.thread_id) == ("answered", None)
    assert "the thread could not be written to the PostgreSQL database; see the server log" in result.warnings
    assert not any("SQLite" in warning or "local" in warning for warning in result.warnings)


async def test_nothing_is_created_until_the_first_call(environment: Path) -> None:
    assert open_store(environment) is not None
    assert not environment.exists()


async def test_with_a_budget_a_database_that_cannot_be_used_fails_the_call_before_anything_is_sent(
    environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the database no budget can be checked: admitting the call anyway could spend past it.
    monkeypatch.setenv("COLIBRI_BUDGET_DAILY_USD", "100")
    environment.mkdir(parents=True)
    (environment / "colibri.db").write_bytes(b"this is not a database" * 100)
    sent: list[httpx.Request] = []
    with pytest.raises(ColibriError) as caught:
        await call(lambda request: sent.append(request) or claude_reply(), prompt="hi")
    assert (caught.value.code, caught.value.kind, caught.value.retryable_later) == (
        "STORE_ERROR",
        "STORE_UNAVAILABLE",
        True,
    )
    assert sent == []


async def test_concurrent_calls_share_ledger_commits_and_leave_no_row_announced() -> None:
    """Each call announces its ledger row: answered, failed or cancelled, none stays announced, and
    rows of calls that end together are committed together."""
    from colibri_router.store.grouping import announced_rows

    database = store()
    commits: list[int] = []
    write_group = database._ledger_rows._write

    async def counting(group: Any) -> None:
        commits.append(len(group))
        await write_group(group)

    database._ledger_rows._write = counting
    gate = anyio.Event()

    async def held(request: httpx.Request) -> httpx.Response:
        await gate.wait()  # every call answers at the same moment
        return claude_reply("ok")

    async with httpx.AsyncClient(transport=httpx.MockTransport(held)) as client:

        async def one(prompt: str) -> None:
            await serve(RouterCallInput(model="claude-sonnet-4-5", prompt=prompt), client=client)

        async with anyio.create_task_group() as group:
            for number in range(6):
                group.start_soon(one, f"question {number}")
            await anyio.sleep(0.05)
            assert announced_rows() == 6
            gate.set()

    async def never(request: httpx.Request) -> httpx.Response:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async with httpx.AsyncClient(transport=httpx.MockTransport(never)) as client:
        with anyio.move_on_after(0.05) as scope:  # cancelled while it waits for its answer
            await serve(RouterCallInput(model="claude-sonnet-4-5", prompt="never answered"), client=client)
        assert scope.cancelled_caught

    with pytest.raises(ColibriError):
        await call(lambda _: httpx.Response(400, json={"type": "error", "error": {"message": "no"}}), prompt="x")
    assert announced_rows() == 0
    assert sum(commits) == 8 and max(commits) > 1
    assert (await database.usage_report(None)).total.calls == 8
