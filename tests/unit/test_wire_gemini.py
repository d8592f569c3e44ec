"""The Gemini wire as pure functions: request JSON as Gemini documents it, answers and streams from
hand-written transcripts of real wire shapes, error bodies as Gemini sends them (PROVIDER-FACTS.md §2,
quirk fixtures Q-gemini-13..23 and 46).
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
    ProviderState,
    Text,
    Thinking,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Usage,
)
from colibri_router.errors import ApiError, MalformedResponse
from colibri_router.providers import ProviderSpec, profile_for
from colibri_router.toolcalls.assembly.base import StreamCutError, StreamErrorEvent
from colibri_router.wires.base import Dialect
from colibri_router.wires.gemini import GeminiCodec, make_codec
from colibri_router.wires.gemini.assembly import GeminiStreamAssembler
from colibri_router.wires.gemini.contents import MISSING_RESULT, OPENING_TURN
from colibri_router.wires.gemini.state import SKIP_SIGNATURE

SPEC = ProviderSpec(
    name="gemini",
    wire="gemini",
    base_url="https://generativelanguage.googleapis.com/v1beta",
    base_url_env="GEMINI_BASE_URL",
    key_envs=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    headers={"x-extra": "1"},
)
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "when": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    "required": ["city"],
    "$defs": {"unused": {"type": "integer"}},
}
WEATHER = ToolSpec(name="get_weather", input_schema=SCHEMA, description="Weather for a city")
TIME = ToolSpec(name="get_time", input_schema={"type": "object"})


def codec(model: str = "gemini-2.5-flash") -> GeminiCodec:
    return make_codec(Dialect(provider=SPEC, profile=profile_for(model)))


def gemini(**values: str) -> ProviderState:
    return ProviderState("gemini", values)


def user(*parts: Any) -> Message:
    return Message(role="user", parts=parts)


def assistant(*parts: Any) -> Message:
    return Message(role="assistant", parts=parts)


def request(*messages: Message, **fields: Any) -> CompletionRequest:
    fields.setdefault("model", "gemini-2.0-flash")  # no thinking control: no thinkingConfig to read past
    fields.setdefault("max_tokens", 1000)
    return CompletionRequest(messages=messages or (user(Text("hi")),), **fields)


def contents(*messages: Message) -> list[dict[str, Any]]:
    return codec().encode(request(*messages)).body["contents"]


def call_part(name: str, args: dict[str, Any], **extra: Any) -> dict[str, Any]:
    function_call = (
        {"id": extra.pop("id"), "name": name, "args": args} if "id" in extra else {"name": name, "args": args}
    )
    return {"functionCall": function_call, **extra}


def body(*parts: dict[str, Any], finish: str | None = "STOP", **top: Any) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], **top}


def decode(answer: dict[str, Any], model: str = "gemini-2.5-flash") -> Any:
    return codec(model).decode(answer, request(model=model))


def assemble(*events: dict[str, Any] | str) -> dict[str, Any]:
    assembler = GeminiStreamAssembler()
    for event in events:
        assembler.feed("message", event if isinstance(event, str) else json.dumps(event))
    return assembler.result()


# --- endpoint ------------------------------------------------------------------------------------------------


def test_endpoint_streams_with_alt_sse_and_sends_the_key_in_its_header() -> None:
    url, headers = codec().endpoint(SPEC.base_url, "AIza-key", "gemini-2.5-flash")

    assert (
        url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert headers == {"x-extra": "1", "x-goog-api-key": "AIza-key"}


@pytest.mark.parametrize(
    ("model", "path"),
    [("models/gemini-2.5-pro", "models/gemini-2.5-pro"), ("tunedModels/my-tune", "tunedModels/my-tune")],
)
def test_endpoint_keeps_a_model_name_that_names_its_collection(model: str, path: str) -> None:
    url, _ = codec().endpoint("http://127.0.0.1:9", None, model)

    assert url == f"http://127.0.0.1:9/{path}:streamGenerateContent?alt=sse"


def test_endpoint_without_a_key_sends_no_key_header() -> None:
    _, headers = codec().endpoint("http://127.0.0.1:9", None, "gemini-2.5-flash")

    assert "x-goog-api-key" not in headers


# --- encode: the request -------------------------------------------------------------------------------------


def test_encode_builds_the_documented_request() -> None:
    encoded = codec().encode(
        request(
            user(Text("Weather in Paris?")),
            system="Be brief.",
            tools=(WEATHER, TIME),
            tool_choice=ToolChoice("auto"),
            temperature=0.3,
        )
    )

    assert encoded.body == {
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "get_weather", "description": "Weather for a city", "parametersJsonSchema": SCHEMA},
                    {"name": "get_time", "parametersJsonSchema": {"type": "object"}},
                ]
            }
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"maxOutputTokens": 1000, "temperature": 0.3},
    }
    assert encoded.warnings == ()


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        (ToolChoice("auto"), {"mode": "AUTO"}),
        (ToolChoice("none"), {"mode": "NONE"}),
        (ToolChoice("required"), {"mode": "ANY"}),
        (ToolChoice("tool", "get_time"), {"mode": "ANY", "allowedFunctionNames": ["get_time"]}),
    ],
)
def test_encode_maps_tool_choice_to_function_calling_config(choice: ToolChoice, config: dict[str, Any]) -> None:
    encoded = codec().encode(request(tools=(WEATHER, TIME), tool_choice=choice))

    assert encoded.body["toolConfig"] == {"functionCallingConfig": config}


def test_encode_without_tools_or_choice_sends_neither_tools_nor_tool_config() -> None:
    assert "toolConfig" not in codec().encode(request(tools=(WEATHER,))).body
    bare = codec().encode(request(tool_choice=ToolChoice("required"))).body
    assert "tools" not in bare
    assert "toolConfig" not in bare


def test_encode_leaves_the_callers_schema_untouched() -> None:
    schema = json.loads(json.dumps(SCHEMA))

    codec().encode(request(tools=(ToolSpec("get_weather", schema),)))

    assert schema == SCHEMA


# --- encode: history, ids and signatures ---------------------------------------------------------------------


def test_gemini3_history_replays_ids_and_signatures_in_their_own_parts() -> None:
    # Q-gemini-signature, Q-gemini-parallel-sig, Q-gemini-ids: two parallel calls, only the first signed, a
    # signature-only empty text part after them; both responses in one user turn, ids echoed.
    history = (
        user(Text("Weather in Paris and the time?")),
        assistant(
            ToolCall("c1", "get_weather", {"city": "Paris"}, state=gemini(id="gid-1", thought_signature="SIG")),
            ToolCall("c2", "get_time", {}, state=gemini(id="gid-2")),
            Text("", state=gemini(thought_signature="SIG2")),
        ),
        user(ToolResult("c2", "12:00"), ToolResult("c1", "sunny")),
    )

    assert contents(*history) == [
        {"role": "user", "parts": [{"text": "Weather in Paris and the time?"}]},
        {
            "role": "model",
            "parts": [
                call_part("get_weather", {"city": "Paris"}, id="gid-1", thoughtSignature="SIG"),
                call_part("get_time", {}, id="gid-2"),
                {"text": "", "thoughtSignature": "SIG2"},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": "gid-1", "name": "get_weather", "response": {"output": "sunny"}}},
                {"functionResponse": {"id": "gid-2", "name": "get_time", "response": {"output": "12:00"}}},
            ],
        },
    ]


def test_gemini2_calls_without_an_id_put_no_id_on_the_wire() -> None:
    # Q-gemini-ids: Gemini 2.x issued no id, so neither the call nor its response carries one; the
    # neutral host-facing id never reaches Gemini.
    history = (
        user(Text("time?")),
        assistant(ToolCall("toolu_neutral", "get_time", {}, state=gemini(thought_signature="S"))),
        user(ToolResult("toolu_neutral", "12:00")),
    )

    model_turn, responses = contents(*history)[1:]

    assert model_turn["parts"] == [call_part("get_time", {}, thoughtSignature="S")]
    assert responses["parts"] == [{"functionResponse": {"name": "get_time", "response": {"output": "12:00"}}}]


def test_foreign_history_gets_the_skip_signature_on_the_first_call_of_each_model_turn() -> None:
    # Q-gemini-signature: calls Gemini did not make (Claude's, with its own signed thinking) carry no
    # Gemini signature; each turn's first call gets the documented skip value, later calls nothing.
    history = (
        user(Text("go")),
        assistant(
            Thinking("let me check", signature="claude-sig"),
            ToolCall("toolu_1", "get_weather", {"city": "Oslo"}),
            ToolCall("toolu_2", "get_time", {}),
        ),
        user(ToolResult("toolu_1", "rain"), ToolResult("toolu_2", "09:00")),
        assistant(ToolCall("toolu_3", "get_time", {})),
        user(ToolResult("toolu_3", "09:01")),
    )

    encoded = contents(*history)

    assert encoded[1]["parts"] == [
        call_part("get_weather", {"city": "Oslo"}, thoughtSignature=SKIP_SIGNATURE),
        call_part("get_time", {}),
    ]
    assert encoded[3]["parts"] == [call_part("get_time", {}, thoughtSignature=SKIP_SIGNATURE)]


def test_other_wires_state_never_reaches_gemini() -> None:
    state = ProviderState("cohere", {"id": "not-gemini", "thought_signature": "not-gemini"})
    history = (
        user(Text("go")),
        assistant(Text("plan", state=state), ToolCall("c1", "get_time", {}, state=state)),
        user(ToolResult("c1", "now")),
    )

    encoded = json.dumps(contents(*history))

    assert "not-gemini" not in encoded


def test_only_geminis_own_signed_thoughts_are_replayed() -> None:
    history = (
        user(Text("q")),
        assistant(
            Thinking("gemini thought", state=gemini(thought_signature="TS")),
            Thinking("kimi reasoning"),
            Thinking("claude thinking", signature="claude-sig"),
            Text("answer"),
        ),
        user(Text("more")),
    )

    assert contents(*history)[1]["parts"] == [
        {"text": "gemini thought", "thought": True, "thoughtSignature": "TS"},
        {"text": "answer"},
    ]


def test_no_empty_text_parts_and_no_empty_turns() -> None:
    # Q-gemini-empty-part: empty unsigned text is dropped; a turn left empty disappears and its
    # neighbours (two user turns) become one.
    history = (
        user(Text("first"), Text("")),
        assistant(Text(""), Thinking("foreign reasoning")),
        user(Text("second")),
    )

    assert contents(*history) == [{"role": "user", "parts": [{"text": "first"}, {"text": "second"}]}]


def test_consecutive_turns_of_one_role_are_one_content() -> None:
    history = (
        user(Text("a")),
        user(Text("b")),
        assistant(Text("thinking aloud")),
        assistant(ToolCall("c1", "get_time", {})),
        user(ToolResult("c1", "now")),
    )

    assert [(c["role"], len(c["parts"])) for c in contents(*history)] == [("user", 2), ("model", 2), ("user", 1)]


def test_results_come_first_in_call_order_and_errors_use_the_error_key() -> None:
    history = (
        user(Text("go")),
        assistant(ToolCall("c1", "get_weather", {"city": "Rome"}), ToolCall("c2", "get_time", {})),
        user(Text("and hurry"), ToolResult("c2", "boom", is_error=True), ToolResult("c1", "hot")),
    )

    assert contents(*history)[2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"output": "hot"}}},
        {"functionResponse": {"name": "get_time", "response": {"error": "boom"}}},
        {"text": "and hurry"},
    ]


def test_a_missing_result_is_sent_as_an_error_result_with_a_warning() -> None:
    history = (
        user(Text("go")),
        assistant(ToolCall("c1", "get_weather", {}), ToolCall("c2", "get_time", {})),
        user(ToolResult("c1", "ok")),
    )

    encoded = codec().encode(request(*history))

    assert encoded.body["contents"][2]["parts"][1] == {
        "functionResponse": {"name": "get_time", "response": {"error": MISSING_RESULT}}
    }
    assert any("'get_time'" in warning for warning in encoded.warnings)


def test_a_result_that_answers_no_call_of_the_turn_before_goes_as_text() -> None:
    history = (
        user(Text("go")),
        assistant(ToolCall("c1", "get_time", {})),
        user(ToolResult("c1", "now")),
        assistant(Text("done")),
        user(ToolResult("c1", "late echo"), Text("thanks")),
    )

    encoded = codec().encode(request(*history))

    assert encoded.body["contents"][4]["parts"] == [{"text": "[result of tool call c1] late echo"}, {"text": "thanks"}]
    assert any("answers no call" in warning for warning in encoded.warnings)


def test_a_trailing_call_turn_gets_its_responses() -> None:
    encoded = contents(user(Text("go")), assistant(ToolCall("c1", "get_time", {})))

    assert encoded[-1] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "get_time", "response": {"error": MISSING_RESULT}}}],
    }


def test_a_history_opening_with_calls_gets_a_user_turn_first() -> None:
    encoded = codec().encode(request(assistant(ToolCall("c1", "get_time", {})), user(ToolResult("c1", "now"))))

    assert encoded.body["contents"][0] == {"role": "user", "parts": [{"text": OPENING_TURN}]}
    assert encoded.body["contents"][1]["role"] == "model"
    assert len(encoded.warnings) == 1


# --- encode: reasoning ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "reasoning", "config", "warned"),
    [
        ("gemini-2.5-flash", None, {"includeThoughts": True}, False),
        ("gemini-2.5-flash", "off", {"thinkingBudget": 0}, False),
        ("gemini-2.5-flash", "low", {"includeThoughts": True, "thinkingBudget": 1024}, False),
        ("gemini-2.5-flash", "medium", {"includeThoughts": True, "thinkingBudget": 4096}, False),
        ("gemini-2.5-flash", "high", {"includeThoughts": True, "thinkingBudget": 16384}, False),
        ("gemini-2.5-flash-lite", "off", {"thinkingBudget": 0}, False),
        ("gemini-2.5-pro", "high", {"includeThoughts": True, "thinkingBudget": 16384}, False),
        ("gemini-2.5-pro", "off", {"includeThoughts": True, "thinkingBudget": 128}, True),
        ("gemini-3-pro-preview", "low", {"includeThoughts": True, "thinkingLevel": "LOW"}, False),
        ("gemini-3-pro-preview", "medium", {"includeThoughts": True, "thinkingLevel": "HIGH"}, True),
        ("gemini-3-pro-preview", "off", {"includeThoughts": True, "thinkingLevel": "LOW"}, True),
        ("gemini-3.1-pro-preview", "medium", {"includeThoughts": True, "thinkingLevel": "MEDIUM"}, False),
        ("gemini-3-flash-preview", "off", {"includeThoughts": True, "thinkingLevel": "MINIMAL"}, True),
        ("gemini-3.5-flash", "high", {"includeThoughts": True, "thinkingLevel": "HIGH"}, False),
        ("gemini-3.7-flash", "off", {"includeThoughts": True, "thinkingLevel": "LOW"}, True),
        ("gemini-3.7-flash-lite", "off", {"includeThoughts": True, "thinkingLevel": "MINIMAL"}, True),
        ("models/gemini-3-flash-preview", None, {"includeThoughts": True}, False),
        ("gemini-2.0-flash", None, None, False),
        ("gemini-2.0-flash", "high", None, True),
    ],
)
def test_reasoning_maps_to_thinking_config_by_model_family(
    model: str, reasoning: Any, config: dict[str, Any] | None, warned: bool
) -> None:
    encoded = codec(model).encode(request(model=model, reasoning=reasoning))

    assert encoded.body["generationConfig"].get("thinkingConfig") == config
    assert bool(encoded.warnings) is warned


def test_a_reasoning_warning_says_what_was_sent() -> None:
    encoded = codec("gemini-3-pro-preview").encode(request(model="gemini-3-pro-preview", reasoning="off"))

    assert encoded.warnings == (
        "gemini-3-pro-preview cannot switch thinking off: sent thinkingLevel LOW, the lowest it takes",
    )


# --- decode --------------------------------------------------------------------------------------------------


def test_decode_reads_text_thoughts_calls_and_their_state() -> None:
    answer = body(
        {"text": "Let me think", "thought": True},
        {"text": "Checking.", "thoughtSignature": "T1"},
        call_part("get_weather", {"city": "Paris"}, id="gid-1", thoughtSignature="SIG"),
        call_part("get_time", {}),
        modelVersion="gemini-3-flash-preview",
        usageMetadata={
            "promptTokenCount": 100,
            "cachedContentTokenCount": 40,
            "candidatesTokenCount": 20,
            "thoughtsTokenCount": 30,
            "toolUsePromptTokenCount": 5,
            "totalTokenCount": 155,
        },
    )

    turn = decode(answer)

    assert turn.parts == (
        Thinking("Let me think"),
        Text("Checking.", state=gemini(thought_signature="T1")),
        ToolCall("gid-1", "get_weather", {"city": "Paris"}, state=gemini(id="gid-1", thought_signature="SIG")),
        ToolCall("", "get_time", {}),
    )
    assert turn.stop_reason == "tool_use"  # Q-gemini-stop-with-call
    assert turn.model == "gemini-3-flash-preview"
    assert turn.usage == Usage(prompt_tokens=105, completion_tokens=50, cached_tokens=40, reasoning_tokens=30)


def test_decoded_state_round_trips_through_the_host_and_back_to_gemini() -> None:
    # What Gemini issued reaches the next request unchanged, via the host-facing JSON of the state.
    answer = body(
        call_part("get_time", {}, id="gid-9", thoughtSignature="SIG9"),
        {"text": "", "thoughtSignature": "SIG10"},
    )
    turn = decode(answer)
    replayed = tuple(
        ToolCall("neutral_1", p.name, p.arguments, state=ProviderState.from_json(p.state.to_json()))
        if isinstance(p, ToolCall) and p.state is not None
        else p
        for p in turn.parts
    )

    encoded = contents(user(Text("time?")), assistant(*replayed), user(ToolResult("neutral_1", "now")))

    assert encoded[1]["parts"] == answer["candidates"][0]["content"]["parts"]
    assert encoded[2]["parts"][0]["functionResponse"]["id"] == "gid-9"


@pytest.mark.parametrize(
    ("finish", "stop"),
    [
        ("STOP", "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "refusal"),
        ("RECITATION", "refusal"),
        ("BLOCKLIST", "refusal"),
        ("PROHIBITED_CONTENT", "refusal"),
        ("SPII", "refusal"),
        ("OTHER", "OTHER"),
    ],
)
def test_finish_reasons_map_to_stop_reasons(finish: str, stop: str) -> None:
    assert decode(body({"text": "x"}, finish=finish)).stop_reason == stop


def test_a_filtered_candidate_without_content_is_a_refusal_with_no_parts() -> None:
    turn = decode({"candidates": [{"finishReason": "SAFETY", "index": 0}]})

    assert (turn.parts, turn.stop_reason) == ((), "refusal")


@pytest.mark.parametrize("finish", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"])
def test_a_failed_function_call_is_a_gemini_api_error(finish: str) -> None:
    # Q-gemini-malformed-call
    answer = body(finish=finish)
    answer["candidates"][0]["finishMessage"] = "Malformed function call: print(x"

    with pytest.raises(ApiError) as caught:
        decode(answer)

    assert caught.value.code == "GEMINI_API_ERROR"
    assert caught.value.status == 200
    assert caught.value.error_type == finish
    assert "Malformed function call: print(x" in caught.value.message


@pytest.mark.parametrize(
    "reason", ["SAFETY", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "IMAGE_SAFETY", "MODEL_ARMOR", "JAILBREAK"]
)
def test_a_blocked_prompt_is_a_content_refusal_naming_the_reason(reason: str) -> None:
    # Q-gemini-block-200: the same prompt would be blocked again, so it is neither retried nor a
    # provider failure.
    answer = {"promptFeedback": {"blockReason": reason, "blockReasonMessage": "unsafe"}, "usageMetadata": {}}

    with pytest.raises(ApiError) as caught:
        decode(answer)

    assert caught.value.code == "GEMINI_API_ERROR"
    assert (caught.value.status, caught.value.error_type) == (200, reason)
    assert (caught.value.kind, caught.value.retryable, caught.value.retryable_later) == (
        "CONTENT_FILTERED",
        False,
        False,
    )
    assert caught.value.message.endswith(f"blockReason {reason}): unsafe")


def test_a_body_without_candidates_or_block_reason_is_malformed() -> None:
    with pytest.raises(MalformedResponse):
        decode({"usageMetadata": {"promptTokenCount": 3}})


def test_a_function_call_without_a_name_is_malformed() -> None:
    with pytest.raises(MalformedResponse):
        decode(body({"functionCall": {"args": {}}}))


# --- stream assembly -----------------------------------------------------------------------------------------


def test_a_stream_without_a_sentinel_completes_on_its_finish_reason() -> None:
    # Q-gemini-no-sentinel, Q-gemini-cumulative-usage: usage grows, one event has none, the last wins.
    result = assemble(
        body({"text": "Hel"}, finish=None, usageMetadata={"promptTokenCount": 7, "candidatesTokenCount": 1}),
        body({"text": "lo"}, finish=None),
        body(
            {"text": "!"},
            modelVersion="gemini-2.5-flash",
            usageMetadata={"promptTokenCount": 7, "candidatesTokenCount": 3},
        ),
    )

    assert result == body(
        {"text": "Hello!"},
        usageMetadata={"promptTokenCount": 7, "candidatesTokenCount": 3},
        modelVersion="gemini-2.5-flash",
    )
    assert decode(result).usage == Usage(prompt_tokens=7, completion_tokens=3)


def test_a_signature_closes_the_part_it_arrives_on() -> None:
    result = assemble(
        body(
            {"text": "thinking ", "thought": True},
            {"text": "more", "thought": True, "thoughtSignature": "T"},
            finish=None,
        ),
        body({"text": "Hi"}, finish=None),
        body({"text": " there"}, {"text": "", "thoughtSignature": "S"}, finish=None),
        body(call_part("get_time", {}, id="g1", thoughtSignature="C"), {"text": "", "thoughtSignature": "S2"}),
    )

    assert result["candidates"][0]["content"]["parts"] == [
        {"text": "thinking more", "thought": True, "thoughtSignature": "T"},
        {"text": "Hi there", "thoughtSignature": "S"},
        call_part("get_time", {}, id="g1", thoughtSignature="C"),
        {"text": "", "thoughtSignature": "S2"},
    ]


def test_usage_after_the_finish_event_is_still_taken() -> None:
    result = assemble(body({"text": "x"}), {"usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 1}})

    assert result["usageMetadata"] == {"promptTokenCount": 2, "candidatesTokenCount": 1}


def test_a_blocked_prompt_stream_is_complete_and_decodes_to_the_api_error() -> None:
    result = assemble(
        {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 4}}
    )

    assert result == {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 4}}
    with pytest.raises(ApiError, match="PROHIBITED_CONTENT"):
        decode(result)


def test_a_stream_cut_before_any_finish_reason_is_a_cut() -> None:
    assembler = GeminiStreamAssembler()
    assembler.feed("message", json.dumps(body({"text": "partial"}, finish=None)))

    with pytest.raises(StreamCutError, match="no finishReason"):
        assembler.result()


def test_an_error_inside_the_stream_is_an_error_event_typed_by_its_status() -> None:
    assembler = GeminiStreamAssembler()
    assembler.feed("message", json.dumps(body({"text": "partial"}, finish=None)))

    with pytest.raises(StreamErrorEvent) as caught:
        assembler.feed(
            "message", json.dumps({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}})
        )

    assert (caught.value.error_type, caught.value.message) == ("UNAVAILABLE", "overloaded")


def test_progress_labels_and_counters() -> None:
    assembler = GeminiStreamAssembler()

    labels = [
        assembler.feed("message", json.dumps(body(*parts, finish=None)))
        for parts in (
            [{"text": "hm", "thought": True}],
            [{"text": "a"}],
            [{"text": "b"}],
            [call_part("get_time", {"tz": "UTC"})],
        )
    ]

    assert labels == ["thinking", "text", None, "tool_call get_time"]
    assert assembler.started
    assert assembler.output_chars == 2 + 1 + 1 + len('{"tz": "UTC"}')


_text = st.text(alphabet="abcxyz é", min_size=0, max_size=12)
_signature = st.none() | st.sampled_from(["S1", "S2", "S3"])
_part = st.one_of(
    st.builds(lambda t, s: {"text": t, **({"thoughtSignature": s} if s else {})}, _text, _signature),
    st.builds(lambda t, s: {"text": t, "thought": True, **({"thoughtSignature": s} if s else {})}, _text, _signature),
    st.builds(
        lambda n, s, i: call_part(n, {"n": n}, **({"id": i} if i else {}), **({"thoughtSignature": s} if s else {})),
        st.sampled_from(["f", "g"]),
        _signature,
        st.none() | st.just("id-1"),
    ),
)


def _canonical(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Parts as Gemini itself would have produced them: an unsigned text part runs on into the next
    piece of the same kind, so a body never holds two of them side by side."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if "text" in part and not part["text"] and "thoughtSignature" not in part:
            continue
        last = out[-1] if out else None
        if (
            last is not None
            and "text" in part
            and "text" in last
            and "thoughtSignature" not in last
            and last.get("thought") == part.get("thought")
        ):
            out[-1] = {**last, **part, "text": last["text"] + part["text"]}
        else:
            out.append(dict(part))
    return out


def _pieces(part: dict[str, Any], cuts: list[int]) -> list[dict[str, Any]]:
    """A text part as the stream sends it: fragments of its text, the signature on the last one."""
    if "functionCall" in part:
        return [part]
    text = part["text"]
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    pieces = [{**part, "text": text[a:b]} for a, b in itertools.pairwise(bounds)] or [dict(part)]
    for piece in pieces[:-1]:
        piece.pop("thoughtSignature", None)
    return pieces


@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(_part, min_size=1, max_size=6),
    cuts=st.lists(st.integers(0, 20), max_size=4),
    per_event=st.integers(1, 3),
)
def test_any_chunking_of_a_stream_rebuilds_the_non_streamed_answer(
    parts: list[dict[str, Any]], cuts: list[int], per_event: int
) -> None:
    canonical = _canonical(parts)
    pieces = [piece for part in canonical for piece in _pieces(part, cuts)]
    events = [
        body(*pieces[i : i + per_event], finish=None, usageMetadata={"promptTokenCount": 1, "candidatesTokenCount": i})
        for i in range(0, len(pieces), per_event)
    ]
    events.append(body(finish="STOP", usageMetadata={"promptTokenCount": 1, "candidatesTokenCount": 99}))

    streamed = decode(assemble(*events))
    whole = decode(body(*canonical, usageMetadata={"promptTokenCount": 1, "candidatesTokenCount": 99}))

    assert streamed == whole


# --- mixed histories always make a request Gemini accepts ----------------------------------------------------

_CALL_NAMES = st.sampled_from(["get_weather", "get_time", "mcp.fs.read"])
_FOREIGN_STATE = st.sampled_from(
    [
        None,
        ProviderState("cohere", {"kind": "tool_plan"}),
        ProviderState("claude", {"id": "x", "thought_signature": "y"}),
    ]
)


@st.composite
def _tool_loop(draw: st.DrawFn) -> tuple[Message, ...]:
    """A tool loop whose assistant turns come from any provider (Gemini 3 with ids and signatures, Gemini
    2 without ids, or another provider), with neutral unique call ids, each call answered."""
    messages: list[Message] = [user(Text(draw(_text) or "start"))]
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        origin = draw(st.sampled_from(["gemini3", "gemini2", "foreign"]))
        parts: list[Any] = []
        if draw(st.booleans()):
            signature = draw(_signature) if origin != "foreign" else None
            parts.append(Thinking(draw(_text), state=gemini(thought_signature=signature) if signature else None))
        if draw(st.booleans()):
            parts.append(Text(draw(_text), state=draw(_FOREIGN_STATE)))
        calls = []
        for position in range(draw(st.integers(0, 3))):
            counter += 1
            signed = origin != "foreign" and position == 0 and draw(st.booleans())
            values = {"id": f"gid-{counter}"} if origin == "gemini3" else {}
            if signed:
                values["thought_signature"] = f"sig-{counter}"
            state = gemini(**values) if values else draw(_FOREIGN_STATE)
            calls.append(ToolCall(f"call_{counter}", draw(_CALL_NAMES), {"i": counter}, state=state))
        messages.append(assistant(*parts, *calls))
        results = [ToolResult(call.id, draw(_text), is_error=draw(st.booleans())) for call in calls]
        order = draw(st.permutations(results))
        tail = [Text(draw(_text))] if draw(st.booleans()) or not calls else []
        messages.append(user(*order, *tail))
    return tuple(messages)


def _assert_gemini_accepts(history: tuple[Message, ...], sent: dict[str, Any]) -> None:
    """Gemini's documented checks on ``contents`` (PROVIDER-FACTS.md §2.2, §2.4, §2.5)."""
    gemini_ids = {
        part.state.values["id"]: part
        for message in history
        for part in message.parts
        if isinstance(part, ToolCall)
        and part.state is not None
        and part.state.wire == "gemini"
        and "id" in part.state.values
    }
    issued_signatures = {
        value
        for message in history
        for part in message.parts
        if not isinstance(part, ToolResult) and part.state is not None and part.state.wire == "gemini"
        for key, value in part.state.values.items()
        if key == "thought_signature"
    }
    contents_ = sent["contents"]
    assert contents_, "contents must not be empty"
    for index, content in enumerate(contents_):
        assert content["role"] in {"user", "model"}
        assert content["parts"], "contents.parts must not be empty"
        if index:
            assert contents_[index - 1]["role"] != content["role"], "turns alternate"
        for part in content["parts"]:
            if "text" in part and "thoughtSignature" not in part:
                assert part["text"], "no empty text part without a signature"
            if "thoughtSignature" in part:
                assert part["thoughtSignature"] in issued_signatures | {SKIP_SIGNATURE}
            if part.get("thought"):
                assert "thoughtSignature" in part
        calls = [part["functionCall"] for part in content["parts"] if "functionCall" in part]
        responses = [part["functionResponse"] for part in content["parts"] if "functionResponse" in part]
        if content["role"] == "model" and calls:
            assert index > 0 and contents_[index - 1]["role"] == "user", "a call turn follows a user turn"
            first = next(part for part in content["parts"] if "functionCall" in part)
            assert "thoughtSignature" in first, "the first call of a turn is signed"
            answer = contents_[index + 1]
            answered = [part["functionResponse"] for part in answer["parts"] if "functionResponse" in part]
            assert [r["name"] for r in answered] == [c["name"] for c in calls]
            assert [r.get("id") for r in answered] == [c.get("id") for c in calls]
            assert all(c["id"] in gemini_ids for c in calls if "id" in c), "only ids Gemini issued"
            assert all(isinstance(r["response"], dict) for r in answered)
        if content["role"] == "user" and responses:
            assert index > 0 and any("functionCall" in p for p in contents_[index - 1]["parts"])
            assert content["parts"][: len(responses)] == [{"functionResponse": r} for r in responses]


@settings(max_examples=200, deadline=None)
@given(history=_tool_loop(), model=st.sampled_from(["gemini-3-flash-preview", "gemini-2.5-pro", "gemini-2.0-flash"]))
def test_mixed_histories_from_any_provider_encode_to_a_request_gemini_accepts(
    history: tuple[Message, ...], model: str
) -> None:
    encoded = codec(model).encode(request(*history, model=model, tools=(WEATHER, TIME)))

    _assert_gemini_accepts(history, encoded.body)
    assert encoded.warnings == ()  # a sound tool loop needs no repair, whoever made its turns


# --- read_error ----------------------------------------------------------------------------------------------


def _error_body(code: int, status: str, message: str, *details: dict[str, Any]) -> bytes:
    return json.dumps(
        {"error": {"code": code, "message": message, "status": status, "details": list(details)}}
    ).encode()


def _read(status: int, raw: bytes, headers: dict[str, str] | None = None) -> Any:
    return codec().read_error(status, headers or {}, raw)


def test_a_rejected_key_under_400_is_an_auth_failure_never_retried_never_echoed() -> None:
    # Q-gemini-bad-key
    raw = _error_body(
        400,
        "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key. (AIzaSyFAKEFAKEFAKE)",
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID",
            "domain": "googleapis.com",
            "metadata": {"service": "generativelanguage.googleapis.com"},
        },
    )

    error = _read(400, raw)

    assert error.retryable is False
    assert error.error_type == "API_KEY_INVALID"
    assert "AIza" not in error.message
    assert "GOOGLE_API_KEY" in error.message


def test_a_rate_limit_waits_for_its_retry_delay() -> None:
    # Q-gemini-retryinfo
    raw = _error_body(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota.",
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaMetric": "m", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "47s"},
    )

    error = _read(429, raw, {"retry-after": "5"})

    assert (error.retryable, error.retry_after_s, error.error_type) == (None, 47.0, "RESOURCE_EXHAUSTED")


def test_a_per_day_quota_is_not_retried() -> None:
    # Q-gemini-retryinfo, daily variant
    raw = _error_body(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota.",
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"},
    )

    error = _read(429, raw)

    assert error.retryable is False
    assert "per-day quota" in error.message


def test_an_error_wrapped_in_an_array_reads_like_the_object() -> None:
    # Q-gemini-array-error
    inner = {"error": {"code": 429, "message": "Resource has been exhausted", "status": "RESOURCE_EXHAUSTED"}}

    assert _read(429, json.dumps([inner]).encode()) == _read(429, json.dumps(inner).encode())
    assert _read(429, json.dumps([inner]).encode()).message == "Resource has been exhausted"


@pytest.mark.parametrize(
    ("headers", "message", "quota_id", "wait"),
    [
        ({"retry-after": "12"}, "slow down", None, 12.0),
        ({}, "Please retry in 34.07s.", None, 34.07),
        ({}, "Please retry in 900ms.", None, 0.9),
        ({}, "slow down", "GenerateRequestsPerMinutePerProject", 60.0),
        ({}, "slow down", None, None),
    ],
)
def test_retry_hints_without_retry_info(
    headers: dict[str, str], message: str, quota_id: str | None, wait: float | None
) -> None:
    details = (
        [{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaId": quota_id}]}]
        if quota_id
        else []
    )

    assert _read(429, _error_body(429, "RESOURCE_EXHAUSTED", message, *details), headers).retry_after_s == wait


@pytest.mark.parametrize(
    ("status", "name", "message"),
    [(503, "UNAVAILABLE", "The model is overloaded. Please try again later."), (500, "INTERNAL", "An internal error")],
)
def test_server_errors_are_left_to_the_status_to_retry(status: int, name: str, message: str) -> None:
    error = _read(status, _error_body(status, name, message))

    assert (error.retryable, error.error_type, error.message) == (None, name, message)


def test_a_body_that_is_not_json_is_reported_as_text() -> None:
    assert _read(502, b"<html>Bad Gateway</html>").message == "<html>Bad Gateway</html>"
