"""What every stream assembler shares (each wire's own is in its folder, ``wires/<name>/assembly.py``):
the events of one streamed answer in, the body a non-streamed call would have returned out."""

from colibri_router.toolcalls.assembly.base import (
    StreamAssembler,
    StreamCutError,
    StreamErrorEvent,
    StreamProtocolError,
)

__all__ = [
    "StreamAssembler",
    "StreamCutError",
    "StreamErrorEvent",
    "StreamProtocolError",
]
