"""A session made by one worker of ``serve --http --workers 2`` is accepted by the other: the parent
gives every worker the same signing key when ``COLIBRI_HTTP_SESSION_SECRET`` is unset."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from browser_support import team_server

pytestmark = pytest.mark.e2e


def test_every_worker_accepts_a_session_any_worker_made(tmp_path: Path) -> None:
    with team_server(tmp_path, workers=2) as team:
        form = httpx.get(f"{team.base}/ui/login")
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', form.text)
        assert csrf is not None
        logged_in = httpx.post(
            f"{team.base}/ui/login", data={"token": team.tokens["alice"], "csrf": csrf[1]}, cookies=form.cookies
        )
        assert logged_in.status_code == 303
        session = {"colibri_ui_session": logged_in.cookies["colibri_ui_session"]}
        # Each request on a new connection, which either worker may accept.
        answers = [httpx.get(f"{team.base}/ui/calls", cookies=session) for _ in range(12)]
        assert [answer.status_code for answer in answers] == [200] * 12
        assert all('alice <span class="role">(member)</span>' in answer.text for answer in answers)
        workers = {
            line for line in (tmp_path / "server.log").read_text().splitlines() if "Started server process" in line
        }
        assert len(workers) == 2
