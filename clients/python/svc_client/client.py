"""The runtime of the svc control center client: HTTP over ``urllib.request``, JSON in and out.

The methods (one per operation of the contract) come from the generated ``_operations.py``.
"""

import http.client
import json
import os
import socket
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional, Tuple

from ._operations import API_VERSION, OPERATIONS, UNSET, GeneratedOperations, Operation, __version__
from .errors import SvcConnectionError, SvcError, error_from_response

LOCAL_URL = "http://127.0.0.1:8080"
ENV_URL = "SVC_CONTROL_CENTER_URL"
ENV_KEY = "SVC_API_KEY"


def _query_value(value: Any) -> str:
    """One query value: booleans as true/false, a list comma-separated (the agent reads one value per
    name: ``health=degraded,offline``), a dict as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set)):
        return ",".join(_query_value(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


class Client(GeneratedOperations):
    """A client of one agent's ``/v1`` API, directly or through the relay.

    Args:
        base_url: the agent (``http://robot.local:8080``) or an agent through the relay
            (``http://RELAY/agents/{agent_id}``); ``/v1/...`` paths are appended to it.
        api_key: sent as ``Authorization: Bearer`` on every call when set (mutations need one;
            reads send it too, for agents that require a principal on reads).
        timeout: seconds per request (a call's ``timeout=`` overrides it).
        headers: extra headers sent on every request.
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        timeout: float = 30,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        if not base_url or not isinstance(base_url, str):
            raise ValueError("base_url is required, e.g. http://127.0.0.1:8080")
        if "://" not in base_url:
            base_url = "http://" + base_url
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key or None
        self.timeout = timeout
        self.headers: Dict[str, str] = dict(headers or {})

    @classmethod
    def local(cls, api_key: Optional[str] = None, timeout: float = 30) -> "Client":
        """The agent on this machine: ``http://127.0.0.1:8080``."""
        return cls(LOCAL_URL, api_key=api_key, timeout=timeout)

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, timeout: float = 30) -> "Client":
        """From ``SVC_CONTROL_CENTER_URL`` (default ``http://127.0.0.1:8080``) and ``SVC_API_KEY``."""
        env = os.environ if environ is None else environ
        url = (env.get(ENV_URL) or "").strip() or LOCAL_URL
        key = (env.get(ENV_KEY) or "").strip() or None
        return cls(url, api_key=key, timeout=timeout)

    @classmethod
    def via_relay(cls, relay_url: str, agent_id: str, api_key: Optional[str] = None, timeout: float = 30) -> "Client":
        """An agent through the relay: ``{relay_url}/agents/{agent_id}``."""
        return cls(f"{relay_url.rstrip('/')}/agents/{urllib.parse.quote(agent_id, safe='')}", api_key=api_key, timeout=timeout)

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, api_key={'***' if self.api_key else None})"

    # -- generic calls -------------------------------------------------------------------------

    def call(
        self,
        op_id: str,
        *path_args: Any,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Any:
        """Calls an operation by its contract id (``"listDevices"``) or Python name (``"list_devices"``)."""
        op = OPERATIONS.get(op_id)
        if op is None:
            from ._operations import METHOD_NAMES

            by_name = {v: k for k, v in METHOD_NAMES.items()}
            if op_id not in by_name:
                raise ValueError(f"unknown operation {op_id!r}")
            op = OPERATIONS[by_name[op_id]]
        return self._invoke(op.id, tuple(path_args), body, {}, dict(query) if query else None, {}, timeout)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
        operation: Optional[str] = None,
    ) -> Any:
        """One HTTP request to ``base_url + path``; returns the decoded JSON (or text) answer.

        Raises a :class:`~svc_client.errors.SvcError` subclass for any non-2xx answer and
        :class:`~svc_client.errors.SvcConnectionError` when the agent cannot be reached.
        """
        url = self.base_url + path
        if query:
            pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None and v is not UNSET]
            if pairs:
                url += ("&" if "?" in url else "?") + urllib.parse.urlencode(pairs)
        headers = {
            "Accept": "application/json",
            "User-Agent": f"svc-client-python/{__version__}",
            "X-Svc-Api-Version": API_VERSION,
            **self.headers,
        }
        data: Optional[bytes] = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode("utf-8")
            headers["Content-Type"] = "application/json"
        elif method in ("POST", "PUT", "PATCH"):
            data = b"{}"
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        limit = self.timeout if timeout is None else timeout
        try:
            with urllib.request.urlopen(req, timeout=limit) as res:
                return self._decode(res.status, res.headers.get("Content-Type"), res.read(), operation)
        except urllib.error.HTTPError as err:
            raw = err.read() if err.fp is not None else b""
            decoded = self._parse(err.headers.get("Content-Type") if err.headers else None, raw)
            raise error_from_response(err.code, decoded, operation) from None
        except (urllib.error.URLError, socket.timeout, OSError, http.client.HTTPException) as err:
            if isinstance(err, SvcError):
                raise
            reason = getattr(err, "reason", err)
            raise SvcConnectionError(0, "connection_failed", f"cannot reach {self.base_url}: {reason}", None, operation) from err

    @staticmethod
    def _parse(content_type: Optional[str], raw: bytes) -> Any:
        """JSON → the decoded value; text (text/*, Markdown, CSV, Mermaid…) → str; anything else
        (a PDF export…) → bytes; an empty body → None."""
        if not raw:
            return None
        kind = (content_type or "").split(";")[0].strip().lower()
        textual = kind == "" or "json" in kind or kind.startswith("text/") or kind.endswith("+xml") or kind in ("application/xml", "application/javascript")
        if not textual:
            return raw
        text = raw.decode("utf-8", errors="replace")
        if kind == "" or "json" in kind:
            try:
                return json.loads(text)
            except ValueError:
                pass
        return text

    def _decode(self, status: int, content_type: Optional[str], raw: bytes, operation: Optional[str]) -> Any:
        decoded = self._parse(content_type, raw)
        if status >= 400:
            raise error_from_response(status, decoded, operation)
        return decoded

    # -- the generated methods land here ----------------------------------------------------------

    def _invoke(
        self,
        op_id: str,
        path_args: Tuple[Any, ...],
        body: Optional[Any],
        body_fields: Dict[str, Any],
        query: Optional[Dict[str, Any]],
        query_fields: Dict[str, Any],
        timeout: Optional[float],
    ) -> Any:
        op: Operation = OPERATIONS[op_id]
        if len(path_args) != len(op.path_params):
            raise TypeError(f"{op_id} takes {len(op.path_params)} path parameter(s) {op.path_params}, got {len(path_args)}")
        path = op.path
        for name, value in zip(op.path_params, path_args):
            if value is None or value == "":
                raise ValueError(f"{op_id}: path parameter {name!r} is empty")
            path = path.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
        given = {k: v for k, v in body_fields.items() if v is not UNSET}
        if given:
            if body is not None and not isinstance(body, dict):
                raise TypeError(f"{op_id}: keyword body fields need a dict body, got {type(body).__name__}")
            body = {**(body or {}), **given}
        q = {**(query or {}), **{k: v for k, v in query_fields.items() if v is not UNSET}}
        return self.request(op.method, path, body=body, query=q or None, timeout=timeout, operation=op_id)
