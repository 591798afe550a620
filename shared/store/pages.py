"""Keyset paging inside one partition: a page starts after the last row key of the previous page.

Why not the service's continuation tokens: a token only resumes a query, it cannot start one at
"row N", and a filtered query may hand back short pages. A row-key cursor resumes any query, costs
one extra entity per page (to learn whether there is a next page), and never re-reads skipped rows.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from .tables import Entity, Table


def page_after(
    table: Table, query: str, params: dict[str, Any], size: int, after: str | None,
    select: list[str] | None = None,
) -> tuple[list[Entity], str | None]:
    """At most `size` entities with RowKey > `after` matching `query`, and the cursor of the next page.

    The cursor is the RowKey of the last entity returned, or None when nothing follows it.
    """
    if after is not None:
        query = f"( {query} ) and RowKey gt @__after"  # the SDK substitutes @names split on spaces
        params = {**params, "__after": after}
    items = list(islice(table.query(query, params, select=select, page_size=size + 1), size + 1))
    if len(items) <= size:
        return items, None
    return items[:size], str(items[size - 1]["RowKey"])


def skip_rows(table: Table, query: str, params: dict[str, Any], skip: int) -> tuple[str | None, bool]:
    """The cursor after the first `skip` matching entities, reading row keys only (a `$skip` start).

    Returns (cursor, exhausted): exhausted is True when fewer than `skip` entities match.
    """
    if skip <= 0:
        return None, False
    keys = table.query(query, params, select=["RowKey"], page_size=1000)
    last, seen = None, 0
    for entity in islice(keys, skip):
        last, seen = str(entity["RowKey"]), seen + 1
    return last, seen < skip
