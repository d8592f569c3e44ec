"""The frame every ``/ui`` page shares (head, skip link, navigation, who is logged in, logout) and
the small formatters the pages use."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from colibri_router import __version__
from colibri_router.store import format_usd
from colibri_router.webui.markup import Html, html, join

NAVIGATION = (("spend", "Spend"), ("calls", "Calls"), ("jobs", "Jobs"), ("members", "Members"))
ADMIN_NAVIGATION = (("keys", "Keys"),)  # linked for administrators only


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking: their token's name, whether they are an administrator, and the CSRF token of
    their logout form."""

    name: str
    admin: bool
    csrf: str

    @property
    def visible(self) -> str | None:
        """Whose calls they see: everyone's (None) or their own."""
        return None if self.admin else self.name


def page(title: str, body: Html, viewer: Viewer | None = None, current: str = "") -> Html:
    """A whole document: ``body`` inside ``<main>``, the navigation when someone is logged in."""
    header = Html("")
    if viewer is not None:
        links = [
            html(
                '<li><a href="/ui/{slug}"{current}>{label}</a></li>',
                slug=slug,
                label=label,
                current=Html(' aria-current="page"') if slug == current else Html(""),
            )
            for slug, label in NAVIGATION + (ADMIN_NAVIGATION if viewer.admin else ())
        ]
        header = html(
            '<nav aria-label="Pages"><ul>{links}</ul></nav>'
            '<form class="who" method="post" action="/ui/logout">'
            '<span>{name} <span class="role">({role})</span></span>'
            '<input type="hidden" name="csrf" value="{csrf}">'
            '<button type="submit">Log out</button></form>',
            links=join(links),
            name=viewer.name,
            role="admin" if viewer.admin else "member",
            csrf=viewer.csrf,
        )
    return html(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>{title} · colibri-router</title>"
        '<link rel="stylesheet" href="/ui/static/ui.css"></head>'
        '<body><a class="skip" href="#main">Skip to content</a>'
        '<header><span class="brand">colibri-router</span>{header}</header>'
        '<main id="main" tabindex="-1"><h1>{title}</h1>{body}</main>'
        "<footer>colibri-router {version} · times in UTC</footer></body></html>\n",
        title=title,
        header=header,
        body=body,
        version=__version__,
    )


def usd(micro: int | None) -> str:
    return "unpriced" if micro is None else format_usd(micro)


def moment(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S")


def number(value: int) -> str:
    return f"{value:,}"


def table(
    caption: str, headings: list[str], rows: list[list[Html | str]], numeric_from: int = 1, empty: str = "No calls."
) -> Html:
    """A data table; columns from ``numeric_from`` on are numbers (right-aligned). An empty table
    says ``empty`` in one row."""
    head = join(
        html('<th scope="col"{cls}>{h}</th>', h=h, cls=Html(' class="num"') if i >= numeric_from else Html(""))
        for i, h in enumerate(headings)
    )
    body_rows = [
        html(
            "<tr>{cells}</tr>",
            cells=join(
                html('<th scope="row">{v}</th>', v=value)
                if i == 0
                else html("<td{cls}>{v}</td>", v=value, cls=Html(' class="num"') if i >= numeric_from else Html(""))
                for i, value in enumerate(row)
            ),
        )
        for row in rows
    ]
    if not body_rows:
        body_rows = [html('<tr><td colspan="{n}">{empty}</td></tr>', n=len(headings), empty=empty)]
    return html(
        '<div class="scroll" role="region" aria-label="{caption}" tabindex="0">'
        "<table><caption>{caption}</caption><thead><tr>{head}</tr></thead>"
        "<tbody>{rows}</tbody></table></div>",
        caption=caption,
        head=head,
        rows=join(body_rows),
    )
