"""The jobs page without a browser: valid HTML with every name escaped, an administrator's member
column and filter, a member restricted to their own jobs whatever they ask for, and a job's result
never shown beyond its error code."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import html5lib
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.requests import Request

from colibri_router.errors import KimiTimeoutError
from colibri_router.jobs.final import Final
from colibri_router.jobs.runner import error_final
from colibri_router.store import JobRecord
from colibri_router.store.jobs import JobStatus
from colibri_router.tokens import TokensFile, add_token
from colibri_router.webui.jobs import error_code, jobs_page
from colibri_router.webui.layout import Viewer
from colibri_router.webui.routes import TeamPages
from colibri_router.webui.sessions import Sessions

ADMIN = Viewer("ops", admin=True, csrf="0" * 64)
MEMBER = Viewer("bob", admin=False, csrf="0" * 64)
AT = datetime(2025, 3, 14, 9, 30, tzinfo=UTC)
ANSWER = "the model's secret answer 7d1f"


def job(principal: str = "alice", status: JobStatus = "running", result: str | None = None, **fields: Any) -> JobRecord:
    values: dict[str, Any] = {"progress": None, "cost_micro_usd": 12_000, "tool": "router_call"}
    return JobRecord(
        f"job_{principal}{status}", principal, status=status, result=result, started_at=AT, updated_at=AT,
        owner="h:1:a", **(values | fields),
    )  # fmt: skip


def parse(document: str) -> Any:
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(document)


def rows(document: str) -> list[list[str]]:
    return [["".join(cell.itertext()) for cell in row] for row in parse(document).findall(".//tbody/tr")]


def headings(document: str) -> list[str]:
    return ["".join(cell.itertext()) for cell in parse(document).findall(".//thead/tr/th")]


def test_an_error_code_is_read_from_a_real_error_result_and_nothing_else() -> None:
    failed = error_final(KimiTimeoutError("no answer in 600 s")).to_json()
    assert error_code(failed) == "KIMI_TIMEOUT"
    answered = Final({"content": ANSWER, "error": {"code": "X"}}, ANSWER, is_error=False).to_json()
    assert error_code(answered) is None
    for broken in (None, "", "not json", "[]", '{"is_error": true}', '{"is_error": true, "structured": {"error": 3}}'):
        assert error_code(broken) is None


def test_the_admin_sees_every_member_with_status_code_and_never_the_answer() -> None:
    answered = Final({"content": ANSWER}, ANSWER, is_error=False).to_json()
    jobs = [
        job("alice", progress="1/2 gpt-5 answered in 3.1 s", tool="router_ask_many"),
        job("bob", "failed", error_final(KimiTimeoutError(ANSWER)).to_json(), cost_micro_usd=0),
        job("alice", "succeeded", answered),
    ]
    document = jobs_page(ADMIN, "", ["alice", "bob", "ops"], jobs, 50)
    assert headings(document) == ["Job", "Member", "Tool", "Status", "Progress", "Started", "Cost"]
    assert rows(document) == [
        ["job_alicerunning", "alice", "router_ask_many", "running", "1/2 gpt-5 answered in 3.1 s",
         "2025-03-14 09:30:00", "$0.012"],
        ["job_bobfailed", "bob", "router_call", "failed KIMI_TIMEOUT", "", "2025-03-14 09:30:00", "$0.00"],
        ["job_alicesucceeded", "alice", "router_call", "succeeded", "", "2025-03-14 09:30:00", "$0.012"],
    ]  # fmt: skip
    assert ANSWER not in document  # neither the answer nor the error's message
    assert parse(document).find(".//select[@name='member']") is not None
    assert 'href="/ui/jobs" aria-current="page">Jobs' in document


def test_a_member_has_no_member_column_nor_filter() -> None:
    document = jobs_page(MEMBER, "", ["bob"], [job("bob")], 50)
    assert headings(document) == ["Job", "Tool", "Status", "Progress", "Started", "Cost"]
    assert parse(document).find(".//select") is None
    assert "No jobs." in jobs_page(MEMBER, "", ["bob"], [], 50)


_texts = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=16)


@given(name=_texts, tool=_texts, progress=_texts, code=_texts)
def test_the_page_is_valid_html_and_escapes_every_value(name: str, tool: str, progress: str, code: str) -> None:
    failed = Final({"error": {"code": code}}, "", is_error=True).to_json()
    record = job("x", "failed", failed, tool=tool, progress=progress)
    record = JobRecord(**{**{f: getattr(record, f) for f in record.__slots__}, "principal": name, "job_id": name})
    document = jobs_page(Viewer(name, admin=True, csrf="0" * 64), name, [name], [record], 50)
    tree = parse(document)
    assert tree.find(".//script") is None
    assert tree.find("body/main/h1") is not None
    assert rows(document) == [[name, name, tool, f"failed {code}", progress, "2025-03-14 09:30:00", "$0.012"]]


class _Jobs:
    """The one store method the page reads, recording whose jobs it was asked for."""

    def __init__(self) -> None:
        self.asked: list[str | None] = []

    async def list_team_jobs(self, principal: str | None, limit: int, ttl_s: float) -> list[JobRecord]:
        self.asked.append(principal)
        everyone = [job("alice", "succeeded"), job("bob", "succeeded")]  # ended: nothing to settle
        return [record for record in everyone if principal is None or record.principal == principal]


def request(query: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/ui/jobs", "headers": [], "query_string": query.encode()})


async def test_a_member_sees_only_their_own_jobs_whatever_they_ask(tmp_path: Path) -> None:
    for name in ("ops", "alice", "bob"):
        add_token(tmp_path / "tokens", name)
    team = TeamPages(TokensFile(tmp_path / "tokens"), Sessions(TokensFile(tmp_path / "tokens"), b"k" * 32), [])
    store = _Jobs()
    for query in ("", "member=alice", "member="):
        answer = await team.jobs(request(query), MEMBER, store)  # type: ignore[arg-type]
        assert [row[0] for row in rows(bytes(answer.body).decode())] == ["job_bobsucceeded"], query
    assert store.asked == ["bob", "bob", "bob"]
    everyone = await team.jobs(request(""), ADMIN, store)  # type: ignore[arg-type]
    assert [row[1] for row in rows(bytes(everyone.body).decode())] == ["alice", "bob"]
    alice = await team.jobs(request("member=alice"), ADMIN, store)  # type: ignore[arg-type]
    assert [row[1] for row in rows(bytes(alice.body).decode())] == ["alice"]
    assert store.asked[3:] == [None, "alice"]
    choices = parse(bytes(alice.body).decode()).findall(".//select[@name='member']/option")
    assert [(option.get("value"), option.get("selected")) for option in choices] == [
        ("", None), ("alice", ""), ("bob", None), ("ops", None),
    ]  # fmt: skip


@pytest.mark.parametrize("viewer", [ADMIN, MEMBER])
def test_every_page_links_the_jobs_page(viewer: Viewer) -> None:
    from colibri_router.webui import pages

    assert '<a href="/ui/jobs">Jobs</a>' in pages.message_page("Calls", "x", viewer)
