"""An entity-group transaction whose answer was lost, sent once more where that is harmless, and the repeat's
refusal told apart from a conflict by reading the rows back.

A transaction is a POST to `$batch`, which azure-core never repeats after a connection error (POST is off its
retry list: it repeats one only on an answer, a 500, 503, 504 or one with Retry-After), so a transaction whose
connection closed without an answer (a keep-alive connection the service closed as we sent on it, a reset, a read
timeout: `answer_lost`, failures.py) used to fail its whole batch: storage may have applied it, or not.
`OnceMore.submit` sends it one more time, once per batch call (a second loss raises, as anything else does), and
settles what the repeat meets:
- an upsert (replace mode): the repeat writes the same values again; nothing to settle.
- a replace under an ETag: when the first landed, the repeat meets the ETag the first wrote (412, or 404 for a
  row deleted since); a create: when the first landed, the repeat meets the row it wrote (409, "exists": for a
  claim, our own claim, not another runner's). The refused transaction's rows are read back (`settled`): a row
  that holds exactly what this transaction wrote is answered as written, with its ETag; a row that does not
  (another writer's values, or ours overwritten since) answers None, "not written", for its caller's own
  read-modify-write, which reads it again: a write that landed is never counted lost unless it was overwritten,
  and another writer's row is never counted ours unless it holds the very values written here (what it was
  meant to hold, as `JobStore.landed` counts it). When no row holds them, the first did not land (a
  transaction is all or nothing) and the refusal is a conflict like any other: raised as such.
- deletes: when the first landed, the repeat meets a missing row (404). When none of the rows is left, the
  delete is done (what `delete_batch` promises: the rows are gone); when some are, the first did not land and
  the refusal stands (`BatchFailed`: nothing was deleted), as it would without a loss.

Not repeated here, or not harmless to repeat:
- single-entity creates through the SDK (`Table.insert`: a POST, which azure-core does not repeat): a lost answer
  raises (a repeat would meet "exists" with nothing to tell whose); a job's create reads its row back
  (lifecycle/writes.py), a single claim's delivery fails and its redelivery finds its own runner on the claim
  (claims.py `try_claim`);
- queue sends (not sent through here): the storage SDK's own retry repeats a send whose answer was lost, and
  each repeat is another message, a copy (an occurrence's copy finds its attempt claimed or done), never a loss;
- a transaction refused for anything else (400, a missing table, 413, a 5xx), or a `ServiceRequestError` (no
  connection: nothing was sent; azure-core does not repeat it for a POST either): raised as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from azure.data.tables import TableClient

from . import stored_values
from .failures import answer_lost
from .tables import Entity
from .transaction import Operation, TransactionRefused, submit

log = logging.getLogger(__name__)

Reader = Callable[[str, list[str]], dict[str, Entity]]  # (partition, rows): the rows found, by RowKey, with "etag"

# What a repeat of each kind of operation meets when its first try landed (or when the row changed or vanished).
_MET_BY_A_REPEAT = {"create": {409}, "update": {404, 412}, "delete": {404}}
_NOT_VALUES = ("etag", "Timestamp")


class OnceMore:
    """The transactions of one batch call (`each_once` may send several): one of them may be sent again once."""

    def __init__(self, client: TableClient, read: Reader) -> None:
        self._client = client
        self._read = read
        self._left = 1

    def submit(self, operations: Sequence[Operation]) -> list[str | None]:
        """transaction.py's `submit`, the transaction sent once more after a lost answer (while this call has its
        repeat): the ETag of each operation, None for a row the repeat found not to hold what was written."""
        try:
            return submit(self._client, operations)
        except Exception as error:
            if self._left <= 0 or not answer_lost(error):
                raise
            self._left -= 1
            log.warning("a transaction's answer was lost (%s); sending it once more", type(error).__name__)
        try:
            return submit(self._client, operations)
        except TransactionRefused as refused:
            kind = operations[refused.index][0] if 0 <= refused.index < len(operations) else ""
            if refused.status_code not in _MET_BY_A_REPEAT.get(kind, ()) or refused.error_code == "TableNotFound":
                raise
            partition = str(operations[0][1]["PartitionKey"])
            answers = settled(operations, self._read(partition, [str(op[1]["RowKey"]) for op in operations]))
            if answers is None:
                raise
            return answers


def settled(operations: Sequence[Operation], found: dict[str, Entity]) -> list[str | None] | None:
    """After a lost answer and a refused repeat, with the transaction's rows as they are now (`found`, by RowKey):
    the answer of each operation (the ETag of a row holding exactly what it wrote, else None; None for a delete),
    or None when the first try did not land: no written row holds what it wrote, or a deleted row is still there."""
    answers: list[str | None] = []
    landed = False
    for kind, entity, *_ in operations:
        row = found.get(str(entity["RowKey"]))
        if kind == "delete":
            if row is not None:
                return None
            answers.append(None)
        elif row is not None and _holds(row, entity):
            landed = True
            answers.append(str(row["etag"]))
        else:
            answers.append(None)
    writes = any(kind != "delete" for kind, *_ in operations)
    return answers if landed or not writes else None


def _holds(row: Entity, written: Entity) -> bool:
    """Whether the row read back holds exactly the values written (as a read answers them, stored_values.py)."""
    try:
        expected = stored_values.stored(written)
    except (TypeError, stored_values.Invalid):  # what the service would have refused cannot be there
        return False
    return {k: v for k, v in row.items() if k not in _NOT_VALUES and v is not None} == expected
