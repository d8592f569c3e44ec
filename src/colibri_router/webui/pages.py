"""The pages' bodies, from what :mod:`.queries` and the store return. Every value goes through
:func:`~colibri_router.webui.markup.html`, so none can become markup. No page shows a prompt or an
answer: the ledger holds none."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

from colibri_router.errors import Kind
from colibri_router.store import BudgetLimits, StoredCall
from colibri_router.webui.charts import legend, spend_chart
from colibri_router.webui.layout import Viewer, moment, number, page, table, usd
from colibri_router.webui.markup import Html, html, join
from colibri_router.webui.member_policy import member_policy
from colibri_router.webui.queries import WINDOWS_DAYS, MemberUsage, Series

OUTCOME_CHOICES = ("ok", "error", *sorted(get_args(Kind)))


def login_page(csrf: str, problem: str | None = None) -> Html:
    alert = html('<p class="problem" role="alert">{problem}</p>', problem=problem) if problem else Html("")
    body = html(
        "{alert}<p>Log in with your colibri-router token (the one your MCP client sends as "
        "<code>Authorization: Bearer</code>). It is checked once; the page then keeps a session.</p>"
        '<form class="login" method="post" action="/ui/login">'
        '<label for="token">Token</label>'
        '<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>'
        '<input type="hidden" name="csrf" value="{csrf}">'
        '<button type="submit">Log in</button></form>',
        alert=alert,
        csrf=csrf,
    )
    return page("Log in", body)


def message_page(title: str, text: str, viewer: Viewer | None = None) -> Html:
    return page(title, html("<p>{text}</p>", text=text), viewer)


def _window_links(days: int) -> Html:
    links = [
        html(
            '<li><a href="/ui/spend?days={n}"{current}>{n} days</a></li>',
            n=n,
            current=Html(' aria-current="page"') if n == days else Html(""),
        )
        for n in WINDOWS_DAYS
    ]
    return html('<nav aria-label="Window"><ul class="tabs">{links}</ul></nav>', links=join(links))


def _totals_table(series: Series, caption: str, heading: str) -> Html:
    rows: list[list[Html | str]] = [
        [key, number(series.calls[key]), number(series.errors[key]), usd(series.total(key))] for key in series.keys
    ]
    return table(caption, [heading, "Calls", "Errors", "Cost"], rows)


def _day_table(series: Series, day: str, caption: str, heading: str) -> Html:
    rows: list[list[Html | str]] = [
        [key, usd(series.cost[(day, key)])] for key in series.keys if (day, key) in series.cost
    ]
    return table(caption, [heading, "Cost"], rows)


def spend_page(viewer: Viewer, days: int, by_member: Series, by_model: Series, yesterday: str) -> Html:
    body = html(
        "{tabs}"
        '<section aria-labelledby="yesterday"><h2 id="yesterday">Yesterday, {day}</h2>'
        '<div class="pair">{members}{models}</div></section>'
        '<section aria-labelledby="per-member"><h2 id="per-member">Per day by member</h2>'
        "{member_chart}{member_legend}{member_totals}</section>"
        '<section aria-labelledby="per-model"><h2 id="per-model">Per day by model</h2>'
        "{model_chart}{model_legend}{model_totals}</section>",
        tabs=_window_links(days),
        day=yesterday,
        members=_day_table(by_member, yesterday, "Yesterday by member", "Member"),
        models=_day_table(by_model, yesterday, "Yesterday by model", "Model"),
        member_chart=spend_chart(by_member, "chart-member", f"Spend per day by member, last {days} days"),
        member_legend=legend(by_member),
        member_totals=_totals_table(by_member, f"Last {days} days by member", "Member"),
        model_chart=spend_chart(by_model, "chart-model", f"Spend per day by model, last {days} days"),
        model_legend=legend(by_model),
        model_totals=_totals_table(by_model, f"Last {days} days by model", "Model"),
    )
    return page("Spend", body, viewer, "spend")


@dataclass(frozen=True, slots=True)
class CallFilters:
    """The calls page's filters as the form sent them (empty: not filtered)."""

    member: str = ""
    model: str = ""
    outcome: str = ""
    since: str = ""
    until: str = ""


def select_field(name: str, label: str, choices: Sequence[str], chosen: str) -> Html:
    """A labelled ``<select>`` of ``choices`` (and "any", the empty value), ``chosen`` selected."""
    options = [html('<option value="">any</option>')] + [
        html('<option value="{v}"{sel}>{v}</option>', v=choice, sel=Html(" selected") if choice == chosen else Html(""))
        for choice in choices
    ]
    return html(
        '<div class="field"><label for="f-{name}">{label}</label>'
        '<select id="f-{name}" name="{name}">{options}</select></div>',
        name=name,
        label=label,
        options=join(options),
    )


def calls_page(  # noqa: PLR0917 - the page's parts, each named at the one call site
    viewer: Viewer,
    filters: CallFilters,
    members: Sequence[str],
    models: Sequence[str],
    calls: Sequence[StoredCall],
    older: str | None,
) -> Html:
    fields = [
        select_field("member", "Member", members, filters.member) if viewer.admin else Html(""),
        select_field("model", "Model", models, filters.model),
        select_field("outcome", "Outcome", OUTCOME_CHOICES, filters.outcome),
        html(
            '<div class="field"><label for="f-since">From (UTC day)</label>'
            '<input id="f-since" name="since" type="date" value="{since}"></div>'
            '<div class="field"><label for="f-until">To (UTC day, included)</label>'
            '<input id="f-until" name="until" type="date" value="{until}"></div>',
            since=filters.since,
            until=filters.until,
        ),
    ]
    form = html(
        '<form class="filters" method="get" action="/ui/calls" aria-label="Filter calls">{fields}'
        '<div class="field"><button type="submit">Filter</button></div></form>',
        fields=join(fields),
    )
    rows: list[list[Html | str]] = [
        [
            html('<a href="/ui/calls/{id}">{at}</a>', id=call.call_id, at=moment(call.row.at)),
            call.row.principal,
            call.row.model,
            _outcome(call.row.outcome),
            number(call.row.input_tokens),
            number(call.row.output_tokens),
            usd(call.row.cost_micro_usd),
            f"{call.row.latency_ms:,} ms",
        ]
        for call in calls
    ]
    listing = table(
        "Calls, newest first", ["Time", "Member", "Model", "Outcome", "Input", "Output", "Cost", "Latency"], rows, 4
    )
    more = html('<p><a href="{href}">Older calls</a></p>', href=older) if older else Html("")
    return page("Calls", join([form, listing, more]), viewer, "calls")


def _outcome(outcome: str) -> Html:
    return html('<span class="{cls}">{outcome}</span>', cls="ok" if outcome == "ok" else "bad", outcome=outcome)


def call_page(viewer: Viewer, call: StoredCall) -> Html:
    row = call.row
    facts: list[tuple[str, str]] = [
        ("Time", moment(row.at)),
        ("Member", row.principal),
        ("Provider", row.provider),
        ("Model", row.model),
        ("Outcome", row.outcome),
        ("Error kind", row.kind or "none"),
        ("Thread", row.thread_id or "none"),
        ("Input tokens", number(row.input_tokens)),
        ("Output tokens", number(row.output_tokens)),
        ("Cached input tokens", number(row.cached_tokens)),
        ("Cache write tokens", number(row.cache_write_tokens)),
        ("Reasoning tokens", number(row.reasoning_tokens)),
        ("Cost", usd(row.cost_micro_usd)),
        ("Latency", f"{row.latency_ms:,} ms"),
        ("Warnings", number(row.warning_count)),
    ]
    items = join(html("<dt>{k}</dt><dd>{v}</dd>", k=key, v=value) for key, value in facts)
    attempts: list[list[Html | str]] = [
        [str(place), attempt.provider, attempt.model, _outcome(attempt.outcome), f"{attempt.latency_ms:,} ms"]
        for place, attempt in enumerate(row.attempts, start=1)
    ]
    body = html(
        '<dl class="facts">{items}</dl>{attempts}'
        '<p class="note">The ledger keeps no prompt or answer text, and counts warnings without their text '
        "(it can name the caller's files).</p>"
        '<p><a href="/ui/calls">All calls</a></p>',
        items=items,
        attempts=table(
            "Attempts, in order (fallbacks)", ["#", "Provider", "Model", "Outcome", "Latency"], attempts, 4, "None."
        ),
    )
    return page(f"Call {call.call_id}", body, viewer, "calls")


def _budget_cell(spent: int, limit: int | None) -> Html:
    if limit is None:
        return html('{spent} <span class="muted">(no limit)</span>', spent=usd(spent))
    percent = min(100, round(100 * spent / limit)) if limit else 100
    return html(
        '{spent} of {limit} <meter min="0" max="100" value="{p}" aria-label="{p}% of the budget used">{p}%</meter>',
        spent=usd(spent),
        limit=usd(limit),
        p=percent,
    )


def _policy_cell(name: str) -> Html:
    rules = member_policy(name)
    if not rules:
        return Html('<span class="muted">none: every provider, model and tool</span>')
    return html('<ul class="rules">{items}</ul>', items=join(html("<li>{k}: {v}</li>", k=k, v=v) for k, v in rules))


def members_page(
    viewer: Viewer, names: Sequence[str], admins: Sequence[str], usage: dict[str, MemberUsage], limits: BudgetLimits
) -> Html:
    rows: list[list[Html | str]] = []
    for name in names:
        used = usage.get(name, MemberUsage(name, 0, 0, 0, 0))
        rows.append(
            [
                name,
                "admin" if name in admins else "member",
                _policy_cell(name),
                number(used.calls_today),
                number(used.errors_today),
                _budget_cell(used.cost_today, limits.daily_per_principal_micro_usd),
                usd(used.cost_month),
            ]
        )
    members = table(
        "Members (from the tokens file), today and this month",
        ["Member", "Role", "Policy", "Calls today", "Errors today", "Spent today (member budget)", "Spent this month"],
        rows,
        3,
    )
    team = Html("")
    if viewer.admin:
        today = sum(used.cost_today for used in usage.values())
        month = sum(used.cost_month for used in usage.values())
        team = html(
            '<section aria-labelledby="team"><h2 id="team">Team budgets</h2><dl class="facts">'
            "<dt>Today</dt><dd>{today}</dd><dt>This month</dt><dd>{month}</dd></dl></section>",
            today=_budget_cell(today, limits.daily_micro_usd),
            month=_budget_cell(month, limits.monthly_micro_usd),
        )
    return page("Members", join([members, team]), viewer, "members")
