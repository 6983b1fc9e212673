import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConnectionError,
  PermissionError,
  ReadinessError,
  SecurityError,
  SvcClient,
  SvcError,
  ValidationError,
  VerificationError,
  errorClassFor,
} from '../../clients/typescript/src/index.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

const KEYS = { admin: 'c1'.repeat(32), operator: 'c2'.repeat(32), auditor: 'c3'.repeat(32) };
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function agentWith(env: Record<string, string> = {}): Promise<RunningAgent> {
  const stateDir = tempDir('svc-client-ts-');
  const keys = path.join(stateDir, 'keys.json');
  fs.writeFileSync(keys, JSON.stringify(Object.entries(KEYS).map(([role, token]) => ({ key_id: role, token, role: role === 'admin' ? 'administrator' : role }))));
  const a = await startAgent({ stateDir, env: { SVC_API_KEYS_FILE: keys, ...env } });
  running.push(a);
  return a;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function rejection(p: Promise<unknown>): Promise<SvcError> {
  try {
    await p;
  } catch (err) {
    return err as SvcError;
  }
  throw new Error('expected a rejection');
}

describe('SvcClient against a live agent', () => {
  it('reads with and without a key, and a mutation with a key of a role that holds the action', async () => {
    const a = await agentWith({ SVC_API_REQUIRE_AUTH_READS: '1' });
    const anon = new SvcClient({ baseUrl: a.baseUrl });
    const version = await anon.getVersion();
    expect(version).toMatchObject({ api_version: 'v1' });
    // a sensitive read refuses anonymous callers under SVC_API_REQUIRE_AUTH_READS and answers a key
    const refused = await rejection(anon.listDevices());
    expect(refused).toBeInstanceOf(PermissionError);
    expect(refused.status).toBe(401);
    const auditor = new SvcClient({ baseUrl: a.baseUrl, apiKey: KEYS.auditor });
    const devices = await auditor.listDevices();
    expect(devices).toBeTruthy();

    const operator = new SvcClient({ baseUrl: a.baseUrl, apiKey: KEYS.operator });
    await operator.testAlert({ message: 'from the TypeScript client' });
    const alerts = await auditor.listAlerts();
    expect(JSON.stringify(alerts)).toContain('from the TypeScript client');
  });

  it('maps errors: 400 → ValidationError, 401/403 → PermissionError, 404 → SvcError not_found, refused → ConnectionError', async () => {
    const a = await agentWith();
    const operator = new SvcClient({ baseUrl: a.baseUrl, apiKey: KEYS.operator });
    const bad = await rejection(operator.testAlert({ message: '' }));
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad.status).toBe(400);
    expect(bad.code).toBe('bad_request');
    expect(bad.operation).toBe('testAlert');
    expect(bad.body).toMatchObject({ ok: false, code: 'bad_request' });

    const unauth = await rejection(new SvcClient({ baseUrl: a.baseUrl }).testAlert({ message: 'x' }));
    expect(unauth).toBeInstanceOf(PermissionError);
    expect([unauth.status, unauth.code]).toEqual([401, 'unauthorized']);

    const forbidden = await rejection(new SvcClient({ baseUrl: a.baseUrl, apiKey: KEYS.auditor }).testAlert({ message: 'x' }));
    expect(forbidden).toBeInstanceOf(PermissionError);
    expect([forbidden.status, forbidden.code]).toEqual([403, 'forbidden']);

    const missing = await rejection(new SvcClient({ baseUrl: a.baseUrl, apiKey: KEYS.admin }).getDevice('no-such-device'));
    expect(missing.constructor).toBe(SvcError);
    expect([missing.status, missing.code]).toEqual([404, 'not_found']);
    expect(missing.message).toBeTruthy();

    const port = await freePort();
    const down = await rejection(new SvcClient({ baseUrl: `http://127.0.0.1:${port}` }).getHealth());
    expect(down).toBeInstanceOf(ConnectionError);
    expect([down.status, down.code]).toEqual([0, 'connection_failed']);
  });

  it('path parameters are encoded, query parameters serialised, and request() reaches any path', async () => {
    const a = await agentWith();
    const admin = new SvcClient({ baseUrl: `${a.baseUrl}/`, apiKey: KEYS.admin });
    const missing = await rejection(admin.getDevice('a/b c'));
    expect(missing.status).toBe(404);
    const health = await admin.request('GET', '/v1/health');
    expect(health).toBeTruthy();
  });
});

describe('SvcClient without an agent', () => {
  function recorder(status = 200, body: unknown = { ok: true }) {
    const calls: { url: string; init: RequestInit }[] = [];
    const fetch = async (url: string, init: RequestInit = {}) => {
      calls.push({ url, init });
      return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    };
    return { calls, fetch };
  }

  it('local() targets http://127.0.0.1:8080; fromEnv reads SVC_CONTROL_CENTER_URL and SVC_API_KEY', () => {
    expect(SvcClient.local().baseUrl).toBe('http://127.0.0.1:8080');
    expect(SvcClient.local({ apiKey: 'k' }).apiKey).toBe('k');
    const c = SvcClient.fromEnv({ SVC_CONTROL_CENTER_URL: 'http://relay.example:9000/agents/robot-1/', SVC_API_KEY: 'secret' });
    expect(c.baseUrl).toBe('http://relay.example:9000/agents/robot-1');
    expect(c.apiKey).toBe('secret');
    const d = SvcClient.fromEnv({});
    expect([d.baseUrl, d.apiKey]).toEqual(['http://127.0.0.1:8080', undefined]);
    // Without an argument it reads process.env (Node); browsers pass their own object.
    const saved = { url: process.env.SVC_CONTROL_CENTER_URL, key: process.env.SVC_API_KEY };
    try {
      process.env.SVC_CONTROL_CENTER_URL = 'http://10.1.2.3:8080';
      process.env.SVC_API_KEY = 'from-process-env';
      const e = SvcClient.fromEnv();
      expect([e.baseUrl, e.apiKey]).toEqual(['http://10.1.2.3:8080', 'from-process-env']);
    } finally {
      if (saved.url === undefined) delete process.env.SVC_CONTROL_CENTER_URL;
      else process.env.SVC_CONTROL_CENTER_URL = saved.url;
      if (saved.key === undefined) delete process.env.SVC_API_KEY;
      else process.env.SVC_API_KEY = saved.key;
    }
    expect(() => new SvcClient({ baseUrl: '' })).toThrow(/baseUrl/);
  });

  it('sends the key as Bearer on mutations and reads, X-Svc-Api-Version: v1, and JSON bodies; a relay base URL prefixes paths', async () => {
    const r = recorder();
    const c = new SvcClient({ baseUrl: 'http://relay.test/agents/robot-7', apiKey: 'KEY', fetch: r.fetch, headers: { 'x-extra': '1' } });
    await c.getDevice('dev 1', { include: 'state' });
    await c.testAlert({ message: 'hi' });
    await c.listEntities({ health: 'degraded', tag: undefined });
    await c.request('GET', '/v1/entities', { query: { health: ['degraded', 'offline'], n: 3 } });
    expect(r.calls[0]!.url).toBe('http://relay.test/agents/robot-7/v1/devices/dev%201?include=state');
    expect(r.calls[2]!.url).toBe('http://relay.test/agents/robot-7/v1/entities?health=degraded');
    expect(r.calls[3]!.url).toBe('http://relay.test/agents/robot-7/v1/entities?health=degraded%2Coffline&n=3');
    r.calls.splice(2);
    expect(r.calls[1]!.url).toBe('http://relay.test/agents/robot-7/v1/alerts/test');
    for (const call of r.calls) {
      const h = call.init.headers as Record<string, string>;
      expect(h.authorization).toBe('Bearer KEY');
      expect(h['x-svc-api-version']).toBe('v1');
      expect(h['x-extra']).toBe('1');
    }
    expect(r.calls[1]!.init.method).toBe('POST');
    expect(r.calls[1]!.init.body).toBe('{"message":"hi"}');
    expect((r.calls[1]!.init.headers as Record<string, string>)['content-type']).toBe('application/json');

    const anon = recorder();
    await new SvcClient({ baseUrl: 'http://x', fetch: anon.fetch }).getHealth();
    expect((anon.calls[0]!.init.headers as Record<string, string>).authorization).toBeUndefined();
  });

  it('maps the relay answers and the operation-specific errors', async () => {
    const offline = recorder(503, { ok: false, error: 'agent robot-7 is offline', code: 'agent_offline' });
    const e = await rejection(new SvcClient({ baseUrl: 'http://relay.test/agents/robot-7', fetch: offline.fetch }).getHealth());
    expect(e).toBeInstanceOf(ConnectionError);
    expect([e.status, e.code, e.message]).toEqual([503, 'agent_offline', 'agent robot-7 is offline']);
    expect(errorClassFor(504, 'gateway_timeout')).toBe(ConnectionError);
    expect(errorClassFor(400, 'bad_request', { id: 'evaluateProgramReadiness' })).toBe(ReadinessError);
    expect(errorClassFor(409, 'conflict', { id: 'runReadiness' })).toBe(ReadinessError);
    expect(errorClassFor(400, 'bad_request', { id: 'verifyProgramHardware' })).toBe(VerificationError);
    expect(errorClassFor(422, 'bad_request', { id: 'evaluateProgramAssure' })).toBe(VerificationError);
    expect(errorClassFor(400, 'bad_request', { id: 'rotateSecret', path: '/v1/secrets/{name}/rotate' })).toBe(SecurityError);
    expect(errorClassFor(400, 'bad_request', { id: 'trustDevice', path: '/v1/devices/{id}/trust' })).toBe(SecurityError);
    expect(errorClassFor(403, 'tenant_mismatch')).toBe(PermissionError);
    expect(errorClassFor(409, 'conflict', { id: 'patchDevice' })).toBe(SvcError);
    expect(errorClassFor(413, 'payload_too_large')).toBe(ValidationError);
    const readiness = recorder(400, { ok: false, error: 'file is required', code: 'bad_request' });
    const re = await rejection(new SvcClient({ baseUrl: 'http://x', fetch: readiness.fetch }).evaluateProgramReadiness({} as never));
    expect(re).toBeInstanceOf(ReadinessError);
    expect(re).toBeInstanceOf(SvcError);
  });
});
