"""The parts of ``/ui`` that need no browser: escaping, session cookies and CSRF tokens, the
cross-site rule, the Host check, the chart's scale and the spend series."""

from __future__ import annotations

import html as stdlib_html
import time
from pathlib import Path

import html5lib
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request

from colibri_router.store import DaySpend
from colibri_router.tokens import TokensFile, add_token
from colibri_router.webui import charts
from colibri_router.webui.markup import Html, escape, html
from colibri_router.webui.queries import build_series
from colibri_router.webui.routes import _host_allowed
from colibri_router.webui.sessions import SESSION_COOKIE, Sessions, cross_site


def request(cookie: str = "", **headers: str) -> Request:
    raw = [(name.replace("_", "-").lower().encode(), value.encode()) for name, value in headers.items()]
    if cookie:
        raw.append((b"cookie", f"{SESSION_COOKIE}={cookie}".encode()))
    return Request({"type": "http", "method": "POST", "path": "/ui/logout", "headers": raw, "query_string": b""})


@given(st.text())
def test_every_value_is_escaped_and_reads_back_the_same(text: str) -> None:
    filled = html("<td title='{v}'>{v}</td>", v=text)
    inner = filled.removeprefix("<td title='").removesuffix("</td>").split("'>", 1)
    assert "<" not in inner[1] and ">" not in inner[1] and "'" not in inner[0]
    assert stdlib_html.unescape(inner[1]) == text


def test_markup_goes_in_only_when_marked() -> None:
    assert html("<p>{a}{b}</p>", a="<b>x</b>", b=Html("<i>y</i>")) == "<p>&lt;b&gt;x&lt;/b&gt;<i>y</i></p>"
    assert escape(None) == ""
    with pytest.raises(ValueError, match="format spec"):
        html("{a!r}", a=1)


@pytest.fixture
def tokens(tmp_path: Path) -> tuple[TokensFile, dict[str, str]]:
    path = tmp_path / "tokens"
    issued = {name: add_token(path, name) for name in ("alice", "bob")}
    return TokensFile(path), issued


def test_a_session_is_the_member_of_the_token_and_survives_no_change(tokens: tuple[TokensFile, dict[str, str]]) -> None:
    file, issued = tokens
    sessions = Sessions(file, b"k" * 32)
    cookie = sessions.log_in(issued["alice"])
    assert cookie is not None and issued["alice"] not in cookie
    found = sessions.current(request(cookie))
    assert found is not None and found.name == "alice"
    assert sessions.log_in(issued["alice"] + "x") is None
    name, expires, nonce, mac = cookie.rsplit(".", 3)
    for forged in (
        f"bob.{expires}.{nonce}.{mac}",  # another member's name under alice's signature
        f"{name}.{int(expires) + 1}.{nonce}.{mac}",  # a longer life
        f"{name}.{expires}.{nonce}.{mac[:-1]}{'1' if mac.endswith('0') else '0'}",  # one digit changed
        f"carol.{expires}.{nonce}.!",  # a name with no token
        "alice",
        "",
    ):
        assert sessions.current(request(forged)) is None, forged
    assert Sessions(file, b"o" * 32).current(request(cookie)) is None  # another server's secret
    past = f"{name}.{int(time.time()) - 1}.{nonce}"
    assert sessions.current(request(f"{past}.{sessions._mac(past, name)}")) is None  # expired


def test_a_new_token_for_the_member_ends_their_sessions(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    token = add_token(path, "alice")
    sessions = Sessions(TokensFile(path), b"k" * 32)
    cookie = sessions.log_in(token)
    assert cookie is not None and sessions.current(request(cookie)) is not None
    path.write_text("")  # the line removed...
    add_token(path, "alice")  # ...and a new token issued under the same name
    assert sessions.current(request(cookie)) is None


def test_csrf_tokens_belong_to_their_cookie() -> None:
    sessions = Sessions(TokensFile(Path("/nonexistent")), b"k" * 32)
    token = sessions.csrf_token("cookie-a")
    assert sessions.csrf_valid("cookie-a", token)
    assert not sessions.csrf_valid("cookie-b", token)
    assert not sessions.csrf_valid("", sessions.csrf_token(""))  # no cookie, no valid form


@pytest.mark.parametrize(
    ("headers", "refused"),
    [
        ({"host": "router.test"}, False),  # no Origin, no Sec-Fetch-Site: a non-browser client
        ({"host": "router.test", "origin": "https://router.test"}, False),
        ({"host": "router.test", "origin": "https://elsewhere.test"}, True),
        ({"host": "router.test", "origin": "null"}, True),
        ({"host": "router.test:8000", "origin": "http://router.test"}, True),
        ({"host": "router.test", "sec_fetch_site": "same-origin"}, False),
        ({"host": "router.test", "sec_fetch_site": "none"}, False),
        ({"host": "router.test", "sec_fetch_site": "cross-site"}, True),
        ({"host": "router.test", "sec_fetch_site": "same-site"}, True),
    ],
)
def test_cross_site_posts_are_told_apart(headers: dict[str, str], refused: bool) -> None:
    assert cross_site(request(**headers)) is refused


def test_the_host_check_takes_the_mcp_endpoints_patterns() -> None:
    patterns = ["router.test", "router.test:*", "127.0.0.1:*"]
    assert _host_allowed("router.test", patterns)
    assert _host_allowed("router.test:8443", patterns)
    assert _host_allowed("127.0.0.1:8000", patterns)
    assert not _host_allowed("evil.test", patterns)
    assert not _host_allowed("router.test.evil.test", patterns)
    assert not _host_allowed("127.0.0.10:8000", patterns)


@given(st.integers(0, 10**15))
def test_the_axis_top_is_round_and_holds_the_tallest_bar(value: int) -> None:
    top = charts._nice_ceiling(value)
    assert top >= value
    assert str(top).rstrip("0") in ("1", "2", "5")
    assert top < max(value, 1) * 5 + 1


def test_a_series_fills_every_day_and_orders_keys_by_cost() -> None:
    rows = [DaySpend("2025-03-02", "b", 2, 1, 500), DaySpend("2025-03-01", "a", 1, 0, 900)]
    series = build_series("principal", ("2025-03-01", "2025-03-02", "2025-03-03"), rows)
    assert series.keys == ("a", "b")
    assert (series.total("a"), series.day_total("2025-03-03"), series.errors["b"]) == (900, 0, 1)
    many = build_series("model", ("2025-03-01",), [DaySpend("2025-03-01", f"m{i}", 1, 0, i) for i in range(10)])
    assert charts.shown_keys(many)[-1] == charts.OTHERS and len(charts.shown_keys(many)) == charts.COLOURS
    drawn = charts.spend_chart(many, "c", "<title>")
    assert "&lt;title&gt;" in drawn and drawn.count("<rect") == 9  # the key with no cost draws nothing


def test_the_pages_are_served_only_with_a_tokens_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from colibri_router.server.http import HttpOptions, build_app, plan
    from colibri_router.settings import load_settings

    options = HttpOptions()
    without = build_app(options, plan(options, load_settings()))
    assert not [route for route in without.routes if getattr(route, "path", "").startswith("/ui")]
    add_token(tmp_path / "tokens", "alice")
    monkeypatch.setenv("COLIBRI_HTTP_TOKENS_FILE", str(tmp_path / "tokens"))
    with_tokens = build_app(options, plan(options, load_settings()))
    paths = {getattr(route, "path", "") for route in with_tokens.routes}
    assert {"/ui", "/ui/login", "/ui/logout", "/ui/spend", "/ui/calls", "/ui/members"} <= paths


_names = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=12)


@given(member=_names, model=_names, outcome=_names)
def test_every_page_is_valid_html_whatever_the_names(member: str, model: str, outcome: str) -> None:
    from datetime import UTC, datetime

    from colibri_router.store import BudgetLimits, LedgerRow, StoredCall
    from colibri_router.webui import pages
    from colibri_router.webui.layout import Viewer
    from colibri_router.webui.queries import MemberUsage

    viewer = Viewer(member, admin=True, csrf="0" * 64)
    row = LedgerRow(
        at=datetime(2025, 3, 14, tzinfo=UTC), principal=member, thread_id=None, provider=model, model=model,
        outcome=outcome, cost_micro_usd=5,
    )  # fmt: skip
    days = ("2025-03-13", "2025-03-14")
    series = build_series("model", days, [DaySpend("2025-03-13", model, 1, 0, 5)])
    filters = pages.CallFilters(member=member, model=model, outcome=outcome)
    usage = {member: MemberUsage(member, 1, 0, 5, 5)}
    documents = [
        pages.login_page("0" * 64, problem=outcome),
        pages.message_page(outcome, member, viewer),
        pages.spend_page(viewer, 7, series, series, "2025-03-13"),
        pages.calls_page(viewer, filters, [member], [model], [StoredCall(1, row)], f"/ui/calls?model={model}"),
        pages.call_page(viewer, StoredCall(1, row)),
        pages.members_page(viewer, [member], [member], usage, BudgetLimits(daily_per_principal_micro_usd=10)),
    ]
    for document in documents:
        tree = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(document)
        assert tree.find("body/main/h1") is not None
        if "<script" in member + model + outcome:
            assert tree.find(".//script") is None
