"""How the app reaches its storage accounts: the primary (`AzureWebJobsStorage`) and the data accounts beyond it
(`SCHEDULER_STORAGE_ACCOUNTS`, docs/capacity.md).

Storage is reached either through a connection string (Azurite, or a key-based account) or, in the cloud, through
a managed identity and the service URIs the Functions host itself uses (`AzureWebJobsStorage__tableServiceUri`
...), so a deployment keeps no keys in its settings. A StorageSettings never shows its connection string (repr),
and no error about one echoes it. `UseDevelopmentStorage=true` means Azurite on its default ports, as it does to
every Azure SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .reading import ConfigurationError

STORAGE_SETTING = "AzureWebJobsStorage"
# More storage accounts for collections, jobs and their due index, history and claims (docs/capacity.md).
ACCOUNTS_SETTING = "SCHEDULER_STORAGE_ACCOUNTS"
MAX_ACCOUNTS = 32

# The well-known development account every Azure SDK accepts against Azurite; not a secret (the one copy:
# devhost/azurite.py starts Azurite with it).
DEVELOPMENT_ACCOUNT_NAME = "devstoreaccount1"
DEVELOPMENT_ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# What "UseDevelopmentStorage=true" means to every Azure SDK: Azurite on its default ports.
DEVELOPMENT_STORAGE = (
    f"DefaultEndpointsProtocol=http;AccountName={DEVELOPMENT_ACCOUNT_NAME};AccountKey={DEVELOPMENT_ACCOUNT_KEY};"
    f"BlobEndpoint=http://127.0.0.1:10000/{DEVELOPMENT_ACCOUNT_NAME};"
    f"QueueEndpoint=http://127.0.0.1:10001/{DEVELOPMENT_ACCOUNT_NAME};"
    f"TableEndpoint=http://127.0.0.1:10002/{DEVELOPMENT_ACCOUNT_NAME};"
)


def parse_connection_string(text: str) -> dict[str, str]:
    """`Key=Value;...` into a dict with case-preserved keys; values may contain '='."""
    parts: dict[str, str] = {}
    for item in text.split(";"):
        if "=" in item:
            key, _, value = item.partition("=")
            parts[key.strip()] = value.strip()
    return parts


@dataclass(frozen=True)
class StorageSettings:
    """How to reach the account that holds our tables and queues.

    Exactly one mode applies: `connection_string` set (key-based, Azurite), or identity-based with
    `table_service_uri` and `queue_service_uri` (credential `managedidentity` with an optional
    user-assigned `client_id`, else the default Azure credential chain).
    """

    connection_string: str | None = field(default=None, repr=False)  # holds the account key
    table_service_uri: str | None = None
    queue_service_uri: str | None = None
    credential: str | None = None
    client_id: str | None = None

    @property
    def uses_identity(self) -> bool:
        return self.connection_string is None

    @property
    def account_name(self) -> str | None:
        if self.connection_string:
            return parse_connection_string(self.connection_string).get("AccountName")
        if self.queue_service_uri:
            host = self.queue_service_uri.split("//", 1)[-1].split("/", 1)[0]
            return host.split(".", 1)[0]
        return None

    @property
    def table_endpoint(self) -> str:
        """The table service's URL, lower-cased without a trailing slash: what tells two accounts apart (two
        Azurites share an account name, never an endpoint)."""
        if self.connection_string:
            parts = {k.lower(): v for k, v in parse_connection_string(self.connection_string).items()}
            endpoint = parts.get("tableendpoint") or (
                f"{parts.get('defaultendpointsprotocol', 'https')}://{parts.get('accountname', '')}.table."
                f"{parts.get('endpointsuffix', 'core.windows.net')}"
            )
        else:
            endpoint = self.table_service_uri or ""
        return endpoint.strip().rstrip("/").lower()

    @classmethod
    def from_environment(cls, env: Mapping[str, str], name: str = STORAGE_SETTING) -> StorageSettings:
        value = (env.get(name) or "").strip()
        if value:
            if value.lower().replace(" ", "") == "usedevelopmentstorage=true":
                value = DEVELOPMENT_STORAGE
            if "=" not in value:
                raise ConfigurationError(f"{name} must be a storage connection string")
            return cls(connection_string=value)
        prefix = f"{name}__"
        nested = {key[len(prefix) :].lower(): val.strip() for key, val in env.items() if key.startswith(prefix) and val}
        account = nested.get("accountname")
        table = nested.get("tableserviceuri") or (account and f"https://{account}.table.core.windows.net")
        queue = nested.get("queueserviceuri") or (account and f"https://{account}.queue.core.windows.net")
        if not table or not queue:
            raise ConfigurationError(
                f"Set {name} to a connection string, or {prefix}tableServiceUri and {prefix}queueServiceUri "
                f"(or {prefix}accountName) for identity-based access"
            )
        return cls(
            table_service_uri=table,
            queue_service_uri=queue,
            credential=nested.get("credential"),
            client_id=nested.get("clientid"),
        )


def data_accounts(env: Mapping[str, str], primary: StorageSettings) -> tuple[StorageSettings, ...]:
    """The accounts of `SCHEDULER_STORAGE_ACCOUNTS` beyond the primary, in the order listed (the order is part
    of where data lives: an account is only ever appended). Items are comma-separated, each a connection string,
    an account name or a table service URL; the last two are reached with the primary's identity
    (`AzureWebJobsStorage__credential` and `__clientId`), as the primary itself is."""
    items = [item.strip() for item in (env.get(ACCOUNTS_SETTING) or "").split(",") if item.strip()]
    accounts: list[StorageSettings] = []
    for item in items:
        if "=" in item:
            value = DEVELOPMENT_STORAGE if item.lower().replace(" ", "") == "usedevelopmentstorage=true" else item
            account = StorageSettings(connection_string=value)
        elif item.lower().startswith(("https://", "http://")):
            account = StorageSettings(
                table_service_uri=item, credential=primary.credential, client_id=primary.client_id
            )
        elif item.isalnum() and item.islower() and 3 <= len(item) <= 24:
            account = StorageSettings(
                table_service_uri=f"https://{item}.table.core.windows.net",
                credential=primary.credential,
                client_id=primary.client_id,
            )
        else:
            # The item may be a malformed connection string: never echo it (it may hold a key).
            raise ConfigurationError(
                f"{ACCOUNTS_SETTING}: item {len(accounts) + 1} is neither a connection string, a storage account "
                "name nor a table service URL"
            )
        accounts.append(account)
    endpoints = [a.table_endpoint for a in (primary, *accounts)]
    if len(set(endpoints)) != len(endpoints):
        raise ConfigurationError(f"{ACCOUNTS_SETTING} lists an account twice, or the primary ({STORAGE_SETTING})")
    if len(accounts) + 1 > MAX_ACCOUNTS:
        raise ConfigurationError(f"{ACCOUNTS_SETTING} lists more than {MAX_ACCOUNTS - 1} accounts")
    return tuple(accounts)
