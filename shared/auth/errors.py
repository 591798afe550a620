"""The 401 and 403 answers, worded and coded as Azure Resource Manager words and codes them.

401: the WWW-Authenticate challenge names the authority and the resource (the scheduler's audience), so a
client can tell where to get a token and for what; `error="invalid_token"` only when a token was sent
(RFC 6750 §3). 403: ARM's AuthorizationFailed sentence, naming the client, its object id, the action and
the scope.
"""

from __future__ import annotations

from ..errors import ApiError
from ..settings import AuthSettings
from .principal import Principal


def _quoted(text: str) -> str:
    # Header parameter values: no quotes, backslashes or line breaks may come through from a token.
    return "".join(ch for ch in text if ch.isprintable() and ch not in '"\\')[:300]


def unauthenticated(settings: AuthSettings, code: str, message: str, token_sent: bool) -> ApiError:
    challenge = (
        f'Bearer authorization_uri="{_quoted(settings.authorization_uri)}", '
        f'resource_id="{_quoted(settings.audiences[0] if settings.audiences else "")}"'
    )
    if token_sent:
        challenge += f', error="invalid_token", error_description="{_quoted(message)}"'
    return ApiError(401, code, message, {"WWW-Authenticate": challenge})


def missing_header(settings: AuthSettings) -> ApiError:
    return unauthenticated(
        settings,
        "AuthenticationFailed",
        "Authentication failed. The 'Authorization' header is missing.",
        token_sent=False,
    )


def malformed_header(settings: AuthSettings) -> ApiError:
    return unauthenticated(
        settings,
        "AuthenticationFailed",
        "Authentication failed. The 'Authorization' header is provided in an invalid format.",
        token_sent=True,
    )


def invalid_token(
    settings: AuthSettings, message: str = "The access token is invalid.", code: str = "InvalidAuthenticationToken"
) -> ApiError:
    return unauthenticated(settings, code, message, token_sent=True)


def forbidden(principal: Principal, action: str, scope: str) -> ApiError:
    return ApiError(
        403,
        "AuthorizationFailed",
        (
            f"The client '{principal.client}' with object id '{principal.object_id}' does not have authorization to "
            f"perform action '{action}' over scope '{scope}' or the scope is invalid. If access was recently granted, "
            "please refresh your credentials."
        ),
    )
