"""The wire registry: one record per wire, from which every table and list of wires is derived.

A record says what a wire is: the runner that carries a call over it (HTTP, a command-line agent,
the host's model through MCP sampling), the folder of a native wire's codec and stream assembler
(``colibri_router/wires/<name>/``), what the wire's reference service accepts in images and PDFs,
and its structured-output form for a host the registry says nothing more about. The wire names a
config file may use, the codec table (:mod:`colibri_router.wires`), the media limits
(:mod:`colibri_router.router.fit`) and the runner table (:mod:`colibri_router.router.runners`) are all
read from :data:`WIRE_RECORDS`. A native wire is a folder under ``wires/``, one record here (and its
name in :data:`WireName`, which mypy needs written out; a test holds the two together) and its docs.

This module is data only, imported at start-up with the registry: codecs are named by module, not
imported, so a server answers ``initialize`` without loading them (see :mod:`colibri_router.server.tools`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, TypeAlias

from colibri_router.providers.structured import (
    ANTHROPIC_TOOL,
    COHERE_SCHEMA,
    GEMINI_SCHEMA,
    OLLAMA_SCHEMA,
    OPENAI_JSON_MODE,
    PROMPT_ONLY,
    StructuredSupport,
)

WireName: TypeAlias = Literal["openai", "anthropic", "gemini", "cohere", "ollama", "agent-cli", "sampling"]
# How a call reaches the model: an HTTP API through a codec, a command-line agent run as a
# subprocess, the host's own model through MCP sampling.
RunnerName: TypeAlias = Literal["http", "agent", "sampling"]


@dataclass(frozen=True, slots=True)
class WireMediaLimits:
    """What one wire's reference service accepts; None: no documented limit."""

    max_image_bytes: int | None = None
    max_images: int | None = None
    url_images: bool = True
    url_documents: bool = False
    source: str = ""
    max_pdf_pages: int | None = None


@dataclass(frozen=True, slots=True)
class WireRecord:
    """One wire. ``limits`` is None for a wire without a codec: nothing of an HTTP provider (key, base
    URL, codec, media fitting) applies to it."""

    name: WireName
    runner: RunnerName
    limits: WireMediaLimits | None = None
    # The structured-output form of a host the registry says nothing more about (a config file's entry).
    structured: StructuredSupport = PROMPT_ONLY

    @property
    def native(self) -> bool:
        """Spoken over HTTP by a codec of its own: a config file's provider may name it."""
        return self.runner == "http"

    @property
    def codec_module(self) -> str:
        """The wire's folder: its codec (``make_codec``) and, beside it, its stream assembler."""
        return f"colibri_router.wires.{self.name}"


WIRE_RECORDS: tuple[WireRecord, ...] = (
    WireRecord(
        "openai",
        "http",
        WireMediaLimits(20 * 1024 * 1024, 500, True, False, "OpenAI docs: Images and vision (input limits)"),
        OPENAI_JSON_MODE,
    ),
    # 5 MB of base64 per image, so 3.75 MB of image; 100 images a request.
    WireRecord(
        "anthropic",
        "http",
        WireMediaLimits(
            5 * 1024 * 1024 * 3 // 4, 100, True, True, "Anthropic docs: Vision; PDF support (100 pages)", 100
        ),
        ANTHROPIC_TOOL,
    ),
    # Inline data counts toward the request's 20 MB.
    WireRecord(
        "gemini",
        "http",
        WireMediaLimits(
            15 * 1024 * 1024, 3000, True, True, "Gemini API docs: Image and Document understanding (1,000 pages)", 1000
        ),
        GEMINI_SCHEMA,
    ),
    WireRecord(
        "cohere",
        "http",
        WireMediaLimits(20 * 1024 * 1024, 20, True, False, "Cohere docs: Command A Vision (20 images)"),
        COHERE_SCHEMA,
    ),
    WireRecord(
        "ollama", "http", WireMediaLimits(None, None, False, False, "Ollama API docs: images are base64"), OLLAMA_SCHEMA
    ),
    WireRecord("agent-cli", "agent"),
    WireRecord("sampling", "sampling"),
)

RECORDS: Mapping[WireName, WireRecord] = MappingProxyType({record.name: record for record in WIRE_RECORDS})
# The HTTP wires, the ones a config file's provider may name.
WIRE_NAMES: tuple[WireName, ...] = tuple(record.name for record in WIRE_RECORDS if record.native)
# Wires whose transport is not HTTP: a command-line agent, the host's model.
SUBSCRIPTION_WIRES: frozenset[WireName] = frozenset(record.name for record in WIRE_RECORDS if not record.native)
WIRE_MEDIA_LIMITS: Mapping[WireName, WireMediaLimits] = MappingProxyType(
    {record.name: record.limits for record in WIRE_RECORDS if record.limits is not None}
)
# Each wire's structured-output form for a host the registry says nothing more about.
WIRE_FORMS: Mapping[WireName, StructuredSupport] = MappingProxyType(
    {record.name: record.structured for record in WIRE_RECORDS}
)
