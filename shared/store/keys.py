"""Table keys for our records. ARM names are case-insensitive (ASCII letters only), so keys use folded names.

Table keys may not contain `/ \\ # ?` or control characters; names that carry them are escaped as
`~XX` so that every name maps to one key and back-mapping is never needed (entities keep the names).
"""

from __future__ import annotations

import functools

from ..keys import CollectionKey, JobKey, fold_case

_UNSAFE = set("/\\#?|~%") | {chr(c) for c in range(32)} | {chr(127)}


@functools.lru_cache(maxsize=1 << 16)  # every storage call of a job escapes its names: 2-3 % of a steady load's CPU
def escape(name: str) -> str:
    return "".join(f"~{ord(ch):02X}" if ch in _UNSAFE else ch for ch in fold_case(name))


def collection_partition(key: CollectionKey) -> str:
    return escape(key.subscription)


def collection_row(key: CollectionKey) -> str:
    return f"{escape(key.resource_group)}|{escape(key.collection)}"


def job_partition(key: CollectionKey) -> str:
    return f"{escape(key.subscription)}|{escape(key.resource_group)}|{escape(key.collection)}"


def job_row(key: JobKey) -> str:
    return escape(key.job)


def job_scope(key: JobKey) -> str:
    """The partition a job's history and claims had before they moved to their collection's (`job_rows`);
    what a deployment of then left in History is moved by `HistoryStore.adopt_legacy`."""
    return f"{job_partition(key.collection_key)}|{escape(key.job)}"


def job_rows(key: JobKey, suffix: str = "") -> str:
    """A row key of one of the job's rows in its collection's partition (History, AttemptClaims): the job's
    escaped name, `|`, then the row's own key; an escaped name has no `|`, so `job_rows(key)` prefixes
    exactly the job's rows and `job_rows_end(key)` is the first key after them."""
    return f"{escape(key.job)}|{suffix}"


def job_rows_end(key: JobKey) -> str:
    return f"{escape(key.job)}}}"  # `}` follows `|`
