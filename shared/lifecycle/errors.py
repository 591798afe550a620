"""What the lifecycle refuses, as domain errors that carry what was wrong; no HTTP here.

The API maps each kind to its ARM error at its boundary (shared/api/http.py): InvalidDefinition is a
400, JobNotFound and CollectionNotFound are 404s, QuotaExceeded and Conflict are 409s. Messages are
written for the caller and never quote raw input that could carry line breaks.
"""

from __future__ import annotations

from ..keys import CollectionKey, JobKey


class LifecycleError(Exception):
    """Base of every refusal; `message` is the text the caller sees."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidDefinition(LifecycleError):
    """The definition (or a request's member) breaks a rule; `path` names the offending property."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path


class JobNotFound(LifecycleError):
    """A job missing from a live collection (a missing collection is CollectionNotFound, reads.missing_job)."""

    def __init__(self, key: JobKey) -> None:
        super().__init__(f"Job '{key.job}' cannot be found.")  # the real service's words (wire-contract.md §1.3)
        self.key = key


class CollectionNotFound(LifecycleError):
    """Missing, or being deleted (a collection marked Deleted takes no more writes)."""

    def __init__(self, key: CollectionKey) -> None:
        super().__init__(f"The job collection '{key.collection}' was not found.")
        self.key = key


class QuotaExceeded(LifecycleError):
    """The collection's plan or quota does not allow it (job count, recurrence, outbound authentication,
    one Free collection per subscription)."""


class Conflict(LifecycleError):
    """The current state forbids it (a final state, a collection being deleted), or a concurrent change won."""
