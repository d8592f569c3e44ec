"""HTML built from Python strings, escaped by default: :class:`Html` is text already safe to put in
a page; :func:`html` fills a template's ``{name}`` fields, escaping every value that is not
:class:`Html` (so a member name, a model or an error code can never become markup)."""

from __future__ import annotations

import html as _html
import string
from collections.abc import Iterable
from typing import Any

_FORMATTER = string.Formatter()


class Html(str):
    """Text that is already HTML: inserted into a template as it is."""

    __slots__ = ()


def escape(value: object) -> Html:
    """``value`` as HTML: itself when it is :class:`Html`, else its text escaped (quotes too)."""
    if isinstance(value, Html):
        return value
    return Html(_html.escape("" if value is None else str(value), quote=True))


def html(template: str, **values: Any) -> Html:
    """``template`` with each ``{name}`` replaced by ``values[name]`` escaped (:func:`escape`). The
    template itself is trusted: it is always a literal in this package."""
    parts: list[str] = []
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        parts.append(literal)
        if field is None:
            continue
        if spec or conversion:
            raise ValueError(f"template fields take no format spec or conversion: {{{field}}}")
        parts.append(escape(values[field]))
    return Html("".join(parts))


def join(parts: Iterable[Html], separator: str = "") -> Html:
    """Fragments of HTML as one (each escaped if it is not already :class:`Html`)."""
    return Html(separator.join(escape(part) for part in parts))
