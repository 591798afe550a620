"""Functions keys, checked as the Functions host checks them in Azure (WebJobs.Script.WebHost's
AuthenticationLevelHandler, SecretManager and FunctionInvocationMiddleware).

Contract:
- A route declared `anonymous` is always served. A route declared `function` (the worker's default) needs a
  function key or the master key; `admin`, the master key (azure.functions declares no other level).
- The key is the first `x-functions-key` header; only without that header, the first `code` query parameter
  (both names in any case). Compared in constant time. A request without a valid key is answered 401 with an
  empty body before the function runs, as the host's `UnauthorizedResult`.
- Keys come from the app settings (local.settings.json `Values` or the environment, which wins):
  `DEVHOST_FUNCTION_KEY` and `DEVHOST_MASTER_KEY`, each at least `MIN_KEY_CHARS` characters. A key not set is
  generated at start (256 random bits, URL-safe) and `generated` names it, so the host prints it once. A key
  set but too short raises `KeyConfigurationError`: the host refuses to start.
- Only an app with a route that needs a key gets keys (`for_app` returns None otherwise).
"""

from __future__ import annotations

import hmac
import os
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from devhost.indexing import HTTP_TRIGGER, FunctionInfo

FUNCTION_KEY_SETTING = "DEVHOST_FUNCTION_KEY"
MASTER_KEY_SETTING = "DEVHOST_MASTER_KEY"
KEY_HEADER = "x-functions-key"
KEY_QUERY = "code"
MIN_KEY_CHARS = 16
ANONYMOUS, FUNCTION, ADMIN = "anonymous", "function", "admin"


class KeyConfigurationError(RuntimeError):
    """The host cannot check the keys its routes need; the message is one line naming what to change."""


def level_of(function: FunctionInfo) -> str:
    # The worker's default auth level is `function` (azure.functions' HttpTrigger and FunctionApp).
    return (function.auth_level or FUNCTION).strip().lower()


def _key(settings: Mapping[str, str], name: str, generated: list[str]) -> str:
    value = settings.get(name)
    if value is None:
        generated.append(name)
        return secrets.token_urlsafe(32)
    if len(value.strip()) < MIN_KEY_CHARS:
        raise KeyConfigurationError(
            f"{name} must be at least {MIN_KEY_CHARS} characters (or unset: the host then "
            "generates a key and prints it)"
        )
    return value.strip()


@dataclass(frozen=True)
class FunctionKeys:
    function_key: str
    master_key: str
    generated: tuple[str, ...] = ()  # the settings whose keys were generated at start

    @classmethod
    def for_app(
        cls, functions: Iterable[FunctionInfo], settings: Mapping[str, str] | None = None
    ) -> FunctionKeys | None:
        """The keys the app's HTTP routes need, None when every route is anonymous."""
        if all(level_of(f) == ANONYMOUS for f in functions if f.trigger_type == HTTP_TRIGGER):
            return None
        source = os.environ if settings is None else settings
        generated: list[str] = []
        function_key = _key(source, FUNCTION_KEY_SETTING, generated)
        master_key = _key(source, MASTER_KEY_SETTING, generated)
        return cls(function_key, master_key, tuple(generated))

    def admits(
        self, function: FunctionInfo, headers: Iterable[tuple[str, str]], query: Iterable[tuple[str, str]]
    ) -> bool:
        """Whether a request with these headers and query parameters (name, value pairs in request order) may
        call `function`."""
        level = level_of(function)
        if level == ANONYMOUS:
            return True
        presented = _first(headers, KEY_HEADER)
        if presented is None:
            presented = _first(query, KEY_QUERY)
        if not presented:
            return False
        accepted = [self.master_key] if level == ADMIN else [self.function_key, self.master_key]
        matches = [hmac.compare_digest(presented.encode("utf-8"), key.encode("utf-8")) for key in accepted]
        return any(matches)  # every key compared: the time taken says nothing of which one matched


def _first(pairs: Iterable[tuple[str, str]], name: str) -> str | None:
    return next((value for key, value in pairs if key.lower() == name), None)
