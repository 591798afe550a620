"""One finding of `scheduler doctor` (doctor.py runs the checks, each of its own module or function): its status,
`ok`, `warn` (worth a look; jobs still run) or `FAIL`, what was found, what to do when not ok, and details (one
line each)."""

from __future__ import annotations

from dataclasses import dataclass

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    finding: str
    todo: str = ""
    details: tuple[str, ...] = ()
