"""The Ollama native chat wire as pure functions: request JSON as Ollama documents it, answers and NDJSON
lines from hand-written transcripts of real wire shapes, error bodies (PROVIDER-FACTS.md §5, quirk
fixtures Q-ollama-26..28 and 44).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from colibri_router.conversation import (
    CompletionRequest,
    Message,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Usage,
)
from colibri_router.errors import InvalidRequestError, MalformedResponse
from colibri_router.providers import ProviderSpec, profile_for
from colibri_router.token_estimate import request_tokens
from colibri_router.toolcalls.assembly.base import StreamCutError, StreamErrorEvent
from colibri_router.wires.base import Dialect
from colibri_router.wires.ollama import (
    EMPTY_TOOL_RESULT,
    ERROR_RESULT_PREFIX,
    MIN_CONTEXT,
    OllamaCodec,
    make_codec,
    normalize_host,
)
from colibri_router.wires.ollama.assembly import OllamaStreamAssembler

SPEC = ProviderSpec(
    name="ollama",
    wire="ollama",
    base_url="http://127.0.0.1:11434",
    base_url_env="OLLAMA_HOST",
    key_envs=("OLLAMA_API_KEY",),
    key_required=False,
    local=True,
)
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolSpec(name="get_weather", input_schema=SCHEMA, description="Weather for a city")
TIME = ToolSpec(name="get_time", input_schema={"type": "object"})


def codec(model: str = "qwen3") -> OllamaCodec:
    return make_codec(Dialect(provider=SPEC, profile=profile_for(model)))


def user(*parts: Any) -> Message:
    return Message(role="user", parts=parts)


def assistant(*parts: Any) -> Message:
    return Message(role="assistant", parts=parts)


def request(*messages: Message, **fields: Any) -> CompletionRequest:
    fields.setdefault("model", "qwen3")
    fields.setdefault("max_tokens", 500)
    return CompletionRequest(messages=messages or (user(Text("hi")),), **fields)


def encode(*messages: Message, model: str = "qwen3", **fields: Any) -> Any:
    return codec(model).encode(request(*messages, model=model, **fields))


def line(**fields: Any) -> str:
    return json.dumps({"model": "qwen3", "created_at": "2026-08-01T10:00:00Z", **fields})


def assemble(*lines: str) -> dict[str, Any]:
    assembler = OllamaStreamAssembler()
    for data in lines:
        assembler.feed("", data)
    return assembler.result()


def decode(body: dict[str, Any], **fields: Any) -> Any:
    return codec().decode(body, request(**fields))


DONE = {"done": True, "done_reason": "stop", "prompt_eval_count": 26, "eval_count": 12, "total_duration": 5_000_000}


# --- endpoint ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "base"),
    [
        ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("gpu-box", "http://gpu-box:11434"),
        ("10.0.0.5:8080", "http://10.0.0.5:8080"),
        ("gpu-box/ollama", "http://gpu-box:11434/ollama"),
        ("[::1]", "http://[::1]:11434"),
        ("https://ollama.com", "https://ollama.com"),
        ("http://gpu-box/", "http://gpu-box"),
        (" localhost:11434 ", "http://localhost:11434"),
    ],
)
def test_ollama_host_may_be_bare_or_a_url(host: str, base: str) -> None:
    assert normalize_host(host) == base


def test_endpoint_posts_to_api_chat_and_sends_a_key_only_when_given() -> None:
    url, headers = codec().endpoint("gpu-box:11434", None, "qwen3")
    _, keyed = codec().endpoint("https://ollama.com", "ol-key", "gpt-oss:120b")

    assert url == "http://gpu-box:11434/api/chat"
    assert headers == {}
    assert keyed == {"authorization": "Bearer ol-key"}


# --- encode --------------------------------------------------------------------------------------------------


def test_encode_builds_the_documented_request_from_a_tool_loop() -> None:
    history = (
        user(Text("Weather in Paris?")),
        assistant(
            Thinking("I should call the tool."),
            ToolCall("call_1", "get_weather", {"city": "Paris"}),
            ToolCall("call_2", "get_time", {}),
        ),
        user(ToolResult("call_1", "sunny"), ToolResult("call_2", " ", is_error=True), Text("Thanks")),
    )

    encoded = encode(*history, system="Be brief.", tools=(WEATHER, TIME), temperature=0.5)

    assert encoded.body == {
        "model": "qwen3",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "thinking": "I should call the tool.",
                "tool_calls": [
                    {"id": "call_1", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                    {"id": "call_2", "function": {"name": "get_time", "arguments": {}}},
                ],
            },
            {"role": "tool", "content": "sunny", "tool_name": "get_weather", "tool_call_id": "call_1"},
            {
                "role": "tool",
                "content": ERROR_RESULT_PREFIX + EMPTY_TOOL_RESULT,
                "tool_name": "get_time",
                "tool_call_id": "call_2",
            },
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "get_weather", "description": "Weather for a city", "parameters": SCHEMA},
            },
            {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
        ],
        "options": {"num_ctx": MIN_CONTEXT, "num_predict": 500, "temperature": 0.5},
        "stream": True,
    }
    assert encoded.warnings == ()


def test_num_ctx_grows_with_the_request_and_never_goes_below_4096() -> None:
    # Q-ollama-truncation: a long prompt gets a window that holds it and the answer.
    long_prompt = "x" * 30_000

    small = encode(user(Text("hi"))).body["options"]["num_ctx"]
    large = encode(user(Text(long_prompt)), max_tokens=2000).body["options"]["num_ctx"]

    assert small == MIN_CONTEXT
    assert large == 10_000 + 2000


def test_num_ctx_is_the_one_request_estimate_tools_included() -> None:
    # The window asked of Ollama is sized by the same estimate a budget reserves (it errs high).
    prompt = user(Text("x" * 15_000))
    sized = request(prompt, tools=(WEATHER, TIME), max_tokens=1000)
    body = encode(prompt, tools=(WEATHER, TIME), max_tokens=1000).body
    assert body["options"]["num_ctx"] == request_tokens(sized) + 1000
    assert request_tokens(sized) > request_tokens(request(prompt))  # the tools' definitions count


def test_the_estimate_counts_every_part_of_the_prompt() -> None:
    history = (
        user(Text("a" * 30)),
        assistant(Thinking("b" * 30), ToolCall("c1", "f", {"k": "c" * 21})),
        user(ToolResult("c1", "d" * 30)),
    )
    base = request_tokens(request(*history))

    assert request_tokens(request(*history, system="e" * 300)) == base + 100
    assert base == (30 + 30 + len("f") + len(json.dumps({"k": "c" * 21})) + 30 + 2) // 3


@pytest.mark.parametrize(
    ("choice", "nudge"),
    [
        (ToolChoice("required"), "Answer by calling one of the available tools."),
        (ToolChoice("tool", "get_time"), "Answer by calling the tool `get_time`."),
    ],
)
def test_a_forced_tool_choice_becomes_a_user_nudge_with_a_warning(choice: ToolChoice, nudge: str) -> None:
    encoded = encode(user(Text("What time is it?")), tools=(WEATHER, TIME), tool_choice=choice)

    assert encoded.body["messages"][-1] == {"role": "user", "content": nudge}
    assert "tool_choice" not in encoded.body
    assert len(encoded.warnings) == 1
    assert "no tool_choice" in encoded.warnings[0]


def test_tool_choice_none_sends_no_tools() -> None:
    encoded = encode(user(Text("just chat")), tools=(WEATHER,), tool_choice=ToolChoice("none"))

    assert "tools" not in encoded.body
    assert encoded.warnings == ()


@pytest.mark.parametrize(
    ("model", "reasoning", "think", "warned"),
    [
        ("qwen3", None, None, False),
        ("qwen3", "off", False, False),
        ("qwen3", "high", True, False),
        ("qwen3", "low", True, True),
        ("deepseek-r1:14b", "medium", True, True),
        ("gpt-oss:20b", "low", "low", False),
        ("gpt-oss:120b-cloud", "high", "high", False),
        ("gpt-oss:20b", "off", "low", True),
        ("kimi-k2-thinking:cloud", "off", None, True),
    ],
)
def test_reasoning_maps_to_think(model: str, reasoning: Any, think: Any, warned: bool) -> None:
    encoded = encode(model=model, reasoning=reasoning)

    assert encoded.body.get("think") == think
    assert bool(encoded.warnings) is warned


def test_kimi_served_by_ollama_gets_k2_ids_and_its_tool_limit() -> None:
    history = (
        user(Text("go")),
        assistant(ToolCall("toolu_a", "get_time", {})),
        user(ToolResult("toolu_a", "now")),
    )

    messages = encode(*history, model="kimi-k2.6:cloud").body["messages"]

    assert messages[1]["tool_calls"][0]["id"] == "functions.get_time:0"
    assert messages[2]["tool_call_id"] == "functions.get_time:0"
    with pytest.raises(InvalidRequestError, match="at most 128 tools"):
        encode(model="kimi-k2.6:cloud", tools=tuple(ToolSpec(f"t{i}", {"type": "object"}) for i in range(129)))


def test_a_result_whose_call_is_unknown_goes_without_a_tool_name() -> None:
    messages = encode(user(ToolResult("ghost", "boo"))).body["messages"]

    assert messages == [{"role": "tool", "content": "boo", "tool_call_id": "ghost"}]


# --- decode --------------------------------------------------------------------------------------------------


def test_decode_reads_thinking_text_and_whole_calls_without_ids() -> None:
    # Q-ollama-no-id: servers before 0.12.10 send no id; arguments are an object, taken once.
    body = {
        "model": "qwen3",
        "message": {
            "role": "assistant",
            "content": "",
            "thinking": "The user wants weather.",
            "tool_calls": [{"function": {"index": 0, "name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        **DONE,
    }

    turn = decode(body)

    assert turn.parts == (Thinking("The user wants weather."), ToolCall("", "get_weather", {"city": "Paris"}))
    assert turn.stop_reason == "tool_use"
    assert turn.usage == Usage(prompt_tokens=26, completion_tokens=12)
    assert turn.model == "qwen3"


@pytest.mark.parametrize(("done_reason", "stop"), [("stop", "end_turn"), ("length", "max_tokens"), ("load", "load")])
def test_done_reasons_map_to_stop_reasons(done_reason: str, stop: str) -> None:
    body = {"message": {"role": "assistant", "content": "hi"}, **DONE, "done_reason": done_reason}

    assert decode(body).stop_reason == stop


def test_a_prompt_count_far_below_the_request_is_flagged() -> None:
    # Q-ollama-truncation
    big = (user(Text("x" * 60_000)),)
    body = {"message": {"role": "assistant", "content": "ok"}, **DONE, "prompt_eval_count": 2048}

    flagged = codec().decode(body, request(*big))
    plausible = codec().decode({**body, "prompt_eval_count": 15_000}, request(*big))
    small = codec().decode(body, request(user(Text("x" * 300))))

    assert len(flagged.warnings) == 1
    assert "truncated" in flagged.warnings[0]
    assert plausible.warnings == ()
    assert small.warnings == ()


def test_a_body_without_a_message_is_malformed() -> None:
    with pytest.raises(MalformedResponse):
        decode({"done": True})


# --- stream assembly -----------------------------------------------------------------------------------------


def test_ndjson_lines_rebuild_the_chat_response() -> None:
    # Q-ollama-think-default: thinking arrives although `think` was not sent; it is thinking, not text.
    body = assemble(
        line(message={"role": "assistant", "content": "", "thinking": "Hmm, "}, done=False),
        line(message={"role": "assistant", "content": "", "thinking": "easy."}, done=False),
        line(message={"role": "assistant", "content": "Four"}, done=False),
        line(message={"role": "assistant", "content": "."}, done=False),
        line(message={"role": "assistant", "content": ""}, **DONE),
    )

    assert body == {
        "model": "qwen3",
        "created_at": "2026-08-01T10:00:00Z",
        **DONE,
        "message": {"role": "assistant", "content": "Four.", "thinking": "Hmm, easy."},
    }
    turn = decode(body)
    assert turn.parts == (Thinking("Hmm, easy."), Text("Four."))
    assert turn.stop_reason == "end_turn"


def test_whole_calls_in_one_line_are_kept_once() -> None:
    # Q-whole-call-chunk / Q-ollama-no-id: one call per line, arguments never doubled.
    calls = [
        {"id": "call_x1y2z3w4", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Oslo"}}},
        {"function": {"index": 1, "name": "get_time", "arguments": {}}},
    ]
    body = assemble(
        line(message={"role": "assistant", "content": "", "tool_calls": calls[:1]}, done=False),
        line(message={"role": "assistant", "content": "", "tool_calls": calls[1:]}, done=False),
        line(message={"role": "assistant", "content": ""}, **DONE),
    )

    assert decode(body).tool_calls() == (
        ToolCall("call_x1y2z3w4", "get_weather", {"city": "Oslo"}),
        ToolCall("", "get_time", {}),
    )


def test_an_error_line_after_a_200_is_an_error_event() -> None:
    # Q-ollama-ndjson-error
    assembler = OllamaStreamAssembler()
    assembler.feed("", line(message={"role": "assistant", "content": "Par"}, done=False))

    with pytest.raises(StreamErrorEvent) as caught:
        assembler.feed("", json.dumps({"error": "an error was encountered while running the model"}))

    assert caught.value.message == "an error was encountered while running the model"
    assert assembler.output_chars == 3


def test_a_stream_without_its_done_line_is_a_cut() -> None:
    assembler = OllamaStreamAssembler()
    assembler.feed("", line(message={"role": "assistant", "content": "Par"}, done=False))

    with pytest.raises(StreamCutError, match="done: true"):
        assembler.result()


def test_progress_labels() -> None:
    assembler = OllamaStreamAssembler()
    lines = [
        line(message={"role": "assistant", "content": "", "thinking": "t"}, done=False),
        line(message={"role": "assistant", "content": "a"}, done=False),
        line(message={"role": "assistant", "content": "b"}, done=False),
        line(
            message={"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
            done=False,
        ),
    ]

    assert [assembler.feed("", data) for data in lines] == ["thinking", "text", None, "tool_call f"]
    assert assembler.started


@settings(max_examples=100, deadline=None)
@given(
    content=st.text(max_size=40),
    thinking=st.text(max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=6),
)
def test_any_split_of_the_content_over_lines_gives_the_same_answer(
    content: str, thinking: str, cuts: list[int]
) -> None:
    def pieces(value: str) -> list[str]:
        bounds = sorted({0, len(value), *(cut % (len(value) + 1) for cut in cuts)})
        return [value[a:b] for a, b in itertools.pairwise(bounds)]

    lines = [
        *(line(message={"role": "assistant", "content": "", "thinking": p}, done=False) for p in pieces(thinking)),
        *(line(message={"role": "assistant", "content": p}, done=False) for p in pieces(content)),
        line(message={"role": "assistant", "content": ""}, **DONE),
    ]
    whole = {"model": "qwen3", "message": {"role": "assistant", "content": content, "thinking": thinking}, **DONE}

    assert decode(assemble(*lines)) == decode(whole)


# --- mixed histories -----------------------------------------------------------------------------------------


@st.composite
def _tool_loop(draw: st.DrawFn) -> tuple[Message, ...]:
    """A tool loop whose assistant turns may come from any provider, every call answered."""
    messages: list[Message] = [user(Text("start"))]
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        parts: list[Any] = []
        if draw(st.booleans()):
            parts.append(Thinking(draw(st.text(max_size=8)), signature=draw(st.none() | st.just("claude-sig"))))
        if draw(st.booleans()):
            parts.append(Text(draw(st.text(max_size=8))))
        calls = []
        for _ in range(draw(st.integers(0, 3))):
            counter += 1
            calls.append(
                ToolCall(f"toolu_{counter}", draw(st.sampled_from(["get_time", "mcp.fs.read"])), {"n": counter})
            )
        messages.append(assistant(*parts, *calls))
        results = [ToolResult(c.id, draw(st.text(max_size=8)), is_error=draw(st.booleans())) for c in calls]
        tail = [Text(draw(st.text(min_size=1, max_size=8)))] if draw(st.booleans()) or not calls else []
        messages.append(user(*draw(st.permutations(results)), *tail))
    return tuple(messages)


@settings(max_examples=150, deadline=None)
@given(history=_tool_loop(), model=st.sampled_from(["qwen3", "kimi-k2.6:cloud", "mistral-small3.2"]))
def test_mixed_histories_encode_to_a_valid_ollama_request(history: tuple[Message, ...], model: str) -> None:
    messages = encode(*history, model=model, tools=(TIME,)).body["messages"]

    open_calls: dict[str, str] = {}
    for message in messages:
        if message["role"] == "tool":
            assert open_calls.pop(message["tool_call_id"]) == message["tool_name"]
            assert message["content"]
            continue
        assert not open_calls, "every call is answered right after the turn that made it"
        if message["role"] == "assistant":
            assert message["content"] or message.get("tool_calls")
            for call in message.get("tool_calls", []):
                assert isinstance(call["function"]["arguments"], dict)
                open_calls[call["id"]] = call["function"]["name"]
        else:
            assert message["role"] == "user" and message["content"]


# --- read_error ----------------------------------------------------------------------------------------------


def test_a_missing_model_says_which_and_how_to_pull_it() -> None:
    error = codec().read_error(404, {}, b'{"error":"model \'llama3.2\' not found"}')

    assert error.message == "model 'llama3.2' not found on the Ollama server: pull it first with `ollama pull llama3.2`"
    assert error.error_type == "model_not_found"


@pytest.mark.parametrize(
    ("status", "raw", "fragment"),
    [
        (400, b'{"error":"\\"llama3.2\\" does not support thinking"}', "reasoning: off"),
        (400, b'{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}', "without tools"),
        (401, b'{"error":"unauthorized","signin_url":"https://ollama.com/connect?name=x&key=y"}', "ollama signin"),
    ],
)
def test_failures_marked_only_in_text_get_a_hint(status: int, raw: bytes, fragment: str) -> None:
    error = codec().read_error(status, {}, raw)

    assert fragment in error.message
    assert "connect?name" not in error.message


def test_other_errors_pass_their_text_and_retry_hint() -> None:
    error = codec().read_error(503, {"retry-after": "2"}, b'{"error":"server busy, please try again"}')

    assert (error.message, error.retry_after_s, error.retryable) == ("server busy, please try again", 2.0, None)


def test_a_body_that_is_not_json_is_reported_as_text() -> None:
    assert codec().read_error(502, {}, b"Bad Gateway").message == "Bad Gateway"
