"""The API's operation table: every operation once, with its HTTP method, its route, its handler and what the
OpenAPI document says of it.

Everything else derives from this table: function_app.py binds each route with the methods listed here and
looks the operation up with `operation_at`; `api.handle` dispatches by operation name; openapi.py builds its
paths from the documented operations; the test suite's in-process server routes with `routes()`.
tests/api/test_operation_table.py checks that function_app.py's indexed HTTP routes are exactly these.

Routes are Functions route templates under /api (`{name}` parameters, no leading slash).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel

from ..model import (
    JobCollectionDefinition,
    JobCollectionListResult,
    JobDefinition,
    JobHistoryListResult,
    JobListResult,
)
from ..model.versions import DOCUMENTED, STABLE
from ..runtime import Runtime
from .backfill import backfill
from .collections import (
    delete_collection,
    disable_collection,
    enable_collection,
    get_collection,
    list_by_resource_group,
    list_by_subscription,
    patch_collection,
    put_collection,
)
from .http import ApiRequest, ApiResponse
from .jobs import delete_job, get_job, list_history, list_jobs, patch_job, put_job, run_job
from .occurrences import list_occurrences
from .role_assignments import (
    create_role_assignment,
    delete_role_assignment,
    get_role_assignment,
    list_role_assignments,
)

Handler = Callable[[Runtime, ApiRequest], ApiResponse]

SUBSCRIPTION = "subscriptions/{subscriptionId}"
GROUP = f"{SUBSCRIPTION}/resourceGroups/{{resourceGroupName}}"
PROVIDER = "providers/Microsoft.Scheduler/jobCollections"
COLLECTION = f"{GROUP}/{PROVIDER}/{{jobCollectionName}}"
JOB = f"{COLLECTION}/jobs/{{jobName}}"
ROLES = "providers/Microsoft.Authorization/roleAssignments"
ROLE = f"{ROLES}/{{roleAssignmentName}}"
# One OpenAPI document per documented api-version, side by side: 2016-03-01's at the address it always had.
OPENAPI_ROUTES = {
    ("openapi.json" if version == STABLE else f"openapi-{version}.json"): version for version in DOCUMENTED
}
PAGING = ("$top", "$skip", "$skiptoken")
FILTERED_PAGING = ("$top", "$skip", "$filter", "$skiptoken")


@dataclass(frozen=True)
class Operation:
    name: str  # the OpenAPI operationId; role assignments have one name at three scopes, OpenApi_Get one per document
    method: str
    route: str
    handler: Handler | None = None  # None: answered by api.handle itself (OpenApi_Get, Health_Get)
    body: type[BaseModel] | None = None
    responses: Mapping[str, type[BaseModel] | None] = field(default_factory=dict)  # 2xx status -> body model
    query: tuple[str, ...] = ()  # query parameters beyond api-version
    newer_query: tuple[str, ...] = ()  # query parameters only the newer api-version's document shows
    documented: bool = True  # in our OpenAPI documents (the 15 operations of Microsoft.Scheduler)

    @property
    def path(self) -> str:
        """The route as an OpenAPI path (relative to the server URL, which ends in /api)."""
        return f"/{self.route}"


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "JobCollections_ListBySubscription",
        "GET",
        f"{SUBSCRIPTION}/{PROVIDER}",
        list_by_subscription,
        responses={"200": JobCollectionListResult},
        query=PAGING,
    ),
    Operation(
        "JobCollections_ListByResourceGroup",
        "GET",
        f"{GROUP}/{PROVIDER}",
        list_by_resource_group,
        responses={"200": JobCollectionListResult},
        query=PAGING,
    ),
    Operation("JobCollections_Get", "GET", COLLECTION, get_collection, responses={"200": JobCollectionDefinition}),
    Operation(
        "JobCollections_CreateOrUpdate",
        "PUT",
        COLLECTION,
        put_collection,
        body=JobCollectionDefinition,
        responses={"200": JobCollectionDefinition, "201": JobCollectionDefinition},
    ),
    Operation(
        "JobCollections_Patch",
        "PATCH",
        COLLECTION,
        patch_collection,
        body=JobCollectionDefinition,
        responses={"200": JobCollectionDefinition},
    ),
    Operation("JobCollections_Delete", "DELETE", COLLECTION, delete_collection, responses={"200": None}),
    Operation("JobCollections_Enable", "POST", f"{COLLECTION}/enable", enable_collection, responses={"200": None}),
    Operation("JobCollections_Disable", "POST", f"{COLLECTION}/disable", disable_collection, responses={"200": None}),
    Operation("Jobs_Get", "GET", JOB, get_job, responses={"200": JobDefinition}),
    Operation(
        "Jobs_CreateOrUpdate",
        "PUT",
        JOB,
        put_job,
        body=JobDefinition,
        responses={"200": JobDefinition, "201": JobDefinition},
    ),
    Operation("Jobs_Patch", "PATCH", JOB, patch_job, body=JobDefinition, responses={"200": JobDefinition}),
    Operation("Jobs_Delete", "DELETE", JOB, delete_job, responses={"200": None}),
    Operation("Jobs_Run", "POST", f"{JOB}/run", run_job, responses={"200": None}, newer_query=("overlapPolicy",)),
    Operation(
        "Jobs_List", "GET", f"{COLLECTION}/jobs", list_jobs, responses={"200": JobListResult}, query=FILTERED_PAGING
    ),
    Operation(
        "Jobs_ListJobHistory",
        "GET",
        f"{JOB}/history",
        list_history,
        responses={"200": JobHistoryListResult},
        query=FILTERED_PAGING,
    ),
    # Newer api-version only (2026-12-01-preview): not in the 2016-03-01 document; the newer version's
    # OpenAPI document (issue 26, item 1) lists them.
    Operation(
        "Jobs_ListOccurrences", "GET", f"{JOB}/occurrences", list_occurrences, query=("count", "from"), documented=False
    ),
    Operation("Jobs_Backfill", "POST", f"{JOB}/backfill", backfill, documented=False),
    *(
        operation
        for scope in (SUBSCRIPTION, GROUP, COLLECTION)
        for operation in (
            Operation(
                "RoleAssignments_ListForScope", "GET", f"{scope}/{ROLES}", list_role_assignments, documented=False
            ),
            Operation("RoleAssignments_Get", "GET", f"{scope}/{ROLE}", get_role_assignment, documented=False),
            Operation("RoleAssignments_Create", "PUT", f"{scope}/{ROLE}", create_role_assignment, documented=False),
            Operation("RoleAssignments_Delete", "DELETE", f"{scope}/{ROLE}", delete_role_assignment, documented=False),
        )
    ),
    *(Operation("OpenApi_Get", "GET", route, documented=False) for route in OPENAPI_ROUTES),
    Operation("Health_Get", "GET", "health", documented=False),
)

HANDLERS: dict[str, Handler] = {op.name: op.handler for op in OPERATIONS if op.handler is not None}


def routes() -> dict[str, dict[str, str]]:
    """Route -> {method: operation name}, in table order."""
    table: dict[str, dict[str, str]] = {}
    for op in OPERATIONS:
        table.setdefault(op.route, {})[op.method] = op.name
    return table


_ROUTES = routes()


def methods_at(route: str) -> list[str]:
    """The methods function_app.py binds at `route`."""
    return list(_ROUTES[route])


def operation_at(route: str, method: str) -> str:
    """The operation a request to `route` with `method` runs ("" when the route has no such method: the
    host only hands over the methods a route was bound with, so that is a programming error, answered 405)."""
    return _ROUTES[route].get(method.upper(), "")
