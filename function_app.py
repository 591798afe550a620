"""Azure Functions bindings of the scheduler. Only translation lives here; all logic is in `shared/`.

- HTTP: the Microsoft.Scheduler 2016-03-01 management API under /api/subscriptions/..., and role assignments
  shaped like ARM's (.../providers/Microsoft.Authorization/roleAssignments) at subscription, group, collection.
- Timer (every minute at second 0): the dispatcher fans out one task per (minute bucket, shard) of the due index.
- Queue (scheduler-dispatch): one task's due entries become queued occurrences, on whichever instance takes it.
- Queue (scheduler-occurrences): the executor runs one occurrence attempt per message.
- Timer (daily): retention prunes old history and finished jobs.
- HTTP: the web console under /api/console (shared/console).
- GET /api/health (anonymous): storage reachable, last dispatcher tick, backlog.
"""

from __future__ import annotations

import azure.functions as func

from shared import api, telemetry
from shared.console import pages as console_pages
from shared.retention import Retention
from shared.runtime import runtime
from shared.settings import DISPATCH_QUEUE, OCCURRENCE_QUEUE, STORAGE_SETTING, host_checks_keys

telemetry.configure()  # from app settings: Application Insights, OTLP, console, or off (shared/telemetry)
# SCHEDULER_AUTH=key: the host checks Functions keys. entra: the app checks bearer tokens (shared/auth), so
# the host lets requests through. none: anonymous.
app = func.FunctionApp(http_auth_level=func.AuthLevel.FUNCTION if host_checks_keys() else func.AuthLevel.ANONYMOUS)

_PROVIDER = "providers/Microsoft.Scheduler/jobCollections"
_SUBSCRIPTION = "subscriptions/{subscriptionId}"
_GROUP = f"{_SUBSCRIPTION}/resourceGroups/{{resourceGroupName}}"
_COLLECTION = f"{_GROUP}/{_PROVIDER}/{{jobCollectionName}}"
_JOB = f"{_COLLECTION}/jobs/{{jobName}}"
_ROLES = "providers/Microsoft.Authorization/roleAssignments"
_ROLE = f"{_ROLES}/{{roleAssignmentName}}"
_ROLE_ITEM = {"GET": "RoleAssignments_Get", "PUT": "RoleAssignments_Create", "DELETE": "RoleAssignments_Delete"}


def _call(operation: str, req: func.HttpRequest) -> func.HttpResponse:
    request = api.ApiRequest(
        method=req.method, url=req.url, route=dict(req.route_params), query=dict(req.params),
        body=req.get_body() or b"", headers=dict(req.headers),
    )
    response = api.handle(operation, request)
    body = response.encoded()
    return func.HttpResponse(
        body=body, status_code=response.status, headers=dict(response.headers),
        mimetype="application/json" if body else None, charset="utf-8",
    )


@app.route(route=f"{_SUBSCRIPTION}/{_PROVIDER}", methods=["GET"])
def job_collections_by_subscription(req: func.HttpRequest) -> func.HttpResponse:
    return _call("JobCollections_ListBySubscription", req)


@app.route(route=f"{_GROUP}/{_PROVIDER}", methods=["GET"])
def job_collections_by_resource_group(req: func.HttpRequest) -> func.HttpResponse:
    return _call("JobCollections_ListByResourceGroup", req)


@app.route(route=_COLLECTION, methods=["GET", "PUT", "PATCH", "DELETE"])
def job_collection(req: func.HttpRequest) -> func.HttpResponse:
    return _call({
        "GET": "JobCollections_Get", "PUT": "JobCollections_CreateOrUpdate",
        "PATCH": "JobCollections_Patch", "DELETE": "JobCollections_Delete",
    }[req.method.upper()], req)


@app.route(route=f"{_COLLECTION}/enable", methods=["POST"])
def job_collection_enable(req: func.HttpRequest) -> func.HttpResponse:
    return _call("JobCollections_Enable", req)


@app.route(route=f"{_COLLECTION}/disable", methods=["POST"])
def job_collection_disable(req: func.HttpRequest) -> func.HttpResponse:
    return _call("JobCollections_Disable", req)


@app.route(route=f"{_COLLECTION}/jobs", methods=["GET"])
def jobs(req: func.HttpRequest) -> func.HttpResponse:
    return _call("Jobs_List", req)


@app.route(route=f"{_JOB}", methods=["GET", "PUT", "PATCH", "DELETE"])
def job(req: func.HttpRequest) -> func.HttpResponse:
    return _call({
        "GET": "Jobs_Get", "PUT": "Jobs_CreateOrUpdate", "PATCH": "Jobs_Patch", "DELETE": "Jobs_Delete",
    }[req.method.upper()], req)


@app.route(route=f"{_JOB}/run", methods=["POST"])
def job_run(req: func.HttpRequest) -> func.HttpResponse:
    return _call("Jobs_Run", req)


@app.route(route=f"{_JOB}/history", methods=["GET"])
def job_history(req: func.HttpRequest) -> func.HttpResponse:
    return _call("Jobs_ListJobHistory", req)


@app.route(route=f"{_SUBSCRIPTION}/{_ROLES}", methods=["GET"])
def role_assignments_of_subscription(req: func.HttpRequest) -> func.HttpResponse:
    return _call("RoleAssignments_ListForScope", req)


@app.route(route=f"{_SUBSCRIPTION}/{_ROLE}", methods=["GET", "PUT", "DELETE"])
def role_assignment_of_subscription(req: func.HttpRequest) -> func.HttpResponse:
    return _call(_ROLE_ITEM[req.method.upper()], req)


@app.route(route=f"{_GROUP}/{_ROLES}", methods=["GET"])
def role_assignments_of_resource_group(req: func.HttpRequest) -> func.HttpResponse:
    return _call("RoleAssignments_ListForScope", req)


@app.route(route=f"{_GROUP}/{_ROLE}", methods=["GET", "PUT", "DELETE"])
def role_assignment_of_resource_group(req: func.HttpRequest) -> func.HttpResponse:
    return _call(_ROLE_ITEM[req.method.upper()], req)


@app.route(route=f"{_COLLECTION}/{_ROLES}", methods=["GET"])
def role_assignments_of_job_collection(req: func.HttpRequest) -> func.HttpResponse:
    return _call("RoleAssignments_ListForScope", req)


@app.route(route=f"{_COLLECTION}/{_ROLE}", methods=["GET", "PUT", "DELETE"])
def role_assignment_of_job_collection(req: func.HttpRequest) -> func.HttpResponse:
    return _call(_ROLE_ITEM[req.method.upper()], req)


@app.route(route="openapi.json", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def openapi(req: func.HttpRequest) -> func.HttpResponse:
    return _call("OpenApi_Get", req)


def _console(req: func.HttpRequest) -> func.HttpResponse:
    answer = console_pages.handle(req.method, req.route_params.get("path") or "", req.url, req.get_body() or b"")
    return func.HttpResponse(body=answer.body, status_code=answer.status,
                             headers={**answer.headers, "Content-Type": answer.content_type})


# The console's shell and assets hold no data (every datum is read through the API with the caller's
# credentials), so they are served without a key; see shared/console/pages.py.
@app.route(route="console", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def console_home(req: func.HttpRequest) -> func.HttpResponse:
    return _console(req)


@app.route(route="console/{*path}", methods=["GET", "POST"], auth_level=func.AuthLevel.ANONYMOUS)
def console_page(req: func.HttpRequest) -> func.HttpResponse:
    return _console(req)


@app.route(route="health", methods=["GET"], auth_level=func.AuthLevel.ANONYMOUS)
def health(req: func.HttpRequest) -> func.HttpResponse:
    """Anonymous on purpose (probes, operators without a key): it returns no secrets (shared/api/health.py)."""
    return _call("Health_Get", req)


@app.timer_trigger(arg_name="timer", schedule="0 * * * * *", run_on_startup=False, use_monitor=False)
def dispatcher(timer: func.TimerRequest) -> None:
    runtime().dispatcher.fan_out()


@app.queue_trigger(arg_name="message", queue_name=DISPATCH_QUEUE, connection=STORAGE_SETTING)
def dispatch(message: func.QueueMessage) -> None:
    runtime().dispatcher.handle_task(message.get_body().decode("utf-8"))


@app.queue_trigger(arg_name="message", queue_name=OCCURRENCE_QUEUE, connection=STORAGE_SETTING)
async def executor(message: func.QueueMessage) -> None:
    # async def: the worker starts every message the host hands over at once (its thread pool would hold
    # most of them unstarted); the executor runs them on its own pool (shared/executor.py).
    await runtime().executor.handle_async(message.get_body().decode("utf-8"), message.id)


@app.timer_trigger(arg_name="timer", schedule="0 30 3 * * *", run_on_startup=False, use_monitor=False)
def retention(timer: func.TimerRequest) -> None:
    """Daily at 03:30 UTC: prune history and claims, delete long-finished jobs (shared/retention.py)."""
    rt = runtime()
    Retention(rt.store, rt.clock).run()
