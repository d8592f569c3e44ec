"""The job runner of this process (colibri_router.jobs.runner), with the store off (jobs in memory):
when a call hands off, what a job records, how a cancel and a shutdown end it."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from colibri_router.jobs import spending
from colibri_router.jobs.follow import follow, listing
from colibri_router.jobs.model import Final, JobHandle
from colibri_router.jobs.runner import RUNNER, job_store
from colibri_router.settings import Settings, load_settings

DONE = Final({"content": "done"}, '{"content":"done"}', is_error=False)


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Settings]:
    def load(**env: str) -> Settings:
        monkeypatch.setenv("COLIBRI_STORE", "off")
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return load_settings()

    return load


def principal() -> str:
    return "tester-" + secrets.token_hex(4)


async def quiet(_progress: float, _message: str, _total: float | None) -> None:
    return None


def work_until(release: anyio.Event, *, cost_micro_usd: int = 0, final: Final = DONE) -> Any:
    async def work(notify: Any) -> Final:
        await notify(1, "1/2 first answered in 0.1 s", 2)
        spending.spent([cost_micro_usd])
        await release.wait()
        return final

    return work


async def test_a_call_that_ends_before_the_hand_off_answers_its_result_and_leaves_no_job(
    settings: Callable[..., Settings],
) -> None:
    loaded, who = settings(COLIBRI_HANDOFF_S="30"), principal()
    released = anyio.Event()
    released.set()

    outcome = await RUNNER.call("router_call", who, "auto", work_until(released), quiet, settings=loaded)

    assert outcome == DONE
    assert (await listing(job_store(loaded), who, loaded)).jobs == []


async def test_a_call_past_the_hand_off_answers_a_handle_and_its_result_later(
    settings: Callable[..., Settings],
) -> None:
    loaded, who, runner = settings(COLIBRI_HANDOFF_S="0.05"), principal(), RUNNER
    release = anyio.Event()
    heard: list[str] = []

    async def listen(_progress: float, message: str, _total: float | None) -> None:
        heard.append(message)

    handle = await runner.call(
        "router_ask_many", who, "auto", work_until(release, cost_micro_usd=2500), listen, settings=loaded
    )

    assert isinstance(handle, JobHandle)
    assert (handle.status, handle.progress, handle.cost_usd) == ("running", "1/2 first answered in 0.1 s", 0.0025)
    assert heard == ["1/2 first answered in 0.1 s"]  # the call's own progress, before the hand-off
    release.set()
    job = runner.local(handle.job_id)
    assert job is not None
    final = await follow(handle.job_id, who, quiet, wait_s=5, cancel=False, settings=loaded)
    assert final == DONE
    [summary] = (await listing(job_store(loaded), who, loaded)).jobs
    assert (summary.job_id, summary.tool, summary.status, summary.cost_usd) == (
        handle.job_id,
        "router_ask_many",
        "succeeded",
        0.0025,
    )


async def test_background_true_answers_the_handle_at_once(settings: Callable[..., Settings]) -> None:
    loaded, who = settings(COLIBRI_HANDOFF_S="30"), principal()
    release = anyio.Event()

    handle = await RUNNER.call("router_call", who, True, work_until(release), quiet, settings=loaded)

    assert isinstance(handle, JobHandle)
    release.set()
    assert await follow(handle.job_id, who, quiet, wait_s=5, cancel=False, settings=loaded) == DONE


async def test_a_request_cancelled_before_the_hand_off_cancels_its_work(settings: Callable[..., Settings]) -> None:
    loaded, who = settings(COLIBRI_HANDOFF_S="30"), principal()
    stopped = anyio.Event()

    async def work(_notify: Any) -> Final:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.set()
        raise AssertionError("unreachable")

    with anyio.move_on_after(0.1):
        await RUNNER.call("router_call", who, "auto", work, quiet, settings=loaded)
    with anyio.fail_after(5):
        await stopped.wait()
    assert (await listing(job_store(loaded), who, loaded)).jobs == []


async def test_a_cancel_ends_the_job_as_job_cancelled(settings: Callable[..., Settings]) -> None:
    loaded, who, runner = settings(), principal(), RUNNER
    handle = await runner.call("router_call", who, True, work_until(anyio.Event()), quiet, settings=loaded)
    assert isinstance(handle, JobHandle)

    # As another process would: through the job's row, seen within POLL_S.
    assert await job_store(loaded).request_job_cancel(handle.job_id, who)
    final = await follow(handle.job_id, who, quiet, wait_s=5, cancel=False, settings=loaded)

    assert isinstance(final, Final) and final.is_error
    assert (final.structured["error"]["code"], final.structured["error"]["kind"]) == ("JOB_CANCELLED", "CANCELLED")
    assert final.text.startswith("JOB_CANCELLED: ")
    [summary] = (await listing(job_store(loaded), who, loaded)).jobs
    assert summary.status == "cancelled"


async def test_a_shutdown_waits_the_grace_period_then_ends_jobs_as_server_stopped(
    settings: Callable[..., Settings],
) -> None:
    loaded, who, runner = settings(), principal(), RUNNER
    quick, stuck = anyio.Event(), anyio.Event()
    ending = await runner.call("router_call", who, True, work_until(quick), quiet, settings=loaded)
    hanging = await runner.call("router_run", who, True, work_until(stuck), quiet, settings=loaded)
    assert isinstance(ending, JobHandle) and isinstance(hanging, JobHandle)

    async with anyio.create_task_group() as group:
        group.start_soon(runner.drain, 0.5)
        quick.set()  # ends within the grace period

    store = job_store(loaded)
    ended = await store.load_job(ending.job_id, who, loaded.job_ttl_s)
    stopped = await store.load_job(hanging.job_id, who, loaded.job_ttl_s)
    assert ended is not None and ended.result is not None and stopped is not None and stopped.result is not None
    assert (ended.status, Final.from_json(ended.result)) == ("succeeded", DONE)
    assert stopped.status == "failed"
    assert Final.from_json(stopped.result).structured["error"]["code"] == "SERVER_STOPPED"
