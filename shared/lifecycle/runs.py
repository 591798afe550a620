"""Run now (POST .../run): queue one occurrence of the job at once (docs/decisions.md [11]).

It counts as an execution, not toward `count`, and leaves nextExecutionTime alone. Enabled or Disabled
jobs only (a final state is a Conflict); the executor gates on the collection's state. It follows the job's
overlap policy unless the request overrides it for this occurrence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..jobstate import FINAL_STATES
from ..keys import JobKey
from ..model import OverlapPolicy
from ..occurrence import OccurrenceMessage, Trigger
from .errors import Conflict
from .reads import get_job, live_collection

if TYPE_CHECKING:
    from ..runtime import Runtime


def run_job(rt: Runtime, key: JobKey, overlap: OverlapPolicy | None = None) -> None:
    """Queue the run-now occurrence; `overlap` overrides the job's overlap policy for it (nothing is stored)."""
    live_collection(rt, key.collection_key)
    record = get_job(rt, key)
    if record.state in FINAL_STATES:
        raise Conflict(f"The job is {record.state.value}; a {record.state.value} job cannot run.")
    now = rt.clock.now()
    message = OccurrenceMessage(
        record.key, occurrence=now, due=now, trigger=Trigger.RUN_NOW, generation=record.generation, overlap=overlap
    )
    rt.store.queue.send(message, now)
