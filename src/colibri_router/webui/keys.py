"""The keys page (administrators only): each provider's API keys by fingerprint, never the key, with
the state this server holds of each (usable, or set aside: why, until when, how many times running;
docs/keys.md). The states are doctor's (:func:`~colibri_router.checkup.providers.key_statuses`), read
after the replicas' set-asides are (on a team server's PostgreSQL), as a call reads them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from colibri_router.checkup.providers import key_statuses
from colibri_router.engine.keys import KeyStatus, shared_set_asides
from colibri_router.providers import usable_providers
from colibri_router.webui.layout import Viewer, moment, number, page, table
from colibri_router.webui.markup import Html, html

_REASONS = {"rate_limited": "rate limited", "out_of_quota": "out of quota", "invalid": "rejected (invalid)"}


@dataclass(frozen=True, slots=True)
class ProviderKeys:
    """One provider with a key set, and its keys' states in the order they are configured."""

    provider: str
    keys: list[KeyStatus]


async def provider_keys() -> list[ProviderKeys]:
    """Every provider whose key variables hold a key, with each key's state now."""
    sharing = shared_set_asides()
    if sharing is not None:
        await sharing.refresh()  # what the other replicas set aside (at most once a second, as a call)
    listing = [ProviderKeys(spec.name, key_statuses(spec)) for spec in usable_providers().values() if spec.key_envs]
    return [entry for entry in listing if entry.keys]


def _state(status: KeyStatus) -> Html:
    if status.state == "usable":
        return Html('<span class="ok">usable</span>')
    return html('<span class="bad">set aside: {reason}</span>', reason=_REASONS.get(status.state, status.state))


def _until(status: KeyStatus) -> str:
    if status.state == "usable":
        return ""
    if status.until is None:
        return "until restart"
    return moment(datetime.fromtimestamp(status.until, UTC))


def keys_page(viewer: Viewer, listing: Sequence[ProviderKeys]) -> Html:
    rows: list[list[Html | str]] = [
        [
            status.fingerprint,
            entry.provider,
            _state(status),
            _until(status),
            number(status.strikes) if status.state != "usable" else "",
        ]
        for entry in listing
        for status in entry.keys
    ]
    pooled = sum(len(entry.keys) > 1 for entry in listing)
    body = html(
        "<p>Each key is named by its fingerprint: the provider and the first six hex digits of the key's "
        'SHA-256 (<code>printf %s "$KEY" | sha256sum | cut -c1-6</code> tells which key it is). A key '
        "the provider refuses is set aside, and calls go on with the provider's other keys; a provider's "
        "only key is never set aside.</p>"
        '<p class="note">{summary} The states are this server process\'s; on PostgreSQL they include '
        "what every replica set aside.</p>{listing}",
        summary=f"{len(listing)} providers with a key, {pooled} with several."
        if listing
        else "No provider has a key set.",
        listing=table(
            "Provider keys, by fingerprint",
            ["Key", "Provider", "State", "Set aside until (UTC)", "Strikes"],
            rows,
            4,
            "No keys.",
        ),
    )
    return page("Keys", body, viewer, "keys")
