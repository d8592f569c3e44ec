"""The strict fake refuses what the real services refuse for structured output, so the router's tests
pass only when its requests are right (issue 35, Tests)."""

from __future__ import annotations

from fake_upstream import validate_anthropic_request, validate_gemini_request, validate_openai_request
from fake_upstream.structured_rules import ANTHROPIC_BETA, cohere_output_problems

OPTIONAL = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}
CLOSED = {**OPTIONAL, "required": ["a", "b"], "additionalProperties": False}
ASK = [{"role": "user", "content": "Classify this."}]


def openai(response_format: dict, host: str = "openai", messages: list | None = None) -> list[str]:
    body = {"model": "gpt-4.1", "messages": messages or ASK, "response_format": response_format}
    return validate_openai_request(body, host=host)


def strict(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}


def test_openai_strict_needs_every_property_required_and_objects_closed() -> None:
    assert any("Missing 'b'" in p for p in openai(strict({**OPTIONAL, "additionalProperties": False})))
    assert any("additionalProperties" in p for p in openai(strict({**OPTIONAL, "required": ["a", "b"]})))
    assert openai(strict(CLOSED)) == []
    assert any("'minLength' is not permitted" in p for p in openai(strict({**CLOSED, "minLength": 1})))
    assert openai({"type": "json_schema", "json_schema": {"name": "answer", "schema": OPTIONAL}}) == []


def test_json_object_needs_a_message_that_says_json() -> None:
    for host in ("openai", "deepseek", "siliconflow"):
        assert any("must contain the word 'json'" in p for p in openai({"type": "json_object"}, host))
        assert openai({"type": "json_object"}, host, [{"role": "user", "content": "Answer in JSON."}]) == []
    assert openai({"type": "json_object"}, "lmstudio", [{"role": "user", "content": "JSON"}]) != []


def test_anthropic_beta_field_needs_its_header_and_output_config_needs_closed_objects() -> None:
    base = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": ASK}
    headers = {"x-api-key": "sk-ant-test-0123456789", "anthropic-version": "2023-06-01"}
    beta = {**base, "output_format": {"type": "json_schema", "schema": CLOSED}}
    assert any("beta header" in p for p in validate_anthropic_request(beta, headers))
    assert validate_anthropic_request(beta, {**headers, "anthropic-beta": ANTHROPIC_BETA}) == []
    ga = {**base, "output_config": {"format": {"type": "json_schema", "schema": OPTIONAL}}}
    assert any("additionalProperties" in p for p in validate_anthropic_request(ga, headers))
    closed = {**base, "output_config": {"format": {"type": "json_schema", "schema": {**CLOSED, "minimum": 1}}}}
    assert any("'minimum' is not supported" in p for p in validate_anthropic_request(closed, headers))


def test_gemini_takes_only_its_subset_and_json_mime_type() -> None:
    def body(config: dict) -> dict:
        return {"contents": [{"role": "user", "parts": [{"text": "x"}]}], "generationConfig": config}

    json_out = {"responseMimeType": "application/json"}
    assert validate_gemini_request(body({**json_out, "responseJsonSchema": OPTIONAL}), model="gemini-2.5-flash") == []
    wrong = {**json_out, "responseJsonSchema": {**OPTIONAL, "const": 1}}
    assert any('Unknown name "const"' in p for p in validate_gemini_request(body(wrong), model="gemini-2.5-flash"))
    assert validate_gemini_request(body({"responseJsonSchema": OPTIONAL}), model="gemini-2.5-flash") != []


def test_cohere_refuses_a_response_format_with_tools() -> None:
    assert cohere_output_problems({"response_format": {"type": "json_object"}, "tools": [{"type": "function"}]}) != []
    assert cohere_output_problems({"response_format": {"type": "json_object", "json_schema": OPTIONAL}}) == []
