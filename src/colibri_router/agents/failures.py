"""A failed agent run → the usual error tree: not logged in is ``AUTH_FAILED`` (naming the login
command), a usage limit ``QUOTA_EXCEEDED`` (with the reset time when the CLI gives one), anything else
``PROVIDER_ERROR``. Pure.

The kind is read from the CLI's own error text and its last stderr lines, through the entry's phrase
lists (the CLIs mark these conditions only in text). The message is ours: the CLI's error event is
quoted (redacted, shortened) only as a last resort, its stderr never.
"""

from __future__ import annotations

import re
import time

from colibri_router.agents.events import AgentRun
from colibri_router.errors import ApiError, error_family
from colibri_router.providers.agent_cli import AgentCli
from colibri_router.providers.spec import ProviderSpec
from colibri_router.redaction import redact

QUOTED_CHARS = 300
# "Claude AI usage limit reached|1767225600": the reset as a Unix time.
_RESET_EPOCH = re.compile(r"\|(\d{10})\b")
# "Try again at 3:04 PM.", "resets 3pm (UTC)", "try again in 2 hours"
_RESET_TEXT = re.compile(r"\b(?:try again|resets?)\s+((?:at|in|on)\s+)?([^.·|\n]{1,40})", re.IGNORECASE)


def run_failure(spec: ProviderSpec, agent: AgentCli, run: AgentRun, returncode: int | None, stderr: str) -> ApiError:
    errors = error_family(spec.error_prefix)
    said = run.error or ""
    text = f"{said}\n{stderr}".lower()
    if any(phrase in text for phrase in agent.limit_phrases) or run.error_status == 429:
        message, retry_after = _limit_message(spec, said)
        error = errors.api(message, status=429, kind="QUOTA_EXCEEDED")
        error.retry_after = retry_after
        return error
    if any(phrase in text for phrase in agent.auth_phrases) or run.error_status in (401, 403):
        return errors.api(
            f"{spec.name} is not logged in (or its login expired): run `{agent.login}` in a terminal",
            status=401,
            kind="AUTH_FAILED",
        )
    exit_text = "did not finish" if returncode is None else f"exited with code {returncode}"
    detail = f": {_quote(said)}" if said else " (its log lines are in colibri-router's log)"
    return errors.api(f"{spec.name} {exit_text}{detail}", status=run.error_status)


def _limit_message(spec: ProviderSpec, said: str) -> tuple[str, float | None]:
    message = f"{spec.name}'s subscription usage limit is reached"
    epoch = _RESET_EPOCH.search(said)
    if epoch:
        at = int(epoch.group(1))
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))
        return f"{message}; it resets at {stamp}", max(0.0, at - time.time())
    reset = _RESET_TEXT.search(said)
    if reset and "later" not in reset.group(2).lower():
        return f"{message}; try again {(reset.group(1) or '')}{reset.group(2).strip()}", None
    return message, None


def _quote(text: str) -> str:
    text = " ".join(redact(text).split())
    return text if len(text) <= QUOTED_CHARS else text[: QUOTED_CHARS - 1] + "…"
