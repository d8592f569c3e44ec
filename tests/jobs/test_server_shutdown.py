"""The server's end (docs/jobs.md, "A server that stops"): when its host goes away, the server gives
the jobs it runs their grace period, so a job that ends meanwhile still has its result stored."""

from __future__ import annotations

import pytest
from fake_upstream import FakeUpstream, kimi_text
from mcp import Client

from colibri_router.callers import local_principal
from colibri_router.jobs.model import Final
from colibri_router.jobs.runner import job_store
from colibri_router.server import build_server
from colibri_router.settings import load_settings


async def test_a_job_still_running_when_the_host_leaves_ends_and_keeps_its_result(
    fake_upstream: FakeUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLIBRI_KIMI_API_KEY", "sk-kimi-test-key-0123456789")
    monkeypatch.setenv("COLIBRI_KIMI_BASE_URL", fake_upstream.kimi_base_url)
    fake_upstream.kimi.enqueue(kimi_text("after the host left", delay_s=1.0))

    async with Client(build_server()) as client:
        handle = await client.call_tool("router_call", {"prompt": "q", "background": True})
    # The client is gone and the server has ended: its lifespan waited for the job.

    settings = load_settings()
    job_id = (handle.structured_content or {})["job_id"]
    record = await job_store(settings).load_job(job_id, local_principal(), settings.job_ttl_s)
    assert record is not None and record.result is not None
    assert record.status == "succeeded"
    assert Final.from_json(record.result).structured["content"] == "after the host left"
