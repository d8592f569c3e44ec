"""Ollama native chat codec: our conversation ⇄ ``POST {host}/api/chat`` JSON (NDJSON stream). Pure, no I/O.

Sources: https://docs.ollama.com/api/chat. Rules handled here once:
- ``OLLAMA_HOST`` may be a bare ``host[:port]`` (Ollama's own clients add ``http://`` and port 11434)
  or a URL (kept as it is); a key is sent only when one is set (Ollama's cloud);
- ``options.num_ctx`` is always sent, sized to the request: without it Ollama silently truncates a
  long prompt to its default window; an answer whose prompt count is far below
  the request's size is flagged;
- there is no ``tool_choice``: ``none`` sends no tools, ``required`` and a named tool become a user
  nudge with a warning;
- ``think`` is a level on gpt-oss and true/false elsewhere;
- arguments go as objects, tool results as ``role: tool`` with the call's ``tool_name``;
- a 404 for a model that is not pulled says which model and how to pull it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from colibri_router.conversation import (
    AssistantTurn,
    CompletionRequest,
    Media,
    Message,
    Part,
    Reasoning,
    Text,
    Thinking,
    ToolCall,
    ToolResult,
    Usage,
)
from colibri_router.errors import InvalidRequestError, MalformedResponse
from colibri_router.providers.profiles import ModelProfile, model_segment
from colibri_router.token_estimate import request_tokens
from colibri_router.toolcalls.arguments import arguments_object
from colibri_router.toolcalls.assembly.base import StreamAssembler, as_object, as_text
from colibri_router.toolcalls.ids import ids_for_kimi, ids_for_mistral
from colibri_router.wires.base import (
    Dialect,
    Encoded,
    UpstreamError,
    json_or_none,
    listed_names,
    nested_error,
    retry_after,
)
from colibri_router.wires.ollama.assembly import OllamaStreamAssembler
from colibri_router.wires.output import ollama_format
from colibri_router.wires.rules import (
    EMPTY_TOOL_RESULT,
    ERROR_RESULT_PREFIX,
    function_tools,
    tool_choice_nudge,
    user_text,
)

DEFAULT_PORT = 11434
MIN_CONTEXT = 4096  # never ask for less than Ollama's larger default window
FINISH_REASONS = {"stop": "end_turn", "length": "max_tokens"}
# Models whose `think` is a level; a bool is ignored by them (full match on the last path segment).
LEVEL_THINKING = re.compile(r"gpt-oss.*", re.IGNORECASE)
_MODEL_NOT_FOUND = re.compile(r"""model ['"]([^'"]+)['"] not found""")
# Ollama marks these failures only in its message text; each gets a hint on what to change.
HINTS = (
    ("does not support thinking", "call it without `reasoning`, or with `reasoning: off`"),
    ("does not support tools", "this model takes no tools: call it without tools, or pick a model that has them"),
    ("unauthorized", "set OLLAMA_API_KEY for ollama.com, or run `ollama signin` for cloud models on a local server"),
)


@dataclass(frozen=True, slots=True)
class OllamaCodec:
    dialect: Dialect

    def endpoint(self, base_url: str, api_key: str | None, model: str) -> tuple[str, dict[str, str]]:
        return f"{normalize_host(base_url)}/api/chat", self.dialect.headers(api_key)

    def model_list_endpoint(self, base_url: str, api_key: str | None) -> tuple[str, dict[str, str]]:
        _, headers = self.endpoint(base_url, api_key, "")
        return f"{normalize_host(base_url)}/api/tags", headers

    def decode_model_list(self, body: Mapping[str, Any]) -> list[str]:
        return listed_names(body, "models", "name")

    def encode(self, request: CompletionRequest) -> Encoded:
        profile = self.dialect.profile
        self.dialect.check_tool_count(request)
        warnings: list[str] = []
        repairs: tuple[str, ...] = ()
        messages = encode_messages(self._with_profile_ids(request.messages), request.system)
        body: dict[str, Any] = {"model": request.model, "messages": messages}
        choice = request.tool_choice
        if request.tools and (choice is None or choice.mode != "none"):  # `none`: no tools, no calls
            body["tools"] = function_tools(request.tools)
            nudge = tool_choice_nudge(choice)
            if nudge is not None:
                messages.append({"role": "user", "content": nudge})
                repairs = ("tool_choice_nudged",)
                warnings.append(
                    f"Ollama has no tool_choice: asked the model in a user message to {nudge[0].lower()}{nudge[1:]}"
                )
        think, think_warnings = think_field(request.model, request.reasoning, profile)
        if think is not None:
            body["think"] = think
        options: dict[str, Any] = {"num_ctx": context_window(request), "num_predict": request.max_tokens}
        if request.temperature is not None:
            options["temperature"] = request.temperature
        body["options"] = options
        output_format = ollama_format(request.output) if request.output else None
        if output_format is not None:
            body["format"] = output_format
        body["stream"] = True
        return Encoded(body=body, warnings=(*warnings, *think_warnings), repairs=repairs)

    def _with_profile_ids(self, messages: Sequence[Message]) -> Sequence[Message]:
        """A model family's ID rule holds wherever it is served (Kimi K2 on Ollama's cloud reads its
        call IDs back from the prompt)."""
        rules: dict[str, Callable[[Sequence[Message]], Sequence[Message]]] = {
            "k2": lambda history: ids_for_kimi(history, self.dialect.kimi_id_mode),
            "mistral9": ids_for_mistral,
        }
        rule = rules.get(self.dialect.profile.ids or "")
        return rule(messages) if rule is not None else messages

    def new_assembler(self) -> StreamAssembler:
        return OllamaStreamAssembler()

    def decode(self, body: Mapping[str, Any], request: CompletionRequest) -> AssistantTurn:
        message = body.get("message")
        if not isinstance(message, dict):
            raise MalformedResponse("the chat response has no message object")
        parts = decode_message(message)
        calls = any(isinstance(part, ToolCall) for part in parts)
        done_reason = as_text(body.get("done_reason")) or None
        stop = FINISH_REASONS.get(done_reason or "", done_reason)
        prompt_tokens = body.get("prompt_eval_count")
        model = body.get("model")
        return AssistantTurn(
            parts=tuple(parts),
            stop_reason="tool_use" if calls and stop in {"end_turn", None} else stop,
            model=model if isinstance(model, str) and model else None,
            usage=Usage.of(prompt_tokens, body.get("eval_count")),
            warnings=truncation_warnings(request, prompt_tokens),
        )

    def read_error(self, status: int, headers: Mapping[str, str], body: bytes) -> UpstreamError:
        data = json_or_none(body)
        error = data.get("error") if isinstance(data, dict) else None
        if not isinstance(error, str) or not error:
            return nested_error(body, headers)
        missing = _MODEL_NOT_FOUND.search(error)
        if status == 404 and missing is not None:
            name = missing.group(1)
            message = f"model '{name}' not found on the Ollama server: pull it first with `ollama pull {name}`"
            return UpstreamError(message=message, error_type="model_not_found")
        hint = next((hint for phrase, hint in HINTS if phrase in error.lower()), None)
        message = f"{error} ({hint})" if hint is not None else error
        return UpstreamError(message=message, retry_after_s=retry_after(headers))


def make_codec(dialect: Dialect) -> OllamaCodec:
    return OllamaCodec(dialect)


def normalize_host(host: str) -> str:
    """``OLLAMA_HOST`` as a base URL: ``gpu-box`` → ``http://gpu-box:11434``, ``10.0.0.5:8080`` →
    ``http://10.0.0.5:8080``; a URL with a scheme is kept (its own default port when it names none)."""
    host = host.strip().rstrip("/")
    if "://" in host:
        return host
    address, slash, path = host.partition("/")
    try:
        has_port = urlsplit(f"http://{address}").port is not None
    except ValueError:  # an address urlsplit cannot read (a bare IPv6): leave it to the server
        has_port = True
    return f"http://{address if has_port else f'{address}:{DEFAULT_PORT}'}{slash}{path}"


def think_field(
    model: str, reasoning: Reasoning | None, profile: ModelProfile
) -> tuple[bool | str | None, tuple[str, ...]]:
    """``think`` for ``reasoning``; None leaves it out (Ollama then thinks if the model can)."""
    if reasoning is None:
        return None, ()
    if reasoning == "off" and profile.reasoning_always_on:
        return None, (f"{model} cannot switch thinking off: sent no `think`",)
    if LEVEL_THINKING.fullmatch(model_segment(model)):
        if reasoning == "off":
            return "low", (f"{model} cannot switch thinking off: sent think 'low', the lowest it takes",)
        return reasoning, ()
    if reasoning in {"low", "medium"}:
        return True, (f"{model} takes no thinking level: sent think true for reasoning {reasoning!r}",)
    return reasoning != "off", ()


def encode_messages(messages: Sequence[Message], system: str | None) -> list[dict[str, Any]]:
    encoded: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    names: dict[str, str] = {}  # call id → tool name, for the results that answer it
    for message in messages:
        if message.role == "assistant":
            names.update((call.id, call.name) for call in message.tool_calls())
            assistant = _assistant_message(message.parts)
            if assistant is not None:
                encoded.append(assistant)
        else:
            encoded.extend(_user_messages(message.parts, names))
    return encoded


def _assistant_message(parts: Sequence[Part]) -> dict[str, Any] | None:
    text = "".join(part.text for part in parts if isinstance(part, Text))
    thinking = "".join(part.text for part in parts if isinstance(part, Thinking))
    calls = [part for part in parts if isinstance(part, ToolCall)]
    if not text and not calls:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if thinking:
        message["thinking"] = thinking  # reasoning text, not opaque state: any provider's may go back
    if calls:
        message["tool_calls"] = [_tool_call(call) for call in calls]
    return message


def _tool_call(call: ToolCall) -> dict[str, Any]:
    encoded: dict[str, Any] = {"function": {"name": call.name, "arguments": dict(call.arguments)}}
    if call.id:
        encoded = {"id": call.id, **encoded}
    return encoded


def _user_messages(parts: Sequence[Part], names: Mapping[str, str]) -> list[dict[str, Any]]:
    """Tool results first, right after the calls they answer; then the user's text as one message."""
    messages: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, ToolResult):
            content = part.content if part.content.strip() else EMPTY_TOOL_RESULT
            if part.is_error:
                content = ERROR_RESULT_PREFIX + content  # Ollama's tool messages have no error flag
            result: dict[str, Any] = {"role": "tool", "content": content}
            if name := names.get(part.call_id):
                result["tool_name"] = name
            if part.call_id:
                result["tool_call_id"] = part.call_id
            messages.append(result)
    # Ollama takes images beside a message's text, as bare base64 (no data URL); a tool's images go in
    # the user message after its result. PDFs reach Ollama as their text (the router extracts it).
    images = [_image(media) for part in parts if isinstance(part, ToolResult) for media in part.media]
    images += [_image(part) for part in parts if isinstance(part, Media)]
    text = user_text(parts)
    if text or images:
        user: dict[str, Any] = {"role": "user", "content": text}
        if images:
            user["images"] = images
        messages.append(user)
    return messages


def _image(media: Media) -> str:
    if media.kind != "image" or media.data is None:
        what = "an image by URL" if media.kind == "image" else "a PDF"
        raise InvalidRequestError(f"Ollama cannot take {what}: send images as content (base64)")
    return media.data


def decode_message(message: Mapping[str, Any]) -> list[Part]:
    parts: list[Part] = []
    if thinking := as_text(message.get("thinking")):
        parts.append(Thinking(thinking))
    if content := as_text(message.get("content")):
        parts.append(Text(content))
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise MalformedResponse("message.tool_calls is not a list")
    for raw in raw_calls:
        function = as_object(as_object(raw).get("function"))
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise MalformedResponse("a tool call has no function name")
        parsed = arguments_object(function.get("arguments"))
        # Servers before 0.12.10 send no id: the call is left unnamed and the router names it.
        parts.append(ToolCall(id=as_text(as_object(raw).get("id")), name=name, arguments=parsed))
    return parts


def context_window(request: CompletionRequest) -> int:
    return max(MIN_CONTEXT, request_tokens(request) + request.max_tokens)


def truncation_warnings(request: CompletionRequest, prompt_tokens: object) -> tuple[str, ...]:
    """Flag a prompt count far below the request's size (a third of the high estimate): the model's
    window is smaller than the prompt, or Ollama answered from a cached prefix and counted only the rest."""
    estimate = request_tokens(request)
    if not isinstance(prompt_tokens, int) or estimate <= MIN_CONTEXT or prompt_tokens * 3 >= estimate:
        return ()
    return (
        f"Ollama read {prompt_tokens} prompt tokens of a request estimated at {estimate}: unless it reused a "
        f"cached prefix, the prompt was truncated (num_ctx {context_window(request)} was sent; the model's "
        f"context may be smaller)",
    )
