"""The wire registry is the one place a wire is listed: the names, the WireName type, the codec,
media-limit and runner tables are all read from its records, and each native wire's folder holds
its codec and its stream assembler."""

from __future__ import annotations

import importlib
from typing import get_args

from colibri_router.providers import BUILTIN, spec
from colibri_router.providers.wires import (
    RECORDS,
    SUBSCRIPTION_WIRES,
    WIRE_MEDIA_LIMITS,
    WIRE_NAMES,
    WIRE_RECORDS,
    RunnerName,
    WireName,
)
from colibri_router.router.runners import RUNNERS, runner_for
from colibri_router.wires import WIRES, codec_for

NAMES = tuple(record.name for record in WIRE_RECORDS)
NATIVE = tuple(record.name for record in WIRE_RECORDS if record.runner == "http")


def test_the_wire_name_type_lists_exactly_the_records() -> None:
    assert len(set(NAMES)) == len(NAMES)
    assert set(get_args(WireName)) == set(NAMES)
    assert tuple(RECORDS) == NAMES


def test_names_and_tables_derive_from_the_records() -> None:
    assert WIRE_NAMES == NATIVE
    assert set(NATIVE) | SUBSCRIPTION_WIRES == set(NAMES)
    assert not SUBSCRIPTION_WIRES & set(NATIVE)
    assert tuple(WIRES) == NATIVE
    assert tuple(WIRE_MEDIA_LIMITS) == NATIVE
    assert all(WIRE_MEDIA_LIMITS[record.name] is record.limits for record in WIRE_RECORDS if record.native)
    # The spec module re-exports the registry's own objects, not copies written again.
    assert spec.WIRE_NAMES is WIRE_NAMES and spec.SUBSCRIPTION_WIRES is SUBSCRIPTION_WIRES


def test_every_runner_kind_has_its_runner_and_every_wire_reaches_its_own() -> None:
    assert set(RUNNERS) == set(get_args(RunnerName))
    assert {record.runner for record in WIRE_RECORDS} == set(RUNNERS)
    # Every wire has a built-in provider, and the router reaches it through its record's runner.
    for record in WIRE_RECORDS:
        provider = next(p for p in BUILTIN.values() if p.wire == record.name)
        assert runner_for(provider) is RUNNERS[record.runner]


def test_a_native_wire_folder_holds_its_codec_and_its_assembler() -> None:
    for record in WIRE_RECORDS:
        if not record.native:
            assert record.limits is None
            continue
        folder = importlib.import_module(record.codec_module)
        assert WIRES[record.name] is folder.make_codec
        provider = next(p for p in BUILTIN.values() if p.wire == record.name)
        codec = codec_for(provider, provider.default_model or "some-model")
        assert type(codec).__module__.startswith(record.codec_module)
        assert type(codec.new_assembler()).__module__ == f"{record.codec_module}.assembly"
