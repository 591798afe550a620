"""Bearer token validation with PyJWT and its JWKS client: signature, issuer, audience, lifetime.

Contract: `TokenValidator.principal(headers)` returns the caller named by a valid Entra ID access token in
the `Authorization: Bearer` header, or raises a 401 ApiError (ARM's codes) and never anything else for a bad
token. Checked: an RS256 signature by a key of the tenant's JWKS (found through the OIDC metadata document
at `metadata_url`), `iss` one of the accepted issuers, `aud` one of the app's own audiences, `exp`/`nbf` with
`clock_skew_seconds` of leeway, and an `oid` claim. The metadata is cached for a day; PyJWKClient caches the
key set and refetches it for an unknown `kid` at most once per cooldown, so forged `kid`s cannot make us
hammer the tenant's endpoint. When the metadata or keys cannot be fetched the answer is 503: no token is
accepted unchecked.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import jwt
import requests

from ..errors import ApiError
from ..settings import AuthSettings
from . import errors
from .principal import Principal

_ALGORITHMS = ["RS256"]  # what Entra ID signs access tokens with; never "none" or an HMAC (key confusion)
_MAX_TOKEN_CHARS = 16_384
_METADATA_TTL = 24 * 3600.0
_FETCH_TIMEOUT = 10.0


class TokenValidator:
    def __init__(self, settings: AuthSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._fetched_at = 0.0
        self._issuers: tuple[str, ...] = ()
        self._keys: jwt.PyJWKClient | None = None

    def principal(self, headers: Mapping[str, str]) -> Principal:
        token = self._bearer(headers)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise errors.invalid_token(self.settings) from exc
        if header.get("alg") not in _ALGORITHMS or not isinstance(header.get("kid"), str):
            raise errors.invalid_token(self.settings)
        keys, issuers = self._key_source()
        try:
            key = keys.get_signing_key(header["kid"])
        except jwt.PyJWKClientConnectionError as exc:
            raise _unavailable() from exc
        except jwt.PyJWKClientError as exc:  # no key with this kid: not signed by the tenant
            raise errors.invalid_token(self.settings) from exc
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=_ALGORITHMS,
                audience=list(self.settings.audiences),
                issuer=list(issuers),
                leeway=self.settings.clock_skew_seconds,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise self._expired(token) from exc
        except jwt.InvalidAudienceError as exc:
            raise errors.invalid_token(
                self.settings,
                (
                    f"The access token has been obtained for wrong audience or resource "
                    f"'{_claim(token, 'aud')}'. It should exactly match with one of the allowed audiences "
                    f"'{', '.join(self.settings.audiences)}'."
                ),
                "InvalidAuthenticationTokenAudience",
            ) from exc
        except jwt.InvalidIssuerError as exc:
            raise errors.invalid_token(
                self.settings,
                (
                    f"The access token is from the wrong issuer '{_claim(token, 'iss')}'. It must match the tenant "
                    f"'{self.settings.authorization_uri}' associated with this service. Please use the authority "
                    f"(URL) '{self.settings.authorization_uri}' to get the token."
                ),
                "InvalidAuthenticationTokenTenant",
            ) from exc
        except jwt.PyJWTError as exc:  # bad signature, not yet valid, missing claims, malformed
            raise errors.invalid_token(self.settings) from exc
        principal = Principal.from_claims(claims)
        if principal is None:
            raise errors.invalid_token(self.settings, "The access token has no object id ('oid') claim.")
        return principal

    def _bearer(self, headers: Mapping[str, str]) -> str:
        value = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
        if value is None or not value.strip():
            raise errors.missing_header(self.settings)
        scheme, _, token = value.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token or " " in token or len(token) > _MAX_TOKEN_CHARS:
            raise errors.malformed_header(self.settings)
        return token

    def _expired(self, token: str) -> ApiError:
        exp = _claim(token, "exp")
        expiry = datetime.fromtimestamp(exp, UTC).strftime("%m/%d/%Y %H:%M:%S") if isinstance(exp, int) else "?"
        now = datetime.now(UTC).strftime("%m/%d/%Y %H:%M:%S")
        return errors.invalid_token(
            self.settings,
            f"The access token expiry UTC time '{expiry}' is earlier than current UTC time '{now}'.",
            "ExpiredAuthenticationToken",
        )

    def _key_source(self) -> tuple[jwt.PyJWKClient, tuple[str, ...]]:
        """The JWKS client and the accepted issuers, from the OIDC metadata (fetched at most once a day)."""
        with self._lock:
            if self._keys is None or time.monotonic() - self._fetched_at > _METADATA_TTL:
                try:
                    self._load_metadata()
                except (requests.RequestException, ValueError, KeyError, TypeError) as exc:
                    if self._keys is None:
                        raise _unavailable() from exc
                    self._fetched_at = time.monotonic()  # keep the known keys; try again tomorrow
            assert self._keys is not None
            return self._keys, self._issuers

    def _load_metadata(self) -> None:
        assert self.settings.metadata_url is not None
        response = requests.get(self.settings.metadata_url, timeout=_FETCH_TIMEOUT, allow_redirects=False)
        response.raise_for_status()
        document = response.json()
        jwks_uri, issuer = str(document["jwks_uri"]), str(document["issuer"])
        tenant = self.settings.tenant_id
        if tenant:  # "common"-style metadata says {tenantid}; ours is one tenant's
            issuer = issuer.replace("{tenantid}", tenant)
        # v2.0 tokens carry the metadata's issuer; v1.0 tokens (an app whose accessTokenAcceptedVersion is
        # unset) carry sts.windows.net's. Both are signed with the same keys.
        defaults = (issuer, f"https://sts.windows.net/{tenant}/") if tenant else (issuer,)
        self._issuers = self.settings.issuers or defaults
        if self._keys is None or self._keys.uri != jwks_uri:
            self._keys = jwt.PyJWKClient(jwks_uri, cache_jwk_set=True, lifespan=3600, timeout=_FETCH_TIMEOUT)
        self._fetched_at = time.monotonic()


def _claim(token: str, name: str) -> Any:
    try:
        value = jwt.decode(token, options={"verify_signature": False}).get(name)
    except jwt.PyJWTError:
        return None
    return value[:200] if isinstance(value, str) else value


def _unavailable() -> ApiError:
    return ApiError(
        503,
        "ServiceUnavailable",
        "The signing keys of the identity provider could not be fetched, so the access token cannot be "
        "validated now. Please retry.",
        {"Retry-After": "10"},
    )


_lock = threading.Lock()
_validators: dict[AuthSettings, TokenValidator] = {}


def validator_for(settings: AuthSettings) -> TokenValidator:
    """One validator (and so one key cache) per distinct auth settings in this process."""
    with _lock:
        found = _validators.get(settings)
        if found is None:
            found = _validators[settings] = TokenValidator(settings)
        return found
