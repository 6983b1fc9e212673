import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { waitForExit } from '../helpers/spawn-agent.js';
import { enrollmentToken, relayKey as fixtureKey } from '../relay-agent/relay-fixture.js';
import { call, emitEvent, enroll, fleetAgent, Procs, RELAY_ADMIN, relayKey, relayPrivateKey, relayPublicJwk, relayStatus, runServe, startAgentProc, startRelayProc, tcpGate, until } from './e2e-helpers.js';

/**
 * End to end with the real parts only: `svc relay serve` (embedded aedes broker) and `svc serve --relay
 * … --enroll-token …` agents, all as child processes of the compiled build (`npm run build` first),
 * on loopback. Issue 14.
 */

const procs = new Procs();
afterEach(async () => {
  await procs.cleanup();
});

const log = (msg: string) => process.stderr.write(`[relay-e2e] ${msg}\n`);

/** Fields that legitimately differ between two calls a few ms apart (clocks, uptimes, request ids). */
const VOLATILE = /(^|_)(ms|at|time|timestamp|uptime.*|uptime_s|now|request_id|generated_at|age.*)$/;
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => !VOLATILE.test(k)).map(([k, x]) => [k, stable(x)]));
  }
  return v;
}

/** A WebSocket client: frames as JSON; `refused` resolves with the HTTP status of a refused upgrade. */
function wsClient(url: string, headers: Record<string, string>): { ws: WebSocket; frames: any[]; opened: Promise<void>; refused: Promise<number> } {
  const ws = new WebSocket(url, { headers });
  const frames: any[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(String(d))));
  let opened!: Promise<void>;
  const refused = new Promise<number>((resolveRefused, rejectRefused) => {
    opened = new Promise<void>((resolve, reject) => {
      ws.once('open', () => {
        resolve();
        rejectRefused(new Error('the upgrade was accepted'));
      });
      ws.once('unexpected-response', (_req, res) => {
        resolveRefused(res.statusCode ?? 0);
        reject(new Error(`upgrade refused: ${res.statusCode}`));
        ws.terminate();
      });
      ws.once('error', (err) => {
        reject(err);
        rejectRefused(err);
      });
    });
  });
  opened.catch(() => undefined);
  refused.catch(() => undefined);
  return { ws, frames, opened, refused };
}

function openStream(baseUrl: string, token: string): { ws: WebSocket; frames: any[]; opened: Promise<void> } {
  const ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/v1/fleet/stream`, { headers: { authorization: `Bearer ${token}` } });
  const frames: any[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(String(d))));
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, frames, opened };
}

describe('relay end to end (svc relay serve + svc serve --relay processes)', () => {
  it('two tenants: fleet listing, forwarding equals the direct answer, audit names the relay caller, no tenant escape, fleet/query', async () => {
    const relay = await startRelayProc(procs);
    const tA1 = await enroll(relay, 'acme', 'robot-a1');
    const tA2 = await enroll(relay, 'acme', 'robot-a2');
    const tG = await enroll(relay, 'globex', 'robot-g');
    const acmeOp = await relayKey(relay, 'operator', 'acme');
    const globexOp = await relayKey(relay, 'operator', 'globex');
    const [a1, a2, g] = await Promise.all([
      startAgentProc(procs, relay.mqttUrl, tA1, 'acme'),
      startAgentProc(procs, relay.mqttUrl, tA2, 'acme'),
      startAgentProc(procs, relay.mqttUrl, tG, 'globex'),
    ]);
    await until('acme agents online', async () => (await fleetAgent(relay, acmeOp.token, 'robot-a1'))?.online && (await fleetAgent(relay, acmeOp.token, 'robot-a2'))?.online);
    await until('globex agent online', async () => (await fleetAgent(relay, globexOp.token, 'robot-g'))?.online);

    // Each tenant's key sees only its own agents; never a token.
    const acmeList = await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: acmeOp.token });
    expect(acmeList.status).toBe(200);
    expect(acmeList.json.agents.map((x: any) => x.agent_id).sort()).toEqual(['robot-a1', 'robot-a2']);
    for (const x of acmeList.json.agents) {
      expect(x).toMatchObject({ tenant_id: 'acme', online: true });
      expect(typeof x.agent_version).toBe('string');
      expect(x.agent_version.length).toBeGreaterThan(0);
    }
    for (const t of [tA1, tA2, tG]) expect(acmeList.text).not.toContain(t);
    expect(acmeList.text).not.toMatch(/token/i);
    const globexList = await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: globexOp.token });
    expect(globexList.json.agents.map((x: any) => x.agent_id)).toEqual(['robot-g']);
    expect(globexList.text).not.toContain(tG);

    // Forwarding returns what the agent answers directly (same status, same body bar clocks).
    for (const p of ['/v1/health', '/v1/version', '/v1/instance', '/v1/devices', '/v1/entities', '/v1/alerts']) {
      const direct = await call(a1.baseUrl, 'GET', p, { token: a1.adminKey });
      const relayed = await call(relay.baseUrl, 'GET', `/agents/robot-a1${p}`, { token: acmeOp.token });
      expect({ p, status: relayed.status }).toEqual({ p, status: direct.status });
      expect(stable(relayed.json)).toEqual(stable(direct.json));
      if (relayed.text !== direct.text) log(`${p}: bodies differ only in volatile fields: ${relayed.text.slice(0, 300)} vs ${direct.text.slice(0, 300)}`);
    }

    // A mutation through the relay: the agent's audit names the relay caller's key id.
    const alert = await call(relay.baseUrl, 'POST', '/agents/robot-a1/v1/alerts/test', { token: acmeOp.token, body: { message: 'e2e through the relay' } });
    const directAlert = await call(a1.baseUrl, 'POST', '/v1/alerts/test', { token: a1.adminKey, body: { message: 'e2e direct' } });
    expect(alert.status).toBe(directAlert.status);
    expect(alert.status).toBeLessThan(300);
    expect(Object.keys(alert.json).sort()).toEqual(Object.keys(directAlert.json).sort());
    const audit = await call(a1.baseUrl, 'GET', '/v1/audit/mutations', { token: a1.adminKey });
    expect(audit.status).toBe(200);
    expect(audit.text).toContain(acmeOp.keyId);
    expect(audit.text).toContain('/v1/alerts/test');
    for (const p of ['/v1/alerts', '/v1/entities']) {
      // Now non-empty lists (an alert raised through the relay and one on the LAN).
      const direct = await call(a1.baseUrl, 'GET', p, { token: a1.adminKey });
      const relayed = await call(relay.baseUrl, 'GET', `/agents/robot-a1${p}`, { token: acmeOp.token });
      expect(relayed.status).toBe(direct.status);
      expect(stable(relayed.json)).toEqual(stable(direct.json));
    }
    expect(JSON.stringify((await call(relay.baseUrl, 'GET', '/agents/robot-a1/v1/alerts', { token: acmeOp.token })).json)).toContain('e2e through the relay');

    // Tenant escape: acme's key on globex's agent is 404 on every route, as for an unknown agent.
    for (const [method, p, body] of [
      ['GET', '/agents/robot-g/v1/health', undefined],
      ['GET', '/agents/robot-g/v1/devices', undefined],
      ['POST', '/agents/robot-g/v1/alerts/test', { message: 'escape' }],
      ['GET', '/agents/no-such-agent/v1/health', undefined],
    ] as const) {
      const r = await call(relay.baseUrl, method, p, { token: acmeOp.token, ...(body ? { body } : {}) });
      expect({ p, method, status: r.status, code: r.json?.code }).toEqual({ p, method, status: 404, code: 'not_found' });
    }
    const escapeQuery = await call(relay.baseUrl, 'POST', '/v1/fleet/query', { token: acmeOp.token, body: { method: 'GET', path: '/v1/health', agents: ['robot-g'] } });
    log(`fleet/query acme → [robot-g]: ${escapeQuery.status} ${escapeQuery.text}`);
    if (escapeQuery.status === 200) {
      expect(escapeQuery.json.succeeded).toBe(0);
      expect(escapeQuery.json.results).toEqual([expect.objectContaining({ agent_id: 'robot-g', status: 404 })]);
      expect(escapeQuery.json.results[0].body).toBeUndefined();
    } else {
      expect(escapeQuery.status).toBe(404);
    }
    // No globex POST reached the agent (its audit has no mutation from acme's key).
    expect((await call(g.baseUrl, 'GET', '/v1/audit/mutations', { token: g.adminKey })).text).not.toContain(acmeOp.keyId);

    // fleet/stream: acme's stream carries acme's events and none of globex's.
    const s = openStream(relay.baseUrl, acmeOp.token);
    await s.opened;
    await until('hello', () => s.frames.find((f) => f.type === 'hello'));
    await emitEvent(g, 'globex-secret');
    await emitEvent(a2, 'acme-visible');
    await until('an event of robot-a2', () => s.frames.find((f) => f.type === 'event' && f.agent_id === 'robot-a2' && JSON.stringify(f.frame).includes('acme-visible')));
    await new Promise((r) => setTimeout(r, 500));
    expect(s.frames.filter((f) => f.type === 'event').every((f) => f.tenant_id === 'acme' && f.agent_id !== 'robot-g')).toBe(true);
    expect(JSON.stringify(s.frames)).not.toContain('globex-secret');
    expect(JSON.stringify(s.frames.find((f) => f.type === 'hello'))).not.toContain('robot-g');
    s.ws.close();

    // fleet/query across the tenant's agents.
    const q = await call(relay.baseUrl, 'POST', '/v1/fleet/query', { token: acmeOp.token, body: { method: 'GET', path: '/v1/version' } });
    expect(q.status).toBe(200);
    expect(q.json.succeeded).toBe(2);
    expect(q.json.failed).toBe(0);
    expect(q.json.results.map((r: any) => r.agent_id).sort()).toEqual(['robot-a1', 'robot-a2']);
    for (const r of q.json.results) {
      const agent = r.agent_id === 'robot-a1' ? a1 : a2;
      expect(r.status).toBe(200);
      expect(stable(r.body)).toEqual(stable((await call(agent.baseUrl, 'GET', '/v1/version', { token: agent.adminKey })).json));
    }
    // The relay administrator (tenant default) sees none of these agents.
    expect((await call(relay.baseUrl, 'GET', '/v1/fleet/agents', { token: RELAY_ADMIN })).json.agents).toEqual([]);
  }, 90_000);

  it('WS /agents/{id}/v1/stream/telemetry through the relay works like the LAN stream: hello, live events, ping, tenant 404, close reaches the agent', async () => {
    const relay = await startRelayProc(procs);
    const token = await enroll(relay, 'acme', 'robot-ws');
    const op = await relayKey(relay, 'operator', 'acme');
    const globex = await relayKey(relay, 'operator', 'globex');
    const agent = await startAgentProc(procs, relay.mqttUrl, token, 'acme');
    await until('online', async () => (await fleetAgent(relay, op.token, 'robot-ws'))?.online);
    const relayWs = `${relay.baseUrl.replace('http', 'ws')}/agents/robot-ws/v1/stream/telemetry`;

    const viaRelay = wsClient(relayWs, { authorization: `Bearer ${op.token}` });
    const lan = wsClient(`${agent.baseUrl.replace('http', 'ws')}/v1/stream/telemetry`, { authorization: `Bearer ${agent.adminKey}` });
    await Promise.all([viaRelay.opened, lan.opened]);
    const hello = await until('relayed hello', () => viaRelay.frames.find((f) => f.type === 'hello'));
    const lanHello = await until('LAN hello', () => lan.frames.find((f) => f.type === 'hello'));
    expect(Object.keys(hello).sort()).toEqual(Object.keys(lanHello).sort());
    expect((await relayStatus(agent)).streams).toMatchObject({ open: 1, opened: 1, refused: 0 });

    // Live platform events reach both, the same frame.
    await emitEvent(agent, 'relayed-live-1');
    const relayed = await until('relayed event', () => viaRelay.frames.find((f) => f.type === 'telemetry' && JSON.stringify(f).includes('relayed-live-1')));
    const direct = await until('LAN event', () => lan.frames.find((f) => f.type === 'telemetry' && JSON.stringify(f).includes('relayed-live-1')));
    expect(relayed).toEqual(direct);
    // Client → agent frames travel too: ping is answered by the agent's stream.
    viaRelay.ws.send(JSON.stringify({ type: 'ping' }));
    await until('pong through the relay', () => viaRelay.frames.find((f) => f.type === 'pong'));

    // The browser form: ?access_token= on the relay.
    const byQuery = wsClient(`${relayWs}?access_token=${encodeURIComponent(op.token)}`, {});
    await byQuery.opened;
    await until('hello by query token', () => byQuery.frames.find((f) => f.type === 'hello'));
    await until('two relayed streams on the agent', async () => (await relayStatus(agent)).streams.open === 2);

    // Another tenant's key: 404 before the upgrade, as if the agent did not exist; a bad key 401.
    expect(await wsClient(relayWs, { authorization: `Bearer ${globex.token}` }).refused).toBe(404);
    expect(await wsClient(relayWs, { authorization: 'Bearer not-a-key' }).refused).toBe(401);
    expect(await wsClient(`${relay.baseUrl.replace('http', 'ws')}/agents/robot-nope/v1/stream/telemetry`, { authorization: `Bearer ${op.token}` }).refused).toBe(404);
    expect(await wsClient(`${relay.baseUrl.replace('http', 'ws')}/agents/%zz/v1/stream/telemetry`, { authorization: `Bearer ${op.token}` }).refused).toBe(404);

    // Closing the relay client closes the agent-side socket.
    viaRelay.ws.close();
    byQuery.ws.terminate();
    await until('agent-side sockets closed', async () => (await relayStatus(agent)).streams.open === 0);
    expect(lan.ws.readyState).toBe(WebSocket.OPEN);
    lan.ws.close();

    // The agent going away closes the relayed stream.
    const again = wsClient(relayWs, { authorization: `Bearer ${op.token}` });
    await again.opened;
    const closed = new Promise<number>((resolve) => again.ws.once('close', (code) => resolve(code)));
    agent.child.kill('SIGKILL');
    expect(await closed).not.toBe(1000);
    // Offline now: 503 before the upgrade.
    await until('offline', async () => (await fleetAgent(relay, op.token, 'robot-ws'))?.online === false);
    expect(await wsClient(relayWs, { authorization: `Bearer ${op.token}` }).refused).toBe(503);
  }, 60_000);

  it('relayed streams: the agent\'s own refusal keeps its HTTP status, at most 32 per agent (503 beyond), a frozen trunk is 504', async () => {
    const relay = await startRelayProc(procs, { args: ['--request-timeout-ms', '2000'] });
    // Tenant `default`: the relay's anonymous callers reach this agent, which requires a credential for reads.
    const token = await enroll(relay, 'default', 'robot-r');
    const op = await relayKey(relay, 'operator', 'default');
    const gate = await tcpGate(relay.mqttPort);
    procs.onCleanup(() => gate.close());
    const agent = await startAgentProc(procs, `mqtt://127.0.0.1:${gate.port}`, token, 'default', { SVC_API_REQUIRE_AUTH_READS: '1' });
    await until('online', async () => (await fleetAgent(relay, op.token, 'robot-r'))?.online);
    const relayWs = `${relay.baseUrl.replace('http', 'ws')}/agents/robot-r/v1/stream/telemetry`;

    // Anonymous at the relay → no on-behalf-of token → the agent's stream answers 401, as on its LAN port.
    expect(await wsClient(`${agent.baseUrl.replace('http', 'ws')}/v1/stream/telemetry`, {}).refused).toBe(401);
    expect(await wsClient(relayWs, {}).refused).toBe(401);

    // The bound: 32 relayed streams; the 33rd is refused by the agent (503 at the relay).
    const open = Array.from({ length: 32 }, () => wsClient(relayWs, { authorization: `Bearer ${op.token}` }));
    await Promise.all(open.map((c) => c.opened));
    expect((await relayStatus(agent)).streams.open).toBe(32);
    expect(await wsClient(relayWs, { authorization: `Bearer ${op.token}` }).refused).toBe(503);
    expect((await relayStatus(agent)).streams.refused).toBe(1);
    for (const c of open) c.ws.close();
    await until('all closed on the agent', async () => (await relayStatus(agent)).streams.open === 0);

    // Trunk silently partitioned: no frame before the deadline → 504 before the upgrade.
    gate.freeze();
    expect(await wsClient(relayWs, { authorization: `Bearer ${op.token}` }).refused).toBe(504);
  }, 60_000);

  it('an agent killed (SIGKILL) is offline at the relay at once, and forwarding to it answers 503 agent_offline', async () => {
    const relay = await startRelayProc(procs);
    const token = await enroll(relay, 'acme', 'robot-k');
    const op = await relayKey(relay, 'operator', 'acme');
    const agent = await startAgentProc(procs, relay.mqttUrl, token, 'acme');
    await until('online', async () => (await fleetAgent(relay, op.token, 'robot-k'))?.online);
    expect((await call(relay.baseUrl, 'GET', '/agents/robot-k/v1/health', { token: op.token })).status).toBe(200);
    const t0 = performance.now();
    agent.child.kill('SIGKILL');
    await waitForExit(agent.child);
    const gone = await until('offline at the relay', async () => {
      const a = await fleetAgent(relay, op.token, 'robot-k');
      return a && !a.online ? a : null;
    }, 45_000, 20);
    const offlineMs = performance.now() - t0;
    log(`offline detection after SIGKILL: ${offlineMs.toFixed(0)} ms (keep-alive 30 s)`);
    expect(offlineMs).toBeLessThan(45_000);
    expect(gone).toMatchObject({ agent_id: 'robot-k', tenant_id: 'acme', online: false });
    for (const [method, body] of [['GET', undefined], ['POST', {}]] as const) {
      const r = await call(relay.baseUrl, method, method === 'GET' ? '/agents/robot-k/v1/health' : '/agents/robot-k/v1/alerts/test', { token: op.token, ...(body ? { body } : {}) });
      expect({ method, status: r.status, code: r.json?.code }).toEqual({ method, status: 503, code: 'agent_offline' });
    }
    const q = await call(relay.baseUrl, 'POST', '/v1/fleet/query', { token: op.token, body: { method: 'GET', path: '/v1/health' } });
    log(`fleet/query with the agent offline: ${q.text}`);
    expect(q.json.succeeded).toBe(0);
  }, 60_000);

  it('a silent partition (no FIN): forwarding times out 504, then the keep-alive marks the agent offline (503); the LAN serves', async () => {
    const relay = await startRelayProc(procs, { args: ['--request-timeout-ms', '2000'] });
    const token = await enroll(relay, 'acme', 'robot-p');
    const op = await relayKey(relay, 'operator', 'acme');
    const gate = await tcpGate(relay.mqttPort);
    procs.onCleanup(() => gate.close());
    const agent = await startAgentProc(procs, `mqtt://127.0.0.1:${gate.port}`, token, 'acme');
    await until('online', async () => (await fleetAgent(relay, op.token, 'robot-p'))?.online);
    expect((await call(relay.baseUrl, 'GET', '/agents/robot-p/v1/health', { token: op.token })).status).toBe(200);
    gate.freeze();
    const t0 = performance.now();
    const timedOut = await call(relay.baseUrl, 'GET', '/agents/robot-p/v1/health', { token: op.token });
    expect({ status: timedOut.status, code: timedOut.json?.code }).toEqual({ status: 504, code: 'gateway_timeout' });
    expect((await call(agent.baseUrl, 'GET', '/v1/health')).status).toBe(200);
    await until('offline at the relay (keep-alive)', async () => (await fleetAgent(relay, op.token, 'robot-p'))?.online === false, 70_000, 200);
    const offlineMs = performance.now() - t0;
    log(`silent partition → offline at the relay after ${offlineMs.toFixed(0)} ms (agent keep-alive 30 s; MQTT allows 1.5×)`);
    expect(offlineMs).toBeLessThan(60_000);
    const r = await call(relay.baseUrl, 'GET', '/agents/robot-p/v1/health', { token: op.token });
    expect({ status: r.status, code: r.json?.code }).toEqual({ status: 503, code: 'agent_offline' });
    expect((await call(agent.baseUrl, 'GET', '/v1/health')).status).toBe(200);
  }, 120_000);

  it('relay killed: the agent keeps serving the LAN, events go to the outbox; relay restarted on the same state and ports: reconnect, drain in seq order to fleet/stream', async () => {
    const relay = await startRelayProc(procs);
    const token = await enroll(relay, 'acme', 'robot-o');
    const op = await relayKey(relay, 'operator', 'acme');
    // The agent dials the relay's MQTT port through a gate: closed, it refuses connections, so the
    // fleet stream can subscribe on the restarted relay before the agent comes back (no race with the
    // agent's jittered backoff). Open, it is a plain TCP pass-through.
    const gate = await tcpGate(relay.mqttPort);
    procs.onCleanup(() => gate.close());
    const agent = await startAgentProc(procs, `mqtt://127.0.0.1:${gate.port}`, token, 'acme');
    await until('online', async () => (await fleetAgent(relay, op.token, 'robot-o'))?.online);
    expect((await relayStatus(agent)).connected).toBe(true);

    const s1 = openStream(relay.baseUrl, op.token);
    await s1.opened;
    await emitEvent(agent, 'live-0');
    const live = await until('live frame', () => s1.frames.find((f) => f.type === 'event' && JSON.stringify(f.frame).includes('live-0')));
    s1.ws.terminate();

    // Kill the relay with relayed requests in flight (no route is slow, so a burst of them): each
    // caller gets an answer or a network error, none hangs.
    const inflight = Array.from({ length: 60 }, (_, i) =>
      fetch(`${relay.baseUrl}/agents/robot-o/v1/${i % 2 ? 'health' : 'devices'}`, { headers: { authorization: `Bearer ${op.token}` } }).then(
        (r) => r.status,
        () => 'network error',
      ),
    );
    await Promise.race(inflight); // the first answer is back: the rest are in flight
    const tKill = performance.now();
    relay.child.kill('SIGKILL');
    gate.shut();
    await waitForExit(relay.child);
    const outcomes = await Promise.race([Promise.all(inflight), new Promise<never>((_, rej) => setTimeout(() => rej(new Error('relayed requests hung after the relay died')), 15_000))]);
    log(`relayed requests in flight when the relay was killed: ${JSON.stringify(outcomes.reduce<Record<string, number>>((m, o) => ((m[o] = (m[o] ?? 0) + 1), m), {}))}`);
    expect(outcomes.every((o) => o === 200 || o === 'network error')).toBe(true);
    await until('the agent sees the relay gone', async () => !(await relayStatus(agent)).connected, 45_000);
    log(`agent noticed the relay gone after ${(performance.now() - tKill).toFixed(0)} ms`);
    const tLan = performance.now();
    expect((await call(agent.baseUrl, 'GET', '/v1/health')).status).toBe(200);
    expect((await call(agent.baseUrl, 'GET', '/v1/devices', { token: agent.adminKey })).status).toBe(200);
    log(`LAN answers with the relay down: ${(performance.now() - tLan).toFixed(1)} ms for two calls`);
    const tags = ['out-0', 'out-1', 'out-2', 'out-3', 'out-4'];
    for (const t of tags) await emitEvent(agent, t);
    const down = await relayStatus(agent);
    log(`agent relay status with the relay down: ${JSON.stringify(down)}`);
    expect(down.connected).toBe(false);
    expect(down.outbox.depth).toBeGreaterThanOrEqual(tags.length);
    // A dropped connection is not a connect error: last_connect_error stays null until a redial fails.
    expect(down.state).not.toBe('connected');
    await expect(fetch(`${relay.baseUrl}/v1/health`)).rejects.toThrow();

    // Restart on the same state dir and ports; the operator key survives (relay state dir).
    const again = await startRelayProc(procs, { stateDir: relay.stateDir, httpPort: relay.httpPort, mqttPort: relay.mqttPort });
    const s2 = openStream(again.baseUrl, op.token);
    await s2.opened;
    await until('hello', () => s2.frames.find((f) => f.type === 'hello'));
    const tOpen = performance.now();
    gate.open();
    const st = await until('reconnected and drained', async () => {
      const x = await relayStatus(agent);
      return x.connected && x.outbox.depth === 0 ? x : null;
    }, 60_000, 20);
    const reconnectMs = performance.now() - tOpen;
    const drained = await until('drained frames on fleet/stream', () => {
      const got = s2.frames.filter((f) => f.type === 'event' && f.agent_id === 'robot-o' && tags.some((t) => JSON.stringify(f.frame).includes(t)));
      return got.length >= tags.length ? got : null;
    }, 20_000);
    const drainMs = performance.now() - tOpen;
    log(`reconnect + drain after the relay came back: connected & outbox 0 in ${reconnectMs.toFixed(0)} ms, all ${tags.length} frames on fleet/stream in ${drainMs.toFixed(0)} ms (reconnect_attempts ${st.reconnect_attempts})`);
    const order = drained.map((f) => tags.find((t) => JSON.stringify(f.frame).includes(t)));
    expect(order).toEqual(tags);
    const seqs = drained.map((f) => f.seq as number);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBe(seqs[i - 1]! + 1);
    expect(seqs[0]).toBeGreaterThan(live.seq);
    expect(drained.every((f) => f.tenant_id === 'acme' && (f.dropped_before ?? 0) === 0)).toBe(true);
    expect((await fleetAgent(again, op.token, 'robot-o'))?.online).toBe(true);
    expect((await call(again.baseUrl, 'GET', '/agents/robot-o/v1/health', { token: op.token })).status).toBe(200);

    // Once more without touching the gate: the agent redials on its own backoff.
    again.child.kill('SIGKILL');
    await waitForExit(again.child);
    await until('the agent sees the relay gone again', async () => !(await relayStatus(agent)).connected, 45_000);
    await emitEvent(agent, 'out-5');
    expect((await relayStatus(agent)).outbox.depth).toBeGreaterThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 1000));
    const third = await startRelayProc(procs, { stateDir: relay.stateDir, httpPort: relay.httpPort, mqttPort: relay.mqttPort });
    const tUp = performance.now();
    await until('reconnected by itself and drained', async () => {
      const x = await relayStatus(agent);
      return x.connected && x.outbox.depth === 0;
    }, 60_000, 20);
    log(`reconnect + drain on the agent's own backoff after a restart: ${(performance.now() - tUp).toFixed(0)} ms after the relay listened`);
    await until('online at the restarted relay', async () => (await fleetAgent(third, op.token, 'robot-o'))?.online);
  }, 120_000);

  it('revoked enrollment: offline and refused for good, the agent says why; forged and expired tokens: refused by the relay; the LAN serves throughout', async () => {
    const relay = await startRelayProc(procs);
    const op = await relayKey(relay, 'operator', 'acme');
    const token = await enroll(relay, 'acme', 'robot-r');
    const agent = await startAgentProc(procs, relay.mqttUrl, token, 'acme');
    await until('online', async () => (await fleetAgent(relay, op.token, 'robot-r'))?.online);

    const tRevoke = performance.now();
    const del = await call(relay.baseUrl, 'DELETE', '/v1/relay/enrollments/robot-r?tenant_id=acme', { token: RELAY_ADMIN });
    expect(del.status).toBeLessThan(300);
    await until('offline at the relay', async () => (await fleetAgent(relay, op.token, 'robot-r'))?.online === false, 20_000, 20);
    log(`revocation → offline at the relay in ${(performance.now() - tRevoke).toFixed(0)} ms`);
    const refused = await until('the agent shows the connect error', async () => {
      const x = await relayStatus(agent);
      return !x.connected && x.last_connect_error && x.reconnect_attempts >= 2 ? x : null;
    }, 45_000);
    log(`agent relay status after revocation: ${JSON.stringify(refused)}`);
    expect(refused.last_connect_error).toMatch(/not authori[sz]ed|bad user ?name or password|refused/i);
    expect((await call(relay.baseUrl, 'GET', '/agents/robot-r/v1/health', { token: op.token })).status).toBe(503);
    await new Promise((r) => setTimeout(r, 2000));
    expect((await fleetAgent(relay, op.token, 'robot-r'))?.online).toBe(false);
    expect((await relayStatus(agent)).connected).toBe(false);
    expect((await call(agent.baseUrl, 'GET', '/v1/health')).status).toBe(200);
    expect((await call(agent.baseUrl, 'GET', '/v1/devices', { token: agent.adminKey })).status).toBe(200);

    // A token signed by another Ed25519 key (self-consistent: it pins the forger's key).
    const forger = await fixtureKey();
    const forged = await enrollmentToken(forger, 'acme', 'robot-f');
    const f = await startAgentProc(procs, relay.mqttUrl, forged, 'acme');
    const fst = await until('forged: connect error', async () => {
      const x = await relayStatus(f);
      return x.last_connect_error ? x : null;
    }, 30_000);
    log(`forged token (another key): ${JSON.stringify({ connected: fst.connected, state: fst.state, last_connect_error: fst.last_connect_error })}`);
    expect(fst.connected).toBe(false);
    expect(await fleetAgent(relay, op.token, 'robot-f')).toBeNull();
    expect((await call(relay.baseUrl, 'GET', '/agents/robot-f/v1/health', { token: op.token })).status).toBe(404);
    expect((await call(f.baseUrl, 'GET', '/v1/health')).status).toBe(200);

    // A token claiming the real relay key but signed by the forger: the agent refuses it itself?
    const realJwk = relayPublicJwk(relay.stateDir);
    const lying = await enrollmentToken({ ...forger, jwk: realJwk }, 'acme', 'robot-l', 3600, forger);
    const lyingRun = await runServe(['--relay', relay.mqttUrl, '--enroll-token', lying], { SVC_TENANT_ID: 'acme', SVC_CONTROL_CENTER_STATE_DIR: procs.tempDir('svc-e2e-agent-') }, procs);
    log(`token claiming the relay key, signed by another: ${lyingRun.code === null ? 'agent started' : `agent exited ${lyingRun.code}`}: ${lyingRun.output.slice(0, 400)}`);
    if (lyingRun.code !== null) expect(lyingRun.code).not.toBe(0);
    else {
      await new Promise((r) => setTimeout(r, 1500));
      expect(await fleetAgent(relay, op.token, 'robot-l')).toBeNull();
    }

    // An expired token signed by the real relay key.
    const expired = await enrollmentToken({ ...(await relayPrivateKey(relay.stateDir)), jwk: realJwk }, 'acme', 'robot-x', -120);
    const x = await startAgentProc(procs, relay.mqttUrl, expired, 'acme');
    expect(x.output()).toMatch(/expired/);
    const xst = await until('expired: connect error', async () => {
      const s = await relayStatus(x);
      return s.last_connect_error ? s : null;
    }, 30_000);
    log(`expired token: ${JSON.stringify({ connected: xst.connected, last_connect_error: xst.last_connect_error, enrollment_expires_ms: xst.enrollment_expires_ms })}`);
    expect(xst.connected).toBe(false);
    expect(await fleetAgent(relay, op.token, 'robot-x')).toBeNull();
    expect((await call(x.baseUrl, 'GET', '/v1/health')).status).toBe(200);

    // A fresh enrollment of the revoked agent works again (newer iat).
    const fresh = await enroll(relay, 'acme', 'robot-r');
    await waitForExit((agent.child.kill('SIGKILL'), agent.child));
    const back = await startAgentProc(procs, relay.mqttUrl, fresh, 'acme');
    await until('re-enrolled agent online', async () => (await fleetAgent(relay, op.token, 'robot-r'))?.online);
    expect((await relayStatus(back)).connected).toBe(true);
  }, 150_000);
});
