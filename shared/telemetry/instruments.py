"""The scheduler's metrics: names, units and attributes (README "Operate it" explains each).

Attributes are low-cardinality on purpose (outcome, action type, action, trigger, collection): a job id on a
metric would create one time series per job. Per-job detail lives on the spans; the occurrence counts carry
the job's id only when SCHEDULER_METRICS_PER_JOB asks for it, and the silence of a job whose expectation is
broken always names it (there are as many series as such jobs, which opted in one by one).
"""

from __future__ import annotations

from opentelemetry.metrics import Meter

EXECUTIONS = "scheduler.executions"
LATENESS = "scheduler.execution.lateness"
RETRIES = "scheduler.execution.retries"
FAULTED = "scheduler.occurrences.faulted"
POISON_MESSAGES = "scheduler.poison.messages"
POISON_DEPTH = "scheduler.poison.depth"
TICK_DURATION = "scheduler.dispatcher.tick.duration"
DISPATCH_OCCURRENCES = "scheduler.dispatcher.occurrences"
BACKLOG = "scheduler.due_index.backlog"
API_REQUESTS = "scheduler.api.requests"
# Occurrence accounting per collection: expected (nominal, from the schedule) >= dispatched >= fired >= succeeded;
# each gap is explained by `skipped` (by reason), by what is still under way, or by the overdue age.
HEARTBEATS = "scheduler.dispatcher.heartbeats"
EXPECTED = "scheduler.occurrences.expected"
DISPATCHED = "scheduler.occurrences.dispatched"
FIRED = "scheduler.occurrences.fired"
SUCCEEDED = "scheduler.occurrences.succeeded"
SKIPPED = "scheduler.occurrences.skipped"
OVERDUE_AGE = "scheduler.occurrences.overdue_age"
EXPECTATIONS_BROKEN = "scheduler.expectations.broken"
JOB_SILENCE = "scheduler.job.silence"
# Destinations that push back or fail (issue 40; telemetry/destinations.py): one series per such destination.
DESTINATION_DEFERRED = "scheduler.destination.deferred"
DESTINATION_CIRCUIT = "scheduler.destination.circuit"

ALL_METRICS = (
    EXECUTIONS,
    LATENESS,
    RETRIES,
    FAULTED,
    POISON_MESSAGES,
    POISON_DEPTH,
    TICK_DURATION,
    DISPATCH_OCCURRENCES,
    BACKLOG,
    API_REQUESTS,
    HEARTBEATS,
    EXPECTED,
    DISPATCHED,
    FIRED,
    SUCCEEDED,
    SKIPPED,
    OVERDUE_AGE,
    EXPECTATIONS_BROKEN,
    JOB_SILENCE,
    DESTINATION_DEFERRED,
    DESTINATION_CIRCUIT,
)


class Instruments:
    """One set of instruments on one meter; rebuilt whenever the meter provider changes."""

    def __init__(self, meter: Meter) -> None:
        # Attribute sets each per-key gauge was last given (shared/telemetry/occurrences.py sets gone ones to 0).
        self.shown: dict[str, set[tuple[tuple[str, str], ...]]] = {}
        self.executions = meter.create_counter(
            EXECUTIONS, unit="{execution}", description="Action attempts run, by outcome, action type and action"
        )
        self.lateness = meter.create_histogram(
            LATENESS,
            unit="s",
            description="Start of an attempt minus its expected execution time",
            explicit_bucket_boundaries_advisory=[0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
        )
        self.retries = meter.create_counter(
            RETRIES, unit="{retry}", description="Retries queued after a failed attempt"
        )
        self.faulted = meter.create_counter(
            FAULTED, unit="{occurrence}", description="Occurrences whose main action failed after its last retry"
        )
        self.poison_messages = meter.create_counter(
            POISON_MESSAGES, unit="{message}", description="Unreadable occurrence messages parked in the poison queue"
        )
        self.poison_depth = meter.create_gauge(
            POISON_DEPTH, unit="{message}", description="Messages in the occurrence poison queue, at each tick"
        )
        self.tick_duration = meter.create_histogram(
            TICK_DURATION,
            unit="s",
            description="Wall time of one dispatcher tick",
            explicit_bucket_boundaries_advisory=[0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 45, 60],
        )
        # A tick fans out into one dispatch task per minute bucket and shard: the occurrences of a tick are
        # the sum over its tasks (per minute), a single task's count shows how the shards share the load.
        self.dispatch_occurrences = meter.create_histogram(
            DISPATCH_OCCURRENCES,
            unit="{occurrence}",
            description="Occurrences queued by one dispatch task",
            explicit_bucket_boundaries_advisory=[0, 1, 10, 100, 1000, 10000, 100000],
        )
        self.backlog = meter.create_gauge(
            BACKLOG, unit="{entry}", description="Due-index entries whose minute has passed, after each tick"
        )
        self.api_requests = meter.create_counter(
            API_REQUESTS, unit="{request}", description="Management API requests, by operation and status class"
        )
        self.heartbeats = meter.create_counter(
            HEARTBEATS, unit="{heartbeat}", description="Dispatcher heartbeats written (one per tick)"
        )
        self.expected = meter.create_counter(
            EXPECTED,
            unit="{occurrence}",
            description="Occurrences the schedules called for, counted as the dispatcher reaches them",
        )
        self.dispatched = meter.create_counter(
            DISPATCHED, unit="{occurrence}", description="Occurrences queued for the executor by the dispatcher"
        )
        self.fired = meter.create_counter(
            FIRED, unit="{occurrence}", description="Occurrences whose main action ran (its first attempt)"
        )
        self.succeeded = meter.create_counter(
            SUCCEEDED, unit="{occurrence}", description="Occurrences whose main action succeeded (on any attempt)"
        )
        self.skipped = meter.create_counter(SKIPPED, unit="{occurrence}", description="Occurrences not run, by reason")
        self.overdue_age = meter.create_gauge(
            OVERDUE_AGE, unit="s", description="Age of the oldest overdue occurrence, per collection, after each tick"
        )
        self.expectations_broken = meter.create_gauge(
            EXPECTATIONS_BROKEN,
            unit="{job}",
            description="Jobs whose expectation of success is broken, per collection, after each tick",
        )
        self.job_silence = meter.create_gauge(
            JOB_SILENCE, unit="s", description="Time without a success of a job whose expectation is broken"
        )
        self.destination_deferred = meter.create_counter(
            DESTINATION_DEFERRED,
            unit="{attempt}",
            description="Attempts deferred by their destination, by destination and reason (PushBack, CircuitOpen)",
        )
        self.destination_circuit = meter.create_counter(
            DESTINATION_CIRCUIT, unit="{change}", description="Circuit changes of a destination, by its new state"
        )
