"""The Ollama ``/api/chat`` wire: builders, the NDJSON stream generated from a body, rules, the route.

``POST /ollama/api/chat`` streams NDJSON unless the body says ``"stream": false``; ``GET /ollama/api/tags``.
No key needed (a bearer is accepted). Refused with ``{"error": "..."}``: a missing model, tool-call
``arguments`` sent as a JSON string instead of an object, a tool message without ``tool_name``,
``think: true`` on a model that does not think. A request without ``options.num_ctx`` is answered (Ollama
silently truncates the prompt to its default context) but recorded as a violation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .ids import ollama_call_id
from .media_rules import ollama_media_problems
from .replies import NDJSON, ErrorReply, MessageReply, ndjson_frame, pieces
from .routes import Problem, RecordedRequest, Route, last_user_text, objects, token_estimate

OLLAMA_MODEL = "llama3.2"
OLLAMA_DEFAULT_NUM_CTX = 4096  # what the server uses when the request names none
_CREATED_AT = "2026-01-01T00:00:00.000000Z"
_DURATIONS = {"total_duration": 900_000_000, "load_duration": 100_000_000, "prompt_eval_duration": 200_000_000}


def ollama_text(
    text: str,
    *,
    thinking: str | None = None,
    model: str = OLLAMA_MODEL,
    done_reason: str = "stop",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A final (``done: true``) chat response with a text answer, and ``message.thinking`` if given."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if thinking is not None:
        message["thinking"] = thinking
    return MessageReply(_chat_body(message, model, done_reason, usage), delay_s, hold_open_s)


def ollama_tool_calls(
    calls: Iterable[tuple[str, Mapping[str, Any]]],
    *,
    text: str | None = None,
    thinking: str | None = None,
    ids: bool = True,
    model: str = OLLAMA_MODEL,
    done_reason: str = "stop",
    usage: tuple[int, int] = (20, 10),
    delay_s: float = 0.0,
    hold_open_s: float = 0.0,
) -> MessageReply:
    """A chat response calling tools; ``calls`` are ``(name, arguments_object)``. ``ids=False`` leaves the
    IDs out, as Ollama before 0.12.10 does. The done reason stays ``stop`` (Ollama has no tool reason)."""
    tool_calls = []
    for index, (name, arguments) in enumerate(calls):
        call: dict[str, Any] = {"function": {"index": index, "name": name, "arguments": dict(arguments)}}
        tool_calls.append({"id": ollama_call_id(), **call} if ids else call)
    message: dict[str, Any] = {"role": "assistant", "content": text or "", "tool_calls": tool_calls}
    if thinking is not None:
        message["thinking"] = thinking
    return MessageReply(_chat_body(message, model, done_reason, usage), delay_s, hold_open_s)


def _chat_body(message: dict[str, Any], model: str, done_reason: str, usage: tuple[int, int]) -> dict[str, Any]:
    prompt, completion = usage
    metrics = {"prompt_eval_count": prompt, "eval_count": completion, "eval_duration": 500_000_000}
    return {
        "model": model,
        "created_at": _CREATED_AT,
        "message": message,
        "done": True,
        "done_reason": done_reason,
        **_DURATIONS,
        **metrics,
    }


def ollama_ndjson_lines(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lines Ollama would stream for ``body``: thinking pieces, content pieces, one line per tool call
    (whole, arguments an object), then the ``done: true`` line with ``done_reason`` and the counts."""
    head = {"model": body["model"], "created_at": body["created_at"]}
    message = body["message"]

    def line(**delta: Any) -> dict[str, Any]:
        return {**head, "message": {"role": "assistant", "content": "", **delta}, "done": False}

    lines = [line(thinking=p) for p in pieces(message.get("thinking") or "")]
    lines += [line(content=p) for p in pieces(message.get("content") or "")]
    lines += [line(tool_calls=[call]) for call in message.get("tool_calls") or []]
    final = {key: value for key, value in body.items() if key != "message"}
    return [*lines, {**final, "message": {"role": "assistant", "content": ""}}]


def validate_ollama_request(body: Any, *, thinking_models: Iterable[str] = ()) -> list[Problem]:
    """Why Ollama would refuse this chat request; ``[]`` if it would accept it.

    ``thinking_models``: model names (before any ``:tag``) that can think; others refuse ``think: true``.
    """
    if not isinstance(body, dict):
        return [Problem("invalid JSON body")]
    model = body.get("model")
    if not isinstance(model, str) or not model:
        return [Problem("model is required")]
    problems = []
    if body.get("think") is True and model.split(":", 1)[0] not in set(thinking_models):
        problems.append(Problem(f'"{model}" does not support thinking'))
    messages = body.get("messages", [])
    if not isinstance(messages, list):
        return [*problems, Problem("messages must be a list")]
    for i, msg in enumerate(objects(messages)):
        for call in objects(msg.get("tool_calls")):
            if not isinstance((call.get("function") or {}).get("arguments"), dict):
                problems.append(
                    Problem(
                        f"messages[{i}]: json: cannot unmarshal string into Go struct field "
                        "ToolCallFunction.tool_calls.function.arguments of type api.ToolCallFunctionArguments"
                    )
                )
        if msg.get("role") == "tool" and not isinstance(msg.get("tool_name"), str):
            problems.append(Problem(f"messages[{i}]: a tool message needs tool_name (the function it answers)"))
    return problems + ollama_media_problems(messages)


def requested_num_ctx(body: Any) -> int | None:
    """``options.num_ctx`` of a request body, if it names one."""
    options = body.get("options") if isinstance(body, dict) else None
    num_ctx = options.get("num_ctx") if isinstance(options, dict) else None
    return num_ctx if isinstance(num_ctx, int) else None


class OllamaRoute(Route):
    """Ollama under ``/ollama``; ``num_ctx_values`` lists the ``options.num_ctx`` of each chat request.

    ``thinking_models`` (settable): the models that think, and so answer with ``message.thinking`` when the
    request does not say ``think: false`` (Ollama turns thinking on by default for them).
    """

    chat_path = "/api/chat"
    models_path = "/api/tags"
    ping_frame = None
    stream_content_type = NDJSON

    def __init__(self) -> None:
        super().__init__("ollama", "/ollama", (OLLAMA_MODEL, "qwen3", "gpt-oss:20b", "kimi-k2.6:cloud"))
        self.thinking_models = {
            "qwen3",
            "deepseek-r1",
            "gpt-oss",
            "magistral",
            "kimi-k2-thinking",
            "kimi-k2.5",
            "kimi-k2.6",
        }

    @property
    def num_ctx_values(self) -> list[int | None]:
        return [requested_num_ctx(request.body) for request in self.requests]

    def auth_problems(self, request: RecordedRequest) -> list[Problem]:
        return []

    def validate(self, request: RecordedRequest) -> list[Problem]:
        return validate_ollama_request(request.body, thinking_models=self.thinking_models)

    def silent_problems(self, request: RecordedRequest) -> list[str]:
        if requested_num_ctx(request.body) is None:
            return [
                f"options.num_ctx is missing: Ollama silently truncates the prompt to {OLLAMA_DEFAULT_NUM_CTX} tokens"
            ]
        return []

    def wants_stream(self, request: RecordedRequest) -> bool:
        return request.body.get("stream") is not False

    def error_body(self, error: ErrorReply) -> Any:
        """``{"error": "<text>"}`` plus ``extra`` (e.g. ``signin_url``)."""
        if error.variant is not None:
            raise ValueError(f"the Ollama error shape has no variant {error.variant!r}")
        return {"error": error.message, **error.extra}

    def stream_frames(self, body: Mapping[str, Any], request: RecordedRequest) -> list[bytes]:
        return [ndjson_frame(line) for line in ollama_ndjson_lines(body)]

    def echo_reply(self, request: RecordedRequest) -> MessageReply:
        body = request.body
        text = last_user_text(body.get("messages"))
        answer = f"echo: {text}"
        # Truncation made visible: the prompt counted is at most the context the server used.
        prompt = min(token_estimate(body.get("messages")), requested_num_ctx(body) or OLLAMA_DEFAULT_NUM_CTX)
        thinks = body["model"].split(":", 1)[0] in self.thinking_models and body.get("think") is not False
        thinking = f"The user said: {text}" if thinks else None
        return ollama_text(answer, thinking=thinking, model=body["model"], usage=(prompt, len(answer.split())))

    def model_list_body(self) -> Any:
        return {
            "models": [
                {"name": m, "model": m, "modified_at": _CREATED_AT, "size": 2_000_000_000, "digest": f"sha256:{n:064x}"}
                for n, m in enumerate(self.models, start=1)
            ]
        }
