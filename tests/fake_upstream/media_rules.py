"""What each wire's service refuses in images and documents: media types, base64 that is missing or
malformed, content that is not what it claims, sizes, counts, and models that read no images.

The messages follow the real services' wording where it is known. Every wire checks its own shape:
Anthropic ``image``/``document`` blocks, OpenAI ``image_url`` and ``file`` parts, Gemini ``inlineData``
and ``fileData``, Ollama's bare base64 ``images``, Cohere ``image_url`` parts.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from .routes import Problem, objects

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
PDF = "application/pdf"
ANTHROPIC_MAX_IMAGE_BASE64 = 5 * 1024 * 1024
ANTHROPIC_MAX_MEDIA = 100
OPENAI_MAX_IMAGES = 500
GEMINI_MAX_INLINE = 20 * 1024 * 1024
COHERE_MAX_IMAGES = 20
_DATA_URL = re.compile(r"data:([\w.+/-]+);base64,(.*)", re.S)
# Models that read no images, as their services answer them.
OPENAI_TEXT_ONLY = re.compile(r"(?:gpt-3\.5|o1-mini|o3-mini|deepseek-|kimi-k2(?![-_.p]?[5-9])).*", re.I)
COHERE_VISION = re.compile(r"command-a-vision-.*", re.I)


def decoded(data: Any) -> bytes | None:
    if not isinstance(data, str) or not data:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def content_type(raw: bytes) -> str | None:
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw.startswith(b"RIFF") and raw[8:12] == b"WEBP":
        return "image/webp"
    if raw.startswith(b"%PDF-"):
        return PDF
    return None


# -- Anthropic ----------------------------------------------------------------------------------------


def anthropic_media_problems(messages: list[Any]) -> list[Problem]:
    problems: list[Problem] = []
    count = 0
    for i, message in enumerate(objects(messages)):
        for k, block in enumerate(objects(message.get("content"))):
            where = f"messages.{i}.content.{k}"
            inner = objects(block.get("content")) if block.get("type") == "tool_result" else []
            for n, item in enumerate(inner):
                if item.get("type") not in ("text", "image", "document", "search_result"):
                    problems.append(Problem(f"{where}.content.{n}.type: Input tag {item.get('type')!r} is invalid"))
            for item, at in [(block, where), *((item, f"{where}.content.{n}") for n, item in enumerate(inner))]:
                if item.get("type") not in ("image", "document"):
                    continue
                count += 1
                if message.get("role") != "user":
                    problems.append(Problem(f"{at}: {item['type']} blocks are only allowed in user messages"))
                problems += _anthropic_source(at, item)
    if count > ANTHROPIC_MAX_MEDIA:
        problems.append(Problem(f"messages: too many images and documents: {count} > {ANTHROPIC_MAX_MEDIA}"))
    return problems


def _anthropic_source(where: str, block: dict[str, Any]) -> list[Problem]:
    kind, source = block["type"], block.get("source")
    if not isinstance(source, dict):
        return [Problem(f"{where}.{kind}.source: Field required")]
    if source.get("type") == "url":
        ok = isinstance(source.get("url"), str) and source["url"].startswith(("https://", "http://"))
        return [] if ok else [Problem(f"{where}.{kind}.source.url.url: Field required")]
    if source.get("type") != "base64":
        return [Problem(f"{where}.{kind}.source: Input tag {source.get('type')!r} is invalid")]
    allowed = IMAGE_TYPES if kind == "image" else (PDF,)
    media_type = source.get("media_type")
    if media_type not in allowed:
        names = ", ".join(repr(t) for t in allowed)
        return [Problem(f"{where}.{kind}.source.base64.media_type: Input should be {names}")]
    if "data" not in source:
        return [Problem(f"{where}.{kind}.source.base64.data: Field required")]
    raw = decoded(source["data"])
    if raw is None:
        return [Problem(f"{where}.{kind}.source.base64.data: Invalid base64 data")]
    if kind == "image" and len(source["data"]) > ANTHROPIC_MAX_IMAGE_BASE64:
        return [Problem(f"{where}.image.source.base64: image exceeds 5 MB maximum: {len(source['data'])} bytes")]
    actual = content_type(raw)
    if actual != media_type:
        return [
            Problem(
                f"{where}.{kind}.source.base64: The {kind} was specified using the {media_type} media type, "
                f"but the data does not appear to be a {media_type} file"
            )
        ]
    return []


# -- OpenAI chat completions (and Cohere, which shares image_url parts) ------------------------------------


def openai_media_problems(body: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    images = 0
    for i, message in enumerate(objects(body.get("messages"))):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        role = message.get("role")
        for k, part in enumerate(objects(content)):
            where = f"messages[{i}].content[{k}]"
            kind = part.get("type")
            if role in ("tool", "system", "assistant") and kind != "text":
                problems.append(Problem(f"Invalid value: '{kind}'. Supported values are: 'text'.", param=where))
            elif kind == "image_url":
                images += 1
                problems += _image_url_problems(where, part.get("image_url"))
                if OPENAI_TEXT_ONLY.fullmatch(str(body.get("model", "")).rsplit("/", 1)[-1]):
                    problems.append(
                        Problem("Invalid content type. image_url is only supported by certain models.", param=where)
                    )
            elif kind == "file":
                problems += _file_problems(where, part.get("file"))
            elif kind not in ("text", "input_audio", "refusal"):
                problems.append(Problem(f"Invalid value: {kind!r}.", param=f"{where}.type"))
    if images > OPENAI_MAX_IMAGES:
        problems.append(Problem(f"Too many images in request. Max is {OPENAI_MAX_IMAGES}."))
    return problems


def _image_url_problems(where: str, image_url: Any) -> list[Problem]:
    url = image_url.get("url") if isinstance(image_url, dict) else None
    if not isinstance(url, str):
        return [Problem(f"Missing required parameter: '{where}.image_url.url'.", param=f"{where}.image_url.url")]
    if url.startswith(("https://", "http://")):
        return []
    match = _DATA_URL.fullmatch(url)
    if match is None or match[1] not in IMAGE_TYPES:
        return [
            Problem(
                f"Invalid '{where}.image_url.url'. Expected a base64-encoded data URL with an image MIME type "
                "(e.g. 'data:image/png;base64,...').",
                param=f"{where}.image_url.url",
                code="invalid_image_url",
            )
        ]
    raw = decoded(match[2])
    if raw is None or content_type(raw) not in IMAGE_TYPES:
        return [
            Problem("You uploaded an unsupported image. Please make sure your image is valid.", code="invalid_image")
        ]
    return []


def _file_problems(where: str, file: Any) -> list[Problem]:
    if not isinstance(file, dict):
        return [Problem(f"Missing required parameter: '{where}.file'.")]
    data = file.get("file_data")
    if not isinstance(data, str):
        return [Problem(f"Missing required parameter: '{where}.file.file_data'.")]
    if not isinstance(file.get("filename"), str) or not file["filename"]:
        return [Problem(f"Missing required parameter: '{where}.file.filename'.")]
    match = _DATA_URL.fullmatch(data)
    raw = decoded(match[2]) if match and match[1] == PDF else None
    if raw is None or content_type(raw) != PDF:
        return [Problem(f"Invalid file data: '{where}.file.file_data'. Expected a base64 PDF data URL.")]
    return []


def cohere_media_problems(body: dict[str, Any]) -> list[Problem]:
    problems: list[Problem] = []
    images = 0
    vision = COHERE_VISION.fullmatch(str(body.get("model", ""))) is not None
    for i, message in enumerate(objects(body.get("messages"))):
        content = message.get("content")
        for k, part in enumerate(objects(content) if isinstance(content, list) else []):
            if part.get("type") != "image_url":
                if part.get("type") not in ("text", "thinking", "document"):
                    problems.append(Problem(f"invalid request: messages[{i}].content[{k}].type is invalid"))
                continue
            images += 1
            if message.get("role") != "user":
                problems.append(Problem(f"invalid request: messages[{i}]: images are only allowed in user messages"))
            problems += [
                Problem(f"invalid request: {problem}")
                for problem in _image_url_problems(f"messages[{i}].content[{k}]", part.get("image_url"))
            ]
    if images and not vision:
        problems.append(Problem(f"invalid request: model '{body.get('model')}' does not support image inputs"))
    if images > COHERE_MAX_IMAGES:
        problems.append(Problem(f"invalid request: too many images: {images}, the maximum is {COHERE_MAX_IMAGES}"))
    return problems


# -- Gemini -----------------------------------------------------------------------------------------------


def gemini_media_problems(contents: list[Any]) -> list[Problem]:
    problems: list[Problem] = []
    inline = 0
    for i, content in enumerate(objects(contents)):
        for j, part in enumerate(objects(content.get("parts"))):
            where = f"contents[{i}].parts[{j}]"
            if "inlineData" in part:
                data = part["inlineData"] if isinstance(part["inlineData"], dict) else {}
                mime, raw = data.get("mimeType"), decoded(data.get("data"))
                if not isinstance(mime, str) or not mime:
                    problems.append(_gemini(f"* GenerateContentRequest.{where}.inline_data.mime_type: required"))
                elif raw is None:
                    problems.append(
                        _gemini(f"Invalid value at '{where}.inline_data.data' (TYPE_BYTES), Base64 decoding failed")
                    )
                elif mime not in (*IMAGE_TYPES, PDF):
                    problems.append(_gemini(f"Unsupported MIME type: {mime}"))
                else:
                    inline += len(raw)
            elif "fileData" in part:
                data = part["fileData"] if isinstance(part["fileData"], dict) else {}
                if not isinstance(data.get("fileUri"), str) or not isinstance(data.get("mimeType"), str):
                    problems.append(_gemini(f"* GenerateContentRequest.{where}.file_data: file_uri and mime_type"))
    if inline > GEMINI_MAX_INLINE:
        problems.append(_gemini(f"Request payload size exceeds the limit: {GEMINI_MAX_INLINE} bytes."))
    return problems


def _gemini(message: str) -> Problem:
    return Problem(message, error_type="INVALID_ARGUMENT")


# -- Ollama -----------------------------------------------------------------------------------------------


def ollama_media_problems(messages: list[Any]) -> list[Problem]:
    problems: list[Problem] = []
    for i, message in enumerate(objects(messages)):
        images = message.get("images")
        if images is None:
            continue
        if not isinstance(images, list):
            problems.append(Problem(f"messages[{i}].images: json: cannot unmarshal into []api.ImageData"))
            continue
        for image in images:
            raw = decoded(image)
            if raw is None:
                problems.append(Problem("illegal base64 data at input byte 4"))
            elif content_type(raw) not in IMAGE_TYPES:
                problems.append(Problem("image: unknown format"))
    return problems
