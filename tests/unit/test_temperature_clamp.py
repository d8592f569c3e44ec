"""A temperature outside what the provider and model accept is clamped into range, with a warning;
one inside it (or none) is sent as given."""

from __future__ import annotations

import json

import httpx
import pytest

from colibri_router.adapters import run_completion
from colibri_router.conversation import CompletionRequest, user_prompt
from colibri_router.progress import CallProgress
from colibri_router.providers import BUILTIN, Connection
from colibri_router.retry import Deadline
from colibri_router.wires import codec_for

ANSWER = {
    "id": "c1",
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}


async def sent_temperature(provider: str, model: str, temperature: float | None) -> tuple[object, tuple[str, ...]]:
    sent: list[dict[str, object]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=ANSWER)

    async with httpx.AsyncClient(transport=httpx.MockTransport(respond)) as client:
        completion = await run_completion(
            codec_for(BUILTIN[provider], model),
            CompletionRequest(model=model, messages=user_prompt("hi"), max_tokens=16, temperature=temperature),
            Connection(api_key="k", base_url="http://upstream.test/v1"),
            deadline=Deadline.after(10),
            progress=CallProgress(provider),
            client=client,
            log=lambda _: None,
        )
    return sent[0].get("temperature"), completion.turn.warnings


@pytest.mark.parametrize(
    ("temperature", "sent"), [(1.7, 1.0), (-0.5, 0.0)], ids=["above the model's 1.0", "below zero"]
)
async def test_out_of_range_is_clamped_with_a_warning(temperature: float, sent: float) -> None:
    value, warnings = await sent_temperature("kimi", "kimi-k2-0905-preview", temperature)

    assert value == sent
    assert [w for w in warnings if "clamped" in w] == [
        f"temperature {temperature:g} clamped to {sent:g} (kimi accepts 0-1)"
    ]


@pytest.mark.parametrize("temperature", [None, 0.0, 0.7, 1.0])
async def test_in_range_or_absent_is_sent_as_given(temperature: float | None) -> None:
    value, warnings = await sent_temperature("kimi", "kimi-k2-0905-preview", temperature)

    assert value == temperature
    assert not [w for w in warnings if "clamped" in w]


async def test_the_hosts_range_applies_to_models_without_their_own() -> None:
    value, warnings = await sent_temperature("openai", "gpt-4.1-mini", 2.5)

    assert value == 2.0
    assert any("clamped to 2 (openai accepts 0-2)" in w for w in warnings)
