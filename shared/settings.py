"""App settings, read once from the environment (Functions app settings or local.settings.json Values).

Storage is reached either through a connection string (Azurite, or a key-based account) or, in the
cloud, through a managed identity and the service URIs the Functions host itself uses
(`AzureWebJobsStorage__tableServiceUri` ...), so a deployment keeps no keys in its settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from .private_targets import PrivateTargets
from .timings import Timings

STORAGE_SETTING = "AzureWebJobsStorage"
# More storage accounts for collections, jobs and their due index, history and claims (docs/capacity.md).
ACCOUNTS_SETTING = "SCHEDULER_STORAGE_ACCOUNTS"
MAX_ACCOUNTS = 32
OCCURRENCE_QUEUE = "scheduler-occurrences"
DISPATCH_QUEUE = "scheduler-dispatch"
# Due-index shards: a minute's due entries spread over this many partitions, each dispatched by its own
# task (docs/capacity.md sizes it: 8 carries what one storage account can execute).
DEFAULT_DUE_SHARDS = 8
MAX_DUE_SHARDS = 99
# The minute ahead's dispatch tasks turn visible shard by shard over this many seconds (shared/dispatcher.py).
DEFAULT_DISPATCH_SPREAD = 30
MAX_DISPATCH_SPREAD = 30
# Actions one process runs at once, in all and per target host (shared/actions/limits.py says why).
DEFAULT_ACTIONS_IN_FLIGHT = 2000
DEFAULT_ACTIONS_PER_HOST = 1000
MAX_ACTION_SLOTS = 100_000

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


class ConfigurationError(RuntimeError):
    """A required app setting is missing or malformed; the message names the setting."""


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


AUTH_MODES = ("entra", "key", "none")
ENTRA_AUTHORITY = "https://login.microsoftonline.com"


def _list(value: str | None, lower: bool = False) -> tuple[str, ...]:
    items = (item.strip() for item in (value or "").split(","))
    return tuple(item.lower() if lower else item for item in items if item)


def host_checks_keys(env: Mapping[str, str] | None = None) -> bool:
    """Whether the Functions host must check its keys on the API routes: not in `entra` mode (the app checks
    tokens) nor in `none`. Any other value keeps the keys on (fail closed; the app then refuses the setting)."""
    env = os.environ if env is None else env
    return (env.get("SCHEDULER_AUTH") or "key").strip().lower() not in {"entra", "none"}


@dataclass(frozen=True)
class AuthSettings:
    """Who may call the API (shared/auth/): `SCHEDULER_AUTH` and the settings of its `entra` mode.

    `entra`: every request carries an Entra ID bearer token for `audiences` (the app's application id URI),
    signed with a key of the tenant's OIDC metadata at `metadata_url`, issued by one of `issuers`; roles
    come from role assignments, plus Owner over everything for the `owners` object ids.
    `key`: the Functions host checks its keys; the app trusts every request that reaches it.
    `none`: anonymous (local development).
    """

    mode: str = "none"
    tenant_id: str | None = None
    audiences: tuple[str, ...] = ()
    metadata_url: str | None = None
    issuers: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    clock_skew_seconds: int = 60

    @property
    def authorization_uri(self) -> str:
        """Where a client gets its token (sent in WWW-Authenticate, as ARM does)."""
        origin = "/".join((self.metadata_url or ENTRA_AUTHORITY).split("/", 3)[:3])
        return f"{origin}/{self.tenant_id}" if self.tenant_id else origin

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> AuthSettings:
        # Unset means `key`: what a deployment without the setting had (the host's Functions keys), never open.
        mode = (env.get("SCHEDULER_AUTH") or "key").strip().lower()
        if mode not in AUTH_MODES:
            raise ConfigurationError(f"SCHEDULER_AUTH must be one of {', '.join(AUTH_MODES)}")
        tenant = (env.get("SCHEDULER_AUTH_TENANT_ID") or "").strip() or None
        metadata = (env.get("SCHEDULER_AUTH_METADATA_URL") or "").strip() or (
            tenant and f"{ENTRA_AUTHORITY}/{tenant}/v2.0/.well-known/openid-configuration"
        )
        settings = cls(
            mode=mode,
            tenant_id=tenant,
            audiences=_list(env.get("SCHEDULER_AUTH_AUDIENCE")),
            metadata_url=metadata or None,
            issuers=_list(env.get("SCHEDULER_AUTH_ISSUERS")),
            owners=_list(env.get("SCHEDULER_AUTH_OWNER"), lower=True),
        )
        if mode == "entra" and not (settings.audiences and settings.metadata_url and (tenant or settings.issuers)):
            raise ConfigurationError(
                "SCHEDULER_AUTH=entra needs SCHEDULER_AUTH_AUDIENCE and SCHEDULER_AUTH_TENANT_ID "
                "(or SCHEDULER_AUTH_METADATA_URL and SCHEDULER_AUTH_ISSUERS)"
            )
        return settings


@dataclass(frozen=True)
class Settings:
    """Every app setting the scheduler reads; README.md has the table."""

    storage: StorageSettings
    region: str = "local"
    # SCHEDULER_PRIVATE_TARGETS: the internal addresses actions may call (shared/private_targets.py).
    private_targets: PrivateTargets = PrivateTargets()
    queue_endpoint_template: str | None = None
    service_bus_endpoint: str | None = None
    aad_authority_host: str = "https://login.microsoftonline.com"
    table_prefix: str = "scheduler"
    # Fixed in the cloud (function_app.py binds the queue trigger to it); tests isolate themselves with it.
    occurrence_queue: str = OCCURRENCE_QUEUE
    dispatch_queue: str = DISPATCH_QUEUE
    due_shards: int = DEFAULT_DUE_SHARDS
    # SCHEDULER_DISPATCH_SPREAD_SECONDS: the minute ahead's dispatch spread over this much of the minute before.
    dispatch_spread: timedelta = timedelta(seconds=DEFAULT_DISPATCH_SPREAD)
    # SCHEDULER_SECRET_KEYS: key materials for secrets at rest (shared/store/sealing.py). Never printed.
    secret_keys: str | None = field(default=None, repr=False)
    auth: AuthSettings = AuthSettings()
    # SCHEDULER_STORAGE_ACCOUNTS: accounts beyond `storage` that share the collections (shared/store/routing.py).
    data_accounts: tuple[StorageSettings, ...] = ()
    # SCHEDULER_ACTIONS_IN_FLIGHT / SCHEDULER_ACTIONS_PER_HOST: actions one process runs at once.
    actions_in_flight: int = DEFAULT_ACTIONS_IN_FLIGHT
    actions_per_host: int = DEFAULT_ACTIONS_PER_HOST
    # SCHEDULER_TRUSTED_CA_FILE: a PEM file of CAs trusted for HTTPS targets besides the public ones.
    trusted_ca_file: str | None = None
    # SCHEDULER_TIMING_<FIELD>_SECONDS: the pipeline's leases, watchdogs and windows (shared/timings.py).
    timings: Timings = Timings()
    # AzureWebJobs.dispatcher.Disabled: the Functions host's switch for the minute timer (app-wide, so no instance
    # ticks); health then spares no host its first tick (shared/health.py).
    dispatcher_disabled: bool = False

    @property
    def uses_development_storage(self) -> bool:
        return self.storage.account_name == DEVELOPMENT_ACCOUNT_NAME

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        prefix = env.get("SCHEDULER_TABLE_PREFIX", "scheduler")
        if not prefix.isalnum() or not prefix[:1].isalpha() or len(prefix) > 40:
            raise ConfigurationError("SCHEDULER_TABLE_PREFIX must be letters and digits, starting with a letter")
        storage = StorageSettings.from_environment(env)
        return cls(
            storage=storage,
            data_accounts=data_accounts(env, storage),
            region=env.get("REGION_NAME") or "local",
            private_targets=_private_targets(env),
            queue_endpoint_template=env.get("SCHEDULER_QUEUE_ENDPOINT") or None,
            service_bus_endpoint=env.get("SCHEDULER_SERVICEBUS_ENDPOINT") or None,
            aad_authority_host=env.get("SCHEDULER_AAD_AUTHORITY_HOST") or "https://login.microsoftonline.com",
            table_prefix=prefix,
            secret_keys=env.get("SCHEDULER_SECRET_KEYS") or None,
            due_shards=_shards(env.get("SCHEDULER_DUE_SHARDS")),
            dispatch_spread=_spread(env.get("SCHEDULER_DISPATCH_SPREAD_SECONDS")),
            auth=AuthSettings.from_environment(env),
            actions_in_flight=_slots(env, "SCHEDULER_ACTIONS_IN_FLIGHT", DEFAULT_ACTIONS_IN_FLIGHT),
            actions_per_host=_slots(env, "SCHEDULER_ACTIONS_PER_HOST", DEFAULT_ACTIONS_PER_HOST),
            trusted_ca_file=(env.get("SCHEDULER_TRUSTED_CA_FILE") or "").strip() or None,
            timings=_timings(env),
            dispatcher_disabled=(env.get("AzureWebJobs.dispatcher.Disabled") or "").strip().lower() in ("true", "1"),
        )


def _private_targets(env: Mapping[str, str]) -> PrivateTargets:
    try:
        return PrivateTargets.from_environment(env)
    except ValueError as exc:  # the message names the setting and the entry
        raise ConfigurationError(str(exc)) from exc


def _timings(env: Mapping[str, str]) -> Timings:
    try:
        return Timings.from_environment(env)
    except ValueError as exc:  # the message names the setting or the fields
        raise ConfigurationError(str(exc)) from exc


def _shards(value: str | None) -> int:
    if not (value or "").strip():
        return DEFAULT_DUE_SHARDS
    text = (value or "").strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_DUE_SHARDS:
        raise ConfigurationError(f"SCHEDULER_DUE_SHARDS must be a whole number from 1 to {MAX_DUE_SHARDS}")
    return int(text)


def _spread(value: str | None) -> timedelta:
    text = (value or "").strip()
    if not text:
        return timedelta(seconds=DEFAULT_DISPATCH_SPREAD)
    if not text.isdigit() or int(text) > MAX_DISPATCH_SPREAD:
        raise ConfigurationError(
            f"SCHEDULER_DISPATCH_SPREAD_SECONDS must be a whole number from 0 to {MAX_DISPATCH_SPREAD}"
        )
    return timedelta(seconds=int(text))


def _slots(env: Mapping[str, str], name: str, default: int) -> int:
    text = (env.get(name) or "").strip()
    if not text:
        return default
    if not text.isdigit() or not 1 <= int(text) <= MAX_ACTION_SLOTS:
        raise ConfigurationError(f"{name} must be a whole number from 1 to {MAX_ACTION_SLOTS}")
    return int(text)
