import http from 'node:http';
import net from 'node:net';
import { createWebSocketStream, WebSocketServer } from 'ws';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import mqtt, { type MqttClient } from 'mqtt';
import {
  relayTopics,
  type AgentEventFrame,
  type AgentPresence,
  type EnvelopeChunk,
  type RelayRequest,
  type RelayResponse,
} from '../../api/relay-protocol.js';

/**
 * The relay's part in the agent-side trunk tests, played by the test: a real Ed25519 key (jose) that
 * signs enrollment and on-behalf-of tokens as api/relay-protocol.ts says, and a real mqtt.js client
 * on the broker that sends requests and reads replies, presence and event frames.
 */

export type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

export async function relayKey(): Promise<KeyPair & { jwk: JWK }> {
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  return { ...pair, jwk: await exportJWK(pair.publicKey) };
}

export async function enrollmentToken(key: KeyPair & { jwk: JWK }, tenant: string, agent: string, ttlSecs = 3600, signer: KeyPair = key): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ tenant_id: tenant, relay_key: key.jwk as Record<string, unknown> })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuer('svc-relay')
    .setSubject(agent)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSecs)
    .sign(signer.privateKey);
}

export async function oboToken(
  key: KeyPair,
  claims: { sub: string; aud: string; tenant_id: string; role: string; user_id?: string | null },
  options: { expSecs?: number; iatSecs?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ tenant_id: claims.tenant_id, role: claims.role, user_id: claims.user_id ?? null })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
    .setIssuer('svc-relay')
    .setSubject(claims.sub)
    .setAudience(claims.aud)
    .setJti(randomUUID())
    .setIssuedAt(options.iatSecs ?? now)
    .setExpirationTime(options.expSecs ?? now + 60)
    .sign(key.privateKey);
}

export interface Reply {
  response: RelayResponse;
  chunks: number;
  status: number;
  text: string;
  json: any;
}

/** A relay node on the broker: sends requests to one agent and collects its replies, presence and events. */
export class TestRelay {
  readonly events: AgentEventFrame[] = [];
  readonly presence: AgentPresence[] = [];
  private readonly waiting = new Map<string, { parts: string[]; got: number; resolve: (r: Reply) => void }>();
  readonly node = `node-${randomUUID().slice(0, 8)}`;

  private constructor(
    readonly client: MqttClient,
    readonly tenant: string,
    readonly agent: string,
  ) {
    client.on('message', (topic, payload) => this.onMessage(topic, payload));
  }

  static async connect(url: string, tenant: string, agent: string): Promise<TestRelay> {
    const client = await mqtt.connectAsync(url, { clientId: `relay-test-${randomUUID().slice(0, 8)}`, reconnectPeriod: 200 });
    (client.stream as { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
    const relay = new TestRelay(client, tenant, agent);
    await client.subscribeAsync(
      [relayTopics.replies(tenant, agent, relay.node), relayTopics.status(tenant, agent), relayTopics.events(tenant, agent)].map((t) => t),
      { qos: 1 },
    );
    return relay;
  }

  get replyTo(): string {
    return relayTopics.replies(this.tenant, this.agent, this.node);
  }

  private onMessage(topic: string, payload: Buffer): void {
    const msg = JSON.parse(payload.toString('utf8'));
    if (topic === relayTopics.status(this.tenant, this.agent)) this.presence.push(msg);
    else if (topic === relayTopics.events(this.tenant, this.agent)) this.events.push(msg);
    else if (topic === this.replyTo) {
      if (msg.chunk) {
        const c = msg as EnvelopeChunk;
        const w = this.waiting.get(c.chunk.id);
        if (!w) return;
        w.parts[c.chunk.seq] = c.part;
        w.got++;
        if (w.got === c.chunk.total) this.finish(c.chunk.id, JSON.parse(w.parts.join('')), c.chunk.total);
      } else this.finish(msg.id, msg, 1);
    }
  }

  private finish(id: string, response: RelayResponse, chunks: number): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    const text = response.body_b64 ? Buffer.from(response.body_b64, 'base64').toString('utf8') : '';
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    w.resolve({ response, chunks, status: response.status, text, json });
  }

  /** Publishes a request (chunked when `chunkSize` is given) and waits for the reply, or null after `timeoutMs`. */
  async request(
    method: string,
    path: string,
    options: { obo?: string | null; body?: unknown; headers?: Record<string, string>; replyTo?: string; deadlineMs?: number; timeoutMs?: number; chunkSize?: number } = {},
  ): Promise<Reply | null> {
    const id = randomUUID();
    const req: RelayRequest = {
      kind: 'request',
      id,
      method,
      path,
      headers: { 'content-type': 'application/json', ...(options.headers ?? {}) },
      ...(options.body !== undefined ? { body_b64: Buffer.from(JSON.stringify(options.body)).toString('base64') } : {}),
      obo: options.obo ?? null,
      reply_to: options.replyTo ?? this.replyTo,
      deadline_ms: options.deadlineMs ?? Date.now() + 10_000,
    };
    const result = new Promise<Reply | null>((resolve) => {
      this.waiting.set(id, { parts: [], got: 0, resolve });
      setTimeout(() => {
        if (this.waiting.delete(id)) resolve(null);
      }, options.timeoutMs ?? 5000);
    });
    const topic = relayTopics.requests(this.tenant, this.agent);
    const json = JSON.stringify(req);
    if (options.chunkSize) {
      const total = Math.ceil(json.length / options.chunkSize);
      for (let seq = 0; seq < total; seq++) {
        const chunk: EnvelopeChunk = { chunk: { id: `c-${id}`, seq, total }, part: json.slice(seq * options.chunkSize, (seq + 1) * options.chunkSize) };
        await this.client.publishAsync(topic, JSON.stringify(chunk), { qos: 1 });
      }
    } else await this.client.publishAsync(topic, json, { qos: 1 });
    return result;
  }

  async close(): Promise<void> {
    await this.client.endAsync(true);
  }
}

/** Reads the retained presence of an agent with a fresh client (what a relay node that just started sees). */
export async function retainedPresence(url: string, tenant: string, agent: string, timeoutMs = 2000): Promise<AgentPresence | null> {
  const client = await mqtt.connectAsync(url, { clientId: `presence-${randomUUID().slice(0, 8)}`, reconnectPeriod: 0 });
  try {
    return await new Promise<AgentPresence | null>((resolve) => {
      const t = setTimeout(() => resolve(null), timeoutMs);
      // The retained message, or (when the agent's publish was still on its way) the live one.
      client.on('message', (_topic, payload) => {
        clearTimeout(t);
        resolve(JSON.parse(payload.toString('utf8')));
      });
      void client.subscribeAsync(relayTopics.status(tenant, agent), { qos: 1 });
    });
  } finally {
    await client.endAsync(true);
  }
}

/**
 * A TCP proxy in front of the broker: `cut()` drops every connection through it and refuses new ones
 * (the relay unreachable, the broker and the test relay's subscriptions untouched); `restore()` lets
 * connections through again.
 */
export async function cuttableProxy(targetPort: number): Promise<{ url: string; cut(): void; restore(): void; close(): Promise<void> }> {
  let open = true;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((down) => {
    if (!open) return down.destroy();
    const up = net.connect(targetPort, '127.0.0.1');
    sockets.add(down);
    sockets.add(up);
    down.pipe(up);
    up.pipe(down);
    const end = () => {
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    down.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      open = true;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export async function until<T>(what: string, check: () => T | null | undefined | false | Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * MQTT over WebSocket in front of the broker (what the relay serves at `/mqtt` on its HTTP port): each
 * WebSocket on `/mqtt` (subprotocol `mqtt`) is piped to a TCP connection to the broker. Debian's
 * mosquitto cannot open a websockets listener in every container, so the test brings its own.
 */
export async function mqttOverWebSocket(targetPort: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ server, path: '/mqtt', handleProtocols: (protocols) => (protocols.has('mqtt') ? 'mqtt' : false) });
  wss.on('connection', (ws) => {
    const stream = createWebSocketStream(ws);
    const up = net.connect(targetPort, '127.0.0.1');
    stream.pipe(up);
    up.pipe(stream);
    const end = () => {
      up.destroy();
      stream.destroy();
    };
    stream.on('error', end).on('close', end);
    up.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}/mqtt`,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.close(() => r());
      }),
  };
}
