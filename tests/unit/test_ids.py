"""ToolIdStrategy: K2 IDs for Kimi, Claude-safe IDs for Claude, neutral IDs for the host."""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri_router.conversation import Message, Part, Text, Thinking, ToolCall, ToolResult
from colibri_router.errors import InvalidRequestError
from colibri_router.toolcalls.ids import (
    NEUTRAL_ID_PATTERN,
    claude_safe_id,
    ids_for_claude,
    ids_for_kimi,
    k2_id,
    neutral_ids_for_new_calls,
    parse_k2_id,
)

K2_OUTPUT_ID = re.compile(r"functions\.(.+):(\d+)", re.DOTALL)


def call(call_id: str, name: str = "read_file") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments={})


def result(call_id: str) -> ToolResult:
    return ToolResult(call_id=call_id, content="ok")


def assistant(*parts: Part) -> Message:
    return Message(role="assistant", parts=parts)


def user(*parts: Part) -> Message:
    return Message(role="user", parts=parts)


def call_ids(messages: Sequence[Message]) -> list[str]:
    return [c.id for m in messages for c in m.tool_calls()]


def result_ids(messages: Sequence[Message]) -> list[str]:
    return [p.call_id for m in messages for p in m.parts if isinstance(p, ToolResult)]


def is_neutral(call_id: str) -> bool:
    return NEUTRAL_ID_PATTERN.fullmatch(call_id) is not None


# --- parse_k2_id, k2_id ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("functions.read_file:3", ("read_file", 3)),
        ("search:0", ("search", 0)),
        ("functions.mcp.fs.read:3", ("mcp.fs.read", 3)),
        ("functions.list-files:12", ("list-files", 12)),
        ("mcp.fs.read:7", ("mcp.fs.read", 7)),
        ("functions.a:1:2", ("a:1", 2)),
        ("  functions.get_weather:4\n", ("get_weather", 4)),
        ("functions.functions.x:0", ("functions.x", 0)),
    ],
)
def test_parse_k2_id_accepts_both_shapes_and_dotted_names(raw: str, expected: tuple[str, int]) -> None:
    assert parse_k2_id(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "tool_abc",
        "call_1",
        "toolu_01ABC",
        "functions.read",
        "read:",
        ":3",
        "read:x",
        "read:\u0663",
        "",
        "x:" + "9" * 5000,
    ],
)
def test_parse_k2_id_rejects_opaque_ids(raw: str) -> None:
    assert parse_k2_id(raw) is None


def test_k2_id() -> None:
    assert k2_id("mcp.fs.read", 3) == "functions.mcp.fs.read:3"
    assert parse_k2_id(k2_id("mcp.fs.read", 3)) == ("mcp.fs.read", 3)


# --- ids_for_kimi --------------------------------------------------------------------------------


def test_kimi_renumber_numbers_every_call_of_the_conversation() -> None:
    history = (
        user(Text("list files")),
        assistant(Text("sure"), call("hist_tool_1", "read_file"), call("hist_tool_2", "glob")),
        user(result("hist_tool_1"), result("hist_tool_2")),
        assistant(call("toolu_01X", "mcp.fs.read")),
        user(result("toolu_01X")),
    )
    out = ids_for_kimi(history)
    assert call_ids(out) == ["functions.read_file:0", "functions.glob:1", "functions.mcp.fs.read:2"]
    assert result_ids(out) == ["functions.read_file:0", "functions.glob:1", "functions.mcp.fs.read:2"]
    assert out[1].parts[0] == Text("sure")
    assert out[0] == history[0]


def test_kimi_renumber_overrides_valid_k2_ids() -> None:
    history = (assistant(call("functions.read_file:7")), user(result("functions.read_file:7")))
    assert call_ids(ids_for_kimi(history)) == ["functions.read_file:0"]


def test_kimi_repair_keeps_valid_ids_and_gives_others_the_next_free_index() -> None:
    history = (
        assistant(call("functions.read_file:4", "read_file"), call("call_1", "glob")),
        user(result("functions.read_file:4"), result("call_1")),
        assistant(call("functions.glob:2", "glob"), call("search:0", "search")),
        user(result("functions.glob:2"), result("search:0")),
    )
    out = ids_for_kimi(history, mode="repair")
    assert call_ids(out) == [
        "functions.read_file:4",
        "functions.glob:5",
        "functions.glob:2",
        "functions.search:6",
    ]
    assert result_ids(out) == call_ids(out)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("functions.glob:0", "the ID names another tool"),
        ("functions.read_file:01", "not canonical"),
        (" functions.read_file:0", "surrounding whitespace"),
        ("read_file:0", "no functions. prefix"),
    ],
)
def test_kimi_repair_repairs_ids_that_are_not_the_calls_own_k2_id(raw: str, reason: str) -> None:
    history = (assistant(call(raw, "read_file")), user(result(raw)))
    out = ids_for_kimi(history, mode="repair")
    assert call_ids(out) == ["functions.read_file:0"], reason
    assert result_ids(out) == ["functions.read_file:0"]


def test_kimi_repair_starts_at_zero_when_nothing_is_kept() -> None:
    history = (assistant(call("a"), call("b", "glob")),)
    assert call_ids(ids_for_kimi(history, mode="repair")) == ["functions.read_file:0", "functions.glob:1"]


def test_kimi_repair_renames_a_repeated_id_so_results_stay_distinguishable() -> None:
    # A host that resets the counter per turn emits functions.read_file:0 in every turn.
    history = (
        assistant(call("functions.read_file:0")),
        user(result("functions.read_file:0")),
        assistant(call("functions.read_file:0")),
        user(result("functions.read_file:0")),
    )
    out = ids_for_kimi(history, mode="repair")
    assert call_ids(out) == ["functions.read_file:0", "functions.read_file:1"]
    assert result_ids(out) == ["functions.read_file:0", "functions.read_file:1"]


def test_results_bind_to_the_most_recent_earlier_call_with_their_id() -> None:
    history = (
        assistant(call("dup", "first")),
        user(result("dup")),
        assistant(call("dup", "second")),
        user(result("dup"), result("dup")),
    )
    assert result_ids(ids_for_kimi(history)) == [
        "functions.first:0",
        "functions.second:1",
        "functions.second:1",
    ]


@pytest.mark.parametrize(
    "history",
    [
        (user(result("ghost")),),
        (assistant(call("a")), user(result("ghost"))),
        (user(result("late")), assistant(call("late"))),
    ],
    ids=["no calls", "unknown id", "call comes later"],
)
@pytest.mark.parametrize(
    "rewrite",
    [ids_for_kimi, lambda h: ids_for_kimi(h, mode="repair"), ids_for_claude],
    ids=["kimi-renumber", "kimi-repair", "claude"],
)
def test_orphan_results_are_invalid_requests(
    history: tuple[Message, ...], rewrite: Callable[[Sequence[Message]], tuple[Message, ...]]
) -> None:
    with pytest.raises(InvalidRequestError, match=r"tool_use id '(ghost|late)'"):
        rewrite(history)


def test_rewriting_does_not_touch_other_parts_or_the_input() -> None:
    history = (
        assistant(Thinking("hmm", signature="sig"), Text("calling"), call("functions.x:0", "x")),
        user(result("functions.x:0"), Text("thanks")),
    )
    snapshot = copy.deepcopy(history)
    for out in (ids_for_kimi(history), ids_for_claude(history)):
        assert out[0].parts[:2] == history[0].parts[:2]
        assert out[1].parts[1] == Text("thanks")
        assert out[0].tool_calls()[0].arguments is history[0].tool_calls()[0].arguments
    assert history == snapshot


# --- ids_for_claude ------------------------------------------------------------------------------


def test_claude_safe_id_is_a_sanitized_stem_plus_a_hash() -> None:
    digest = hashlib.sha256(b"functions.read_file:3").hexdigest()[:8]
    assert claude_safe_id("functions.read_file:3") == f"functions_read_file_3_{digest}"
    assert claude_safe_id("a.b") != claude_safe_id("a:b")


@pytest.mark.parametrize("raw", ["", "x" * 200, "functions.é:1", "\ud800", "a b\nc"])
def test_claude_safe_id_is_always_valid(raw: str) -> None:
    safe = claude_safe_id(raw)
    assert is_neutral(safe)
    assert len(safe) <= 64


def test_claude_keeps_valid_ids_and_rewrites_k2_ids() -> None:
    history = (
        assistant(call("toolu_01ABC"), call("functions.read_file:3")),
        user(result("functions.read_file:3"), result("toolu_01ABC")),
    )
    out = ids_for_claude(history)
    assert call_ids(out) == ["toolu_01ABC", claude_safe_id("functions.read_file:3")]
    assert result_ids(out) == [claude_safe_id("functions.read_file:3"), "toolu_01ABC"]


def test_claude_makes_duplicate_ids_unique_without_taking_a_later_calls_id() -> None:
    history = (
        assistant(call("x")),
        user(result("x")),
        assistant(call("x"), call("x_2")),
        user(result("x"), result("x_2")),
    )
    out = ids_for_claude(history)
    assert call_ids(out) == ["x", "x_3", "x_2"]
    assert result_ids(out) == ["x", "x_3", "x_2"]


def test_claude_suffix_fits_in_64_characters() -> None:
    long_id = "a" * 64
    out = ids_for_claude((assistant(call(long_id), call(long_id)),))
    assert call_ids(out) == [long_id, "a" * 62 + "_2"]


def test_claude_leaves_a_neutral_history_as_it_is() -> None:
    history = (assistant(call("toolu_01"), call("functions_read_file_0")), user(result("toolu_01")))
    assert ids_for_claude(history) == history


# --- neutral_ids_for_new_calls -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("functions.read_file:7", "functions_read_file_7"),
        ("x:7", "x_7"),
        ("tool_abc", "tool_abc"),
        ("toolu_01A09q90qw90lq917835lq9", "toolu_01A09q90qw90lq917835lq9"),
        ("call 1", "call_1"),
        ("", "call"),
        ("é", "_"),
        ("y" * 100, "y" * 64),
    ],
)
def test_neutral_ids_are_readable(raw: str, expected: str) -> None:
    assert neutral_ids_for_new_calls([call(raw)], history=()) == (call(expected),)


def test_neutral_ids_avoid_history_and_each_other() -> None:
    history = (assistant(call("functions_read_file_0"), call("call")), user(result("call")))
    new = [call("functions.read_file:0"), call("functions_read_file_0"), call(""), call("call_2")]
    out = neutral_ids_for_new_calls(new, history)
    assert [c.id for c in out] == ["functions_read_file_0_2", "functions_read_file_0_3", "call_3", "call_2"]
    assert [c.name for c in out] == [c.name for c in new]


def test_neutral_suffix_fits_in_64_characters() -> None:
    history = (assistant(call("z" * 64)),)
    assert neutral_ids_for_new_calls([call("z" * 80)], history)[0].id == "z" * 62 + "_2"


def test_neutral_ids_are_deterministic() -> None:
    new = [call("functions.a:0"), call("functions.a:0"), call("a:0")]
    assert neutral_ids_for_new_calls(new, ()) == neutral_ids_for_new_calls(list(new), ())


# --- properties ----------------------------------------------------------------------------------

# With a cold .hypothesis cache (a fresh CI checkout), the first text draw of a session spends ~2 s
# building Hypothesis's unicode tables, which its too_slow health check blames on our strategies.
PROPERTY = settings(suppress_health_check=[HealthCheck.too_slow])

NAMES = st.one_of(
    st.sampled_from(["read_file", "mcp.fs.read", "list-files", "search", "functions.x", "a:1"]),
    st.text(min_size=1, max_size=12),
)
RAW_IDS = st.one_of(
    st.builds(k2_id, NAMES, st.integers(0, 20)),
    st.builds("{}:{}".format, NAMES, st.integers(0, 20)),
    st.sampled_from(["", "dup", "call_1", "toolu_01", "x" * 70, "functions.read_file:0", "x_2"]),
    st.text(max_size=70),
)


@st.composite
def histories(draw: st.DrawFn) -> tuple[Message, ...]:
    """Assistant turns with calls (any IDs, duplicates included) and user turns whose results point
    at earlier calls, with text and thinking parts mixed in."""
    messages: list[Message] = []
    seen: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        calls = draw(st.lists(st.builds(ToolCall, id=RAW_IDS, name=NAMES, arguments=st.just({})), max_size=3))
        extra: list[Part] = draw(st.lists(st.sampled_from([Text("t"), Thinking("r")]), max_size=1))
        messages.append(assistant(*extra, *calls))
        seen += [c.id for c in calls]
        if seen:
            answered = draw(st.lists(st.sampled_from(seen), max_size=4))
            messages.append(user(*(result(i) for i in answered)))
    return tuple(messages)


def bound_call_positions(messages: Sequence[Message]) -> list[int]:
    """Reference binding: for each result, the position of the latest earlier call with its ID."""
    latest: dict[str, int] = {}
    bound: list[int] = []
    position = 0
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCall):
                latest[part.id] = position
                position += 1
            elif isinstance(part, ToolResult):
                bound.append(latest[part.call_id])
    return bound


def assert_results_follow_their_calls(original: Sequence[Message], rewritten: Sequence[Message]) -> None:
    new_ids = call_ids(rewritten)
    assert result_ids(rewritten) == [new_ids[i] for i in bound_call_positions(original)]
    assert [type(p) for m in rewritten for p in m.parts] == [type(p) for m in original for p in m.parts]


def assert_kimi_invariants(history: Sequence[Message]) -> None:
    names = [c.name for m in history for c in m.tool_calls()]
    renumbered = ids_for_kimi(history)
    assert call_ids(renumbered) == [k2_id(name, i) for i, name in enumerate(names)]
    assert_results_follow_their_calls(history, renumbered)

    repaired = ids_for_kimi(history, mode="repair")
    matches = [K2_OUTPUT_ID.fullmatch(i) for i in call_ids(repaired)]
    assert all(m is not None for m in matches)
    assert [m.group(1) for m in matches if m is not None] == names
    assert len(set(call_ids(repaired))) == len(names)
    assert_results_follow_their_calls(history, repaired)
    # Repair keeps valid K2 IDs, so it leaves both of its own outputs alone.
    assert ids_for_kimi(repaired, mode="repair") == repaired
    assert ids_for_kimi(renumbered, mode="repair") == renumbered


def assert_claude_invariants(history: Sequence[Message]) -> None:
    out = ids_for_claude(history)
    ids = call_ids(out)
    assert all(is_neutral(i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert_results_follow_their_calls(history, out)
    assert ids_for_claude(out) == out


@PROPERTY
@given(histories())
def test_kimi_ids_hold_their_invariants(history: tuple[Message, ...]) -> None:
    snapshot = copy.deepcopy(history)
    assert_kimi_invariants(history)
    assert history == snapshot


@PROPERTY
@given(histories())
def test_claude_ids_hold_their_invariants(history: tuple[Message, ...]) -> None:
    snapshot = copy.deepcopy(history)
    assert_claude_invariants(history)
    assert history == snapshot


@PROPERTY
@given(histories(), st.lists(st.builds(ToolCall, id=RAW_IDS, name=NAMES, arguments=st.just({})), max_size=5))
def test_neutral_ids_are_valid_unique_and_new(history: tuple[Message, ...], new: list[ToolCall]) -> None:
    snapshot = copy.deepcopy((history, new))
    out = neutral_ids_for_new_calls(new, history)
    ids = [c.id for c in out]
    assert all(is_neutral(i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert not set(ids) & set(call_ids(history))
    assert [c.name for c in out] == [c.name for c in new]
    assert out == neutral_ids_for_new_calls(new, history)
    assert (history, new) == snapshot


@st.composite
def provider_ids(draw: st.DrawFn, provider: str, names: list[str], counter: int) -> list[str]:
    """IDs as a provider returns them: K2 with a conversation-wide or per-turn counter, Moonshot's
    prefixless ``name:idx``, Kimi Code's opaque ``tool_...``; Claude's ``toolu_...`` (few characters,
    so collisions happen)."""
    if provider == "claude":
        return [draw(st.from_regex(r"toolu_0[12][ab]{0,2}", fullmatch=True)) for _ in names]
    style = draw(st.sampled_from(["conversation", "per-turn", "prefixless", "opaque"]))
    if style == "opaque":
        return [draw(st.from_regex(r"tool_[a-c]{1,2}", fullmatch=True)) for _ in names]
    start = counter if style == "conversation" else 0
    shape = "{}:{}" if style == "prefixless" else "functions.{}:{}"
    return [shape.format(name, start + i) for i, name in enumerate(names)]


@PROPERTY
@given(st.data())
def test_multi_round_loop_keeps_every_strategy_sound(data: st.DataObject) -> None:
    history: tuple[Message, ...] = ()
    for _ in range(data.draw(st.integers(1, 6), label="rounds")):
        provider = data.draw(st.sampled_from(["kimi", "claude"]), label="provider")
        names = data.draw(st.lists(NAMES, max_size=3), label="names")
        raw = data.draw(provider_ids(provider, names, len(call_ids(history))), label="raw ids")
        returned = [ToolCall(id=i, name=n, arguments={"n": 1}) for i, n in zip(raw, names, strict=True)]

        neutral = neutral_ids_for_new_calls(returned, history)
        ids = [c.id for c in neutral]
        assert all(is_neutral(i) for i in ids)
        assert len(set(ids)) == len(ids)
        assert not set(ids) & set(call_ids(history))

        history = (*history, assistant(Text("working"), *neutral), user(*(result(i) for i in ids)))
        assert_kimi_invariants(history)
        assert_claude_invariants(history)
        # The host's history is already neutral and unique: Claude gets it unchanged.
        assert ids_for_claude(history) == history
