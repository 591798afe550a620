"""Route parameters to keys; names are validated here, once, for every operation.

Rules (a bad name is a 400 that never quotes it: a name may carry line breaks or control characters,
and an error message ends up in logs):
- subscription: ARM's subscription id, 1-90 ASCII letters, digits and `-_.()` (a GUID in Azure);
- resource group: ARM's rule, 1-90 characters that are letters, digits (Unicode, as ARM allows) or
  `-_.()`, not ending in `.`;
- job collection and job: Terraform's field-tested rules (a letter, then up to 99 of `[-_a-zA-Z0-9]`).
Names compare ignoring the case of ASCII letters only (shared.keys.fold_case).
"""

from __future__ import annotations

import re

from ..errors import ApiError, bad_request
from ..keys import CollectionKey, JobKey
from .http import ApiRequest

_SUBSCRIPTION = re.compile(r"[-\w.()]{1,90}", re.ASCII)
# \w here is Unicode letters, digits and connector punctuation; C0/C1 controls, line breaks and `/` are not in it.
_RESOURCE_GROUP = re.compile(r"[-\w.()]{0,89}[-\w()]")
_COLLECTION_NAME = re.compile(r"[a-zA-Z][-_a-zA-Z0-9]{0,99}")
_JOB_NAME = re.compile(r"[a-zA-Z][-_a-zA-Z0-9]{0,99}")
# ARM's codes for malformed scope segments.
_BAD_SUBSCRIPTION = (
    "InvalidSubscriptionId",
    "The subscription id is malformed: it has 1 to 90 ASCII letters, digits, '-', '_', '.', '(' or ')'.",
)
_BAD_GROUP = (
    "InvalidResourceGroup",
    "The resource group name is malformed: it has 1 to 90 letters, digits, "
    "'-', '_', '.', '(' or ')' and does not end in '.'.",
)


def _route(request: ApiRequest, name: str) -> str:
    for key, value in request.route.items():
        if key.lower() == name.lower():
            return value
    raise bad_request(f"The route parameter {name} is missing.")


def subscription_id(request: ApiRequest) -> str:
    name = _route(request, "subscriptionId")
    if not _SUBSCRIPTION.fullmatch(name):
        raise ApiError(400, *_BAD_SUBSCRIPTION)
    return name


def resource_group(request: ApiRequest) -> str:
    name = _route(request, "resourceGroupName")
    if not _RESOURCE_GROUP.fullmatch(name):
        raise ApiError(400, *_BAD_GROUP)
    return name


def collection_key(request: ApiRequest) -> CollectionKey:
    name = _route(request, "jobCollectionName")
    if not _COLLECTION_NAME.fullmatch(name):
        raise bad_request(
            "A job collection name starts with a letter and has 1 to 100 letters, digits, '-' or '_'.", "name"
        )
    return CollectionKey(subscription_id(request), resource_group(request), name)


def job_key(request: ApiRequest) -> JobKey:
    name = _route(request, "jobName")
    if not _JOB_NAME.fullmatch(name):
        raise bad_request("A job name starts with a letter and has 1 to 100 letters, digits, '-' or '_'.", "name")
    return collection_key(request).job(name)
