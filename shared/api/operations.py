"""The API's operation table: every operation once, with its HTTP method, its route, its handler and what the
OpenAPI documents say of it.

Everything else derives from this table: function_app.py binds each route with the methods listed here and
looks the operation up with `operation_at`; `api.handle` dispatches by operation name; openapi.py builds both
OpenAPI documents from it (2016-03-01's: the operations `since` it; the newest: every operation); the test
suite's in-process server routes with `routes()`. tests/api/test_operation_table.py checks that function_app.py's
indexed HTTP routes are exactly these; tests/api/test_openapi_complete.py that the documents say what the
handlers read (query parameters, headers, bodies) and the api-versions refuse what their document leaves out.

Routes are Functions route templates under /api (`{name}` parameters, no leading slash).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from pydantic import BaseModel

from ..model import (
    JobCollectionDefinition,
    JobCollectionListResult,
    JobDefinition,
    JobHistoryListResult,
    JobListResult,
)
from ..model.versions import STABLE
from .answers import (
    HealthReport,
    JobCollectionWhatIf,
    JobDeleteWhatIf,
    JobWhatIf,
    OpenApiDocument,
    RoleAssignment,
    RoleAssignmentCreateParameters,
    RoleAssignmentListResult,
)
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
from .jobs import delete_job, get_job, list_history, list_jobs, patch_job, put_job, run_job
from .newer_operations import NEWER_OPERATIONS
from .operation import (
    COLLECTION,
    FILTERED_PAGING,
    GROUP,
    JOB,
    OPENAPI_ROUTES,
    PAGING,
    PROVIDER,
    ROLE,
    ROLES,
    SUBSCRIPTION,
    Handler,
    Operation,
)
from .role_assignments import API_VERSIONS as ROLE_API_VERSIONS
from .role_assignments import (
    create_role_assignment,
    delete_role_assignment,
    get_role_assignment,
    list_role_assignments,
)

# Role assignments as Microsoft.Authorization serves them (role_assignments.py), at each scope (_at_scope).
_ROLE_ASSIGNMENTS = (
    # $top and $skip are refused there (ARM's role assignments take neither): the list pages by nextLink only.
    Operation("RoleAssignments_ListForScope", "GET", ROLES, list_role_assignments, query=("$filter", "$skiptoken")),
    Operation("RoleAssignments_Get", "GET", ROLE, get_role_assignment),
    Operation("RoleAssignments_Create", "PUT", ROLE, create_role_assignment, body=RoleAssignmentCreateParameters),
    Operation("RoleAssignments_Delete", "DELETE", ROLE, delete_role_assignment),
)
_ROLE_ANSWERS: dict[str, Mapping[str, type[BaseModel] | None]] = {
    "RoleAssignments_ListForScope": {"200": RoleAssignmentListResult},
    "RoleAssignments_Get": {"200": RoleAssignment},
    "RoleAssignments_Create": {"201": RoleAssignment},
    "RoleAssignments_Delete": {"200": RoleAssignment, "204": None},
}


def _at_scope(scope: str, kind: str) -> tuple[Operation, ...]:
    """The role assignment operations at one scope (`kind` names it in their operationIds)."""
    return tuple(
        dataclasses.replace(
            op,
            route=f"{scope}/{op.route}",
            responses=_ROLE_ANSWERS[op.name],
            since=None,
            api_versions=ROLE_API_VERSIONS,
            operation_id=op.name.replace("ForScope", f"For{kind}")
            if op.method == "GET" and op.route == ROLES
            else f"{op.name}At{kind}",
        )
        for op in _ROLE_ASSIGNMENTS
    )


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
        what_if=JobCollectionWhatIf,
    ),
    Operation(
        "JobCollections_Patch",
        "PATCH",
        COLLECTION,
        patch_collection,
        body=JobCollectionDefinition,
        responses={"200": JobCollectionDefinition},
        what_if=JobCollectionWhatIf,
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
        newer_query=("count", "from"),  # of a what-if's occurrences
        what_if=JobWhatIf,
    ),
    Operation(
        "Jobs_Patch",
        "PATCH",
        JOB,
        patch_job,
        body=JobDefinition,
        responses={"200": JobDefinition},
        newer_query=("count", "from"),
        what_if=JobWhatIf,
    ),
    Operation("Jobs_Delete", "DELETE", JOB, delete_job, responses={"200": None}, what_if=JobDeleteWhatIf),
    Operation("Jobs_Run", "POST", f"{JOB}/run", run_job, responses={"200": None}, newer_query=("overlapPolicy",)),
    Operation(
        "Jobs_List",
        "GET",
        f"{COLLECTION}/jobs",
        list_jobs,
        responses={"200": JobListResult},
        query=FILTERED_PAGING,
    ),
    Operation(
        "Jobs_ListJobHistory",
        "GET",
        f"{JOB}/history",
        list_history,
        responses={"200": JobHistoryListResult},
        query=FILTERED_PAGING,
    ),
    *NEWER_OPERATIONS,
    *_at_scope(SUBSCRIPTION, "Subscription"),
    *_at_scope(GROUP, "ResourceGroup"),
    *_at_scope(COLLECTION, "JobCollection"),
    *(
        Operation(
            "OpenApi_Get",
            "GET",
            route,
            responses={"200": OpenApiDocument},
            since=None,
            api_versions=(),
            operation_id="OpenApi_Get" if version == STABLE else f"OpenApi_Get_{version.replace('-', '_')}",
        )
        for route, version in OPENAPI_ROUTES.items()
    ),
    Operation(
        "Health_Get",
        "GET",
        "health",
        responses={"200": HealthReport, "503": HealthReport},
        since=None,
        api_versions=(),
    ),
)

HANDLERS: dict[str, Handler] = {op.name: op.handler for op in OPERATIONS if op.handler is not None}
WHAT_IF_OPERATIONS = frozenset(op.name for op in OPERATIONS if op.what_if is not None)


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
