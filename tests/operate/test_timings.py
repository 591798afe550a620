"""The pipeline's timings come from one settings object (shared/timings.py): its defaults are the values the
pipeline always ran on, timings that contradict each other are refused naming the fields, the environment may
override each (SCHEDULER_TIMING_<FIELD>_SECONDS, checked), and a store built from settings hands them to every
component built over it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from shared.actions import ActionRunner
from shared.actions.http import TIMEOUT_SECONDS
from shared.clock import SystemClock
from shared.dispatcher import Dispatcher
from shared.executor import Executor
from shared.settings import ConfigurationError, Settings, StorageSettings
from shared.store import Store
from shared.timings import ATTEMPT_DEADLINE, FIELDS, Timings

# What each timing was as a module constant before it moved (the defaults must not change behaviour).
BEFORE = {
    "claim_lease": 6,  # store/claims.py LEASE
    "renew_every": 2,  # store/claims.py RENEW_EVERY
    "renewal_retry": 1,  # leases.py, a failed renewal retried in a second
    "renewer_poll": 0.5,  # leases.py, the renewer's sleep
    "watchdog_margin": 1,  # leases.py WATCHDOG_MARGIN
    "backstop_after": 45,  # store/queues.py BACKSTOP_AFTER (20 s; 45 s since issue 37: past a lossy spell)
    "task_watchdog_after": 10,  # store/queues.py TASK_WATCHDOG_AFTER
    "dispatch_task_ttl": 3600,  # store/queues.py, a task's time to live
    "early_visibility": 5,  # store/queues.py EARLY_VISIBILITY
    "early_hop": 8,  # executor/batch.py and executor/limits.py EARLY_HOP
    "herd_visibility": 6.5,  # new (issue 41): a herd's messages turn visible before the others
    "batch_span": 3,  # dispatcher.py BATCH_SPAN
    "spread_margin": 25,  # dispatcher.py SPREAD_MARGIN
    "dispatch_overlap": 120,  # dispatcher.py OVERLAP
    "first_inline_within": 10,  # new (first_dispatch.py): the API queued every first occurrence before the horizon
    "first_gather": 1,  # new (first_dispatch.py)
    "advance_settle": 2,  # new (jobstate.recorded_by): every job was advanced at once
    "write_in_flight": 60,  # new (jobstate.awaits_its_write): an entry not its job's own was dropped at once
    "batch_gather": 0.05,  # executor/batch.py GATHER
    "job_gather": 0.01,  # executor/admission.py (the job at its second)
    "collection_fresh": 1,  # executor/collection_gate.py FRESH
    "limits_gather": 0.02,  # executor/limits.py GATHER
    "deferral_gather": 0.05,  # executor/limits.py QUEUE_GATHER
    "connect_lead": 0.1,  # executor/limits.py CONNECT_LEAD
    "concurrency_wait": 15,  # executor/limits.py CONCURRENCY_WAIT
    "concurrency_peek": 0.25,  # executor/limits.py PEEK_EVERY
    "backoff_first": 1,  # executor/limits.py BACKOFF_FIRST
    "backoff_step": 0.25,  # executor/limits.py BACKOFF_STEP
    "backoff_max": 15,  # executor/limits.py BACKOFF_MAX
    "slot_lease": 120,  # jobstate/concurrency.py SLOT_LEASE
    "waiter_lease": 30,  # jobstate/concurrency.py WAITER_LEASE
    "running_lease": 180,  # jobstate/overlap.py RUNNING_LEASE
    "record_window": 0.2,  # executor/recorder.py WINDOW
    "record_patience": 300,  # executor/recorder.py RECORD_PATIENCE
    "record_retry_first": 0.2,  # executor/persist.py, its first delay
    "record_retry_max": 2,  # executor/persist.py, its longest delay
    # Issue 40 (executor/destinations.py): new, no earlier value.
    "deferral_deadline": 3600,
    "pressure_refresh": 2,
    "pressure_quiet": 30,
    "pressure_forget": 300,
    "circuit_sustained": 10,
    "circuit_probe_every": 5,
    "circuit_answer_wait": 1,
    # Issue 35: module constants of executor/destinations.py (_COUNTED) and executor/limit_slots.py (_PAUSE).
    "pushback_counted": 1,
    "race_backoff": 0.005,
    # Issue 41 (health.py): new, no earlier value.
    "executor_behind_after": 30,
    # Issue 41 (executor/held_report.py): new, no earlier value (health read only the queue's front).
    "held_report_every": 10,
    # Issue 41 (executor/batch.py): new, no earlier value (a herd's attempts got ready at their second).
    "ready_each": 0.002,
    "ready_most": 3,
    # Issue 41 (leases.py): new; renewals came every renew_every (2 s) however long a batch was held.
    "renew_most": 8,
}
CLOUD = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net"


def test_the_defaults_are_the_values_the_pipeline_ran_on() -> None:
    defaults = Timings()
    assert set(FIELDS) == set(BEFORE)
    assert {name: getattr(defaults, name) for name in FIELDS} == {n: timedelta(seconds=s) for n, s in BEFORE.items()}
    assert defaults.watchdog_after == timedelta(seconds=7)  # store/queues.py WATCHDOG_AFTER = LEASE + 1 s
    assert defaults.takeover_wait == timedelta(seconds=3)  # store/claims.py TAKEOVER_WAIT = RENEW_EVERY + 1 s
    assert defaults.backstop_gap == timedelta(seconds=38)  # leases.py BACKSTOP_GAP (13 s before issue 37)
    assert timedelta(seconds=TIMEOUT_SECONDS) == ATTEMPT_DEADLINE  # what the leases are checked against


@pytest.mark.parametrize(
    ("changed", "named"),
    [
        ({"claim_lease": 5}, ["claim_lease", "renew_every"]),  # two renewals could not fail
        ({"backstop_after": 10}, ["backstop_after", "claim_lease", "watchdog_margin"]),  # before the takeover
        ({"backoff_max": 16}, ["waiter_lease", "backoff_max"]),  # was a module-level assert
        ({"concurrency_wait": 20}, ["waiter_lease", "concurrency_wait"]),  # was a module-level assert
        ({"early_visibility": 8}, ["early_hop", "early_visibility"]),  # a message on time would hop
        ({"herd_visibility": 8}, ["herd_visibility", "early_hop"]),  # a herd's message on time would hop
        ({"herd_visibility": 4}, ["herd_visibility", "early_visibility"]),  # a herd's message later than others
        ({"ready_most": 5}, ["ready_most", "early_visibility"]),  # a herd ready before its batches arrive
        ({"dispatch_overlap": 90}, ["dispatch_overlap"]),  # half a bucket
        ({"slot_lease": 60}, ["slot_lease"]),  # a slot lapsing under an attempt still running
        ({"renew_every": 0}, ["renew_every"]),
        ({"renew_most": 1}, ["renew_most", "renew_every"]),  # a held batch renewed more often than a fresh one
        ({"renew_most": 19}, ["backstop_after", "renew_most"]),  # the backstop would show before a renewal
        ({"running_lease": 75}, ["running_lease", "renew_most"]),  # a vanished runner's long lease outlives its marker
        ({"batch_span": -1}, ["batch_span"]),
    ],
)
def test_timings_that_contradict_each_other_are_refused_naming_the_fields(changed, named) -> None:
    with pytest.raises(ValueError) as refused:
        Timings(**{name: timedelta(seconds=seconds) for name, seconds in changed.items()})
    assert all(name in str(refused.value) for name in named), str(refused.value)


def test_shorter_timings_that_keep_every_relationship_are_taken() -> None:
    short = Timings(
        claim_lease=timedelta(seconds=1.5),
        renew_every=timedelta(seconds=0.5),
        renew_most=timedelta(seconds=1),
        renewal_retry=timedelta(seconds=0.25),
        renewer_poll=timedelta(seconds=0.1),
        watchdog_margin=timedelta(seconds=0.5),
        backstop_after=timedelta(seconds=5),
        task_watchdog_after=timedelta(seconds=2),
        spread_margin=timedelta(seconds=5),
        batch_span=timedelta(0),
    )
    assert short.watchdog_after == timedelta(seconds=2) and short.takeover_wait == timedelta(seconds=0.75)


def test_the_environment_overrides_a_timing_and_a_wrong_override_is_refused() -> None:
    env = {"AzureWebJobsStorage": CLOUD, "SCHEDULER_TIMING_RECORD_WINDOW_SECONDS": "0.05"}
    timings = Settings.from_environment(env).timings
    assert timings == replace(Timings(), record_window=timedelta(milliseconds=50))
    assert Settings.from_environment({"AzureWebJobsStorage": CLOUD}).timings == Timings()
    for name, value, named in [
        ("SCHEDULER_TIMING_LEASE_SECONDS", "6", "SCHEDULER_TIMING_LEASE_SECONDS names no timing"),
        ("SCHEDULER_TIMING_CLAIM_LEASE", "6", "SCHEDULER_TIMING_CLAIM_LEASE names no timing"),
        ("SCHEDULER_TIMING_CLAIM_LEASE_SECONDS", "six", "SCHEDULER_TIMING_CLAIM_LEASE_SECONDS must be a number"),
        ("SCHEDULER_TIMING_CLAIM_LEASE_SECONDS", "nan", "SCHEDULER_TIMING_CLAIM_LEASE_SECONDS must be a number"),
        ("SCHEDULER_TIMING_CLAIM_LEASE_SECONDS", "1e9", "SCHEDULER_TIMING_CLAIM_LEASE_SECONDS must be a number"),
        ("SCHEDULER_TIMING_CLAIM_LEASE_SECONDS", "3", "claim_lease must be at least 3 x renew_every"),
    ]:
        with pytest.raises(ConfigurationError) as refused:
            Settings.from_environment({"AzureWebJobsStorage": CLOUD, name: value})
        assert named in str(refused.value)


def test_a_store_built_from_settings_hands_their_timings_to_every_component() -> None:
    """Nothing here reaches storage: the clients are made, never called."""
    short = Timings(
        claim_lease=timedelta(seconds=3),
        renew_every=timedelta(seconds=1),
        batch_span=timedelta(seconds=1),
        batch_gather=timedelta(milliseconds=5),
        job_gather=timedelta(milliseconds=1),
        collection_fresh=timedelta(milliseconds=300),
        limits_gather=timedelta(milliseconds=2),
        record_window=timedelta(milliseconds=20),
        slot_lease=timedelta(seconds=90),
    )
    settings = Settings(storage=StorageSettings(connection_string=CLOUD), timings=short)
    store = Store.from_settings(settings)
    assert store.timings is short and store.queue.timings is short
    assert store.claims.lease == timedelta(seconds=3)
    assert store.dispatch.watchdog_after == short.task_watchdog_after.total_seconds()
    dispatcher = Dispatcher(store, SystemClock())
    assert dispatcher.span == timedelta(seconds=1) and dispatcher.watchdogs.timings is short
    executor = Executor(store, SystemClock(), ActionRunner.from_settings(settings), settings)
    attempts = executor.attempts
    assert executor.guards.timings is short and executor.recorder.timings is short
    assert executor._job_reads.window == 0.005 and executor._claims.window == 0.005
    admission = attempts.admission
    assert admission.jobs.window == 0.001 and admission.collections.fresh == 0.3
    assert admission.limits.timings is short and admission.limits._gates.window == 0.002
