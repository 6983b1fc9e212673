import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { TelemetryStore } from '../telemetry/telemetry-store.js';
import { ApiError, notFound } from '../core/errors.js';
import { compareIds } from '../core/id-order.js';
import type { Attachment, AttachmentSink, CommandOutcome, FirmwareOutcome } from './attachments/attachment.js';
import type { DeviceRegistry, DeviceTransport, ObservedIdentity } from './device-registry.js';
import type { HalSettings } from '../settings/hal.js';
import type { HealthMonitor } from './health-monitor.js';
import type { LinkFault } from './attachments/link-faults.js';

export type { LinkFault } from './attachments/link-faults.js';

/** What a device just said or suffered, as the hub saw it (after the registry and health monitor took it in). */
export type DeviceSignal =
  | { kind: 'identity'; device_id: string }
  | { kind: 'heartbeat'; device_id: string; faults: string[] }
  | { kind: 'telemetry'; device_id: string }
  | { kind: 'lost'; device_id: string; reason: string };

/** Discovery transports this agent implements, and the reference's others, which it names honestly. */
export const HAL_TRANSPORTS = ['serial', 'can', 'mqtt'] as const;
export const OTHER_TRANSPORTS = ['subnet', 'mdns', 'ble', 'bluetooth', 'usb', 'wifi', 'cellular', 'lte', '5g', 'ros2', 'dds'] as const;

export interface DiscoveryMatch {
  device_id: string;
  device_type: string | null;
  logical_name: string | null;
  firmware_version: string | null;
  matched_by: string;
  transport: DeviceTransport;
  target: string;
  new: boolean;
}

export interface DiscoveryResult {
  transport: string;
  supported: boolean;
  scanned: string[];
  matches: DiscoveryMatch[];
  errors: string[];
  reason?: string;
}

/** Opens attachments of one transport kind; registered by the composition root. */
export interface AttachmentFactory {
  transport: (typeof HAL_TRANSPORTS)[number];
  /** Targets to scan now (ports matching the configured globs, interfaces, broker URL). */
  targets(): Promise<string[]>;
  /** Opens an attachment and resolves once it is ready to hear devices. */
  open(target: string, sink: AttachmentSink, timeoutMs: number): Promise<Attachment>;
}

/**
 * The agent's side of the HAL: owns the live attachments (serial lines, CAN buses, the MQTT broker),
 * turns what devices say into registry updates, telemetry and health, and carries commands and
 * firmware updates to them.
 */
export class DeviceHub implements AttachmentSink {
  private readonly attachments = new Map<string, Attachment>();
  private readonly byDevice = new Map<string, Attachment>();
  private readonly factories = new Map<string, AttachmentFactory>();
  private readonly fresh = new Set<string>();
  private readonly watchers = new Set<(signal: DeviceSignal) => void>();
  /** Devices whose link the agent is cycling on purpose (reconnect action). */
  private readonly cycling = new Set<string>();

  constructor(
    private readonly deps: {
      registry: DeviceRegistry;
      health: HealthMonitor;
      telemetry: TelemetryStore;
      bus: EventBus;
      hal: HalSettings;
      log: (line: string) => void;
    },
  ) {}

  register(factory: AttachmentFactory): void {
    this.factories.set(factory.transport, factory);
  }

  // ----- AttachmentSink -----
  identity(identity: ObservedIdentity): void {
    const { record, created } = this.deps.registry.observe(identity);
    const attachment = [...this.attachments.values()].find((a) => a.transport === identity.transport && a.devices().includes(identity.id));
    if (attachment) this.byDevice.set(identity.id, attachment);
    if (created) {
      this.fresh.add(identity.id);
      this.deps.bus.publish(platformEvent('EntityCreated', 'svc-hal', { entity_id: record.id, entity_type: 'device', transport: identity.transport }, record.id));
    }
    this.deps.health.heard(identity.id);
    this.cycling.delete(identity.id);
    this.signal({ kind: 'identity', device_id: identity.id });
  }

  telemetry(deviceId: string, metric: string, value: unknown, unit: string | null, tsMs: number): void {
    const d = this.deps.registry.get(deviceId);
    this.deps.telemetry.append({
      kind: 'device',
      device_id: deviceId,
      metric,
      value,
      timestamp_ms: Date.now(),
      ...(unit ? { unit } : {}),
      ...(d?.assigned_robot ? { robot_id: d.assigned_robot } : {}),
      ...(tsMs ? { device_ts_ms: tsMs } : {}),
    });
    this.deps.health.heard(deviceId);
    if (this.watchers.size > 0) this.signal({ kind: 'telemetry', device_id: deviceId });
  }

  heartbeat(deviceId: string, faults: string[]): void {
    const d = this.deps.registry.get(deviceId);
    this.deps.telemetry.append({ kind: 'device_heartbeat', device_id: deviceId, protocol: d?.protocol ?? undefined, faults, timestamp_ms: Date.now() });
    this.deps.health.heard(deviceId, faults);
    this.signal({ kind: 'heartbeat', device_id: deviceId, faults });
  }

  lost(deviceId: string, reason: string): void {
    // The agent closing its own links is not the device going away: its lifecycle (persisted) stays.
    // Nor is a reconnect the agent asked for: if the device does not come back, the timeout says so.
    if (this.closing || this.cycling.has(deviceId)) return;
    this.deps.health.lost(deviceId, reason);
    this.signal({ kind: 'lost', device_id: deviceId, reason });
  }

  /** Follow what devices say (identity, heartbeats, telemetry, losses) as it arrives; returns the unsubscribe. */
  watch(listener: (signal: DeviceSignal) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  private signal(s: DeviceSignal): void {
    for (const w of this.watchers) {
      try {
        w(s);
      } catch (err) {
        this.deps.log(`warning: device signal listener failed: ${(err as Error).message}`);
      }
    }
  }

  private readonly notes: string[] = [];
  note(message: string): void {
    this.notes.push(message);
    if (this.notes.length > 50) this.notes.shift();
    this.deps.log(`warning: ${message}`);
  }

  // ----- attachments -----
  /** Opens every configured target; failures are logged, the links keep retrying on their own. */
  async start(timeoutMs = 3000): Promise<void> {
    this.deps.health.start();
    await Promise.all(
      [...this.factories.values()].map(async (f) => {
        for (const target of await f.targets().catch(() => [])) {
          await this.attach(f, target, timeoutMs).catch((err: Error) => this.deps.log(`warning: ${f.transport} ${target}: ${err.message}`));
        }
      }),
    );
  }

  private key(transport: string, target: string): string {
    return `${transport}:${target}`;
  }

  private readonly opening = new Map<string, Promise<Attachment>>();

  /** One attachment per target, even when start-up and a discovery ask for it at the same time. */
  private attach(factory: AttachmentFactory, target: string, timeoutMs: number): Promise<Attachment> {
    const key = this.key(factory.transport, target);
    const existing = this.attachments.get(key);
    if (existing) return Promise.resolve(existing);
    let pending = this.opening.get(key);
    if (!pending) {
      pending = factory.open(target, this, timeoutMs).then(
        (attachment) => {
          this.attachments.set(key, attachment);
          this.opening.delete(key);
          return attachment;
        },
        (err: unknown) => {
          this.opening.delete(key);
          throw err;
        },
      );
      this.opening.set(key, pending);
    }
    return pending;
  }

  async discover(transports: string[], timeoutMs: number): Promise<DiscoveryResult[]> {
    const wanted = transports.length > 0 ? transports : [...HAL_TRANSPORTS];
    const results: DiscoveryResult[] = [];
    for (const t of [...new Set(wanted)]) {
      const factory = this.factories.get(t);
      if (!factory) {
        results.push({
          transport: t,
          supported: false,
          scanned: [],
          matches: [],
          errors: [],
          reason: (OTHER_TRANSPORTS as readonly string[]).includes(t)
            ? `${t} discovery is not supported by this agent; it discovers devices over serial, can and mqtt`
            : `unknown transport '${t}'`,
        });
        continue;
      }
      results.push(await this.discoverWith(factory, timeoutMs));
    }
    return results;
  }

  private async discoverWith(factory: AttachmentFactory, timeoutMs: number): Promise<DiscoveryResult> {
    const result: DiscoveryResult = { transport: factory.transport, supported: true, scanned: [], matches: [], errors: [] };
    let targets: string[] = [];
    try {
      targets = await factory.targets();
    } catch (err) {
      result.errors.push((err as Error).message);
    }
    result.scanned = targets;
    const opened: Attachment[] = [];
    const notesBefore = this.notes.length;
    await Promise.all(
      targets.map(async (target) => {
        try {
          opened.push(await this.attach(factory, target, timeoutMs));
        } catch (err) {
          result.errors.push(`${target}: ${(err as Error).message}`);
        }
      }),
    );
    result.errors.push(...this.notes.slice(notesBefore));
    // Give devices the scan window to answer (identities arrive as sink calls).
    await new Promise((r) => setTimeout(r, timeoutMs));
    for (const a of opened) {
      for (const id of a.devices()) {
        const d = this.deps.registry.get(id);
        result.matches.push({
          device_id: id,
          device_type: d?.device_type ?? null,
          logical_name: d?.logical_name ?? null,
          firmware_version: d?.firmware_version ?? null,
          matched_by: `${a.transport} identity`,
          transport: a.transport,
          target: a.target,
          new: this.fresh.has(id),
        });
      }
    }
    result.matches.sort((x, y) => compareIds(x.device_id, y.device_id));
    return result;
  }

  private attachmentOf(deviceId: string): Attachment {
    this.deps.registry.require(deviceId);
    const a = this.byDevice.get(deviceId);
    if (!a) throw new ApiError(409, 'conflict', `device ${deviceId} is not attached through the HAL (run a discovery first)`);
    return a;
  }

  sendCommand(deviceId: string, name: string, args: Record<string, unknown>, timeoutMs: number): Promise<CommandOutcome> {
    return this.attachmentOf(deviceId).sendCommand(deviceId, name, args, timeoutMs);
  }

  async updateFirmware(deviceId: string, image: Uint8Array, version: string): Promise<FirmwareOutcome> {
    const a = this.attachmentOf(deviceId);
    if (!a.updateFirmware) throw new ApiError(409, 'conflict', `firmware updates are not available over ${a.transport}`);
    // Progress for stream clients (the panel's progress bar): `FirmwareUpdateProgress` platform events
    // with the bytes the device acknowledged, at most one per 2 % step, then one with the result
    // (docs/devices.md § Firmware update progress).
    const total = image.length;
    const publish = (payload: Record<string, unknown>) =>
      this.deps.bus.publish(platformEvent('FirmwareUpdateProgress', 'svc-hal', { device_id: deviceId, version, total_bytes: total, ...payload }, deviceId));
    let lastStep = -1;
    const onProgress = (sent: number, of: number) => {
      const step = of > 0 ? Math.floor((sent / of) * 50) : 50;
      if (step === lastStep) return;
      lastStep = step;
      publish({ phase: 'transfer', sent_bytes: sent, total_bytes: of });
    };
    publish({ phase: 'started', sent_bytes: 0 });
    let outcome: FirmwareOutcome;
    try {
      outcome = await a.updateFirmware(deviceId, image, version, onProgress);
    } catch (err) {
      publish({ phase: 'done', result: 'error', detail: err instanceof Error ? err.message : String(err) });
      throw err;
    }
    publish({ phase: 'done', result: outcome.result, running_version: outcome.version, detail: outcome.detail });
    return outcome;
  }

  /** Drop and reopen the link that reaches the device (HAL reconnect); the device is greeted again when it is back. */
  async reconnect(deviceId: string, reason: string): Promise<void> {
    const a = this.attachmentOf(deviceId);
    if (!a.reconnect) throw new ApiError(409, 'conflict', `reconnecting a single device is not available over ${a.transport}`);
    // Until it identifies again (or 30 s pass), the drop this causes is not reported as a lost device.
    this.cycling.add(deviceId);
    setTimeout(() => this.cycling.delete(deviceId), 30_000).unref();
    try {
      await a.reconnect(deviceId, reason);
    } catch (err) {
      this.cycling.delete(deviceId);
      throw err;
    }
  }

  /** Chaos: set (null lifts) a fault on the device's link, applied in the agent's receive and send paths. */
  injectFault(deviceId: string, fault: LinkFault | null): void {
    const a = this.attachmentOf(deviceId);
    if (!a.injectFault) throw new ApiError(409, 'conflict', `fault injection is not available over ${a.transport}`);
    a.injectFault(deviceId, fault);
  }

  /** Stats of the attachment that reaches the device (link, frame and error counters). */
  linkStatsOf(deviceId: string): Record<string, unknown> {
    const a = this.attachmentOf(deviceId);
    return { ...a.stats(), devices: a.devices() };
  }

  stats(): Array<Record<string, unknown>> {
    return [...this.attachments.values()].map((a) => ({ ...a.stats(), devices: a.devices() }));
  }

  private closing = false;

  async close(): Promise<void> {
    this.closing = true;
    this.deps.health.stop();
    await Promise.all([...this.attachments.values()].map((a) => a.close().catch(() => undefined)));
    this.attachments.clear();
    this.byDevice.clear();
  }

  /** For tests and diagnostics. */
  has(deviceId: string): boolean {
    if (!this.deps.registry.get(deviceId)) throw notFound('device not found');
    return this.byDevice.has(deviceId);
  }
}
