import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../agent/runtime/agent.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { MOSQUITTO_SKIP_REASON, startMosquitto, type MosquittoBroker } from '../helpers/mosquitto.js';
import { cuttableProxy, mqttOverWebSocket, enrollmentToken, oboToken, relayKey, retainedPresence, TestRelay, until } from './relay-fixture.js';

/**
 * The agent side of the relay trunk on real parts: a real mosquitto, a real mqtt.js client playing
 * the relay, a real Ed25519 relay key signing the enrollment and on-behalf-of tokens
 * (api/relay-protocol.ts), and real agents on loopback.
 */

const TENANT = 'acme';
const ADMIN_KEY = 'relay-agent-test-admin-key';
const ENV = { SVC_TENANT_ID: TENANT, SVC_API_KEY: ADMIN_KEY, SVC_API_REQUIRE_AUTH_READS: '1' };
const TUNING = { backoffBaseMs: 50, backoffMaxMs: 300, keepaliveSecs: 5 };

describe.skipIf(MOSQUITTO_SKIP_REASON !== null)('the agent side of the relay trunk', () => {
  let broker: MosquittoBroker;
  let key: Awaited<ReturnType<typeof relayKey>>;
  const cleanups: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    broker = await startMosquitto();
    key = await relayKey();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });
  afterAll(async () => {
    await broker?.dispose();
  });

  async function agentWithRelay(agentId: string, options: { url?: string; stateDir?: string; env?: Record<string, string>; tuning?: Record<string, number> } = {}): Promise<RunningAgent> {
    const a = await startAgent({
      env: { ...ENV, ...(options.env ?? {}) },
      ...(options.stateDir ? { stateDir: options.stateDir } : {}),
      relay: { url: options.url ?? broker.url, enrollToken: await enrollmentToken(key, TENANT, agentId) },
      relayTuning: { ...TUNING, ...(options.tuning ?? {}) },
    });
    cleanups.push(() => a.close());
    return a;
  }

  async function relayFor(agentId: string, url = broker.url): Promise<TestRelay> {
    const r = await TestRelay.connect(url, TENANT, agentId);
    cleanups.push(() => r.close());
    return r;
  }

  const admin = { authorization: `Bearer ${ADMIN_KEY}` };
  const linkStatus = async (a: RunningAgent) => (await a.json('/v1/relay/status', { headers: admin })).body;

  it('connects, says online in a retained presence, and answers GET /v1/health and a public read as the direct API does', async () => {
    const a = await agentWithRelay('robot-1');
    await until('connected', async () => (await linkStatus(a)).connected);
    const presence = await retainedPresence(broker.url, TENANT, 'robot-1');
    expect(presence).toMatchObject({ agent_id: 'robot-1', tenant_id: TENANT, online: true });
    expect(typeof presence!.agent_version).toBe('string');
    expect(presence!.connected_since_ms).toBeGreaterThan(0);

    const relay = await relayFor('robot-1');
    const health = await relay.request('GET', '/v1/health');
    const direct = await a.json('/v1/health');
    expect(health!.status).toBe(200);
    const { uptime_ms: _u1, ...viaRelay } = health!.json;
    const { uptime_ms: _u2, ...viaLan } = direct.body;
    expect(viaRelay).toEqual(viaLan);
    expect(health!.response.headers['x-correlation-id']).toBeTruthy();

    const tenant = await relay.request('GET', '/v1/tenant', { headers: { 'x-correlation-id': 'relay-corr-1' } });
    expect(tenant!.text).toBe(await (await a.fetch('/v1/tenant')).text());
    expect(tenant!.response.headers['x-correlation-id']).toBe('relay-corr-1');

    const status = await linkStatus(a);
    expect(status).toMatchObject({ configured: true, connected: true, state: 'connected', agent_id: 'robot-1', tenant_id: TENANT, transport: 'mqtt', relay_host: `127.0.0.1:${broker.port}` });
    // A sensitive read: anonymous callers on the LAN do not see it.
    expect((await a.json('/v1/relay/status')).status).toBe(401);
  });

  it('runs a mutation as the on-behalf-of caller: RBAC, audit naming the relay caller key id, same body shape as direct', async () => {
    const a = await agentWithRelay('robot-2');
    const relay = await relayFor('robot-2');
    await until('connected', async () => (await linkStatus(a)).connected);
    const obo = await oboToken(key, { sub: 'relay-key-ops', aud: 'robot-2', tenant_id: TENANT, role: 'operator', user_id: 'alice' });

    const who = await relay.request('GET', '/v1/auth/session', { obo });
    expect(who!.status).toBe(200);
    expect(who!.json).toMatchObject({ key_id: 'relay-key-ops', role: 'operator', tenant_id: TENANT, auth_kind: 'relay', user_id: 'alice' });

    const viaRelay = await relay.request('POST', '/v1/alerts/test', { obo, body: { message: 'through the relay' } });
    const direct = await a.json('/v1/alerts/test', { method: 'POST', headers: { ...admin, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'direct' }) });
    expect(viaRelay!.status).toBe(direct.status);
    expect(Object.keys(viaRelay!.json).sort()).toEqual(Object.keys(direct.body).sort());

    const audit = fs.readFileSync(path.join(a.stateDir, 'control-center-mutations.jsonl'), 'utf8');
    const records = audit.trim().split('\n').map((l) => JSON.parse(l));
    const payloads = records.filter((r) => r.event_type === 'control_center.api.mutation').map((r) => JSON.parse(r.payload));
    expect(payloads.filter((p) => p.actor_key_id === 'relay-key-ops')).toEqual([
      expect.objectContaining({ method: 'POST', path: '/v1/alerts/test', status: 200, actor_role: 'Operator' }),
    ]);

    // An auditor on behalf of the relay is refused the mutation by the agent's own RBAC.
    const auditor = await oboToken(key, { sub: 'relay-key-audit', aud: 'robot-2', tenant_id: TENANT, role: 'auditor' });
    expect((await relay.request('GET', '/v1/auth/session', { obo: auditor }))!.json.role).toBe('auditor');
    expect((await relay.request('POST', '/v1/alerts/test', { obo: auditor, body: {} }))!.status).toBe(403);
  });

  it('refuses on-behalf-of tokens for another agent, another tenant, expired, or signed by another key; obo null meets the read policy', async () => {
    const a = await agentWithRelay('robot-3');
    const relay = await relayFor('robot-3');
    await until('connected', async () => (await linkStatus(a)).connected);
    const other = await relayKey();
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, string, number, string]> = [
      ['another agent', await oboToken(key, { sub: 'k', aud: 'robot-99', tenant_id: TENANT, role: 'administrator' }), 401, 'unauthorized'],
      ['another tenant', await oboToken(key, { sub: 'k', aud: 'robot-3', tenant_id: 'globex', role: 'administrator' }), 403, 'tenant_mismatch'],
      ['expired', await oboToken(key, { sub: 'k', aud: 'robot-3', tenant_id: TENANT, role: 'administrator' }, { iatSecs: now - 600, expSecs: now - 300 }), 401, 'unauthorized'],
      ['an unknown role', await oboToken(key, { sub: 'k', aud: 'robot-3', tenant_id: TENANT, role: 'root' }), 401, 'unauthorized'],
      ['another key', await oboToken(other, { sub: 'k', aud: 'robot-3', tenant_id: TENANT, role: 'administrator' }), 401, 'unauthorized'],
    ];
    for (const [what, obo, status, code] of cases) {
      for (const [method, p] of [
        ['GET', '/v1/auth/session'],
        ['POST', '/v1/alerts/test'],
      ] as const) {
        const r = await relay.request(method, p, { obo, ...(method === 'POST' ? { body: {} } : {}) });
        expect({ what, method, status: r!.status, code: r!.json.code }).toEqual({ what, method, status, code });
      }
    }
    // The same tokens presented directly on the LAN are refused the same way.
    expect((await a.json('/v1/auth/session', { headers: { authorization: `Bearer ${cases[0]![1]}` } })).status).toBe(401);

    const anonymous = await relay.request('GET', '/v1/devices', { obo: null });
    expect(anonymous!.status).toBe(401);
    const anonymousPublic = await relay.request('GET', '/v1/health', { obo: null });
    expect(anonymousPublic!.status).toBe(200);
    const anonymousMutation = await relay.request('POST', '/v1/alerts/test', { obo: null, body: {} });
    expect(anonymousMutation!.status).toBe(401);
    // An Authorization header in the envelope is never used: only the on-behalf-of token counts.
    const smuggled = await relay.request('GET', '/v1/devices', { obo: null, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(smuggled!.status).toBe(401);
  });

  it('chunks a large response and reassembles a chunked request; drops expired requests and never replies outside its topic root', async () => {
    const a = await agentWithRelay('robot-4', { tuning: { maxEnvelopeBytes: 16 * 1024 } });
    const relay = await relayFor('robot-4');
    await until('connected', async () => (await linkStatus(a)).connected);
    const openapi = await relay.request('GET', '/v1/openapi.json');
    expect(openapi!.chunks).toBeGreaterThan(3);
    expect(openapi!.text).toBe(await (await a.fetch('/v1/openapi.json')).text());

    const obo = await oboToken(key, { sub: 'relay-key-ops', aud: 'robot-4', tenant_id: TENANT, role: 'operator' });
    const big = await relay.request('POST', '/v1/alerts/test', { obo, body: { message: 'x'.repeat(900) }, chunkSize: 200 });
    expect(big!.status).toBe(200);

    const before = (await linkStatus(a)).requests;
    expect(await relay.request('GET', '/v1/health', { deadlineMs: Date.now() - 1, timeoutMs: 500 })).toBeNull();
    // A reply topic of another agent (or outside svc/) is refused: nothing is published there.
    const foreign = await TestRelay.connect(broker.url, TENANT, 'robot-other');
    cleanups.push(() => foreign.close());
    expect(await relay.request('GET', '/v1/health', { replyTo: foreign.replyTo, timeoutMs: 500 })).toBeNull();
    const after = (await linkStatus(a)).requests;
    expect(after.expired).toBe(before.expired + 1);
    expect(after.rejected).toBe(before.rejected + 1);
  });

  it('keeps serving the LAN while the relay is unreachable, keeps events in the outbox, and drains them in order with seq continuity', async () => {
    const proxy = await cuttableProxy(broker.port);
    cleanups.push(() => proxy.close());
    const relay = await relayFor('robot-5');
    const a = await agentWithRelay('robot-5', { url: proxy.url });
    await until('connected', async () => (await linkStatus(a)).connected);
    // Anonymous reads of a sensitive route raise AuthFailed, a streamed platform event: one frame each.
    const authFailed = async (n: number, tag: string) => {
      for (let i = 0; i < n; i++) expect((await a.json(`/v1/probe/${tag}-${i}`)).status).toBe(401);
    };
    await authFailed(3, 'live');
    await until('live frames', () => relay.events.filter((e) => (e.frame as any).event?.payload?.path?.startsWith?.('/v1/probe/live')).length >= 3);

    proxy.cut();
    await until('disconnected', async () => !(await linkStatus(a)).connected);
    const t0 = performance.now();
    expect((await a.json('/v1/health')).status).toBe(200);
    const lanMs = performance.now() - t0;
    await authFailed(5, 'offline');
    const offline = await linkStatus(a);
    expect(offline.connected).toBe(false);
    expect(offline.outbox.depth).toBeGreaterThanOrEqual(5);
    expect(fs.readFileSync(path.join(a.stateDir, 'relay-outbox.jsonl'), 'utf8').trim().split('\n').length).toBe(offline.outbox.depth);

    const seen = relay.events.length;
    proxy.restore();
    await until('drained', async () => {
      const s = await linkStatus(a);
      return s.connected && s.outbox.depth === 0;
    });
    await authFailed(1, 'after');
    await until('after frame', () => relay.events.some((e) => JSON.stringify(e.frame).includes('after-0')));
    const seqs = relay.events.map((e) => e.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
    const drained = relay.events.slice(seen);
    const order = drained.map((e) => /probe\/(\w+-\d)/.exec(JSON.stringify(e.frame))?.[1]).filter(Boolean);
    expect(order).toEqual(['offline-0', 'offline-1', 'offline-2', 'offline-3', 'offline-4', 'after-0']);
    expect(fs.existsSync(path.join(a.stateDir, 'relay-outbox.jsonl'))).toBe(false);
    expect(lanMs).toBeLessThan(500);
  });

  it('keeps the outbox across an agent restart and drains it, seq continuing, when the relay is back', async () => {
    const proxy = await cuttableProxy(broker.port);
    cleanups.push(() => proxy.close());
    const stateDir = tempDir('svc-relay-agent-');
    const relay = await relayFor('robot-6');
    const first = await agentWithRelay('robot-6', { url: proxy.url, stateDir });
    await until('connected', async () => (await linkStatus(first)).connected);
    await first.json('/v1/probe/live-0');
    await until('live frame', () => relay.events.some((e) => JSON.stringify(e.frame).includes('live-0')));
    proxy.cut();
    await until('disconnected', async () => !(await linkStatus(first)).connected);
    for (let i = 0; i < 4; i++) await first.json(`/v1/probe/kept-${i}`);
    const depth = (await linkStatus(first)).outbox.depth;
    expect(depth).toBeGreaterThanOrEqual(4);
    await first.close();

    proxy.restore();
    const second = await agentWithRelay('robot-6', { url: proxy.url, stateDir });
    await until('drained after restart', async () => {
      const s = await linkStatus(second);
      return s.connected && s.outbox.depth === 0;
    });
    await until('kept frames', () => relay.events.some((e) => JSON.stringify(e.frame).includes('kept-3')));
    const seqs = relay.events.map((e) => e.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
    const kept = relay.events.map((e) => /probe\/(kept-\d)/.exec(JSON.stringify(e.frame))?.[1]).filter(Boolean);
    expect(kept).toEqual(['kept-0', 'kept-1', 'kept-2', 'kept-3']);
  });

  it('counts outbox overflow and announces it as dropped_before (with a seq gap) on the next frame', async () => {
    const proxy = await cuttableProxy(broker.port);
    cleanups.push(() => proxy.close());
    const relay = await relayFor('robot-7');
    const logs: string[] = [];
    // Built here rather than by the harness, which silences the agent's log.
    const stateDir = tempDir('svc-relay-agent-');
    const agent = await Agent.create({
      env: { ...ENV, SVC_RELAY_OUTBOX_FRAMES: '3', SVC_CONTROL_CENTER_STATE_DIR: stateDir },
      bind: '127.0.0.1:0',
      relay: { url: proxy.url, enrollToken: await enrollmentToken(key, TENANT, 'robot-7') },
      relayTuning: TUNING,
      log: (l) => logs.push(l),
    });
    const bind = await agent.listen();
    cleanups.push(() => agent.close());
    const a = { json: async (p: string, init?: RequestInit) => {
      const res = await fetch(`http://${bind}${p}`, init);
      return { status: res.status, body: await res.json() };
    } } as unknown as RunningAgent;
    await until('connected', async () => (await linkStatus(a)).connected);
    proxy.cut();
    await until('disconnected', async () => !(await linkStatus(a)).connected);
    for (let i = 0; i < 8; i++) await a.json(`/v1/probe/over-${i}`);
    const s = await linkStatus(a);
    expect(s.outbox.depth).toBe(3);
    expect(s.outbox.dropped_total).toBeGreaterThanOrEqual(5);
    expect(s.outbox.dropped_pending).toBe(s.outbox.dropped_total);
    expect(logs.some((l) => l.includes('relay outbox full'))).toBe(true);
    proxy.restore();
    await until('drained', async () => (await linkStatus(a)).outbox.depth === 0 && (await linkStatus(a)).connected);
    await a.json('/v1/probe/next-0');
    const next = await until('next frame', () => relay.events.find((e) => JSON.stringify(e.frame).includes('next-0')));
    expect(next.dropped_before).toBe(s.outbox.dropped_total);
    const i = relay.events.indexOf(next);
    expect(next.seq - relay.events[i - 1]!.seq).toBe(next.dropped_before + 1);
  });

  it('refuses to start with an enrollment token of another tenant or one whose signature does not match its key', async () => {
    await expect(
      startAgent({ env: ENV, relay: { url: broker.url, enrollToken: await enrollmentToken(key, 'globex', 'robot-8') } }),
    ).rejects.toThrow(/tenant 'globex' but this agent's tenant is 'acme'/);
    const other = await relayKey();
    await expect(
      startAgent({ env: ENV, relay: { url: broker.url, enrollToken: await enrollmentToken(key, TENANT, 'robot-8', 3600, other) } }),
    ).rejects.toThrow(/signature does not verify/);
    await expect(startAgent({ env: ENV, relay: { url: broker.url } })).rejects.toThrow(/no enrollment token/);
  });

  it('dials MQTT over WebSocket (ws://relay/mqtt) the same way', async () => {
    const ws = await mqttOverWebSocket(broker.port);
    cleanups.push(() => ws.close());
    const a = await agentWithRelay('robot-ws', { url: ws.url });
    const relay = await relayFor('robot-ws');
    await until('connected', async () => (await linkStatus(a)).connected);
    expect((await linkStatus(a)).transport).toBe('ws');
    expect((await retainedPresence(broker.url, TENANT, 'robot-ws'))!.online).toBe(true);
    const obo = await oboToken(key, { sub: 'relay-key-ops', aud: 'robot-ws', tenant_id: TENANT, role: 'operator' });
    expect((await relay.request('POST', '/v1/alerts/test', { obo, body: {} }))!.status).toBe(200);
  });

  it('an agent whose relay never answers serves its LAN API at once', async () => {
    const a = await agentWithRelay('robot-9', { url: 'mqtt://127.0.0.1:9' });
    const t0 = performance.now();
    expect((await a.json('/v1/health')).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(1000);
    const s = await until('a connect error', async () => {
      const st = await linkStatus(a);
      return st.last_connect_error ? st : null;
    });
    expect(s.connected).toBe(false);
    expect(s.reconnect_attempts).toBeGreaterThanOrEqual(1);
  });
});
