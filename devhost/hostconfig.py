"""The parts of host.json the local host honours: the HTTP route prefix and the queue options.

Contract: `HostConfig.load(app_dir)` reads `<app_dir>/host.json` (absent file = all defaults) and returns
validated values with the same defaults as the Functions host (extension bundle v4, queues extension v5).
Keys are matched case-insensitively, as .NET configuration does. Durations accept .NET TimeSpan text
("00:00:02", "1.02:03:04.5").
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_TIMESPAN = re.compile(r"^(?:(?P<days>\d+)\.)?(?P<h>\d+):(?P<m>\d+)(?::(?P<s>\d+(?:\.\d+)?))?$")


def parse_timespan(value: str | int | float) -> float:
    """Seconds in a .NET TimeSpan string ("hh:mm[:ss[.fff]]", optional "d." prefix, or bare "d" days).

    Raises ValueError for anything else, including numbers: a bare number is days to .NET, and guessing
    that someone meant milliseconds would hide a configuration mistake.
    """
    if isinstance(value, bool) or not isinstance(value, str):
        raise ValueError(f"expected a TimeSpan string like '00:00:02', got {value!r}")
    text = value.strip()
    if text.isdigit():
        return int(text) * 86400.0
    match = _TIMESPAN.match(text)
    if match is None:
        raise ValueError(f"not a TimeSpan: {value!r}")
    days = int(match["days"] or 0)
    return days * 86400.0 + int(match["h"]) * 3600.0 + int(match["m"]) * 60.0 + float(match["s"] or 0)


def _lookup(section: Mapping[str, Any] | None, *path: str) -> Any:
    """Walk nested mappings by case-insensitive keys; None when any step is missing."""
    current: Any = section
    for key in path:
        if not isinstance(current, Mapping):
            return None
        current = next((v for k, v in current.items() if k.lower() == key.lower()), None)
    return current


@dataclass(frozen=True)
class QueueOptions:
    """`extensions.queues` of host.json; defaults are the Functions host's."""

    batch_size: int = 16
    new_batch_threshold: int = 8
    max_polling_interval: float = 60.0
    max_dequeue_count: int = 5
    visibility_timeout: float = 0.0
    message_encoding: str = "base64"

    @classmethod
    def from_section(cls, section: Mapping[str, Any] | None) -> QueueOptions:
        def get(key: str, default: Any) -> Any:
            value = _lookup(section, key)
            return default if value is None else value

        batch_size = int(get("batchSize", cls.batch_size))
        if not 1 <= batch_size <= 32:
            raise ValueError(f"host.json extensions.queues.batchSize must be 1..32, got {batch_size}")
        threshold = int(get("newBatchThreshold", batch_size // 2))
        if threshold < 0:
            raise ValueError(f"host.json extensions.queues.newBatchThreshold must be >= 0, got {threshold}")
        polling = parse_timespan(get("maxPollingInterval", "00:01:00"))
        if polling < 0.1:
            raise ValueError("host.json extensions.queues.maxPollingInterval must be at least 00:00:00.1")
        dequeue = int(get("maxDequeueCount", cls.max_dequeue_count))
        if dequeue < 1:
            raise ValueError(f"host.json extensions.queues.maxDequeueCount must be >= 1, got {dequeue}")
        visibility = parse_timespan(get("visibilityTimeout", "00:00:00"))
        encoding = str(get("messageEncoding", cls.message_encoding)).lower()
        if encoding not in ("base64", "none"):
            raise ValueError(f"host.json extensions.queues.messageEncoding must be base64 or none, got {encoding!r}")
        return cls(batch_size, threshold, polling, dequeue, visibility, encoding)


@dataclass(frozen=True)
class HostConfig:
    """What the local host reads from host.json."""

    route_prefix: str = "api"
    queues: QueueOptions = field(default_factory=QueueOptions)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HostConfig:
        prefix = _lookup(data, "extensions", "http", "routePrefix")
        return cls(
            route_prefix=cls.route_prefix if prefix is None else str(prefix).strip("/"),
            queues=QueueOptions.from_section(_lookup(data, "extensions", "queues")),
        )

    @classmethod
    def load(cls, app_dir: Path) -> HostConfig:
        path = app_dir / "host.json"
        if not path.exists():
            return cls()
        # utf-8-sig: host.json files saved by Windows editors often carry a BOM, which the host accepts.
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8-sig")))
