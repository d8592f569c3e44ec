"""Images and documents in threads: stored once per thread by content hash, whatever the number of
turns that hold them; loaded back whole; gone with their thread (both backends)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from store_support import AnyStore, DatabasePeek

from colibri_router.store.media import deflate, inflate

SHOT = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVuZ3RoIDMgMCBSPj4Kc3RyZWFtCg=="


def image(data: str = SHOT) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def turn_with_media() -> list[dict[str, Any]]:
    document = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}}
    return [
        {"role": "user", "content": [{"type": "text", "text": "look"}, image(), document]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [image()]}]},
    ]


async def test_media_is_stored_once_per_thread_and_loaded_back_whole(store: AnyStore, peek: DatabasePeek) -> None:
    thread_id = await store.create_thread("alice", "claude", "claude-sonnet-4-5")
    await store.append_turns(thread_id, "alice", turn_with_media(), "claude", "claude-sonnet-4-5")
    again = [{"role": "user", "content": [{"type": "text", "text": "and again"}, image()]}]
    await store.append_turns(thread_id, "alice", again, "claude", "claude-sonnet-4-5")
    assert await peek.count("thread_media") == 2  # the screenshot (three times) and the PDF
    thread = await store.load_thread(thread_id, "alice")
    assert thread.messages == [*turn_with_media(), *again]


async def test_a_threads_media_goes_with_it(store: AnyStore, peek: DatabasePeek) -> None:
    thread_id = await store.create_thread("alice", "claude", "claude-sonnet-4-5")
    await store.append_turns(thread_id, "alice", turn_with_media(), "claude", "claude-sonnet-4-5")
    assert await store.delete_thread(thread_id, "alice")
    assert await peek.count("thread_media") == 0


@given(st.lists(st.sampled_from([SHOT, PDF, "QUJD", "REVG"]), max_size=6))
def test_deflate_then_inflate_gives_the_messages_back(datas: list[str]) -> None:
    messages = [{"role": "user", "content": [image(data) for data in datas]}]
    stored, blobs = deflate(messages)
    assert len(blobs) == len(set(datas))
    assert all("data" not in block["source"] for block in stored[0]["content"])
    assert inflate(stored, blobs) == messages
