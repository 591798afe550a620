"""App settings the way `func start` provides them: local.settings.json values under the process environment.

Contracts:
- `read_local_settings(app_dir)` returns the `Values` (as strings) and `Host.LocalHttpPort` of
  `<app_dir>/local.settings.json`, first creating that file from `local.settings.sample.json` when only the
  sample exists (pass create=False to read the sample instead, without touching the folder).
- `apply_settings(values)` puts values into the environment without overriding variables already set:
  the environment wins, as with Core Tools.
- `resolve_references(text)` expands `%Name%` app-setting references in binding properties (queue names,
  schedules), as the host does.
- `storage_connection(name)` turns a binding's `connection` property into a connection string.
- `whole_setting(name, most, default, fallback, env)`: a count setting from 1 to `most`; unset, `default`; anything
  else one warning naming `fallback` (what happens instead), and `default`.
- `function_disabled(name)`: the app setting `AzureWebJobs.<name>.Disabled` is true (names in any case), which
  makes the host leave that function's trigger alone, as the Functions host does.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

SETTINGS_FILE = "local.settings.json"
SAMPLE_FILE = "local.settings.sample.json"
DEFAULT_CONNECTION = "AzureWebJobsStorage"
DEVELOPMENT_STORAGE = "UseDevelopmentStorage=true"

_REFERENCE = re.compile(r"%([^%]+)%")


class SettingsError(RuntimeError):
    """An app setting the app relies on is missing or malformed."""


@dataclass(frozen=True)
class LocalSettings:
    values: dict[str, str] = field(default_factory=dict)
    local_http_port: int | None = None


def read_local_settings(app_dir: Path, create: bool = True) -> LocalSettings:
    path = app_dir / SETTINGS_FILE
    sample = app_dir / SAMPLE_FILE
    if not path.exists() and sample.exists():
        if not create:
            path = sample
        else:
            shutil.copyfile(sample, path)
    if not path.exists():
        return LocalSettings()
    data = json.loads(path.read_text(encoding="utf-8-sig"))
    if not isinstance(data, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    raw_values = data.get("Values") or {}
    # Core Tools hands every value to the host as a string; JSON true/1 become "True"/"1"-like text.
    values = {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in raw_values.items()}
    port = (data.get("Host") or {}).get("LocalHttpPort")
    return LocalSettings(values=values, local_http_port=int(port) if port else None)


def apply_settings(values: Mapping[str, str], environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Set each value not already present in `environ` (default os.environ); returns the names set."""
    target = os.environ if environ is None else environ
    applied = []
    for name, value in values.items():
        if name not in target:
            target[name] = value
            applied.append(name)
    return applied


def whole_setting(name: str, most: int, default: int, fallback: str, env: Mapping[str, str] | None = None) -> int:
    value = (os.environ if env is None else env).get(name, "").strip()
    if not value:
        return default
    if value.isdigit() and 1 <= int(value) <= most:
        return int(value)
    logging.getLogger(__name__).warning("%s=%r is not a number from 1 to %d; %s", name, value, most, fallback)
    return default


def function_disabled(name: str, environ: Mapping[str, str] | None = None) -> bool:
    source = os.environ if environ is None else environ
    wanted = f"azurewebjobs.{name}.disabled".lower()
    return any(key.lower() == wanted and value.strip().lower() in ("true", "1") for key, value in source.items())


def resolve_references(text: str, environ: Mapping[str, str] | None = None) -> str:
    """Expand `%Name%` from app settings; a missing setting is an error, as at host startup."""
    source = os.environ if environ is None else environ

    def expand(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in source:
            raise SettingsError(f"'%{name}%' in {text!r} refers to app setting {name!r}, which is not set")
        return source[name]

    return _REFERENCE.sub(expand, text)


def storage_connection(name: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The connection string a binding's `connection` names.

    Like the WebJobs SDK, "X" is looked up as the setting "AzureWebJobsX" first, then "X"; empty means
    AzureWebJobsStorage. Identity-based connections (X__queueServiceUri) are not supported locally.
    """
    source = os.environ if environ is None else environ
    connection = name or DEFAULT_CONNECTION
    for candidate in (f"AzureWebJobs{connection}", connection):
        value = source.get(candidate)
        if value:
            return value
    raise SettingsError(
        f"storage connection {connection!r} is not configured: set the app setting {connection!r} "
        f"(environment or local.settings.json Values) to a connection string"
    )
