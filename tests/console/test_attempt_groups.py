"""Which attempt belongs to which occurrence (shared/console/attempts.py, the rule of `scheduler jobs history` and of
the console's job page): from the two lists the API answers, the ledger and the attempts (newer api-version).
An attempt that names its occurrence (`executionTag`, or `occurrenceTime` and `trigger`) goes under exactly that
one, however occurrences overlapped and whatever the retry policy became. One that names none (2016-03-01
history's) is placed by the times the executor writes: each retry due its policy's delay after the attempt before
ended, the error action due the instant the last main attempt ended, the ledger entry holding its latest attempt's
times."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.console.attempts import group
from shared.console.pages import handle

T = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
FIXED_20S = {"type": "Http", "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT20S", "retryCount": 2}}


def _at(seconds: float) -> str:
    return (T + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def attempt(
    due: float, start: float, end: float, status: str, retry: int = 0, action: str = "MainAction", repeat: int = 0
) -> dict[str, Any]:
    return {
        "properties": {
            "expectedExecutionTime": _at(due),
            "startTime": _at(start),
            "endTime": _at(end),
            "actionName": action,
            "status": status,
            "retryCount": retry,
            "repeatCount": repeat,
        }
    }


def occurrence(at: float, latest: dict[str, Any] | None, attempts: int, status: str, **more: Any) -> dict[str, Any]:
    p = (latest or {}).get("properties", {})
    return {
        "properties": {
            "occurrenceTime": _at(at),
            "status": status,
            "attempts": attempts,
            "retryCount": p.get("retryCount", 0),
            "repeatCount": p.get("repeatCount", 0),
            "startTime": p.get("startTime"),
            "endTime": p.get("endTime"),
            **more,
        }
    }


def _shown(groups, occurrences, attempts) -> list[tuple[Any, list[Any]]]:
    return [
        (None if g.occurrence is None else occurrences[g.occurrence], [attempts[i] for i in g.attempts]) for g in groups
    ]


def test_each_retry_and_the_error_action_are_under_their_occurrence_in_the_order_they_ran() -> None:
    first = attempt(0, 0.1, 0.3, "Failed", repeat=7)
    retry1 = attempt(20.3, 20.4, 20.6, "Failed", 1, repeat=7)
    retry2 = attempt(40.6, 40.7, 40.9, "Failed", 2, repeat=7)
    error = attempt(40.9, 41.0, 41.1, "Completed", action="ErrorAction", repeat=7)
    later = attempt(3600, 3600.1, 3600.2, "Completed", repeat=8)
    occurrences = [occurrence(3600, later, 1, "Completed"), occurrence(0, retry2, 3, "Failed")]
    attempts = [later, error, retry2, retry1, first]  # as 2016-03-01 answers: newest first
    shown = _shown(group(occurrences, attempts, FIXED_20S), occurrences, attempts)
    assert shown == [(occurrences[0], [later]), (occurrences[1], [first, retry1, retry2, error])]


def test_interleaved_retries_of_two_backfilled_occurrences_go_by_their_policys_delay_not_the_nearest_time() -> None:
    # Both fire at once (backfill: repeatCount 0 each); the older occurrence's first attempt ends at 19 s, just
    # before the newer one's retry is due (1 s + 20 s): the nearest earlier end would be the wrong one.
    newer0 = attempt(0, 0.0, 1.0, "Failed")
    older0 = attempt(0, 0.0, 19.0, "Failed")
    newer1 = attempt(21.0, 21.1, 21.5, "Failed", 1)
    older1 = attempt(39.0, 39.1, 39.4, "Failed", 1)
    newer2 = attempt(41.5, 41.6, 42.0, "Completed", 2)
    older2 = attempt(59.4, 59.5, 60.0, "Completed", 2)
    occurrences = [
        occurrence(-3600, newer2, 3, "Completed", trigger="Backfill"),
        occurrence(-7200, older2, 3, "Completed", trigger="Backfill"),
    ]
    attempts = [older2, newer2, older1, newer1, older0, newer0]
    shown = _shown(group(occurrences, attempts, FIXED_20S), occurrences, attempts)
    assert shown == [(occurrences[0], [newer0, newer1, newer2]), (occurrences[1], [older0, older1, older2])]


def test_the_error_actions_own_retries_follow_it() -> None:
    main = attempt(0, 0.1, 0.2, "Failed")
    error0 = attempt(0.2, 0.3, 0.4, "Failed", action="ErrorAction")
    error1 = attempt(15.4, 15.5, 15.6, "Completed", 1, action="ErrorAction")
    policy = {
        "retryPolicy": {"retryType": "None"},
        "errorAction": {"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}},
    }
    occurrences = [occurrence(0, main, 1, "Failed")]
    attempts = [error1, error0, main]
    assert _shown(group(occurrences, attempts, policy), occurrences, attempts) == [
        (occurrences[0], [main, error0, error1])
    ]


def test_a_running_occurrence_shows_its_finished_attempts_and_one_that_did_not_run_none() -> None:
    first = attempt(0, 0.1, 0.2, "Failed")
    running = occurrence(0, None, 2, "Running", retryCount=1, startTime=_at(20.3))
    skipped = occurrence(60, None, 0, "Skipped", reason="SkippedByOverlap")
    occurrences = [running, skipped]
    attempts = [first]
    assert _shown(group(occurrences, attempts, FIXED_20S), occurrences, attempts) == [
        (skipped, []),
        (running, [first]),
    ]


def test_an_attempt_under_no_listed_occurrence_stays_visible_unless_the_list_is_filtered_or_older() -> None:
    listed = attempt(0, 0.1, 0.2, "Completed")
    orphan = attempt(120, 120.1, 120.2, "Failed", retry=3)  # its occurrence's entry is gone
    older = attempt(-600, -599.9, -599.8, "Completed")  # an occurrence before the oldest listed: another page's
    note = {"properties": {"expectedExecutionTime": _at(30), "actionName": "MainAction", "status": "Postponed"}}
    occurrences = [occurrence(0, listed, 1, "Completed")]
    attempts = [orphan, note, listed, older]
    assert _shown(group(occurrences, attempts, FIXED_20S), occurrences, attempts) == [
        (None, [orphan]),
        (occurrences[0], [listed]),
    ]
    assert _shown(group(occurrences, attempts, FIXED_20S, unplaced=False), occurrences, attempts) == [
        (occurrences[0], [listed])
    ]


def test_the_consoles_endpoint_answers_the_groups_as_indexes_and_refuses_anything_else() -> None:
    first = attempt(0, 0.1, 0.2, "Failed")
    error = attempt(0.2, 0.3, 0.4, "Completed", action="ErrorAction")
    body = {"occurrences": [occurrence(0, first, 1, "Failed")], "attempts": [error, first], "action": {}}
    answer = handle("POST", "attempts", "http://h/api/console/attempts", json.dumps(body).encode())
    assert answer.status == 200 and json.loads(answer.body) == {"value": [{"occurrence": 0, "attempts": [1, 0]}]}
    for wrong in ({"occurrences": {}}, {"occurrences": [], "attempts": [], "action": 3}, [], "x"):
        refused = handle("POST", "attempts", "http://h/api/console/attempts", json.dumps(wrong).encode())
        assert refused.status == 400 and json.loads(refused.body)["error"]["code"] == "BadRequest"
    assert handle("POST", "attempts", "http://h/api/console/attempts", b"{nope").status == 400


def named(entry: dict[str, Any], tag: str, at: float | None = None, trigger: str = "RunNow") -> dict[str, Any]:
    """The entry as the newer api-version's attempts list gives it: naming its occurrence (with its instant and
    trigger when its row was written with them)."""
    identity = {"executionTag": tag} | ({} if at is None else {"occurrenceTime": _at(at), "trigger": trigger})
    return {"properties": {**entry["properties"], **identity}}


def _two_overlapping_run_nows() -> tuple[list[Any], list[Any], list[Any]]:
    """Two run-nows 4 s apart, each retried twice 20 s apart (Fixed) and then its error action; the first one's
    retry 1 answered slowly (19 s), so it ended after the second one's retry 1 and before its retry 2 was due."""
    a = [
        attempt(0, 0.1, 1.0, "Failed"),
        attempt(21.0, 21.1, 40.0, "Failed", 1),
        attempt(60.0, 60.1, 60.5, "Failed", 2),
        attempt(60.5, 60.6, 60.7, "Completed", action="ErrorAction"),
    ]
    b = [
        attempt(4, 4.1, 5.0, "Failed"),
        attempt(25.0, 25.1, 26.0, "Failed", 1),
        attempt(46.0, 46.1, 46.5, "Failed", 2),
        attempt(46.5, 46.6, 46.7, "Completed", action="ErrorAction"),
    ]
    occurrences = [
        occurrence(4, b[2], 3, "Failed", trigger="RunNow", executionTag="b"),
        occurrence(0, a[2], 3, "Failed", trigger="RunNow", executionTag="a"),
    ]
    return occurrences, a, b


FIXED_30S = {"type": "Http", "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 2}}


def test_overlapping_occurrences_are_grouped_by_the_occurrence_each_attempt_names_not_by_times() -> None:
    # The job's retry policy changed since (30 s): no delay matches, and by the nearest earlier end the first
    # run-now's slow retry 1 (ended at 40 s) would be taken for the second's (due 46 s).
    occurrences, a, b = _two_overlapping_run_nows()
    tagged_a = [named(e, "a", 0) for e in a]
    tagged_b = [named(e, "b", 4) for e in b]
    attempts = sorted(tagged_a + tagged_b, key=lambda e: e["properties"]["expectedExecutionTime"], reverse=True)
    shown = _shown(group(occurrences, attempts, FIXED_30S), occurrences, attempts)
    assert shown == [(occurrences[0], tagged_b), (occurrences[1], tagged_a)]
    # Rows of an older version name the occurrence by its tag alone: grouped as exactly.
    by_tag = [named(e, "a") for e in a] + [named(e, "b") for e in b]
    assert _shown(group(occurrences, by_tag, FIXED_30S), occurrences, by_tag) == [
        (occurrences[0], by_tag[4:]),
        (occurrences[1], by_tag[:4]),
    ]
    # Entries that name none (2016-03-01 history's) fall back to times, which this case defeats.
    unnamed = a + b
    assert _shown(group(occurrences, unnamed, FIXED_30S), occurrences, unnamed) != [
        (occurrences[0], b),
        (occurrences[1], a),
    ]


def test_a_backfill_and_a_scheduled_occurrence_at_one_instant_are_told_apart_by_their_trigger() -> None:
    # A backfill of the 10:00 occurrence while the scheduled 10:00 one retries: same instant, same times.
    scheduled = [attempt(0, 0.1, 0.2, "Failed"), attempt(20.2, 20.3, 20.4, "Completed", 1)]
    backfilled = [attempt(0, 0.1, 0.2, "Failed"), attempt(20.2, 20.3, 20.4, "Completed", 1)]
    occurrences = [
        occurrence(0, backfilled[1], 2, "Completed", trigger="Backfill", executionTag="bf"),
        occurrence(0, scheduled[1], 2, "Completed", trigger="Schedule", executionTag="sc"),
    ]
    attempts = [named(e, "", 0, "Schedule") for e in scheduled] + [named(e, "", 0, "Backfill") for e in backfilled]
    for entry in attempts:
        del entry["properties"]["executionTag"]  # named by instant and trigger only
    groups = {g.occurrence: g.attempts for g in group(occurrences, attempts, FIXED_20S)}
    assert groups == {0: [2, 3], 1: [0, 1]}


def test_the_attempts_of_an_occurrence_not_listed_are_one_group_unless_it_is_older_than_the_listed_ones() -> None:
    listed = named(attempt(100, 100.1, 100.2, "Completed"), "listed", 100, "Schedule")
    pruned = [
        named(attempt(120, 120.1, 120.2, "Failed"), "gone", 110),
        named(attempt(140.2, 140.3, 140.4, "Completed", 1), "gone", 110),
    ]
    older = named(attempt(130, 130.1, 130.2, "Completed"), "older", 50, "Backfill")  # due late, an older occurrence
    occurrences = [occurrence(100, listed, 1, "Completed", trigger="Schedule", executionTag="listed")]
    attempts = [pruned[1], older, pruned[0], listed]
    assert _shown(group(occurrences, attempts, FIXED_20S), occurrences, attempts) == [
        (None, pruned),
        (occurrences[0], [listed]),
    ]
    assert _shown(group(occurrences, attempts, FIXED_20S, unplaced=False), occurrences, attempts) == [
        (occurrences[0], [listed])
    ]


def test_named_attempts_leave_the_unnamed_ones_to_the_occurrences_they_did_not_fill() -> None:
    # An upgrade between two occurrences: the older one's rows name nothing, the newer one's name it. Only the
    # unnamed ones are placed by times, so the older one's slow retry is not taken for the newer one's.
    occurrences, a, b = _two_overlapping_run_nows()
    attempts = [named(e, "b", 4) for e in b] + a
    shown = _shown(group(occurrences, attempts, FIXED_30S), occurrences, attempts)
    assert shown == [(occurrences[0], attempts[:4]), (occurrences[1], a)]


def test_attempts_without_any_listed_occurrence_are_groups_of_their_own_named_or_not() -> None:
    # No ledger page yet (the job's first attempts): nothing is older than the oldest listed, so all stay visible.
    tagged = named(attempt(0, 0, 1, "Failed"), "tag-1")
    unnamed = attempt(60, 60, 61, "Succeeded")
    groups = group([], [tagged, unnamed])
    assert sorted(index for g in groups for index in g.attempts) == [0, 1]
    assert all(g.occurrence is None for g in groups)
    body = json.dumps({"occurrences": [], "attempts": [tagged]}).encode()
    answer = handle("POST", "attempts", "http://h/api/console/attempts", body)
    assert answer.status == 200 and json.loads(answer.body) == {"value": [{"occurrence": None, "attempts": [0]}]}
