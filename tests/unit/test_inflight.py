"""The registry of calls in flight that routes cancellations arriving over stateless HTTP."""

from __future__ import annotations

import anyio
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.server.inflight import InFlight, call_key

ids = st.one_of(st.integers(), st.text(max_size=10))


@given(first=st.tuples(st.text(max_size=10), ids), second=st.tuples(st.text(max_size=10), ids))
def test_keys_are_equal_only_for_the_same_caller_and_the_same_id(
    first: tuple[str, int | str], second: tuple[str, int | str]
) -> None:
    same = first[0] == second[0] and type(first[1]) is type(second[1]) and first[1] == second[1]
    assert (call_key(*first) == call_key(*second)) == same


def test_one_and_the_string_one_are_different_requests() -> None:
    assert call_key("alice", 1) != call_key("alice", "1")


async def test_cancel_stops_the_calls_under_the_key_and_no_other() -> None:
    inflight = InFlight()
    finished: list[str] = []

    async def run(key: str, name: str) -> None:
        with inflight.track(key):
            await anyio.sleep(10)
            finished.append(name)

    async with anyio.create_task_group() as group:
        group.start_soon(run, call_key("alice", 1), "alice")
        group.start_soon(run, call_key("bob", 1), "bob")
        await anyio.wait_all_tasks_blocked()
        assert len(inflight) == 2
        assert inflight.cancel(call_key("alice", 1))
        await anyio.wait_all_tasks_blocked()
        assert len(inflight) == 1
        assert not inflight.cancel(call_key("alice", 1))  # gone: nothing left to cancel
        group.cancel_scope.cancel()
    assert finished == []
    assert len(inflight) == 0


async def test_the_scope_tells_whether_the_call_was_cancelled() -> None:
    inflight = InFlight()
    with inflight.track("k") as scope:
        pass
    assert not scope.cancelled_caught
    with inflight.track("k") as scope:
        inflight.cancel("k")
        await anyio.sleep(1)
    assert scope.cancelled_caught
