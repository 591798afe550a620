"""The app's settings as one value, `Settings`, read once from the environment (Functions app settings, or
local.settings.json Values under the local host): README.md has the table.

`Settings.from_environment(env)` reads every setting, each group by its own reader (storage.py, auth.py,
shared/private_targets.py, shared/timings.py, clock_offset.py), and raises ConfigurationError naming the first
setting missing or malformed; unset optional settings take the defaults below. A Settings built directly (tests)
takes the same defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from ..private_targets import PrivateTargets
from ..timings import Timings
from .auth import AuthSettings
from .clock_offset import clock_offset
from .reading import ConfigurationError, whole_number
from .storage import DEVELOPMENT_ACCOUNT_NAME, StorageSettings, data_accounts

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
DEFAULT_ACTIONS_IN_FLIGHT = 6000
DEFAULT_ACTIONS_PER_HOST = 3000
MAX_ACTION_SLOTS = 100_000
# Batches past their second one process runs at once; the others wait their turn (shared/executor/late_line.py).
DEFAULT_LATE_BATCHES = 2
MAX_LATE_BATCHES = 1000


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
    # SCHEDULER_IDENTITY_AUDIENCES: the audiences a ManagedIdentity action may ask the app's managed identity a
    # token for (shared/actions/managed_identity.py); "*" any. None by default: the identity is the app's own.
    identity_audiences: tuple[str, ...] = ()
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
    # SCHEDULER_LATE_BATCHES: batches past their second one process runs at once (shared/executor/late_line.py).
    late_batches: int = DEFAULT_LATE_BATCHES
    # SCHEDULER_TRUSTED_CA_FILE: a PEM file of CAs trusted for HTTPS targets besides the public ones.
    trusted_ca_file: str | None = None
    # SCHEDULER_TIMING_<FIELD>_SECONDS: the pipeline's leases, watchdogs and windows (shared/timings.py).
    timings: Timings = Timings()
    # AzureWebJobs.dispatcher.Disabled: the Functions host's switch for the minute timer (app-wide, so no instance
    # ticks); health then spares no host its first tick (shared/health.py).
    dispatcher_disabled: bool = False
    # SCHEDULER_CLOCK_OFFSET_SECONDS: the local host's clock, ahead of real time by this (clock_offset.py).
    clock_offset: timedelta = timedelta(0)

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
            identity_audiences=tuple(
                a.strip() for a in (env.get("SCHEDULER_IDENTITY_AUDIENCES") or "").split(",") if a.strip()
            ),
            table_prefix=prefix,
            secret_keys=env.get("SCHEDULER_SECRET_KEYS") or None,
            due_shards=whole_number(env, "SCHEDULER_DUE_SHARDS", DEFAULT_DUE_SHARDS, 1, MAX_DUE_SHARDS),
            dispatch_spread=timedelta(
                seconds=whole_number(
                    env, "SCHEDULER_DISPATCH_SPREAD_SECONDS", DEFAULT_DISPATCH_SPREAD, 0, MAX_DISPATCH_SPREAD
                )
            ),
            auth=AuthSettings.from_environment(env),
            actions_in_flight=whole_number(
                env, "SCHEDULER_ACTIONS_IN_FLIGHT", DEFAULT_ACTIONS_IN_FLIGHT, 1, MAX_ACTION_SLOTS
            ),
            actions_per_host=whole_number(
                env, "SCHEDULER_ACTIONS_PER_HOST", DEFAULT_ACTIONS_PER_HOST, 1, MAX_ACTION_SLOTS
            ),
            late_batches=whole_number(env, "SCHEDULER_LATE_BATCHES", DEFAULT_LATE_BATCHES, 1, MAX_LATE_BATCHES),
            trusted_ca_file=(env.get("SCHEDULER_TRUSTED_CA_FILE") or "").strip() or None,
            timings=_timings(env),
            dispatcher_disabled=(env.get("AzureWebJobs.dispatcher.Disabled") or "").strip().lower() in ("true", "1"),
            clock_offset=clock_offset(env),
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
