"""The team server's settings (``doctor --http``): the tokens file (readable, how many tokens, never
their hashes), the policy file (whether it parses, the members it names), the allowed hosts and
origins, the administrators, and every check ``serve --http`` refuses to start on, run the same way
(:func:`colibri_router.server.http.plan`)."""

from __future__ import annotations

from pathlib import Path

from colibri_router.checkup import Section
from colibri_router.errors import ConfigError
from colibri_router.gateway.loader import check_policy_file
from colibri_router.server.http import HttpOptions, plan
from colibri_router.settings import comma_list, load_settings
from colibri_router.tokens import TokensFile


def http(host: str) -> Section:

    section = Section("http", "ok", "")
    try:
        settings = load_settings()
    except ConfigError as error:
        section.summary = "unknown: the settings are invalid"
        section.fail(error.message)
        return section
    hosts, origins = comma_list(settings.http_allowed_hosts), comma_list(settings.http_allowed_origins)
    section.fields.update(
        host=host,
        tokens_file=settings.http_tokens_file,
        tokens_readable=None,
        tokens=None,
        allowed_hosts=hosts,
        allowed_origins=origins,
        admins=comma_list(settings.http_admins),
    )
    if settings.http_tokens_file:
        tokens = TokensFile(Path(settings.http_tokens_file).expanduser())
        try:
            count = len(tokens.entries())
        except ConfigError as error:
            section.fields["tokens_readable"] = False
            section.fail(error.message)
            tokens_summary = f"tokens file {tokens.path}: unusable"
        else:
            section.fields.update(tokens_readable=True, tokens=count)
            tokens_summary = f"tokens file {tokens.path}: {count} token{'s' if count != 1 else ''}"
    else:
        tokens_summary = "no tokens file (no authentication)"
    section.fields.update(policy_file=settings.http_policy, policy_members=None)
    if settings.http_policy:
        try:
            policy = check_policy_file(settings)
        except ConfigError as error:
            section.fail(error.message)
            tokens_summary += f"; policy file {settings.http_policy}: invalid"
        else:
            members = sorted(policy.members) if policy else []
            section.fields["policy_members"] = members
            tokens_summary += f"; policy file {settings.http_policy}: {len(members)} member table(s)"
    section.summary = f"on {host}: {tokens_summary}; allowed hosts: {', '.join(hosts) or 'localhost only'}" + (
        f"; allowed origins: {', '.join(origins)}" if origins else ""
    )
    try:
        plan(HttpOptions(host=host), settings)
    except ConfigError as error:
        if error.message not in section.problems:
            section.fail(f"serve --http --host {host} would refuse to start: {error.message}")
    return section
