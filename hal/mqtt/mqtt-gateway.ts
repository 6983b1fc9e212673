import { randomBytes } from 'node:crypto';
import { TypedEmitter } from '../core/link.js';
import {
  DEFAULT_PREFIX,
  GATEWAY_SUBSCRIBED_KINDS,
  TOPIC_QOS,
  isValidDeviceId,
  assertPrefix,
  deviceTopic,
  encodeJson,
  kindFilter,
  matchesMetricType,
  parseDeviceTopic,
  parsePayload,
  parseStatus,
  validateAck,
  validateHeartbeat,
  validateIdentity,
  validateTelemetry,
  NAME_RE,
  type AckPayload,
  type CommandArgs,
  type CommandPayload,
  type DeviceIdentity,
  type DeviceStatus,
  type ReadingValue,
  type TopicKind,
} from './device-convention.js';
import { MqttLink, type MqttLinkOptions, type MqttLinkStats, type MqttMessageInfo } from './mqtt-link.js';

/**
 * The gateway side of the device convention: watches every device under `<prefix>/devices/+/…`,
 * validates what they publish, and sends commands correlated with their acks by command id.
 * A malformed payload is counted and reported (`malformed` event), never fatal.
 */

export interface DiscoveryEvent {
  device_id: string;
  identity: DeviceIdentity;
  /** Delivered from the broker's retained store (the device announced itself before we subscribed). */
  retained: boolean;
}

export interface DeviceRemovedEvent {
  device_id: string;
}

export interface StatusEvent {
  device_id: string;
  /** `offline` is also what the broker publishes as the device's Last Will when its connection dies. */
  status: DeviceStatus;
  retained: boolean;
}

export interface TelemetryEvent {
  device_id: string;
  metric: string;
  value: ReadingValue;
  /** From the device's discovery metrics; null while the device or metric is not (yet) known. */
  unit: string | null;
  /** Sample time reported by the device. */
  ts_ms: number;
  /** Gateway receive time. */
  received_ms: number;
}

export interface HeartbeatEvent {
  device_id: string;
  ts_ms: number;
  uptime_ms: number;
  faults: string[];
  received_ms: number;
}

export interface AckEvent {
  device_id: string;
  ack: AckPayload;
  /** Whether the ack answered a command this gateway is waiting for. */
  matched: boolean;
}

export interface MalformedEvent {
  topic: string;
  device_id: string | null;
  kind: TopicKind | null;
  reason: string;
}

export type GatewayEvents = {
  'device-discovered': [DiscoveryEvent];
  'device-removed': [DeviceRemovedEvent];
  'device-status': [StatusEvent];
  telemetry: [TelemetryEvent];
  heartbeat: [HeartbeatEvent];
  ack: [AckEvent];
  malformed: [MalformedEvent];
  error: [Error];
};

export interface KnownDevice {
  id: string;
  identity: DeviceIdentity | null;
  status: DeviceStatus | null;
  last_heartbeat: HeartbeatEvent | null;
  last_seen_ms: number;
}

export interface GatewayStats {
  link: MqttLinkStats;
  devices: number;
  malformed: number;
  commands_sent: number;
  acks_matched: number;
  acks_unmatched: number;
  command_timeouts: number;
  pending_commands: number;
}

export interface MqttGatewayOptions {
  /** Either a URL (the gateway owns its link) or an existing link (the caller owns it). */
  url?: string;
  link?: MqttLink;
  prefix?: string;
  /** Options for the link the gateway creates from `url`. */
  linkOptions?: Omit<MqttLinkOptions, 'url'>;
  /** Bound on the device table (default 10 000): a flood of made-up ids cannot grow memory without limit. */
  maxDevices?: number;
}

export class CommandTimeoutError extends Error {
  constructor(
    readonly deviceId: string,
    readonly commandId: string,
    readonly timeoutMs: number,
  ) {
    super(`device ${deviceId} did not acknowledge command ${commandId} within ${timeoutMs} ms`);
    this.name = 'CommandTimeoutError';
  }
}

interface Pending {
  deviceId: string;
  resolve: (ack: AckPayload) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class MqttGateway extends TypedEmitter<GatewayEvents> {
  readonly prefix: string;
  readonly link: MqttLink;
  private readonly ownsLink: boolean;
  private readonly maxDevices: number;
  private readonly devicesById = new Map<string, KnownDevice>();
  private readonly pending = new Map<string, Pending>();
  private readonly idBase = randomBytes(4).toString('hex');
  private seq = 0;
  private closed = false;
  private readonly counters = { malformed: 0, commands_sent: 0, acks_matched: 0, acks_unmatched: 0, command_timeouts: 0 };
  private readonly onMessage = (topic: string, payload: Buffer, info: MqttMessageInfo) => this.handle(topic, payload, info);

  constructor(options: MqttGatewayOptions) {
    super();
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    assertPrefix(this.prefix);
    this.maxDevices = options.maxDevices ?? 10_000;
    if (options.link) {
      this.link = options.link;
      this.ownsLink = false;
    } else if (options.url) {
      this.link = new MqttLink({ clientId: `svc-gw-${randomBytes(4).toString('hex')}`, ...options.linkOptions, url: options.url });
      this.ownsLink = true;
    } else {
      throw new TypeError('MqttGateway needs a url or a link');
    }
    this.link.on('message', this.onMessage);
  }

  /** Subscribes and (when it owns the link) connects. Resolves when the link is open. */
  async start(timeoutMs = 10_000): Promise<void> {
    for (const kind of GATEWAY_SUBSCRIBED_KINDS) {
      void this.link.subscribe(kindFilter(this.prefix, kind), TOPIC_QOS[kind].qos).catch((err: Error) => this.emit('error', err));
    }
    this.link.start();
    await this.link.whenOpen(timeoutMs);
  }

  devices(): KnownDevice[] {
    return [...this.devicesById.values()].map((d) => ({ ...d }));
  }

  device(id: string): KnownDevice | undefined {
    const d = this.devicesById.get(id);
    return d ? { ...d } : undefined;
  }

  stats(): GatewayStats {
    return { link: this.link.stats(), devices: this.devicesById.size, pending_commands: this.pending.size, ...this.counters };
  }

  /**
   * Sends `{id, name, args}` to the device's command topic (QoS 1, not retained) and resolves with the
   * device's ack for that id, whatever its status (`ok`, `rejected`, `error`). Rejects with
   * `CommandTimeoutError` when no ack arrives in time (unknown or offline device, lost connection).
   */
  sendCommand(deviceId: string, name: string, args: CommandArgs = {}, timeoutMs = 5000): Promise<AckPayload> {
    if (!isValidDeviceId(deviceId)) return Promise.reject(new RangeError(`invalid device id ${JSON.stringify(deviceId)}`));
    if (!NAME_RE.test(name)) return Promise.reject(new RangeError(`invalid command name ${JSON.stringify(name)}`));
    if (this.closed) return Promise.reject(new Error('gateway is closed'));
    const id = `${this.idBase}-${(++this.seq).toString(36)}`;
    const command: CommandPayload = { id, name, args };
    return new Promise<AckPayload>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.counters.command_timeouts++;
        reject(new CommandTimeoutError(deviceId, id, timeoutMs));
      }, timeoutMs);
      this.pending.set(id, { deviceId, resolve, reject, timer });
      this.counters.commands_sent++;
      const { qos, retain } = TOPIC_QOS.command;
      this.link.publish(deviceTopic(this.prefix, deviceId, 'command'), encodeJson(command), { qos, retain });
    });
  }

  /** Rejects pending commands, unsubscribes from the link, and closes it when the gateway owns it. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error(`gateway closed before device ${p.deviceId} acknowledged command ${id}`));
    }
    this.pending.clear();
    this.link.off('message', this.onMessage);
    if (this.ownsLink) await this.link.close();
    else for (const kind of GATEWAY_SUBSCRIBED_KINDS) await this.link.unsubscribe(kindFilter(this.prefix, kind)).catch(() => {});
  }

  // -------------------------------------------------------------------------------------------------

  private malformed(topic: string, deviceId: string | null, kind: TopicKind | null, reason: string): void {
    this.counters.malformed++;
    this.link.countMalformed(reason);
    this.emit('malformed', { topic, device_id: deviceId, kind, reason });
  }

  /** The device's entry, created on first sight unless the table is full (then null: counted by the caller). */
  private known(deviceId: string, now: number): KnownDevice | null {
    let d = this.devicesById.get(deviceId);
    if (!d) {
      if (this.devicesById.size >= this.maxDevices) return null;
      d = { id: deviceId, identity: null, status: null, last_heartbeat: null, last_seen_ms: now };
      this.devicesById.set(deviceId, d);
    }
    d.last_seen_ms = now;
    return d;
  }

  private handle(topic: string, payload: Buffer, info: MqttMessageInfo): void {
    const parsed = parseDeviceTopic(this.prefix, topic);
    if (!parsed) {
      // Only reachable for topics matching our filters with an invalid id segment.
      if (topic.startsWith(`${this.prefix}/devices/`)) this.malformed(topic, null, null, 'invalid device id in topic');
      return;
    }
    const { deviceId, kind } = parsed;
    const now = Date.now();
    switch (kind) {
      case 'discovery': {
        if (payload.length === 0) {
          // An empty retained discovery is how a device (or an operator) deletes it.
          if (this.devicesById.delete(deviceId)) this.emit('device-removed', { device_id: deviceId });
          return;
        }
        const r = parsePayload(payload, validateIdentity);
        if (!r.ok) return this.malformed(topic, deviceId, kind, r.reason);
        if (r.value.id !== deviceId) return this.malformed(topic, deviceId, kind, `discovery: id ${r.value.id} does not match topic`);
        const d = this.known(deviceId, now);
        if (!d) return this.malformed(topic, deviceId, kind, 'device table full');
        d.identity = r.value;
        this.emit('device-discovered', { device_id: deviceId, identity: r.value, retained: info.retain });
        return;
      }
      case 'status': {
        if (payload.length === 0) return; // retained status cleared
        const r = parseStatus(payload);
        if (!r.ok) return this.malformed(topic, deviceId, kind, r.reason);
        const d = this.known(deviceId, now);
        if (!d) return this.malformed(topic, deviceId, kind, 'device table full');
        d.status = r.value;
        this.emit('device-status', { device_id: deviceId, status: r.value, retained: info.retain });
        return;
      }
      case 'telemetry': {
        const r = parsePayload(payload, validateTelemetry);
        if (!r.ok) return this.malformed(topic, deviceId, kind, r.reason);
        // Telemetry never creates a table entry: units come from discovery, if any.
        const known = this.devicesById.get(deviceId);
        if (known) known.last_seen_ms = now;
        const identity = known?.identity;
        for (const metric in r.value.readings) {
          const value = r.value.readings[metric]!;
          const spec = identity?.metrics.find((m) => m.name === metric);
          if (spec && !matchesMetricType(value, spec.type)) {
            this.malformed(topic, deviceId, kind, `telemetry: ${metric} is not of declared type ${spec.type}`);
            continue;
          }
          this.emit('telemetry', { device_id: deviceId, metric, value, unit: spec?.unit ?? null, ts_ms: r.value.ts_ms, received_ms: now });
        }
        return;
      }
      case 'heartbeat': {
        const r = parsePayload(payload, validateHeartbeat);
        if (!r.ok) return this.malformed(topic, deviceId, kind, r.reason);
        const event: HeartbeatEvent = { device_id: deviceId, ...r.value, received_ms: now };
        const d = this.known(deviceId, now);
        if (!d) return this.malformed(topic, deviceId, kind, 'device table full');
        d.last_heartbeat = event;
        this.emit('heartbeat', event);
        return;
      }
      case 'ack': {
        const r = parsePayload(payload, validateAck);
        if (!r.ok) return this.malformed(topic, deviceId, kind, r.reason);
        const p = this.pending.get(r.value.id);
        const matched = p !== undefined && p.deviceId === deviceId;
        if (matched) {
          this.pending.delete(r.value.id);
          clearTimeout(p.timer);
          this.counters.acks_matched++;
        } else {
          this.counters.acks_unmatched++; // late (after timeout), duplicate (QoS 1 redelivery) or not ours
        }
        this.emit('ack', { device_id: deviceId, ack: r.value, matched });
        if (matched) p.resolve(r.value);
        return;
      }
      case 'command':
        return; // not subscribed; commands are ours
    }
  }
}
