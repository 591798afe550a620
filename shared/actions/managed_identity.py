"""ManagedIdentity authentication (newer api-version): a token of the Function app's own managed identity for the
job's `audience`, so no secret of the job's is stored (docs/identity.md, "Managed identity for targets").

Contract:
- The token comes from azure-identity's async `ManagedIdentityCredential`, never from a protocol written here. In
  Azure Functions that is its App Service source: `GET {IDENTITY_ENDPOINT}?api-version=2019-08-01&resource=R`
  (plus `client_id` for a user-assigned identity) with the header `X-IDENTITY-HEADER: {IDENTITY_HEADER}`, both
  variables set by the platform. The scope is `{audience}/.default` (the audience as given when it already ends
  in `/.default`), so the resource asked for is the audience exactly.
- Only that source is used: without IDENTITY_ENDPOINT and IDENTITY_HEADER in the process's environment the attempt
  fails saying so, and the credential's other sources (IMDS at 169.254.169.254 among them) are never tried. The
  local host sets both to an endpoint of its own (devhost/managed_identity.py).
- The identity is the app's: a token for any audience would let whoever may write a job hand the app's access to
  storage or Key Vault to a target of their choosing. So only the audiences of `audiences` (the setting
  SCHEDULER_IDENTITY_AUDIENCES; "*" any) are asked for; none by default.
- One credential per client id (None: the system-assigned identity) for the life of this object; azure-identity's
  cache in it keeps each audience's token until its refresh time, so attempts within a token's life do not ask the
  endpoint again. Attempts of one event loop that need the same token at the same time share one request. Each
  attempt waits at most until its own deadline, and at most `timeout` seconds.
- The credential's transport is requests on a thread (azure-core's AsyncioRequestsTransport), not aiohttp: attempts
  run on more than one event loop (Executor.handle runs each message in a loop of its own), and an aiohttp session
  belongs to the loop that opened it. The endpoint is the platform's (a loopback address in App Service), not one a
  job names, so the private-target guard (network.py) does not apply to it.
- Failures raise TokenError with a message fit for history: the endpoint's status or the kind of failure, never its
  body, the identity header or a token.
- `close()` closes every credential's connections; a later request opens new ones.
"""

from __future__ import annotations

import os
import threading

import requests
from azure.core.exceptions import AzureError, ServiceRequestError, ServiceResponseError
from azure.core.pipeline.transport import AsyncioRequestsTransport
from azure.identity import CredentialUnavailableError
from azure.identity.aio import ManagedIdentityCredential

from ..keys import fold_case
from .oauth import Pending, TokenError, shared_request
from .outbound import Deadline

ENDPOINT_VARIABLE, HEADER_VARIABLE = "IDENTITY_ENDPOINT", "IDENTITY_HEADER"
AUDIENCES_SETTING = "SCHEDULER_IDENTITY_AUDIENCES"
TOKEN_TIMEOUT_SECONDS = 30
# The credential's own retries of a failed request (azure-core's policy: the first at once, the next 0.8 s later);
# more would only hold the attempt, whose own retry policy comes after.
RETRIES = 2
_DEFAULT = "/.default"


def scope_of(audience: str) -> str:
    return audience if audience.endswith(_DEFAULT) else audience + _DEFAULT


def _resource(audience: str) -> str:
    """The audience as compared with the setting: without `/.default`, a trailing slash or case."""
    return fold_case(audience.removesuffix(_DEFAULT).rstrip("/"))


class ManagedIdentityTokens:
    def __init__(self, audiences: tuple[str, ...] = (), timeout: float = TOKEN_TIMEOUT_SECONDS) -> None:
        self.any_audience = "*" in audiences
        self.audiences = frozenset(_resource(a) for a in audiences if a != "*")
        self.timeout = timeout
        self._lock = threading.Lock()
        self._credentials: dict[str | None, tuple[ManagedIdentityCredential, requests.Session]] = {}
        # Token requests under way, by (client id, scope, event loop): a task belongs to the loop that runs it.
        self._pending: Pending = {}

    async def token(self, audience: str, client_id: str | None = None, deadline: Deadline | None = None) -> str:
        """A bearer token of the app's identity (a user-assigned one with `client_id`) for `audience`; TokenError
        when it may not be asked for or cannot be had."""
        if not self.any_audience and _resource(audience) not in self.audiences:
            raise TokenError(
                f"this deployment does not allow that audience ({AUDIENCES_SETTING} names the ones it does)"
            )
        if not (os.environ.get(ENDPOINT_VARIABLE) and os.environ.get(HEADER_VARIABLE)):
            raise TokenError(
                f"the app has no managed identity here ({ENDPOINT_VARIABLE} and {HEADER_VARIABLE} are not set)"
            )
        credential = self._credential(client_id or None)
        scope = scope_of(audience)
        limit = deadline.within(self.timeout) if deadline is not None else Deadline(self.timeout)
        late = "the managed identity endpoint timed out"
        return await shared_request(
            self._pending, (client_id or None, scope), lambda: _fetch(credential, scope), limit, late
        )

    def _credential(self, client_id: str | None) -> ManagedIdentityCredential:
        with self._lock:
            held = self._credentials.get(client_id)
            if held is None:
                session = requests.Session()
                transport = AsyncioRequestsTransport(
                    session=session,
                    session_owner=False,
                    connection_timeout=self.timeout,
                    read_timeout=self.timeout,
                )
                held = self._credentials[client_id] = (
                    ManagedIdentityCredential(client_id=client_id, transport=transport, retry_total=RETRIES),
                    session,
                )
            return held[0]

    def close(self) -> None:
        with self._lock:
            held, self._credentials = list(self._credentials.values()), {}
        for _, session in held:
            session.close()


async def _fetch(credential: ManagedIdentityCredential, scope: str) -> str:
    try:
        return (await credential.get_token(scope)).token
    except AzureError as exc:
        raise TokenError(_failure(exc)) from exc


def _failure(exc: AzureError) -> str:
    """What went wrong, from the exception's kind and status alone: its message may quote the endpoint's body."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and 200 <= status < 300:
        return f"the managed identity endpoint answered {status} without a token"
    if isinstance(status, int):
        hint = " (is that identity assigned to the app?)" if status in (400, 404) else ""
        return f"the managed identity endpoint answered {status}{hint}"
    if isinstance(exc, ServiceResponseError):
        return "the managed identity endpoint broke off its answer"
    if isinstance(exc, ServiceRequestError):
        return "the managed identity endpoint could not be reached"
    if isinstance(exc, CredentialUnavailableError):
        return "no managed identity is available to the app"
    return f"no token from the managed identity endpoint ({type(exc).__name__})"
