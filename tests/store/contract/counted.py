"""`CountedTable`: a table that counts the calls made to it, by method name, and passes each on: what a contract
test reads to tell one request from one per row."""

from __future__ import annotations

from collections import Counter
from typing import Any

from shared.store.tables import Table


class CountedTable:
    """A table that counts the calls made to it (by method name), and passes each on."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.table, name)
        if not callable(found):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return found(*args, **kwargs)

        return counted
