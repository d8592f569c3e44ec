"""Stream assemblers, one per wire: the events of one streamed answer in, the body a non-streamed
call would have returned out."""

from colibri_router.toolcalls.assembly.anthropic import AnthropicStreamAssembler
from colibri_router.toolcalls.assembly.base import (
    StreamAssembler,
    StreamCutError,
    StreamErrorEvent,
    StreamProtocolError,
)
from colibri_router.toolcalls.assembly.openai import OpenAIStreamAssembler

__all__ = [
    "AnthropicStreamAssembler",
    "OpenAIStreamAssembler",
    "StreamAssembler",
    "StreamCutError",
    "StreamErrorEvent",
    "StreamProtocolError",
]
