"""The keys page without a browser: each configured provider's keys by fingerprint and never the key,
their states as doctor reads them (usable, or set aside: why, until when, strikes), valid and escaped
HTML, a link for administrators only, and a member refused as for another member's call."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path

import html5lib
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request

from colibri_router.checkup.providers import _keys, _Rows
from colibri_router.engine.keys import KeyStatus, fingerprint, pool_for, share_through
from colibri_router.engine.shared_keys import SharedSetAsides
from colibri_router.providers import usable_providers
from colibri_router.tokens import TokensFile
from colibri_router.webui.keys import ProviderKeys, keys_page, provider_keys
from colibri_router.webui.layout import Viewer
from colibri_router.webui.routes import TeamPages
from colibri_router.webui.sessions import Sessions

pytestmark = pytest.mark.usefixtures("fresh_key_pools")  # a pool is per process: each test starts anew

KIMI_KEYS = ("sk-kimiPoolKeyNumberOne0000000000000", "sk-kimiPoolKeyNumberTwo0000000000000", "sk-kimiThree000000000000")
OPENAI_KEY = "sk-proj-openaiOnlyKey000000000000000000"
ADMIN = Viewer("ops", admin=True, csrf="0" * 64)
MEMBER = Viewer("bob", admin=False, csrf="0" * 64)


@pytest.fixture
def keys_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", ",".join(KIMI_KEYS))
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)


def parse(document: str) -> object:
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(document)


def rows(document: str) -> dict[str, list[str]]:
    """The keys table's rows by fingerprint, each cell's text."""
    tree = parse(document)
    found: dict[str, list[str]] = {}
    for row in tree.findall(".//tbody/tr"):  # type: ignore[attr-defined]
        cells = ["".join(cell.itertext()) for cell in row]
        found[cells[0]] = cells[1:]
    return found


async def test_each_key_by_fingerprint_with_its_state_never_the_key(keys_set: None) -> None:
    kimi = pool_for("kimi", KIMI_KEYS)
    kimi.set_aside(0, "rate_limited", 120.0)
    kimi.set_aside(0, "rate_limited", 300.0)  # a second rate limit in a row: two strikes
    kimi.set_aside(1, "invalid", None)
    listing = await provider_keys()
    by_provider = {entry.provider: entry for entry in listing}
    assert {"kimi", "openai"} <= set(by_provider)
    assert all(entry.keys for entry in listing)  # a provider without a key is not listed
    document = keys_page(ADMIN, listing)
    for key in (*KIMI_KEYS, OPENAI_KEY):
        assert key not in document
        assert key[3:12] not in document  # nor any part of it
    table = rows(document)
    first, second, third = (fingerprint("kimi", key) for key in KIMI_KEYS)
    assert table[first][:2] == ["kimi", "set aside: rate limited"]
    until = datetime.strptime(table[first][2], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert 0 < (until - datetime.now(UTC)).total_seconds() <= 300
    assert table[first][3] == "2"
    assert table[second] == ["kimi", "set aside: rejected (invalid)", "until restart", "1"]
    assert table[third] == ["kimi", "usable", "", ""]
    assert table[fingerprint("openai", OPENAI_KEY)] == ["openai", "usable", "", ""]


async def test_the_page_shows_what_doctor_shows(keys_set: None) -> None:
    pool_for("kimi", KIMI_KEYS).set_aside(2, "out_of_quota", None)
    listing = {entry.provider: entry.keys for entry in await provider_keys()}
    for name in ("kimi", "openai"):
        doctor = _keys(usable_providers()[name])
        assert [(s.fingerprint, s.state, s.seconds_left) for s in listing[name]] == [
            (entry["fingerprint"], entry["state"], entry["seconds_left"]) for entry in doctor
        ]
    assert listing["kimi"][2].state == "out_of_quota" and listing["kimi"][2].strikes == 1


async def test_what_the_replicas_set_aside_is_read_first(keys_set: None) -> None:
    aside = fingerprint("kimi", KIMI_KEYS[1])
    share_through(SharedSetAsides(_Rows([("kimi", aside, "out_of_quota", time.time() + 3600, 4)])))
    try:
        listing = {entry.provider: entry.keys for entry in await provider_keys()}
    finally:
        share_through(None)
    assert [(s.state, s.strikes) for s in listing["kimi"]] == [("usable", 0), ("out_of_quota", 4), ("usable", 0)]


def test_no_key_anywhere_says_so() -> None:
    document = keys_page(ADMIN, [])
    parse(document)
    assert "No provider has a key set." in document and "No keys." in document


_texts = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=16)


@given(provider=_texts, print_=_texts, state=st.sampled_from(["usable", "rate_limited", "out_of_quota", "invalid"]))
def test_the_page_is_valid_html_and_escapes_every_name(provider: str, print_: str, state: str) -> None:
    status = KeyStatus(print_, state, None if state in ("usable", "invalid") else 5.0, None, 0)  # type: ignore[arg-type]
    if state == "out_of_quota":
        status = KeyStatus(print_, state, 5.0, 1_800_000_000.0, 3)
    document = keys_page(Viewer(provider, admin=True, csrf="0" * 64), [ProviderKeys(provider, [status])])
    tree = parse(document)
    assert tree.find(".//script") is None  # type: ignore[attr-defined]
    assert tree.find("body/main/h1") is not None  # type: ignore[attr-defined]
    (cells,) = rows(document).items()
    assert cells[0] == print_ and cells[1][0] == provider
    if state == "out_of_quota":
        assert cells[1][2:] == ["2027-01-15 08:00:00", "3"]


def nav_links(document: str) -> list[str]:
    return re.findall(r'<nav aria-label="Pages"><ul>(.*?)</ul></nav>', document)[0].split("</li>")


def test_only_an_administrator_gets_the_link() -> None:
    admin_page = keys_page(ADMIN, [])
    assert any('href="/ui/keys" aria-current="page">Keys' in link for link in nav_links(admin_page))
    from colibri_router.webui import pages

    member_page = pages.message_page("Calls", "x", MEMBER)
    assert "/ui/keys" not in member_page and ">Keys<" not in member_page
    assert "/ui/members" in member_page  # the other links are there


def request(path: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": path, "headers": [], "query_string": b""})


async def test_a_member_asking_for_the_page_gets_no_such_page(keys_set: None, tmp_path: Path) -> None:
    team = TeamPages(TokensFile(tmp_path / "tokens"), Sessions(TokensFile(tmp_path / "tokens"), b"k" * 32), [])
    refused = await team.keys(request("/ui/keys"), MEMBER, None)  # type: ignore[arg-type]  # the store is not read
    assert refused.status_code == 404
    body = bytes(refused.body).decode()
    assert "<h1>No such page</h1>" in body
    assert fingerprint("kimi", KIMI_KEYS[0]) not in body and "/ui/keys" not in body
    shown = await team.keys(request("/ui/keys"), ADMIN, None)  # type: ignore[arg-type]
    assert shown.status_code == 200
    assert fingerprint("kimi", KIMI_KEYS[0]) in bytes(shown.body).decode()
