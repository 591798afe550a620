"""The single error type raised for an invalid recurrence."""

from __future__ import annotations

__all__ = ["RecurrenceError"]


class RecurrenceError(ValueError):
    """A recurrence (or its start/end instants) is invalid.

    ``path`` names the offending property relative to the recurrence object,
    using the JSON property names of the wire format (``"interval"``,
    ``"schedule.hours[2]"``, ``"schedule.monthlyOccurrences[0].occurrence"``,
    ``"timeZone"``, ``"endTime"``...), so the HTTP layer can prefix it with
    ``properties.recurrence.`` and return it in a 400 message unchanged.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message
