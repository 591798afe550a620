"""The console's HTTP side without a browser: the shell and its security headers, the shipped assets, the
schedule endpoint, and that packaging keeps the assets."""

from __future__ import annotations

import fnmatch
import html
import json
import re
from datetime import UTC, datetime
from pathlib import Path

from shared.console.pages import asset_names, handle
from shared.console.signin import SignIn

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)  # a Monday
JOB = "subscriptions/s/resourceGroups/g/providers/Microsoft.Scheduler/jobCollections/c/jobs/j"


def _get(path: str, url: str = "http://127.0.0.1:7071/api/console") -> tuple[int, str, dict[str, str]]:
    answer = handle("GET", path, f"{url}/{path}", b"", NOW)
    return answer.status, answer.body.decode("utf-8"), {**answer.headers, "Content-Type": answer.content_type}


def test_every_arm_shaped_page_is_the_shell_with_a_strict_policy() -> None:
    for path in ("", "subscriptions/s", JOB.rsplit("/jobs/", 1)[0], JOB):
        status, body, headers = _get(path)
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert '<meta name="scheduler-api" content="/api">' in body
        assert 'src="/api/console/assets/console.js"' in body
        assert "script-src 'self'" in headers["Content-Security-Policy"]
        assert "<script>" not in body and "style=" not in body  # nothing inline: the policy would block it
    assert _get("subscriptions/s/whatever")[0] == 404


def test_the_shell_follows_the_route_prefix() -> None:
    status, body, _ = _get("", url="http://127.0.0.1:7071/x/console")
    assert status == 200 and 'content="/x"' in body


def test_assets_are_served_by_fixed_name_only() -> None:
    assert {
        "console.js",
        "console.css",
        "api.js",
        "job.js",
        "jobs.js",
        "chart.js",
        "json-locate.js",
        "job-form.js",
        "zones.js",
    } <= set(asset_names())
    status, body, headers = _get("assets/console.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and "import" in body
    assert _get("assets/console.css")[2]["Content-Type"].startswith("text/css")
    for bad in ("assets/../pages.py", "assets/index.html", "assets/nope.js", "assets/%2e%2e/schedule.py"):
        assert _get(bad)[0] == 404, bad


def test_no_asset_reaches_outside_the_origin() -> None:
    static = ROOT / "shared" / "console" / "static"
    for path in static.iterdir():
        text = path.read_text("utf-8")
        assert "http://" not in text.replace("http://www.w3.org/", "") and "https://" not in text.replace(
            "https://example.com/", ""
        ), path.name


def test_schedule_endpoint_describes_and_lists_occurrences() -> None:
    body = {
        "count": 3,
        "jobs": [
            {
                "startTime": "2026-03-01T00:00:00Z",
                "recurrence": {
                    "frequency": "week",
                    "schedule": {"weekDays": ["monday", "Friday"], "hours": [9], "minutes": [0]},
                    "timeZone": "Europe/London",
                },
            },
            {"startTime": "2026-03-01T00:00:00Z", "recurrence": {"frequency": "Hour", "interval": 0}},
            {
                "startTime": "2026-03-01T00:00:00Z",
                "recurrence": {"frequency": "Minute", "interval": 15},
                "from": "2026-03-01T10:07:00Z",
            },
        ],
    }
    answer = handle("POST", "schedule", "http://h/api/console/schedule", json.dumps(body).encode(), NOW)
    assert answer.status == 200
    first, second, third = json.loads(answer.body)["value"]
    assert first == {
        "description": "every Monday and Friday at 09:00 Europe/London",
        "occurrences": ["2026-03-02T09:00:00Z", "2026-03-06T09:00:00Z", "2026-03-09T09:00:00Z"],
    }
    assert second["error"]["message"].startswith("properties.recurrence.interval:")
    assert third["occurrences"] == ["2026-03-01T10:15:00Z", "2026-03-01T10:30:00Z", "2026-03-01T10:45:00Z"]


def test_schedule_endpoint_rejects_malformed_requests() -> None:
    for raw in (b"{nope", b'{"jobs": 1}', b'{"jobs": [], "count": 101}', b'{"jobs": [], "count": true}'):
        answer = handle("POST", "schedule", "http://h/api/console/schedule", raw, NOW)
        assert answer.status == 400 and set(json.loads(answer.body)["error"]) == {"code", "message"}
    assert handle("DELETE", "", "http://h/api/console", b"", NOW).status == 405


def test_packaging_keeps_the_console_assets() -> None:
    patterns = [
        line.strip().rstrip("/")
        for line in (ROOT / ".funcignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    shipped = [
        "shared",
        "shared/console",
        "shared/console/static",
        "function_app.py",
        "host.json",
        "requirements.txt",
        *(f"shared/console/static/{name}" for name in [*asset_names(), "index.html"]),
    ]
    for path in shipped:
        for part in Path(path).parts:
            assert not any(fnmatch.fnmatch(part, pattern) for pattern in patterns), (path, part)


def _sign_in_of(body: str) -> dict:
    found = re.search(r'<meta name="scheduler-signin" content="([^"]*)">', body)
    assert found, body
    return json.loads(html.unescape(found.group(1)))


ENTRA = {
    "SCHEDULER_AUTH": "entra",
    "SCHEDULER_AUTH_TENANT_ID": "t-1",
    "SCHEDULER_AUTH_AUDIENCE": "api://sched,sched",
    "SCHEDULER_CONSOLE_CLIENT_ID": "spa-client",
}


def test_entra_sign_in_reaches_the_tenant_and_nothing_else() -> None:
    answer = handle("GET", "", "https://app.example/api/console", b"", NOW, SignIn.from_environment(ENTRA))
    config = _sign_in_of(answer.body.decode())
    assert config == {
        "mode": "entra",
        "authority": "https://login.microsoftonline.com/t-1",
        "clientId": "spa-client",
        "scope": "api://sched/.default",
        "authorizeEndpoint": "https://login.microsoftonline.com/t-1/oauth2/v2.0/authorize",
        "tokenEndpoint": "https://login.microsoftonline.com/t-1/oauth2/v2.0/token",
        "logoutEndpoint": "https://login.microsoftonline.com/t-1/oauth2/v2.0/logout",
    }
    assert "connect-src 'self' https://login.microsoftonline.com;" in answer.headers["Content-Security-Policy"]
    scoped = SignIn.from_environment({**ENTRA, "SCHEDULER_CONSOLE_SCOPE": "api://sched/user_impersonation"})
    assert scoped.browser_config()["scope"] == "api://sched/user_impersonation"


def test_without_sign_in_the_page_keeps_the_credentials_form_and_its_own_origin() -> None:
    no_client = {k: v for k, v in ENTRA.items() if k != "SCHEDULER_CONSOLE_CLIENT_ID"}
    cases = [
        ({"SCHEDULER_AUTH": "none"}, {"mode": "none"}),
        ({}, {"mode": "key"}),
        (
            no_client,
            {
                "mode": "entra",
                "problem": "Sign-in is not configured (SCHEDULER_CONSOLE_CLIENT_ID): paste a token instead.",
            },
        ),
        ({"SCHEDULER_AUTH": "entra"}, None),
    ]
    for env, expected in cases:
        answer = handle("GET", "", "http://127.0.0.1:7071/api/console", b"", NOW, SignIn.from_environment(env))
        config = _sign_in_of(answer.body.decode())
        if expected is None:  # a misconfigured entra mode: the page says why, the API refuses (fail closed)
            assert config["mode"] == "entra" and "SCHEDULER_AUTH_AUDIENCE" in config["problem"]
        else:
            assert config == expected
        assert "connect-src 'self';" in answer.headers["Content-Security-Policy"]
