"""A collection's dead letters (newer api-version only): occurrences whose run ended failed for good
(shared/jobstate/dead_letter.py says when; shared/store/dead_letters.py how they are kept).

- GET .../deadLetters: newest occurrence first, paged like history (`$top`, `$skip`, `$skiptoken`, nextLink).
- GET .../deadLetters/{id}: one, with its attempts (`properties.attempts`: the history rows of its occurrence
  identity, its replays' included, newest first, as the attempts list shows them).
- POST .../deadLetters/{id}/replay: queues the occurrence again with the same identity (executionTag: the same
  Idempotency-Key, x-ms-execution-tag, Service Bus MessageId) under the job's current definition, a first attempt
  of its main action with the job's retry policy. 200 with the dead letter (state Replaying); 409 while a replay
  of it is in flight or when its job was deleted; 404 for an unknown id.
- POST .../deadLetters/replay, body `{"ids": [...]}` or `{"all": true}`: up to MAX_BATCH at once; answers
  `{"value": [{"id", "status", "error"?}], "more": bool}` (`more`: `all` left dead letters for another call).
- DELETE .../deadLetters/{id}: purges one (200; 404 unknown; 409 while its replay is in flight).
- DELETE .../deadLetters: purges all but those in flight: `{"purged": n, "inFlight": m}`.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from .. import lifecycle
from ..errors import ApiError, bad_request
from ..keys import CollectionKey
from ..model import format_utc
from ..store import ConcurrencyError
from ..store.dead_letters import DeadLetter, DeadLetters
from .common import read_json, require_api_version
from .http import ApiRequest, ApiResponse
from .newer import require_newer
from .paging import list_body, next_link, page_request, resume
from .paths import collection_key
from .render import render_history, wire_trigger

if TYPE_CHECKING:
    from datetime import datetime

    from ..runtime import Runtime

log = logging.getLogger(__name__)
MAX_BATCH = 100  # dead letters one bulk replay takes
TYPE = "Microsoft.Scheduler/jobCollections/deadLetters"


def render(letter: DeadLetter) -> dict[str, Any]:
    when = lambda value: format_utc(value) if value is not None else None  # noqa: E731
    trigger = wire_trigger(letter.trigger)
    return {
        "id": f"{letter.collection.resource_id}/deadLetters/{letter.dead_letter_id}",
        "type": TYPE,
        "name": f"{letter.collection.collection}/{letter.dead_letter_id}",
        "properties": {
            "jobName": letter.job,
            "occurrenceTime": format_utc(letter.occurrence),
            "trigger": trigger.value if trigger is not None else None,
            "executionTag": letter.execution_id,
            "generation": letter.generation,
            "state": letter.state.value,
            "actionName": letter.action.value,
            "status": letter.status.value,
            "message": letter.message,
            "retryCount": letter.retry_count,
            "startTime": when(letter.start_time),
            "endTime": when(letter.end_time),
            "replayCount": letter.replay_count,
            "replayedAt": when(letter.replayed_at),
        },
    }


def _letters(rt: Runtime, request: ApiRequest) -> tuple[CollectionKey, DeadLetters]:
    require_api_version(request)
    require_newer(request, "Dead letters")
    key = collection_key(request)
    lifecycle.get_collection(rt, key)  # 404 for a missing collection
    return key, DeadLetters(rt.store.history.table_for(key))


def _id(request: ApiRequest) -> str:
    return next((value for name, value in request.route.items() if name.lower() == "deadletterid"), "")


def _found(letters: DeadLetters, key: CollectionKey, dead_letter_id: str) -> DeadLetter:
    letter = letters.get(key, dead_letter_id)
    if letter is None:
        raise ApiError(404, "ResourceNotFound", "The dead letter was not found in this job collection.")
    return letter


def list_dead_letters(rt: Runtime, request: ApiRequest) -> ApiResponse:
    key, letters = _letters(rt, request)
    page = page_request(request)
    position = resume(rt, request, page, "deadLetters")
    if position is not None and not isinstance(position, dict):
        raise bad_request("The continuation token is not one of this list's.", "$skiptoken")
    found, token = letters.page(key, page.size + (page.skip if page.token is None else 0), position)
    found = found[page.skip :] if page.token is None else found
    return ApiResponse(
        200, list_body([render(letter) for letter in found], next_link(rt, request, "deadLetters", token))
    )


def get_dead_letter(rt: Runtime, request: ApiRequest) -> ApiResponse:
    key, letters = _letters(rt, request)
    letter = _found(letters, key, _id(request))
    attempts = rt.store.history.attempts_of(letter.job_key, letter.execution_id)
    body = render(letter)
    body["properties"]["attempts"] = [render_history(attempt, identity=True) for attempt in attempts]
    return ApiResponse(200, body)


def _replay(rt: Runtime, letters: DeadLetters, letter: DeadLetter, now: datetime) -> DeadLetter:
    """Mark it Replaying under its ETag, then queue its replay (the mark undone when the queue refuses)."""
    if letter.in_flight(now):
        raise ApiError(409, "Conflict", "A replay of this dead letter is in flight; wait for it to end.")
    job = rt.store.jobs.get(letter.job_key)
    if job is None:
        raise ApiError(409, "Conflict", f"The job {letter.job} was deleted; purge its dead letter instead.")
    try:
        marked = letters.mark_replaying(letter, now)
    except ConcurrencyError:
        raise ApiError(409, "Conflict", "The dead letter changed meanwhile (another replay?); read it again.") from None
    try:
        rt.store.queue.send(marked.replay_message(job.generation, now), now)
    except Exception:
        log.exception("the replay of dead letter %s was not queued", letter.dead_letter_id)
        with contextlib.suppress(Exception):
            letters.restore(letter, marked)
        raise ApiError(503, "ServiceUnavailable", "The replay could not be queued; try again.") from None
    return marked


def replay_dead_letter(rt: Runtime, request: ApiRequest) -> ApiResponse:
    key, letters = _letters(rt, request)
    letter = _found(letters, key, _id(request))
    return ApiResponse(200, render(_replay(rt, letters, letter, rt.clock.now())))


def replay_dead_letters(rt: Runtime, request: ApiRequest) -> ApiResponse:
    key, letters = _letters(rt, request)
    body = read_json(request)
    ids, every = body.get("ids"), body.get("all")
    if (ids is None) == (every is None) or (every is not None and every is not True):
        raise bad_request('Give either "ids" (a list of dead letter ids) or "all": true.')
    now = rt.clock.now()
    more = False
    if ids is not None:
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids) or not 1 <= len(ids) <= MAX_BATCH:
            raise bad_request(f"a list of 1 to {MAX_BATCH} dead letter ids.", "ids")
        wanted: list[tuple[str, DeadLetter | None]] = [(i, letters.get(key, i)) for i in dict.fromkeys(ids)]
    else:
        waiting = [letter for letter in letters.each(key) if not letter.in_flight(now)]
        more = len(waiting) > MAX_BATCH
        wanted = [(letter.dead_letter_id, letter) for letter in waiting[:MAX_BATCH]]
    results: list[dict[str, Any]] = []
    for dead_letter_id, letter in wanted:
        try:
            if letter is None:
                raise ApiError(404, "ResourceNotFound", "The dead letter was not found in this job collection.")
            _replay(rt, letters, letter, now)
            results.append({"id": dead_letter_id, "status": 200})
        except ApiError as error:
            results.append({"id": dead_letter_id, "status": error.status, **error.to_wire()})
    return ApiResponse(200, {"value": results, "more": more})


def delete_dead_letter(rt: Runtime, request: ApiRequest) -> ApiResponse:
    key, letters = _letters(rt, request)
    letter = _found(letters, key, _id(request))
    if letter.in_flight(rt.clock.now()):
        raise ApiError(409, "Conflict", "A replay of this dead letter is in flight; purge it once the replay ended.")
    try:
        letters.delete(letter)
    except ConcurrencyError:
        raise ApiError(409, "Conflict", "The dead letter changed meanwhile; read it again.") from None
    return ApiResponse(200, None)


def purge_dead_letters(rt: Runtime, request: ApiRequest) -> ApiResponse:
    key, letters = _letters(rt, request)
    now = rt.clock.now()
    purged = kept = 0
    for letter in list(letters.each(key)):
        if letter.in_flight(now):
            kept += 1
            continue
        try:
            purged += letters.delete(letter)
        except ConcurrencyError:  # replayed meanwhile: in flight now
            kept += 1
    return ApiResponse(200, {"purged": purged, "inFlight": kept})
