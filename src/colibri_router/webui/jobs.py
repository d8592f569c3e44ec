"""The jobs page (docs/jobs.md): the most recently started jobs still kept (``COLIBRI_JOB_TTL_S``
after they end), newest first: id, tool, status, progress, start and cost so far. An administrator
sees every member's and may pick one; a member sees their own. A job's result is the model's
answer: the page shows only its status and, for a failed one, the error code."""

from __future__ import annotations

import json
from collections.abc import Sequence

from colibri_router.store import JobRecord
from colibri_router.webui.layout import Viewer, moment, page, table, usd
from colibri_router.webui.markup import Html, html
from colibri_router.webui.pages import select_field

_STATUS_CLASS = {"succeeded": "ok", "failed": "bad", "cancelled": "muted"}


def error_code(result: str | None) -> str | None:
    """The error code of an ended job's result (``structured.error.code``), None for a result that
    is no error; the rest of the result is never read."""
    if result is None:
        return None
    try:
        data = json.loads(result)
    except ValueError:
        return None
    if not isinstance(data, dict) or not data.get("is_error"):
        return None
    structured = data.get("structured")
    error = structured.get("error") if isinstance(structured, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _status(job: JobRecord) -> Html:
    code = error_code(job.result) if job.status != "succeeded" else None
    return html(
        '<span class="{cls}">{status}</span>{code}',
        cls=_STATUS_CLASS.get(job.status, ""),
        status=job.status,
        code=html(" <code>{c}</code>", c=code) if code else Html(""),
    )


def jobs_page(viewer: Viewer, member: str, members: Sequence[str], jobs: Sequence[JobRecord], limit: int) -> Html:
    """``member``: the administrator's pick (empty: everyone); ``jobs`` as the store listed them."""
    form = Html("")
    if viewer.admin:
        form = html(
            '<form class="filters" method="get" action="/ui/jobs" aria-label="Filter jobs">{field}'
            '<div class="field"><button type="submit">Filter</button></div></form>',
            field=select_field("member", "Member", members, member),
        )
    headings = ["Job", *(["Member"] if viewer.admin else []), "Tool", "Status", "Progress", "Started", "Cost"]
    rows: list[list[Html | str]] = [
        [
            html("<code>{id}</code>", id=job.job_id),
            *([job.principal] if viewer.admin else []),
            job.tool,
            _status(job),
            html('<span class="wrap">{p}</span>', p=job.progress or ""),
            moment(job.started_at),
            usd(job.cost_micro_usd),
        ]
        for job in jobs
    ]
    body = html(
        "{form}{listing}"
        '<p class="note">The {limit} most recently started jobs still kept (an ended job is kept '
        "<code>COLIBRI_JOB_TTL_S</code> seconds). A job's answer is not shown here: "
        "<code>router_job</code> gives it to the member who started it.</p>",
        form=form,
        listing=table("Jobs, newest first", headings, rows, len(headings) - 1, "No jobs."),
        limit=limit,
    )
    return page("Jobs", body, viewer, "jobs")
