import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { waitForExit } from '../helpers/spawn-agent.js';
import { call, emitEvent, enroll, fleetAgent, Procs, RELAY_ADMIN, relayKey, relayStatus, startAgentProc, startRelayProc, until } from './e2e-helpers.js';

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

  it('WebSocket through the relay is not implemented: the upgrade is answered 501', async () => {
    const relay = await startRelayProc(procs);
    const token = await enroll(relay, 'acme', 'robot-ws');
    const op = await relayKey(relay, 'operator', 'acme');
    const agent = await startAgentProc(procs, relay.mqttUrl, token, 'acme');
    await until('online', async () => (await fleetAgent(relay, op.token, 'robot-ws'))?.online);
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${relay.baseUrl.replace('http', 'ws')}/agents/robot-ws/v1/stream/telemetry`, { headers: { authorization: `Bearer ${op.token}` } });
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        ws.terminate();
      });
      ws.once('open', () => reject(new Error('the relay accepted a WebSocket to an agent')));
      ws.once('error', (err) => reject(err));
    });
    expect(status).toBe(501);
    // The same stream on the agent's LAN port does open.
    await new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(`${agent.baseUrl.replace('http', 'ws')}/v1/stream/telemetry`, { headers: { authorization: `Bearer ${agent.adminKey}` } });
      ws.once('open', () => (ws.close(), resolve()));
      ws.once('error', reject);
      ws.once('unexpected-response', (_q, res) => reject(new Error(`LAN stream: ${res.statusCode}`)));
    });
  }, 60_000);
});
