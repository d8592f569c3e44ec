"""The error classes are conditions with the provider as data; the engine lives in the core, not in the
``adapters`` facade; source text cites only what a reader can open (docs/ pages, public addresses)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import colibri_router.adapters as facade
from colibri_router import errors
from colibri_router.errors import (
    AnthropicApiError,
    AnthropicConfigError,
    AnthropicTimeoutError,
    ApiError,
    ColibriError,
    ConfigError,
    DeadlineError,
    KimiApiError,
    KimiConfigError,
    KimiTimeoutError,
    error_family,
)
from colibri_router.providers import BUILTIN
from colibri_router.router import pipeline

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "colibri_router"
SOURCES = sorted(PACKAGE.rglob("*.py"))

# Prefixes the library names keep as classes of their own (docs/python-api.md).
NAMED = {
    "KIMI": (KimiConfigError, KimiApiError, KimiTimeoutError),
    "ANTHROPIC": (AnthropicConfigError, AnthropicApiError, AnthropicTimeoutError),
}

prefixes = st.from_regex(r"[A-Z][A-Z0-9]{0,6}(?:_[A-Z0-9]{1,6}){0,2}", fullmatch=True)


def _raised(error: ColibriError) -> ColibriError:
    try:
        raise error
    except ColibriError as caught:
        return caught


# --- errors: a few classes by condition, the provider's prefix as data -------------------------------------


@given(prefixes.filter(lambda prefix: prefix not in NAMED))
def test_any_other_prefix_gets_the_condition_classes_with_its_codes(prefix: str) -> None:
    family = error_family(prefix)

    config, timeout = family.config("no key"), family.timeout("too slow")
    api, exhausted = family.api("no", status=400), family.api("busy", status=503, exhausted=True)

    assert (type(config), type(api), type(exhausted), type(timeout)) == (ConfigError, ApiError, ApiError, DeadlineError)
    assert [config.code, api.code, exhausted.code, timeout.code] == [
        f"{prefix}_CONFIG_ERROR",
        f"{prefix}_API_ERROR",
        f"{prefix}_RETRIES_EXHAUSTED",
        f"{prefix}_TIMEOUT",
    ]
    assert {config.prefix, api.prefix, timeout.prefix} == {prefix}
    assert (config.kind, api.kind, timeout.kind) == ("CONFIG_ERROR", "PROVIDER_ERROR", "TIMEOUT")


@pytest.mark.parametrize("prefix", sorted(NAMED))
def test_kimi_and_anthropic_raise_their_named_classes(prefix: str) -> None:
    config_class, api_class, timeout_class = NAMED[prefix]
    family = error_family(prefix)

    assert type(family.config("x")) is config_class
    assert type(family.api("x")) is api_class
    assert type(family.timeout("x")) is timeout_class
    assert family.api("x", exhausted=True).code == f"{prefix}_RETRIES_EXHAUSTED"
    # built directly, as a caller of the library may, they carry the same codes
    assert (config_class("x").code, api_class("x").code, timeout_class("x").code) == (
        f"{prefix}_CONFIG_ERROR",
        f"{prefix}_API_ERROR",
        f"{prefix}_TIMEOUT",
    )
    assert (issubclass(config_class, ConfigError), issubclass(api_class, ApiError)) == (True, True)
    assert issubclass(timeout_class, DeadlineError)


@given(prefixes)
def test_an_except_clause_for_a_named_class_catches_that_provider_only(prefix: str) -> None:
    for name, (config_class, api_class, timeout_class) in NAMED.items():
        family = error_family(prefix)
        raised = [_raised(family.config("x")), _raised(family.api("x")), _raised(family.timeout("x"))]
        caught = [
            isinstance(raised[0], config_class),
            isinstance(raised[1], api_class),
            isinstance(raised[2], timeout_class),
        ]
        assert caught == [prefix == name] * 3
        # the condition classes catch every provider's
        assert [
            isinstance(error, base) for error, base in zip(raised, (ConfigError, ApiError, DeadlineError), strict=True)
        ] == [True] * 3


@pytest.mark.parametrize("prefix", ["KIMI", "ANTHROPIC", "OPENAI", "GPU_BOX"])
def test_a_retried_failure_keeps_its_class_prefix_and_details(prefix: str) -> None:
    first = error_family(prefix).api("slow down", status=429, retryable=True, retry_after=2.0, kind="RATE_LIMITED")

    last = first.exhausted(4)

    assert type(last) is type(first)
    assert (last.code, last.prefix, last.status, last.retry_after, last.kind) == (
        f"{prefix}_RETRIES_EXHAUSTED",
        prefix,
        429,
        2.0,
        "RATE_LIMITED",
    )
    assert last.retryable is False
    assert last.message == "gave up after 4 attempts; last error: slow down"


def test_without_a_prefix_the_conditions_keep_their_bare_codes() -> None:
    assert ConfigError("COLIBRI_TIMEOUT_S=abc").code == "CONFIG_ERROR"
    assert DeadlineError("out of time").code == "TIMEOUT"
    assert ApiError("no").code == "API_ERROR"
    assert ApiError("no", exhausted=True).code == "RETRIES_EXHAUSTED"


def test_every_builtin_provider_raises_codes_with_its_prefix() -> None:
    for spec in BUILTIN.values():
        family = error_family(spec.error_prefix)
        assert family.api("x").code == f"{spec.error_prefix}_API_ERROR", spec.name
        assert family.config("x").code == f"{spec.error_prefix}_CONFIG_ERROR", spec.name


def test_the_errors_page_documents_the_named_providers_codes() -> None:
    text = (ROOT / "docs" / "errors.md").read_text()
    codes = [
        code
        for prefix in NAMED
        for code in (
            f"{prefix}_CONFIG_ERROR",
            f"{prefix}_API_ERROR",
            f"{prefix}_RETRIES_EXHAUSTED",
            f"{prefix}_TIMEOUT",
        )
    ]
    assert [code for code in codes if f"`{code}`" not in text] == []


def test_no_class_is_made_with_type() -> None:
    made = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "type"
        and len(node.args) == 3
    ]
    assert made == []


def test_the_error_module_defines_only_named_condition_classes() -> None:
    classes = {
        name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, ColibriError)
    }
    assert classes == {
        "ColibriError",
        "ConfigError",
        "InvalidRequestError",
        "InvalidOutputError",
        "ConfirmationDeclinedError",
        "ApiError",
        "CostCapError",
        "DeadlineError",
        "KimiConfigError",
        "KimiApiError",
        "KimiTimeoutError",
        "AnthropicConfigError",
        "AnthropicApiError",
        "AnthropicTimeoutError",
    }


# --- layers: the engine is core, the facade sits on top ------------------------------------------------------


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_nothing_outside_adapters_imports_it() -> None:
    adapters = PACKAGE / "adapters"
    importers = [
        str(path.relative_to(ROOT))
        for path in SOURCES
        if adapters not in path.parents
        and any(
            name == "colibri_router.adapters" or name.startswith("colibri_router.adapters.")
            for name in _imported_modules(path)
        )
    ]
    assert importers == []


def test_the_facade_re_exports_the_core_pipeline() -> None:
    assert facade.run_completion is pipeline.run_completion
    assert facade.Completion is pipeline.Completion
    assert facade.DEFAULT_MAX_TOKENS == pipeline.DEFAULT_MAX_TOKENS == 1024
    assert facade.KimiApiError is errors.KimiApiError


# --- citations: nothing a reader of the repository cannot open ----------------------------------------------

# Notes that live outside the repository (the team's fact files and design notes, the seed documents and
# their numbered items, the fact file's section and fixture ids).
OUTSIDE_REFERENCES = re.compile(
    r"PROVIDER-FACTS|KIMI-FACTS|DESIGN\.md|HELPERS\.md|seeds?/"
    r"|\bseed(?:'s|-style)|\bthe (?:provider-interface )?seed\b(?! (?:parameter|value|field))"
    r"|\bcontract(?:'s)?\s+(?:item|§|I\d)"
    r"|\bI(?:[1-9]|1\d|20)\b"
    r"|§\s?\d"
    r"|\bQ-[a-z]+-[a-z0-9-]+",
    re.IGNORECASE,
)


def test_no_source_cites_a_document_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in SOURCES
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if OUTSIDE_REFERENCES.search(line)
    ]
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        "Facts: PROVIDER-FACTS.md §8.3",
        'see KIMI-FACTS.md, "Tool-call IDs"',
        "(seeds/kimi-streaming-tool-args.md)",
        "Contract I8: no retry",
        "the contract's result (I1)",
        "(contract §6)",
        "the seed's result fields",
        "(Q-gemini-cumulative-usage)",
    ],
)
def test_the_citation_pattern_catches_each_kind_of_outside_reference(line: str) -> None:
    assert OUTSIDE_REFERENCES.search(line)


@pytest.mark.parametrize(
    "line",
    [
        "The retry rule (docs/errors.md, Retries)",
        "Sources: https://ai.google.dev/api/generate-content",
        "from colibri_router.store import contract",
        "a random seed for sampling",
        "the seed parameter of the request",
    ],
)
def test_the_citation_pattern_lets_repository_pages_and_addresses_through(line: str) -> None:
    assert OUTSIDE_REFERENCES.search(line) is None
