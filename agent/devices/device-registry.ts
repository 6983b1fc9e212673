import type { ConfiguredDevice, ResolvedConfig } from '../project/resolve-config.js';

/** Device lifecycle states (api-behaviour §10.4). */
export const DEVICE_LIFECYCLE_STATES = [
  'discovered',
  'quarantined',
  'verified',
  'assigned',
  'active',
  'healthy',
  'degraded',
  'offline',
  'failed',
  'retired',
] as const;
export type DeviceLifecycleState = (typeof DEVICE_LIFECYCLE_STATES)[number];

export interface DeviceRecord {
  id: string;
  device_type: string;
  logical_name: string | null;
  lifecycle_state: DeviceLifecycleState;
  protocol: string | null;
  port: string | null;
  bus: string | null;
  can_id: number | null;
  provider: string | null;
  capabilities: string[];
  robot_id: string | null;
  assigned_robot: string | null;
  mount: string | null;
  serial: string | null;
  ip_address: string | null;
  hostname: string | null;
  endpoint_url: string | null;
  mac_address: string | null;
  trust_level: string | null;
  security_identity: string | null;
  certificate_fingerprint: string | null;
  firmware_version: string | null;
  last_seen_ms: number | null;
  source: 'config' | 'discovered';
}

export type DevicePoolSummary = Record<'total' | DeviceLifecycleState, number>;

function fromConfig(d: ConfiguredDevice): DeviceRecord {
  const stated = typeof d.raw['lifecycle_state'] === 'string' ? String(d.raw['lifecycle_state']) : null;
  const lifecycle = (DEVICE_LIFECYCLE_STATES as readonly string[]).includes(stated ?? '')
    ? (stated as DeviceLifecycleState)
    : // A device the operator wrote into the configuration is vouched for; one bound to a robot is in service.
      d.robot_id
      ? 'active'
      : 'verified';
  const firmware = d.raw['firmware_version'] ?? d.raw['firmware'];
  return {
    id: d.id,
    device_type: d.device_type,
    logical_name: d.logical_name,
    lifecycle_state: lifecycle,
    protocol: d.protocol,
    port: d.port,
    bus: d.bus,
    can_id: d.can_id,
    provider: d.provider,
    capabilities: [...d.capabilities].sort(),
    robot_id: d.robot_id,
    assigned_robot: d.robot_id,
    mount: d.mount,
    serial: d.serial,
    ip_address: d.ip_address,
    hostname: d.hostname,
    endpoint_url: d.endpoint_url,
    mac_address: d.mac_address,
    trust_level: d.trust_level,
    security_identity: d.security_identity,
    certificate_fingerprint: d.certificate_fingerprint,
    firmware_version: typeof firmware === 'string' ? firmware : null,
    last_seen_ms: null,
    source: 'config',
  };
}

/** The device pool: configured devices (`[[devices]]` and fleet compute devices), keyed by id. */
export class DeviceRegistry {
  private readonly devices = new Map<string, DeviceRecord>();

  constructor(config: ResolvedConfig | null) {
    for (const d of config?.devices ?? []) this.devices.set(d.id, fromConfig(d));
  }

  list(): DeviceRecord[] {
    return [...this.devices.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  get(id: string): DeviceRecord | undefined {
    return this.devices.get(id);
  }

  summary(): DevicePoolSummary {
    const s = Object.fromEntries([['total', 0], ...DEVICE_LIFECYCLE_STATES.map((k) => [k, 0])]) as DevicePoolSummary;
    for (const d of this.devices.values()) {
      s.total++;
      s[d.lifecycle_state]++;
    }
    return s;
  }
}
