"""Our schema transformations: the caller's schema as one form can send it, and an answer back in the
caller's own shape.

:func:`prepare` turns the caller's schema into what a form sends. Keywords the form cannot express are
removed and returned (the prompt then states them, and a warning names them). A strict form also gets
every object closed (``additionalProperties: false``), every property required, and each property the
caller left optional made nullable, since strict decoding must produce every key; ``oneOf`` becomes
``anyOf`` (a superset: validation against the caller's schema still decides). An object a strict form
cannot close (no ``properties``, or open ``additionalProperties``), or a root that is not an object,
makes strict impossible: the schema then goes as the form's non-strict variant.

:func:`restore` undoes what strict mode adds: a ``null`` the model wrote for a property the caller
left optional, where the caller's schema does not accept null, is removed. The result is then validated
against the caller's original schema (:mod:`colibri_router.structured.validate`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from colibri_router.providers.structured import StructuredSupport

if TYPE_CHECKING:  # jsonschema loads with the first answer to check, not with the router
    from jsonschema.protocols import Validator

# Keywords whose value is one subschema, a list of them, or a name → subschema map.
_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
# Annotations a form may drop without changing what is valid, so without a warning.
_SILENT = frozenset({"$schema", "$comment", "default", "examples"})
NULL = {"type": "null"}


@dataclass
class Prepared:
    """What a form sends: the schema, the keywords it lost (path → keyword → value), and whether the
    strict variant was possible."""

    schema: dict[str, Any]
    lost: dict[str, dict[str, Any]] = field(default_factory=dict)
    strict: bool = False

    def lost_keywords(self) -> list[str]:
        return sorted({keyword for keywords in self.lost.values() for keyword in keywords})


def prepare(schema: Mapping[str, Any], support: StructuredSupport) -> Prepared:
    """The caller's ``schema`` as ``support``'s form sends it. JSON mode and a forced tool send it whole."""
    if support.form in ("json_mode", "tool"):
        return Prepared(copy.deepcopy(dict(schema)))
    # Strict mode wants an object at the root (OpenAI refuses any other) and every object closed.
    strict = support.form == "strict_schema" and _is_object(schema) and closable(schema)
    prepared = Prepared({}, strict=strict)
    prepared.schema = _walk(copy.deepcopy(dict(schema)), "$", support, prepared)
    return prepared


def closable(schema: Any) -> bool:
    """Whether every object in ``schema`` names its properties and is not left open: strict mode
    must close every object, and an open one would lose every key the caller allowed."""
    if not isinstance(schema, dict):
        return True
    if _is_object(schema):
        extra = schema.get("additionalProperties")
        if "properties" not in schema or extra not in (None, False):
            return False
    return all(closable(sub) for sub in _children(schema))


def _children(schema: Mapping[str, Any]) -> list[Any]:
    subs: list[Any] = [schema[key] for key in _ONE if isinstance(schema.get(key), dict)]
    for key in _MANY:
        subs.extend(schema.get(key) or [])
    for key in _NAMED:
        named = schema.get(key)
        subs.extend(named.values() if isinstance(named, dict) else [])
    return subs


def _is_object(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in schema


def _walk(schema: dict[str, Any], path: str, support: StructuredSupport, prepared: Prepared) -> dict[str, Any]:
    for keyword in list(schema):
        if keyword in _SILENT:
            del schema[keyword]
            continue
        refused = keyword in support.unsupported or (support.allowed is not None and keyword not in support.allowed)
        if prepared.strict and keyword == "oneOf":
            refused = False
        if refused:
            prepared.lost.setdefault(path, {})[keyword] = schema.pop(keyword)
    if prepared.strict and "oneOf" in schema:
        schema["anyOf"] = [*schema.get("anyOf", []), *schema.pop("oneOf")]
    for key in _ONE:
        if isinstance(schema.get(key), dict):
            schema[key] = _walk(schema[key], f"{path}.{key}", support, prepared)
    for key in _MANY:
        if isinstance(schema.get(key), list):
            schema[key] = [
                _walk(sub, f"{path}.{key}[{i}]", support, prepared) if isinstance(sub, dict) else sub
                for i, sub in enumerate(schema[key])
            ]
    for key in _NAMED:
        named = schema.get(key)
        if isinstance(named, dict):
            schema[key] = {
                name: _walk(sub, f"{path}.{key}.{name}", support, prepared) if isinstance(sub, dict) else sub
                for name, sub in named.items()
            }
    if prepared.strict and _is_object(schema):
        _close(schema)
    return schema


def _close(schema: dict[str, Any]) -> None:
    """Every property required; the ones the caller left optional made nullable; no other keys."""
    properties: dict[str, Any] = schema.setdefault("properties", {})
    required = set(schema.get("required", []))
    for name, sub in properties.items():
        if name not in required and not _admits_null(sub):
            properties[name] = {"anyOf": [sub, NULL]}
    schema["required"] = list(properties)
    schema["additionalProperties"] = False


def _admits_null(schema: Any) -> bool:
    """Whether a subschema plainly accepts null (a guess on the safe side: a wrapped one always does)."""
    if not isinstance(schema, dict):
        return schema is True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if "enum" in schema:
        return None in schema["enum"]
    return any(_admits_null(sub) for sub in schema.get("anyOf", []))


def restore(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` without the nulls strict mode wrote for properties the caller's ``schema`` left optional
    and does not let be null. Anything else is left as it is, for validation to judge."""
    from jsonschema.validators import validator_for

    root = dict(schema)
    validator = validator_for(root)(root)
    return _restore(value, root, root, validator, 0)


_MAX_DEPTH = 64  # a recursive schema is followed no deeper than any answer we would take


def _restore(value: Any, schema: Any, root: dict[str, Any], validator: Validator, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#"):
        target = _pointer(root, ref)
        if target is not None:
            value = _restore(value, target, root, validator, depth + 1)
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            for branch in branches:
                candidate = _restore(value, branch, root, validator, depth + 1)
                if validator.evolve(schema=branch).is_valid(candidate):
                    value = candidate
                    break
    for branch in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        value = _restore(value, branch, root, validator, depth + 1)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required", []))
        restored = {}
        for name, item in value.items():
            sub = schema["properties"].get(name)
            if sub is None:
                restored[name] = item
            elif item is None and name not in required and not validator.evolve(schema=sub).is_valid(None):
                continue  # strict mode's stand-in for "absent"
            else:
                restored[name] = _restore(item, sub, root, validator, depth + 1)
        value = restored
    if isinstance(value, list):
        found = schema.get("prefixItems")
        prefix: list[Any] = found if isinstance(found, list) else []
        items = schema.get("items")
        value = [
            _restore(item, prefix[i] if i < len(prefix) else items, root, validator, depth + 1)
            for i, item in enumerate(value)
        ]
    return value


def _pointer(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for raw in ref.lstrip("#").split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or token not in node:
            return None
        node = node[token]
    return node
