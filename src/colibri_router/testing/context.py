"""What a scenario reads from disk, read once before its runs: the files of its turns (``files``, as
``router_call`` reads them) and the images its simulated tools return (``then: {image: path}``).

Paths start at the workspace (``COLIBRI_WORKSPACE``, else the working directory); for a remote
caller (``router_run`` over HTTP) only inside ``COLIBRI_HTTP_FILES_ROOT``, as for ``router_call``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from colibri_router.context import gather
from colibri_router.conversation import Media, anthropic_blocks, media_block
from colibri_router.errors import InvalidRequestError
from colibri_router.settings import load_settings
from colibri_router.testing.scenario import InvalidInput, Response, Scenario


@dataclass(frozen=True, slots=True)
class ScenarioContext:
    """Content blocks: each scripted turn's files (by turn number, from 1), each tool image by path."""

    turn_files: Mapping[int, list[dict[str, Any]]] = field(default_factory=dict)
    images: Mapping[str, dict[str, Any]] = field(default_factory=dict)


def image_path(value: Any) -> str | None:
    """The path of a ``{image: path}`` reply, else None."""
    if isinstance(value, dict) and set(value) == {"image"} and isinstance(value["image"], str):
        return value["image"]
    return None


def load_context(scenario: Scenario, *, remote: bool = False) -> ScenarioContext:
    """Read everything the scenario names; an unreadable path is an :class:`InvalidInput` naming it."""
    needs = any(turn.files for turn in scenario.script) or any(True for _ in _image_paths(scenario))
    if not needs:
        return ScenarioContext()
    settings = load_settings()
    try:
        turn_files = {
            number: anthropic_blocks(gather(list(turn.files), settings, over_http=remote).parts)
            for number, turn in enumerate(scenario.script, start=1)
            if turn.files
        }
        images = {}
        for path in _image_paths(scenario):
            parts = gather([path], settings, over_http=remote).parts
            if len(parts) != 1 or not isinstance(parts[0], Media) or parts[0].kind != "image":
                raise InvalidInput(f"a simulated tool's image {path!r} is not a PNG, JPEG, GIF or WebP image")
            images[path] = media_block(parts[0])
    except InvalidRequestError as error:
        raise InvalidInput(error.message) from error
    return ScenarioContext(turn_files, images)


def _image_paths(scenario: Scenario) -> Iterator[str]:
    for tool in scenario.tools:
        responses: list[Response] = [*tool.responses, *([tool.default_response] if tool.default_response else [])]
        for response in responses:
            for value in [response.then, *(reply.then for reply in response.sequence or [])]:
                if (path := image_path(value)) is not None:
                    yield path
