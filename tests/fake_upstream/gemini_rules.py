"""What the Gemini API refuses (400 INVALID_ARGUMENT unless said otherwise).

Contents: roles user/model, no empty ``parts``, one data field per part (``{"text": ""}`` only with a
thoughtSignature). Function calling: a model turn with functionCall parts follows a user turn (text or
function responses) and is followed by ONE user turn with as many functionResponse parts, names
matching, IDs echoed exactly when the call had one, ``response`` an object. Gemini 3: the first
functionCall of every model turn carries a thoughtSignature (Gemini's own, or the documented
``skip_thought_signature_validator``). Given what the service issued (``IssuedParts``), signed parts and
call IDs must come back unchanged and no unknown signature or call ID may appear. Config:
``toolConfig.functionCallingConfig`` mode AUTO/ANY/NONE/VALIDATED (``allowedFunctionNames`` only with
ANY/VALIDATED); tools with ``functionDeclarations`` (valid names, ``parameters`` or
``parametersJsonSchema``, not both). Not enforced: Gemini 2.x refusing ``id`` on function parts (the
evidence conflicts, PROVIDER-FACTS §2.4).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .media_rules import gemini_media_problems
from .routes import Problem, lower_keys, objects, one_of
from .structured_rules import gemini_output_problems

SKIP_SIGNATURE = "skip_thought_signature_validator"
GEMINI_ROLES = frozenset({"user", "model"})
GEMINI_MODES = frozenset({"AUTO", "ANY", "NONE", "VALIDATED"})
_DATA_FIELDS = frozenset(
    {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"}
)
_FUNCTION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}")


def _camel_and_snake(*names: str) -> frozenset[str]:
    """Protobuf JSON accepts a field by its lowerCamel name and by its original snake_case one."""
    return frozenset(names) | {re.sub(r"[A-Z]", lambda m: "_" + m[0].lower(), name) for name in names}


TOOL_FIELDS = _camel_and_snake(
    "functionDeclarations", "googleSearch", "googleSearchRetrieval", "codeExecution", "urlContext",
    "fileSearch", "computerUse", "googleMaps", "retrieval", "enterpriseWebSearch",
)  # fmt: skip
DECLARATION_FIELDS = _camel_and_snake(
    "name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema", "behavior"
)


@dataclass
class IssuedParts:
    """What a Gemini route handed out: signature → the part that carried it, call ID → its functionCall."""

    signatures: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)

    def copy(self) -> IssuedParts:
        return IssuedParts(dict(self.signatures), dict(self.calls))

    def remember(self, parts: Iterable[Mapping[str, Any]]) -> None:
        for part in parts:
            if isinstance(part.get("thoughtSignature"), str):
                self.signatures[part["thoughtSignature"]] = dict(part)
            call = part.get("functionCall")
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                self.calls[call["id"]] = dict(call)


def is_gemini_3(model: str) -> bool:
    """Gemini 3 and later require thought signatures on function calls."""
    match = re.match(r"gemini-(\d+)", model)
    return match is not None and int(match[1]) >= 3


def validate_gemini_request(
    body: Any, headers: Mapping[str, str] | None = None, *, model: str, issued: IssuedParts | None = None
) -> list[Problem]:
    """Why Gemini would refuse this generateContent request for ``model``; ``[]`` if it would accept it.

    ``headers=None`` skips the key check (``x-goog-api-key``). ``issued``: what the service handed out,
    checked for coming back unchanged (see the module docstring); None skips those checks.
    """
    problems = gemini_auth_problems(headers) if headers is not None else []
    if not isinstance(body, dict):
        return [*problems, _invalid("Invalid JSON payload received: the body must be a JSON object")]
    problems += _config_problems(body)
    config = body.get("generationConfig")
    problems += gemini_output_problems(config if isinstance(config, dict) else {})
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return [*problems, _invalid("* GenerateContentRequest.contents: contents is not specified")]
    for i, content in enumerate(contents):
        problems += _content_problems(i, content)
    problems += gemini_media_problems(contents)
    if problems:  # the turn rules below read well-formed contents only
        return problems
    for i, content in enumerate(contents):
        problems += _turn_problems(contents, i)
        if content.get("role") == "model" and is_gemini_3(model):
            problems += _signature_required_problems(i, content["parts"])
        if issued is not None:
            problems += _provenance_problems(i, content["parts"], issued)
    return problems


def gemini_auth_problems(headers: Mapping[str, str], query_key: bool = False) -> list[Problem]:
    if query_key or lower_keys(headers).get("x-goog-api-key"):
        return []
    return [
        Problem(
            "Method doesn't allow unregistered callers (callers without established identity). Please use API Key "
            "or other form of API consumer identity to call this API.",
            status=403,
            error_type="PERMISSION_DENIED",
        )
    ]


def _invalid(message: str) -> Problem:
    return Problem(message, error_type="INVALID_ARGUMENT")


def _content_problems(i: int, content: Any) -> list[Problem]:
    if not isinstance(content, dict):
        return [_invalid(f"* GenerateContentRequest.contents[{i}]: must be an object")]
    if not one_of(content.get("role"), GEMINI_ROLES):
        return [_invalid(f"* GenerateContentRequest.contents[{i}].role: Please use a valid role: user, model.")]
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        return [_invalid(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")]
    problems = []
    for j, part in enumerate(parts):
        where = f"* GenerateContentRequest.contents[{i}].parts[{j}]"
        data = _DATA_FIELDS & set(part) if isinstance(part, dict) else set()
        if len(data) != 1 or (part.get("text") == "" and not part.get("thoughtSignature")):
            problems.append(_invalid(f"{where}.data: required oneof field 'data' must have one initialized field"))
        elif "functionCall" in data:
            call = part["functionCall"]
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                problems.append(_invalid(f"{where}.function_call.name: a function call needs a name"))
            elif not isinstance(call.get("args", {}), dict):
                problems.append(_invalid(f"{where}.function_call.args: must be an object"))
        elif "functionResponse" in data:
            response = part["functionResponse"]
            if not isinstance(response, dict) or not isinstance(response.get("name"), str):
                problems.append(_invalid(f"{where}.function_response.name: a function response needs a name"))
            elif not isinstance(response.get("response"), dict):
                problems.append(_invalid(f"{where}.function_response.response: must be an object (wrap scalars)"))
    return problems


def _calls(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p["functionCall"] for p in content["parts"] if "functionCall" in p]


def _responses(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [p["functionResponse"] for p in content["parts"] if "functionResponse" in p]


def _turn_problems(contents: list[Any], i: int) -> list[Problem]:
    content = contents[i]
    before = contents[i - 1] if i else None
    after = contents[i + 1] if i + 1 < len(contents) else None
    if _responses(content) and (before is None or before["role"] != "model" or not _calls(before)):
        return [_invalid("Please ensure that function response turn comes immediately after a function call turn.")]
    calls = _calls(content)
    if content["role"] != "model" or not calls:
        return []
    if before is None or before["role"] != "user":
        return [
            _invalid(
                "Please ensure that function call turn comes immediately after a user turn or after a function "
                "response turn."
            )
        ]
    responses = _responses(after) if after is not None and after["role"] == "user" else []
    if not responses:
        return [_invalid(f"contents[{i}]: a function call turn must be followed by a function response turn")]
    if len(responses) != len(calls):
        return [
            _invalid(
                "Please ensure that the number of function response parts is equal to the number of function call "
                "parts of the function call turn."
            )
        ]
    return _pairing_problems(i + 1, calls, responses)


def _pairing_problems(i: int, calls: list[dict[str, Any]], responses: list[dict[str, Any]]) -> list[Problem]:
    if any("id" in call for call in calls) or any("id" in response for response in responses):
        names_by_id = {call.get("id"): call["name"] for call in calls}
        for response in responses:
            if response.get("id") not in names_by_id:
                return [_invalid(f"contents[{i}]: functionResponse.id does not match functionCall.id")]
            if names_by_id[response["id"]] != response["name"]:
                return [_invalid(f"contents[{i}]: functionResponse.name does not match the functionCall's name")]
        return []
    if Counter(call["name"] for call in calls) != Counter(response["name"] for response in responses):
        return [_invalid(f"contents[{i}]: functionResponse names do not match the function call turn's names")]
    return []


def _signature_required_problems(i: int, parts: list[dict[str, Any]]) -> list[Problem]:
    first = next(((j, p) for j, p in enumerate(parts) if "functionCall" in p), None)
    if first is None or first[1].get("thoughtSignature"):
        return []
    j, part = first
    return [
        _invalid(
            "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
            "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
            f"function call `default_api:{part['functionCall']['name']}` , position {j + 1}. Please refer to "
            f"https://ai.google.dev/gemini-api/docs/thought-signatures for more details. (contents[{i}])"
        )
    ]


def _provenance_problems(i: int, parts: list[dict[str, Any]], issued: IssuedParts) -> list[Problem]:
    problems = []
    for j, part in enumerate(parts):
        signature = part.get("thoughtSignature")
        if signature is not None and signature != SKIP_SIGNATURE and issued.signatures.get(signature) != part:
            problems.append(_invalid(f"contents[{i}].parts[{j}]: Corrupted thought signature."))
        call = part.get("functionCall")
        if isinstance(call, dict) and "id" in call and issued.calls.get(call["id"]) != call:
            problems.append(
                _invalid(f"contents[{i}].parts[{j}]: functionCall.id {call['id']!r} was not issued as sent")
            )
    return problems


def _config_problems(body: Mapping[str, Any]) -> list[Problem]:
    problems = []
    config = (
        (body.get("toolConfig") or {}).get("functionCallingConfig")
        if isinstance(body.get("toolConfig"), dict)
        else None
    )
    if isinstance(config, dict):
        mode = config.get("mode", "AUTO")
        if not one_of(mode, GEMINI_MODES):
            problems.append(_invalid(f"Invalid value at 'tool_config.function_calling_config.mode', {mode!r}"))
        elif config.get("allowedFunctionNames") and mode not in ("ANY", "VALIDATED"):
            problems.append(
                _invalid(
                    "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: "
                    "can be set only when mode is ANY"
                )
            )
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        return [*problems, _invalid("Invalid JSON payload received. 'tools' must be a list")]
    for t, tool in enumerate(tools):
        if not isinstance(tool, dict) or set(tool) - TOOL_FIELDS:
            unknown = sorted(set(tool) - TOOL_FIELDS) if isinstance(tool, dict) else ["<not an object>"]
            problems.append(_invalid(f"Invalid JSON payload received. Unknown name {unknown[0]!r} at 'tools[{t}]'"))
            continue
        declarations = tool.get("functionDeclarations", tool.get("function_declarations", []))
        for d, declaration in enumerate(objects(declarations)):
            problems += _declaration_problems(f"tools[{t}].function_declarations[{d}]", declaration)
    return problems


def _declaration_problems(where: str, declaration: Mapping[str, Any]) -> list[Problem]:
    if unknown := sorted(set(declaration) - DECLARATION_FIELDS):
        return [_invalid(f"Invalid JSON payload received. Unknown name {unknown[0]!r} at '{where}'")]
    name = declaration.get("name")
    if not isinstance(name, str) or not _FUNCTION_NAME.fullmatch(name):
        return [_invalid(f"* GenerateContentRequest.{where}.name: Invalid function name {name!r}")]
    forms = {"parameters", "parametersJsonSchema", "parameters_json_schema"} & set(declaration)
    if "parameters" in forms and len(forms) > 1:
        return [_invalid(f"* GenerateContentRequest.{where}: parameters and parameters_json_schema are exclusive")]
    return []
