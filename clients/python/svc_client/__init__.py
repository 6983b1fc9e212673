"""Python client of the svc control center API (standard library only).

    from svc_client import Client
    c = Client.local()                      # http://127.0.0.1:8080
    c = Client.from_env()                   # SVC_CONTROL_CENTER_URL, SVC_API_KEY
    c.get_health(); c.list_devices()
"""

from ._operations import API_VERSION, METHOD_NAMES, OPERATIONS, UNSET, Operation
from .client import ENV_KEY, ENV_URL, LOCAL_URL, Client, __version__
from .errors import (
    AuthenticationError,
    ConflictError,
    NotFoundError,
    RateLimitError,
    ReadinessError,
    SecurityError,
    ServerError,
    SvcConnectionError,
    SvcError,
    SvcPermissionError,
    ValidationError,
    VerificationError,
)

__all__ = [
    "API_VERSION",
    "METHOD_NAMES",
    "OPERATIONS",
    "UNSET",
    "Operation",
    "Client",
    "ENV_KEY",
    "ENV_URL",
    "LOCAL_URL",
    "__version__",
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
]
