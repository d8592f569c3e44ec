"""Thread leases: one call at a time continues a thread; the next waits, or gives up as busy; a
lease whose holder stopped renewing it lapses. (Leases across processes: test_store_processes.)"""

from __future__ import annotations

from datetime import UTC, datetime

import anyio
import anyio.lowlevel
import pytest
from store_support import AnyStore, DatabasePeek, FakeClock, StoreFactory

from colibri_router.store import ThreadBusy, ThreadLease, ThreadNotFound

USER = {"role": "user", "content": "next"}
NEVER = datetime.min.replace(tzinfo=UTC)


async def test_a_second_claim_waits_until_the_first_is_released(store: AnyStore) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    events: list[str] = []
    first_holds = anyio.Event()

    async def first() -> None:
        async with store.claim_thread(thread_id, "alice", wait_s=5):
            first_holds.set()
            await anyio.sleep(0.2)  # long enough for the second claim to poll a few times
            events.append("first released")

    async def second() -> None:
        await first_holds.wait()
        async with store.claim_thread(thread_id, "alice", wait_s=5):
            events.append("second holds")

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        group.start_soon(second)
    assert events == ["first released", "second holds"]


async def test_a_claim_that_waits_too_long_is_busy(store: AnyStore) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    async with store.claim_thread(thread_id, "alice", wait_s=0):
        with pytest.raises(ThreadBusy, match="busy") as raised:
            async with store.claim_thread(thread_id, "alice", wait_s=0.05):
                pytest.fail("two claims held one thread")
    assert raised.value.code == "INVALID_REQUEST"
    assert raised.value.waited_s == 0.05
    async with store.claim_thread(thread_id, "alice", wait_s=0):  # released: free again at once
        pass


async def test_claiming_a_thread_the_principal_cannot_see_fails_at_once(store: AnyStore) -> None:
    theirs = await store.create_thread("bob", "kimi", "kimi-k2")
    for thread_id in (theirs, "th_unknown"):
        with pytest.raises(ThreadNotFound):
            async with store.claim_thread(thread_id, "alice", wait_s=60):
                pytest.fail("claimed a thread the principal cannot see")


async def test_a_lease_whose_holder_stopped_renewing_lapses(store: AnyStore, clock: FakeClock) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    # A holder that died: the lease was taken and is never renewed nor released.
    assert await store.take_lease(ThreadLease(thread_id, "alice", "dead-holder"), lease_s=30)

    clock.advance(seconds=29)
    with pytest.raises(ThreadBusy):
        async with store.claim_thread(thread_id, "alice", wait_s=0):
            pass
    clock.advance(seconds=1)
    async with store.claim_thread(thread_id, "alice", wait_s=0):
        pass


async def test_a_held_lease_is_renewed_while_the_call_runs(
    new_store: StoreFactory, clock: FakeClock, peek: DatabasePeek
) -> None:
    store = new_store(lease_s=0.3)
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    async with store.claim_thread(thread_id, "alice", wait_s=0):
        clock.advance(hours=1)  # far past the lease as first taken
        renewed_from = clock.now
        with anyio.fail_after(10):  # a guard against hanging, should renewal never come
            while (await peek.lease_expiry(thread_id) or NEVER) < renewed_from:  # noqa: ASYNC110
                await anyio.sleep(0.02)  # the renewal is a database write, seen only by reading the database
        with pytest.raises(ThreadBusy):
            async with store.claim_thread(thread_id, "alice", wait_s=0):
                pass
    assert await peek.lease_expiry(thread_id) is None


async def test_appends_respect_the_lease(store: AnyStore) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    other = await store.create_thread("alice", "kimi", "kimi-k2")
    async with store.claim_thread(thread_id, "alice", wait_s=0) as lease:
        with pytest.raises(ThreadBusy):  # another call, holding no lease, must not slip a turn in
            await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2")
        with pytest.raises(ValueError, match="another thread"):
            await store.append_turns(other, "alice", [USER], "kimi", "kimi-k2", lease=lease)
        await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2", lease=lease)
    await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2")  # nobody holds it now
    assert (await store.load_thread(thread_id, "alice")).turns == 2


async def test_a_lapsed_lease_taken_over_cannot_append(store: AnyStore, clock: FakeClock) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    stalled = ThreadLease(thread_id, "alice", "stalled-holder")
    assert await store.take_lease(stalled, lease_s=30)
    clock.advance(seconds=31)
    async with store.claim_thread(thread_id, "alice", wait_s=0):
        with pytest.raises(ThreadBusy):
            await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2", lease=stalled)


async def test_the_lease_is_released_however_the_body_ends(store: AnyStore) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")

    with pytest.raises(KeyError):  # the body's own exception, not wrapped in an ExceptionGroup
        async with store.claim_thread(thread_id, "alice", wait_s=0):
            raise KeyError("upstream failed")

    with anyio.move_on_after(0.05) as scope:
        async with store.claim_thread(thread_id, "alice", wait_s=0):
            await anyio.sleep_forever()
    assert scope.cancelled_caught

    async with store.claim_thread(thread_id, "alice", wait_s=0):
        pass


async def test_concurrent_calls_on_one_thread_never_interleave(new_store: StoreFactory) -> None:
    stores = [new_store() for _ in range(3)]
    thread_id = await stores[0].create_thread("alice", "kimi", "kimi-k2")

    async def one_call(number: int) -> None:
        store = stores[number % len(stores)]
        async with store.claim_thread(thread_id, "alice", wait_s=30) as lease:
            seen = (await store.load_thread(thread_id, "alice")).turns
            await anyio.lowlevel.checkpoint()  # the upstream call: other tasks run meanwhile
            pair = [
                {"role": "user", "content": str(number), "seen": seen},
                {"role": "assistant", "content": str(number)},
            ]
            await store.append_turns(thread_id, "alice", pair, "kimi", "kimi-k2", lease=lease)

    async with anyio.create_task_group() as group:
        for number in range(10):
            group.start_soon(one_call, number)

    messages = (await stores[0].load_thread(thread_id, "alice")).messages
    assert len(messages) == 20
    for position in range(0, 20, 2):
        user, assistant = messages[position], messages[position + 1]
        assert user["seen"] == position  # each call saw every turn written before it
        assert user["content"] == assistant["content"]
    assert sorted(int(message["content"]) for message in messages[::2]) == list(range(10))


async def test_concurrent_appends_without_a_lease_keep_each_append_together(new_store: StoreFactory) -> None:
    """No claim at all: two stores append pairs to one thread at once. Each append is numbered after
    every append committed before it, and no other append's turns land inside it."""
    stores = [new_store(), new_store()]
    thread_id = await stores[0].create_thread("alice", "kimi", "kimi-k2")

    async def append_pair(number: int) -> None:
        pair = [{"role": "user", "content": str(number)}, {"role": "assistant", "content": str(number)}]
        await stores[number % 2].append_turns(thread_id, "alice", pair, "kimi", "kimi-k2")

    async with anyio.create_task_group() as group:
        for number in range(30):
            group.start_soon(append_pair, number)

    messages = (await stores[1].load_thread(thread_id, "alice")).messages
    assert [message["role"] for message in messages] == ["user", "assistant"] * 30
    assert [messages[position]["content"] for position in range(1, 60, 2)] == [
        messages[position]["content"] for position in range(0, 60, 2)
    ]
    assert sorted(int(message["content"]) for message in messages[::2]) == list(range(30))


async def test_a_claim_cancelled_while_waiting_holds_nothing(store: AnyStore) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    async with store.claim_thread(thread_id, "alice", wait_s=0):
        with anyio.move_on_after(0.05) as scope:
            async with store.claim_thread(thread_id, "alice", wait_s=30):
                pytest.fail("two claims held one thread")
        assert scope.cancelled_caught
    async with store.claim_thread(thread_id, "alice", wait_s=0):
        pass
