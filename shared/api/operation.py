"""One row of the API's operation table (operations.py), and the routes the rows are built from.

Routes are Functions route templates under /api (`{name}` parameters, no leading slash).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel

from ..model.versions import DOCUMENTED, STABLE
from .http import ApiRequest, ApiResponse

if TYPE_CHECKING:
    from ..runtime import Runtime

Handler = Callable[["Runtime", ApiRequest], ApiResponse]

SUBSCRIPTION = "subscriptions/{subscriptionId}"
GROUP = f"{SUBSCRIPTION}/resourceGroups/{{resourceGroupName}}"
PROVIDER = "providers/Microsoft.Scheduler/jobCollections"
COLLECTION = f"{GROUP}/{PROVIDER}/{{jobCollectionName}}"
JOB = f"{COLLECTION}/jobs/{{jobName}}"
DEAD_LETTERS = f"{COLLECTION}/deadLetters"
DEAD_LETTER = f"{DEAD_LETTERS}/{{deadLetterId}}"
SCHEDULER = "providers/Microsoft.Scheduler"
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
    name: str  # shared by role assignments at three scopes (operation_id tells them apart), and by OpenApi_Get
    method: str
    route: str
    handler: Handler | None = None  # None: answered by api.handle itself (OpenApi_Get, Health_Get)
    body: type[BaseModel] | None = None
    responses: Mapping[str, type[BaseModel] | None] = field(default_factory=dict)  # status -> body model (None: empty)
    query: tuple[str, ...] = ()  # query parameters beyond api-version, in every api-version that serves it
    newer_query: tuple[str, ...] = ()  # query parameters only the newer api-version serves (an older one refuses them)
    # The api-version that added it; None: served beside our api-versions (role assignments take Microsoft.
    # Authorization's, OpenAPI and health none), described by the newest document only.
    since: str | None = STABLE
    api_versions: tuple[str, ...] | None = None  # None: the document's api-version; (): none is read
    what_if: type[BaseModel] | None = None  # a write whose handler answers a what-if (what_if.py): its dry-run answer
    operation_id: str = ""  # the OpenAPI operationId when `name` is not unique

    @property
    def path(self) -> str:
        """The route as an OpenAPI path (relative to the server URL, which ends in /api)."""
        return f"/{self.route}"

    @property
    def documented(self) -> bool:
        """In 2016-03-01's OpenAPI document: the 15 operations of the published spec."""
        return self.since == STABLE
