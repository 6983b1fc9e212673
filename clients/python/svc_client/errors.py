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
    """An error answer of the API (or a failure to get one); the base of every error of the client.

    Attributes:
        status: HTTP status (0 when no answer came).
        code: the envelope's machine code (``bad_request``, ``forbidden``…); without one, the code of
            the status (``STATUS_CODES``), ``http_<status>``, or ``connection_failed`` without an answer.
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
    """400 ``bad_request`` / ``unsupported_api_version``, 413 ``payload_too_large``, 422: the request was refused as invalid."""


class ReadinessError(SvcError):
    """400/409/422 from a readiness operation (operation id containing ``Readiness``)."""


class VerificationError(SvcError):
    """400/409/422 from a verification operation (id starting with ``verify``, or containing ``Verify`` or ``Assure``)."""


class SecurityError(SvcError):
    """400/409/422 from a trust or secret operation (group ``trust``, paths under ``/v1/trust``, ``/v1/secrets``, ending ``/trust``)."""


class SvcPermissionError(SvcError, builtins.PermissionError):
    """401 ``unauthorized``, 403 ``forbidden`` / ``tenant_mismatch``; also a built-in ``PermissionError``."""


class AuthenticationError(SvcPermissionError):
    """401 ``unauthorized``: no credential, or one the agent does not accept."""


class SvcConnectionError(SvcError, builtins.ConnectionError):
    """No answer (network failure, DNS, refused, timeout: status 0, code ``connection_failed``), or the
    target is unreachable: 502 ``upstream_error``, 503 ``agent_offline``, 504 ``gateway_timeout``.
    Also a built-in ``ConnectionError``."""


class NotFoundError(SvcError):
    """404 ``not_found``: unknown route or resource."""


class ConflictError(SvcError):
    """409 ``conflict`` (from an operation that is not a readiness, verification or trust one)."""


class RateLimitError(SvcError):
    """429 ``rate_limited``; ``retry_after`` holds the seconds to wait when the agent said."""

    @property
    def retry_after(self) -> Optional[float]:
        if isinstance(self.body, dict) and isinstance(self.body.get("retry_after_secs"), (int, float)):
            return float(self.body["retry_after_secs"])
        return None


class ServerError(SvcError):
    """500 ``internal_error`` and other 5xx answers that are not about reachability."""


STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    413: "payload_too_large",
    429: "rate_limited",
    500: "internal_error",
    502: "upstream_error",
    503: "agent_offline",
    504: "gateway_timeout",
}
"""The code of an answer whose body carries none."""

_CONNECTION_CODES = ("upstream_error", "agent_offline", "gateway_timeout", "connection_failed")
_READINESS_ID = re.compile(r"Readiness")
_VERIFICATION_ID = re.compile(r"^verify|Verify|Assure")
_SECURITY_PATH = re.compile(r"^/v1/(trust|secrets)(/|$)|/trust$")


def error_class(
    status: int,
    code: Optional[str],
    operation: Optional[str] = None,
    path: Optional[str] = None,
    group: Optional[str] = None,
) -> type:
    """The class for an answer (status, envelope code) of an operation (id, path template, group).

    The same rules as the TypeScript client (``clients/typescript/src/errors.ts``); the Python client
    adds subclasses where those say ``SvcError`` or ``PermissionError`` (``AuthenticationError``,
    ``NotFoundError``, ``ConflictError``, ``RateLimitError``, ``ServerError``).
    """
    if status == 0 or code in _CONNECTION_CODES or status in (502, 503, 504):
        return SvcConnectionError
    if status in (401, 403) or code in ("unauthorized", "forbidden", "tenant_mismatch"):
        return AuthenticationError if status == 401 or code == "unauthorized" else SvcPermissionError
    op_id = operation or ""
    if status in (400, 409, 422):
        if _READINESS_ID.search(op_id):
            return ReadinessError
        if _VERIFICATION_ID.search(op_id):
            return VerificationError
        if group == "trust" or _SECURITY_PATH.search(path or ""):
            return SecurityError
    if status in (400, 413, 422) or code in ("bad_request", "payload_too_large"):
        return ValidationError
    if status == 404:
        return NotFoundError
    if status == 409:
        return ConflictError
    if status == 429:
        return RateLimitError
    if status >= 500:
        return ServerError
    return SvcError


def error_from_response(status: int, body: Any, operation: Optional[str] = None) -> SvcError:
    """The error for an answer with a non-2xx ``status`` and its decoded ``body`` (of the operation with that contract id)."""
    from ._operations import OPERATIONS

    envelope = body if isinstance(body, dict) else {}
    code = envelope.get("code") if isinstance(envelope.get("code"), str) else STATUS_CODES.get(status, f"http_{status}")
    if isinstance(envelope.get("error"), str):
        message = envelope["error"]
    elif isinstance(envelope.get("message"), str):
        message = envelope["message"]
    elif isinstance(body, str) and body.strip():
        message = body.strip()[:500]
    else:
        message = f"HTTP {status}"
    op = OPERATIONS.get(operation or "")
    cls = error_class(status, code, operation, op.path if op else None, op.group if op else None)
    return cls(status, code, message, body, operation)


# Aliases: `from svc_client.errors import PermissionError` gives the client's class, which is also a
# built-in PermissionError. Not in __all__, so `import *` never shadows the built-ins.
PermissionError = SvcPermissionError
ConnectionError = SvcConnectionError

__all__ = [
    "ERROR_CODES",
    "STATUS_CODES",
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
