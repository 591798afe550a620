"""Claims: how one attempt of one occurrence runs once although the queue may deliver it twice.

A claim names its runner: the delivery (queue message) that took it. Per delivery:
- no claim yet: insert it, `running`, with a short lease, and run;
- a claim of this very runner: a write of ours landed although we saw an error (a dropped answer the SDK
  retried, or the host redelivering the message after our failure): resume it;
- `done`: the attempt finished; stop;
- another runner's live lease: a concurrent duplicate; stop;
- another runner's expired lease: that runner may be dead (`try_claim` says `Expired`). It is taken over
  (`take_over`) only once it is provably gone: its lease is not renewed during one more renewal period
  (`takeover_wait`, which the caller waits out, all of a batch's expired claims at once) while this worker
  reaches storage (a live runner renews before its lease ends, and retries every `renewal_retry` when storage
  comes back). The takeover is ETag-guarded, so only one worker wins.
A live runner renews its lease (see `renew`), so a crashed worker's attempt is taken over within the lease its
last renewal granted (`claim_lease`, up to `longest_lease` for a batch held long) + `takeover_wait`, and a slow
attempt keeps its claim for as long as it runs.
The timings are the settings' (shared/timings.py: by default a 6 s lease renewed every 2 s, so a dead runner's
attempts come back about 10 s after its last renewal, its watchdog's second included: short, so what a crash
held runs again within seconds (issue 23), long enough that a runner alive on a busy machine renews well inside).

Layout: a claim is a row of its job's collection partition (the jobs table's partition key), keyed
`<job>|<claim id>`, so the claims of a batch are taken (`claim_each`) and renewed (`renew_group`) in one
entity-group transaction per 100 of one collection, instead of a request each: claims were the largest
share of an execution's storage requests (issue 22). A transaction is all or nothing: a claim that exists
(a duplicate delivery, a resumed or expired one) is taken out of it and settled by itself (`try_claim`), and
so is a renewal whose claim changed. The table (`AttemptClaims`) replaced `Claims`, whose rows were
partitioned by job; rows there only mattered for duplicates arriving within minutes, so the old table is
no longer read (docs/operations.md, upgrading).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ..keys import JobKey
from ..timings import Timings
from .history import delete_rows
from .keys import job_partition, job_rows, job_rows_end
from .tables import ConcurrencyError, Table, as_datetime, grouped, rows_of
from .transaction import MAX_OPERATIONS


@dataclass(frozen=True)
class Expired:
    """Another runner's claim whose lease ran out, as `try_claim` found it (its ETag then)."""

    job: JobKey
    claim_id: str
    runner: str  # who would take it over
    etag: str


@dataclass
class Claim:
    job: JobKey
    claim_id: str
    etag: str
    runner: str = ""
    # True when the attempt may have run before (a takeover, or this runner resuming): the first run may
    # have finished and recorded it before the claim said so; the job's recent claims tell (Executor.run).
    taken_over: bool = False


def claim_partition(job: JobKey) -> str:
    """A claim's partition: its job's collection (as in the jobs table), so a batch's claims share one."""
    return job_partition(job.collection_key)


def claim_row(job: JobKey, claim_id: str) -> str:
    return job_rows(job, claim_id)


def _job_rows(job: JobKey) -> tuple[str, str]:
    return job_rows(job), job_rows_end(job)


@dataclass(frozen=True)
class Wanted:
    """A claim to take: the attempt's job and claim id, for which runner, until when."""

    job: JobKey
    claim_id: str
    runner: str
    lease_until: datetime


def claim_groups(items: Iterable[tuple[JobKey, str]]) -> list[list[tuple[JobKey, str]]]:
    """(job, claim id) pairs in groups that one transaction can take: one collection, at most MAX_OPERATIONS."""
    return grouped(items, lambda item: claim_partition(item[0]), MAX_OPERATIONS)


def renewal_groups(claims: Sequence[Claim]) -> list[list[int]]:
    """The indexes of `claims` (held by several batches of a process) in groups one transaction renews: one
    collection, at most MAX_OPERATIONS, no row twice (two deliveries of a process may hold one attempt's row, the
    later having taken it over; a transaction naming a row twice is refused whole)."""
    seen: Counter[str] = Counter()
    keyed: list[tuple[tuple[str, int], int]] = []
    for index, claim in enumerate(claims):
        row = claim_row(claim.job, claim.claim_id)
        keyed.append(((claim_partition(claim.job), seen[row]), index))
        seen[row] += 1
    return [[index for _, index in group] for group in grouped(keyed, lambda item: item[0], MAX_OPERATIONS)]


class ClaimStore:
    def __init__(self, table: Table, timings: Timings) -> None:
        self.table = table
        self.lease = timings.claim_lease  # a claim taken without a lease of its own holds this long

    def _entity(self, job: JobKey, claim_id: str, runner: str, lease_until: datetime) -> dict[str, object]:
        return {
            "PartitionKey": claim_partition(job),
            "RowKey": claim_row(job, claim_id),
            "Status": "running",
            "LeaseUntil": lease_until,
            "Runner": runner,
        }

    def try_claim(
        self, job: JobKey, claim_id: str, now: datetime, runner: str = "", lease_until: datetime | None = None
    ) -> Claim | Expired | None:
        """The claim if `runner` may run the attempt now; None if it ran or is running elsewhere; Expired when
        another runner's lease ran out (`take_over` after `takeover_wait`)."""
        entity = self._entity(job, claim_id, runner, lease_until or now + self.lease)
        for _ in range(3):
            try:
                return Claim(job, claim_id, self.table.insert(entity), runner)
            except ConcurrencyError:
                pass
            existing = self.table.get(claim_partition(job), claim_row(job, claim_id))
            if existing is None:
                continue  # released meanwhile: try the insert again
            return self._settle(job, claim_id, entity, existing, now)
        return None

    def _settle(
        self, job: JobKey, claim_id: str, entity: dict[str, object], existing: dict[str, object], now: datetime
    ) -> Claim | Expired | None:
        """What a claim that exists already makes of `entity`'s wish (`try_claim`)."""
        runner = str(entity["Runner"])
        if existing.get("Status") == "done":
            return None
        if runner and existing.get("Runner") == runner:
            return self._take(job, claim_id, entity, existing)
        lease = as_datetime(existing.get("LeaseUntil"))
        if lease is not None and lease > now:
            return None
        return Expired(job, claim_id, runner, str(existing["etag"]))

    def take_over(self, expired: Expired, lease_until: datetime) -> Claim | None:
        """After `takeover_wait`: the claim, when nobody wrote it meanwhile (a live runner would have renewed it);
        None when it was renewed, finished or taken by another worker."""
        entity = self._entity(expired.job, expired.claim_id, expired.runner, lease_until)
        again = self.table.get(claim_partition(expired.job), claim_row(expired.job, expired.claim_id))
        if again is None:  # released meanwhile: claim it afresh
            try:
                return Claim(expired.job, expired.claim_id, self.table.insert(entity), expired.runner)
            except ConcurrencyError:
                return None
        if again["etag"] != expired.etag:
            return None  # renewed, finished or taken: not ours
        return self._take(expired.job, expired.claim_id, entity, again)

    def _take(self, job: JobKey, claim_id: str, entity: dict[str, object], existing: dict[str, object]) -> Claim | None:
        runner = str(entity["Runner"])
        try:
            etag: str | None = self.table.replace(entity, str(existing["etag"]))
        except ConcurrencyError:
            etag = self._still_ours(job, claim_id, runner)  # our write may have landed unseen
        return None if etag is None else Claim(job, claim_id, etag, runner, taken_over=True)

    def _still_ours(self, job: JobKey, claim_id: str, runner: str) -> str | None:
        """The claim's ETag when it is `running` under this runner (a write we saw fail had landed), else None."""
        return _ours(self.table.get(claim_partition(job), claim_row(job, claim_id)), runner)

    def claim_each(self, wanted: Sequence[Wanted], now: datetime) -> list[Claim | Expired | None]:
        """`try_claim` for claims of one collection (of any runners: the batches a process holds at once), in
        one transaction per MAX_OPERATIONS; a claim that exists already is taken out of it and settled by `try_claim`
        (a duplicate, or one to resume). Copies of one occurrence (two dispatches of it, received together)
        want one row, which a transaction refuses to name twice (InvalidDuplicateRow): the first copy goes into
        the transaction and the others are duplicates of it (None), or, when it was not inserted, settled by
        `try_claim` like it."""
        found: list[Claim | Expired | None] = []
        for group in grouped(wanted, lambda w: claim_partition(w.job), MAX_OPERATIONS):
            rows = [claim_row(w.job, w.claim_id) for w in group]
            first: dict[str, int] = {}  # claim row -> the index of its first copy in the group
            for index, row in enumerate(rows):
                first.setdefault(row, index)
            entities = [self._entity(w.job, w.claim_id, w.runner, w.lease_until) for w in group]
            inserted, existing = self._insert_together(claim_partition(group[0].job), first, entities)
            for index, (w, row) in enumerate(zip(group, rows, strict=True)):
                etag = inserted.get(row)
                if etag is not None and first[row] == index:
                    found.append(Claim(w.job, w.claim_id, etag, w.runner))
                elif etag is not None:
                    found.append(None)  # a copy of the attempt claimed just now
                elif row in existing and first[row] == index:
                    found.append(self._settle(w.job, w.claim_id, entities[index], existing[row], now))
                else:
                    found.append(self.try_claim(w.job, w.claim_id, now, w.runner, w.lease_until))
        return found

    def _insert_together(
        self, partition: str, first: dict[str, int], entities: list[dict[str, object]]
    ) -> tuple[dict[str, str | None], dict[str, dict[str, object]]]:
        """Insert the rows (`first`: each row's entity) in one transaction, sent once more without a row that exists
        already (a duplicate's); when another is refused too (a copy of a batch, its watchdog or backstop delivered
        while its holder runs it, or a redelivery: then most of them are), read the rows refused together and insert
        the missing ones in one more transaction. The ETags inserted, by row (None: not inserted), and the rows found
        there. Refused one by one, each such row cost a transaction and then an insert and a read of its own: a copy
        of a herd's batch of 160 made about 320 requests, not about 14."""
        rows = list(first)
        inserted = dict(zip(rows, self.table.insert_batch([entities[i] for i in first.values()], 2), strict=True))
        refused = [row for row in rows if inserted[row] is None]
        if not refused:
            return inserted, {}
        existing = rows_of(self.table, partition, refused)
        missing = [row for row in refused if row not in existing]
        if missing:
            again = self.table.insert_batch([entities[first[row]] for row in missing], 2)
            inserted.update(zip(missing, again, strict=True))
        return inserted, existing

    def renew(self, claim: Claim, lease_until: datetime, finished: set[str] | None = None) -> bool:
        """Extend a claim this runner holds; False when it is no longer ours (taken over, gone, or finished: then its
        claim id goes into `finished`, when given, since nobody took it over: its holder marked it done, as a let-go
        attempt's admission does while the batch's guard still renews it, `complete`)."""
        entity = self._entity(claim.job, claim.claim_id, claim.runner, lease_until)
        try:
            claim.etag = self.table.replace(entity, claim.etag)
        except ConcurrencyError:
            etag = self._held_etag(claim, finished)  # our write may have landed unseen
            if etag is None:
                return False
            claim.etag = etag
        return True

    def _held_etag(self, claim: Claim, finished: set[str] | None) -> str | None:
        """The claim row's ETag, read, when it still runs under the claim's runner; else None (and, when its runner
        marked it done, its claim id into `finished`)."""
        found = self.table.get(claim_partition(claim.job), claim_row(claim.job, claim.claim_id))
        etag = _ours(found, claim.runner)
        if etag is None and finished is not None and found is not None and _done_by(found, claim.runner):
            finished.add(claim.claim_id)
        return etag

    def renew_group(
        self, claims: Sequence[Claim], lease_until: datetime | Sequence[datetime], finished: set[str] | None = None
    ) -> list[bool]:
        """`renew` for claims of one collection (at most MAX_OPERATIONS, `claim_groups`' or `renewal_groups`' grouping)
        in one transaction, each to `lease_until` (or to its own, one per claim); a claim that changed meanwhile is
        taken out of it and renewed (or found lost, or finished) by itself."""
        untils = [lease_until] * len(claims) if isinstance(lease_until, datetime) else list(lease_until)
        entities = [
            (self._entity(c.job, c.claim_id, c.runner, until), c.etag) for c, until in zip(claims, untils, strict=True)
        ]
        etags = self.table.replace_batch(entities)
        kept: list[bool] = []
        for claim, until, etag in zip(claims, untils, etags, strict=True):
            if etag is None:
                # Read first: a row the transaction refused has most likely changed (finished, taken over), and a
                # replace with the ETag it refused is sure to fail. Unchanged, it was left unwritten: write it alone.
                found = self._held_etag(claim, finished)
                if found == claim.etag:
                    kept.append(self.renew(claim, until, finished))
                else:
                    if found is not None:
                        claim.etag = found  # our write landed unseen
                    kept.append(found is not None)
            else:
                claim.etag = etag
                kept.append(True)
        return kept

    def complete(self, claim: Claim) -> None:
        """Mark an attempt that changed no job as done. An attempt that updates its job is marked done
        by that update (JobRecord.recent_claims), which saves a round trip per execution."""
        entity = {
            "PartitionKey": claim_partition(claim.job),
            "RowKey": claim_row(claim.job, claim.claim_id),
            "Status": "done",
            "Runner": claim.runner,  # who finished it: its own guard's renewal then knows it was not taken over
        }
        self.table.upsert(entity)

    def release(self, claim: Claim) -> None:
        """Give the attempt back after a failure of ours, so the queue's redelivery can claim it at once.

        ETag-guarded: a claim another worker has since taken over is left alone.
        """
        with contextlib.suppress(ConcurrencyError):
            self.table.delete(claim_partition(claim.job), claim_row(claim.job, claim.claim_id), claim.etag)

    def delete_before(self, job: JobKey, cutoff: datetime) -> int:
        """Delete the job's claims last written before `cutoff`; returns how many.

        A claim only has to outlive the duplicates of its message, which arrive within minutes (a
        redelivery, a re-dispatch), so old claims are dead weight. The filter on the system Timestamp
        is evaluated by the service over the job's key range of its collection's partition, which
        retention keeps small.
        """
        low, high = _job_rows(job)
        query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high and Timestamp lt @cutoff"
        params = {"pk": claim_partition(job), "low": low, "high": high, "cutoff": cutoff}
        found = self.table.query(query, params, select=["RowKey"])
        return delete_rows(self.table, claim_partition(job), [e["RowKey"] for e in found])

    def delete_all(self, job: JobKey) -> None:
        low, high = _job_rows(job)
        query = "PartitionKey eq @pk and RowKey ge @low and RowKey lt @high"
        found = self.table.query(query, {"pk": claim_partition(job), "low": low, "high": high}, select=["RowKey"])
        delete_rows(self.table, claim_partition(job), [e["RowKey"] for e in found])


def _ours(found: dict[str, object] | None, runner: str) -> str | None:
    """The claim row's ETag when it is `running` under `runner`, else None."""
    if runner and found is not None and found.get("Status") == "running" and found.get("Runner") == runner:
        return str(found["etag"])
    return None


def _done_by(found: dict[str, object], runner: str) -> bool:
    """Whether the claim row says `runner` marked the attempt done (`complete`)."""
    return found.get("Status") == "done" and bool(runner) and found.get("Runner") == runner
