"""Tests of the Python client: unit tests against a local http.server, and live tests against a real agent.

Live tests run when SVC_TEST_BASE_URL is set (the vitest suite, test/clients-py/python-client.test.ts,
starts an agent and sets it); otherwise they are skipped, unless SVC_TEST_REQUIRE_LIVE=1 makes that a failure.

    SVC_TEST_BASE_URL   the agent, e.g. http://127.0.0.1:8080 (or http://RELAY/agents/{id})
    SVC_TEST_ADMIN_KEY  an administrator key
    SVC_TEST_OPERATOR_KEY  a key whose role holds Operate
    SVC_TEST_VIEWER_KEY    a key whose role lacks Operate (e.g. guest)
    SVC_TEST_PROGRAM       optional: a program of the agent's project (programs/patrol.sd of the demo)

Run: python3 -m unittest discover -s clients/python/tests -v
"""

import inspect
import json
import os
import socket
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import svc_client  # noqa: E402
from svc_client import (  # noqa: E402
    AuthenticationError,
    Client,
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
from svc_client import errors as errors_module  # noqa: E402

LIVE_URL = os.environ.get("SVC_TEST_BASE_URL", "").strip()
REQUIRE_LIVE = os.environ.get("SVC_TEST_REQUIRE_LIVE") == "1"


class _Handler(BaseHTTPRequestHandler):
    """Answers with what the test queued for the path; records every request."""

    server_version = "fake-agent"

    def log_message(self, *args):  # silence
        pass

    def _serve(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self.server.requests.append(
            {"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": raw}
        )
        status, body, content_type = self.server.answers.get(self.path.split("?")[0], (200, {"ok": True}, None))
        if isinstance(body, bytes):
            data = body
        else:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type or ("application/json" if not isinstance(body, str) else "text/plain"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class FakeAgentTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        cls.server.requests = []
        cls.server.answers = {}
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.url = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self):
        self.server.requests.clear()
        self.server.answers.clear()

    def answer(self, path, status, body, content_type=None):
        self.server.answers[path] = (status, body, content_type)

    def test_read_sends_version_header_and_no_authorization_without_key(self):
        self.answer("/v1/health", 200, {"ok": True, "status": "ok"})
        self.assertEqual(Client(self.url).get_health(), {"ok": True, "status": "ok"})
        req = self.server.requests[-1]
        self.assertEqual(req["method"], "GET")
        self.assertEqual(req["path"], "/v1/health")
        self.assertEqual(req["headers"]["x-svc-api-version"], "v1")
        self.assertEqual(req["headers"]["user-agent"], f"svc-client-python/{svc_client.__version__}")
        self.assertNotIn("authorization", req["headers"])

    def test_text_and_binary_answers(self):
        self.answer("/v1/health", 200, "graph TD; a-->b", "text/markdown; charset=utf-8")
        self.assertEqual(Client(self.url).get_health(), "graph TD; a-->b")
        pdf = b"%PDF-1.7\n\xe2\xe3\xcf\xd3"
        self.answer("/v1/health", 200, pdf, "application/pdf")
        self.assertEqual(Client(self.url).get_health(), pdf)

    def test_key_is_sent_as_bearer_on_reads_and_mutations(self):
        c = Client(self.url, api_key="k" * 64)
        c.list_devices()
        c.test_alert(message="hello")
        for req in self.server.requests:
            self.assertEqual(req["headers"]["authorization"], "Bearer " + "k" * 64)
        post = self.server.requests[-1]
        self.assertEqual((post["method"], post["path"]), ("POST", "/v1/alerts/test"))
        self.assertEqual(post["headers"]["content-type"], "application/json")
        self.assertEqual(json.loads(post["body"]), {"message": "hello"})

    def test_body_dict_and_keyword_fields_merge_and_unset_fields_are_not_sent(self):
        c = Client(self.url)
        c.test_alert({"message": "from dict", "extra": 1}, message="kw wins")
        self.assertEqual(json.loads(self.server.requests[-1]["body"]), {"message": "kw wins", "extra": 1})
        c.test_alert()
        self.assertEqual(json.loads(self.server.requests[-1]["body"]), {})

    def test_path_parameters_are_positional_and_escaped(self):
        Client(self.url).get_device("cam/1 x")
        self.assertEqual(self.server.requests[-1]["path"], "/v1/devices/cam%2F1%20x")
        with self.assertRaises(ValueError):
            Client(self.url).get_device("")

    def test_query_fields_are_encoded(self):
        op = next(o for o in svc_client.OPERATIONS.values() if o.method == "GET" and o.query_fields)
        name = svc_client.METHOD_NAMES[op.id]
        method = getattr(Client(self.url), name)
        args = ["x"] * len(op.path_params)
        first = op.query_fields[0]
        method(*args, query={first: True, "n": 3})
        path = self.server.requests[-1]["path"]
        self.assertIn("?", path)
        self.assertIn(f"{first}=true", path)
        self.assertIn("n=3", path)

    def test_relay_base_url_prefixes_the_path(self):
        Client.via_relay(self.url, "robot-7").list_devices()
        self.assertEqual(self.server.requests[-1]["path"], "/agents/robot-7/v1/devices")
        Client(self.url + "/agents/robot-8/").get_health()
        self.assertEqual(self.server.requests[-1]["path"], "/agents/robot-8/v1/health")

    def test_errors_are_mapped_from_status_and_code(self):
        cases = [
            (400, "bad_request", "testAlert", ValidationError),
            (400, "unsupported_api_version", "getHealth", ValidationError),
            (413, "payload_too_large", "testAlert", ValidationError),
            (401, "unauthorized", "testAlert", AuthenticationError),
            (403, "forbidden", "testAlert", SvcPermissionError),
            (403, "tenant_mismatch", "listDevices", SvcPermissionError),
            (404, "not_found", "getDevice", NotFoundError),
            (400, "not_found", "getDevice", ValidationError),
            (502, "upstream_error", "listDevices", SvcConnectionError),
            (409, "conflict", "patchDevice", ConflictError),
            (429, "rate_limited", "listDevices", RateLimitError),
            (500, "internal_error", "listDevices", ServerError),
            (503, "agent_offline", "listDevices", SvcConnectionError),
            (504, "gateway_timeout", "listDevices", SvcConnectionError),
        ]
        paths = {"testAlert": "/v1/alerts/test", "getHealth": "/v1/health", "listDevices": "/v1/devices", "getDevice": "/v1/devices/d1", "patchDevice": "/v1/devices/d1"}
        c = Client(self.url)
        for status, code, op, cls in cases:
            with self.subTest(status=status, code=code):
                self.answer(paths[op], status, {"ok": False, "error": f"boom {code}", "code": code, "retry_after_secs": 7})
                call = {
                    "testAlert": lambda: c.test_alert(message="x"),
                    "getHealth": c.get_health,
                    "listDevices": c.list_devices,
                    "getDevice": lambda: c.get_device("d1"),
                    "patchDevice": lambda: c.patch_device("d1", lifecycle_state="active"),
                }[op]
                with self.assertRaises(cls) as ctx:
                    call()
                err = ctx.exception
                self.assertIs(type(err), cls)
                self.assertIsInstance(err, SvcError)
                self.assertEqual((err.status, err.code, err.message, err.operation), (status, code, f"boom {code}", op))
                self.assertEqual(err.body["code"], code)
                if cls is RateLimitError:
                    self.assertEqual(err.retry_after, 7.0)

    def test_readiness_verification_and_security_refinements(self):
        ec = errors_module.error_class
        # The same rules as the TypeScript client (clients/typescript/src/errors.ts).
        self.assertIs(ec(400, "bad_request", "runReadiness"), ReadinessError)
        self.assertIs(ec(409, "conflict", "evaluateProgramReadiness"), ReadinessError)
        self.assertIs(ec(422, None, "verifyProgramHardware"), VerificationError)
        self.assertIs(ec(400, "bad_request", "evaluateProgramAssure"), VerificationError)
        self.assertIs(ec(400, "bad_request", "x", "/v1/trust/packages"), SecurityError)
        self.assertIs(ec(409, "conflict", "x", "/v1/secrets"), SecurityError)
        self.assertIs(ec(400, "bad_request", "x", "/v1/fleet/x", "trust"), SecurityError)
        self.assertIs(ec(404, "not_found", "runReadiness"), NotFoundError)
        self.assertIs(ec(403, "forbidden", "runReadiness"), SvcPermissionError)
        self.assertIs(ec(401, "unauthorized", "runReadiness"), AuthenticationError)
        # Through a call: the operation's id, path and group decide.
        for op_id, cls in (("runReadiness", ReadinessError), ("verifyProgramHardware", VerificationError)):
            if op_id in svc_client.OPERATIONS:
                err = errors_module.error_from_response(400, {"ok": False, "error": "no", "code": "bad_request"}, op_id)
                self.assertIs(type(err), cls, op_id)
        trust = [o for o in svc_client.OPERATIONS.values() if o.group == "trust" or o.path.startswith("/v1/secrets")]
        for o in trust[:3]:
            self.assertIsInstance(errors_module.error_from_response(409, {"code": "conflict", "error": "x"}, o.id), (SecurityError, ReadinessError, VerificationError))
        # Without a code in the body, the status names it.
        self.assertEqual(errors_module.error_from_response(429, None).code, "rate_limited")
        self.assertEqual(errors_module.error_from_response(418, "teapot").code, "http_418")

    def test_permission_and_connection_errors_are_also_builtin_exceptions(self):
        import builtins

        self.assertTrue(issubclass(SvcPermissionError, builtins.PermissionError))
        self.assertTrue(issubclass(SvcConnectionError, builtins.ConnectionError))
        self.assertIs(errors_module.PermissionError, SvcPermissionError)
        self.assertIs(errors_module.ConnectionError, SvcConnectionError)
        self.assertNotIn("PermissionError", errors_module.__all__)

    def test_non_json_error_body(self):
        self.answer("/v1/devices", 500, "Internal failure")
        with self.assertRaises(ServerError) as ctx:
            Client(self.url).list_devices()
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.message), (500, "internal_error", "Internal failure"))
        self.answer("/v1/devices", 502, "Bad Gateway")
        with self.assertRaises(SvcConnectionError) as ctx:
            Client(self.url).list_devices()
        self.assertEqual((ctx.exception.status, ctx.exception.code), (502, "upstream_error"))

    def test_list_query_values_are_comma_separated(self):
        op = next(o for o in svc_client.OPERATIONS.values() if o.method == "GET" and not o.path_params)
        Client(self.url).call(op.id, query={"health": ["degraded", "offline"], "flag": False})
        path = self.server.requests[-1]["path"]
        self.assertIn("health=degraded%2Coffline", path)
        self.assertIn("flag=false", path)

    def test_generic_call_by_id_or_python_name(self):
        c = Client(self.url)
        c.call("getDevice", "d9")
        self.assertEqual(self.server.requests[-1]["path"], "/v1/devices/d9")
        c.call("list_devices")
        self.assertEqual(self.server.requests[-1]["path"], "/v1/devices")
        with self.assertRaises(ValueError):
            c.call("noSuchOperation")


class ConnectionTest(unittest.TestCase):
    def test_connection_refused_is_a_connection_error(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        with self.assertRaises(SvcConnectionError) as ctx:
            Client(f"http://127.0.0.1:{port}", timeout=5).get_health()
        self.assertEqual(ctx.exception.status, 0)
        self.assertEqual(ctx.exception.code, "connection_failed")
        self.assertIsInstance(ctx.exception, ConnectionError)

    def test_timeout_is_a_connection_error(self):
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)  # accepts the connection, never answers
        try:
            with self.assertRaises(SvcConnectionError):
                Client(f"http://127.0.0.1:{srv.getsockname()[1]}", timeout=0.5).get_health()
        finally:
            srv.close()


class ConstructionTest(unittest.TestCase):
    def test_local(self):
        c = Client.local()
        self.assertEqual(c.base_url, "http://127.0.0.1:8080")
        self.assertIsNone(c.api_key)
        self.assertEqual(c.timeout, 30)
        self.assertEqual(Client.local(api_key="abc").api_key, "abc")

    def test_from_env(self):
        c = Client.from_env({"SVC_CONTROL_CENTER_URL": "http://relay:9000/agents/r1/", "SVC_API_KEY": "key-1"})
        self.assertEqual((c.base_url, c.api_key), ("http://relay:9000/agents/r1", "key-1"))
        d = Client.from_env({})
        self.assertEqual((d.base_url, d.api_key), ("http://127.0.0.1:8080", None))
        old = dict(os.environ)
        try:
            os.environ["SVC_CONTROL_CENTER_URL"] = "http://10.0.0.5:8080"
            os.environ["SVC_API_KEY"] = "from-process"
            e = Client.from_env()
            self.assertEqual((e.base_url, e.api_key), ("http://10.0.0.5:8080", "from-process"))
        finally:
            os.environ.clear()
            os.environ.update(old)

    def test_key_is_not_shown_in_repr(self):
        self.assertNotIn("secret", repr(Client("http://x", api_key="secret")))


class GeneratedSurfaceTest(unittest.TestCase):
    def test_every_operation_of_the_contract_has_a_method(self):
        with open(os.path.join(os.path.dirname(HERE), "svc_client", "_operations.json"), encoding="utf-8") as f:
            dump = json.load(f)
        ids = [o["id"] for o in dump["operations"]]
        self.assertEqual(len(ids), dump["count"])
        self.assertGreater(len(ids), 200)
        self.assertEqual(list(svc_client.OPERATIONS), ids)
        for o in dump["operations"]:
            op = svc_client.OPERATIONS[o["id"]]
            self.assertEqual((op.method, op.path, op.access), (o["method"], o["path"], o["access"]))
            method = getattr(Client, o["python"], None)
            self.assertTrue(callable(method), o["python"])
            self.assertEqual(svc_client.METHOD_NAMES[o["id"]], o["python"])
            params = list(inspect.signature(method).parameters.values())[1:]
            positional = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD and p.name != "body"]
            self.assertEqual(len(positional), len(op.path_params), o["id"])
            self.assertTrue(method.__doc__ and op.summary.split("\n")[0][:40] in method.__doc__, o["id"])


def _live(test):
    reason = "SVC_TEST_BASE_URL is not set (no live agent)"
    if LIVE_URL or REQUIRE_LIVE:
        return test
    return unittest.skip(reason)(test)


@_live
class LiveAgentTest(unittest.TestCase):
    """Against a real agent (SVC_TEST_BASE_URL)."""

    def setUp(self):
        if not LIVE_URL:
            self.fail("SVC_TEST_REQUIRE_LIVE=1 but SVC_TEST_BASE_URL is not set")
        self.admin = os.environ.get("SVC_TEST_ADMIN_KEY")
        self.operator = os.environ.get("SVC_TEST_OPERATOR_KEY") or self.admin
        self.viewer = os.environ.get("SVC_TEST_VIEWER_KEY")

    def test_live_reads(self):
        health = Client(LIVE_URL).get_health()
        self.assertTrue(health["ok"])
        self.assertIn("version", health)
        devices = Client(LIVE_URL, api_key=self.admin).list_devices()
        self.assertIsInstance(devices, dict)
        version = Client(LIVE_URL).call("getVersion") if "getVersion" in svc_client.OPERATIONS else None
        if version is not None:
            self.assertIsInstance(version, dict)

    def test_live_mutation_with_the_right_role(self):
        self.assertTrue(self.operator, "SVC_TEST_OPERATOR_KEY or SVC_TEST_ADMIN_KEY is needed")
        answer = Client(LIVE_URL, api_key=self.operator).test_alert(message="from the python client")
        self.assertIsInstance(answer, dict)
        alerts = Client(LIVE_URL, api_key=self.admin).list_alerts()
        self.assertIn("from the python client", json.dumps(alerts))

    def test_live_forbidden_for_a_viewer(self):
        self.assertTrue(self.viewer, "SVC_TEST_VIEWER_KEY is needed")
        with self.assertRaises(SvcPermissionError) as ctx:
            Client(LIVE_URL, api_key=self.viewer).test_alert(message="viewer")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (403, "forbidden"))
        self.assertIsInstance(ctx.exception, PermissionError)

    def test_live_unauthorized_without_key(self):
        with self.assertRaises(AuthenticationError) as ctx:
            Client(LIVE_URL).test_alert(message="anonymous")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (401, "unauthorized"))
        self.assertIsInstance(ctx.exception, SvcPermissionError)

    def test_live_bad_body_is_a_validation_error(self):
        with self.assertRaises(ValidationError) as ctx:
            Client(LIVE_URL, api_key=self.operator).test_alert(message="")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (400, "bad_request"))
        self.assertIn("message", ctx.exception.message)

    def test_live_unknown_id_is_not_found(self):
        with self.assertRaises(NotFoundError) as ctx:
            Client(LIVE_URL, api_key=self.admin).get_device("no-such-device-from-python")
        self.assertEqual((ctx.exception.status, ctx.exception.code), (404, "not_found"))

    def test_live_readiness_and_verification_refusals(self):
        c = Client(LIVE_URL, api_key=self.admin)
        program = os.environ.get("SVC_TEST_PROGRAM")  # a program of the agent's project, when it has one
        if program:
            self.assertIn("report", c.evaluate_program_readiness(file=program))
        with self.assertRaises(ReadinessError) as ctx:
            c.evaluate_program_readiness(file="../outside-the-project.sd")
        self.assertEqual(ctx.exception.status, 400)
        with self.assertRaises(VerificationError) as ctx:
            c.verify_program_mission(file="../outside-the-project.sd")
        self.assertEqual(ctx.exception.status, 400)

    def test_live_query_parameters(self):
        c = Client(LIVE_URL)
        catalogue = c.list_deployment_profiles()
        self.assertGreater(len(catalogue["profiles"]), 1)
        one = c.list_deployment_profiles(name="Search & Rescue")
        self.assertIn("profile", one)
        self.assertEqual(one, c.list_deployment_profiles(query={"name": "Search & Rescue"}))

    def test_live_unsupported_api_version(self):
        c = Client(LIVE_URL, headers={"X-Svc-Api-Version": "v9"})
        with self.assertRaises(ValidationError) as ctx:
            c.list_alerts()
        self.assertEqual(ctx.exception.code, "unsupported_api_version")


if __name__ == "__main__":
    unittest.main()
