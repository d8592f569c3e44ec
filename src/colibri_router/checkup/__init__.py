"""What ``colibri-router doctor`` finds: every setting checked before the first call, as sections a
person reads (one line each) and a machine parses (``--json``).

A section has a status: ``ok``, ``problem`` (something a call would fail on; the command exits 1),
or ``off`` (not in use: no env file, a provider without a key). Nothing here ever holds a key's value
or a database password: sections name variables and say whether they are set.

    files.py      the env file (its unparseable lines), the settings, the config file
    providers.py  each provider's key, base URL and, with ``live``, its model list
    store.py      the database: where, writable, schema version, size
    http.py       the team server's settings, and the refusals of ``serve --http``
    report.py     every section in one report (:func:`~.report.examine`)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

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
