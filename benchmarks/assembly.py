"""Benchmark 5: stream assembly without a network, in MB/s and in peak memory.

Throughput: a tool call whose arguments arrive as many small deltas (3-12 characters, token-sized
like K2's), fed event by event into ``OpenAIStreamAssembler`` (chat.completion.chunk payloads) and
``AnthropicStreamAssembler`` (input_json_delta events), through ``result()``. MB/s counts the bytes
of the SSE data payloads (1 MB = 10^6 bytes). The baseline, interleaved round by round, is a bare
``json.loads`` of every payload, the least any assembler has to do; the ratio says what assembling
costs on top. No target: the figures are reported.

Memory: the same kind of stream, generated lazily up to a size in bytes, assembled under
``tracemalloc``. Memory should stay flat in the length of the stream except for the assembled
content itself, so the peak over the content (the arguments string) should not grow with the
stream: it is measured at the full size and at a tenth of it, and the target is that the two
ratios agree within 15%. The level of the ratio (the per-delta overhead) is reported too.
"""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import cycle

from benchmarks.measure import Plan, Report, Row, interleave_self_timed, median, paired_ratios
from colibri_router.toolcalls.assembly import StreamAssembler
from colibri_router.wires.anthropic.assembly import AnthropicStreamAssembler
from colibri_router.wires.openai.assembly import OpenAIStreamAssembler

FLAT_TOLERANCE = 0.15  # peak/content at the full size within 15% of peak/content at a tenth of it
Event = tuple[str, str]  # (SSE event name, data), as httpx_sse hands them to the transport
_TEXT = "the quick brown fox jumps over the lazy dog while seven wizards quietly judge boxing matches "
_PIECE_SIZES = (3, 7, 12, 5, 9, 4, 11, 6, 8, 10)

_OPENAI_HEAD = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"kimi-k2"'
_OPENAI_DELTA = _OPENAI_HEAD + ',"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":'
_OPENAI_DELTA_END = '}}]},"finish_reason":null}]}'
_ANTHROPIC_DELTA = '{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":'


@dataclass(frozen=True, slots=True)
class Sizes:
    deltas: int  # argument deltas per stream in the throughput rounds
    rounds: Plan
    memory_bytes: int  # size of the data payloads of the memory stream


@dataclass(frozen=True, slots=True)
class Style:
    name: str
    assembler: Callable[[], StreamAssembler]
    head: Callable[[], list[Event]]
    delta: Callable[[str], Event]
    tail: Callable[[], list[Event]]
    arguments: Callable[[dict[str, object]], str]  # the assembled arguments, from result()


def _openai_head() -> list[Event]:
    role = _OPENAI_HEAD + ',"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}'
    call = {"index": 0, "id": "functions.write:0", "type": "function", "function": {"name": "write", "arguments": ""}}
    named = _OPENAI_HEAD + ',"choices":[{"index":0,"delta":{"tool_calls":[' + json.dumps(call) + "]}}]}"
    return [("message", role), ("message", named)]


def _openai_tail() -> list[Event]:
    finish = _OPENAI_HEAD + ',"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}'
    usage = _OPENAI_HEAD + ',"choices":[],"usage":{"prompt_tokens":20,"completion_tokens":10,"total_tokens":30}}'
    return [("message", finish), ("message", usage), ("message", "[DONE]")]


def _openai_arguments(body: dict[str, object]) -> str:
    return body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]  # type: ignore[index,no-any-return]


def _anthropic_head() -> list[Event]:
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "claude", "content": []}
    start = {"type": "message_start", "message": {**message, "usage": {"input_tokens": 20, "output_tokens": 1}}}
    block = {"type": "tool_use", "id": "toolu_bench", "name": "write", "input": {}}
    return [
        ("message_start", json.dumps(start)),
        ("content_block_start", json.dumps({"type": "content_block_start", "index": 0, "content_block": block})),
    ]


def _anthropic_tail() -> list[Event]:
    delta = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 10}}
    return [
        ("content_block_stop", '{"type":"content_block_stop","index":0}'),
        ("message_delta", json.dumps(delta)),
        ("message_stop", '{"type":"message_stop"}'),
    ]


def _anthropic_arguments(body: dict[str, object]) -> str:
    # The assembler parses the arguments into `input`; what streamed is its JSON text.
    return json.dumps(body["content"][0]["input"])  # type: ignore[index]


OPENAI = Style(
    name="OpenAI chunks → OpenAIStreamAssembler",
    assembler=OpenAIStreamAssembler,
    head=_openai_head,
    delta=lambda piece: ("message", f"{_OPENAI_DELTA}{json.dumps(piece)}{_OPENAI_DELTA_END}"),
    tail=_openai_tail,
    arguments=_openai_arguments,
)
ANTHROPIC = Style(
    name="Anthropic input_json_delta → AnthropicStreamAssembler",
    assembler=AnthropicStreamAssembler,
    head=_anthropic_head,
    delta=lambda piece: ("content_block_delta", f"{_ANTHROPIC_DELTA}{json.dumps(piece)}}}}}"),
    tail=_anthropic_tail,
    arguments=_anthropic_arguments,
)


def argument_pieces() -> Iterator[str]:
    """Endless token-sized pieces of ``{"path": "notes.md", "content": "<words…>`` (close with ``'"}'``)."""
    yield '{"path": "notes.md", '
    yield '"content": "'
    doubled = _TEXT * 2
    position = 0
    for size in cycle(_PIECE_SIZES):
        yield doubled[position : position + size]
        position = (position + size) % len(_TEXT)


def stream(style: Style, *, deltas: int | None = None, data_bytes: int | None = None) -> Iterator[Event]:
    """A whole stream, lazily: ``deltas`` argument deltas, or as many as make ``data_bytes`` of data."""
    yield from style.head()
    sent = 0
    for count, piece in enumerate(argument_pieces()):
        if (deltas is not None and count >= deltas) or (data_bytes is not None and sent >= data_bytes):
            break
        event = style.delta(piece)
        sent += len(event[1])
        yield event
    yield style.delta('"}')
    yield from style.tail()


def assemble(style: Style, events: Iterator[Event] | list[Event]) -> dict[str, object]:
    """Feed ``events`` into a fresh assembler; the body it rebuilt."""
    assembler = style.assembler()
    for event, data in events:
        assembler.feed(event, data)
    return assembler.result()


async def _throughput(style: Style, sizes: Sizes) -> Row:
    events = list(stream(style, deltas=sizes.deltas))
    megabytes = sum(len(data) for _, data in events) / 1e6
    expected = json.loads(style.arguments(assemble(style, events)))  # also checks the stream is well formed
    if not str(expected["content"]).startswith("the quick"):
        raise RuntimeError(f"{style.name}: unexpected arguments {str(expected)[:80]!r}")

    async def assembler_arm() -> float:
        start = time.perf_counter()
        assemble(style, events)
        return time.perf_counter() - start

    async def json_arm() -> float:
        start = time.perf_counter()
        for _, data in events:
            if data != "[DONE]":
                json.loads(data)
        return time.perf_counter() - start

    assembler_s, json_s = await interleave_self_timed([assembler_arm, json_arm], sizes.rounds)
    ratio = median(paired_ratios(assembler_s, json_s))
    measured = (
        f"{megabytes / median(assembler_s):.1f} MB/s, {sizes.deltas / median(assembler_s) / 1e3:.0f}k deltas/s "
        f"({sizes.deltas // 1000}k deltas, {megabytes:.1f} MB; {ratio:.2f}x the time of bare json.loads, "
        f"median of {len(assembler_s)} rounds)"
    )
    return Row(f"5 assembly throughput, {style.name}", measured, "— (report)", None)


def peak_ratio(style: Style, data_bytes: int) -> tuple[float, int, int]:
    """(peak traced memory / assembled content size, peak bytes, content bytes) for one stream."""
    gc.collect()
    events = stream(style, data_bytes=data_bytes)  # lazy: one event alive at a time
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        body = assemble(style, events)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    content = len(style.arguments(body))
    return peak / content, peak, content


def _memory(style: Style, data_bytes: int) -> Row:
    small, _, _ = peak_ratio(style, data_bytes // 10)
    ratio, peak, content = peak_ratio(style, data_bytes)
    change = ratio / small - 1
    measured = (
        f"{ratio:.2f}x content at {data_bytes / 1e6:g} MB vs {small:.2f}x at {data_bytes / 1e7:g} MB: "
        f"{change:+.1%} ({peak / 1e6:.1f} MB peak for {content / 1e6:.1f} MB of arguments)"
    )
    name = f"5 assembly peak memory / content, {style.name.split(' → ')[1]}"
    target = f"flat: within ±{FLAT_TOLERANCE:.0%} at 10x the size"
    return Row(name, measured, target, abs(change) <= FLAT_TOLERANCE)


async def run(sizes: Sizes) -> Report:
    rows = [await _throughput(style, sizes) for style in (OPENAI, ANTHROPIC)]
    rows += [_memory(style, sizes.memory_bytes) for style in (OPENAI, ANTHROPIC)]
    return Report(rows)
