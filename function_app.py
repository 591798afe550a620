"""Azure Functions bindings of the scheduler. Only translation lives here; all logic is in `shared/`.

- HTTP: the Microsoft.Scheduler management API (2016-03-01, and 2026-12-01-preview with the extensions) under
  /api/subscriptions/..., its OpenAPI documents, and role assignments
  shaped like ARM's (.../providers/Microsoft.Authorization/roleAssignments) at subscription, group, collection.
- Timer (every minute at second 0): the dispatcher fans out one task per (minute bucket, shard) of the due index.
- Queue (scheduler-dispatch): one task's due entries become queued occurrences, on whichever instance takes it;
  or one page of a collection's cascade (enable, disable, delete), queued by the API.
- Queue (scheduler-occurrences): the executor runs a batch of occurrences due at one second per message.
- Timer (daily): retention prunes old history and finished jobs.
- HTTP: the web console under /api/console (shared/console).
- GET /api/health (anonymous): storage reachable, last dispatcher tick, backlog.
"""

from __future__ import annotations

import azure.functions as func

from shared import api, collector, telemetry
from shared.api.operation import (
    COLLECTION,
    DEAD_LETTER,
    DEAD_LETTERS,
    GROUP,
    JOB,
    OPENAPI_ROUTES,
    PROVIDER,
    ROLE,
    ROLES,
    SCHEDULER,
    SUBSCRIPTION,
)
from shared.console import pages as console_pages
from shared.dispatch_trigger import handle_dispatch_message_async
from shared.retention import Retention
from shared.runtime import runtime
from shared.settings.app import DISPATCH_QUEUE, OCCURRENCE_QUEUE
from shared.settings.auth import host_checks_keys
from shared.settings.storage import STORAGE_SETTING

telemetry.configure()  # from app settings: Application Insights, OTLP, console, or off (shared/telemetry)
# SCHEDULER_AUTH=key: the host checks Functions keys. entra: the app checks bearer tokens (shared/auth), so
# the host lets requests through. none: anonymous.
app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION if host_checks_keys() else func.AuthLevel.ANONYMOUS)


# Routes, their methods and the operations behind them come from the API's operation table
# (shared/api/operations.py); tests/api/test_operation_table.py checks that the routes bound here are the table's.
def _serve(route: str, req: func.HttpRequest) -> func.HttpResponse:
    """Run the operation the table names for this route and method."""
    return _call(api.operation_at(route, req.method), req)


def _call(operation: str, req: func.HttpRequest) -> func.HttpResponse:
    request = api.ApiRequest(
        method=req.method,
        url=req.url,
        route=dict(req.route_params),
        query=dict(req.params),
        body=req.get_body() or b"",
        headers=dict(req.headers),
    )
    response = api.handle(operation, request)
    body = response.encoded()
    return func.HttpResponse(
        body=body,
        status_code=response.status,
        headers=dict(response.headers),
        mimetype="application/json" if body else None,
        charset="utf-8",
    )


@app.route(route=f"{SUBSCRIPTION}/{PROVIDER}", methods=api.methods_at(f"{SUBSCRIPTION}/{PROVIDER}"))
def job_collections_by_subscription(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{SUBSCRIPTION}/{PROVIDER}", req)


@app.route(route=f"{GROUP}/{PROVIDER}", methods=api.methods_at(f"{GROUP}/{PROVIDER}"))
def job_collections_by_resource_group(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{GROUP}/{PROVIDER}", req)


@app.route(route=COLLECTION, methods=api.methods_at(COLLECTION))
def job_collection(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(COLLECTION, req)


@app.route(route=f"{COLLECTION}/enable", methods=api.methods_at(f"{COLLECTION}/enable"))
def job_collection_enable(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{COLLECTION}/enable", req)


@app.route(route=f"{COLLECTION}/disable", methods=api.methods_at(f"{COLLECTION}/disable"))
def job_collection_disable(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{COLLECTION}/disable", req)


@app.route(route=f"{COLLECTION}/forecast", methods=api.methods_at(f"{COLLECTION}/forecast"))
def job_collection_forecast(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{COLLECTION}/forecast", req)


@app.route(route=f"{SUBSCRIPTION}/{SCHEDULER}/forecast", methods=api.methods_at(f"{SUBSCRIPTION}/{SCHEDULER}/forecast"))
def subscription_forecast(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{SUBSCRIPTION}/{SCHEDULER}/forecast", req)


@app.route(
    route=f"{SUBSCRIPTION}/{SCHEDULER}/destinations", methods=api.methods_at(f"{SUBSCRIPTION}/{SCHEDULER}/destinations")
)
def destinations(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{SUBSCRIPTION}/{SCHEDULER}/destinations", req)


@app.route(route=DEAD_LETTERS, methods=api.methods_at(DEAD_LETTERS))
def dead_letters(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(DEAD_LETTERS, req)


@app.route(route=f"{DEAD_LETTERS}/replay", methods=api.methods_at(f"{DEAD_LETTERS}/replay"))
def dead_letters_replay(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{DEAD_LETTERS}/replay", req)


@app.route(route=DEAD_LETTER, methods=api.methods_at(DEAD_LETTER))
def dead_letter(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(DEAD_LETTER, req)


@app.route(route=f"{DEAD_LETTER}/replay", methods=api.methods_at(f"{DEAD_LETTER}/replay"))
def dead_letter_replay(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{DEAD_LETTER}/replay", req)


@app.route(route=f"{COLLECTION}/jobs", methods=api.methods_at(f"{COLLECTION}/jobs"))
def jobs(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{COLLECTION}/jobs", req)


@app.route(route=f"{JOB}", methods=api.methods_at(f"{JOB}"))
def job(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{JOB}", req)


@app.route(route=f"{JOB}/run", methods=api.methods_at(f"{JOB}/run"))
def job_run(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{JOB}/run", req)


@app.route(route=f"{JOB}/history", methods=api.methods_at(f"{JOB}/history"))
def job_history(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{JOB}/history", req)


@app.route(route=f"{JOB}/attempts", methods=api.methods_at(f"{JOB}/attempts"))
def job_attempts(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{JOB}/attempts", req)


@app.route(route=f"{JOB}/occurrences", methods=api.methods_at(f"{JOB}/occurrences"))
def job_occurrences(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{JOB}/occurrences", req)


@app.route(route=f"{JOB}/occurrences/{{instant}}", methods=api.methods_at(f"{JOB}/occurrences/{{instant}}"))
def job_occurrence(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{JOB}/occurrences/{{instant}}", req)


@app.route(route=f"{JOB}/backfill", methods=api.methods_at(f"{JOB}/backfill"))
def job_backfill(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{JOB}/backfill", req)


@app.route(route=f"{SUBSCRIPTION}/{ROLES}", methods=api.methods_at(f"{SUBSCRIPTION}/{ROLES}"))
def role_assignments_of_subscription(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{SUBSCRIPTION}/{ROLES}", req)


@app.route(route=f"{SUBSCRIPTION}/{ROLE}", methods=api.methods_at(f"{SUBSCRIPTION}/{ROLE}"))
def role_assignment_of_subscription(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{SUBSCRIPTION}/{ROLE}", req)


@app.route(route=f"{GROUP}/{ROLES}", methods=api.methods_at(f"{GROUP}/{ROLES}"))
def role_assignments_of_resource_group(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{GROUP}/{ROLES}", req)


@app.route(route=f"{GROUP}/{ROLE}", methods=api.methods_at(f"{GROUP}/{ROLE}"))
def role_assignment_of_resource_group(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{GROUP}/{ROLE}", req)


@app.route(route=f"{COLLECTION}/{ROLES}", methods=api.methods_at(f"{COLLECTION}/{ROLES}"))
def role_assignments_of_job_collection(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{COLLECTION}/{ROLES}", req)


@app.route(route=f"{COLLECTION}/{ROLE}", methods=api.methods_at(f"{COLLECTION}/{ROLE}"))
def role_assignment_of_job_collection(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(f"{COLLECTION}/{ROLE}", req)


@app.route(route="openapi.json", methods=api.methods_at("openapi.json"), auth_level=func.AuthLevel.ANONYMOUS)
def openapi(req: func.HttpRequest) -> func.HttpResponse:
    return _serve("openapi.json", req)


_OPENAPI_PREVIEW = next(route for route in OPENAPI_ROUTES if route != "openapi.json")  # the newer api-version's


@app.route(route=_OPENAPI_PREVIEW, methods=api.methods_at(_OPENAPI_PREVIEW), auth_level=func.AuthLevel.ANONYMOUS)
def openapi_preview(req: func.HttpRequest) -> func.HttpResponse:
    return _serve(_OPENAPI_PREVIEW, req)


def _console(req: func.HttpRequest) -> func.HttpResponse:
    # The runtime's clock: the previews the console draws then agree with the API's (a local host may run offset).
    now = runtime().clock.now()
    answer = console_pages.handle(req.method, req.route_params.get("path") or "", req.url, req.get_body() or b"", now)
    return func.HttpResponse(
        body=answer.body, status_code=answer.status, headers={**answer.headers, "Content-Type": answer.content_type}
    )


# The console's shell and assets hold no data (every datum is read through the API with the caller's
# credentials), so they are served without a key; see shared/console/pages.py.
@app.route(route="console", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def console_home(req: func.HttpRequest) -> func.HttpResponse:
    return _console(req)


@app.route(route="console/{*path}", methods=["GET", "POST"], auth_level=func.AuthLevel.ANONYMOUS)
def console_page(req: func.HttpRequest) -> func.HttpResponse:
    return _console(req)


@app.route(route="health", methods=api.methods_at("health"), auth_level=func.AuthLevel.ANONYMOUS)
def health(req: func.HttpRequest) -> func.HttpResponse:
    """Anonymous on purpose (probes, operators without a key): it returns no secrets (shared/api/health.py)."""
    return _serve("health", req)


@app.timer_trigger(arg_name="timer", schedule="0 * * * * *", run_on_startup=False, use_monitor=True)
def dispatcher(timer: func.TimerRequest) -> None:
    # A tick made up at start (past due: missed while no host ran) dispatches at once, not spread (issue 23).
    runtime().dispatcher.fan_out(spread=not timer.past_due)


@app.queue_trigger(arg_name="message", queue_name=DISPATCH_QUEUE, connection=STORAGE_SETTING)
async def dispatch(message: func.QueueMessage) -> None:
    # A dispatch task, or a collection's cascade queued by the API (shared/dispatch_trigger.py). async def: the
    # work runs on a lane of the runtime's threads, never on the worker's pool that the API's requests need.
    await handle_dispatch_message_async(runtime(), message.get_body().decode("utf-8"))


@app.queue_trigger(arg_name="message", queue_name=OCCURRENCE_QUEUE, connection=STORAGE_SETTING)
async def executor(message: func.QueueMessage) -> None:
    # async def: the worker starts every message the host hands over at once (its thread pool would hold
    # most of them unstarted); the executor runs them on its own pool (shared/executor/).
    await runtime().executor.handle_async(message.get_body().decode("utf-8"), message.id, message.dequeue_count)


@app.timer_trigger(arg_name="timer", schedule="0 30 3 * * *", run_on_startup=False, use_monitor=False)
def retention(timer: func.TimerRequest) -> None:
    """Daily at 03:30 UTC: prune history and claims, delete long-finished jobs (shared/retention.py)."""
    rt = runtime()
    Retention(rt.store, rt.clock).run()


# Last, the app's modules imported: the collector leaves them be and lets young work die young (shared/collector.py).
collector.settle()
