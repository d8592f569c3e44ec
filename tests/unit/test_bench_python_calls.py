"""Benchmark 13's count: which package a profiled function belongs to, built-ins counted for their
caller, the two parts broken out, all per call."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.python_calls import Counted, counted, package_of

SITE = "/venv/lib/python3.11/site-packages"


@pytest.mark.parametrize(
    ("filename", "package"),
    [
        (f"{SITE}/jsonschema/validators.py", "jsonschema"),
        (f"{SITE}/referencing/_core.py", "referencing"),
        (f"{SITE}/pydantic/main.py", "pydantic"),
        (f"{SITE}/six.py", "six"),
        ("/work/repo/src/colibri_router/router.py", "colibri_router"),
        ("/usr/lib/python3.11/asyncio/events.py", ""),
        ("/work/repo/benchmarks/python_calls.py", ""),
        ("~", ""),
    ],
)
def test_a_function_belongs_to_the_top_level_package_of_its_file(filename: str, package: str) -> None:
    assert package_of(filename) == package


def _entry(number: int, callers: dict[tuple[str, int, str], tuple[int, int, float, float]] | None = None) -> Any:
    return (number, number, 0.0, 0.0, callers or {})


def test_calls_are_counted_per_call_with_built_ins_counted_for_their_caller() -> None:
    check = (f"{SITE}/jsonschema/validators.py", 10, "descend")
    ours = ("/repo/src/colibri_router/router.py", 5, "route")
    loop = ("/usr/lib/python3.11/asyncio/events.py", 80, "_run")
    stats = {
        check: _entry(40),
        ours: _entry(20),
        loop: _entry(100),
        # dict.get: 60 calls from jsonschema, 10 from colibri_router, 30 from asyncio
        ("~", 0, "<method 'get' of 'dict' objects>"): _entry(
            100, {check: (60, 60, 0.0, 0.0), ours: (10, 10, 0.0, 0.0), loop: (30, 30, 0.0, 0.0)}
        ),
    }
    assert counted(stats, calls=10) == Counted(total=26.0, schema_check=10.0, ours=3.0)
