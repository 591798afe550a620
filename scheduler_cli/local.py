"""`scheduler local`: the local host's development storage (Azurite), for trying Storage-queue jobs offline.

Contract:
- `queue-sas QUEUE` creates QUEUE in the local Azurite when it is missing and prints one line on stdout: a queue
  SAS granting add (`a`), signed with the development account's well-known key, valid for `--days` (default 7),
  ready for a StorageQueue action's `sasToken` with `storageAccount` `devstoreaccount1`. `-o json` adds the
  account, queue, endpoint, permissions and expiry.
- `queue-peek QUEUE` shows the messages waiting in QUEUE without taking them, Base64-decoded as a StorageQueue
  action posts them.
Only the development account: its key is public (every Azure SDK knows it), so nothing else can be signed here;
a real account's SAS comes from the portal or `az storage queue generate-sas`. Azurite is found where
`make run` starts it: queue port 10001, or the queue port of DEVHOST_AZURITE_PORTS=blob,queue,table (the local
host's setting), or `--queue-endpoint`. Nothing is sent anywhere but that endpoint.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import typer

from shared.settings.storage import DEVELOPMENT_ACCOUNT_KEY, DEVELOPMENT_ACCOUNT_NAME

from .client import API_ERROR, UNREACHABLE, USAGE_ERROR, CliError
from .context import guarded, options
from .output import emit_json

app = typer.Typer(
    no_args_is_help=True,
    help="The local host's storage (Azurite): a working SAS for a queue, and what a queue holds.",
)
PORTS_SETTING = "DEVHOST_AZURITE_PORTS"
_QUEUE_NAME = re.compile(r"(?=.{3,63}$)[a-z0-9]+(-[a-z0-9]+)*")


def name(value: str) -> str:
    """A queue name as storage takes it, checked before anything is sent (help shows the type as `<name>`)."""
    if not _QUEUE_NAME.fullmatch(value):
        raise typer.BadParameter(
            f"{value!r} is not a queue name: 3-63 lowercase letters, digits and single hyphens, "
            "starting and ending with a letter or digit"
        )
    return value


Queue = typer.Argument(..., metavar="QUEUE", parser=name, help="Queue name, e.g. orders.")
Endpoint = typer.Option(
    None,
    "--queue-endpoint",
    metavar="URL",
    help=f"The local Azurite's queue service (default: port 10001, or {PORTS_SETTING}'s second port).",
)


def _endpoint(given: str | None) -> str:
    if given:
        return given.rstrip("/")
    configured = os.environ.get(PORTS_SETTING, "").strip()
    parts = configured.split(",") if configured else ["", "10001", ""]
    if len(parts) != 3 or not parts[1].strip().isdigit():
        raise CliError("InvalidSetting", f"{PORTS_SETTING}={configured!r} must be blob,queue,table", USAGE_ERROR)
    return f"http://127.0.0.1:{int(parts[1])}/{DEVELOPMENT_ACCOUNT_NAME}"


def _storage_call(endpoint: str, queue: str, call: Any) -> Any:
    """Run `call(client)` on a client signed with the development key; storage's refusals and an absent Azurite
    become one-line errors. The SDK is imported here: the rest of the CLI runs without it."""
    try:
        from azure.core.exceptions import HttpResponseError, ServiceRequestError
        from azure.storage.queue import QueueClient
    except ImportError:
        raise CliError(
            "MissingPackage",
            "`scheduler local` needs azure-storage-queue: pip install -r requirements.txt",
            USAGE_ERROR,
        ) from None
    key = {"account_name": DEVELOPMENT_ACCOUNT_NAME, "account_key": DEVELOPMENT_ACCOUNT_KEY}
    client = QueueClient(endpoint, queue, credential=key, retry_total=0)
    try:
        with client:
            return call(client)
    except ServiceRequestError:
        raise CliError(
            "Unreachable",
            f"no Azurite answers at {endpoint}: is `make run` running? (Azurite moved with {PORTS_SETTING}: set "
            "the same here, or pass --queue-endpoint)",
            UNREACHABLE,
        ) from None
    except HttpResponseError as error:
        error_code = getattr(error, "error_code", None)  # set by the storage SDK's error mapping
        code = str(getattr(error_code, "value", error_code) or error.reason)
        first = str(error.message or "").splitlines()[0] if error.message else ""
        raise CliError(
            code, f"queue '{queue}': {first}", USAGE_ERROR if error.status_code == 400 else API_ERROR
        ) from None


@app.command("queue-sas", epilog="Example: scheduler local queue-sas orders   (in a script: SAS=$(scheduler ...))")
@guarded
def queue_sas(
    ctx: typer.Context,
    queue: str = Queue,
    days: int = typer.Option(7, "--days", metavar="N", min=1, max=365, help="How long the SAS is valid."),
    endpoint: str = Endpoint,
) -> None:
    """Create QUEUE in the local Azurite if missing, and print a SAS that lets a StorageQueue action add to it."""
    url = _endpoint(endpoint)

    def create(client: Any) -> bool:
        from azure.core.exceptions import ResourceExistsError

        try:
            client.create_queue()
        except ResourceExistsError:
            return False
        return True

    created = _storage_call(url, queue, create)  # imports the SDK, or says it is missing
    from azure.storage.queue import QueueSasPermissions, generate_queue_sas

    expiry = (datetime.now(UTC) + timedelta(days=days)).replace(microsecond=0)
    sas = generate_queue_sas(
        DEVELOPMENT_ACCOUNT_NAME,
        queue,
        DEVELOPMENT_ACCOUNT_KEY,
        permission=QueueSasPermissions(add=True),
        expiry=expiry,
    )
    if options(ctx).json:
        emit_json(
            {
                "storageAccount": DEVELOPMENT_ACCOUNT_NAME,
                "queueName": queue,
                "queueEndpoint": url,
                "created": created,
                "permissions": "a",
                "expiry": expiry.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "sasToken": sas,
            }
        )
        return
    typer.echo(sas)
    state = "created" if created else "exists"
    typer.echo(
        f"queue '{queue}' {state} at {url}; the SAS grants add ('a') until {expiry:%Y-%m-%dT%H:%M:%SZ}",
        err=True,
    )


def _decoded(content: str) -> str:
    try:
        return base64.b64decode(content, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return content  # not posted by a StorageQueue action: shown as stored


@app.command("queue-peek", epilog="Example: scheduler local queue-peek orders")
@guarded
def queue_peek(ctx: typer.Context, queue: str = Queue, endpoint: str = Endpoint) -> None:
    """The messages waiting in QUEUE (up to 32, left in place), decoded."""
    url = _endpoint(endpoint)
    messages = _storage_call(url, queue, lambda client: client.peek_messages(max_messages=32))
    rows = [(m.inserted_on.strftime("%Y-%m-%dT%H:%M:%SZ"), _decoded(m.content)) for m in messages]
    if options(ctx).json:
        emit_json([{"insertedOn": when, "content": content} for when, content in rows])
        return
    # Plain lines, not a table: an envelope is one long XML line that a table would fold mid-element.
    typer.echo(f"Queue {queue}: {len(rows)} message(s)" + ("" if len(rows) < 32 else " (the first 32)"))
    for when, content in rows:
        typer.echo(f"{when}  {content}")
