"""The services behind ``router_threads`` and ``router_usage`` (and the CLI's ``threads`` and
``usage``): what the store holds, shaped for a host's model or a terminal. Each caller sees only
their own threads and usage, an administrator everyone's."""

from __future__ import annotations

from colibri_router.callers import Caller, ToolCall, local_caller
from colibri_router.errors import ConfigError
from colibri_router.history.schema import (
    RouterThreadsInput,
    RouterThreadsResult,
    RouterUsageInput,
    RouterUsageResult,
    ThreadInfo,
    UsageGroup,
)
from colibri_router.settings import load_settings
from colibri_router.store import Store, UsageTotals, shared_store


def _store() -> Store:
    store = shared_store(load_settings())
    if store is None:
        raise ConfigError("threads and usage live in the store, and COLIBRI_STORE is off")
    return store


async def threads_for_tool(args: RouterThreadsInput, call: ToolCall) -> RouterThreadsResult:
    """router_threads, as the tool table (:mod:`colibri_router.server.table`) calls it."""
    return await threads(args, caller=call.caller)


async def usage_for_tool(args: RouterUsageInput, call: ToolCall) -> RouterUsageResult:
    """router_usage, as the tool table (:mod:`colibri_router.server.table`) calls it."""
    return await usage(args, caller=call.caller)


async def threads(args: RouterThreadsInput, *, caller: Caller | None = None) -> RouterThreadsResult:
    store, whose = _store(), (caller or local_caller()).visible
    if args.action == "list":
        summaries = await store.list_threads(whose, args.limit)
        return RouterThreadsResult(
            threads=[
                ThreadInfo(
                    thread_id=t.thread_id,
                    title=t.title,
                    provider=t.provider,
                    model=t.model,
                    turns=t.turns,
                    updated_at=t.updated_at.isoformat(timespec="seconds"),
                )
                for t in summaries
            ]
        )
    thread_id = args.thread_id or ""
    if args.action == "get":
        stored = await store.load_thread(thread_id, whose)
        return RouterThreadsResult(thread_id=thread_id, messages=stored.messages)
    return RouterThreadsResult(thread_id=thread_id, deleted=await store.delete_thread(thread_id, whose))


async def usage(args: RouterUsageInput, *, caller: Caller | None = None) -> RouterUsageResult:
    report = await _store().usage_report((caller or local_caller()).visible, args.since, args.by)
    return RouterUsageResult(
        since=report.since,
        by=report.by,
        groups=[_group(totals) for totals in report.groups],
        total=_group(report.total),
    )


def _group(totals: UsageTotals) -> UsageGroup:
    return UsageGroup(
        key=totals.key,
        calls=totals.calls,
        errors=totals.errors,
        input_tokens=totals.input_tokens,
        output_tokens=totals.output_tokens,
        cached_tokens=totals.cached_tokens,
        cost_usd=totals.cost_usd,
        unpriced_calls=totals.unpriced_calls,
    )
