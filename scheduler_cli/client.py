"""The management API over HTTP for the CLI: ARM paths, api-version, credentials, nextLink paging, and every
failure as a `CliError` carrying the API's error code and the process exit code scripts rely on.

Exit codes: 0 ok; 1 the API answered an error (4xx/5xx); 2 bad usage or input (Click's own code too);
3 the endpoint could not be reached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import requests

from shared.model.versions import NEWEST, STABLE

API_VERSION = NEWEST.name  # the newest api-version: it shows every extension (timeZone, exponential retry)
DEFAULT_ENDPOINT = "http://127.0.0.1:7071/api"
API_ERROR, USAGE_ERROR, UNREACHABLE = 1, 2, 3


class CliError(Exception):
    """One line for stderr (`code: message`) and the exit code; `details` (every problem of a template)
    follow it, one indented line each."""

    def __init__(
        self,
        code: str,
        message: str,
        exit_code: int = API_ERROR,
        status: int | None = None,
        details: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.exit_code, self.status = code, message, exit_code, status
        self.details = details or []

    def line(self) -> str:
        status = f" (HTTP {self.status})" if self.status else ""
        return f"error: {self.code}{status}: {self.message}"

    def lines(self) -> str:
        return "\n".join([self.line() + (":" if self.details else ""), *(f"  - {d}" for d in self.details)])


def _local(endpoint: str) -> bool:
    return (urlsplit(endpoint).hostname or "") in ("127.0.0.1", "localhost", "::1")


def _context(path: str) -> str:
    """Where the failing call was aimed, for messages that do not say it: resource group and subscription."""
    found = re.search(r"/subscriptions/([^/?]+)(?:/resourceGroups/([^/?]+))?", path, re.IGNORECASE)
    if not found:
        return ""
    subscription, group = (unquote(part) if part else part for part in found.groups())
    return (
        f" (resource group '{group}', subscription '{subscription}')" if group else f" (subscription '{subscription}')"
    )


def collection_path(subscription: str, group: str, collection: str) -> str:
    return (
        f"/subscriptions/{quote(subscription, safe='')}/resourceGroups/{quote(group, safe='')}"
        f"/providers/Microsoft.Scheduler/jobCollections/{quote(collection, safe='')}"
    )


def job_path(subscription: str, group: str, collection: str, job: str) -> str:
    return f"{collection_path(subscription, group, collection)}/jobs/{quote(job, safe='')}"


@dataclass
class ApiClient:
    endpoint: str = DEFAULT_ENDPOINT
    token: str | None = None
    functions_key: str | None = None
    timeout: float = 30.0

    def __post_init__(self) -> None:
        self.endpoint = self.endpoint.rstrip("/")
        self._session = requests.Session()
        self._session.headers["Accept"] = "application/json"
        self._session.headers["User-Agent"] = "scheduler-cli"
        if self.token:
            self._session.headers["Authorization"] = f"Bearer {self.token}"
        if self.functions_key:
            self._session.headers["x-functions-key"] = self.functions_key

    def call(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None) -> Any:
        """The answer's JSON (None when empty); a CliError for any error answer."""
        url = path if path.startswith(("http://", "https://")) else f"{self.endpoint}{path}"
        params = {} if "api-version=" in url else {"api-version": API_VERSION}
        params.update({k: v for k, v in (query or {}).items() if v is not None})
        if path.startswith(("http://", "https://")) and urlsplit(url).netloc != urlsplit(self.endpoint).netloc:
            raise CliError("Refused", f"nextLink points to another host ({urlsplit(url).netloc}).")
        try:
            response = self._session.request(method, url, params=params, json=body, timeout=self.timeout)
        except requests.ConnectionError as error:
            if _local(self.endpoint) and not isinstance(error, requests.Timeout):
                raise CliError(
                    "Unreachable",
                    f"nothing answers at {self.endpoint}: is `make run` running? (or set SCHEDULER_ENDPOINT)",
                    UNREACHABLE,
                ) from None
            raise CliError("Unreachable", f"{self.endpoint}: {type(error).__name__}: {error}", UNREACHABLE) from None
        except requests.RequestException as error:
            raise CliError("Unreachable", f"{self.endpoint}: {type(error).__name__}: {error}", UNREACHABLE) from None
        try:
            document = response.json() if response.content else None
        except ValueError:
            document = None
        if response.status_code >= 400:
            body = document.get("error") if isinstance(document, dict) else None
            if isinstance(body, dict) and body.get("code"):
                raise CliError(
                    str(body["code"]), f"{body.get('message', '')}{_context(path)}", API_ERROR, response.status_code
                )
            reason = response.reason or "the API refused the request"
            if response.status_code == 404:  # no API answered: the address, not the resource, is wrong
                prefix = urlsplit(self.endpoint).path.rstrip("/")
                hint = (
                    "is /api missing from SCHEDULER_ENDPOINT?"
                    if not prefix
                    else "is SCHEDULER_ENDPOINT the scheduler's API (as http://127.0.0.1:7071/api)?"
                )
                reason = f"{self.endpoint} answered 404 without an API error: {hint}"
            raise CliError("HttpError", reason, API_ERROR, response.status_code)
        return document

    def exists(self, path: str) -> bool:
        """Whether the resource at `path` exists (any error but its 404 is raised)."""
        try:
            self.call("GET", path)
        except CliError as error:
            if error.status == 404:
                return False
            raise
        return True

    def schemas(self) -> dict[str, Any]:
        """The wire schemas of the api-version the CLI speaks (`components.schemas` of the API's OpenAPI document
        for it); the CLI's own copy when the endpoint serves none."""
        # The API's naming (shared/api/operations.py OPENAPI_ROUTES), not imported: that loads the whole API.
        route = "openapi.json" if API_VERSION == STABLE else f"openapi-{API_VERSION}.json"
        try:
            document = self.call("GET", f"/{route}")
            found = ((document or {}).get("components") or {}).get("schemas") if isinstance(document, dict) else None
            if isinstance(found, dict) and found:
                return found
        except CliError as error:
            if error.exit_code == UNREACHABLE:
                raise
        from shared.api.openapi import openapi_document  # heavy (the whole API): only when the endpoint has none

        return dict(openapi_document(f"/api/{route}")["components"]["schemas"])

    def list_all(self, path: str, query: dict[str, Any] | None = None, limit: int | None = None) -> list[Any]:
        """Every item, following nextLink until it is absent or null (or `limit` items are read)."""
        page = self.call("GET", path, query=query) or {}
        items: list[Any] = list(page.get("value") or [])
        while page.get("nextLink") and (limit is None or len(items) < limit):
            page = self.call("GET", page["nextLink"]) or {}
            items.extend(page.get("value") or [])
        return items if limit is None else items[:limit]
