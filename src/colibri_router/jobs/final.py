"""A finished call's result as a job keeps it, and what ``background`` may be: light enough for the
server to import at start-up (no models)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

Background: TypeAlias = Literal["auto"] | bool


@dataclass(frozen=True, slots=True)
class Final:
    """A finished call's result exactly as the tool answered it: the structured object, the text
    block, and whether it is an error. What a job stores and ``router_job`` answers again."""

    structured: dict[str, Any]
    text: str
    is_error: bool

    def to_json(self) -> str:
        return json.dumps(
            {"structured": self.structured, "text": self.text, "is_error": self.is_error},
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> Final:
        data = json.loads(text)
        return cls(structured=data["structured"], text=data["text"], is_error=bool(data["is_error"]))
