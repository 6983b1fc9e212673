import crypto from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import {
  MAX_ENVELOPE_BYTES,
  parseAgentTopic,
  relayTopics,
  type AgentEventFrame,
  type AgentPresence,
  type EnvelopeChunk,
  type RelayRequest,
  type RelayResponse,
  type RelayStreamClose,
  type RelayStreamData,
  type RelayStreamOpen,
} from '../api/relay-protocol.js';

/** Cuts a serialized envelope into {@link EnvelopeChunk}s when it is larger than MAX_ENVELOPE_BYTES. */
export function toPayloads(envelope: object, id: string): string[] {
  const text = JSON.stringify(envelope);
  if (Buffer.byteLength(text, 'utf8') <= MAX_ENVELOPE_BYTES) return [text];
  // A quarter of the limit in characters: even fully escaped multi-byte text stays under it.
  const size = Math.floor(MAX_ENVELOPE_BYTES / 4);
  const total = Math.ceil(text.length / size);
  const out: string[] = [];
  for (let seq = 0; seq < total; seq++) {
    const chunk: EnvelopeChunk = { chunk: { id, seq, total }, part: text.slice(seq * size, (seq + 1) * size) };
    out.push(JSON.stringify(chunk));
  }
  return out;
}

/**
 * Reassembles chunked envelopes by id (sequence numbers may start at 0 or 1: parts are ordered by
 * `seq` and complete when `total` distinct parts arrived). Partial envelopes expire after `ttlMs`.
 */
export class ChunkAssembler {
  private readonly partial = new Map<string, { parts: Map<number, string>; total: number; started: number }>();

  constructor(private readonly ttlMs = 60_000, private readonly maxPending = 1000) {}

  /** The whole envelope text when `msg` completes one (or is not a chunk), else null. */
  accept(key: string, msg: unknown, raw: string): string | null {
    const c = msg as Partial<EnvelopeChunk>;
    if (!c || typeof c !== 'object' || !c.chunk || typeof c.part !== 'string') return raw;
    const { id, seq, total } = c.chunk;
    if (typeof id !== 'string' || !Number.isInteger(seq) || !Number.isInteger(total) || total < 1 || total > 10_000) return null;
    const k = `${key}|${id}`;
    const now = Date.now();
    for (const [pk, p] of this.partial) if (now - p.started > this.ttlMs) this.partial.delete(pk);
    let entry = this.partial.get(k);
    if (!entry) {
      if (this.partial.size >= this.maxPending) return null;
      entry = { parts: new Map(), total, started: now };
      this.partial.set(k, entry);
    }
    entry.parts.set(seq, c.part);
    if (entry.parts.size < entry.total) return null;
    this.partial.delete(k);
    return [...entry.parts.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]).join('');
  }
}

export type TrunkEvent =
  | { kind: 'reset' }
  | { kind: 'presence'; tenantId: string; agentId: string; presence: AgentPresence | null }
  | { kind: 'event'; tenantId: string; agentId: string; frame: AgentEventFrame };

interface Pending {
  tenantId: string;
  agentId: string;
  resolve: (r: RelayResponse) => void;
  timer: NodeJS.Timeout;
  reject: (err: Error) => void;
}

export class GatewayTimeout extends Error {}

/** What a relayed stream's owner hears from the agent. */
export type StreamEvent = { kind: 'frame'; data: string } | { kind: 'closed'; code: number; reason: string };

interface OpenStream {
  tenantId: string;
  agentId: string;
  topic: string;
  listener: (e: StreamEvent) => void;
}

/**
 * One relay node's MQTT client: subscribes to every agent's presence and events and to the replies
 * addressed to this node; publishes requests. All routing state comes from the broker (retained
 * presence), so any number of nodes can share one broker.
 */
export class Trunk {
  private readonly pending = new Map<string, Pending>();
  private readonly chunks = new ChunkAssembler();
  private readonly listeners: Array<(e: TrunkEvent) => void> = [];
  private readonly streams = new Map<string, OpenStream>();

  private constructor(
    private readonly client: MqttClient,
    readonly node: string,
    private readonly log: (line: string) => void,
  ) {}

  static async connect(options: { url: string; node: string; username?: string; password?: string; log: (line: string) => void }): Promise<Trunk> {
    const client = mqtt.connect(options.url, {
      clientId: `svc-relay-${options.node}`,
      username: options.username,
      password: options.password,
      protocolVersion: 4,
      clean: true,
      keepalive: 30,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
    });
    const trunk = new Trunk(client, options.node, options.log);
    client.on('message', (topic, payload) => trunk.onMessage(topic, payload));
    client.on('error', (err) => options.log(`mqtt: ${err.message}`));
    client.on('connect', () => {
      // mqtt.js leaves Nagle on; every (re)connect has a new socket (docs/relay.md § Scale).
      (client.stream as { setNoDelay?: (on: boolean) => void } | undefined)?.setNoDelay?.(true);
      // The broker re-sends every retained presence on subscribe: the view is rebuilt from it, so
      // an agent whose presence vanished meanwhile (a broker restarted without persistence) is not kept.
      trunk.emit({ kind: 'reset' });
      // Re-subscribed on every (re)connect: clean sessions keep nothing; retained presence is re-sent.
      client.subscribe([relayTopics.allStatus, relayTopics.allEvents, `svc/t/+/a/+/res/${options.node}`], { qos: 1 }, (err) => {
        if (err) options.log(`mqtt: subscribe failed: ${err.message}`);
      });
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`could not connect to the MQTT broker at ${options.url}`)), 15_000);
      client.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    return trunk;
  }

  on(listener: (e: TrunkEvent) => void): void {
    this.listeners.push(listener);
  }

  get connected(): boolean {
    return this.client.connected;
  }

  emit(e: TrunkEvent): void {
    for (const l of this.listeners) l(e);
  }

  private onMessage(topic: string, payload: Buffer): void {
    const t = parseAgentTopic(topic);
    if (!t) return;
    const [kind] = t.rest;
    if (kind === 'status' && t.rest.length === 1) {
      if (payload.length === 0) return this.emit({ kind: 'presence', tenantId: t.tenantId, agentId: t.agentId, presence: null });
      const p = parse(payload) as Partial<AgentPresence> | null;
      // The topic is what the broker authorised: a payload naming another agent or tenant is ignored.
      if (!p || p.agent_id !== t.agentId || p.tenant_id !== t.tenantId || typeof p.online !== 'boolean') return;
      return this.emit({ kind: 'presence', tenantId: t.tenantId, agentId: t.agentId, presence: p as AgentPresence });
    }
    if (kind === 'events' && t.rest.length === 1) {
      const raw = payload.toString('utf8');
      const text = this.chunks.accept(topic, parse(payload), raw);
      const f = text === null ? null : (safeJson(text) as Partial<AgentEventFrame> | null);
      if (!f || f.kind !== 'event' || typeof f.frame !== 'object') return;
      return this.emit({ kind: 'event', tenantId: t.tenantId, agentId: t.agentId, frame: { ...(f as AgentEventFrame), agent_id: t.agentId } });
    }
    if (kind === 'stream' && t.rest.length === 2) {
      const s = this.streams.get(t.rest[1]!);
      // Only the agent the stream was opened on can feed it (the topic is what the broker authorised).
      if (!s || s.tenantId !== t.tenantId || s.agentId !== t.agentId) return;
      const m = parse(payload) as { kind?: string; id?: string; data?: unknown; code?: unknown; reason?: unknown } | null;
      if (!m || m.id !== t.rest[1]) return;
      try {
        if (m.kind === 'stream_frame' && typeof m.data === 'string') return s.listener({ kind: 'frame', data: m.data });
        if (m.kind === 'stream_closed') {
          this.dropStream(m.id!);
          return s.listener({ kind: 'closed', code: Number(m.code) || 1011, reason: typeof m.reason === 'string' ? m.reason : '' });
        }
      } catch (err) {
        this.log(`relay: stream ${m.id}: ${(err as Error).message}`);
      }
      return;
    }
    if (kind === 'res' && t.rest[1] === this.node) {
      const raw = payload.toString('utf8');
      const text = this.chunks.accept(topic, parse(payload), raw);
      const r = text === null ? null : (safeJson(text) as Partial<RelayResponse> | null);
      if (!r || r.kind !== 'response' || typeof r.id !== 'string') return;
      const p = this.pending.get(r.id);
      // Only the agent the request went to can answer it.
      if (!p || p.tenantId !== t.tenantId || p.agentId !== t.agentId) return;
      this.pending.delete(r.id);
      clearTimeout(p.timer);
      p.resolve({ kind: 'response', id: r.id, status: Number(r.status) || 502, headers: r.headers && typeof r.headers === 'object' ? r.headers : {}, ...(r.body_b64 ? { body_b64: r.body_b64 } : {}) });
    }
  }

  /** Publishes a request to an agent and waits for its response; rejects with GatewayTimeout after `timeoutMs`. */
  request(tenantId: string, agentId: string, req: Omit<RelayRequest, 'kind' | 'id' | 'reply_to' | 'deadline_ms'>, timeoutMs: number): Promise<RelayResponse> {
    const id = crypto.randomUUID();
    const envelope: RelayRequest = {
      kind: 'request',
      id,
      ...req,
      reply_to: relayTopics.replies(tenantId, agentId, this.node),
      deadline_ms: Date.now() + timeoutMs,
    };
    return new Promise<RelayResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new GatewayTimeout(`agent '${agentId}' did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { tenantId, agentId, resolve, reject, timer });
      const topic = relayTopics.requests(tenantId, agentId);
      for (const p of toPayloads(envelope, id)) {
        this.client.publish(topic, p, { qos: 1 }, (err) => {
          if (err && this.pending.delete(id)) {
            clearTimeout(timer);
            reject(err);
          }
        });
      }
    });
  }

  /**
   * Opens relayed stream `id` (a fresh random id): subscribes to its topic, then asks the agent
   * (stream_open). Frames and the close arrive on `listener`.
   */
  async openStream(id: string, tenantId: string, agentId: string, open: Pick<RelayStreamOpen, 'path' | 'obo'>, timeoutMs: number, listener: (e: StreamEvent) => void): Promise<void> {
    const topic = relayTopics.stream(tenantId, agentId, id);
    this.streams.set(id, { tenantId, agentId, topic, listener });
    try {
      await this.client.subscribeAsync(topic, { qos: 1 });
      const envelope: RelayStreamOpen = { kind: 'stream_open', id, ...open, reply_to: topic, deadline_ms: Date.now() + timeoutMs };
      await this.client.publishAsync(relayTopics.requests(tenantId, agentId), JSON.stringify(envelope), { qos: 1 });
    } catch (err) {
      this.dropStream(id);
      throw err;
    }
  }

  /** A client frame to the agent's socket of stream `id`. */
  streamData(id: string, data: string): void {
    const s = this.streams.get(id);
    if (!s) return;
    const m: RelayStreamData = { kind: 'stream_data', id, data };
    this.client.publish(relayTopics.requests(s.tenantId, s.agentId), JSON.stringify(m), { qos: 1 });
  }

  /** The client went away: the agent closes its socket; the stream is forgotten here. */
  closeStream(id: string): void {
    const s = this.streams.get(id);
    if (!s) return;
    const m: RelayStreamClose = { kind: 'stream_close', id };
    this.client.publish(relayTopics.requests(s.tenantId, s.agentId), JSON.stringify(m), { qos: 1 });
    this.dropStream(id);
  }

  get openStreams(): number {
    return this.streams.size;
  }

  private dropStream(id: string): void {
    const s = this.streams.get(id);
    if (!s) return;
    this.streams.delete(id);
    if (this.client.connected) this.client.unsubscribe(s.topic);
  }

  async close(): Promise<void> {
    this.streams.clear();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error('relay closing'));
    }
    this.pending.clear();
    await this.client.endAsync(true).catch(() => undefined);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function parse(payload: Buffer): unknown {
  return safeJson(payload.toString('utf8'));
}
