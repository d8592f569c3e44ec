"""Grouped commits: rows of concurrent calls share one write, each caller returns once its row is
written, a failure reaches every caller of its group, and a cancelled caller's row is still written."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_support import AnyStore, FakeClock, ledger_row

from colibri_router.store import grouping
from colibri_router.store.grouping import ExpectedWrite, GroupedWrites


class Recorder:
    def __init__(self) -> None:
        self.groups: list[list[int]] = []
        self.gate = anyio.Event()
        self.fail_on: int | None = None

    async def write(self, items: Sequence[int]) -> None:
        if not self.groups:
            await self.gate.wait()  # the first group is slow: the others gather meanwhile
        self.groups.append(list(items))
        if self.fail_on in items:
            raise OSError("disk full")


async def test_rows_arriving_while_a_group_is_written_form_the_next_group() -> None:
    recorder = Recorder()
    writes = GroupedWrites(recorder.write)
    returned: list[int] = []

    async def submit(item: int) -> None:
        await writes.submit(item)
        returned.append(item)

    async with anyio.create_task_group() as group:
        group.start_soon(submit, 0)
        await anyio.sleep(0.01)
        for item in range(1, 10):
            group.start_soon(submit, item)
        await anyio.sleep(0.01)
        assert returned == []  # nobody returns before their row is written
        recorder.gate.set()
    assert recorder.groups == [[0], list(range(1, 10))]
    assert sorted(returned) == list(range(10))


async def test_a_bad_row_fails_only_its_own_caller_and_a_dead_database_fails_all() -> None:
    recorder = Recorder()
    recorder.fail_on = 3
    recorder.gate.set()
    writes = GroupedWrites(recorder.write)
    outcomes: dict[int, str] = {}

    async def submit(item: int) -> None:
        try:
            await writes.submit(item)
            outcomes[item] = "ok"
        except OSError:
            outcomes[item] = "failed"

    async with anyio.create_task_group() as group:
        for item in range(6):
            group.start_soon(submit, item)
    assert outcomes == {0: "ok", 1: "ok", 2: "ok", 3: "failed", 4: "ok", 5: "ok"}
    assert any(len(g) > 1 and 3 in g for g in recorder.groups)  # it was grouped, then tried alone

    async def down(_items: Sequence[int]) -> None:
        raise OSError("connection refused")

    dead = GroupedWrites(down)
    failures: list[int] = []

    async def submit_to_dead(item: int) -> None:
        with pytest.raises(OSError, match="refused"):
            await dead.submit(item)
        failures.append(item)

    async with anyio.create_task_group() as group:
        for item in range(4):
            group.start_soon(submit_to_dead, item)
    assert sorted(failures) == [0, 1, 2, 3]


async def test_a_cancelled_caller_leaves_its_row_to_the_writer() -> None:
    recorder = Recorder()
    writes = GroupedWrites(recorder.write)
    async with anyio.create_task_group() as group:
        group.start_soon(writes.submit, 1)
        await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    recorder.gate.set()
    with anyio.fail_after(5):
        while not recorder.groups:  # noqa: ASYNC110 - the writer task runs on its own
            await anyio.sleep(0.01)
    assert recorder.groups == [[1]]


@settings(max_examples=10, deadline=None)
@given(counts=st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=4))
def test_every_row_is_written_exactly_once_whatever_the_bursts(counts: list[int]) -> None:
    async def run() -> list[list[int]]:
        groups: list[list[int]] = []

        async def write(items: Sequence[int]) -> None:
            await anyio.lowlevel.checkpoint()
            groups.append(list(items))

        writes = GroupedWrites(write)
        item = 0
        for count in counts:
            async with anyio.create_task_group() as group:
                for _ in range(count):
                    group.start_soon(writes.submit, item)
                    item += 1
        return groups

    groups = anyio.run(run)
    assert sorted(i for g in groups for i in g) == list(range(sum(counts)))


async def test_concurrent_ledger_rows_all_reach_the_store(store: AnyStore, clock: FakeClock) -> None:
    async with anyio.create_task_group() as group:
        for index in range(40):
            group.start_soon(store.record_call, ledger_row(clock(), latency_ms=index))
    report = await store.usage_report(None, "all", None)
    assert report.total.calls == 40


# Announced rows (ExpectedWrite): a group waits for the rows of calls still running, up to GATHER_S.
# The tests stretch GATHER_S so that what they check cannot depend on the machine's speed; the
# outer move_on_after only turns a writer that waits too long into a failure instead of a hang.


class Writes:
    def __init__(self) -> None:
        self.groups: list[list[int]] = []

    async def write(self, items: Sequence[int]) -> None:
        self.groups.append(list(items))


async def test_a_group_waits_for_the_rows_announced_and_commits_once_they_are_all_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(grouping, "GATHER_S", 30.0)
    writes = Writes()
    grouped = GroupedWrites(writes.write)
    first, second, third = ExpectedWrite(), ExpectedWrite(), ExpectedWrite()

    async def call(item: int, expected: ExpectedWrite, running_s: float) -> None:
        await anyio.sleep(running_s)
        expected.arrived()
        await grouped.submit(item)

    with anyio.move_on_after(10) as guard:
        async with anyio.create_task_group() as group:
            group.start_soon(call, 1, first, 0)
            group.start_soon(call, 2, second, 0.05)
            group.start_soon(call, 3, third, 0.1)
    assert not guard.cancelled_caught  # the last arrival ended the wait, not GATHER_S
    assert writes.groups == [[1, 2, 3]]
    assert grouping.announced_rows() == 0


async def test_with_nothing_announced_a_row_is_committed_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grouping, "GATHER_S", 30.0)
    writes = Writes()
    grouped = GroupedWrites(writes.write)
    alone = ExpectedWrite()
    alone.arrived()
    alone.arrived()  # idempotent: a second arrival is not a second row

    with anyio.move_on_after(10) as guard:
        await grouped.submit(1)
    assert not guard.cancelled_caught
    assert writes.groups == [[1]]


async def test_a_row_that_never_comes_delays_a_group_by_gather_s_at_most(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grouping, "GATHER_S", 0.05)
    writes = Writes()
    grouped = GroupedWrites(writes.write)
    never = ExpectedWrite()  # a call that is still running (or forgot to say it arrived)

    with anyio.move_on_after(10) as guard:
        await grouped.submit(1)
        await grouped.submit(2)
    assert not guard.cancelled_caught
    assert writes.groups == [[1], [2]]
    assert grouping.announced_rows() == 1
    never.arrived()
    assert grouping.announced_rows() == 0
