import path from 'node:path';
import { notFound } from '../core/errors.js';
import { compareIds } from '../core/id-order.js';
import type { ConfiguredDevice, ResolvedConfig } from '../project/resolve-config.js';
import { JsonStore } from '../state/json-store.js';
import { assertTransition, DEVICE_LIFECYCLE_STATES, isLifecycleState, type DeviceLifecycleState } from './lifecycle.js';

export { DEVICE_LIFECYCLE_STATES, type DeviceLifecycleState } from './lifecycle.js';

export type DeviceHealth = 'healthy' | 'degraded' | 'offline' | 'unknown';
export type DeviceTransport = 'serial' | 'slcan' | 'socketcan' | 'mqtt';

/** The full identity record of a device (docs/devices.md) plus what the HAL observed. */
export interface DeviceRecord {
  id: string;
  device_type: string;
  logical_name: string | null;
  serial: string | null;
  mac_address: string | null;
  ip_address: string | null;
  hostname: string | null;
  endpoint_url: string | null;
  protocol: string | null;
  port: string | null;
  bus: string | null;
  can_id: number | null;
  firmware_version: string | null;
  hardware_revision: string | null;
  security_identity: string | null;
  certificate_fingerprint: string | null;
  trust_level: string | null;
  provider: string | null;
  capabilities: string[];
  robot_id: string | null;
  redundant_group: string | null;
  failover_priority: number | null;
  mount: string | null;
  lifecycle_state: DeviceLifecycleState;
  assigned_robot: string | null;
  last_seen_ms: number | null;
  /** Health from heartbeats and telemetry freshness; `unknown` until the device is heard. */
  health_status: DeviceHealth;
  /** How the agent reaches the device when it is attached through the HAL. */
  transport: DeviceTransport | null;
  provisioning_id: string | null;
  quarantine_reason: string | null;
  trusted_by: string | null;
  source: 'config' | 'discovered';
  discovered_at_ms: number | null;
  updated_at_ms: number;
}

/** What a discovery or a device's own identity message tells us. */
export interface ObservedIdentity {
  id: string;
  device_type?: string | undefined;
  firmware_version?: string | undefined;
  hardware_revision?: string | undefined;
  serial?: string | undefined;
  capabilities?: string[] | undefined;
  protocol: string;
  transport: DeviceTransport;
  port?: string | undefined;
  bus?: string | undefined;
  can_id?: number | undefined;
  endpoint_url?: string | undefined;
  logical_name?: string | undefined;
}

/** Fields that change at run time and are persisted for every device, configured ones included. */
const OVERLAY_FIELDS = [
  'lifecycle_state',
  'assigned_robot',
  'trust_level',
  'provisioning_id',
  'quarantine_reason',
  'trusted_by',
  'firmware_version',
  'hardware_revision',
  'serial',
  'capabilities',
  'last_seen_ms',
  'transport',
  'protocol',
  'port',
  'bus',
  'can_id',
  'endpoint_url',
  'discovered_at_ms',
  'updated_at_ms',
] as const satisfies ReadonlyArray<keyof DeviceRecord>;

interface DevicesFile {
  /** Overlays of configured devices and whole records of discovered ones, by id. */
  devices: Record<string, Partial<DeviceRecord>>;
}

export const DEVICES_FILE = 'devices.json';

function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' ? String(v) : null;
}

/**
 * The record a configured device starts with: what its declaration states, with the defaults the
 * pool derives where it states nothing (lifecycle from `robot_id`, assignment = `robot_id`). A
 * publish compares a snapshot's device against this to tell a run-time decision from a value the
 * configuration already implies (docs/operations.md § Publishing).
 */
export function fromConfig(d: ConfiguredDevice, now: number): DeviceRecord {
  const raw = d.raw;
  const stated = raw['lifecycle_state'];
  const priority = Number(raw['failover_priority']);
  return {
    id: d.id,
    device_type: d.device_type,
    logical_name: d.logical_name,
    serial: d.serial,
    mac_address: d.mac_address,
    ip_address: d.ip_address,
    hostname: d.hostname,
    endpoint_url: d.endpoint_url,
    protocol: d.protocol,
    port: d.port,
    bus: d.bus,
    can_id: d.can_id,
    firmware_version: text(raw['firmware_version'] ?? raw['firmware']),
    hardware_revision: text(raw['hardware_revision']),
    security_identity: d.security_identity,
    certificate_fingerprint: d.certificate_fingerprint,
    trust_level: d.trust_level,
    provider: d.provider,
    capabilities: [...d.capabilities].sort(),
    robot_id: d.robot_id,
    redundant_group: text(raw['redundant_group']),
    failover_priority: Number.isFinite(priority) ? priority : null,
    mount: d.mount,
    // A device written into the configuration is vouched for by its operator; one bound to a robot is in service.
    lifecycle_state: isLifecycleState(stated) ? stated : d.robot_id ? 'active' : 'verified',
    assigned_robot: d.robot_id,
    last_seen_ms: null,
    health_status: 'unknown',
    transport: null,
    provisioning_id: null,
    quarantine_reason: null,
    trusted_by: null,
    source: 'config',
    discovered_at_ms: null,
    updated_at_ms: now,
  };
}

/** A record with nothing known but its id: every field empty, lifecycle `discovered`. */
export function blankDeviceRecord(id: string, now: number): DeviceRecord {
  return {
    id,
    device_type: 'unknown',
    logical_name: null,
    serial: null,
    mac_address: null,
    ip_address: null,
    hostname: null,
    endpoint_url: null,
    protocol: null,
    port: null,
    bus: null,
    can_id: null,
    firmware_version: null,
    hardware_revision: null,
    security_identity: null,
    certificate_fingerprint: null,
    trust_level: null,
    provider: null,
    capabilities: [],
    robot_id: null,
    redundant_group: null,
    failover_priority: null,
    mount: null,
    lifecycle_state: 'discovered',
    assigned_robot: null,
    last_seen_ms: null,
    health_status: 'unknown',
    transport: null,
    provisioning_id: null,
    quarantine_reason: null,
    trusted_by: null,
    source: 'discovered',
    discovered_at_ms: now,
    updated_at_ms: now,
  };
}

/**
 * `device_pool` of /v1/instance, /v1/dashboard and /v1/devices (docs/api.md § Meta endpoints).
 * `healthy/degraded/offline/unknown` partition the pool by `health_status` (what the health monitor
 * observes); `failed` counts devices whose lifecycle is `failed`, since health has no failed value
 * and a failed device is out of service whatever it last reported. Lifecycle counts live under
 * `lifecycle`, so a device `assigned` and reporting healthy is counted as healthy.
 */
export interface DevicePoolSummary {
  total: number;
  healthy: number;
  degraded: number;
  offline: number;
  unknown: number;
  failed: number;
  lifecycle: Record<DeviceLifecycleState, number>;
}

/**
 * The device pool: configured devices (`[[devices]]`, fleet compute devices) and discovered ones in
 * one registry, keyed by id. Configuration provides the base record; what changes at run time
 * (lifecycle, assignment, trust, observed identity) is persisted in `devices.json`, so a restart
 * keeps every decision an operator made.
 */
export class DeviceRegistry {
  private readonly devices = new Map<string, DeviceRecord>();

  private constructor(private readonly store: JsonStore<DevicesFile> | null) {}

  /** A registry persisted in the state directory. */
  static async open(stateDir: string, config: ResolvedConfig | null): Promise<DeviceRegistry> {
    const store = await JsonStore.open<DevicesFile>(path.join(stateDir, DEVICES_FILE), {
      defaults: () => ({ devices: {} }),
      revive: (raw) => {
        const r = raw as Partial<DevicesFile>;
        if (!r || typeof r.devices !== 'object' || r.devices === null) throw new Error('expected {devices:{...}}');
        return { devices: r.devices };
      },
    });
    const registry = new DeviceRegistry(store);
    registry.load(config);
    return registry;
  }

  /** An in-memory registry (for tools that only read a configuration). */
  static fromConfig(config: ResolvedConfig | null): DeviceRegistry {
    const r = new DeviceRegistry(null);
    r.load(config);
    return r;
  }

  private load(config: ResolvedConfig | null): void {
    const now = Date.now();
    for (const d of config?.devices ?? []) this.devices.set(d.id, fromConfig(d, now));
    for (const [id, saved] of Object.entries(this.store?.data.devices ?? {})) {
      const base = this.devices.get(id);
      if (base) {
        for (const f of OVERLAY_FIELDS) if (saved[f] !== undefined) (base as unknown as Record<string, unknown>)[f] = saved[f];
        if (!isLifecycleState(base.lifecycle_state)) base.lifecycle_state = 'verified';
      } else if (saved.source === 'discovered') {
        const record = { ...blankDeviceRecord(id, now), ...saved, id, health_status: 'unknown' as const };
        if (!isLifecycleState(record.lifecycle_state)) record.lifecycle_state = 'discovered';
        this.devices.set(id, record);
      }
    }
  }

  private persist(record: DeviceRecord): void {
    if (!this.store) return;
    record.updated_at_ms = Date.now();
    this.store.change((d) => {
      if (record.source === 'discovered') {
        const { health_status: _h, ...rest } = record;
        d.devices[record.id] = rest;
      } else {
        const overlay: Partial<DeviceRecord> = {};
        for (const f of OVERLAY_FIELDS) (overlay as Record<string, unknown>)[f] = record[f];
        d.devices[record.id] = overlay;
      }
    });
  }

  list(): DeviceRecord[] {
    return [...this.devices.values()].sort((a, b) => compareIds(a.id, b.id));
  }

  get(id: string): DeviceRecord | undefined {
    return this.devices.get(id);
  }

  require(id: string): DeviceRecord {
    const d = this.devices.get(id);
    if (!d) throw notFound('device not found');
    return d;
  }

  /**
   * Records what a device said about itself. A new id becomes a `discovered` device; a known one has
   * its observed identity refreshed (configured fields it does not report are kept).
   */
  observe(identity: ObservedIdentity, now = Date.now()): { record: DeviceRecord; created: boolean } {
    let record = this.devices.get(identity.id);
    const created = !record;
    if (!record) {
      record = blankDeviceRecord(identity.id, now);
      this.devices.set(identity.id, record);
    }
    if (identity.device_type && (created || record.device_type === 'unknown')) record.device_type = identity.device_type;
    if (identity.firmware_version) record.firmware_version = identity.firmware_version;
    if (identity.hardware_revision) record.hardware_revision = identity.hardware_revision;
    if (identity.serial) record.serial = identity.serial;
    if (identity.capabilities && identity.capabilities.length > 0) record.capabilities = [...new Set(identity.capabilities)].sort();
    if (identity.logical_name && !record.logical_name) record.logical_name = identity.logical_name;
    record.protocol = identity.protocol;
    record.transport = identity.transport;
    if (identity.port !== undefined) record.port = identity.port;
    if (identity.bus !== undefined) record.bus = identity.bus;
    if (identity.can_id !== undefined) record.can_id = identity.can_id;
    if (identity.endpoint_url !== undefined) record.endpoint_url = identity.endpoint_url;
    record.discovered_at_ms ??= now;
    record.last_seen_ms = now;
    this.persist(record);
    return { record, created };
  }

  /** Marks a device as heard from now (not persisted on every beat: see `flushSeen`). */
  touch(id: string, now = Date.now()): DeviceRecord | undefined {
    const d = this.devices.get(id);
    if (d) d.last_seen_ms = now;
    return d;
  }

  setHealth(id: string, health: DeviceHealth): void {
    const d = this.devices.get(id);
    if (d) d.health_status = health;
  }

  /** Moves a device through its lifecycle; refused transitions are 409 unless `override`. */
  transition(id: string, to: DeviceLifecycleState, options: { override?: boolean; changes?: Partial<DeviceRecord> } = {}): DeviceRecord {
    const d = this.require(id);
    assertTransition(d.lifecycle_state, to, options.override ?? false);
    d.lifecycle_state = to;
    if (options.changes) Object.assign(d, options.changes);
    this.persist(d);
    return d;
  }

  update(id: string, changes: Partial<DeviceRecord>): DeviceRecord {
    const d = this.require(id);
    Object.assign(d, changes);
    this.persist(d);
    return d;
  }

  summary(): DevicePoolSummary {
    const lifecycle = Object.fromEntries(DEVICE_LIFECYCLE_STATES.map((k) => [k, 0])) as Record<DeviceLifecycleState, number>;
    const s: DevicePoolSummary = { total: 0, healthy: 0, degraded: 0, offline: 0, unknown: 0, failed: 0, lifecycle };
    for (const d of this.devices.values()) {
      s.total++;
      s[d.health_status]++;
      lifecycle[d.lifecycle_state]++;
    }
    s.failed = lifecycle.failed;
    return s;
  }

  /** Persists last-seen times (kept in memory between changes) and waits for the write. */
  async flush(): Promise<void> {
    if (!this.store) return;
    for (const d of this.devices.values()) if (d.last_seen_ms !== null) this.persist(d);
    await this.store.flush();
  }
}
