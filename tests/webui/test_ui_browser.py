"""``/ui`` in a real headless Chromium (Debian's, driven by Playwright), against the real ``serve
--http`` process reading a ledger written through the SQLite store: logging in, the spend charts and
tables, filtering calls, a call's detail, a member restricted to their own calls, the login page for
a missing or wrong token, the session cookie's flags, cross-site POSTs refused, valid HTML, axe-core
finding no serious violation, pages that fit a phone, and the providers' keys by fingerprint for
administrators only, and the jobs (every member's for an administrator). One server and one browser for the module.

``UI_SCREENSHOTS=DIR`` also saves each page's screenshot there (``docs/`` holds them)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import html5lib
import httpx
import pytest
from browser_support import DESKTOP, JOB_ANSWER, PHONE, PROVIDER_KEYS, Team, axe_source, team_server
from playwright.sync_api import Browser, BrowserContext, Page

from colibri_router.engine.keys import fingerprint

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with team_server(tmp_path_factory.mktemp("team")) as running:
        yield running


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    opened = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    yield opened
    opened.close()


def log_in(page: Page, team: Team, name: str) -> None:
    page.goto(f"{team.base}/ui")
    page.get_by_label("Token").fill(team.tokens[name])
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{team.base}/ui/spend")


def table_rows(page: Page, caption: str) -> list[list[str]]:
    table = page.locator("table", has=page.locator("caption", has_text=caption))
    return [
        [cell.strip() for cell in row.locator("th, td").all_inner_texts()] for row in table.locator("tbody tr").all()
    ]


def test_an_admin_logs_in_and_sees_yesterdays_spend_by_member_and_model(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    page.goto(f"{team.base}/ui")
    assert page.locator("h1").inner_text() == "Log in"
    log_in(page, team, "ops")
    assert page.locator("h2#yesterday").inner_text() == f"Yesterday, {team.ledger.yesterday}"
    assert table_rows(page, "Yesterday by member") == [["alice", "$0.15"], ["bob", "$0.05"]]
    assert table_rows(page, "Yesterday by model") == [["kimi-k2", "$0.12"], ["gpt-5", "$0.08"]]
    # The charts: one segment per member and day, each titled with its cost.
    segments = page.locator("#chart-member-t").locator("xpath=..").locator("rect title").all_text_contents()
    assert f"{team.ledger.yesterday} alice: $0.15" in segments
    assert f"{team.ledger.today} alice: $0.007" in segments
    models = page.locator("svg", has=page.locator("#chart-model-t")).locator("rect title").all_text_contents()
    assert f"{team.ledger.yesterday} gpt-5: $0.08" in models
    assert table_rows(page, "Last 7 days by member") == [["alice", "3", "0", "$0.157"], ["bob", "3", "1", "$0.06"]]
    page.get_by_role("link", name="90 days").click()
    assert page.locator("svg.chart").first.get_attribute("aria-labelledby") == "chart-member-t chart-member-d"
    assert "90 days" in page.locator("#chart-member-d").text_content()  # type: ignore[operator]


def test_calls_filter_by_member_model_outcome_and_day(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    log_in(page, team, "ops")
    page.get_by_role("link", name="Calls").click()
    assert len(table_rows(page, "Calls, newest first")) == 6

    def filtered(**choices: str) -> list[list[str]]:
        page.goto(f"{team.base}/ui/calls")
        for label, value in choices.items():
            field = page.get_by_label(label, exact=False)
            if label.startswith(("From", "To")):
                field.fill(value)
            else:
                field.select_option(value)
        page.get_by_role("button", name="Filter").click()
        return table_rows(page, "Calls, newest first")

    assert {row[1] for row in filtered(Member="bob")} == {"bob"}
    assert len(filtered(Member="bob")) == 3
    assert [row[2] for row in filtered(Model="gpt-5")] == ["gpt-5", "gpt-5"]
    timeouts = filtered(Outcome="TIMEOUT")
    assert [(row[1], row[3], row[6]) for row in timeouts] == [("bob", "TIMEOUT", "unpriced")]
    assert len(filtered(Outcome="ok")) == 5
    day = team.ledger.yesterday
    assert [row[2] for row in filtered(**{"From (UTC day)": day, "To (UTC day, included)": day})] == [
        "gpt-5",
        "gpt-5",
        "kimi-k2",
    ]
    filtered(Member="bob")
    assert "member=bob" in page.url  # the filters are a GET: the address can be shared


def test_a_call_opens_with_its_counts(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    log_in(page, team, "ops")
    page.goto(f"{team.base}/ui/calls?model=claude-sonnet-4-5")
    page.locator("table tbody a").first.click()
    facts = dict(
        zip(page.locator("dl.facts dt").all_inner_texts(), page.locator("dl.facts dd").all_inner_texts(), strict=True)
    )
    assert facts["Member"] == "alice"
    assert facts["Model"] == "claude-sonnet-4-5"
    assert facts["Thread"] == "th_webuiThreadId0000001"
    assert (facts["Reasoning tokens"], facts["Cached input tokens"], facts["Input tokens"]) == ("33", "44", "1,000")
    assert (facts["Cost"], facts["Latency"], facts["Outcome"], facts["Warnings"]) == ("$0.007", "1,234 ms", "ok", "1")
    assert table_rows(page, "Attempts") == [
        ["1", "kimi", "kimi-k2", "KIMI_RATE_LIMITED", "321 ms"],
        ["2", "claude", "claude-sonnet-4-5", "ok", "1,234 ms"],
    ]


def test_a_member_sees_only_their_own_calls(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    log_in(page, team, "bob")
    assert "bob (member)" in page.locator("header").inner_text()
    assert table_rows(page, "Yesterday by member") == [["bob", "$0.05"]]
    assert table_rows(page, "Yesterday by model") == [["gpt-5", "$0.05"]]
    page.get_by_role("link", name="Calls").click()
    rows = table_rows(page, "Calls, newest first")
    assert [row[1] for row in rows] == ["bob", "bob", "bob"]
    assert page.get_by_label("Member").count() == 0  # no choosing another member
    page.goto(f"{team.base}/ui/calls?member=alice")
    assert {row[1] for row in table_rows(page, "Calls, newest first")} == {"bob"}
    # Alice's call, by its id: the same answer as an unknown id.
    admin = context.browser.new_context()  # type: ignore[union-attr]
    admin_page = admin.new_page()
    log_in(admin_page, team, "ops")
    admin_page.goto(f"{team.base}/ui/calls?member=alice")
    alice_call = admin_page.locator("table tbody a").first.get_attribute("href")
    admin.close()
    answer = page.goto(f"{team.base}{alice_call}")
    assert answer is not None and answer.status == 404
    assert page.locator("h1").inner_text() == "No such call"
    page.get_by_role("link", name="Members").click()
    assert [row[0] for row in table_rows(page, "Members")] == ["bob"]


def test_no_token_or_a_wrong_one_gets_the_login_page(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    for path in ("/ui/spend", "/ui/calls", "/ui/calls/1", "/ui/members"):
        page.goto(f"{team.base}{path}")
        assert page.url == f"{team.base}/ui/login"
        assert page.locator("h1").inner_text() == "Log in"
    page.get_by_label("Token").fill(team.tokens["bob"] + "x")
    with page.expect_response(f"{team.base}/ui/login") as posted:
        page.get_by_role("button", name="Log in").click()
    assert posted.value.status == 401
    assert page.get_by_role("alert").inner_text() == "That token is not valid here."
    assert all(cookie["name"] != "colibri_ui_session" for cookie in context.cookies())
    # A made-up session cookie for a real member is no session either.
    context.add_cookies([{"name": "colibri_ui_session", "value": "bob.9999999999.x.00", "url": f"{team.base}/ui"}])
    page.goto(f"{team.base}/ui/calls")
    assert page.url == f"{team.base}/ui/login"


def test_the_session_cookie_is_httponly_strict_and_not_the_token(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    log_in(page, team, "alice")
    (session,) = [cookie for cookie in context.cookies() if cookie["name"] == "colibri_ui_session"]
    assert session["httpOnly"] is True
    assert session["sameSite"] == "Strict"
    assert session["path"] == "/ui"
    assert team.tokens["alice"] not in session["value"]
    assert page.evaluate("document.cookie") == ""  # no script on the page can read it
    answer = page.goto(f"{team.base}/ui/members")
    assert answer is not None
    policy = answer.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy  # no script, no framing
    page.get_by_role("button", name="Log out").click()
    assert page.url == f"{team.base}/ui/login"
    page.goto(f"{team.base}/ui/spend")
    assert page.url == f"{team.base}/ui/login"


def test_a_cross_site_post_is_refused(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    log_in(page, team, "ops")
    csrf = page.locator("form.who input[name=csrf]").get_attribute("value")
    # Another site's page whose form posts to the router, with the right CSRF token even.
    attack = (
        f'<!DOCTYPE html><html lang="en"><title>x</title><form method="post" action="{team.base}/ui/logout">'
        f'<input type="hidden" name="csrf" value="{csrf}"><button>Go</button></form></html>'
    )
    page.route("http://elsewhere.test/**", lambda route: route.fulfill(body=attack, content_type="text/html"))
    page.goto("http://elsewhere.test/")
    with page.expect_response(f"{team.base}/ui/logout") as posted:
        page.get_by_role("button", name="Go").click()
    assert posted.value.status == 403
    page.goto(f"{team.base}/ui/spend")
    assert page.url == f"{team.base}/ui/spend"  # still logged in
    # The Origin check holds even for a client that sends the session cookie along.
    cookies = {cookie["name"]: cookie["value"] for cookie in context.cookies()}
    form = {"csrf": csrf or ""}
    elsewhere = httpx.post(
        f"{team.base}/ui/logout", data=form, cookies=cookies, headers={"Origin": "http://elsewhere.test"}
    )
    assert elsewhere.status_code == 403
    assert httpx.post(f"{team.base}/ui/logout", data={"csrf": "0" * 64}, cookies=cookies).status_code == 403
    same_origin = httpx.post(f"{team.base}/ui/logout", data=form, cookies=cookies, headers={"Origin": team.base})
    assert same_origin.status_code == 303
    login_elsewhere = httpx.post(
        f"{team.base}/ui/login", data={"token": team.tokens["ops"]}, headers={"Sec-Fetch-Site": "cross-site"}
    )
    assert login_elsewhere.status_code == 403


def _pages(team: Team, page: Page) -> list[tuple[str, str]]:
    page.goto(f"{team.base}/ui/calls")
    call = page.locator("table tbody a").first.get_attribute("href")
    return [
        ("spend", "/ui/spend"),
        ("spend-90-days", "/ui/spend?days=90"),
        ("calls", "/ui/calls?outcome=error"),
        ("calls-all", "/ui/calls"),
        ("call", str(call)),
        ("members", "/ui/members"),
        ("keys", "/ui/keys"),
        ("jobs", "/ui/jobs"),
    ]


def test_pages_are_valid_html_and_axe_finds_nothing_serious(browser: Browser, team: Team) -> None:
    axe = axe_source()
    context = browser.new_context(viewport=DESKTOP, bypass_csp=True)  # type: ignore[arg-type]  # to inject axe
    page = context.new_page()
    problems: list[str] = []

    def check(name: str, path: str) -> None:
        answer = page.goto(f"{team.base}{path}")
        assert answer is not None and answer.ok, name
        parser = html5lib.HTMLParser(strict=True)
        try:
            parser.parse(answer.text())  # the server's bytes, not the browser's repaired tree
        except html5lib.html5parser.ParseError as error:
            problems.append(f"{name}: invalid HTML: {error}")
        page.add_script_tag(content=axe)
        result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        for violation in result["violations"]:
            if violation["impact"] in ("serious", "critical"):
                targets = [node["target"] for node in violation["nodes"]]
                problems.append(f"{name}: {violation['id']} ({violation['impact']}): {violation['help']} at {targets}")

    check("login", "/ui/login")
    log_in(page, team, "ops")
    for name, path in _pages(team, page):
        for viewport in (DESKTOP, PHONE) if name in ("spend", "calls", "jobs") else (DESKTOP,):
            page.set_viewport_size(viewport)  # type: ignore[arg-type]
            check(f"{name} at {viewport['width']} px", path)
    context.close()
    assert not problems, "\n".join(problems)


_SCREENSHOTS = ("spend", "calls-all", "call", "members", "keys", "jobs")  # docs/ui-<name>.png


def test_pages_fit_the_width_and_work_from_the_keyboard(browser: Browser, team: Team) -> None:
    context = browser.new_context(viewport=DESKTOP)  # type: ignore[arg-type]
    page = context.new_page()
    keep = os.environ.get("UI_SCREENSHOTS")
    page.goto(f"{team.base}/ui/login")
    if keep:
        page.screenshot(path=str(Path(keep) / "ui-login.png"))
    # From the keyboard alone: the token field has the focus, Enter logs in; on every page the
    # skip link comes first, and it moves the focus to the content.
    assert page.evaluate("document.activeElement.id") == "token"
    page.keyboard.type(team.tokens["ops"])
    page.keyboard.press("Enter")
    page.wait_for_url(f"{team.base}/ui/spend")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "7 days"  # the content's first link
    for name, path in _pages(team, page):
        for label, viewport in (("", DESKTOP), ("-phone", PHONE)):
            page.set_viewport_size(viewport)  # type: ignore[arg-type]
            page.goto(f"{team.base}{path}")
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"{name} is {overflow} px wider than a {viewport['width']} px window"
            if keep and name in _SCREENSHOTS and (not label or name == "spend"):
                page.screenshot(path=str(Path(keep) / f"ui-{name.removesuffix('-all')}{label}.png"), full_page=True)
    context.close()


def test_the_members_page_shows_each_member_against_the_budget(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    log_in(page, team, "ops")
    page.get_by_role("link", name="Members").click()
    rows = {row[0]: row for row in table_rows(page, "Members")}
    assert sorted(rows) == ["alice", "bob", "ops"]  # the tokens file's names
    assert rows["ops"][1:5] == ["admin", "none: every provider, model and tool", "0", "0"]
    assert rows["alice"][1:5] == ["member", "none: every provider, model and tool", "1", "0"]
    assert rows["alice"][5].startswith("$0.007 of $0.50")
    assert rows["bob"][3:5] == ["1", "1"] and rows["bob"][5].startswith("$0.00 of $0.50")
    meter = page.locator("table meter").nth(list(rows).index("alice"))
    assert meter.get_attribute("value") == "1" and meter.get_attribute("aria-label") == "1% of the budget used"


def test_an_admin_sees_the_keys_by_fingerprint_and_a_member_does_not(context: BrowserContext, team: Team) -> None:
    page = context.new_page()
    log_in(page, team, "ops")
    page.get_by_role("link", name="Keys").click()
    assert page.url == f"{team.base}/ui/keys"
    kimi = PROVIDER_KEYS["COLIBRI_KIMI_API_KEY"].split(",")
    # kimi-anthropic (Kimi's Anthropic-compatible endpoint) reads the same variable: its own pool.
    expected = [[fingerprint(name, key), name, "usable", "", ""] for name in ("kimi", "kimi-anthropic") for key in kimi]
    expected.append([fingerprint("openai", PROVIDER_KEYS["OPENAI_API_KEY"]), "openai", "usable", "", ""])
    assert sorted(table_rows(page, "Provider keys")) == sorted(expected)
    source = page.content()
    assert not [key for key in [*kimi, PROVIDER_KEYS["OPENAI_API_KEY"]] if key in source or key[3:15] in source]
    member = context.browser.new_context()  # type: ignore[union-attr]
    member_page = member.new_page()
    log_in(member_page, team, "bob")
    assert member_page.get_by_role("link", name="Keys").count() == 0
    assert member_page.get_by_role("link", name="Members").count() == 1
    answer = member_page.goto(f"{team.base}/ui/keys")
    assert answer is not None and answer.status == 404  # as another member's call
    assert member_page.locator("h1").inner_text() == "No such page"
    assert fingerprint("kimi", kimi[0]) not in member_page.content()
    member.close()


def test_the_jobs_page_lists_every_members_jobs_for_an_admin_and_own_for_a_member(
    context: BrowserContext, team: Team
) -> None:
    page = context.new_page()
    log_in(page, team, "ops")
    page.get_by_role("link", name="Jobs").click()
    assert page.url == f"{team.base}/ui/jobs"
    rows = table_rows(page, "Jobs, newest first")
    assert [row[:5] for row in rows] == [
        ["job_uiAliceRunning0000001", "alice", "router_ask_many", "running", "2/3 gpt-5 answered in 84.2 s"],
        ["job_uiAliceDone0000000001", "alice", "router_call", "succeeded", "kimi-k2 answering"],
        ["job_uiBobTimedOut000000001", "bob", "router_call", "failed KIMI_TIMEOUT", ""],
        ["job_uiBobCrashed000000001", "bob", "router_run", "failed SERVER_STOPPED", "step 3: running the tests"],
    ]  # the last one's process is gone: ended as router_job would end it
    assert [row[6] for row in rows] == ["$0.096", "$0.041", "$0.00", "$0.002"]
    assert JOB_ANSWER not in page.content()  # the answer (and the error's message) stays in the store
    wider = page.locator("div.scroll").evaluate("region => region.scrollWidth - region.clientWidth")
    assert wider <= 0, f"the jobs table scrolls {wider} px at 1280 px"  # the progress text wraps instead
    page.get_by_label("Member").select_option("bob")
    page.get_by_role("button", name="Filter").click()
    assert "member=bob" in page.url
    assert [row[1] for row in table_rows(page, "Jobs, newest first")] == ["bob", "bob"]
    member = context.browser.new_context()  # type: ignore[union-attr]
    member_page = member.new_page()
    log_in(member_page, team, "bob")
    member_page.goto(f"{team.base}/ui/jobs?member=alice")
    assert table_rows(member_page, "Jobs, newest first") == [
        ["job_uiBobTimedOut000000001", "router_call", "failed KIMI_TIMEOUT", "", rows[2][5], "$0.00"],
        [
            "job_uiBobCrashed000000001",
            "router_run",
            "failed SERVER_STOPPED",
            "step 3: running the tests",
            rows[3][5],
            "$0.002",
        ],
    ]
    assert member_page.get_by_label("Member").count() == 0
    member.close()
