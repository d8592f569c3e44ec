"""One matcher for simulations (``when``) and assertions (``args``), and the one templating rule.

``match(pattern, value)``:

- a scalar matches by equality: numbers by value (``1`` equals ``1.0``), booleans only booleans
  (``true`` never equals ``1``), strings and ``null`` exactly;
- an object matches partially and recursively: every key of the pattern must match, extra keys in
  the value are allowed (``exact=True`` forbids them at every level), key order never matters;
- an array matches element-wise: same length, each element matching;
- an object whose keys all start with ``$`` is an operator object; several operators must all hold:
  ``$regex`` (a string the regex finds), ``$in`` (equals one of the listed values), ``$contains``
  (a string holding the substring(s); an array with an element matching the pattern, or for a list
  of patterns, each matched by some element), ``$any: true`` (the key is present, any value),
  ``$absent: true`` (the key is missing), ``$gt``/``$gte``/``$lt``/``$lte`` (numbers with numbers,
  strings with strings), ``$eq`` (exact deep equality, no partial objects, no operators inside).

:func:`differences` says where and why a value fails a pattern (for the closest-call diff of a
failed assertion); :func:`pattern_problems` checks a pattern once, when a scenario loads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import ge, gt, le, lt
from typing import Any, Final

OPERATORS: Final = frozenset({"$regex", "$in", "$contains", "$any", "$absent", "$gt", "$gte", "$lt", "$lte", "$eq"})


class _Missing:
    """The value of a key the object does not have (distinct from ``null``)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True)
class Difference:
    """Why the value at ``path`` fails its pattern. ``path`` is ``""`` for the value itself."""

    path: str
    expected: Any
    actual: Any
    reason: str

    def describe(self) -> str:
        where = self.path or "the value"
        return f"{where}: {self.reason}"


def match(pattern: Any, value: Any, *, exact: bool = False) -> bool:
    """Whether ``value`` (a JSON value) matches ``pattern``; see the module docstring."""
    return next(_walk(pattern, value, "", exact), None) is None


def differences(pattern: Any, value: Any, *, exact: bool = False) -> list[Difference]:
    """Every place where ``value`` fails ``pattern``; empty when it matches."""
    return list(_walk(pattern, value, "", exact))


def same(left: Any, right: Any) -> bool:
    """Deep JSON equality: numbers by value, booleans apart from numbers, objects regardless of key order."""
    # Python says True == 1; JSON does not: a boolean is never a number here (see _is_number).
    if _is_number(left) or _is_number(right):
        return _is_number(left) and _is_number(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(same(left[key], right[key]) for key in left)
    if _is_array(left) and _is_array(right):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, Mapping | list | tuple) or isinstance(right, Mapping | list | tuple):
        return False
    return bool(left == right)


def is_operator_object(pattern: Any) -> bool:
    return isinstance(pattern, Mapping) and bool(pattern) and all(str(key).startswith("$") for key in pattern)


def _walk(pattern: Any, value: Any, path: str, exact: bool) -> Iterator[Difference]:
    if is_operator_object(pattern):
        yield from _operators(pattern, value, path, exact)
    elif value is MISSING:
        yield Difference(path, pattern, None, "missing")
    elif isinstance(pattern, Mapping):
        if not isinstance(value, Mapping):
            yield Difference(path, pattern, value, f"expected an object, got {_kind(value)}")
            return
        for key, sub_pattern in pattern.items():
            yield from _walk(sub_pattern, value.get(key, MISSING), _join(path, key), exact)
        if exact:
            for key in value.keys() - pattern.keys():
                yield Difference(_join(path, key), None, value[key], "not expected (exact match)")
    elif _is_array(pattern):
        if not _is_array(value):
            yield Difference(path, pattern, value, f"expected an array, got {_kind(value)}")
        elif len(pattern) != len(value):
            yield Difference(path, pattern, value, f"expected {len(pattern)} items, got {len(value)}")
        else:
            for index, (sub_pattern, item) in enumerate(zip(pattern, value, strict=True)):
                yield from _walk(sub_pattern, item, f"{path}[{index}]", exact)
    elif not same(pattern, value):
        yield Difference(path, pattern, value, f"expected {_show(pattern)}, got {_show(value)}")


def _operators(pattern: Mapping[str, Any], value: Any, path: str, exact: bool) -> Iterator[Difference]:
    if "$absent" in pattern:
        if value is not MISSING:
            yield Difference(path, pattern, value, "expected no such key")
        return
    if value is MISSING:
        yield Difference(path, pattern, None, "missing")
        return
    for operator, operand in pattern.items():
        reason = _operator_failure(operator, operand, value, exact)
        if reason is not None:
            yield Difference(path, {operator: operand}, value, reason)


def _operator_failure(operator: str, operand: Any, value: Any, exact: bool) -> str | None:
    """Why ``value`` fails one operator, or None when it holds."""
    if operator == "$any":
        return None
    if operator == "$eq":
        return None if same(operand, value) else f"expected exactly {_show(operand)}, got {_show(value)}"
    if operator == "$in":
        return None if any(same(item, value) for item in operand) else f"{_show(value)} is not one of {_show(operand)}"
    if operator == "$regex":
        if not isinstance(value, str):
            return f"expected a string matching /{operand}/, got {_kind(value)}"
        return None if re.search(operand, value) else f"{_show(value)} does not match /{operand}/"
    if operator == "$contains":
        return _contains_failure(operand, value, exact)
    return _order_failure(operator, operand, value)


def _contains_failure(operand: Any, value: Any, exact: bool) -> str | None:
    wanted = list(operand) if _is_array(operand) else [operand]
    if isinstance(value, str):
        missing = [part for part in wanted if not (isinstance(part, str) and part in value)]
        return f"{_show(value)} does not contain {_show(missing[0])}" if missing else None
    if _is_array(value):
        for item_pattern in wanted:
            if not any(match(item_pattern, item, exact=exact) for item in value):
                return f"no element matches {_show(item_pattern)}"
        return None
    return f"$contains needs a string or an array, got {_kind(value)}"


_ORDER: Final[dict[str, tuple[Callable[[Any, Any], bool], str]]] = {
    "$gt": (gt, ">"),
    "$gte": (ge, ">="),
    "$lt": (lt, "<"),
    "$lte": (le, "<="),
}


def _order_failure(operator: str, operand: Any, value: Any) -> str | None:
    if operator not in _ORDER:
        raise ValueError(f"unknown operator {operator} (known: {', '.join(sorted(OPERATORS))})")
    holds, symbol = _ORDER[operator]
    comparable = (_is_number(operand) and _is_number(value)) or (isinstance(operand, str) and isinstance(value, str))
    if not comparable:
        return f"expected a value {symbol} {_show(operand)}, got {_kind(value)}"
    return None if holds(value, operand) else f"expected a value {symbol} {_show(operand)}, got {_show(value)}"


def pattern_problems(pattern: Any, path: str = "") -> list[tuple[str, str]]:
    """What is wrong with a pattern (unknown operators, operands of the wrong type): (place, message) pairs,
    the place relative to the pattern (``""`` for the pattern itself)."""
    problems: list[tuple[str, str]] = []
    if isinstance(pattern, Mapping):
        operator_keys = [str(key) for key in pattern if str(key).startswith("$")]
        if operator_keys and len(operator_keys) != len(pattern):
            problems.append((path, f"do not mix operators ({', '.join(operator_keys)}) with keys"))
        elif operator_keys:
            if "$absent" in pattern and len(pattern) > 1:
                problems.append((path, "$absent cannot be combined with other operators"))
            for operator, operand in pattern.items():
                problems.extend(_operand_problems(operator, operand, _join(path, operator)))
        else:
            for key, sub_pattern in pattern.items():
                problems.extend(pattern_problems(sub_pattern, _join(path, key)))
    elif _is_array(pattern):
        for index, item in enumerate(pattern):
            problems.extend(pattern_problems(item, f"{path}[{index}]"))
    return problems


def _operand_problems(operator: str, operand: Any, path: str) -> list[tuple[str, str]]:
    if operator not in OPERATORS:
        return [(path, f"unknown operator (known: {', '.join(sorted(OPERATORS))})")]
    if operator in ("$any", "$absent") and operand is not True:
        return [(path, "must be true")]
    if operator == "$in" and not _is_array(operand):
        return [(path, "must be an array of values")]
    if operator == "$regex":
        if not isinstance(operand, str):
            return [(path, "must be a string")]
        try:
            re.compile(operand)
        except re.error as error:
            return [(path, f"invalid regular expression: {error}")]
    if operator in _ORDER and not (_is_number(operand) or isinstance(operand, str)):
        return [(path, "must be a number or a string")]
    if operator == "$contains":
        if not _is_array(operand):
            return pattern_problems(operand, path)
        return [problem for index, item in enumerate(operand) for problem in pattern_problems(item, f"{path}[{index}]")]
    return []


_PLACEHOLDER = re.compile(r"\{\{\s*args((?:\.[^.\s{}]+)*)\s*\}\}")


def render_template(value: Any, args: Mapping[str, Any]) -> Any:
    """``value`` with every ``{{args.path}}`` in its strings replaced by that argument (objects, arrays
    and numbers as compact JSON). A path the arguments lack stays as written, so the gap shows."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda found: _lookup(args, found), value)
    if isinstance(value, Mapping):
        return {key: render_template(item, args) for key, item in value.items()}
    if _is_array(value):
        return [render_template(item, args) for item in value]
    return value


def _lookup(args: Mapping[str, Any], found: re.Match[str]) -> str:
    current: Any = args
    for segment in found.group(1).split(".")[1:]:
        if isinstance(current, Mapping) and segment in current:
            current = current[segment]
        elif _is_array(current) and segment.isdigit() and int(segment) < len(current):
            current = current[int(segment)]
        else:
            return found.group(0)
    return current if isinstance(current, str) else compact_json(current)


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_array(value: Any) -> bool:
    return isinstance(value, list | tuple)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if _is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, Sequence):
        return "an array"
    return type(value).__name__


def _show(value: Any) -> str:
    try:
        text = compact_json(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
