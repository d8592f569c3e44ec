"""The one matcher (simulation ``when``, assertion ``args``) and ``{{args.path}}`` templating."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.testing.matcher import differences, match, pattern_problems, render_template, same

KEYS = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=12
)


# --- scalars -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ("12345", "12345", True),
        ("12345", 12345, False),
        (1, 1.0, True),
        (2.5, 2.5, True),
        (1, 2, False),
        (True, True, True),
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (0, False, False),
        (None, None, True),
        (None, 0, False),
        ("", None, False),
    ],
)
def test_scalars_match_by_equality(pattern: Any, value: Any, expected: bool) -> None:
    assert match(pattern, value) is expected


@given(st.booleans(), st.integers() | st.floats(allow_nan=False))
def test_a_boolean_never_equals_a_number(flag: bool, number: float) -> None:
    assert not match(flag, number)
    assert not match(number, flag)
    assert not match({"$eq": flag}, number)
    assert not match({"$in": [flag]}, number)


# --- objects and arrays ----------------------------------------------------------------------------


def test_objects_match_partially_and_recursively() -> None:
    value = {"order": {"id": "12345", "lines": 2}, "note": "x"}
    assert match({"order": {"id": "12345"}}, value)
    assert not match({"order": {"id": "1"}}, value)
    assert not match({"missing": 1}, value)
    assert not match({"order": "12345"}, value)


def test_exact_mode_forbids_extra_keys_at_every_level() -> None:
    value = {"order": {"id": "12345", "lines": 2}}
    assert match({"order": {"id": "12345", "lines": 2}}, value, exact=True)
    assert not match({"order": {"id": "12345"}}, value, exact=True)
    assert [d.path for d in differences({"order": {"id": "12345"}}, value, exact=True)] == ["order.lines"]


def test_arrays_match_element_wise_with_the_same_length() -> None:
    assert match([1, {"a": 1}], [1, {"a": 1, "b": 2}])
    assert not match([1, 2], [2, 1])
    assert not match([1], [1, 2])
    assert not match([1], {"0": 1})


@given(st.dictionaries(KEYS, JSON, max_size=6), st.randoms())
def test_partial_object_match_ignores_key_order(value: dict[str, Any], rng: random.Random) -> None:
    keys = list(value)
    chosen = rng.sample(keys, k=rng.randint(0, len(keys)))
    pattern = {key: value[key] for key in chosen}
    shuffled_pattern = dict(rng.sample(list(pattern.items()), k=len(pattern)))
    shuffled_value = dict(rng.sample(list(value.items()), k=len(value)))
    assert match(pattern, value)
    assert match(shuffled_pattern, shuffled_value)
    assert match(pattern, value) == match(shuffled_pattern, value) == match(pattern, shuffled_value)


@given(JSON)
def test_every_value_matches_itself_exactly(value: Any) -> None:
    assert match(value, value)
    assert match(value, value, exact=True)
    assert match({"$eq": value}, value)


@given(st.dictionaries(KEYS, JSON, min_size=1, max_size=5), KEYS, JSON)
def test_extra_keys_keep_a_partial_match_and_break_an_exact_one(pattern: dict[str, Any], key: str, extra: Any) -> None:
    extra_key = key + "_extra"
    value = {**pattern, extra_key: extra}
    assert match(pattern, value)
    assert not match(pattern, value, exact=True)


@given(JSON, JSON)
def test_eq_is_deep_equality(left: Any, right: Any) -> None:
    assert match({"$eq": left}, right) == same(left, right)


# --- operators -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "value", "expected"),
    [
        ({"$regex": "^[0-9]+$"}, "12345", True),
        ({"$regex": "^[0-9]+$"}, "12a45", False),
        ({"$regex": "^[0-9]+$"}, 12345, False),
        ({"$in": ["a", "b"]}, "b", True),
        ({"$in": ["a", "b"]}, "c", False),
        ({"$in": [1, 2]}, 2.0, True),
        ({"$contains": "fund"}, "refund", True),
        ({"$contains": ["re", "und"]}, "refund", True),
        ({"$contains": ["re", "xyz"]}, "refund", False),
        ({"$contains": {"id": "c2"}}, [{"id": "c1"}, {"id": "c2", "amount": 40}], True),
        ({"$contains": [{"id": "c2"}, {"id": "c1"}]}, [{"id": "c1"}, {"id": "c2"}], True),
        ({"$contains": {"id": "c3"}}, [{"id": "c1"}], False),
        ({"$contains": "x"}, 5, False),
        ({"$gt": 3}, 4, True),
        ({"$gt": 3}, 3, False),
        ({"$gte": 3}, 3, True),
        ({"$lt": 3}, 2.5, True),
        ({"$lt": 3}, 3, False),
        ({"$lte": 3}, 3, True),
        ({"$gt": 3}, "4", False),
        ({"$gt": 0}, True, False),
        ({"$gte": "2025-01-01"}, "2025-06-30", True),
        ({"$gte": 1, "$lt": 5}, 4, True),
        ({"$gte": 1, "$lt": 5}, 5, False),
        ({"$eq": {"a": 1}}, {"a": 1}, True),
        ({"$eq": {"a": 1}}, {"a": 1, "b": 2}, False),
        ({"$eq": [1, True]}, [1, True], True),
        ({"$eq": [1, True]}, [1, 1], False),
    ],
)
def test_operators(pattern: dict[str, Any], value: Any, expected: bool) -> None:
    assert match(pattern, value) is expected


def test_any_and_absent_speak_about_the_key() -> None:
    assert match({"coupon": {"$any": True}}, {"coupon": None})
    assert not match({"coupon": {"$any": True}}, {})
    assert match({"coupon": {"$absent": True}}, {})
    assert not match({"coupon": {"$absent": True}}, {"coupon": None})
    assert not match({"$absent": True}, {"anything": 1})


def test_differences_name_the_path_and_the_reason() -> None:
    found = differences({"order": {"id": "12345", "lines": [{"sku": "A"}]}}, {"order": {"lines": [{"sku": "B"}]}})
    assert [(d.path, d.reason) for d in found] == [
        ("order.id", "missing"),
        ("order.lines[0].sku", 'expected "A", got "B"'),
    ]
    assert differences({"a": 1}, {"a": 1}) == []


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ({"a": {"$nope": 1}}, ("a.$nope", "unknown operator")),
        ({"a": {"$regex": "x", "b": 1}}, ("a", "do not mix operators ($regex) with keys")),
        ({"a": {"$any": False}}, ("a.$any", "must be true")),
        ({"a": {"$absent": True, "$eq": 1}}, ("a", "$absent cannot be combined with other operators")),
        ({"a": {"$in": "ab"}}, ("a.$in", "must be an array of values")),
        ({"a": {"$regex": "("}}, ("a.$regex", "invalid regular expression")),
        ({"a": {"$gt": True}}, ("a.$gt", "must be a number or a string")),
        ({"a": [{"b": {"$bad": 1}}]}, ("a[0].b.$bad", "unknown operator")),
        ({"a": {"$contains": [{"b": {"$bad": 1}}]}}, ("a.$contains[0].b.$bad", "unknown operator")),
    ],
)
def test_pattern_problems_name_their_place(pattern: Any, problem: tuple[str, str]) -> None:
    problems = pattern_problems(pattern)
    assert len(problems) == 1
    assert problems[0][0] == problem[0]
    assert problems[0][1].startswith(problem[1])


def test_valid_patterns_have_no_problems() -> None:
    pattern = {"a": {"$regex": "^x", "$contains": "x"}, "b": [1, {"$in": [1, 2]}], "c": {"$absent": True}}
    assert pattern_problems(pattern) == []


# --- templating ----------------------------------------------------------------------------------


def test_templates_fill_arguments_into_strings() -> None:
    args = {"order_id": "12345", "items": [{"sku": "A1"}], "count": 2, "meta": {"x": [1]}}
    assert render_template("order {{args.order_id}}", args) == "order 12345"
    assert render_template("{{ args.items.0.sku }}", args) == "A1"
    assert render_template("n={{args.count}}", args) == "n=2"
    assert render_template("{{args.meta}}", args) == '{"x":[1]}'
    assert render_template({"echo": ["{{args.order_id}}", 7]}, args) == {"echo": ["12345", 7]}


def test_a_missing_template_path_stays_as_written() -> None:
    assert (
        render_template("id {{args.nope}} / {{args.items.9}}", {"items": []}) == "id {{args.nope}} / {{args.items.9}}"
    )
    assert render_template("{{other.x}}", {"x": 1}) == "{{other.x}}"
