"""Record model calls to a JSONL file, and replay them with no network.

:class:`Recorder` wraps any caller and appends one line per call: the key (scenario, run model,
repeat, purpose, step), the SHA-256 of the normalized request, the request itself (for diagnosing a
miss), and the answer (a step, or the error the call ended with). A call holds no API key or
header, so neither does the file. :class:`Replayer` is a caller that answers from such a file: a
call whose key is absent, or whose request no longer hashes the same, is a ``REPLAY_MISS`` error;
the recorded latency is reported as is. Keys include the repeat, so one repeat is never served
another's answer. Recording again into the same file appends; the last line for a key wins.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.lowlevel
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from colibri_router.testing.caller import CallOrigin, ModelCall, ModelCaller, ModelCallError, ModelStep
from colibri_router.testing.scenario import InvalidInput

RECORDING_VERSION: Literal[1] = 1
REPLAY_MISS = "REPLAY_MISS"

Key = tuple[str, str, int, str, int]


class RecordingError(InvalidInput):
    """A recording file that cannot be read or holds a malformed line."""


class RecordedError(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    kind: str
    message: str


class RecordedCall(BaseModel):
    """One line of a recording."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    v: Literal[1] = RECORDING_VERSION
    key: CallOrigin
    request_hash: str
    request: dict[str, Any]
    step: ModelStep | None = None
    error: RecordedError | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> RecordedCall:
        if (self.step is None) == (self.error is None):
            raise ValueError("a recorded call holds exactly one of `step` or `error`")
        return self


def request_hash(call: ModelCall) -> str:
    """SHA-256 of the request as canonical JSON (sorted keys, no spaces): the same request, the same hash."""
    canonical = json.dumps(call.request(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _key(origin: CallOrigin) -> Key:
    return (origin.scenario, origin.model, origin.repeat, origin.purpose, origin.step)


def _describe(origin: CallOrigin) -> str:
    return f"{origin.scenario} / {origin.model} / repeat {origin.repeat} / {origin.purpose} {origin.step}"


class Recorder:
    """A caller that passes each call to ``caller`` and appends the call and its answer to ``path``."""

    def __init__(self, caller: ModelCaller, path: str | os.PathLike[str]) -> None:
        self._caller = caller
        self._path = Path(path)
        self._lock = anyio.Lock()

    async def __call__(self, call: ModelCall, /) -> ModelStep:
        try:
            step = await self._caller(call)
        except ModelCallError as error:
            await self._append(
                call, step=None, error=RecordedError(code=error.code, kind=error.kind, message=error.message)
            )
            raise
        await self._append(call, step=step, error=None)
        return step

    async def _append(self, call: ModelCall, *, step: ModelStep | None, error: RecordedError | None) -> None:
        line = RecordedCall(
            key=call.origin, request_hash=request_hash(call), request=call.request(), step=step, error=error
        ).model_dump_json(exclude_none=True)
        async with self._lock:  # one writer at a time keeps every line whole
            await anyio.to_thread.run_sync(self._write, line)

    def _write(self, line: str) -> None:
        with self._path.open("a", encoding="utf-8") as file:
            file.write(line + "\n")


class Replayer:
    """A caller that serves calls from a recording, with no network."""

    def __init__(self, calls: list[RecordedCall]) -> None:
        self._calls: dict[Key, RecordedCall] = {_key(call.key): call for call in calls}

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Replayer:
        """Read a recording; raises :class:`RecordingError` naming the line that is not a recorded call."""
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise RecordingError(f"cannot read the recording {path}: {error.strerror or error}") from error
        calls: list[RecordedCall] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                calls.append(RecordedCall.model_validate_json(line))
            except ValidationError as error:
                raise RecordingError(
                    f"{path}, line {number}: not a recorded call ({error.errors()[0]['msg']})"
                ) from error
        return cls(calls)

    async def __call__(self, call: ModelCall, /) -> ModelStep:
        await anyio.lowlevel.checkpoint()  # a replayed run can be cancelled like a live one
        recorded = self._calls.get(_key(call.origin))
        if recorded is None:
            raise ModelCallError(REPLAY_MISS, REPLAY_MISS, f"no recorded call for {_describe(call.origin)}")
        if recorded.request_hash != request_hash(call):
            changed = [field for field, value in call.request().items() if recorded.request.get(field) != value]
            where = ", ".join(changed) or "its encoding"
            message = f"the request for {_describe(call.origin)} differs from the recording (in {where})"
            raise ModelCallError(REPLAY_MISS, REPLAY_MISS, message)
        if recorded.error is not None:
            raise ModelCallError(recorded.error.code, recorded.error.kind, recorded.error.message)
        assert recorded.step is not None  # a recorded call holds a step or an error (validated)
        return recorded.step
