"""A scripted loopback server that speaks every provider's wire, strict like the real services.

Mocks (respx, ``httpx.MockTransport``) cannot show what only real sockets do: a stream split across reads,
a slow first byte, a connection cut mid-stream, a client that hangs up. This fake is a real HTTP/1.1 server
on 127.0.0.1 (ephemeral port, a daemon thread per connection). Adapter tests use it in-process through
httpx, end-to-end tests point the ``colibri-router`` process at it, benchmarks load it.

Routes (``fake.route(name)``; ``fake.base_url(name)`` is what a client is configured with)::

    name                          base URL               POST (chat)                            GET (model list)
    kimi openai mistral           {url}/<name>/v1        {base}/chat/completions                {base}/models
    openrouter groq together
    fireworks siliconflow
    deepseek vllm lmstudio custom
    anthropic kimi-anthropic      {url}/<name>           {base}/v1/messages                     {base}/v1/models
    gemini                        {url}/gemini/v1beta    {base}/models/{model}:generateContent  {base}/models
                                                         {base}/models/{model}:streamGenerateContent?alt=sse
    cohere                        {url}/cohere           {base}/v2/chat                         {base}/v1/models
    ollama                        {url}/ollama           {base}/api/chat (NDJSON by default)    {base}/api/tags

``fake.kimi``, ``fake.anthropic``, ``fake.gemini``, ``fake.cohere``, ``fake.ollama`` are typed shortcuts;
``fake.kimi_base_url`` / ``fake.anthropic_base_url`` remain. Keys: a bearer on every OpenAI-wire host but
vllm, lmstudio and custom (which take one or none) and on cohere; ``x-api-key`` + ``anthropic-version:
2023-06-01`` on the Anthropic wire; ``x-goog-api-key`` (or ``?key=``) on gemini; none on ollama.

Scripting: ``route.enqueue(*replies)`` answers the next chat requests in order; when the queue is empty
the route echoes (``echo: <last user text>`` in its own shape).
``route.enqueue_for_key(key, *replies)`` answers the requests sent with that API key first (a pool of
keys, each answering its own way). ``route.models`` is the model list
(settable); ``route.enqueue_model_list(...)`` scripts that endpoint (e.g. an error). Reply kinds:

- a body from a builder (or ``message(body)``): sent as JSON, or as the stream the service would send
  for it when the request streams. Builders per wire: ``kimi_text/kimi_tool_calls``,
  ``openai_text/openai_tool_calls`` (``reasoning_field=`` for hosts that say ``reasoning``),
  ``mistral_text/mistral_tool_calls`` (``thinking=`` as Mistral's content chunks),
  ``anthropic_text/anthropic_tool_use`` (``thinking=``, ``redacted_thinking=``),
  ``gemini_text/gemini_tool_calls`` (``ids=``, ``signatures=``, ``signed_empty_part=``),
  ``cohere_text/cohere_tool_calls`` (``tool_plan=``, ``thinking=``), ``ollama_text/ollama_tool_calls``
  (``ids=False`` for old servers). Each takes ``model=`` (not Cohere: its responses name none), usage,
  ``delay_s`` and ``hold_open_s`` (pings, or silence on wires that send none, before the first event).
  The streams are public functions, to build and tamper with raw fixtures: ``kimi_sse_events``,
  ``openai_sse_events`` (``usage_tail``, ``finish_usage``, ``whole_tool_calls``, ``continuation_name``),
  ``anthropic_sse_events`` (``whole_tool_input``), ``gemini_sse_events`` (cumulative usage, no
  terminator), ``cohere_sse_events`` (named events), ``ollama_ndjson_lines``. Each OpenAI-wire host
  streams as its service does: usage tail chunk (``choices: []``) when ``stream_options.include_usage``
  asks for it, always on kimi and openrouter; on the finish chunk on mistral (``usage``) and groq
  (``x_groq``); whole tool calls on mistral; ``name: ""`` continuations on lmstudio; ``: OPENROUTER
  PROCESSING`` pings on openrouter.
- ``raw_stream(events, drop_after=N, event_delay_s=..., content_type=...)``: exactly these SSE events
  (``str`` data, ``(event, data)``, or verbatim ``bytes``); ``raw_ndjson(lines)`` for NDJSON. Mid-stream
  errors, comments and wrong content types are one line each, e.g.
  ``raw_stream([*openai_sse_events(body)[:3], openai_error_event("boom", code=502, finish_reason="error")])``,
  ``raw_stream([("error", json.dumps({"error": {...}}))])`` (Groq), ``raw_ndjson([*lines, {"error": "..."}])``
  (Ollama), ``message({"promptFeedback": {"blockReason": "SAFETY"}})`` on gemini.
- ``error(status, message=..., error_type=, code=, param=, extra=, variant=, headers=)``: rendered in the
  route's error shape (OpenAI, Moonshot, Mistral, OpenRouter, vLLM flat/nested, Anthropic, Gemini
  object/array, Cohere flat, Ollama string).
- ``raw_body(status, body, content_type)``: anything at all.

IDs the services issue: ``openai_call_id()`` (``call_`` + 24), ``mistral_call_id()`` (9 alnum),
``k2_call_id(name, n)``, ``cohere_call_id(name)``, ``ollama_call_id()``, ``gemini_call_id()``,
``thought_signature()``.

Strictness: each request is checked like the real service checks it; a violation is answered in the
service's error shape and status (401/403/400/422), does not consume a scripted reply, and is appended
to ``fake.violations`` as ``"<route>: <problem>"``. Mistakes a service answers anyway (Ollama without
``options.num_ctx``, Gemini streaming without ``alt=sse``) are answered and recorded too. The validators
are plain functions returning ``Problem``s (strings carrying status/type/code): ``validate_kimi_request``,
``validate_openai_request(body, headers, host=...)`` (every OpenAI-wire host),
``validate_anthropic_request``, ``validate_gemini_request(body, headers, model=...)``,
``validate_cohere_request``, ``validate_ollama_request``; and the rules they share:
``tool_pairing_problems``, ``k2_id_problems``, ``kimi_reasoning_problems``, ``is_kimi_model``,
``is_kimi_thinking_model``, ``openai_model_family`` (``OPENAI_MODEL_FAMILIES``), ``is_gemini_3``.
Routes remember what they issue (Anthropic thinking signatures, Gemini signatures and call IDs) and
refuse it back altered or invented. ``strict_ids = False`` on an OpenAI-wire route accepts non-K2 IDs
for Kimi models.

Every wait and write notices a client that hangs up (``fake.disconnects``, ``wait_disconnect``);
``fake.latency_s`` adds a wait before every reply; ``reset()`` forgets scripts, recordings and issued
values.

Example::

    with FakeUpstream() as fake:  # or the `fake_upstream` fixture
        fake.kimi.enqueue(
            error(429, error_type="engine_overloaded_error", message="busy", headers={"Retry-After": "1"}),
            kimi_tool_calls([("functions.read:0", "read", '{"path": "a.txt"}')]),
        )
        fake.gemini.enqueue(gemini_tool_calls([("read", {"path": "a.txt"})], ids=True, signatures=True))
        ...  # point the code under test at fake.kimi_base_url, fake.base_url("gemini")
        assert fake.violations == []
        assert len(fake.kimi.requests) == 2
"""

from .anthropic import CLAUDE_MODEL, AnthropicRoute, anthropic_sse_events, anthropic_text, anthropic_tool_use
from .anthropic_rules import ANTHROPIC_VERSION, IssuedThinking, validate_anthropic_request
from .cohere import (
    COHERE_MODEL,
    CohereRoute,
    cohere_sse_events,
    cohere_text,
    cohere_tool_calls,
    validate_cohere_request,
)
from .gemini import GEMINI_MODEL, GeminiRoute, gemini_sse_events, gemini_text, gemini_tool_calls
from .gemini_rules import SKIP_SIGNATURE, IssuedParts, is_gemini_3, validate_gemini_request
from .ids import (
    cohere_call_id,
    gemini_call_id,
    k2_call_id,
    mistral_call_id,
    ollama_call_id,
    openai_call_id,
    thought_signature,
)
from .kimi import (
    KIMI_MODEL,
    is_kimi_model,
    is_kimi_thinking_model,
    k2_id_problems,
    kimi_reasoning_problems,
    kimi_sse_events,
    kimi_text,
    kimi_tool_calls,
    validate_kimi_request,
)
from .ollama import (
    OLLAMA_MODEL,
    OllamaRoute,
    ollama_ndjson_lines,
    ollama_text,
    ollama_tool_calls,
    validate_ollama_request,
)
from .openai_family import OPENAI_HOSTS, KimiRoute, OpenAIChatRoute, OpenAIHost, validate_openai_request
from .openai_family_rules import (
    OPENAI_MODEL_FAMILIES,
    ModelFamily,
    fireworks_problems,
    mistral_problems,
    openai_model_family,
    openai_problems,
    openrouter_problems,
    tool_pairing_problems,
)
from .openai_wire import (
    MISTRAL_MODEL,
    OPENAI_MODEL,
    mistral_text,
    mistral_tool_calls,
    openai_error_event,
    openai_sse_events,
    openai_text,
    openai_tool_calls,
)
from .replies import (
    ErrorReply,
    MessageReply,
    RawBodyReply,
    RawStreamReply,
    Reply,
    SseEvent,
    error,
    message,
    ndjson_frame,
    raw_body,
    raw_ndjson,
    raw_stream,
    sse_frame,
)
from .routes import Disconnect, Problem, RecordedRequest, Route, request_key
from .server import FakeUpstream

__all__ = [
    "ANTHROPIC_VERSION",
    "CLAUDE_MODEL",
    "COHERE_MODEL",
    "GEMINI_MODEL",
    "KIMI_MODEL",
    "MISTRAL_MODEL",
    "OLLAMA_MODEL",
    "OPENAI_HOSTS",
    "OPENAI_MODEL",
    "OPENAI_MODEL_FAMILIES",
    "SKIP_SIGNATURE",
    "AnthropicRoute",
    "CohereRoute",
    "Disconnect",
    "ErrorReply",
    "FakeUpstream",
    "GeminiRoute",
    "IssuedParts",
    "IssuedThinking",
    "KimiRoute",
    "MessageReply",
    "ModelFamily",
    "OllamaRoute",
    "OpenAIChatRoute",
    "OpenAIHost",
    "Problem",
    "RawBodyReply",
    "RawStreamReply",
    "RecordedRequest",
    "Reply",
    "Route",
    "SseEvent",
    "anthropic_sse_events",
    "anthropic_text",
    "anthropic_tool_use",
    "cohere_call_id",
    "cohere_sse_events",
    "cohere_text",
    "cohere_tool_calls",
    "error",
    "fireworks_problems",
    "gemini_call_id",
    "gemini_sse_events",
    "gemini_text",
    "gemini_tool_calls",
    "is_gemini_3",
    "is_kimi_model",
    "is_kimi_thinking_model",
    "k2_call_id",
    "k2_id_problems",
    "kimi_reasoning_problems",
    "kimi_sse_events",
    "kimi_text",
    "kimi_tool_calls",
    "message",
    "mistral_call_id",
    "mistral_problems",
    "mistral_text",
    "mistral_tool_calls",
    "ndjson_frame",
    "ollama_call_id",
    "ollama_ndjson_lines",
    "ollama_text",
    "ollama_tool_calls",
    "openai_call_id",
    "openai_error_event",
    "openai_model_family",
    "openai_problems",
    "openai_sse_events",
    "openai_text",
    "openai_tool_calls",
    "openrouter_problems",
    "raw_body",
    "raw_ndjson",
    "raw_stream",
    "request_key",
    "sse_frame",
    "thought_signature",
    "tool_pairing_problems",
    "validate_anthropic_request",
    "validate_cohere_request",
    "validate_gemini_request",
    "validate_kimi_request",
    "validate_ollama_request",
    "validate_openai_request",
]
