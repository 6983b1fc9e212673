import net from 'node:net';
import tls from 'node:tls';
import type { IClientOptions, IConnackPacket, IPublishPacket, MqttClient } from 'mqtt';
import { Backoff } from '../core/backoff.js';
import { BoundedQueue } from '../core/bounded-queue.js';
import type { LinkEvents, LinkState, LinkStats } from '../core/link.js';
import { ReconnectingLink } from '../core/reconnecting-link.js';

/**
 * One MQTT 3.1.1 connection with the properties the HAL needs from every link:
 *
 * - **Reconnect with jittered exponential backoff, owned here** (the HAL's `ReconnectingLink`,
 *   hal/README.md). mqtt.js's own `reconnectPeriod` is a fixed `setInterval`: after a broker restart
 *   every device of a fleet retries in lockstep. So mqtt.js runs with `reconnectPeriod: 0` and each
 *   connection attempt is a fresh `MqttClient`; when its socket closes we wait `Backoff.next()` (full
 *   jitter) and try again. The backoff resets only on CONNACK, so a broker that accepts TCP but
 *   refuses CONNECT does not cause a tight loop. `stats().reconnects` counts attempts after the first.
 * - **Nagle off.** The socket is created by our own stream builder with `noDelay` and `setNoDelay(true)`
 *   on every (re)connect: with Nagle on, request/response over a broker runs ~11 round trips/s.
 * - **Bounded outbound buffer.** While the link is not open (or the socket's write buffer is above
 *   `maxWriteBufferBytes`) publishes go to a `BoundedQueue` that drops the oldest and counts the drop.
 *   QoS 1 publishes still unacknowledged when the connection dies are put back in that queue
 *   (at-least-once; receivers de-duplicate by id where it matters).
 * - **Session state we own.** Clean sessions; subscriptions are kept here and re-sent on every connect,
 *   followed by the "birth" messages (retained state a device must restore after a broker restart),
 *   then the queued messages.
 */

export type QoS = 0 | 1 | 2;

type MqttClientCtor = typeof MqttClient;
let mqttClientCtor: MqttClientCtor | null = null;
let mqttLoading: Promise<MqttClientCtor> | null = null;
/**
 * mqtt.js (with readable-stream and ws: ~0.5 MB of bundled source) is loaded on the first MQTT
 * connection, not when `hal/index.ts` is imported: an agent with only serial lines or CAN buses
 * attached never carries it (docs/architecture.md, "A device reading"; README.md § Benchmarks,
 * idle RSS with 32 serial devices).
 */
function loadMqttClient(): Promise<MqttClientCtor> {
  // The bundle (scripts/bundle.mjs) carries mqtt.js as CommonJS, whose named exports an `import()`
  // of it only shows under `default`; from node_modules they are top-level. Take either.
  mqttLoading ??= import('mqtt').then((m: typeof import('mqtt') & { default?: typeof import('mqtt') }) => (mqttClientCtor = m.MqttClient ?? m.default!.MqttClient));
  // A failed load is retried on the next attempt rather than remembered.
  mqttLoading.catch(() => (mqttLoading = null));
  return mqttLoading;
}

export interface MqttWill {
  topic: string;
  payload: string | Buffer;
  qos: QoS;
  retain: boolean;
}

export interface OutboundMessage {
  topic: string;
  payload: Buffer;
  qos: QoS;
  retain: boolean;
}

export interface PublishOptions {
  qos?: QoS;
  retain?: boolean;
}

export interface MqttLinkOptions {
  /** `mqtt://host:port` (or `tcp://`), `mqtts://` (or `ssl://`, `tls://`). Credentials may be in the URL. */
  url: string;
  clientId?: string;
  username?: string;
  password?: string;
  /** MQTT keepalive in seconds (default 15): the broker declares a silent client dead after 1.5×. */
  keepaliveS?: number;
  /** Time from TCP connect to CONNACK before the attempt is abandoned (default 5000). */
  connectTimeoutMs?: number;
  will?: MqttWill;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Reconnect after the connection is lost (default true); false: the link closes instead. */
  reconnect?: boolean;
  /** Outbound messages held while offline (default 1000); the oldest is dropped and counted beyond it. */
  queueCapacity?: number;
  /** Socket write backlog above which publishes are queued instead of written (default 1 MiB). */
  maxWriteBufferBytes?: number;
  /** Published first on every connect, before queued messages. */
  birth?: OutboundMessage[];
  tls?: tls.ConnectionOptions;
}

export interface MqttLinkStats extends LinkStats {
  messages_in: number;
  messages_out: number;
  /** Messages waiting in the outbound queue. */
  queued: number;
  /** QoS≥1 publishes written but not yet acknowledged. */
  inflight: number;
  subscriptions: number;
  connected_since_ms: number | null;
}

export interface MqttMessageInfo {
  retain: boolean;
  qos: QoS;
  dup: boolean;
}

export type MqttLinkEvents = {
  state: LinkEvents['state'];
  error: LinkEvents['error'];
  /** CONNACK received, subscriptions and birth messages sent, queue flushed. */
  connect: [{ sessionPresent: boolean }];
  /** An open connection was lost (not emitted for a clean `close()`). */
  disconnect: [reason: string];
  message: [topic: string, payload: Buffer, info: MqttMessageInfo];
};

export type PublishResult = 'sent' | 'queued' | 'closed';

interface Endpoint {
  secure: boolean;
  host: string;
  port: number;
  username?: string;
  password?: string;
}

export function parseMqttUrl(url: string): Endpoint {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new RangeError(`invalid MQTT URL ${JSON.stringify(url)}`);
  }
  const scheme = u.protocol.replace(/:$/, '');
  let secure: boolean;
  if (scheme === 'mqtt' || scheme === 'tcp') secure = false;
  else if (scheme === 'mqtts' || scheme === 'ssl' || scheme === 'tls') secure = true;
  else throw new RangeError(`unsupported MQTT URL scheme ${JSON.stringify(scheme)} (use mqtt:// or mqtts://)`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw new RangeError(`MQTT URL ${JSON.stringify(url)} has no host`);
  const port = u.port ? Number(u.port) : secure ? 8883 : 1883;
  const ep: Endpoint = { secure, host, port };
  if (u.username) ep.username = decodeURIComponent(u.username);
  if (u.password) ep.password = decodeURIComponent(u.password);
  return ep;
}

/** Topic names for PUBLISH: non-empty, no wildcards, no NUL, at most 65535 bytes. */
export function assertPublishTopic(topic: string): void {
  if (topic.length === 0 || /[+#\u0000]/.test(topic) || Buffer.byteLength(topic) > 65535) {
    throw new RangeError(`invalid MQTT topic name ${JSON.stringify(topic)}`);
  }
}

interface Ticket {
  msg: OutboundMessage;
}

export class MqttLink extends ReconnectingLink<MqttLinkEvents> {
  readonly clientId: string;
  private readonly endpoint: Endpoint;
  private readonly opts: MqttLinkOptions;
  private readonly queue: BoundedQueue<OutboundMessage>;
  private readonly maxWriteBuffer: number;
  private readonly subs = new Map<string, QoS>();
  private readonly inflight = new Set<Ticket>();
  private birth: OutboundMessage[];
  private client: MqttClient | null = null;
  private socket: net.Socket | null = null;
  private blocked = false;
  /** close() was called: publishes answer 'closed' (before start() they are queued). */
  private closing = false;
  private closeTimeoutMs = 2000;
  private bytesIn = 0;
  private bytesOut = 0;
  private readonly st = {
    messages_in: 0,
    messages_out: 0,
    connected_since_ms: null as number | null,
  };

  constructor(options: MqttLinkOptions) {
    super({
      backoff: new Backoff(options.backoffBaseMs ?? 200, options.backoffMaxMs ?? 10_000),
      countReconnects: 'attempts',
      ...(options.reconnect !== undefined ? { reconnect: options.reconnect } : {}),
    });
    this.opts = options;
    this.endpoint = parseMqttUrl(options.url);
    this.clientId = options.clientId ?? `svc-${Math.random().toString(16).slice(2, 10)}`;
    this.queue = new BoundedQueue(options.queueCapacity ?? 1000);
    this.maxWriteBuffer = options.maxWriteBufferBytes ?? 1024 * 1024;
    this.birth = [...(options.birth ?? [])];
    for (const m of this.birth) assertPublishTopic(m.topic);
    if (options.will) assertPublishTopic(options.will.topic);
  }

  stats(): MqttLinkStats {
    return {
      ...this.counters,
      ...this.st,
      bytes_in: this.bytesIn + (this.socket?.bytesRead ?? 0),
      bytes_out: this.bytesOut + (this.socket?.bytesWritten ?? 0),
      dropped_out: this.queue.dropped,
      queued: this.queue.length,
      inflight: this.inflight.size,
      subscriptions: this.subs.size,
    };
  }

  /** Starts connecting (and keeps reconnecting until `close()`). */
  start(): this {
    if (this.state === 'idle') this.startLink();
    return this;
  }

  /** Resolves once the link is open; rejects on timeout or when the link is closed first. */
  whenOpen(timeoutMs = 10_000): Promise<void> {
    if (this.state === 'open') return Promise.resolve();
    if (this.state === 'closed') return Promise.reject(new Error('MQTT link is closed'));
    return new Promise((resolve, reject) => {
      const onState = (to: LinkState) => {
        if (to === 'open') done(null);
        else if (to === 'closed') done(new Error('MQTT link is closed'));
      };
      const timer = setTimeout(() => done(new Error(`MQTT link not open after ${timeoutMs} ms (${this.counters.last_error ?? 'no error'})`)), timeoutMs);
      const done = (err: Error | null) => {
        clearTimeout(timer);
        this.off('state', onState);
        if (err) reject(err);
        else resolve();
      };
      this.on('state', onState);
    });
  }

  /** Replaces the birth messages (published first on every connect). */
  setBirth(messages: OutboundMessage[]): void {
    for (const m of messages) assertPublishTopic(m.topic);
    this.birth = [...messages];
  }

  /**
   * Publishes, or queues while the link is not open (bounded, drop-oldest). Returns what happened.
   * Throws only on an invalid topic name.
   */
  publish(topic: string, payload: string | Buffer, options: PublishOptions = {}): PublishResult {
    assertPublishTopic(topic);
    if (this.closing || this.state === 'closed') return 'closed';
    const msg: OutboundMessage = {
      topic,
      payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
      qos: options.qos ?? 0,
      retain: options.retain ?? false,
    };
    if (this.state === 'open' && this.queue.length === 0 && !this.blocked) {
      this.send(msg);
      return 'sent';
    }
    this.queue.push(msg);
    return 'queued';
  }

  /**
   * Publishes now and resolves when the broker has it (PUBACK for QoS 1, written for QoS 0).
   * Rejects when the link is not open or on timeout; never queued.
   */
  publishAsync(topic: string, payload: string | Buffer, options: PublishOptions = {}, timeoutMs = 5000): Promise<void> {
    assertPublishTopic(topic);
    const client = this.client;
    if (this.state !== 'open' || !client) return Promise.reject(new Error('MQTT link is not open'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`publish to ${topic} not acknowledged within ${timeoutMs} ms`)), timeoutMs);
      this.st.messages_out++;
      client.publish(topic, typeof payload === 'string' ? Buffer.from(payload) : payload, { qos: options.qos ?? 0, retain: options.retain ?? false }, (err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      });
    });
  }

  /** Adds a subscription (kept across reconnects). Resolves on SUBACK, or at once when not connected. */
  subscribe(filter: string, qos: QoS = 0): Promise<void> {
    this.subs.set(filter, qos);
    const client = this.client;
    if (!client || !client.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      client.subscribe(filter, { qos }, (err, granted) => {
        if (err) reject(err);
        else if (granted?.some((g) => g.qos === 128)) reject(new Error(`subscription to ${filter} refused by broker`));
        else resolve();
      });
    });
  }

  unsubscribe(filter: string): Promise<void> {
    this.subs.delete(filter);
    const client = this.client;
    if (!client || !client.connected) return Promise.resolve();
    return new Promise((resolve, reject) => client.unsubscribe(filter, (err) => (err ? reject(err) : resolve())));
  }

  /** Counts a malformed inbound message (reported by the layer that parses payloads). */
  countMalformed(reason: string): void {
    this.counters.malformed_in++;
    this.counters.last_error = reason;
  }

  /**
   * Destroys the socket without an MQTT DISCONNECT, as a crash or an unplugged cable would: the broker
   * publishes the Will. The link then reconnects as after any loss.
   */
  dropConnection(): void {
    this.socket?.destroy();
  }

  /** Clean close: DISCONNECT (so the broker discards the Will), then the socket; queued messages are discarded. */
  override async close(timeoutMs = 2000): Promise<void> {
    if (this.state === 'closed') return;
    this.closing = true;
    this.closeTimeoutMs = timeoutMs;
    await super.close();
  }

  // ---- the medium (ReconnectingLink): one MqttClient per connection attempt --------------------------

  protected discardQueued(): void {
    this.queue.clear();
  }

  /** DISCONNECT and wait for the socket to close (onClose then sets `closed`); force it after the timeout. */
  protected async closeMedium(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const timeoutMs = this.closeTimeoutMs;
    await new Promise<void>((resolve) => {
      const onState = (to: LinkState) => {
        if (to === 'closed') finish();
      };
      const force = setTimeout(() => {
        client.end(true);
        this.socket?.destroy();
      }, timeoutMs);
      const finish = () => {
        clearTimeout(force);
        this.off('state', onState);
        resolve();
      };
      this.on('state', onState);
      if (client.connected) client.end(false);
      else client.end(true);
    });
  }

  private buildStream(): net.Socket {
    const { host, port, secure } = this.endpoint;
    const socket = secure
      ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ...this.opts.tls })
      : net.createConnection({ host, port, noDelay: true });
    socket.setNoDelay(true);
    this.socket = socket;
    return socket;
  }

  protected connect(gen: number): void {
    if (mqttClientCtor) return this.connectWith(mqttClientCtor);
    // Only the first attempt of the process waits for mqtt.js; a link closed meanwhile does nothing.
    loadMqttClient().then(
      (ctor) => {
        if (this.isCurrent(gen)) this.connectWith(ctor);
      },
      (err: Error) => {
        this.noteError(err);
        this.scheduleReconnect(gen);
      },
    );
  }

  private connectWith(MqttClientClass: MqttClientCtor): void {
    this.blocked = false;
    const options: IClientOptions = {
      clientId: this.clientId,
      protocolVersion: 4,
      keepalive: this.opts.keepaliveS ?? 15,
      connectTimeout: this.opts.connectTimeoutMs ?? 5000,
      reconnectPeriod: 0,
      clean: true,
      resubscribe: false,
      queueQoSZero: false,
    };
    const username = this.opts.username ?? this.endpoint.username;
    const password = this.opts.password ?? this.endpoint.password;
    if (username !== undefined) options.username = username;
    if (password !== undefined) options.password = password;
    if (this.opts.will) options.will = { ...this.opts.will };
    // The constructor connects at once through our stream builder.
    const client = new MqttClientClass(() => this.buildStream(), options);
    this.client = client;
    client.on('connect', (packet: IConnackPacket) => this.onConnect(client, packet));
    client.on('message', (topic: string, payload: Buffer, packet: IPublishPacket) => {
      if (client !== this.client) return;
      this.st.messages_in++;
      try {
        this.emit('message', topic, payload, { retain: packet.retain, qos: packet.qos, dup: packet.dup });
      } catch (err) {
        this.emit('error', err instanceof Error ? err : new Error(String(err)));
      }
    });
    client.on('packetsend', () => {
      if (client === this.client) this.counters.frames_out++;
    });
    client.on('packetreceive', () => {
      if (client === this.client) this.counters.frames_in++;
    });
    client.on('error', (err: Error) => {
      if (client !== this.client) return;
      this.counters.last_error = err.message;
      this.emit('error', err);
    });
    client.on('close', () => this.onClose(client));
  }

  private onConnect(client: MqttClient, packet: IConnackPacket): void {
    if (client !== this.client) return;
    this.st.connected_since_ms = Date.now();
    if (this.subs.size > 0) {
      const map: Record<string, { qos: QoS }> = {};
      for (const [filter, qos] of this.subs) map[filter] = { qos };
      client.subscribe(map, (err) => {
        if (err && client === this.client) {
          this.counters.last_error = `resubscribe failed: ${err.message}`;
          this.emit('error', err);
        }
      });
    }
    for (const m of this.birth) this.send(m);
    this.flush();
    this.markOpen(); // resets the backoff: only a CONNACK counts as success
    this.emit('connect', { sessionPresent: packet.sessionPresent });
  }

  private send(msg: OutboundMessage): void {
    const client = this.client!;
    const socket = this.socket;
    const ticket: Ticket = { msg };
    if (msg.qos > 0) this.inflight.add(ticket);
    this.st.messages_out++;
    client.publish(msg.topic, msg.payload, { qos: msg.qos, retain: msg.retain }, (err) => {
      // A ticket still in the set after an error on the current connection is given up (bad publish);
      // tickets of a lost connection were already moved back to the queue by onClose.
      if (!err || client === this.client) this.inflight.delete(ticket);
      if (err && client === this.client) this.counters.last_error = err.message;
    });
    if (socket && !this.blocked && socket.writableLength > this.maxWriteBuffer) {
      this.blocked = true;
      socket.once('drain', () => {
        if (socket !== this.socket) return;
        this.blocked = false;
        this.flush();
      });
    }
  }

  private flush(): void {
    while (this.client?.connected && !this.blocked && this.queue.length > 0) this.send(this.queue.shift()!);
  }

  private onClose(client: MqttClient): void {
    if (client !== this.client) return;
    this.client = null;
    if (this.socket) {
      this.bytesIn += this.socket.bytesRead;
      this.bytesOut += this.socket.bytesWritten;
      this.socket = null;
    }
    this.st.connected_since_ms = null;
    // Unacknowledged QoS≥1 publishes go back to the queue (they were sent before anything queued since).
    const pending = [...this.inflight].map((t) => t.msg);
    this.inflight.clear();
    if (pending.length > 0 && !this.closing) {
      const later: OutboundMessage[] = [];
      for (let m = this.queue.shift(); m; m = this.queue.shift()) later.push(m);
      for (const m of [...pending, ...later]) this.queue.push(m);
    }
    const wasOpen = this.state === 'open';
    client.removeAllListeners('message');
    client.on('error', () => {});
    client.end(true);
    if (this.closing) {
      this.setState('closed');
      return;
    }
    this.scheduleReconnect(this.currentGeneration);
    if (wasOpen) this.emit('disconnect', this.counters.last_error ?? 'connection closed');
  }
}
