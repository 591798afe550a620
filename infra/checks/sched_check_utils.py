"""Helpers shared by the custom checks in this folder (not a check itself).

checkov's Bicep parser hands checks a resource's ``config`` with literals as Python values,
references to parameters/variables it cannot resolve as their bare names, string
interpolations as the raw ``'...${expr}...'`` text and function calls as nested dicts
(e.g. ``{"function": {"type": "list_func", "parameters": {"func_name": "listKeys"}}}``).
"""

from __future__ import annotations

import json
import re
from typing import Any

# Custom check ids, in one place so infra/check.sh and tests/infra agree with the checks.
STORAGE_SHARED_KEY_DISABLED = "CKV_SCHED_1"
STORAGE_BLOB_PUBLIC_ACCESS_DISABLED = "CKV_SCHED_2"
APP_INSIGHTS_LOCAL_AUTH_DISABLED = "CKV_SCHED_3"
NO_SECRETS_IN_APP_SETTINGS = "CKV_SCHED_4"
IDENTITY_BASED_HOST_STORAGE = "CKV_SCHED_5"
SERVICE_BUS_LOCAL_AUTH_DISABLED = "CKV_SCHED_6"

# Text that only appears in key- or SAS-bearing values.
SECRET_MARKERS = (
    "accountkey=",
    "sharedaccesskey=",
    "sharedaccesssignature=",
    "sharedaccesskeyname=",
    "instrumentationkey=",
    "password=",
    "pwd=",
    "sig=",
)
# Bicep list*() resource functions return keys, SAS tokens and secrets.
_LIST_CALL = re.compile(r"\blist[a-z]*\s*\(", re.IGNORECASE)

# Settings whose presence means a key-based connection (the value cannot be identity-based).
FORBIDDEN_SETTING_NAMES = {
    "azurewebjobsstorage",  # plain connection string; identity-based uses AzureWebJobsStorage__*
    "azurewebjobsdashboard",
    "website_contentazurefileconnectionstring",  # Azure Files content share needs the account key
    "appinsights_instrumentationkey",  # key-based ingestion; we use Entra ID auth
    "deployment_storage_connection_string",
}
# Suffixes of identity-based connection settings that must never carry a secret.
_SECRET_NAME_SUFFIXES = ("__accountkey", "__sharedaccesskey", "__clientsecret", "__password")


def get(conf: Any, *path: str) -> Any:
    """conf[path[0]][path[1]]..., or None when any step is missing or not a dict."""
    node = conf
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def is_false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.lower() == "false")


def as_text(value: Any) -> str:
    """A value (literal, interpolation or parsed expression) flattened to searchable text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, sort_keys=True)


def secret_problem(name: str, value: Any) -> str | None:
    """Why the setting ``name`` = ``value`` carries a secret, or None when it does not."""
    lowered_name = name.lower()
    if lowered_name in FORBIDDEN_SETTING_NAMES:
        return f"setting {name!r} is a key-based connection setting"
    if lowered_name.endswith(_SECRET_NAME_SUFFIXES):
        return f"setting {name!r} holds a credential"
    text = as_text(value)
    lowered = text.lower()
    for marker in SECRET_MARKERS:
        if marker in lowered:
            return f"setting {name!r} contains {marker!r}"
    if _LIST_CALL.search(text) or '"list_func"' in lowered:
        return f"setting {name!r} is computed with a list*() call (keys/secrets)"
    return None


def settings_from_list(app_settings: Any) -> list[tuple[str, Any]] | None:
    """[(name, value)] from a siteConfig.appSettings array, or None when it is not inspectable."""
    if not isinstance(app_settings, list):
        return None
    pairs: list[tuple[str, Any]] = []
    for item in app_settings:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            return None
        pairs.append((item["name"], item.get("value")))
    return pairs
