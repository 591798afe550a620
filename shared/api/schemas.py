"""The wire schemas of each api-version (the OpenAPI document's `components.schemas`), and the refusal of
members they do not declare.

Built from the pydantic models, with what a version does not know hidden (shared/model/versions.py). The
newer api-version refuses a body member its schemas do not declare (400 naming the path,
shared/wire_members.py); 2016-03-01 ignores it, as the real service did.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from ..model import (
    ErrorResponse,
    JobCollectionDefinition,
    JobCollectionListResult,
    JobDefinition,
    JobHistoryListResult,
    JobListResult,
)
from ..model.versions import VERSIONS, ApiVersion, hide_in_schemas
from ..wire_members import refusal

REF = "#/components/schemas/{model}"


@cache
def schemas_for(version: str) -> dict[str, Any]:
    models: list[type[BaseModel]] = [JobCollectionDefinition, JobDefinition, JobCollectionListResult, JobListResult,
                                     JobHistoryListResult, ErrorResponse]
    _, schema = models_json_schema([(m, "validation") for m in models], ref_template=REF)
    return hide_in_schemas(VERSIONS[version], copy.deepcopy(dict(schema.get("$defs", {}))))


def refuse_unknown_members(version: ApiVersion, body: Any, root: type[BaseModel]) -> None:
    """400 for the first member of a PUT or PATCH body that `version`'s schema `root` does not declare, when
    that version refuses them."""
    refused = refusal(version.name, body, schemas_for(version.name), root.__name__)
    if refused is not None:
        raise refused
