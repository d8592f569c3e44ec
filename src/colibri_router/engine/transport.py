"""One HTTP exchange with an upstream, for every provider: POST JSON, read the answer, map failures.

The answer is read the same way whatever the provider or its framing: an SSE stream (or a body that
starts with ``data:`` under a wrong content type) is fed event by event to the codec's assembler, an
NDJSON stream (Ollama, and OpenAI-wire hosts that label their chunks ``application/x-ndjson``) line
by line, and both rebuild the body a non-streamed call would have returned; a JSON answer (an upstream
or proxy that ignored ``stream: true``) is decoded as is. Either way the codec's decoder sees one
shape. httpx failures are mapped here and only here, into the provider's
:class:`~colibri_router.errors.ApiError`; what an error body means is the codec's to say.
"""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx
from httpx_sse import EventSource, ServerSentEvent

from colibri_router.engine.classify import classify
from colibri_router.errors import ApiError
from colibri_router.progress import CallProgress
from colibri_router.toolcalls.assembly import StreamAssembler, StreamErrorEvent, StreamProtocolError

if TYPE_CHECKING:
    from colibri_router.wires.base import WireCodec

# An error event at the very start of a stream (nothing produced, nothing billed) is load shedding.
RETRYABLE_EVENT_TYPES = frozenset({"overloaded_error", "rate_limit_error", "api_error"})
_SSE = "text/event-stream"
_NDJSON = ("application/x-ndjson", "application/jsonl", "application/json-lines")
# One encoder for every request body: json.dumps with any option builds a new encoder per call.
_JSON = json.JSONEncoder(ensure_ascii=False)


async def exchange(
    client: httpx.AsyncClient,
    url: str,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    *,
    codec: WireCodec,
    progress: CallProgress,
) -> dict[str, Any]:
    """POST ``body`` and return the provider's response body (assembled when streamed)."""
    payload = _JSON.encode(body).encode()
    try:
        # What client.stream() does, without the generator-based context manager around it.
        request = client.build_request(
            "POST", _parsed_url(url), headers=_post_headers(tuple(headers.items())), content=payload
        )
        response = await client.send(request, stream=True)
        try:
            if not response.is_success:
                await response.aread()
                raise http_error(response, codec)
            content_type = response.headers.get("content-type", "")
            if content_type.startswith(_SSE):
                return await _assemble(EventSource(response).aiter_sse(), response, codec, progress)
            if content_type.startswith(_NDJSON):
                return await _assemble(_ndjson_lines(response), response, codec, progress)
            raw = await response.aread()
            if raw.lstrip().startswith((b"data:", b"event:")):
                # A streamed answer under a wrong content type is still a stream, not "not JSON".
                return await _assemble(_sse_from_bytes(raw), response, codec, progress)
            return json_object(raw, codec, response.status_code)
        finally:
            await response.aclose()
    except httpx.TransportError as exc:
        raise _network_error(codec, url, exc) from exc


@functools.lru_cache(maxsize=64)
def _parsed_url(url: str) -> httpx.URL:
    """The parsed URL, kept: every call to an endpoint posts to the same few URLs, and parsing one
    costs httpx more than the rest of building the request (an ``httpx.URL`` is immutable)."""
    return httpx.URL(url)


@functools.lru_cache(maxsize=64)
def _post_headers(headers: tuple[tuple[str, str], ...]) -> httpx.Headers:
    """The endpoint's headers with the body's type and the answers we read, normalized once per
    endpoint and key (kept in this process's memory, like the environment that holds the key): httpx
    copies the object it is given into each request, never changing it."""
    return httpx.Headers(
        {**dict(headers), "content-type": "application/json", "accept": f"{_SSE}, application/x-ndjson"}
    )


async def get_json(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], *, codec: WireCodec
) -> dict[str, Any]:
    """GET a JSON object (a model list), its failures mapped like an exchange's."""
    try:
        response = await client.get(url, headers=headers)
    except httpx.TransportError as exc:
        raise _network_error(codec, url, exc) from exc
    if not response.is_success:
        raise http_error(response, codec)
    return json_object(response.content, codec, response.status_code)


def http_error(response: httpx.Response, codec: WireCodec) -> ApiError:
    status = response.status_code
    said = codec.read_error(status, response.headers, response.content)  # httpx headers ignore case
    retryable = said.retryable if said.retryable is not None else (status == 429 or status >= 500)
    label = f" {said.error_type}" if said.error_type else ""
    phrases = codec.dialect.provider.error_phrases
    return codec.dialect.errors.api(
        f"HTTP {status}{label}: {said.message}",
        status=status,
        error_type=said.error_type,
        retryable=retryable,
        retry_after=said.retry_after_s,
        kind=said.kind or classify(status, (said.error_type, *said.labels), said.message, phrases),
    )


def json_object(raw: bytes, codec: WireCodec, status: int) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise codec.dialect.errors.api(f"malformed response body: not JSON ({exc})", status=status) from exc
    if not isinstance(value, dict):
        raise codec.dialect.errors.api(
            f"malformed response body: a JSON {type(value).__name__}, not an object", status=status
        )
    return value


async def _ndjson_lines(response: httpx.Response) -> AsyncIterator[ServerSentEvent]:
    async for line in response.aiter_lines():
        if line.strip():
            yield ServerSentEvent(data=line)


async def _sse_from_bytes(raw: bytes) -> AsyncIterator[ServerSentEvent]:
    """SSE records parsed from a body already read whole (a host that sent a stream as JSON)."""
    event = ""
    data: list[str] = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if not line:
            if data:
                yield ServerSentEvent(event=event or "message", data="\n".join(data))
            event, data = "", []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif line.startswith("event:"):
            event = line[6:].strip()
    if data:
        yield ServerSentEvent(event=event or "message", data="\n".join(data))


async def _assemble(
    events: AsyncIterator[ServerSentEvent],
    response: httpx.Response,
    codec: WireCodec,
    progress: CallProgress,
) -> dict[str, Any]:
    assembler: StreamAssembler = codec.new_assembler()
    status = response.status_code
    try:
        # Every framing arrives as SSE events (an NDJSON line is an unnamed event), read directly:
        # a wrapping generator would cost a step per event.
        async for event in events:
            label = assembler.feed(event.event, event.data)
            if assembler.started:
                progress.mark_first_token()
            progress.output_chars = assembler.output_chars
            if label is not None:
                await progress.block(label)
        return assembler.result()
    except StreamErrorEvent as exc:
        kind = exc.error_type or "error"
        phrases = codec.dialect.provider.error_phrases
        raise codec.dialect.errors.api(
            f"upstream sent an error event mid-stream: {kind}: {exc.message}",
            status=status,
            error_type=exc.error_type,
            retryable=not assembler.started and exc.error_type in RETRYABLE_EVENT_TYPES,
            # A 200 carried it: the status says nothing; the event's type and text decide.
            kind=classify(status, (exc.error_type,), exc.message, phrases),
        ) from exc
    except StreamProtocolError as exc:
        # A cut stream is not retried: its tokens were already billed.
        raise codec.dialect.errors.api(str(exc), status=status) from exc
    except httpx.TransportError as exc:
        raise codec.dialect.errors.api(
            f"stream was cut: the connection failed after {assembler.output_chars} characters "
            f"of output ({_describe(exc)})",
            status=status,
            kind="NETWORK_ERROR",
        ) from exc


def _network_error(codec: WireCodec, url: str, exc: httpx.TransportError) -> ApiError:
    # A network failure (docs/errors.md, Retries) is a config/DNS/firewall problem, not load: no retry.
    return codec.dialect.errors.api(f"network error calling {url}: {_describe(exc)}", kind="NETWORK_ERROR")


def _describe(exc: Exception) -> str:
    detail = str(exc)
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
