"""The one internal call object (``router/call.py``): made once where a call enters, files read once and
appended as parts (an agent gets their paths, never their text), options copied by name from the tool's
input; the tool's pydantic models carry no call state; services import no other service."""

from __future__ import annotations

import ast
import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from fake_upstream import FakeUpstream, anthropic_text, openai_text
from hypothesis import given
from hypothesis import strategies as st

from colibri_router import store as store_module
from colibri_router.ask_many.schema import RouterAskManyInput
from colibri_router.ask_many.service import ask_many
from colibri_router.call.service import serve
from colibri_router.context import FileRead, Reading
from colibri_router.conversation import Message, Text, ToolChoice, ToolSpec
from colibri_router.errors import InvalidRequestError
from colibri_router.providers import BUILTIN
from colibri_router.router import attachments
from colibri_router.router.call import Call, Options, call_from
from colibri_router.schema import RouterCallInput, RouterCallResult

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "colibri_router"
SERVICES = ("call", "ask_many", "catalog", "history", "testing")
BELOW_THE_SERVICES = ("router", "providers", "context", "wires", "engine", "agents", "media", "store")
SONNET, GPT = "claude-sonnet-4-5", "gpt-4.1"


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports, at its top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def _service_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "colibri_router" and parts[1] in SERVICES else None


def test_services_import_no_other_service_and_nothing_below_them_imports_one() -> None:
    crossing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = path.relative_to(PACKAGE).parts[0]
        for module in _imported(path):
            service = _service_of(module)
            if service is None or service == own:
                continue
            if own in SERVICES or own in BELOW_THE_SERVICES or own in {"served.py", "accounting.py"}:
                crossing.append(f"{path.relative_to(ROOT)} imports {module}")
    assert crossing == []


def test_the_tool_models_carry_no_call_state() -> None:
    assert RouterCallInput.__private_attributes__ == {}
    assert RouterCallResult.__private_attributes__ == {}


def test_every_option_is_copied_by_name_from_router_calls_input() -> None:
    assert {option.name for option in fields(Options)} <= set(RouterCallInput.model_fields)


tools = st.lists(
    st.builds(
        dict,
        name=st.sampled_from(["read_file", "grep", "run"]),
        input_schema=st.just({"type": "object"}),
    ),
    max_size=2,
    unique_by=lambda tool: tool["name"],
)


@given(
    model=st.none() | st.sampled_from([SONNET, "openai:gpt-4.1", "sonnet"]),
    fallback=st.none() | st.lists(st.sampled_from([GPT, "haiku"]), max_size=2),
    tools=tools,
    choice=st.none() | st.sampled_from(["auto", "none", "required"]),
    max_tokens=st.none() | st.integers(1, 10_000),
    temperature=st.none() | st.floats(0, 2),
    reasoning=st.none() | st.sampled_from(["off", "low", "high"]),
    timeout_s=st.none() | st.floats(0.5, 600),
    max_cost_usd=st.none() | st.floats(0, 5),
)
def test_options_are_the_inputs_fields_in_their_internal_shape(
    model: str | None,
    fallback: list[str] | None,
    tools: list[dict[str, Any]],
    choice: str | None,
    max_tokens: int | None,
    temperature: float | None,
    reasoning: str | None,
    timeout_s: float | None,
    max_cost_usd: float | None,
) -> None:
    args = RouterCallInput.model_validate(
        {
            "prompt": "hi",
            "model": model,
            "fallback": fallback,
            "tools": tools or None,
            "tool_choice": choice,
            "system_prompt": "be brief",
            "max_tokens": max_tokens,
            "temperature": temperature,
            "reasoning": reasoning,
            "timeout_s": timeout_s,
            "max_cost_usd": max_cost_usd,
        }
    )
    call = call_from(args)
    assert call.conversation == (Message("user", (Text("hi"),)),)
    assert call.options == Options(
        provider=None,
        model=model,
        fallback=None if fallback is None else tuple(fallback),
        tools=tuple(ToolSpec(name=t["name"], input_schema=t["input_schema"]) for t in tools),
        tool_choice=None if choice is None else ToolChoice(mode=choice),  # type: ignore[arg-type]
        system_prompt="be brief",
        max_tokens=max_tokens,
        temperature=temperature,
        reasoning=reasoning,  # type: ignore[arg-type]
        timeout_s=timeout_s,
        max_cost_usd=max_cost_usd,
    )


def _reading() -> Reading:
    block = '\n<file path="a.py">\n  1│ SECRET = 1\n</file>\n'
    return Reading([Text(block)], [FileRead("a.py", 11, 10)], [])


CONVERSATIONS = [
    [{"role": "user", "content": "Review it"}],
    [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "Review it"}]},
        {"role": "assistant", "content": "thinking aloud"},
    ],
]


@pytest.mark.parametrize("messages", CONVERSATIONS)
def test_files_go_into_the_last_user_turn_as_parts_or_as_paths_for_an_agent(messages: list[dict[str, Any]]) -> None:
    call = call_from(RouterCallInput.model_validate({"messages": messages}), _reading())
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")

    inlined = call.messages()
    assert inlined[last].parts == (Text("Review it"), *_reading().parts)
    assert [m for i, m in enumerate(inlined) if i != last] == [m for i, m in enumerate(call.conversation) if i != last]

    for_agent = call.messages(files_as_paths=True)
    assert for_agent[last].parts[0] == Text("Review it")
    assert "- a.py" in for_agent[last].parts[-1].text  # type: ignore[union-attr]
    assert "SECRET" not in json.dumps([repr(m) for m in for_agent])
    assert call.conversation[last].parts == (Text("Review it"),)  # the call itself never changes


def test_files_without_a_user_turn_are_refused_where_the_call_enters() -> None:
    args = RouterCallInput.model_validate({"messages": [{"role": "assistant", "content": "hi"}]})
    with pytest.raises(InvalidRequestError, match="last user turn"):
        call_from(args, _reading())
    assert isinstance(call_from(args), Call)  # without files there is nothing to place


@pytest.fixture
def counted_reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[list[str]]:
    """Each time the workspace is read for ``files``."""
    (tmp_path / "migrate.sql").write_text("ALTER TABLE users DROP COLUMN email;\n")
    monkeypatch.setenv("COLIBRI_WORKSPACE", str(tmp_path))
    reads: list[list[str]] = []
    original = attachments.gather

    def gather(entries: list[str], *args: Any, **kwargs: Any) -> Reading:
        reads.append(entries)
        return original(entries, *args, **kwargs)

    monkeypatch.setattr(attachments, "gather", gather)
    return reads


async def test_router_call_on_a_thread_reads_its_files_once(
    counted_reads: list[list[str]], fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _on_the_fake(fake_upstream, monkeypatch)
    monkeypatch.setenv("COLIBRI_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(store_module, "_shared", {})
    fake_upstream.anthropic.enqueue(anthropic_text("unsafe"), anthropic_text("still unsafe"))

    args = {"prompt": "Review", "model": SONNET, "files": ["migrate.sql"], "thread_id": "new"}
    first = await serve(RouterCallInput.model_validate(args))
    again = {"prompt": "And now?", "model": SONNET, "thread_id": first.thread_id}
    await serve(RouterCallInput.model_validate(again))

    assert counted_reads == [["migrate.sql"]]
    bodies = _chat_bodies(fake_upstream)
    assert len(bodies) == 2 and all("DROP COLUMN email" in body for body in bodies)  # the thread kept the file


def _on_the_fake(fake: FakeUpstream, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, route in {"claude": "anthropic", "openai": "openai"}.items():
        monkeypatch.setenv(BUILTIN[name].base_url_env, fake.base_url(route))
        monkeypatch.setenv(BUILTIN[name].key_envs[0], f"sk-{name}-test-0123456789")


def _chat_bodies(fake: FakeUpstream) -> list[str]:
    return [json.dumps(request.body) for request in fake.requests if request.endpoint == "chat"]


async def test_router_ask_many_reads_its_files_once_for_every_model_and_the_judge(
    counted_reads: list[list[str]], fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    _on_the_fake(fake_upstream, monkeypatch)
    fake_upstream.anthropic.enqueue(anthropic_text("sonnet: unsafe"), anthropic_text("A and B agree. AGREEMENT: 1"))
    fake_upstream.route("openai").enqueue(openai_text("gpt: unsafe", model=GPT))
    asked = {"prompt": "Safe?", "models": [SONNET, GPT], "judge": SONNET, "files": ["migrate.sql"], "max_cost_usd": 5}

    result = await ask_many(RouterAskManyInput.model_validate(asked))

    assert counted_reads == [["migrate.sql"]]
    assert result.verdict is not None and result.verdict.agreement == 1
    bodies = _chat_bodies(fake_upstream)
    assert sum("DROP COLUMN email" in body for body in bodies) == 2  # each model; the judge sees the question
