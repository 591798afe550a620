"""StorageQueue actions: post the old service's XML envelope to a queue, authenticated by the job's SAS token.

The envelope is what consumers of the old service parse (docs/decisions.md): `<StorageQueueMessage>` with
`ExecutionTag`, `ClientRequestId`, `ExpectedExecutionTime`, `SchedulerJobId`, `SchedulerJobCollectionId`,
`Region` and `Message`, serialised as .NET's XmlSerializer wrote it (a UTF-16 declaration and the
xsd/xsi namespace declarations), and Base64-encoded as the classic storage SDK (and the Functions
queue trigger's default `messageEncoding`) expects.

Endpoint: `https://{account}.queue.core.windows.net`; SCHEDULER_QUEUE_ENDPOINT (a template with
`{account}`) overrides it; the development account `devstoreaccount1` goes to the queue endpoint of
our own storage connection string (Azurite), as every Azure SDK does for development storage.
Targets are Azure (or operator-configured) endpoints, so the private-target policy does not apply.
The send is a coroutine (the SDK's aio client on aiohttp): an attempt waiting for its account holds no thread.
A 403 from storage says what to check (the SAS's account, queue, add permission, expiry, and that the queue
exists) and what it can tell from the SAS's own fields without the signature; for the development account it
names `scheduler local queue-sas`, which makes a working one.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

from azure.core.exceptions import AzureError, HttpResponseError
from azure.storage.queue import TextBase64EncodePolicy
from azure.storage.queue.aio import QueueClient

from ..model import JobErrorAction, format_utc
from ..settings import Settings
from ..settings.storage import parse_connection_string
from .accepted import retry_after
from .base import PUSHBACK_STATUSES, ActionResult, ExecutionContext, PushBack

DEFAULT_ENDPOINT = "https://{account}.queue.core.windows.net"
DEVELOPMENT_ACCOUNT = "devstoreaccount1"
TIMEOUT_SECONDS = 60
# Storage account names: 3-24 lowercase letters and digits. Anything else could steer the host name.
_ACCOUNT = re.compile(r"^[a-z0-9]{3,24}$")
_NAMESPACES = 'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'


def envelope(context: ExecutionContext, message: str) -> str:
    """The XML the old service posted; element order and declaration as its XmlSerializer wrote them."""
    fields = (
        ("ExecutionTag", context.execution_id),
        ("ClientRequestId", context.client_request_id),
        ("ExpectedExecutionTime", format_utc(context.expected_execution_time)),
        ("SchedulerJobId", context.job.job),
        ("SchedulerJobCollectionId", context.job.collection),
        ("Region", context.region),
        ("Message", message),
    )
    body = "".join(f"<{name}>{escape(value)}</{name}>" for name, value in fields)
    return f'<?xml version="1.0" encoding="utf-16"?><StorageQueueMessage {_NAMESPACES}>{body}</StorageQueueMessage>'


def queue_endpoint(settings: Settings, account: str) -> str:
    """The account's queue service URL under this deployment's settings."""
    if account == DEVELOPMENT_ACCOUNT and settings.storage.connection_string:
        own = parse_connection_string(settings.storage.connection_string)
        if own.get("AccountName") == DEVELOPMENT_ACCOUNT and own.get("QueueEndpoint"):
            return own["QueueEndpoint"].rstrip("/")
    template = settings.queue_endpoint_template or DEFAULT_ENDPOINT
    return template.replace("{account}", account).rstrip("/")


def _sas_findings(sas: str) -> list[str]:
    """What the SAS's own fields show wrong; never its signature or other values (the token is a secret)."""
    fields = {k: v[0] for k, v in parse_qs(sas, keep_blank_values=True).items()}
    findings = []
    if not fields.get("sig"):
        findings.append("has no signature (sig), so it is no SAS")
    if "a" not in fields.get("sp", "a"):
        findings.append("does not grant add ('a')")
    try:
        if datetime.fromisoformat(fields["se"].replace("Z", "+00:00")) <= datetime.now(UTC):
            findings.append("has expired")
    except (KeyError, ValueError):
        pass
    if "q" not in fields.get("ss", "q"):
        findings.append("is an account SAS without the queue service (ss)")
    if "o" not in fields.get("srt", "o"):
        findings.append("is an account SAS without object resources (srt)")
    return findings


def forbidden_hint(account: str, name: str, sas: str) -> str:
    """What to do after a 403, most specific first (history tables cut long messages): what this SAS shows, the
    local way to a working one, then what storage requires."""
    findings = _sas_findings(sas)
    hint = f"This sasToken {' and '.join(findings)}. " if findings else ""
    if account == DEVELOPMENT_ACCOUNT:
        hint += f"Locally, `scheduler local queue-sas {name}` prints a working SAS (and creates the queue). "
    return hint + (
        "Check that the queue exists and that the sasToken is a SAS of this account for this queue (or an account "
        "SAS for queue objects) with add ('a'), not expired."
    )


class StorageQueueTarget:
    def __init__(self, settings: Settings, timeout: float = TIMEOUT_SECONDS) -> None:
        self.settings = settings
        self.timeout = timeout

    def run(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        """`run_async` in an event loop of its own (tools, tests)."""
        return asyncio.run(self.run_async(action, context))

    async def run_async(self, action: JobErrorAction, context: ExecutionContext) -> ActionResult:
        queue = action.queue_message
        assert queue is not None, "validation guarantees a StorageQueue action has a queueMessage"
        account, name = queue.storage_account, queue.queue_name
        where = f"queue '{name}' of storage account '{account}'"
        if not _ACCOUNT.match(account):
            return ActionResult(False, f"StorageQueue Action - '{account}' is not a valid storage account name")
        sas = (queue.sas_token or "").lstrip("?")
        if not sas:  # queues have no anonymous access: without a SAS the attempt cannot succeed
            return ActionResult(False, f"StorageQueue Action - No sasToken to send to {where}")
        client = QueueClient(
            queue_endpoint(self.settings, account),
            name,
            credential=sas,
            message_encode_policy=TextBase64EncodePolicy(),
            retry_total=0,
            connection_timeout=self.timeout,
            read_timeout=self.timeout,
        )
        try:
            async with client:
                await client.send_message(envelope(context, queue.message or ""))
        except HttpResponseError as exc:
            error_code = getattr(exc, "error_code", None)  # set by the storage SDK's error mapping
            code = getattr(error_code, "value", error_code) or exc.reason or ""
            failed = f"StorageQueue Action - Sending to {where} failed: {exc.status_code} {code}"
            if exc.status_code == 403:
                failed += f". {forbidden_hint(account, name, sas)}"
            if exc.status_code in PUSHBACK_STATUSES:  # ServerBusy (503): the account's limits, not a failure yet
                pushback = PushBack(exc.status_code, _retry_after(exc))
                return ActionResult(False, failed, pushback=pushback)
            return ActionResult(False, failed, unreachable=exc.status_code is not None and exc.status_code >= 500)
        except AzureError as exc:
            failed = f"StorageQueue Action - Sending to {where} failed: {type(exc).__name__}"
            return ActionResult(False, failed, unreachable=True)  # no answer: a timeout or a connection that failed
        return ActionResult(True, f"StorageQueue Action - The message was successfully sent to {where}")


def _retry_after(exc: HttpResponseError) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or {}
    return retry_after(headers.get("Retry-After"))
