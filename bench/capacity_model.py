"""The capacity headlines of docs/capacity.md, as a model over the measured figures (docs/figures.json) and the
platform's published limits (bench/prices.json, `platform`).

Contract: for each measured load (bench `steady` phases `steady*`, bench `fire` phases `herd*` and `spread*`),
`headlines` gives the executions a second one storage account carries (its request target / storage requests per
execution), one occurrence queue carries (its message target / messages sent to it per execution), one instance
carries (its cores / host CPU seconds per execution), the Bicep's `maximumInstanceCount` carries, and the
instances one account's rate needs; `shards_for(rate)` the due-index shards a rate needs. A value whose input is
missing is None, the input named in `Inputs.missing`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench.cost_inputs import Inputs
from bench.cost_lines import QUEUE_WRITE, storage_class
from shared.settings.app import DEFAULT_DUE_SHARDS

OCCURRENCE_QUEUE = "scheduler-occurrences"
# A due partition (minute bucket x shard) is written the minute before, then read and deleted (two entity
# operations per entry) by one dispatch task, which should finish well inside the minute of lead it has.
ENTRY_OPERATIONS = 2
DRAIN_SECONDS = 20.0  # the time a task may take to drain its partition (a model input, not a measurement)


@dataclass(frozen=True)
class Headline:
    load: str
    requests: float | None  # storage requests per execution (figures.json)
    queue_sends: float | None  # messages sent to the occurrence queue per execution (figures.json, by kind)
    cpu_ms: float | None  # host CPU per execution (figures.json)
    per_account: float | None  # executions/s one storage account carries
    per_queue: float | None  # executions/s the occurrence queue carries
    per_instance: float | None  # executions/s one instance carries
    at_maximum: float | None  # executions/s maximumInstanceCount instances carry
    instances_for_account: float | None  # instances one account's rate keeps busy


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return None if numerator is None or not denominator else numerator / denominator


def _cores(inputs: Inputs) -> float | None:
    table = inputs.platform("functions.cores_by_instance_memory_mb")
    value = None if table is None else table.get(str(inputs.deployment.instance_memory_mb))
    return None if value is None else float(value)


def headline(inputs: Inputs, bench: str, phase: str) -> Headline:
    account = inputs.platform("storage.account_requests_per_s")
    queue = inputs.platform("storage.queue_messages_per_s")
    requests = inputs.figure(bench, phase, "storage_requests_per_execution")
    kinds = inputs.kinds(bench, phase, "storage_requests_by_kind")
    sends = None
    if kinds is not None:
        sends = sum(
            n
            for k, n in kinds.items()
            if OCCURRENCE_QUEUE in k and storage_class(k) == QUEUE_WRITE and k.upper().startswith("POST")
        )
    cpu_ms = inputs.figure(bench, phase, "host_cpu_ms_per_execution")
    cores = _cores(inputs)
    per_account = _ratio(account, requests)
    per_instance = _ratio(cores, None if cpu_ms is None else cpu_ms / 1000)
    at_maximum = None if per_instance is None else per_instance * inputs.deployment.maximum_instances
    return Headline(
        load=f"{bench}/{phase}",
        requests=requests,
        queue_sends=sends,
        cpu_ms=cpu_ms,
        per_account=per_account,
        per_queue=_ratio(queue, sends),
        per_instance=per_instance,
        at_maximum=at_maximum,
        instances_for_account=_ratio(per_account, per_instance),
    )


def headlines(inputs: Inputs) -> list[Headline]:
    loads = [("steady", p) for p in inputs.phases("steady", "steady")]
    loads += [("fire", p) for p in inputs.phases("fire", "herd") + inputs.phases("fire", "spread")]
    if not loads:
        inputs.miss("figures.json steady/steady-*, fire/herd-*, fire/spread-* (no phase)")
    return [headline(inputs, bench, phase) for bench, phase in loads]


def shards_for(inputs: Inputs, rate: float) -> int | None:
    """Due-index shards for `rate` executions/s: a partition holds a shard's share of a minute's entries, and
    its reads and deletes must stay under the partition target while one task drains it in DRAIN_SECONDS."""
    target = inputs.platform("storage.partition_entities_per_s")
    if target is None:
        return None
    return max(1, math.ceil(rate * 60 * ENTRY_OPERATIONS / (float(target) * DRAIN_SECONDS)))


def rate_for_shards(inputs: Inputs, shards: int = DEFAULT_DUE_SHARDS) -> float | None:
    target = inputs.platform("storage.partition_entities_per_s")
    return None if target is None else shards * float(target) * DRAIN_SECONDS / (60 * ENTRY_OPERATIONS)
