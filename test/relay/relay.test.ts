/**
 * The relay on real parts (docs/relay.md): the embedded aedes broker and the relay's HTTP API on
 * loopback; agents played by real MQTT clients (mqtt.js) that follow api/relay-protocol.ts.
 */
import mqtt from 'mqtt';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relayTopics } from '../../api/relay-protocol.js';
import { RelayKeys } from '../../relay/keys.js';
import type { Relay } from '../../relay/server.js';
import { ADMIN_KEY, b64, call, createKey, echoHandler, enroll, FakeAgent, startRelay, tempDir, until, waitConnect } from './relay-helpers.js';

let relay: Relay;
let stop: () => Promise<void>;
let mqttUrl: string;
const agents: FakeAgent[] = [];
let acmeOperator: string;
let acmeAuditor: string;
let globexOperator: string;

async function agent(tenant: string, id: string, handler = echoHandler, extra: mqtt.IClientOptions = {}): Promise<FakeAgent> {
  const a = await FakeAgent.start(mqttUrl, tenant, id, await enroll(relay, tenant, id), handler, extra);
  agents.push(a);
  await until(() => relay.presence.get(tenant, id)?.online, `${id} online`);
  return a;
}

beforeAll(async () => {
  ({ relay, stop } = await startRelay());
  mqttUrl = `mqtt://127.0.0.1:${relay.mqttPort}`;
  acmeOperator = await createKey(relay, 'operator', 'acme');
  acmeAuditor = await createKey(relay, 'auditor', 'acme');
  globexOperator = await createKey(relay, 'operator', 'globex');
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop().catch(() => undefined)));
  await stop();
});

describe('enrollment', () => {
  it('a relay-signed token connects; the response carries the relay public key and no private part', async () => {
    const e = await enroll(relay, 'acme', 'robot-e1');
    expect(e.relay_public_key).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(e.relay_public_key).not.toHaveProperty('d');
    const client = FakeAgent.connectRaw(mqttUrl, 'acme', 'robot-e1', e.token);
    await waitConnect(client);
    await client.endAsync();
  });

  it('a token signed by another key, an expired token and garbage are refused at CONNECT', async () => {
    const other = tempDir();
    const forgedKeys = await RelayKeys.open(other.dir);
    const forged = (await forgedKeys.enroll('acme', 'robot-f', 3600)).token;
    const expired = (await relay.keys.enroll('acme', 'robot-x', -10)).token;
    for (const token of [forged, expired, 'not-a-jwt']) {
      await expect(waitConnect(FakeAgent.connectRaw(mqttUrl, 'acme', 'robot-f', token))).rejects.toThrow(/Bad username or password|Not authorized|closed/i);
    }
    other.remove();
  });

  it('a username naming another agent than the token is refused', async () => {
    const e = await enroll(relay, 'acme', 'robot-u');
    await expect(waitConnect(FakeAgent.connectRaw(mqttUrl, 'acme', 'robot-u', e.token, { username: 'robot-other' }))).rejects.toThrow();
  });

  it('revocation closes the live connection (presence goes offline) and refuses the token afterwards; a new enrollment works', async () => {
    const e = await enroll(relay, 'acme', 'robot-r');
    const a = await FakeAgent.start(mqttUrl, 'acme', 'robot-r', e, echoHandler);
    agents.push(a);
    await until(() => relay.presence.get('acme', 'robot-r')?.online, 'online');
    const closed = new Promise<void>((r) => a.client.once('close', () => r()));
    const r = await call(relay.baseUrl, 'DELETE', '/v1/relay/enrollments/robot-r', { token: ADMIN_KEY });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, agent_id: 'robot-r', connections_closed: 1 });
    await closed;
    await until(() => relay.presence.get('acme', 'robot-r')?.online === false, 'offline after revocation');
    await expect(waitConnect(FakeAgent.connectRaw(mqttUrl, 'acme', 'robot-r', e.token))).rejects.toThrow();
    const fresh = await enroll(relay, 'acme', 'robot-r');
    const c = FakeAgent.connectRaw(mqttUrl, 'acme', 'robot-r', fresh.token);
    await waitConnect(c);
    await c.endAsync();
  });

  it('`svc relay enroll` issues a token the running relay accepts (same state directory)', async () => {
    const { relayCommand } = await import('../../relay/cli.js');
    const dir = (relay as unknown as { options: { stateDir: string } }).options.stateDir;
    let out = '';
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => ((out += chunk), true)) as typeof process.stdout.write;
    try {
      expect(await relayCommand(['enroll'], new Map<string, string | true>([['tenant', 'acme'], ['agent', 'robot-cli'], ['ttl', '1h'], ['state-dir', dir]]))).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    const issued = JSON.parse(out);
    expect(Date.parse(issued.expires_at) - Date.now()).toBeLessThanOrEqual(3600_000);
    const c = FakeAgent.connectRaw(mqttUrl, 'acme', 'robot-cli', issued.token);
    await waitConnect(c);
    await c.endAsync();
  });
});

describe('topic confinement', () => {
  it('an agent cannot subscribe to, nor publish on, another agent\'s or tenant\'s topics', async () => {
    const victim = await agent('globex', 'robot-v');
    const intruder = await agent('acme', 'robot-i');
    const seen: string[] = [];
    victim.client.on('message', (t) => seen.push(t));
    // Refused subscriptions are granted as failure (SUBACK 0x80): mqtt.js rejects them.
    for (const topic of [relayTopics.requests('globex', 'robot-v'), 'svc/t/+/a/+/status', 'svc/#', '#', relayTopics.requests('acme', 'robot-v'), 'svc/t/acme/a/+/req']) {
      await expect(intruder.client.subscribeAsync(topic), topic).rejects.toThrow(/Subscribe error/);
    }
    // Own topics are fine.
    const own = await intruder.client.subscribeAsync(relayTopics.events('acme', 'robot-i'));
    expect(own[0]!.qos).toBe(0);
    // Publishing a forged request to the victim: refused by the broker (the victim sees nothing).
    const evil = JSON.stringify({ kind: 'request', id: 'x', method: 'DELETE', path: '/v1/devices/d1', headers: {}, obo: null, reply_to: 'svc/t/acme/a/robot-i/res/n', deadline_ms: Date.now() + 5000 });
    intruder.client.publish(relayTopics.requests('globex', 'robot-v'), evil, { qos: 0 });
    // Nor may it request itself, or forge another agent's presence.
    intruder.client.publish(relayTopics.status('globex', 'robot-v'), JSON.stringify({ agent_id: 'robot-v', tenant_id: 'globex', online: false, agent_version: 'x', connected_since_ms: null, last_seen_ms: 1 }), { qos: 0, retain: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toEqual([]);
    expect(relay.presence.get('globex', 'robot-v')?.online).toBe(true);
  });
});

describe('presence', () => {
  it('GET /v1/fleet/agents lists the caller\'s tenant with presence fields and never a token', async () => {
    await agent('acme', 'robot-p1');
    const r = await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: acmeOperator });
    expect(r.status).toBe(200);
    const p1 = r.json.agents.find((a: { agent_id: string }) => a.agent_id === 'robot-p1');
    expect(Object.keys(p1).sort()).toEqual(['agent_id', 'agent_version', 'connected_since_ms', 'last_seen_ms', 'online', 'tenant_id']);
    expect(p1).toMatchObject({ tenant_id: 'acme', online: true, agent_version: '0.7.0-test' });
    expect(r.json.agents.every((a: { tenant_id: string }) => a.tenant_id === 'acme')).toBe(true);
    expect(r.text).not.toMatch(/token|eyJ/);
    expect((await call(relay.baseUrl, 'GET', '/v1/fleet/agents')).status).toBe(401);
  });

  it('a killed agent is offline through its Last Will within the keep-alive; FleetMemberLeft is recorded', async () => {
    const a = await agent('acme', 'robot-k');
    const t0 = Date.now();
    a.kill();
    await until(() => relay.presence.get('acme', 'robot-k')?.online === false, 'offline', 5000);
    expect(Date.now() - t0).toBeLessThan(3000);
    const events = relay.presence.events('acme').filter((e) => e.agent_id === 'robot-k').map((e) => e.type);
    expect(events).toEqual(['FleetMemberJoined', 'FleetMemberLeft']);
  });
});

describe('forwarding /agents/{id}/v1/...', () => {
  it('returns the agent\'s status, headers and body; the caller travels as an on-behalf-of token, its relay key does not', async () => {
    const a = await agent('acme', 'robot-h');
    const r = await call(relay.baseUrl, 'POST', '/agents/robot-h/v1/devices/d1/commands?dry=1', { token: acmeOperator, body: { name: 'reset' }, headers: { 'x-correlation-id': 'corr-1' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-agent')).toBe('yes');
    expect(r.json).toMatchObject({ ok: true, method: 'POST', path: '/v1/devices/d1/commands?dry=1', obo_role: 'operator', obo_tenant: 'acme', body: '{"name":"reset"}' });
    expect(r.json.obo_sub).toMatch(/^key-/);
    const sent = a.received.at(-1)!;
    expect(sent.headers['authorization']).toBeUndefined();
    expect(sent.headers['x-correlation-id']).toBe('corr-1');
    expect(sent.reply_to).toBe(relayTopics.replies('acme', 'robot-h', relay.node));
    // Anonymous callers are forwarded with obo: null (the agent applies its read policy).
    const anon = await call(relay.baseUrl, 'GET', '/agents/robot-h/v1/health');
    expect(anon.status).toBe(200);
    expect(a.received.at(-1)!.obo).toBeNull();
    // An invalid credential is refused, never downgraded to anonymous.
    expect((await call(relay.baseUrl, 'GET', '/agents/robot-h/v1/health', { token: 'nope' })).status).toBe(401);
  });

  it('passes the agent\'s error statuses through unchanged', async () => {
    await agent('acme', 'robot-err', () => ({ status: 403, headers: { 'content-type': 'application/json' }, body_b64: b64({ ok: false, error: 'forbidden', code: 'forbidden' }) }));
    const r = await call(relay.baseUrl, 'DELETE', '/agents/robot-err/v1/devices/d1', { token: acmeAuditor });
    expect(r.status).toBe(403);
    expect(r.json).toEqual({ ok: false, error: 'forbidden', code: 'forbidden' });
  });

  it('chunks request and response bodies larger than MAX_ENVELOPE_BYTES', async () => {
    const big = 'x'.repeat(700 * 1024);
    const a = await agent('acme', 'robot-big', (req) => ({ status: 200, headers: { 'content-type': 'text/plain' }, body_b64: b64(`${Buffer.from(req.body_b64 ?? '', 'base64').length}:${'y'.repeat(900 * 1024)}`) }));
    const chunks: number[] = [];
    a.client.on('message', (_t, p) => chunks.push(p.length));
    const r = await call(relay.baseUrl, 'PUT', '/agents/robot-big/v1/files/blob', { token: acmeOperator, raw: big, headers: { 'content-type': 'text/plain' } });
    expect(r.status).toBe(200);
    expect(r.text.startsWith(`${700 * 1024}:`)).toBe(true);
    expect(r.text.length).toBe(`${700 * 1024}:`.length + 900 * 1024);
    expect(chunks.length).toBeGreaterThan(1);
    expect(Math.max(...chunks)).toBeLessThanOrEqual(256 * 1024);
  });

  it('tenant escape: another tenant\'s agent answers 404 as if absent, on every relay route', async () => {
    await agent('acme', 'robot-t');
    const r = await call(relay.baseUrl, 'GET', '/agents/robot-t/v1/health', { token: globexOperator });
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({ ok: false, code: 'not_found' });
    const unknown = await call(relay.baseUrl, 'GET', '/agents/robot-nobody/v1/health', { token: globexOperator });
    // Indistinguishable from an agent that does not exist.
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ ...r.json, error: "agent 'robot-nobody' not found" });
    const list = await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: globexOperator });
    expect(list.json.agents.map((a: { agent_id: string }) => a.agent_id)).not.toContain('robot-t');
    const q = await call(relay.baseUrl, 'POST', '/v1/fleet/query', { token: globexOperator, body: { method: 'GET', path: '/v1/health', agents: ['robot-t'] } });
    expect(q.json.results).toEqual([{ agent_id: 'robot-t', error: "agent 'robot-t' not found", code: 'not_found', status: 404 }]);
    // A non-relay administrator cannot enroll or revoke in another tenant.
    const globexAdmin = await createKey(relay, 'administrator', 'globex');
    expect((await call(relay.baseUrl, 'POST', '/v1/relay/enrollments', { token: globexAdmin, body: { tenant_id: 'acme', agent_id: 'robot-t' } })).status).toBe(403);
    expect((await call(relay.baseUrl, 'DELETE', '/v1/relay/enrollments/robot-t?tenant_id=acme', { token: globexAdmin })).status).toBe(403);
    expect((await call(relay.baseUrl, 'POST', '/v1/admin/api-keys', { token: globexAdmin, body: { role: 'operator', tenant_id: 'acme' } })).status).toBe(403);
    // Path tricks do not leave the agent prefix.
    expect((await call(relay.baseUrl, 'GET', '/agents/robot-t/../robot-t/v1/health', { token: globexOperator })).status).toBe(404);
    expect((await call(relay.baseUrl, 'GET', '/agents/robot-t/x/v1/health', { token: acmeOperator })).status).toBe(404);
  });

  it('an offline agent is 503 agent_offline; an agent that does not answer is 504 gateway_timeout, both with the error envelope', async () => {
    const a = await agent('acme', 'robot-off');
    a.kill();
    await until(() => relay.presence.get('acme', 'robot-off')?.online === false, 'offline');
    const off = await call(relay.baseUrl, 'GET', '/agents/robot-off/v1/health', { token: acmeOperator });
    expect(off.status).toBe(503);
    expect(off.json).toMatchObject({ ok: false, code: 'agent_offline' });
    expect(typeof off.json.error).toBe('string');
    await agent('acme', 'robot-mute', () => null);
    const t0 = Date.now();
    const mute = await call(relay.baseUrl, 'GET', '/agents/robot-mute/v1/health', { token: acmeOperator });
    expect(mute.status).toBe(504);
    expect(mute.json).toMatchObject({ ok: false, code: 'gateway_timeout' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
  });

  it('the on-behalf-of token names the agent as audience, expires within OBO_TTL_SECS, and another agent refuses it', async () => {
    const e = await enroll(relay, 'acme', 'robot-obo');
    let captured: string | null = null;
    const a = await FakeAgent.start(mqttUrl, 'acme', 'robot-obo', e, (req, obo) => {
      captured = req.obo;
      return { status: 200, headers: {}, body_b64: b64({ aud: (obo as unknown as { aud: string }).aud, ttl: obo!.exp - obo!.iat }) };
    });
    agents.push(a);
    await until(() => relay.presence.get('acme', 'robot-obo')?.online, 'online');
    const r = await call(relay.baseUrl, 'GET', '/agents/robot-obo/v1/devices', { token: acmeOperator });
    expect(r.json).toEqual({ aud: 'robot-obo', ttl: 60 });
    const { importJWK, jwtVerify } = await import('jose');
    const key = await importJWK(e.relay_public_key, 'EdDSA');
    await expect(jwtVerify(captured!, key, { audience: 'robot-other' })).rejects.toThrow();
  });
});

describe('relay administration', () => {
  it('enrollment and revocation need an administrator: 401 without a credential or with a bad one, 403 for other roles', async () => {
    const body = { tenant_id: 'acme', agent_id: 'robot-z' };
    expect((await call(relay.baseUrl, 'POST', '/v1/relay/enrollments', { body })).status).toBe(401);
    expect((await call(relay.baseUrl, 'POST', '/v1/relay/enrollments', { token: 'wrong', body })).status).toBe(401);
    const forbidden = await call(relay.baseUrl, 'POST', '/v1/relay/enrollments', { token: acmeOperator, body });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json).toMatchObject({ ok: false, code: 'forbidden' });
    expect((await call(relay.baseUrl, 'DELETE', '/v1/relay/enrollments/robot-z', { token: acmeOperator })).status).toBe(403);
    expect((await call(relay.baseUrl, 'DELETE', '/v1/relay/enrollments/robot-z')).status).toBe(401);
    expect((await call(relay.baseUrl, 'POST', '/v1/admin/api-keys', { token: acmeOperator, body: { role: 'operator' } })).status).toBe(403);
    const bad = await call(relay.baseUrl, 'POST', '/v1/relay/enrollments', { token: ADMIN_KEY, body: { tenant_id: 'acme/#', agent_id: 'x' } });
    expect(bad.status).toBe(400);
  });
});

describe('fleet query and stream', () => {
  it('POST /v1/fleet/query reads many agents in parallel and reports partial failure per agent', async () => {
    await agent('globex', 'q-ok-1');
    await agent('globex', 'q-ok-2');
    await agent('globex', 'q-mute', () => null);
    const off = await agent('globex', 'q-off');
    off.kill();
    await until(() => relay.presence.get('globex', 'q-off')?.online === false, 'offline');
    const r = await call(relay.baseUrl, 'POST', '/v1/fleet/query', { token: globexOperator, body: { method: 'GET', path: '/v1/device-reports', agents: ['q-ok-1', 'q-ok-2', 'q-mute', 'q-off', 'q-none'] } });
    expect(r.status).toBe(200);
    const by = Object.fromEntries(r.json.results.map((x: { agent_id: string }) => [x.agent_id, x]));
    expect(by['q-ok-1']).toMatchObject({ status: 200, body: { path: '/v1/device-reports' } });
    expect(by['q-ok-2']).toMatchObject({ status: 200 });
    expect(by['q-mute']).toMatchObject({ code: 'gateway_timeout' });
    expect(by['q-off']).toMatchObject({ code: 'agent_offline' });
    expect(by['q-none']).toMatchObject({ code: 'not_found' });
    expect(r.json).toMatchObject({ succeeded: 2, failed: 3 });
    expect((await call(relay.baseUrl, 'POST', '/v1/fleet/query', { token: globexOperator, body: { method: 'DELETE', path: '/v1/devices/x' } })).status).toBe(400);
  });

  it('GET /v1/fleet/stream (WebSocket) carries the tenant\'s agents\' events with agent_id, and no other tenant\'s', async () => {
    const mine = await agent('acme', 'robot-s1');
    const theirs = await agent('globex', 'robot-s2');
    const ws = new WebSocket(`ws://127.0.0.1:${relay.httpPort}/v1/fleet/stream`, { headers: { authorization: `Bearer ${acmeOperator}` } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    await until(() => frames.find((f) => f.type === 'hello'), 'hello');
    await theirs.event({ type: 'AlertRaised', secret: 'globex' });
    await mine.event({ type: 'TelemetryIngested', value: 42 });
    const got = await until(() => frames.find((f) => f.type === 'event'), 'event frame');
    expect(got).toMatchObject({ agent_id: 'robot-s1', tenant_id: 'acme', frame: { value: 42 } });
    await new Promise((r) => setTimeout(r, 100));
    expect(JSON.stringify(frames)).not.toContain('globex');
    ws.close();
    const refused = new WebSocket(`ws://127.0.0.1:${relay.httpPort}/v1/fleet/stream`);
    const status = await new Promise<number>((r) => refused.once('unexpected-response', (_req, res) => r(res.statusCode ?? 0)));
    expect(status).toBe(401);
  });

  it('agents can reach the embedded broker over WebSocket at /mqtt', async () => {
    const e = await enroll(relay, 'acme', 'robot-ws');
    const a = await FakeAgent.start(`ws://127.0.0.1:${relay.httpPort}/mqtt`, 'acme', 'robot-ws', e, echoHandler);
    agents.push(a);
    await until(() => relay.presence.get('acme', 'robot-ws')?.online, 'online over ws');
    const r = await call(relay.baseUrl, 'GET', '/agents/robot-ws/v1/health', { token: acmeOperator });
    expect(r.status).toBe(200);
    expect(r.json.path).toBe('/v1/health');
  });
});
