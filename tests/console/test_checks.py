"""The console's stateless helpers beside the schedule (shared/console/checks.py, through pages.handle): the
members of a document the API would ignore, and each collection's effective limits as the API enforces them."""

from __future__ import annotations

import json

from shared.console.pages import handle


def _post(path: str, body: object) -> tuple[int, dict]:
    answer = handle("POST", path, f"http://127.0.0.1:7071/api/console/{path}", json.dumps(body).encode())
    return answer.status, json.loads(answer.body)


def test_check_names_every_member_the_api_ignores() -> None:
    status, answer = _post(
        "check",
        {
            "kind": "job",
            "document": {
                "properties": {
                    "recurence": {"frequency": "Hour"},
                    "action": {"type": "Http", "request": {"uri": "x", "method": "GET", "retryPolicy": {}}},
                }
            },
        },
    )
    assert status == 200
    assert [(u["path"], u["suggestion"]) for u in answer["value"]] == [
        ("properties.recurence", "recurrence"),
        ("properties.action.request.retryPolicy", "properties.action.retryPolicy"),
    ]
    clean = {"location": "x", "properties": {}}
    assert _post("check", {"kind": "collection", "document": clean}) == (200, {"value": []})
    assert _post("check", {"kind": "queue", "document": {}})[0] == 400
    assert _post("check", {"kind": "job", "document": []})[0] == 400


def test_limits_are_the_plans_tightened_by_the_quota() -> None:
    status, answer = _post(
        "limits",
        {
            "collections": [
                {"properties": {"sku": {"name": "Free"}}},
                {"properties": {}},  # no SKU: Standard
                {
                    "properties": {
                        "sku": {"name": "P20Premium"},
                        "quota": {"maxJobCount": 2000, "maxRecurrence": {"frequency": "Hour", "interval": 2}},
                    }
                },
                {"properties": {"sku": {"name": "Gold"}}},
            ]
        },
    )
    assert status == 200
    free, standard, premium, wrong = answer["value"]
    assert free == {
        "sku": "Free",
        "maxJobs": 5,
        "planMaxJobs": 5,
        "minInterval": "1 hour",
        "minIntervalSeconds": 3600,
        "outboundAuthentication": False,
        "retention": {"maxEntriesPerJob": 1000, "maxAge": "P60D", "failureMaxAge": "P60D"},
        "words": {
            "jobs": "5 (the Free plan)",
            "recurrence": "at most once every 1 hour",
            "auth": "not allowed on the Free plan",
            "retention": "the newest 1000 entries per job, none older than 60 days",
        },
    }
    assert (standard["sku"], standard["maxJobs"], standard["minInterval"]) == ("Standard", 50, "1 minute")
    assert (premium["maxJobs"], premium["minInterval"]) == (1000, "2 hours")  # a quota never loosens the plan
    assert premium["words"]["jobs"] == "1000 (the P20Premium plan)"
    assert wrong["error"]["code"] == "BadRequest" and wrong["error"]["message"].startswith("collections[3].properties")
    assert _post("limits", {"collections": "no"})[0] == 400
