"""Deadline scopes watched by one timer per event loop: each scope is cancelled when its own deadline
passes (not before, not another's), whatever order the deadlines arrive in, in every event loop."""

from __future__ import annotations

import asyncio
import time

import anyio
import anyio.lowlevel
import pytest

from colibri_router.deadlines import DeadlineScope, within

LONG = 5.0  # work that outlasts every deadline below: a scope left uncancelled fails its test, not hangs it


async def sleeper(seconds: float, results: dict[str, bool], name: str, work: float = LONG) -> None:
    with within(seconds) as scope:
        await anyio.sleep(work)
    results[name] = scope.cancelled_caught


async def test_work_past_its_deadline_is_cancelled_and_work_within_it_is_not() -> None:
    results: dict[str, bool] = {}

    await sleeper(0.02, results, "late")
    await sleeper(LONG, results, "early", work=0.0)

    assert results == {"late": True, "early": False}


async def test_concurrent_deadlines_cancel_only_their_own_scope_each_at_its_time() -> None:
    results: dict[str, bool] = {}
    async with anyio.create_task_group() as group:
        group.start_soon(sleeper, 1.0, results, "later deadline, entered first")
        await anyio.wait_all_tasks_blocked()  # the first is in its scope before the others start
        group.start_soon(sleeper, 0.05, results, "earlier deadline, entered second")
        group.start_soon(sleeper, LONG, results, "no deadline reached", 0.3)

    assert list(results.items()) == [  # in the order they ended
        ("earlier deadline, entered second", True),
        ("no deadline reached", False),
        ("later deadline, entered first", True),
    ]


async def test_a_deadline_already_past_cancels_at_once() -> None:
    with within(-1.0) as scope:
        await anyio.sleep(LONG)

    assert scope.cancelled_caught


async def test_a_timer_left_by_a_finished_call_arms_the_next_deadline() -> None:
    results: dict[str, bool] = {}

    await sleeper(0.05, results, "finished early", work=0.0)  # arms a timer at +0.05 s, then ends
    await sleeper(0.15, results, "later deadline")  # must still be cancelled at its own deadline

    assert results == {"finished early": False, "later deadline": True}


async def test_an_outer_cancellation_is_not_taken_for_the_deadline() -> None:
    with anyio.CancelScope() as outer:
        with within(LONG) as scope:
            outer.cancel()
            await anyio.sleep(LONG)

    assert outer.cancelled_caught
    assert not scope.cancelled_caught


def test_each_event_loop_run_after_another_gets_its_deadlines() -> None:
    async def one_run() -> bool:
        with within(0.02) as scope:
            await asyncio.sleep(LONG)
        return scope.cancelled_caught

    assert [asyncio.run(one_run()) for _ in range(3)] == [True, True, True]


async def test_on_asyncio_the_scope_is_watched_not_given_its_own_deadline() -> None:
    assert isinstance(within(1.0), DeadlineScope)


async def test_a_cancellation_requested_alongside_the_deadline_still_propagates() -> None:
    """Both the deadline and another cancel request hit the task: the scope stops only its own."""
    scope = within(0.01)

    async def work() -> None:
        with scope:
            time.sleep(0.03)  # noqa: ASYNC251 - blocks on purpose: past the deadline before the timer can run
            current = asyncio.current_task()
            assert current is not None
            current.cancel()  # another cancel request, pending alongside the deadline's
            await asyncio.sleep(LONG)

    task = asyncio.ensure_future(work())
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not scope.cancelled_caught


async def test_the_deadline_ends_the_work_in_time_and_leaves_the_task_uncancelled() -> None:
    with within(0.02) as scope:
        await anyio.sleep(LONG)
    current = asyncio.current_task()

    assert scope.cancelled_caught
    assert current is not None and current.cancelling() == 0
    await anyio.lowlevel.checkpoint()  # the task goes on: no cancellation left pending
