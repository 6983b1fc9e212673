import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { importJWK, jwtVerify, type JWK } from 'jose';
import { relayTopics, type AgentEventFrame, type AgentPresence, type RelayRequest, type RelayResponse, type OnBehalfOfClaims } from '../../api/relay-protocol.js';
import { Relay, type RelayOptions } from '../../relay/server.js';
import { ChunkAssembler, toPayloads } from '../../relay/trunk.js';

export const ADMIN_KEY = 'relay-admin-key-for-tests-0123456789';
export const TENANT = 'acme';

export function tempDir(prefix = 'svc-relay-'): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function startRelay(options: Partial<RelayOptions> = {}): Promise<{ relay: Relay; stop: () => Promise<void>; stateDir: string }> {
  const state = options.stateDir ? null : tempDir();
  const relay = await Relay.start({
    stateDir: options.stateDir ?? state!.dir,
    bind: { host: '127.0.0.1', port: 0 },
    mqttBind: { host: '127.0.0.1', port: 0 },
    mqttUrl: null,
    tenantId: TENANT,
    apiKey: ADMIN_KEY,
    pepper: null,
    requestTimeoutMs: 1500,
    log: () => undefined,
    ...options,
  });
  return {
    relay,
    stateDir: options.stateDir ?? state!.dir,
    stop: async () => {
      await relay.close();
      state?.remove();
    },
  };
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function call(base: string, method: string, p: string, options: { token?: string; body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {}): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | Buffer | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  } else if (options.raw !== undefined) body = options.raw;
  const res = await fetch(`${base}${p}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, text, json };
}

export async function enroll(relay: Relay, tenant: string, agent: string, ttl?: number): Promise<{ token: string; relay_public_key: JWK }> {
  const r = await call(relay.baseUrl, 'POST', '/v1/relay/enrollments', { token: ADMIN_KEY, body: { tenant_id: tenant, agent_id: agent, ...(ttl ? { ttl_secs: ttl } : {}) } });
  if (r.status !== 201) throw new Error(`enrollment failed: ${r.status} ${r.text}`);
  return r.json;
}

export async function createKey(relay: Relay, role: string, tenant: string): Promise<string> {
  const r = await call(relay.baseUrl, 'POST', '/v1/admin/api-keys', { token: ADMIN_KEY, body: { role, tenant_id: tenant, label: `${role}@${tenant}` } });
  if (r.status !== 201) throw new Error(`key creation failed: ${r.status} ${r.text}`);
  return r.json.token;
}

export type Handler = (req: RelayRequest, obo: OnBehalfOfClaims | null) => Omit<RelayResponse, 'kind' | 'id'> | null | Promise<Omit<RelayResponse, 'kind' | 'id'> | null>;

/**
 * A simulated agent that follows api/relay-protocol.ts: connects with its enrollment token as the
 * MQTT password, Last Will = retained offline presence, retained online presence, answers requests
 * on their reply topic (chunked when large) after verifying the on-behalf-of token with the pinned
 * relay key. `handler` returning null leaves a request unanswered.
 */
export class FakeAgent {
  readonly received: RelayRequest[] = [];
  private readonly chunks = new ChunkAssembler();
  private seq = 0;

  private constructor(
    readonly client: MqttClient,
    readonly tenantId: string,
    readonly agentId: string,
  ) {}

  static connectRaw(url: string, tenantId: string, agentId: string, token: string, extra: mqtt.IClientOptions = {}): MqttClient {
    const offline: AgentPresence = { agent_id: agentId, tenant_id: tenantId, online: false, agent_version: '0.7.0-test', connected_since_ms: null, last_seen_ms: Date.now() };
    return mqtt.connect(url, {
      clientId: `agent-${tenantId}-${agentId}-${Math.random().toString(16).slice(2, 8)}`,
      username: agentId,
      password: token,
      protocolVersion: 4,
      keepalive: 2,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      will: { topic: relayTopics.status(tenantId, agentId), payload: Buffer.from(JSON.stringify(offline)), qos: 1, retain: true },
      ...extra,
    });
  }

  /** Resolves once connected, rejects with the broker's refusal. */
  static async start(url: string, tenantId: string, agentId: string, enrollment: { token: string; relay_public_key: JWK }, handler: Handler, extra: mqtt.IClientOptions = {}): Promise<FakeAgent> {
    const client = FakeAgent.connectRaw(url, tenantId, agentId, enrollment.token, extra);
    await waitConnect(client);
    const agent = new FakeAgent(client, tenantId, agentId);
    const key = await importJWK(enrollment.relay_public_key, 'EdDSA');
    client.on('message', (topic, payload) => {
      if (topic !== relayTopics.requests(tenantId, agentId)) return;
      const raw = payload.toString('utf8');
      const text = agent.chunks.accept(topic, JSON.parse(raw), raw);
      if (text === null) return;
      const req = JSON.parse(text) as RelayRequest;
      agent.received.push(req);
      void (async () => {
        let obo: OnBehalfOfClaims | null = null;
        if (req.obo) {
          try {
            obo = (await jwtVerify(req.obo, key, { issuer: 'svc-relay', audience: agentId })).payload as unknown as OnBehalfOfClaims;
          } catch {
            return agent.reply(req, { status: 401, headers: { 'content-type': 'application/json' }, body_b64: b64({ ok: false, error: 'bad obo', code: 'unauthorized' }) });
          }
        }
        const answer = await handler(req, obo);
        if (answer) agent.reply(req, answer);
      })();
    });
    await client.subscribeAsync(relayTopics.requests(tenantId, agentId), { qos: 1 });
    await agent.announce(true);
    return agent;
  }

  reply(req: RelayRequest, answer: Omit<RelayResponse, 'kind' | 'id'>): void {
    const res: RelayResponse = { kind: 'response', id: req.id, ...answer };
    for (const p of toPayloads(res, req.id)) this.client.publish(req.reply_to, p, { qos: 1 });
  }

  announce(online: boolean): Promise<unknown> {
    const p: AgentPresence = { agent_id: this.agentId, tenant_id: this.tenantId, online, agent_version: '0.7.0-test', connected_since_ms: online ? Date.now() : null, last_seen_ms: Date.now() };
    return this.client.publishAsync(relayTopics.status(this.tenantId, this.agentId), JSON.stringify(p), { qos: 1, retain: true });
  }

  event(frame: Record<string, unknown>): Promise<unknown> {
    const f: AgentEventFrame = { kind: 'event', agent_id: this.agentId, seq: ++this.seq, dropped_before: 0, frame };
    return this.client.publishAsync(relayTopics.events(this.tenantId, this.agentId), JSON.stringify(f), { qos: 1 });
  }

  /** Dies without DISCONNECT: the broker publishes the Last Will. */
  kill(): void {
    (this.client as unknown as { stream: { destroy(): void } }).stream.destroy();
    this.client.end(true);
  }

  stop(): Promise<void> {
    return this.client.endAsync(true);
  }
}

export function b64(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');
}

export function waitConnect(client: MqttClient): Promise<void> {
  return new Promise((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', (err) => {
      client.end(true);
      reject(err);
    });
    client.once('close', () => reject(new Error('connection closed before CONNACK')));
  });
}

export async function until<T>(probe: () => T | Promise<T>, what: string, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const echoHandler: Handler = (req, obo) => ({
  status: 200,
  headers: { 'content-type': 'application/json', 'x-agent': 'yes' },
  body_b64: b64({ ok: true, method: req.method, path: req.path, obo_sub: obo?.sub ?? null, obo_role: obo?.role ?? null, obo_tenant: obo?.tenant_id ?? null, body: req.body_b64 ? Buffer.from(req.body_b64, 'base64').toString('utf8') : null }),
});
