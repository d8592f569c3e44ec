"""The OpenAI-wire hosts as data, their route, and the validator that applies each host's rules.

A host is one ``OpenAIHost`` row: whether it needs a key, where it puts usage when streaming, which field
carries reasoning, its error shape, its own request rules, and whether it serves Kimi (then the Kimi
family rules apply to Kimi model names: K2 IDs, and reasoning replayed in the host's field).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .kimi import (
    KIMI_MODEL,
    is_kimi_model,
    is_kimi_thinking_model,
    k2_id_problems,
    kimi_auth_problems,
    kimi_reasoning_problems,
    kimi_text,
    validate_kimi_request,
)
from .media_rules import openai_media_problems
from .openai_family_rules import (
    fireworks_problems,
    mistral_problems,
    openai_problems,
    openai_structure_problems,
    openrouter_problems,
    tool_pairing_problems,
)
from .openai_wire import (
    ErrorShape,
    FinishUsage,
    mistral_text,
    openai_error_body,
    openai_model_list,
    openai_sse_events,
    openai_text,
)
from .replies import ErrorReply, MessageReply, sse_frame
from .routes import Problem, RecordedRequest, Route, has_bearer, last_user_text, token_estimate
from .structured_rules import openai_response_format_problems

Rule = Callable[[Mapping[str, Any]], list[Problem]]


@dataclass(frozen=True)
class OpenAIHost:
    """One host speaking the OpenAI chat-completions wire, as data.

    ``reasoning_fields``: where the host streams reasoning (the first) and where it accepts it back on
    replay (any). ``usage_tail``: when the ``choices: []`` usage chunk ends a stream (``on_request``: when
    ``stream_options.include_usage`` is true). ``finish_usage``: usage on the finish chunk too.
    """

    name: str
    models: tuple[str, ...]
    needs_key: bool = True
    serves_kimi: bool = False
    reasoning_fields: tuple[str, ...] = ("reasoning_content",)
    usage_tail: Literal["always", "on_request", "never"] = "on_request"
    finish_usage: FinishUsage | None = None
    error_shape: ErrorShape = "openai"
    ping: bytes | None = b": ping\n\n"
    whole_tool_calls: bool = False
    continuation_name: str | None = None
    object_arguments: bool = False
    rules: tuple[Rule, ...] = ()


OPENAI_HOSTS: dict[str, OpenAIHost] = {
    host.name: host
    for host in (
        OpenAIHost(
            "kimi",
            ("kimi-k2.6", "kimi-k2.7-code", "kimi-k3", KIMI_MODEL),
            serves_kimi=True,
            usage_tail="always",
            error_shape="moonshot",
        ),
        OpenAIHost(
            "openai", ("gpt-5.4-mini", "gpt-5.5", "gpt-5.4-nano", "gpt-4.1", "o4-mini"), rules=(openai_problems,)
        ),
        OpenAIHost(
            "mistral",
            ("mistral-small-latest", "mistral-large-latest", "mistral-medium-latest", "devstral-latest"),
            usage_tail="never",
            finish_usage="usage",
            error_shape="mistral",
            whole_tool_calls=True,
            object_arguments=True,
            rules=(mistral_problems,),
        ),
        OpenAIHost(
            "openrouter",
            ("moonshotai/kimi-k2.6", "moonshotai/kimi-k2-0905", "openai/gpt-5.5", "anthropic/claude-sonnet-4.5"),
            serves_kimi=True,
            reasoning_fields=("reasoning", "reasoning_details"),
            usage_tail="always",
            error_shape="openrouter",
            ping=b": OPENROUTER PROCESSING\n\n",
            rules=(openrouter_problems,),
        ),
        OpenAIHost(
            "groq",
            ("moonshotai/kimi-k2-instruct-0905", "openai/gpt-oss-120b", "llama-3.3-70b-versatile"),
            serves_kimi=True,
            reasoning_fields=("reasoning",),
            finish_usage="x_groq",
        ),
        OpenAIHost(
            "together",
            ("moonshotai/Kimi-K2.6", "moonshotai/Kimi-K2-Instruct-0905", "Qwen/Qwen3-235B-A22B-Instruct-2507-tput"),
            serves_kimi=True,
            reasoning_fields=("reasoning",),
        ),
        OpenAIHost(
            "fireworks",
            ("accounts/fireworks/models/kimi-k2p6", "accounts/fireworks/models/kimi-k2-instruct-0905"),
            serves_kimi=True,
            rules=(fireworks_problems,),
        ),
        OpenAIHost(
            "siliconflow",
            ("moonshotai/Kimi-K2.6", "moonshotai/Kimi-K2-Instruct-0905", "deepseek-ai/DeepSeek-V3.2"),
            serves_kimi=True,
        ),
        OpenAIHost("deepseek", ("deepseek-chat", "deepseek-reasoner")),
        OpenAIHost(
            "vllm",
            ("moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Thinking"),
            needs_key=False,
            serves_kimi=True,
            reasoning_fields=("reasoning",),
            error_shape="vllm",
        ),
        OpenAIHost(
            "lmstudio",
            ("qwen/qwen3-coder-30b", "openai/gpt-oss-20b"),
            needs_key=False,
            reasoning_fields=("reasoning_content", "reasoning"),
            continuation_name="",
        ),
        OpenAIHost(
            "custom",
            ("local-model",),
            needs_key=False,
            serves_kimi=True,
            reasoning_fields=("reasoning_content", "reasoning"),
        ),
    )
}


def validate_openai_request(
    body: Any, headers: Mapping[str, str] | None = None, *, host: str = "openai", strict_ids: bool = True
) -> list[Problem]:
    """Why OpenAI-wire ``host`` (a key of ``OPENAI_HOSTS``) would refuse this request; ``[]`` if it would not.

    ``headers=None`` skips the header checks. Structure first (model, messages, roles, tool-call shape),
    then the host's own rules, then on a well-formed body the tool-message pairing and, when the host
    serves the Kimi model asked for, the Kimi family rules (``strict_ids``: K2 IDs required).
    """
    if host == "kimi":
        return validate_kimi_request(body, headers, strict_ids=strict_ids)
    spec = OPENAI_HOSTS[host]
    problems = host_auth_problems(spec, headers) if headers is not None else []
    if not isinstance(body, dict):
        return [*problems, Problem("request body must be a JSON object")]
    structure = openai_structure_problems(body, object_arguments=spec.object_arguments)
    problems += structure + [problem for rule in spec.rules for problem in rule(body)]
    if structure:
        return problems
    messages, model = body["messages"], body["model"]
    problems += openai_media_problems(body)
    problems += openai_response_format_problems(body, host=host)
    problems += tool_pairing_problems(messages)
    if spec.serves_kimi and is_kimi_model(model):
        problems += k2_id_problems(messages, strict=strict_ids)
        if is_kimi_thinking_model(model):
            problems += kimi_reasoning_problems(messages, spec.reasoning_fields)
    return problems


def host_auth_problems(host: OpenAIHost, headers: Mapping[str, str]) -> list[Problem]:
    """A host that needs a key wants ``Authorization: Bearer <key>``; the others take a bearer or none."""
    if host.name == "kimi":
        return kimi_auth_problems(headers)
    if not host.needs_key or has_bearer(headers):
        return []
    return [
        Problem(
            "You didn't provide an API key. You need to provide your API key in an Authorization header "
            "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
            status=401,
            error_type="invalid_request_error",
            code="invalid_api_key",
        )
    ]


class OpenAIChatRoute(Route):
    """``POST {base}/chat/completions`` and ``GET {base}/models`` of one OpenAI-wire host (base ``/<name>/v1``).

    Set ``strict_ids = False`` to accept any tool-call ID where K2 IDs would be required.
    """

    chat_path = "/chat/completions"
    models_path = "/models"
    strict_ids = True

    def __init__(self, host: OpenAIHost) -> None:
        super().__init__(host.name, f"/{host.name}/v1", host.models)
        self.host = host
        self.ping_frame = host.ping

    def auth_problems(self, request: RecordedRequest) -> list[Problem]:
        return host_auth_problems(self.host, request.headers)

    def validate(self, request: RecordedRequest) -> list[Problem]:
        return validate_openai_request(request.body, host=self.host.name, strict_ids=self.strict_ids)

    def error_body(self, error: ErrorReply) -> Any:
        return openai_error_body(error, self.host.error_shape)

    def stream_frames(self, body: Mapping[str, Any], request: RecordedRequest) -> list[bytes]:
        options = request.body.get("stream_options") if isinstance(request.body, dict) else None
        asked = isinstance(options, dict) and options.get("include_usage") is True
        tail = self.host.usage_tail == "always" or (self.host.usage_tail == "on_request" and asked)
        events = openai_sse_events(
            body,
            usage_tail=tail,
            finish_usage=self.host.finish_usage,
            whole_tool_calls=self.host.whole_tool_calls,
            continuation_name=self.host.continuation_name,
        )
        return [sse_frame(event) for event in events]

    def echo_reply(self, request: RecordedRequest) -> MessageReply:
        messages = request.body["messages"]
        answer = f"echo: {last_user_text(messages)}"
        usage = (token_estimate(messages), len(answer.split()))
        model = request.body["model"]
        if self.host.name == "mistral":
            return mistral_text(answer, model=model, usage=usage)
        return openai_text(answer, model=model, usage=usage, reasoning_field=self.host.reasoning_fields[0])

    def model_list_body(self) -> Any:
        return openai_model_list(self.models, self.host.name)


class KimiRoute(OpenAIChatRoute):
    """Moonshot: ``POST /kimi/v1/chat/completions``, checked by ``validate_kimi_request``."""

    def __init__(self) -> None:
        super().__init__(OPENAI_HOSTS["kimi"])

    def validate(self, request: RecordedRequest) -> list[Problem]:
        return validate_kimi_request(request.body, strict_ids=self.strict_ids)

    def echo_reply(self, request: RecordedRequest) -> MessageReply:
        messages = request.body["messages"]
        answer = f"echo: {last_user_text(messages)}"
        return kimi_text(answer, model=request.body["model"], usage=(token_estimate(messages), len(answer.split())))


def openai_family_routes() -> list[OpenAIChatRoute]:
    """A route for every OpenAI-wire host but Moonshot (``KimiRoute``)."""
    return [OpenAIChatRoute(host) for name, host in OPENAI_HOSTS.items() if name != "kimi"]
