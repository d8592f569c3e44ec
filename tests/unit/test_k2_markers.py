"""K2 marker text → tool calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from colibri_router.toolcalls.k2_markers import MarkerCall, contains_k2_markers, parse_k2_markers

SECTION_BEGIN = "<|tool_calls_section_begin|>"
SECTION_END = "<|tool_calls_section_end|>"
CALL_BEGIN = "<|tool_call_begin|>"
ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
CALL_END = "<|tool_call_end|>"


def marker_call(call_id: str, arguments: str) -> str:
    return f"{CALL_BEGIN}{call_id}{ARGUMENT_BEGIN}{arguments}{CALL_END}"


def section(*calls: str) -> str:
    return SECTION_BEGIN + "".join(calls) + SECTION_END


def test_text_without_markers_comes_back_unchanged() -> None:
    text = "Paris is sunny today.  \n"
    assert not contains_k2_markers(text)
    assert parse_k2_markers(text) == (text, ())


def test_one_call() -> None:
    text = section(marker_call("functions.get_weather:0", '{"city": "Paris"}'))
    assert contains_k2_markers(text)
    assert parse_k2_markers(text) == (
        "",
        (MarkerCall("functions.get_weather:0", "get_weather", '{"city": "Paris"}'),),
    )


def test_multiple_calls_and_leading_text() -> None:
    text = "Let me look.\n\n" + section(
        marker_call("functions.read_file:0", '{"path": "a.py"}'),
        marker_call("functions.glob:1", '{"pattern": "*.py"}'),
    )
    assert parse_k2_markers(text) == (
        "Let me look.",
        (
            MarkerCall("functions.read_file:0", "read_file", '{"path": "a.py"}'),
            MarkerCall("functions.glob:1", "glob", '{"pattern": "*.py"}'),
        ),
    )


def test_pretty_printed_arguments_are_kept_verbatim() -> None:
    arguments = '{\n  "path": "a.py",\n  "lines": [\n    1,\n    2\n  ]\n}'
    text = section(marker_call("functions.read_file:0", f"\n{arguments}\n"))
    _, calls = parse_k2_markers(text)
    assert calls[0].arguments == arguments


def test_arguments_may_contain_angle_brackets() -> None:
    arguments = '{"html": "<div class=\\"x\\">a > b</div>", "cmp": "1<2"}'
    _, calls = parse_k2_markers(section(marker_call("functions.render:0", arguments)))
    assert calls[0].arguments == arguments


@pytest.mark.parametrize(
    ("call_id", "name"),
    [
        ("functions.mcp.fs.read:3", "mcp.fs.read"),
        ("functions.list-files:0", "list-files"),
        ("functions.get_weather_now:12", "get_weather_now"),
        ("search:0", "search"),
        ("mcp.fs.read:2", "mcp.fs.read"),
        ("functions.a:b:4", "a:b"),
        ("functions.search", "search"),
        ("tool_abc123", "tool_abc123"),
    ],
)
def test_names_keep_dots_hyphens_and_underscores(call_id: str, name: str) -> None:
    _, calls = parse_k2_markers(section(marker_call(call_id, "{}")))
    assert calls == (MarkerCall(call_id, name, "{}"),)


def test_missing_section_end_parses_what_is_there() -> None:
    text = "Checking.\n" + SECTION_BEGIN + marker_call("functions.a:0", '{"x": 1}')
    assert parse_k2_markers(text) == ("Checking.", (MarkerCall("functions.a:0", "a", '{"x": 1}'),))


def test_last_call_cut_off_takes_arguments_to_the_end_of_the_text() -> None:
    text = (
        SECTION_BEGIN
        + marker_call("functions.a:0", "{}")
        + CALL_BEGIN
        + "functions.b:1"
        + ARGUMENT_BEGIN
        + '{"q": "par'
    )
    _, calls = parse_k2_markers(text)
    assert calls == (MarkerCall("functions.a:0", "a", "{}"), MarkerCall("functions.b:1", "b", '{"q": "par'))


def test_a_call_cut_off_inside_its_id_is_dropped() -> None:
    # The ID may be truncated ("functions.read_fi"), which would name a tool that does not exist.
    text = SECTION_BEGIN + marker_call("functions.a:0", "{}") + CALL_BEGIN + "functions.read_fi"
    assert parse_k2_markers(text) == ("", (MarkerCall("functions.a:0", "a", "{}"),))


def test_a_complete_call_without_arguments_has_empty_arguments() -> None:
    text = section(CALL_BEGIN + "functions.now:0" + CALL_END)
    assert parse_k2_markers(text)[1] == (MarkerCall("functions.now:0", "now", ""),)


def test_whitespace_between_markers_and_around_ids() -> None:
    text = (
        "Sure.\n"
        f"{SECTION_BEGIN}\n  {CALL_BEGIN} \n functions.a:0 \n{ARGUMENT_BEGIN}\n"
        '  {"x": 1}  \n'
        f"{CALL_END}\n\n  {CALL_BEGIN}functions.b:1\t{ARGUMENT_BEGIN} {{}} {CALL_END}\n{SECTION_END}\n"
    )
    assert parse_k2_markers(text) == (
        "Sure.",
        (MarkerCall("functions.a:0", "a", '{"x": 1}'), MarkerCall("functions.b:1", "b", "{}")),
    )


def test_singular_section_markers() -> None:
    text = "<|tool_call_section_begin|>" + marker_call("functions.a:0", "{}") + "<|tool_call_section_end|>"
    assert contains_k2_markers(text)
    assert parse_k2_markers(text) == ("", (MarkerCall("functions.a:0", "a", "{}"),))


def test_calls_without_a_section_marker() -> None:
    text = "Hm.\n" + marker_call("functions.a:0", "{}")
    assert contains_k2_markers(text)
    assert parse_k2_markers(text) == ("Hm.", (MarkerCall("functions.a:0", "a", "{}"),))


def test_text_after_the_section_is_kept() -> None:
    text = "Before.\n" + section(marker_call("functions.a:0", "{}")) + "\nAfter.\n"
    assert parse_k2_markers(text) == ("Before.\n\nAfter.", (MarkerCall("functions.a:0", "a", "{}"),))


def test_an_empty_section_is_removed() -> None:
    assert parse_k2_markers("Done. " + SECTION_BEGIN + SECTION_END) == ("Done.", ())


@pytest.mark.parametrize(
    "text",
    [
        "<|tool_call_end|> stray",
        "<|tool_call",
        "a <|tool_calls_section_end|>",
        "<|tool_call_argument_begin|>{}",
    ],
)
def test_stray_markers_without_a_section_are_left_alone(text: str) -> None:
    assert not contains_k2_markers(text)
    assert parse_k2_markers(text) == (text, ())


# Marker soup: every marker and its fragments, in any order, cut anywhere.
MARKER_SOUP = st.lists(
    st.sampled_from(
        [
            *"ab{}:. \n<>|_",
            SECTION_BEGIN,
            SECTION_END,
            "<|tool_call_section_begin|>",
            CALL_BEGIN,
            ARGUMENT_BEGIN,
            CALL_END,
            "functions.",
            "<|tool_call",
        ]
    ),
    max_size=30,
).map("".join)


@given(MARKER_SOUP)
def test_parsing_never_raises(text: str) -> None:
    remaining, calls = parse_k2_markers(text)
    assert all(c.id and c.id == c.id.strip() for c in calls)
    assert contains_k2_markers(text) or (remaining, calls) == (text, ())


# --- round trip ----------------------------------------------------------------------------------

NAMES = st.from_regex(r"[a-zA-Z0-9_.-]{1,20}", fullmatch=True) | st.sampled_from(
    ["mcp.fs.read", "list-files", "get_weather", "a.b-c_d", "functions.x"]
)
# No "|" in strings: "<|...|>" inside an argument would be a marker, which K2 cannot emit there either.
JSON_TEXT = st.text(alphabet=st.characters(exclude_characters="|"), max_size=12)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_TEXT, inner, max_size=3),
    max_leaves=8,
)
GAPS = st.sampled_from(["", " ", "\n", "\n\n  ", "\t"])


@st.composite
def marker_calls(draw: st.DrawFn) -> tuple[str, str, dict[str, Any], str]:
    """One call as K2 renders it: (id, name, arguments, rendered text)."""
    name = draw(NAMES)
    prefixed = draw(st.booleans()) or name.startswith("functions.")  # else "functions.x:0" is ambiguous
    call_id = f"{'functions.' if prefixed else ''}{name}:{draw(st.integers(0, 10_000))}"
    arguments = draw(st.dictionaries(JSON_TEXT, JSON_VALUES, max_size=4))
    rendered_arguments = json.dumps(
        arguments, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans())
    )
    gap = draw(GAPS)
    rendered = f"{CALL_BEGIN}{gap}{call_id}{gap}{ARGUMENT_BEGIN}{gap}{rendered_arguments}{gap}{CALL_END}"
    return call_id, name, arguments, rendered


@settings(suppress_health_check=[HealthCheck.too_slow])  # cold .hypothesis cache: unicode tables take ~2 s
@given(
    calls=st.lists(marker_calls(), min_size=1, max_size=4),
    leading=st.text(max_size=30).filter(lambda t: "<|tool_call" not in t),
    gap=GAPS,
    plural=st.booleans(),
    ended=st.booleans(),
)
def test_rendered_calls_parse_back(
    calls: list[tuple[str, str, dict[str, Any], str]], leading: str, gap: str, plural: bool, ended: bool
) -> None:
    word = "calls" if plural else "call"
    text = leading + gap + f"<|tool_{word}_section_begin|>" + gap + gap.join(c[3] for c in calls)
    if ended:
        text += gap + f"<|tool_{word}_section_end|>"

    remaining, parsed = parse_k2_markers(text)

    assert remaining == (leading + gap).rstrip()
    assert [(p.id, p.name) for p in parsed] == [(c[0], c[1]) for c in calls]
    assert [json.loads(p.arguments) for p in parsed] == [c[2] for c in calls]
