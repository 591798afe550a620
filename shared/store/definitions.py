"""Job definitions as stored and as parsed, remembered both ways, so an unchanged definition is parsed and
sealed once, not at every read and write of its job's status.

Under steady load a job row is read about three times per execution (the dispatcher's read and its re-read
before the advance, the executor's read), each a JSON parse, an AES-GCM open and a pydantic validation of the
same text; and written twice (the dispatcher's advance, the recorder's counters), each a serialization and a
seal of the same definition: a fifth of the host's CPU per execution (issue 22's profile). A definition is
remembered by what identifies it in storage: the row it is bound to (sealing.py binds the secrets to it, so a
`Sealed` value copied from another row is never taken from here) and its `Document` and `Sealed` text; and
back from the parsed object (by identity: records are frozen and their properties never change in place),
so a record whose properties are the very object read is written with the very text read.

Bounded (SIZE definitions, least recently used out): a miss only costs the parse it saves.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ..model import JobProperties

SIZE = 20_000  # about the jobs of a busy deployment's minute; a definition is a few KB parsed

Stored = tuple[str, str, str | None]  # (the row it is bound to, Document, Sealed)


class Definitions:
    def __init__(self, size: int = SIZE) -> None:
        self._size = size
        self._parsed: OrderedDict[Stored, JobProperties] = OrderedDict()
        self._stored: dict[int, tuple[JobProperties, Stored]] = {}  # by id(): the object is held, so ids stay
        self._lock = threading.Lock()

    def parsed(self, stored: Stored) -> JobProperties | None:
        with self._lock:
            found = self._parsed.get(stored)
            if found is not None:
                self._parsed.move_to_end(stored)
            return found

    def stored(self, properties: JobProperties, bound_to: str) -> tuple[str, str | None] | None:
        """The Document and Sealed text `properties` was read from (or written as) in that row; None if unknown."""
        with self._lock:
            found = self._stored.get(id(properties))
        if found is None or found[0] is not properties or found[1][0] != bound_to:
            return None
        return found[1][1], found[1][2]

    def remember(self, stored: Stored, properties: JobProperties) -> None:
        with self._lock:
            self._parsed[stored] = properties
            self._parsed.move_to_end(stored)
            self._stored[id(properties)] = (properties, stored)
            while len(self._parsed) > self._size:
                _, dropped = self._parsed.popitem(last=False)
                held = self._stored.get(id(dropped))
                if held is not None and held[0] is dropped:
                    del self._stored[id(dropped)]
