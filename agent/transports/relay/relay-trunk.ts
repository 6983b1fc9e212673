import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { WebSocket } from 'ws';
import type { RelayLinkStatus } from '../../../api/domains/relay-link.js';
import {
  agentTopicRoot,
  MAX_ENVELOPE_BYTES,
  MAX_RELAYED_STREAMS,
  relayTopics,
  TOPIC_ID,
  type AgentEventFrame,
  type AgentPresence,
  type RelayRequest,
  type RelayResponse,
  type RelayStreamClosed,
  type RelayStreamFrame,
  type RelayStreamOpen,
} from '../../../api/relay-protocol.js';
import { ApiError, badRequest } from '../../core/errors.js';
import { prepareRelayIdentity, RelayTokenVerifier, type RelayIdentity } from '../../security/relay-tokens.js';
import type { TelemetryStore } from '../../telemetry/telemetry-store.js';
import { ChunkAssembler, envelopePayloads, isChunk } from './chunks.js';
import { RelayOutbox } from './relay-outbox.js';

/**
 * The agent side of the relay trunk (docs/relay.md, "The agent side"; protocol in api/relay-protocol.ts).
 * Loaded by a dynamic import only when the agent is started with `--relay`: an agent without a relay
 * never loads mqtt.js or this code.
 *
 * - One MQTT connection out (mqtt.js), username = agent id, password = enrollment token, client id
 *   `agent:<tenant>:<agent>`, keep-alive 30 s, Last Will = offline presence (retained).
 * - Reconnect is ours, with full-jitter exponential backoff (the HAL's MQTT link does the same;
 *   mqtt.js's own `reconnectPeriod` is a fixed interval, which makes a fleet retry in lockstep after a
 *   relay restart). Nothing here ever blocks or fails the LAN API.
 * - Requests run through the agent's own REST app (`dispatch`) with the on-behalf-of token as Bearer
 *   token, so every pipeline step applies; answers go to the request's `reply_to`, only below this
 *   agent's topic root.
 * - Telemetry frames (device telemetry and every streamed platform event) go out as AgentEventFrames
 *   with a monotonic seq; while disconnected they go to the bounded, persisted outbox, drained in order
 *   on reconnect before any live frame.
 */

export interface RelayTrunkOptions {
  url: string;
  enrollToken: string;
  tenantId: string;
  stateDir: string;
  outboxFrames: number;
  agentVersion: string;
  /** Largest request body the agent accepts (chunked requests are bounded by it). */
  maxBodyBytes: number;
  telemetry: TelemetryStore;
  /** The agent's REST app (loads the HTTP stack on first use). */
  dispatch: (req: Request) => Promise<Response>;
  /** `host:port` the agent listens on (the Host of dispatched requests). */
  bind: () => string | null;
  log: (line: string) => void;
  /** Backoff bounds (tests shorten them). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  keepaliveSecs?: number;
  /** Envelope size above which replies are chunked (tests lower it); default MAX_ENVELOPE_BYTES. */
  maxEnvelopeBytes?: number;
}

/** Request headers never taken from the envelope: hop-by-hop, framing, and the caller's own credentials. */
const DROPPED_HEADERS = new Set(['authorization', 'host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'content-length', 'te', 'trailer', 'expect']);
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Full-jitter exponential backoff (as hal/core/backoff.ts). */
class Backoff {
  private attempt = 0;
  constructor(
    private readonly baseMs: number,
    private readonly maxMs: number,
  ) {}
  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.max(this.baseMs / 4, Math.round(Math.random() * ceiling));
  }
  reset(): void {
    this.attempt = 0;
  }
}

export class RelayTrunk {
  readonly verifier: RelayTokenVerifier;
  private client: MqttClient | null = null;
  private state: RelayLinkStatus['state'] = 'idle';
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly backoff: Backoff;
  private connectedSinceMs: number | null = null;
  private lastError: { message: string; atMs: number } | null = null;
  private attempts = 0;
  private readonly outbox: RelayOutbox;
  /** Live frames published but not acknowledged yet: back into the outbox if the connection drops. */
  private readonly unacked = new Map<number, AgentEventFrame>();
  private draining = false;
  private unsubscribe: (() => void) | null = null;
  private readonly chunks: ChunkAssembler;
  private readonly counters = { answered: 0, expired: 0, rejected: 0 };
  /** Relayed WebSocket streams: a real client socket to this agent's own LAN listener each. */
  private readonly streams = new Map<string, RelayedStream>();
  private readonly streamCounters = { opened: 0, refused: 0 };
  private readonly root: string;
  private readonly topics: { requests: string; status: string; events: string };
  private readonly url: URL;

  private constructor(
    private readonly opts: RelayTrunkOptions,
    readonly identity: RelayIdentity,
  ) {
    this.verifier = new RelayTokenVerifier(identity);
    this.backoff = new Backoff(opts.backoffBaseMs ?? 500, opts.backoffMaxMs ?? 30_000);
    this.root = agentTopicRoot(identity.tenantId, identity.agentId);
    this.topics = {
      requests: relayTopics.requests(identity.tenantId, identity.agentId),
      status: relayTopics.status(identity.tenantId, identity.agentId),
      events: relayTopics.events(identity.tenantId, identity.agentId),
    };
    this.url = new URL(opts.url);
    this.outbox = new RelayOutbox(opts.stateDir, opts.outboxFrames, identity.agentId, opts.log);
    // Base64 grows a body by 4/3; headers and the envelope around it are small.
    this.chunks = new ChunkAssembler(Math.ceil((opts.maxBodyBytes * 4) / 3) + 256 * 1024);
  }

  /**
   * Checks the URL and the enrollment token (tenant, self-consistent signature) before the agent
   * listens: a misconfigured trunk stops the start with a message that says what to fix.
   */
  static async prepare(opts: RelayTrunkOptions): Promise<RelayTrunk> {
    let url: URL;
    try {
      url = new URL(opts.url);
    } catch {
      throw new Error(`--relay / SVC_RELAY_URL: '${opts.url}' is not a URL (mqtt://host:1883, mqtts://host:8883, ws(s)://relay/mqtt)`);
    }
    if (!['mqtt:', 'mqtts:', 'ws:', 'wss:'].includes(url.protocol)) {
      throw new Error(`--relay / SVC_RELAY_URL: scheme '${url.protocol}' is not an MQTT transport (mqtt, mqtts, ws, wss)`);
    }
    if (url.username || url.password) throw new Error('--relay / SVC_RELAY_URL: put no credentials in the URL (the enrollment token is the password)');
    const identity = await prepareRelayIdentity(opts.enrollToken, opts.tenantId, TOPIC_ID);
    const trunk = new RelayTrunk(opts, identity);
    if (identity.expiresAt * 1000 < Date.now()) {
      opts.log(`warning: the relay enrollment token expired at ${new Date(identity.expiresAt * 1000).toISOString()}; the relay will refuse it (enroll the agent again)`);
    }
    return trunk;
  }

  /** Starts forwarding events and dialling the relay in the background. */
  start(): void {
    if (this.unsubscribe || this.closed) return;
    this.unsubscribe = this.opts.telemetry.ring.onAppend((event, offset) => this.onEvent({ type: 'telemetry', offset, event: event as unknown as Record<string, unknown> }));
    this.opts.log(`relay: agent ${this.identity.agentId} (tenant ${this.identity.tenantId}) dialling ${this.url.protocol}//${this.url.host}`);
    this.connectOnce();
  }

  private presence(online: boolean): AgentPresence {
    return {
      agent_id: this.identity.agentId,
      tenant_id: this.identity.tenantId,
      online,
      agent_version: this.opts.agentVersion,
      connected_since_ms: online ? this.connectedSinceMs : null,
      last_seen_ms: Date.now(),
    };
  }

  private connectOnce(): void {
    this.timer = null;
    if (this.closed) return;
    this.state = 'connecting';
    this.attempts++;
    const options: IClientOptions = {
      clientId: `agent:${this.identity.tenantId}:${this.identity.agentId}`,
      username: this.identity.agentId,
      password: this.identity.token,
      protocolVersion: 4,
      keepalive: this.opts.keepaliveSecs ?? 30,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      resubscribe: false,
      will: { topic: this.topics.status, payload: Buffer.from(JSON.stringify(this.presence(false))), qos: 1, retain: true },
    };
    let client: MqttClient;
    try {
      client = connect(this.opts.url, options);
    } catch (err) {
      this.noteError((err as Error).message);
      this.scheduleReconnect();
      return;
    }
    // mqtt.js leaves Nagle on for TCP (and TLS): a small reply would wait for the peer's delayed ACK,
    // ~40 ms per hop. The trunk carries request/response traffic, so send at once (ws already does).
    (client.stream as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true);
    this.client = client;
    client.on('connect', () => {
      if (this.client === client) this.onConnected(client);
    });
    client.on('message', (topic, payload) => {
      if (this.client === client) this.onMessage(client, topic, payload);
    });
    client.on('error', (err) => this.noteError(err.message));
    client.on('close', () => {
      if (this.client === client) this.onDisconnected(client);
    });
  }

  /** Set once an outage has been logged; cleared on the next CONNACK (one line per outage, not per retry). */
  private outageLogged = false;

  private noteError(message: string): void {
    this.lastError = { message, atMs: Date.now() };
    if (this.state !== 'connected' && !this.outageLogged && !this.closed) {
      this.outageLogged = true;
      this.opts.log(`relay: cannot reach ${this.url.host} (${message}); retrying in the background with backoff, the LAN API is unaffected`);
    }
  }

  private onConnected(client: MqttClient): void {
    const wasLogged = this.connectedSinceMs;
    this.connectedSinceMs = Date.now();
    this.state = 'connected';
    this.outageLogged = false;
    this.backoff.reset();
    this.opts.log(`relay: connected to ${this.url.host} as ${this.identity.agentId}${wasLogged === null ? '' : ' (again)'}${this.outbox.depth ? `; draining ${this.outbox.depth} outbox frame(s)` : ''}`);
    client.publish(this.topics.status, JSON.stringify(this.presence(true)), { qos: 1, retain: true });
    client.subscribe(this.topics.requests, { qos: 1 }, (err) => {
      if (err) this.noteError(`subscribe ${this.topics.requests}: ${err.message}`);
    });
    void this.drain(client);
  }

  private onDisconnected(client: MqttClient): void {
    this.client = null;
    client.removeAllListeners('message');
    client.end(true);
    if (this.state === 'connected') this.opts.log(`relay: connection to ${this.url.host} lost${this.lastError ? ` (${this.lastError.message})` : ''}; the LAN API is unaffected, events go to the outbox`);
    this.requeueUnacked();
    // The relay end of every relayed stream is gone with the connection.
    this.closeAllStreams('relay connection lost');
    if (this.closed) return;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) return;
    this.state = 'backoff';
    this.timer = setTimeout(() => this.connectOnce(), this.backoff.next());
    this.timer.unref();
  }

  private requeueUnacked(): void {
    if (this.unacked.size === 0) return;
    const frames = [...this.unacked.values()];
    this.unacked.clear();
    this.outbox.requeue(frames);
  }

  private get live(): boolean {
    return this.state === 'connected' && this.client !== null && this.client.connected;
  }

  // Events --------------------------------------------------------------------------------------

  private onEvent(frame: Record<string, unknown>): void {
    if (this.closed) return;
    if (this.live && !this.draining && this.outbox.depth === 0) {
      const stamped = this.outbox.stamp(frame);
      this.unacked.set(stamped.seq, stamped);
      this.client!.publish(this.topics.events, JSON.stringify(stamped), { qos: 1 }, (err) => {
        if (!err) this.unacked.delete(stamped.seq);
      });
      return;
    }
    this.outbox.push(frame);
    if (this.live && !this.draining) void this.drain(this.client!);
  }

  /** Sends the outbox in order, a batch at a time (each acknowledged before it is forgotten). */
  private async drain(client: MqttClient): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    let sent = 0;
    let announcedDrops = 0;
    try {
      while (this.client === client && client.connected && this.outbox.depth > 0) {
        const batch = this.outbox.peek(200);
        await Promise.all(batch.map((f) => client.publishAsync(this.topics.events, JSON.stringify(f), { qos: 1 })));
        if (this.client !== client) break;
        this.outbox.shift(batch.length);
        sent += batch.length;
        for (const f of batch) announcedDrops += f.dropped_before;
      }
    } catch (err) {
      this.noteError(`outbox drain: ${(err as Error).message}`);
    } finally {
      this.draining = false;
      if (sent > 0) {
        this.outbox.persist();
        this.opts.log(`relay: outbox drained ${sent} frame(s)${announcedDrops ? `, ${announcedDrops} dropped while the relay was unreachable (announced as dropped_before)` : ''}`);
      }
    }
  }

  // Requests ------------------------------------------------------------------------------------

  private onMessage(client: MqttClient, topic: string, payload: Buffer): void {
    if (topic !== this.topics.requests) return;
    let msg: unknown;
    try {
      msg = JSON.parse(payload.toString('utf8'));
    } catch {
      return this.reject('request payload is not JSON');
    }
    if (isChunk(msg)) {
      const r = this.chunks.add(msg);
      if (!r) return;
      if ('error' in r) return this.reject(r.error);
      try {
        msg = JSON.parse(r.json);
      } catch {
        return this.reject('chunked request is not JSON');
      }
    }
    const kind = (msg as { kind?: unknown } | null)?.kind;
    if (kind === 'stream_open' || kind === 'stream_data' || kind === 'stream_close') return this.handleStream(client, msg as Record<string, unknown>);
    void this.handleRequest(client, msg);
  }

  private reject(why: string): void {
    this.counters.rejected++;
    this.opts.log(`relay: request dropped: ${why}`);
  }

  private validReplyTo(replyTo: unknown): replyTo is string {
    return typeof replyTo === 'string' && replyTo.startsWith(`${this.root}/`) && !/[+#\u0000]/.test(replyTo) && !replyTo.split('/').some((p) => p === '');
  }

  private async handleRequest(client: MqttClient, value: unknown): Promise<void> {
    const r = value as Partial<RelayRequest>;
    if (!r || r.kind !== 'request' || typeof r.id !== 'string' || !TOPIC_ID.test(r.id)) return this.reject('not a request envelope');
    // Never publish outside this agent's topics, whatever the envelope says.
    if (!this.validReplyTo(r.reply_to)) return this.reject(`reply_to ${JSON.stringify(r.reply_to)} is not below ${this.root}/`);
    if (typeof r.deadline_ms !== 'number' || r.deadline_ms < Date.now()) {
      this.counters.expired++;
      return;
    }
    let response: RelayResponse;
    try {
      response = await this.run(r as RelayRequest);
    } catch (err) {
      response = errorEnvelope(r.id, err instanceof ApiError ? err : badRequest((err as Error).message));
    }
    if (this.client !== client || !client.connected) return;
    const payloads = envelopePayloads(response, r.id, this.opts.maxEnvelopeBytes ?? MAX_ENVELOPE_BYTES);
    for (const p of payloads) client.publish(r.reply_to!, p, { qos: 1 });
    this.counters.answered++;
  }

  private async run(r: RelayRequest): Promise<RelayResponse> {
    const method = typeof r.method === 'string' ? r.method.toUpperCase() : '';
    if (!METHODS.has(method)) throw new Error(`method ${String(r.method)} not supported`);
    if (typeof r.path !== 'string' || !r.path.startsWith('/') || r.path.startsWith('//') || /[\s\u0000-\u001f]/.test(r.path)) throw new Error('path must start with a single /');
    const headers = new Headers();
    if (r.headers && typeof r.headers === 'object') {
      for (const [k, v] of Object.entries(r.headers)) {
        if (typeof v !== 'string' || DROPPED_HEADERS.has(k.toLowerCase())) continue;
        try {
          headers.set(k, v);
        } catch {
          /* an invalid header name or value is left out */
        }
      }
    }
    if (typeof r.obo === 'string' && r.obo !== '') headers.set('authorization', `Bearer ${r.obo}`);
    let body: Buffer | undefined;
    if (typeof r.body_b64 === 'string' && r.body_b64 !== '' && method !== 'GET' && method !== 'HEAD') body = Buffer.from(r.body_b64, 'base64');
    const host = this.opts.bind() ?? '127.0.0.1';
    const req = new Request(`http://${host}${r.path}`, { method, headers, ...(body ? { body } : {}) });
    const res = await this.opts.dispatch(req);
    const out = Buffer.from(await res.arrayBuffer());
    const resHeaders: Record<string, string> = {};
    res.headers.forEach((v, k) => (resHeaders[k] = v));
    return { kind: 'response', id: r.id, status: res.status, headers: resHeaders, ...(out.length > 0 ? { body_b64: out.toString('base64') } : {}) };
  }

  // Relayed streams ---------------------------------------------------------------------------

  private handleStream(client: MqttClient, m: Record<string, unknown>): void {
    if (typeof m['id'] !== 'string' || !TOPIC_ID.test(m['id'])) return this.reject('stream envelope without a valid id');
    const id = m['id'];
    if (m['kind'] === 'stream_data') {
      const s = this.streams.get(id);
      if (!s || typeof m['data'] !== 'string') return;
      if (s.ws.readyState === WebSocket.OPEN) s.ws.send(m['data']);
      else if (s.ws.readyState === WebSocket.CONNECTING && s.pending.length < 64) s.pending.push(m['data']);
      return;
    }
    if (m['kind'] === 'stream_close') {
      const s = this.streams.get(id);
      if (s) this.closeStream(s, 'closed by the relay');
      return;
    }
    const o = m as Partial<RelayStreamOpen>;
    // Never publish outside this agent's topics, whatever the envelope says.
    if (!this.validReplyTo(o.reply_to)) return this.reject(`stream reply_to ${JSON.stringify(o.reply_to)} is not below ${this.root}/`);
    if (typeof o.deadline_ms !== 'number' || o.deadline_ms < Date.now()) {
      this.counters.expired++;
      return;
    }
    if (this.streams.has(id)) return;
    const replyTo = o.reply_to;
    const refuse = (code: number, reason: string) => {
      this.streamCounters.refused++;
      const closed: RelayStreamClosed = { kind: 'stream_closed', id, code, reason };
      client.publish(replyTo, JSON.stringify(closed), { qos: 1 });
    };
    if (typeof o.path !== 'string' || !o.path.startsWith('/v1/stream/') || /[\s\u0000-\u001f]/.test(o.path)) return refuse(1008, 'not a stream path');
    if (this.streams.size >= MAX_RELAYED_STREAMS) return refuse(1013, `this agent serves at most ${MAX_RELAYED_STREAMS} relayed streams`);
    const bind = this.opts.bind();
    if (!bind) return refuse(1011, 'the agent is not listening');
    // The agent's own listener: a wildcard bind is reached on loopback.
    const host = bind.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:');
    const headers: Record<string, string> = {};
    if (typeof o.obo === 'string' && o.obo !== '') headers['authorization'] = `Bearer ${o.obo}`;
    let ws: WebSocket;
    try {
      ws = new WebSocket(`ws://${host}${o.path}`, { headers, perMessageDeflate: false, handshakeTimeout: 10_000 });
    } catch (err) {
      return refuse(1011, (err as Error).message.slice(0, 100));
    }
    const s: RelayedStream = { id, ws, client, replyTo, pending: [], done: false };
    this.streams.set(id, s);
    this.streamCounters.opened++;
    ws.on('open', () => {
      for (const d of s.pending.splice(0)) ws.send(d);
    });
    ws.on('message', (data, isBinary) => {
      if (s.done || this.client !== client || !client.connected) return;
      const frame: RelayStreamFrame = { kind: 'stream_frame', id, data: isBinary ? Buffer.from(data as Buffer).toString('base64') : data.toString() };
      client.publish(replyTo, JSON.stringify(frame), { qos: 1 });
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        let reason = `HTTP ${res.statusCode}`;
        try {
          const err = JSON.parse(body) as { error?: { code?: string } ; code?: string };
          reason = `${res.statusCode} ${err.error?.code ?? err.code ?? ''}`.trim();
        } catch {
          /* not JSON */
        }
        // 4000 + HTTP status: the relay gives the client the refusal the LAN listener gave.
        this.finishStream(s, 4000 + (res.statusCode ?? 500) % 1000, reason);
      });
      res.on('error', () => this.finishStream(s, 1011, `HTTP ${res.statusCode}`));
    });
    ws.on('close', (code, reason) => this.finishStream(s, code, reason.toString()));
    ws.on('error', (err) => {
      if (ws.readyState !== WebSocket.OPEN) this.finishStream(s, 1011, err.message.slice(0, 100));
    });
  }

  /** The agent-side socket ended: tell the relay once and forget the stream. */
  private finishStream(s: RelayedStream, code: number, reason: string): void {
    if (s.done) return;
    s.done = true;
    this.streams.delete(s.id);
    if (s.ws.readyState !== WebSocket.CLOSED) s.ws.terminate();
    if (this.client !== s.client || !s.client.connected) return;
    const closed: RelayStreamClosed = { kind: 'stream_closed', id: s.id, code, reason: reason.slice(0, 120) };
    s.client.publish(s.replyTo, JSON.stringify(closed), { qos: 1 });
  }

  private closeStream(s: RelayedStream, why: string): void {
    if (s.done) return;
    s.done = true;
    this.streams.delete(s.id);
    if (s.ws.readyState === WebSocket.OPEN) s.ws.close(1000, why);
    else s.ws.terminate();
  }

  private closeAllStreams(why: string): void {
    for (const s of [...this.streams.values()]) this.closeStream(s, why);
  }

  // Status and shutdown -------------------------------------------------------------------------

  status(): RelayLinkStatus {
    return {
      configured: true,
      connected: this.live,
      state: this.state,
      relay_host: this.url.host,
      transport: this.url.protocol.slice(0, -1) as RelayLinkStatus['transport'],
      agent_id: this.identity.agentId,
      tenant_id: this.identity.tenantId,
      enrollment_expires_ms: Number.isFinite(this.identity.expiresAt) ? this.identity.expiresAt * 1000 : null,
      connected_since_ms: this.live ? this.connectedSinceMs : null,
      last_connect_error: this.lastError?.message ?? null,
      last_connect_error_ms: this.lastError?.atMs ?? null,
      reconnect_attempts: this.attempts,
      outbox: {
        depth: this.outbox.depth,
        capacity: this.outbox.capacity,
        dropped_total: this.outbox.droppedTotal,
        dropped_pending: this.outbox.pendingDrops,
        next_seq: this.outbox.nextSeq,
      },
      requests: { ...this.counters },
      streams: { open: this.streams.size, opened: this.streamCounters.opened, refused: this.streamCounters.refused },
    };
  }

  /** Says offline (retained) when connected, disconnects, and keeps unsent frames in the outbox. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.closeAllStreams('agent shutting down');
    const client = this.client;
    this.client = null;
    this.state = 'closed';
    if (client) {
      if (client.connected) {
        await withTimeout(client.publishAsync(this.topics.status, JSON.stringify(this.presence(false)), { qos: 1, retain: true }), 1000).catch(() => undefined);
      }
      await withTimeout(client.endAsync(), 1000).catch(() => client.end(true));
    }
    this.requeueUnacked();
    this.outbox.persist();
    this.outbox.close();
  }
}

interface RelayedStream {
  id: string;
  ws: WebSocket;
  client: MqttClient;
  replyTo: string;
  /** Client frames that arrived while the agent-side socket was still connecting. */
  pending: string[];
  done: boolean;
}

function errorEnvelope(id: string, err: ApiError): RelayResponse {
  const body = Buffer.from(JSON.stringify(err.toEnvelope()));
  return { kind: 'response', id, status: err.status, headers: { 'content-type': 'application/json; charset=utf-8' }, body_b64: body.toString('base64') };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timeout')), ms);
    t.unref();
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
