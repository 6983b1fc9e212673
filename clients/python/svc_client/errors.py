"""Error classes of the svc control center client, mapped from the HTTP status and the envelope's `code`.

Every error the API answers is ``{"ok": false, "error": "<message>", "code": "<code>"}`` (docs/api.md
§ Errors; the codes are ``api/errors.ts#ERROR_CODES``). :func:`error_from_response` turns one into the
matching class below; all of them derive from :class:`SvcError`.

``SvcPermissionError`` and ``SvcConnectionError`` also derive from Python's built-in
``PermissionError`` and ``ConnectionError``, so ``except PermissionError`` catches a refused call too.
"""

import builtins
import re
from typing import Any, Optional

ERROR_CODES = (
    "bad_request",
    "conflict",
    "unsupported_api_version",
    "unauthorized",
    "forbidden",
    "tenant_mismatch",
    "not_found",
    "payload_too_large",
    "rate_limited",
    "internal_error",
    "upstream_error",
    "agent_offline",
    "gateway_timeout",
)


class SvcError(Exception):
    """An error answer of the API (or a failure to get one).

    Attributes:
        status: HTTP status (0 when no answer came: connection failure).
        code: the envelope's machine code (``bad_request``, ``forbidden``…), or None.
        message: the envelope's ``error`` text, or a description of the failure.
        body: the decoded answer (a dict for JSON, text otherwise), or None.
        operation: the contract id of the operation called, when known.
    """

    def __init__(
        self,
        status: int,
        code: Optional[str],
        message: str,
        body: Any = None,
        operation: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.body = body
        self.operation = operation

    def __str__(self) -> str:
        where = f" ({self.operation})" if self.operation else ""
        code = f" {self.code}" if self.code else ""
        return f"HTTP {self.status}{code}{where}: {self.message}" if self.status else f"{self.message}{where}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r})"


class ValidationError(SvcError):
    """400 ``bad_request`` / ``unsupported_api_version``, 413 ``payload_too_large``: the request was refused as invalid."""


class SvcPermissionError(SvcError, builtins.PermissionError):
    """401 ``unauthorized`` (no or invalid credential) or 403 ``forbidden`` (the role lacks the action)."""


class AuthenticationError(SvcPermissionError):
    """401 ``unauthorized``: no credential, or one the agent does not accept."""


class SecurityError(SvcPermissionError):
    """A security refusal: 403 ``tenant_mismatch``, or a rejected signature/trust check."""


class ReadinessError(SvcError):
    """A readiness or assurance gate refused the operation (400/409 from a readiness, assure or deploy operation)."""


class VerificationError(SvcError):
    """A verification failed (400/409 from a verify operation, or a failed verification reported by the agent)."""


class NotFoundError(SvcError):
    """404 ``not_found`` (unknown route or resource), or ``not_found`` under another status."""


class ConflictError(SvcError):
    """409 ``conflict``: the request conflicts with the current state."""


class RateLimitError(SvcError):
    """429 ``rate_limited``; ``retry_after`` holds the seconds to wait when the agent said."""

    @property
    def retry_after(self) -> Optional[float]:
        if isinstance(self.body, dict) and isinstance(self.body.get("retry_after_secs"), (int, float)):
            return float(self.body["retry_after_secs"])
        return None


class ServerError(SvcError):
    """5xx ``internal_error`` / ``upstream_error``: the agent failed."""


class SvcConnectionError(SvcError, builtins.ConnectionError):
    """The agent could not be reached: network failure or timeout (status 0), or the relay's
    503 ``agent_offline`` / 504 ``gateway_timeout``."""


# Operation ids (the contract's camelCase) whose refusals are a readiness or verification verdict.
_READINESS_OPS = re.compile(r"readiness|assure|ready|deploy|rollout|mission", re.I)
_VERIFICATION_OPS = re.compile(r"verif", re.I)
_SECURITY_MESSAGE = re.compile(r"signature|tamper|untrusted|not trusted", re.I)


def error_class(status: int, code: Optional[str], operation: Optional[str] = None, message: str = "") -> type:
    """The class for an error answer: the ``code`` first, then the status."""
    if status == 0 or code in ("agent_offline", "gateway_timeout") or (status in (503, 504) and code is None):
        return SvcConnectionError
    if code == "tenant_mismatch":
        return SecurityError
    if code == "unauthorized" or (code is None and status == 401):
        return AuthenticationError
    if code == "forbidden" or (code is None and status == 403):
        return SvcPermissionError
    if code == "not_found" or (code is None and status == 404):
        return NotFoundError
    if code == "rate_limited" or status == 429:
        return RateLimitError
    if status in (400, 409, 422) or code in ("bad_request", "conflict", "unsupported_api_version", "payload_too_large"):
        if _SECURITY_MESSAGE.search(message or ""):
            return SecurityError
        if operation and _VERIFICATION_OPS.search(operation):
            return VerificationError
        if operation and _READINESS_OPS.search(operation) and code != "unsupported_api_version":
            return ReadinessError
        if code == "conflict" or status == 409:
            return ConflictError
        return ValidationError
    if status == 413:
        return ValidationError
    if status >= 500:
        return ServerError
    return SvcError


def error_from_response(status: int, body: Any, operation: Optional[str] = None) -> SvcError:
    """The error for an answer with a non-2xx ``status`` and its decoded ``body``."""
    code = body.get("code") if isinstance(body, dict) and isinstance(body.get("code"), str) else None
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        message = body["error"]
    elif isinstance(body, str) and body.strip():
        message = body.strip()[:500]
    else:
        message = f"HTTP {status}"
    cls = error_class(status, code, operation, message)
    return cls(status, code, message, body, operation)


# Aliases: `from svc_client.errors import PermissionError` gives the client's class, which is also a
# built-in PermissionError. Not in __all__, so `import *` never shadows the built-ins.
PermissionError = SvcPermissionError
ConnectionError = SvcConnectionError

__all__ = [
    "ERROR_CODES",
    "SvcError",
    "ValidationError",
    "SvcPermissionError",
    "AuthenticationError",
    "SecurityError",
    "ReadinessError",
    "VerificationError",
    "NotFoundError",
    "ConflictError",
    "RateLimitError",
    "ServerError",
    "SvcConnectionError",
    "error_class",
    "error_from_response",
]
