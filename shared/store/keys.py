"""Table keys for our records. ARM names are case-insensitive (ASCII letters only), so keys use folded names.

Table keys may not contain `/ \\ # ?` or control characters; names that carry them are escaped as
`~XX` so that every name maps to one key and back-mapping is never needed (entities keep the names).
"""

from __future__ import annotations

from ..keys import CollectionKey, JobKey, fold_case

_UNSAFE = set("/\\#?|~%") | {chr(c) for c in range(32)} | {chr(127)}


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
    """One partition per job, for its history and claims."""
    return f"{job_partition(key.collection_key)}|{escape(key.job)}"
