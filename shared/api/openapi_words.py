"""The words of the OpenAPI documents (openapi.py): what each operation, parameter and answer is, in one place.

The 15 operations of Microsoft.Scheduler keep the published 2016-03-01 spec's descriptions
(docs/wire-contract.md, source SPEC); the rest say what their handler modules' docstrings say.
"""

from __future__ import annotations

from typing import Any

from ..jobstate.forecast import MAX_HOURS
from ..model import OverlapPolicy
from .forecast import DEFAULT_HOURS
from .occurrences import DEFAULT_COUNT, MAX_COUNT
from .paging import MAX_PAGE

DESCRIPTIONS = {
    "JobCollections_ListBySubscription": "Gets all job collections under specified subscription.",
    "JobCollections_ListByResourceGroup": "Gets all job collections under specified resource group.",
    "JobCollections_Get": "Gets a job collection.",
    "JobCollections_CreateOrUpdate": "Provisions a new job collection or updates an existing job collection.",
    "JobCollections_Patch": "Patches an existing job collection.",
    "JobCollections_Delete": "Deletes a job collection.",
    "JobCollections_Enable": "Enables all of the jobs in the job collection.",
    "JobCollections_Disable": "Disables all of the jobs in the job collection.",
    "Jobs_Get": "Gets a job.",
    "Jobs_CreateOrUpdate": "Provisions a new job or updates an existing job.",
    "Jobs_Patch": "Patches an existing job.",
    "Jobs_Delete": "Deletes a job.",
    "Jobs_Run": "Runs a job.",
    "Jobs_List": "Lists all jobs under the specified job collection.",
    "Jobs_ListJobHistory": "Lists job history.",
    "Jobs_ListAttempts": (
        "Lists the job's attempts as 2016-03-01 history does (each attempt: the first, each retry, the error action; "
        "and the notes), each attempt naming its occurrence as the occurrence's ledger entry does: executionTag, "
        "and occurrenceTime and trigger where its entry was written with them."
    ),
    "Jobs_ListOccurrences": "The job's next occurrences as the dispatcher will fire them, with notes; writes nothing.",
    "Jobs_GetOccurrence": (
        "Explains one instant of the job: whether it is an occurrence (of the series the job runs, and of its "
        "recurrence), and what happened or will happen to it, with the rule that decided (the ledger entry's, or "
        "the schedule, an exception, the pause, the job's or its collection's state, the missed-run policy); for "
        "an instant that is not an occurrence, the nearest ones. Writes nothing."
    ),
    "Jobs_Backfill": (
        "Runs the job's occurrences of a past interval again (at or after `from`, before `to`), in order, each "
        "with an executionTag of its own, under the job's policies."
    ),
    "JobCollections_Forecast": (
        "Counts the occurrences of the collection's jobs due in each minute of the next `hours`, and per destination "
        "(an Http host, a Service Bus namespace, a storage account) with its busiest second and the seconds over "
        "its targetRateLimits rule; from the schedules, exceptions and pauses as the dispatcher fires them. Writes "
        "nothing."
    ),
    "Subscription_Forecast": (
        "The forecast of every job collection of the subscription (those the caller may read) together: the "
        "minutes and destinations summed, each collection's rate limits held to its own occurrences."
    ),
    "Destinations_List": (
        "Lists the destinations the scheduler holds back: those that pushed back (429, 503: a budget in requests a "
        "second and a hold until their Retry-After) or keep failing (a circuit Open, or HalfOpen while a probe is "
        "under way), each as the executor sees it now. Destinations are the deployment's, not the subscription's: "
        "every subscription's jobs share them, and the list is the same in every subscription. A destination that "
        "recovered longer ago than the budget is forgotten is left out. Writes nothing."
    ),
    "DeadLetters_List": (
        "Lists the collection's dead letters, newest occurrence first: occurrences whose run ended failed for good "
        "(the main action's retries spent and no error action, or the error action failed too)."
    ),
    "DeadLetters_Get": "Gets a dead letter with its occurrence's attempts (the requests' outcomes, its replays').",
    "DeadLetters_Replay": (
        "Queues the occurrence again with the same identity (executionTag: Idempotency-Key, x-ms-execution-tag, "
        "MessageId) under the job's current definition and retry policy; 409 while a replay is in flight or when "
        "the job was deleted."
    ),
    "DeadLetters_ReplayMany": "Replays the dead letters named (`ids`, up to 100) or up to 100 of all (`all`).",
    "DeadLetters_Delete": "Purges a dead letter (409 while a replay of it is in flight).",
    "DeadLetters_Purge": "Purges every dead letter of the collection but those whose replay is in flight.",
    "RoleAssignments_ListForScope": "Lists the role assignments at, above and below the scope.",
    "RoleAssignments_Get": "Gets a role assignment.",
    "RoleAssignments_Create": "Creates a role assignment (Owners only; an assignment never changes: 409 otherwise).",
    "RoleAssignments_Delete": "Deletes a role assignment: 200 with the assignment removed, 204 when there was none.",
    "OpenApi_Get": "An OpenAPI document of this API (anonymous).",
    "Health_Get": (
        "The service's health (anonymous, nothing secret): storage, the dispatcher's last tick, the backlog. 200 "
        "Healthy or Degraded, 503 Unhealthy."
    ),
}
NEWER_DESCRIPTIONS = {  # what the newer api-version adds to an operation of 2016-03-01
    "Jobs_ListJobHistory": (
        " In this api-version, the occurrence ledger: one entry per nominal occurrence in the retention window, "
        "the ones that did not run included, with trigger, executionTag, reason, attempts, waited."
    ),
}
PATH_PARAMETERS = {
    "subscriptionId": "The subscription id.",
    "resourceGroupName": "The resource group name.",
    "jobCollectionName": "The job collection name.",
    "jobName": "The job name.",
    "instant": "An ISO 8601 date-time (UTC when it has no offset; `:` as it is or as %3A), e.g. 2026-12-01T09:00:00Z.",
    "roleAssignmentName": "The role assignment's name, a GUID.",
    "deadLetterId": "The dead letter's id (its `name` after the collection's).",
}
STATUSES = {"200": "OK", "201": "Created", "204": "No content", "503": "Unavailable"}

_TIME_FILTER = (
    "Terms joined by `and`: `status eq '<status>'`, and `occurrenceTime` (or `expectedExecutionTime`) `ge`, "
    "`gt`, `le`, `lt` or `eq` an ISO 8601 date-time, e.g. `status eq 'Failed' and occurrenceTime ge "
    "2026-01-01T00:00:00Z`."
)
FILTERS = {  # (operation, in the newer api-version) -> what its $filter takes
    ("Jobs_List", False): "`state eq 'Enabled'` (any JobState; quotes optional).",
    ("Jobs_List", True): "`state eq 'Enabled'` (any JobState; quotes optional).",
    ("Jobs_ListJobHistory", False): "`status eq 'Failed'` (Completed, Failed, Postponed; quotes optional).",
    ("Jobs_ListJobHistory", True): _TIME_FILTER,
    ("Jobs_ListAttempts", True): "`status eq 'Failed'` (Completed, Failed, Postponed; quotes optional).",
    ("RoleAssignments_ListForScope", True): "`atScope()` (at and above the scope) or `principalId eq '{id}'`.",
}
QUERY_OF: dict[tuple[str, str], str] = {}  # (operation, parameter) -> what it does there, where not QUERY's
QUERY: dict[str, dict[str, Any]] = {
    "$top": {
        "description": f"Caps the number of items (1-{MAX_PAGE}); no nextLink beyond.",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
    },
    "$skip": {"description": "0-based index of the first entry.", "schema": {"type": "integer", "minimum": 0}},
    "$skiptoken": {"description": "Continuation from a nextLink (opaque).", "schema": {"type": "string"}},
    "overlapPolicy": {
        "description": "The overlap policy of the occurrences this request queues, instead of the job's (nothing "
        "is stored).",
        "schema": {"$ref": f"#/components/schemas/{OverlapPolicy.__name__}"},
    },
    "count": {
        "description": f"How many next occurrences to list (1-{MAX_COUNT}, default {DEFAULT_COUNT}); on a "
        "what-if PUT or PATCH, in its `occurrences`.",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT},
    },
    "from": {
        "description": "The occurrences that fire at or after this instant (ISO 8601; default now); on a what-if "
        "PUT or PATCH, in its `occurrences`.",
        "schema": {"type": "string", "format": "date-time"},
    },
    "hours": {
        "description": f"How many hours from now the forecast counts (1-{MAX_HOURS}, default {DEFAULT_HOURS}).",
        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_HOURS},
    },
    "whatIf": {
        "description": "true: a dry run. The write is validated exactly as it would be (every refusal is its own) "
        "and answered, and nothing is written, queued or called. The name ignores case.",
        "schema": {"type": "boolean"},
    },
}
WHAT_IF_HEADER_DESCRIPTION = "true: a dry run, as the query parameter whatIf=true."
WHAT_IF_ANSWER = "With whatIf=true (or x-ms-what-if: true): {answer}, and nothing is written."
ERROR = (
    "An ARM error: 400 for a request refused (the message names the property or parameter), 401 or 403 "
    "(SCHEDULER_AUTH=entra; key mode's 401 has an empty body), 404 for a missing resource, 409 for a conflict or "
    "a quota, 415 for a body that is not JSON, 500."
)
UNAVAILABLE = "The service's storage is unavailable: retry after Retry-After seconds."
SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "bearerFormat": "JWT",
        "description": "SCHEDULER_AUTH=entra: an Entra ID access token; role assignments decide (docs/identity.md).",
    },
    "functionKey": {
        "type": "apiKey",
        "in": "header",
        "name": "x-functions-key",
        "description": "SCHEDULER_AUTH=key: a Functions key (or the query parameter code), checked by the host.",
    },
}
