"""Route parameters to keys; names are validated here, once, for every operation."""

from __future__ import annotations

import re

from ..errors import bad_request
from ..keys import CollectionKey, JobKey
from .http import ApiRequest

# Terraform's field-tested rules (digest §1.4).
_COLLECTION_NAME = re.compile(r"^[a-zA-Z][-_a-zA-Z0-9]{0,99}$")
_JOB_NAME = re.compile(r"^[a-zA-Z][-_a-zA-Z0-9]{0,99}$")


def _route(request: ApiRequest, name: str) -> str:
    for key, value in request.route.items():
        if key.lower() == name.lower():
            return value
    raise bad_request(f"The route parameter {name} is missing.")


def subscription_id(request: ApiRequest) -> str:
    return _route(request, "subscriptionId")


def resource_group(request: ApiRequest) -> str:
    return _route(request, "resourceGroupName")


def collection_key(request: ApiRequest) -> CollectionKey:
    name = _route(request, "jobCollectionName")
    if not _COLLECTION_NAME.match(name):
        raise bad_request(
            "A job collection name starts with a letter and has 1 to 100 letters, digits, '-' or '_'.", "name"
        )
    return CollectionKey(_route(request, "subscriptionId"), _route(request, "resourceGroupName"), name)


def job_key(request: ApiRequest) -> JobKey:
    name = _route(request, "jobName")
    if not _JOB_NAME.match(name):
        raise bad_request("A job name starts with a letter and has 1 to 100 letters, digits, '-' or '_'.", "name")
    return collection_key(request).job(name)
