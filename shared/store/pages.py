"""Keyset paging inside one partition: a page starts after the last row key of the previous page.

Why not the service's continuation tokens: a token only resumes a query, it cannot start one at
"row N", and a filtered query may hand back short pages. A row-key cursor resumes any query, costs
one extra entity per page (to learn whether there is a next page), and never re-reads skipped rows.

`keep` cuts a list down to the entities a caller may see (e.g. the collections a Reader may read) while
reading, so a page holds `size` of them and its cursor is always one of them: neither the page sizes nor
the cursor tell anything of the rows left out.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice
from typing import Any

from .tables import Entity, Table


def page_after(
    table: Table,
    query: str,
    params: dict[str, Any],
    size: int,
    after: str | None,
    select: list[str] | None = None,
    keep: Callable[[Entity], bool] | None = None,
) -> tuple[list[Entity], str | None]:
    """At most `size` entities with RowKey > `after` matching `query` (and `keep`), and the cursor of the next
    page: the RowKey of the last entity returned, or None when nothing (kept) follows it.
    """
    if after is not None:
        query = f"( {query} ) and RowKey gt @__after"  # the SDK substitutes @names split on spaces
        params = {**params, "__after": after}
    # Cut down, a page may have to read past many rows: larger server pages then.
    found = table.query(query, params, select=select, page_size=size + 1 if keep is None else 1000)
    items = list(islice(found if keep is None else filter(keep, found), size + 1))
    if len(items) <= size:
        return items, None
    return items[:size], str(items[size - 1]["RowKey"])


def skip_rows(
    table: Table,
    query: str,
    params: dict[str, Any],
    skip: int,
    keep: Callable[[Entity], bool] | None = None,
    select: list[str] | None = None,
) -> tuple[str | None, bool]:
    """The cursor after the first `skip` matching (and kept) entities, reading row keys only, or the
    properties `keep` needs (`select`), for a `$skip` start.

    Returns (cursor, exhausted): exhausted is True when fewer than `skip` entities match.
    """
    if skip <= 0:
        return None, False
    found = table.query(query, params, select=["RowKey", *(select or [])], page_size=1000)
    keys = found if keep is None else filter(keep, found)
    last, seen = None, 0
    for entity in islice(keys, skip):
        last, seen = str(entity["RowKey"]), seen + 1
    return last, seen < skip
