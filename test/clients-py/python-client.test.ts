import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { waitForExit } from '../helpers/spawn-agent.js';
import { enroll, fleetAgent, Procs, relayKey, startAgentProc, startRelayProc, until } from '../relay-e2e/e2e-helpers.js';

/**
 * The Python client (clients/python) against a live agent serving the demo project: the suite's
 * `python3 -m unittest` run, with the agent's address and keys of three roles in the environment
 * (clients/python/tests/test_client.py). python3 is installed by scripts/test.sh; a machine without
 * it fails here rather than skipping.
 */
const REPO = path.resolve(__dirname, '../..');
const KEYS = { admin: 'e1'.repeat(32), operator: 'e2'.repeat(32), guest: 'e3'.repeat(32) };
let a: RunningAgent;

beforeAll(async () => {
  const root = tempDir('svc-clients-py-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'admin', token: KEYS.admin, role: 'administrator' },
      { key_id: 'ops', token: KEYS.operator, role: 'operator' },
      { key_id: 'viewer', token: KEYS.guest, role: 'guest' },
    ]),
  );
  a = await startAgent({ configPath: path.join(root, 'svc.toml'), programPath: path.join(root, 'programs', 'patrol.sd'), env: { SVC_API_KEYS_FILE: keys } });
});
afterAll(async () => a?.close());

/** Runs python3 asynchronously (the agent answers from this process's event loop). */
const LIVE_ENV = (base: string, admin: string, operator: string, viewer: string) => ({
  SVC_TEST_BASE_URL: base,
  SVC_TEST_ADMIN_KEY: admin,
  SVC_TEST_OPERATOR_KEY: operator,
  SVC_TEST_VIEWER_KEY: viewer,
  SVC_TEST_REQUIRE_LIVE: '1',
});

function python(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'python3',
      args,
      { cwd: REPO, env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8', ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? ((err as unknown as { code: number }).code) : (err as NodeJS.ErrnoException).code === 'ENOENT' ? -1 : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}${err && (err as NodeJS.ErrnoException).code === 'ENOENT' ? '\npython3 not found: scripts/test.sh installs it (Debian package python3)' : ''}` });
      },
    );
  });
}

const LIVE_TESTS = [
  'test_live_reads',
  'test_live_mutation_with_the_right_role',
  'test_live_forbidden_for_a_viewer',
  'test_live_unauthorized_without_key',
  'test_live_bad_body_is_a_validation_error',
  'test_live_unknown_id_is_not_found',
  'test_live_unsupported_api_version',
  'test_live_query_parameters',
  'test_live_readiness_and_verification_refusals',
];

function expectAllOk(r: { code: number | null; output: string }, names: string[]): void {
  expect(r.code, r.output).toBe(0);
  expect(r.output).toMatch(/\nOK\b/);
  expect(r.output, r.output).not.toMatch(/skipped|FAIL|ERROR/);
  for (const name of names) expect(r.output, name).toMatch(new RegExp(`${name} \\(.*\\) \\.\\.\\. ok`));
}

describe('Python client against a live agent', () => {
  it('python3 is 3.9 or newer', async () => {
    const r = await python(['-c', 'import sys; print(sys.version_info >= (3, 9))'], {});
    expect(r.output.trim(), r.output).toBe('True');
  });

  it('python3 -m unittest passes every test, the live ones included', async () => {
    const r = await python(['-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-v'], {
      ...LIVE_ENV(a.baseUrl, KEYS.admin, KEYS.operator, KEYS.guest),
      SVC_TEST_PROGRAM: 'programs/patrol.sd',
    });
    expectAllOk(r, [...LIVE_TESTS, 'test_connection_refused_is_a_connection_error', 'test_every_operation_of_the_contract_has_a_method', 'test_errors_are_mapped_from_status_and_code', 'test_local', 'test_from_env']);
  }, 180_000);

  it('the client reads the demo devices and raises a test alert the agent records', async () => {
    const script = [
      'import json, os, sys',
      "sys.path.insert(0, 'clients/python')",
      'from svc_client import Client',
      'c = Client.from_env()',
      'devices = c.list_devices()',
      "c.test_alert(message='python-was-here')",
      "print(json.dumps({'devices': devices}))",
    ].join('\n');
    const r = await python(['-c', script], { SVC_CONTROL_CENTER_URL: a.baseUrl, SVC_API_KEY: KEYS.operator });
    expect(r.code, r.output).toBe(0);
    const out = JSON.parse(r.output.trim().split('\n').pop()!);
    expect(JSON.stringify(out.devices).length).toBeGreaterThan(20);
    const alerts = await a.json('/v1/alerts');
    expect(JSON.stringify(alerts.body)).toContain('python-was-here');
  }, 60_000);
});

describe('Python client against an agent that requires a principal on sensitive reads', () => {
  let strict: RunningAgent;
  afterAll(async () => strict?.close());

  it('sends the key on reads: anonymous list_devices is an AuthenticationError, with the guest key it answers', async () => {
    const stateDir = tempDir('svc-clients-py-strict-');
    const keys = path.join(stateDir, 'keys.json');
    fs.writeFileSync(keys, JSON.stringify([{ key_id: 'viewer', token: KEYS.guest, role: 'guest' }]));
    strict = await startAgent({ stateDir, env: { SVC_API_KEYS_FILE: keys, SVC_API_REQUIRE_AUTH_READS: '1' } });
    const script = [
      "import sys; sys.path.insert(0, 'clients/python')",
      'from svc_client import AuthenticationError, Client',
      'url, key = sys.argv[1], sys.argv[2]',
      "print('health', Client(url).get_health()['ok'])",
      'try:',
      '    Client(url).list_devices()',
      "    print('anonymous answered')",
      'except AuthenticationError as e:',
      "    print('anonymous', e.status, e.code)",
      "print('keyed', type(Client(url, api_key=key).list_devices()).__name__)",
    ].join('\n');
    const r = await python(['-c', script, strict.baseUrl, KEYS.guest], {});
    expect(r.code, r.output).toBe(0);
    expect(r.output.trim().split('\n')).toEqual(['health True', 'anonymous 401 unauthorized', 'keyed dict']);
  }, 60_000);
});

describe('Python client through the relay (svc relay serve + svc serve --relay processes)', () => {
  const procs = new Procs();
  afterAll(async () => procs.cleanup());

  it('the live tests pass with base URL http://RELAY/agents/{id}; an agent gone offline is a connection error (503 agent_offline)', async () => {
    const relay = await startRelayProc(procs);
    const token = await enroll(relay, 'default', 'robot-py');
    const [admin, operator, viewer] = [await relayKey(relay, 'administrator', 'default'), await relayKey(relay, 'operator', 'default'), await relayKey(relay, 'auditor', 'default')];
    const agent = await startAgentProc(procs, relay.mqttUrl, token, 'default');
    await until('online', async () => (await fleetAgent(relay, operator.token, 'robot-py'))?.online);
    // Tenant `default`: the relay's tenant of anonymous callers, so the anonymous calls of the suite reach the agent too.
    const base = `${relay.baseUrl}/agents/robot-py`;
    const r = await python(['-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-v'], LIVE_ENV(base, admin.token, operator.token, viewer.token));
    expectAllOk(r, LIVE_TESTS);

    agent.child.kill('SIGKILL');
    await waitForExit(agent.child);
    await until('offline at the relay', async () => {
      const a = await fleetAgent(relay, operator.token, 'robot-py');
      return a && !a.online;
    }, 45_000, 50);
    const script = [
      "import sys; sys.path.insert(0, 'clients/python')",
      'from svc_client import Client, SvcConnectionError',
      'try:',
      "    Client.via_relay(sys.argv[1], 'robot-py', api_key=sys.argv[2]).get_health()",
      'except SvcConnectionError as e:',
      "    print('connection-error', e.status, e.code)",
    ].join('\n');
    const offline = await python(['-c', script, relay.baseUrl, operator.token], {});
    expect(offline.output.trim(), offline.output).toBe('connection-error 503 agent_offline');
  }, 120_000);
});
