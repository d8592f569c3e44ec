"""What ``colibri-router doctor`` finds: every setting checked before the first call, as sections a
person reads (one line each) and a machine parses (``--json``).

A section has a status: ``ok``, ``problem`` (something a call would fail on; the command exits 1),
or ``off`` (not in use: no env file, a provider without a key). Nothing here ever holds a key's value
or a database password: sections name variables and say whether they are set.

    files.py      the env file (its unparseable lines), the settings, the config file
    providers.py  each provider's key, base URL and, with ``live``, its model list
    store.py      the database: where, writable, schema version, size
    http.py       the team server's settings, and the refusals of ``serve --http``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from colibri_router import __version__

Status = Literal["ok", "problem", "off"]


@dataclass
class Section:
    """One thing checked: ``summary`` for a person, ``fields`` for a machine."""

    name: str
    status: Status
    summary: str
    fields: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def fail(self, problem: str) -> None:
        self.status = "problem"
        self.problems.append(problem)

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "summary": self.summary, **self.fields, "problems": self.problems}


@dataclass
class Report:
    version: str = __version__
    sections: list[Section] = field(default_factory=list)
    providers: list[Section] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """Every problem once (``serve --http``'s refusals may repeat the store's)."""
        found = [problem for section in [*self.sections, *self.providers] for problem in section.problems]
        return list(dict.fromkeys(found))

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"ok": self.ok, "version": self.version}
        for section in self.sections:
            document[section.name.replace(" ", "_")] = section.as_json()
        document["providers"] = [{"name": section.name, **section.as_json()} for section in self.providers]
        document["problems"] = self.problems
        return document


async def examine(*, live: bool = False, http: bool = False, host: str = "127.0.0.1") -> Report:
    """Check everything (with ``live``, ask each configured provider's model list; with ``http``,
    the team server's settings as ``serve --http --host host`` would)."""
    # Here, not at the top: each section's module imports Section from this one.
    from colibri_router.checkup import files, providers, store
    from colibri_router.checkup import http as team

    env_file, env_lines = files.env_file()
    report = Report(sections=[env_file, files.settings(env_lines), files.config_file()])
    report.providers = await providers.providers(live=live)
    report.sections.append(providers.default_target(report.providers))
    report.sections.append(await store.store())
    if http:
        report.sections.append(team.http(host))
    return report
