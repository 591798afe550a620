"""Schedule monitoring of timer triggers (`use_monitor`), the way the Functions host's timer extension does it.

Contract (Microsoft.Azure.WebJobs.Extensions.Timers: ScheduleMonitor, StorageScheduleMonitor, TimerListener):
- A monitored timer's status, `{"Last", "Next", "LastUpdated"}` (ISO instants), lives in the blob
  `timers/{host id}/{function name}/status` of the container `azure-webjobs-hosts` in AzureWebJobsStorage.
- `past_due(name, schedule, now)` is the host's start-up check: with no status yet, it writes one (Next: the
  schedule's next occurrence) and nothing is past due; when the recorded Next is not what the schedule gives
  after Last (the schedule changed) it is recomputed, from now when that lies in the past; then, when now is
  after the recorded Next, an occurrence was missed while no host ran: the recorded status is returned and
  the timer fires at once, past due (TimerRequest.past_due), before its regular schedule.
- `update(name, status)` after every invocation: Last = when it ran (the scheduled instant when it fired a
  little early), Next = the occurrence after that. So an invocation the host died in was not recorded, and
  the next start runs it again, past due.
- Monitoring is on unless the function says use_monitor=False, and off for schedules firing more than once a
  minute (`monitored`), as the host decides.
- Storage errors are logged and the timer keeps its schedule (the host treats status writes as best effort).
Host id: the setting AzureFunctionsWebHost__hostid, else, like the host's default off App Service, the machine
name (letters and digits, lower case) and a stable hash of the app folder, at most 32 characters.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from azure.core.exceptions import AzureError, ResourceExistsError, ResourceNotFoundError
from azure.storage.blob import BlobServiceClient, LinearRetry

log = logging.getLogger(__name__)
CONTAINER = "azure-webjobs-hosts"
HOST_ID_SETTING = "AzureFunctionsWebHost__hostid"
NEVER = datetime.min.replace(tzinfo=UTC)


@dataclass
class ScheduleStatus:
    last: datetime
    next: datetime
    last_updated: datetime

    def as_request_status(self) -> dict[str, str]:
        """The TimerRequest's schedule_status, as the worker hands it over."""
        return {
            "Last": self.last.isoformat(),
            "Next": self.next.isoformat(),
            "LastUpdated": self.last_updated.isoformat(),
        }


NextAfter = Callable[[datetime], datetime]


def monitored(use_monitor: bool | None, expression: str, next_after: NextAfter, now: datetime) -> bool:
    """The host's rule: on unless switched off, and off for a schedule `X * * * * *` that fires more than once
    in the coming minute."""
    if use_monitor is False:
        return False
    fields = expression.split()
    if len(fields) != 6 or any(field != "*" for field in fields[1:]):
        return True
    return next_after(next_after(now)) > now + timedelta(minutes=1)


def host_id(app_dir: Path) -> str:
    configured = os.environ.get(HOST_ID_SETTING, "").strip()
    if configured:
        return configured.lower()[:32]
    machine = "".join(ch for ch in socket.gethostname() if ch.isalnum()).lower()
    return f"{machine}-{zlib.crc32(str(app_dir.resolve()).encode())}"[:32]


class ScheduleMonitor:
    def __init__(self, connection_string: str, host: str) -> None:
        # Few, quick retries: the status is best effort and must not hold the host's start.
        self._container = BlobServiceClient.from_connection_string(
            connection_string,
            connection_timeout=5,
            read_timeout=10,
            retry_policy=LinearRetry(backoff=0.5, random_jitter_range=0.25, retry_total=2),  # type: ignore[arg-type]
        ).get_container_client(CONTAINER)
        self._path = f"timers/{host}"

    def _blob(self, name: str) -> str:
        return f"{self._path}/{name}/status"

    def status(self, name: str) -> ScheduleStatus | None:
        try:
            data = json.loads(self._container.download_blob(self._blob(name)).readall())
            return ScheduleStatus(
                _instant(data.get("Last")), _instant(data.get("Next")), _instant(data.get("LastUpdated"))
            )
        except ResourceNotFoundError:
            return None
        except (AzureError, ValueError, TypeError, AttributeError) as error:
            log.warning("Timer '%s': could not read its schedule status: %s", name, error)
            return None

    def update(self, name: str, status: ScheduleStatus) -> None:
        text = json.dumps(
            {
                "Last": status.last.isoformat(),
                "Next": status.next.isoformat(),
                "LastUpdated": status.last_updated.isoformat(),
            }
        )
        try:
            try:
                self._container.upload_blob(self._blob(name), text, overwrite=True)
            except ResourceNotFoundError:  # the container is made on first use, as the host does
                with contextlib.suppress(ResourceExistsError):
                    self._container.create_container()
                self._container.upload_blob(self._blob(name), text, overwrite=True)
        except AzureError as error:
            log.error("Timer '%s' failed to update the timer trigger status: %s", name, error)

    def past_due(self, name: str, next_after: NextAfter, now: datetime) -> ScheduleStatus | None:
        """The start-up check (module contract): the recorded status when an occurrence was missed, else None."""
        status = self.status(name)
        if status is None:
            self.update(name, ScheduleStatus(NEVER, next_after(now), now))
            return None
        if status.last != NEVER:
            expected, since = next_after(status.last), status.last
        elif status.last_updated != NEVER:
            expected, since = next_after(status.last_updated), status.last_updated
        else:
            expected, since = next_after(now), now
        if status.next != expected:  # the schedule changed since the status was written
            if now > expected:
                expected, since = next_after(now), now
            status = ScheduleStatus(NEVER, expected, since)
            self.update(name, status)
        return status if now > status.next else None


def _instant(value: object) -> datetime:
    if not isinstance(value, str):
        return NEVER
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
