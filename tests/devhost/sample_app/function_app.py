"""Sample app for the devhost tests: one function per behaviour the local host must reproduce.

In-process tests read the module-level lists below through `LocalHost.app_module`.
"""

import asyncio
import json
import time

import azure.functions as func

# Anonymous by default, so the behaviours below are called without a key; save_item needs the master key
# (the local host checks keys as Azure does: tests/devhost/test_function_keys.py).
app = func.FunctionApp(http_auth_level=func.AuthLevel.ANONYMOUS)

TIMER_CALLS: list[dict] = []
FAILED_ATTEMPTS: list[dict] = []
RECORDS: list[dict] = []


def _json(payload: object, status_code: int = 200, headers: dict | None = None) -> func.HttpResponse:
    return func.HttpResponse(json.dumps(payload), status_code=status_code, headers=headers, mimetype="application/json")


def _describe(req: func.HttpRequest, function: str) -> dict:
    return {
        "function": function,
        "method": req.method,
        "url": req.url,
        "route_params": dict(req.route_params),
        "params": dict(req.params),
        "headers": dict(req.headers),
        "body": req.get_body().decode("utf-8", "replace"),
    }


@app.route(route="items/{id}", methods=["GET"])
def get_item(req: func.HttpRequest) -> func.HttpResponse:
    return _json(_describe(req, "get_item"))


@app.route(route="items/special", methods=["GET"])
def special_item(req: func.HttpRequest) -> func.HttpResponse:
    return _json(_describe(req, "special_item"))


@app.route(route="items", methods=["POST", "PUT"], auth_level=func.AuthLevel.ADMIN)
def save_item(req: func.HttpRequest) -> func.HttpResponse:
    return _json(_describe(req, "save_item"), status_code=201, headers={"Location": "/api/items/1"})


@app.route(route="Files/{*path}")
def files(req: func.HttpRequest) -> func.HttpResponse:
    return _json(_describe(req, "files"))


@app.function_name("plain_text")
@app.route(route="text", methods=[func.HttpMethod.GET])
def text_function(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse("plain hello")


@app.route(route="html", methods=["GET"])
def html(req: func.HttpRequest) -> func.HttpResponse:
    return func.HttpResponse("<p>caf\u00e9</p>", mimetype="text/html", charset="latin-1", headers={"X-Sample": "yes"})


@app.route(route="boom")
def boom(req: func.HttpRequest) -> func.HttpResponse:
    raise RuntimeError("secret detail that must not leak")


@app.route(route="async/{value}")
async def async_echo(req: func.HttpRequest) -> func.HttpResponse:
    await asyncio.sleep(0.01)
    return _json({"value": req.route_params["value"]})


@app.timer_trigger(schedule="* * * * * *", arg_name="timer", run_on_startup=False)
def every_second(timer: func.TimerRequest) -> None:
    TIMER_CALLS.append({"at": time.time(), "past_due": timer.past_due, "status": timer.schedule_status})


def _record(msg: func.QueueMessage, function: str) -> None:
    RECORDS.append(
        {
            "function": function,
            "id": msg.id,
            "body_hex": msg.get_body().hex(),
            "dequeue_count": msg.dequeue_count,
            "has_pop_receipt": bool(msg.pop_receipt),
            "insertion_time": msg.insertion_time.isoformat() if msg.insertion_time else None,
        }
    )


@app.queue_trigger(arg_name="msg", queue_name="devhost-sample-in", connection="AzureWebJobsStorage")
def record_message(msg: func.QueueMessage) -> None:
    _record(msg, "record_message")


@app.queue_trigger(arg_name="msg", queue_name="devhost-sample-fail", connection="AzureWebJobsStorage")
def always_fails(msg: func.QueueMessage) -> None:
    FAILED_ATTEMPTS.append({"id": msg.id, "dequeue_count": msg.dequeue_count})
    raise ValueError("this function always fails")


# connection="Storage" resolves to the AzureWebJobsStorage setting, as in the WebJobs SDK.
@app.queue_trigger(arg_name="msg", queue_name="devhost-sample-async", connection="Storage")
async def async_record(msg: func.QueueMessage) -> None:
    await asyncio.sleep(0.01)
    _record(msg, "async_record")
