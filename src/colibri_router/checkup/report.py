"""The doctor's report: every section of :mod:`colibri_router.checkup`, checked in order. Apart from
the sections' own modules, which import :class:`~colibri_router.checkup.Section` from the package."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from colibri_router import __version__
from colibri_router.checkup import Section, files, providers, store
from colibri_router.checkup import http as team


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
    env_file, env_lines = files.env_file()
    report = Report(sections=[env_file, files.settings(env_lines), files.config_file()])
    report.providers = await providers.providers(live=live)
    report.sections.append(providers.default_target(report.providers))
    report.sections.append(await store.store())
    if http:
        report.sections.append(team.http(host))
    return report
