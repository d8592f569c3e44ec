"""Threads: round trip, titles, listing, principals, deletion and expiry (with a clock the test moves)."""

from __future__ import annotations

import re

import pytest
from store_support import START, AnyStore, DatabasePeek, FakeClock, StoreFactory

from colibri_router.store import ThreadNotFound

USER = {"role": "user", "content": [{"type": "text", "text": "Plan a trip to Kyoto"}]}
ASSISTANT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "…", "signature": "sig"},
        {"type": "tool_use", "id": "call_1", "name": "search", "input": {"q": "Kyoto ☃"}},
    ],
}
TOOL_RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}]}


async def test_a_thread_round_trips_its_messages_in_order(store: AnyStore, clock: FakeClock) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    created = await store.load_thread(thread_id, "alice")
    assert (created.messages, created.turns, created.title) == ([], 0, "")
    assert created.created_at == created.updated_at == START

    clock.advance(minutes=5)
    await store.append_turns(thread_id, "alice", [USER, ASSISTANT], "kimi", "kimi-k2")
    clock.advance(minutes=5)
    await store.append_turns(thread_id, "alice", [TOOL_RESULT], "claude", "claude-sonnet-4-5")

    thread = await store.load_thread(thread_id, "alice")
    assert thread.messages == [USER, ASSISTANT, TOOL_RESULT]
    assert thread.turns == 3
    assert (thread.provider, thread.model) == ("claude", "claude-sonnet-4-5")
    assert thread.created_at == START
    assert thread.updated_at == START + (clock.now - START)
    assert thread.title == "Plan a trip to Kyoto"


async def test_loaded_messages_are_copies(store: AnyStore) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2")
    (await store.load_thread(thread_id, "alice")).messages.append(ASSISTANT)
    assert (await store.load_thread(thread_id, "alice")).messages == [USER]


async def test_thread_ids_are_unguessable_and_url_safe(store: AnyStore) -> None:
    ids = {await store.create_thread("alice", "kimi", "kimi-k2") for _ in range(20)}
    assert len(ids) == 20
    assert all(re.fullmatch(r"th_[A-Za-z0-9_-]{20}", thread_id) for thread_id in ids)


async def test_the_title_is_set_by_the_first_user_text_and_then_kept(store: AnyStore, clock: FakeClock) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    await store.append_turns(thread_id, "alice", [TOOL_RESULT], "kimi", "kimi-k2")
    long_text = "word " * 40
    await store.append_turns(thread_id, "alice", [{"role": "user", "content": long_text}], "kimi", "kimi-k2")
    await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2")
    [summary] = await store.list_threads("alice")
    assert summary.title == long_text.strip()[:80]
    assert summary.turns == 3


async def test_unknown_threads_are_not_found(store: AnyStore) -> None:
    with pytest.raises(ThreadNotFound, match="th_missing") as raised:
        await store.load_thread("th_missing", "alice")
    assert raised.value.code == "INVALID_REQUEST"
    with pytest.raises(ThreadNotFound):
        await store.append_turns("th_missing", "alice", [USER], "kimi", "kimi-k2")
    assert await store.delete_thread("th_missing", "alice") is False


async def test_listing_is_newest_first_and_limited(store: AnyStore, clock: FakeClock) -> None:
    ids = []
    for _ in range(4):
        ids.append(await store.create_thread("alice", "kimi", "kimi-k2"))
        clock.advance(seconds=1)
    await store.append_turns(ids[0], "alice", [USER], "claude", "claude-haiku-4-5")  # the oldest is used again

    listed = await store.list_threads("alice", limit=3)
    assert [summary.thread_id for summary in listed] == [ids[0], ids[3], ids[2]]
    assert (listed[0].provider, listed[0].model, listed[0].turns) == ("claude", "claude-haiku-4-5", 1)
    assert listed[0].updated_at == clock.now
    assert len(await store.list_threads("alice")) == 4
    with pytest.raises(ValueError, match="limit"):
        await store.list_threads("alice", limit=0)


async def test_a_principal_sees_only_their_own_threads(store: AnyStore) -> None:
    mine = await store.create_thread("alice", "kimi", "kimi-k2")
    theirs = await store.create_thread("bob", "kimi", "kimi-k2")

    assert [s.thread_id for s in await store.list_threads("alice")] == [mine]
    for attempt in (
        store.load_thread(theirs, "alice"),
        store.append_turns(theirs, "alice", [USER], "kimi", "kimi-k2"),
    ):
        with pytest.raises(ThreadNotFound, match="unknown or expired"):
            await attempt
    assert await store.delete_thread(theirs, "alice") is False
    assert (await store.load_thread(theirs, "bob")).principal == "bob"


async def test_an_administrator_sees_every_thread(store: AnyStore, clock: FakeClock) -> None:
    alice = await store.create_thread("alice", "kimi", "kimi-k2")
    clock.advance(seconds=1)
    bob = await store.create_thread("bob", "kimi", "kimi-k2")
    assert [(s.thread_id, s.principal) for s in await store.list_threads(None)] == [(bob, "bob"), (alice, "alice")]
    assert (await store.load_thread(alice, None)).principal == "alice"
    assert await store.delete_thread(bob, None) is True


async def test_deleting_a_thread_removes_its_messages(store: AnyStore, peek: DatabasePeek) -> None:
    kept = await store.create_thread("alice", "kimi", "kimi-k2")
    gone = await store.create_thread("alice", "kimi", "kimi-k2")
    await store.append_turns(kept, "alice", [USER], "kimi", "kimi-k2")
    await store.append_turns(gone, "alice", [USER, ASSISTANT], "kimi", "kimi-k2")

    assert await store.delete_thread(gone, "alice") is True
    assert await store.delete_thread(gone, "alice") is False
    with pytest.raises(ThreadNotFound):
        await store.load_thread(gone, "alice")
    assert await peek.count("thread_messages") == 1


async def test_a_thread_unused_for_the_ttl_expires(store: AnyStore, clock: FakeClock) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2")

    clock.advance(days=30, milliseconds=-1)
    assert (await store.load_thread(thread_id, "alice")).turns == 1  # loading is not using
    clock.advance(milliseconds=1)
    with pytest.raises(ThreadNotFound):
        await store.load_thread(thread_id, "alice")
    with pytest.raises(ThreadNotFound):
        await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2")


async def test_appending_keeps_a_thread_alive(store: AnyStore, clock: FakeClock) -> None:
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    for _ in range(3):
        clock.advance(days=20)
        await store.append_turns(thread_id, "alice", [USER], "kimi", "kimi-k2")
    assert (await store.load_thread(thread_id, "alice")).turns == 3


async def test_expired_threads_are_purged_with_their_messages(
    store: AnyStore, clock: FakeClock, peek: DatabasePeek
) -> None:
    old = await store.create_thread("alice", "kimi", "kimi-k2")
    await store.append_turns(old, "alice", [USER, ASSISTANT], "kimi", "kimi-k2")
    clock.advance(days=29)
    recent = await store.create_thread("bob", "kimi", "kimi-k2")
    clock.advance(days=1)

    assert [s.thread_id for s in await store.list_threads(None)] == [recent]
    assert await peek.count("thread_messages") == 0
    with pytest.raises(ThreadNotFound):
        await store.load_thread(old, None)


async def test_the_ttl_takes_fractions_of_a_day(new_store: StoreFactory, clock: FakeClock) -> None:
    store = new_store(thread_ttl_days=0.5)
    thread_id = await store.create_thread("alice", "kimi", "kimi-k2")
    clock.advance(hours=11, minutes=59)
    await store.load_thread(thread_id, "alice")
    clock.advance(minutes=1)
    with pytest.raises(ThreadNotFound):
        await store.load_thread(thread_id, "alice")


async def test_a_principal_is_required(store: AnyStore) -> None:
    with pytest.raises(ValueError, match="principal"):
        await store.create_thread("", "kimi", "kimi-k2")
