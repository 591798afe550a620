"""The operations only the newer api-version (2026-12-01-preview) serves: an older one refuses them (400 naming the
version; `since=PREVIEW`). Rows of the one operation table (operations.py), kept apart so that table stays a page.
"""

from __future__ import annotations

from ..model import JobHistoryListResult
from ..model.versions import PREVIEW
from .answers import BackfillRequest, BackfillResult, Forecast, OccurrenceExplanation, OccurrencePreview
from .backfill import backfill
from .dead_letter_answers import (
    DeadLetter,
    DeadLetterListResult,
    DeadLetterPurgeResult,
    DeadLetterReplayRequest,
    DeadLetterReplayResult,
)
from .dead_letters import (
    delete_dead_letter,
    get_dead_letter,
    list_dead_letters,
    purge_dead_letters,
    replay_dead_letter,
    replay_dead_letters,
)
from .destinations import DestinationListResult, list_destinations
from .explain import explain_occurrence
from .forecast import collection_forecast, subscription_forecast
from .jobs import list_attempts
from .occurrences import list_occurrences
from .operation import (
    COLLECTION,
    DEAD_LETTER,
    DEAD_LETTERS,
    FILTERED_PAGING,
    JOB,
    PAGING,
    SCHEDULER,
    SUBSCRIPTION,
    Operation,
)

NEWER_OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "Jobs_ListAttempts",
        "GET",
        f"{JOB}/attempts",
        list_attempts,
        responses={"200": JobHistoryListResult},
        query=FILTERED_PAGING,
        since=PREVIEW,
    ),
    Operation(
        "Jobs_ListOccurrences",
        "GET",
        f"{JOB}/occurrences",
        list_occurrences,
        responses={"200": OccurrencePreview},
        query=("count", "from"),
        since=PREVIEW,
    ),
    Operation(
        "Jobs_GetOccurrence",
        "GET",
        f"{JOB}/occurrences/{{instant}}",
        explain_occurrence,
        responses={"200": OccurrenceExplanation},
        since=PREVIEW,
    ),
    Operation(
        "Jobs_Backfill",
        "POST",
        f"{JOB}/backfill",
        backfill,
        body=BackfillRequest,
        responses={"200": BackfillResult},
        query=("overlapPolicy",),
        since=PREVIEW,
        what_if=BackfillResult,
    ),
    Operation(
        "JobCollections_Forecast",
        "GET",
        f"{COLLECTION}/forecast",
        collection_forecast,
        responses={"200": Forecast},
        query=("hours",),
        since=PREVIEW,
    ),
    Operation(
        "Subscription_Forecast",
        "GET",
        f"{SUBSCRIPTION}/{SCHEDULER}/forecast",
        subscription_forecast,
        responses={"200": Forecast},
        query=("hours",),
        since=PREVIEW,
    ),
    # The destinations pushing back or failing, the deployment's (api/destinations.py).
    Operation(
        "Destinations_List",
        "GET",
        f"{SUBSCRIPTION}/{SCHEDULER}/destinations",
        list_destinations,
        responses={"200": DestinationListResult},
        since=PREVIEW,
    ),
    # A collection's dead letters (api/dead_letters.py).
    Operation(
        "DeadLetters_List",
        "GET",
        DEAD_LETTERS,
        list_dead_letters,
        responses={"200": DeadLetterListResult},
        query=PAGING,
        since=PREVIEW,
    ),
    Operation(
        "DeadLetters_Purge",
        "DELETE",
        DEAD_LETTERS,
        purge_dead_letters,
        responses={"200": DeadLetterPurgeResult},
        since=PREVIEW,
    ),
    Operation(
        "DeadLetters_ReplayMany",
        "POST",
        f"{DEAD_LETTERS}/replay",
        replay_dead_letters,
        body=DeadLetterReplayRequest,
        responses={"200": DeadLetterReplayResult},
        since=PREVIEW,
    ),
    Operation("DeadLetters_Get", "GET", DEAD_LETTER, get_dead_letter, responses={"200": DeadLetter}, since=PREVIEW),
    Operation("DeadLetters_Delete", "DELETE", DEAD_LETTER, delete_dead_letter, responses={"200": None}, since=PREVIEW),
    Operation(
        "DeadLetters_Replay",
        "POST",
        f"{DEAD_LETTER}/replay",
        replay_dead_letter,
        responses={"200": DeadLetter},
        since=PREVIEW,
    ),
)
