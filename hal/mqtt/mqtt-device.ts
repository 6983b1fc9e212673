import { TypedEmitter, type LinkState } from '../core/link.js';
import {
  COMMAND_ID_RE,
  DEFAULT_PREFIX,
  MAX_PAYLOAD_BYTES,
  PROTOCOL_VERSION,
  TOPIC_QOS,
  assertPrefix,
  deviceTopics,
  encodeJson,
  parsePayload,
  validateCommand,
  validateIdentity,
  type AckPayload,
  type AckStatus,
  type CommandArgs,
  type CommandPayload,
  type DeviceIdentity,
  type HeartbeatPayload,
  type Readings,
  type TelemetryPayload,
  type TopicKind,
} from './device-convention.js';
import { MqttLink, type MqttLinkOptions, type MqttLinkStats } from './mqtt-link.js';

/**
 * The device side of the convention, used by the emulator (`svc sim-device --mqtt`) and by tests:
 * connects with a retained `offline` Last Will on its status topic, announces retained discovery and
 * `online` on every connect (so a broker restart without persistence is healed), publishes telemetry
 * and heartbeats on timers, executes commands and acks them; `stop()` publishes `offline` and
 * disconnects cleanly.
 */

export type CommandResult = { status: AckStatus; detail?: string } | void;

export interface CommandContext {
  deviceId: string;
  commandId: string;
}

export type CommandHandler = (args: CommandArgs, ctx: CommandContext) => CommandResult | Promise<CommandResult>;

export interface MqttDeviceOptions {
  url: string;
  /** The identity announced on discovery; `protocol_version` is filled in. */
  identity: Omit<DeviceIdentity, 'protocol_version'> & { protocol_version?: typeof PROTOCOL_VERSION };
  prefix?: string;
  /** Telemetry period (default 1000 ms; 0 disables the timer — use `publishTelemetry`). */
  telemetryIntervalMs?: number;
  /** Heartbeat period (default 1000 ms; 0 disables). */
  heartbeatIntervalMs?: number;
  /** Produces one sample per telemetry tick. */
  sample?: () => Readings;
  /** Command handlers by name. A command without a handler is acked `rejected`. */
  commands?: Record<string, CommandHandler>;
  /** Extra link options (backoff, queue size, keepalive, ...). */
  link?: Omit<MqttLinkOptions, 'url' | 'will' | 'birth'>;
}

export interface MqttDeviceStats {
  link: MqttLinkStats;
  telemetry_sent: number;
  heartbeats_sent: number;
  commands_received: number;
  commands_duplicate: number;
  commands_malformed: number;
}

export type MqttDeviceEvents = {
  state: [LinkState, LinkState];
  error: [Error];
  command: [CommandPayload];
  ack: [AckPayload];
};

/** Recently answered command ids: a QoS 1 redelivery is re-acked, not re-executed. */
const RECENT_ACKS = 128;

export class MqttDevice extends TypedEmitter<MqttDeviceEvents> {
  readonly id: string;
  readonly identity: DeviceIdentity;
  readonly link: MqttLink;
  readonly topics: Record<TopicKind, string>;
  private readonly opts: MqttDeviceOptions;
  private readonly startedAt = Date.now();
  private telemetryTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private faultSet = new Set<string>();
  private readonly recent = new Map<string, Promise<AckPayload>>();
  private stopped = false;
  private readonly counters = { telemetry_sent: 0, heartbeats_sent: 0, commands_received: 0, commands_duplicate: 0, commands_malformed: 0 };

  constructor(options: MqttDeviceOptions) {
    super();
    this.opts = options;
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    assertPrefix(prefix);
    const checked = validateIdentity({ ...options.identity, protocol_version: PROTOCOL_VERSION });
    if (!checked.ok) throw new RangeError(`invalid device identity: ${checked.reason}`);
    this.identity = checked.value;
    this.id = this.identity.id;
    this.topics = deviceTopics(prefix, this.id);
    this.link = new MqttLink({
      clientId: `svc-dev-${this.id}`,
      ...options.link,
      url: options.url,
      will: { topic: this.topics.status, payload: 'offline', qos: TOPIC_QOS.status.qos, retain: true },
      birth: [
        { topic: this.topics.discovery, payload: encodeJson(this.identity), ...TOPIC_QOS.discovery },
        { topic: this.topics.status, payload: Buffer.from('online'), ...TOPIC_QOS.status },
      ],
    });
    this.link.on('state', (to, from) => this.emit('state', to, from));
    this.link.on('error', (err) => this.emit('error', err));
    this.link.on('message', (topic, payload) => {
      if (topic === this.topics.command) void this.onCommand(payload);
    });
  }

  get faults(): string[] {
    return [...this.faultSet];
  }

  /** Replaces the active fault flags (reported in every heartbeat). */
  setFaults(faults: string[]): void {
    this.faultSet = new Set(faults);
  }

  stats(): MqttDeviceStats {
    return { link: this.link.stats(), ...this.counters };
  }

  /** Connects and starts the timers. Resolves when the first connection is open. */
  async start(timeoutMs = 10_000): Promise<void> {
    this.link.subscribe(this.topics.command, TOPIC_QOS.command.qos).catch((err: Error) => this.emit('error', err));
    this.link.start();
    const telemetryMs = this.opts.telemetryIntervalMs ?? 1000;
    const heartbeatMs = this.opts.heartbeatIntervalMs ?? 1000;
    const sample = this.opts.sample;
    if (telemetryMs > 0 && sample) {
      this.telemetryTimer = setInterval(() => {
        try {
          this.publishTelemetry(sample());
        } catch (err) {
          this.emit('error', err instanceof Error ? err : new Error(String(err)));
        }
      }, telemetryMs);
    }
    if (heartbeatMs > 0) this.heartbeatTimer = setInterval(() => this.publishHeartbeat(), heartbeatMs);
    await this.link.whenOpen(timeoutMs);
  }

  /** Publishes one telemetry sample (queued while offline, bounded). */
  publishTelemetry(readings: Readings, tsMs = Date.now()): void {
    if (this.stopped || Object.keys(readings).length === 0) return;
    const payload: TelemetryPayload = { ts_ms: tsMs, readings };
    const { qos, retain } = TOPIC_QOS.telemetry;
    this.link.publish(this.topics.telemetry, encodeJson(payload), { qos, retain });
    this.counters.telemetry_sent++;
  }

  publishHeartbeat(): void {
    if (this.stopped) return;
    const now = Date.now();
    const payload: HeartbeatPayload = { ts_ms: now, uptime_ms: now - this.startedAt, faults: this.faults };
    const { qos, retain } = TOPIC_QOS.heartbeat;
    this.link.publish(this.topics.heartbeat, encodeJson(payload), { qos, retain });
    this.counters.heartbeats_sent++;
  }

  /** Clean shutdown: stop timers, publish retained `offline` (waiting for the PUBACK), DISCONNECT. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.telemetryTimer) clearInterval(this.telemetryTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.link.isOpen) {
      const { qos, retain } = TOPIC_QOS.status;
      await this.link.publishAsync(this.topics.status, 'offline', { qos, retain }, 2000).catch(() => {});
    }
    await this.link.close();
  }

  /**
   * Leaves like a crash: the socket is destroyed without DISCONNECT, so the broker publishes the Will
   * (`offline`, retained). The link reconnects by itself afterwards (an "unplug/replug"); call
   * `stop()` to end it.
   */
  simulateConnectionLoss(): void {
    this.link.dropConnection();
  }

  private async onCommand(payload: Buffer): Promise<void> {
    const r = parsePayload(payload, validateCommand);
    if (!r.ok) {
      this.counters.commands_malformed++;
      this.link.countMalformed(r.reason);
      // Ack when the id is recoverable, so the sender does not wait for its timeout.
      const id = recoverCommandId(payload);
      if (id) this.publishAck({ id, status: 'rejected', detail: r.reason });
      return;
    }
    const cmd = r.value;
    this.counters.commands_received++;
    const previous = this.recent.get(cmd.id);
    if (previous) {
      // Redelivery (QoS 1 is at-least-once), possibly while the first copy is still executing.
      this.counters.commands_duplicate++;
      this.publishAck(await previous);
      return;
    }
    const result = this.execute(cmd);
    this.recent.set(cmd.id, result);
    if (this.recent.size > RECENT_ACKS) this.recent.delete(this.recent.keys().next().value!);
    this.publishAck(await result);
  }

  private async execute(cmd: CommandPayload): Promise<AckPayload> {
    this.emit('command', cmd);
    const handler = this.opts.commands?.[cmd.name];
    if (!handler) return { id: cmd.id, status: 'rejected', detail: `unknown command ${cmd.name}` };
    try {
      const result = await handler(cmd.args, { deviceId: this.id, commandId: cmd.id });
      const ack: AckPayload = { id: cmd.id, status: result?.status ?? 'ok' };
      if (result?.detail !== undefined) ack.detail = result.detail;
      return ack;
    } catch (err) {
      return { id: cmd.id, status: 'error', detail: err instanceof Error ? err.message : String(err) };
    }
  }

  private publishAck(ack: AckPayload): void {
    if (this.stopped) return;
    const { qos, retain } = TOPIC_QOS.ack;
    this.link.publish(this.topics.ack, encodeJson(ack), { qos, retain });
    this.emit('ack', ack);
  }
}

function recoverCommandId(payload: Buffer): string | null {
  if (payload.length === 0 || payload.length > MAX_PAYLOAD_BYTES) return null;
  try {
    const v = JSON.parse(payload.toString('utf8')) as unknown;
    if (typeof v === 'object' && v !== null && 'id' in v) {
      const id = (v as { id: unknown }).id;
      if (typeof id === 'string' && COMMAND_ID_RE.test(id)) return id;
    }
  } catch {
    /* not JSON: nothing to ack */
  }
  return null;
}
