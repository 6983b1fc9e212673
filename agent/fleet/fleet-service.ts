/**
 * Fleet views and configured policies, computed from the project configuration and the device
 * pool: robots and their health, the device tree, per-device reports, failover chains, package
 * trust, and the assurance and diagnosis policies in force. No transport: the fleet operations
 * wrap these results in the API envelope.
 */
import type { DeviceRecord } from '../devices/device-registry.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { table } from './config-tables.js';
import { failoverChains } from './failover.js';
import { packageTrust } from './package-trust.js';
import { assurancePolicy, diagnosisPolicy } from './policies.js';

export interface FleetServiceDeps {
  /** The device pool, read on every call. */
  devices: () => readonly DeviceRecord[];
  /** The resolved project configuration, or null when none is loaded. */
  config: () => ResolvedConfig | null;
  /** Link counters (reconnects, malformed frames, CRC errors) of every HAL attachment. */
  linkStats: () => Array<Record<string, unknown>>;
  /** Clock for device freshness; `Date.now` unless a test gives one. */
  now?: () => number;
}

export type RobotHealth = 'offline' | 'degraded' | 'unknown' | 'healthy';

const HEALTH_ORDER: readonly RobotHealth[] = ['offline', 'degraded', 'unknown', 'healthy'];

/** Worst health of a robot's devices: a robot is only as healthy as what it depends on. */
export function robotHealth(devices: readonly Pick<DeviceRecord, 'lifecycle_state' | 'health_status'>[]): RobotHealth {
  const states = devices.map((d) => (['failed', 'offline'].includes(d.lifecycle_state) ? 'offline' : d.lifecycle_state === 'degraded' ? 'degraded' : d.health_status));
  for (const s of HEALTH_ORDER) if (states.includes(s)) return s;
  return 'unknown';
}

/** The robot a device is bound to: its assignment, else the robot its configuration names. */
const robotOf = (d: DeviceRecord) => d.assigned_robot ?? d.robot_id;

export class FleetService {
  private readonly now: () => number;

  constructor(private readonly deps: FleetServiceDeps) {
    this.now = deps.now ?? Date.now;
  }

  private devicesOf(robotId: string): DeviceRecord[] {
    return this.deps.devices().filter((d) => robotOf(d) === robotId);
  }

  /** Robots of the configuration with their devices and (worst-device) health. */
  robots() {
    return (this.deps.config()?.robots ?? []).map((r) => {
      const devices = this.devicesOf(r.id);
      const raw = (r as unknown as { raw?: Record<string, unknown> }).raw;
      return {
        id: r.id,
        hardware_profile: r.hardware_profile,
        model: r.model,
        compute: r.compute,
        device_count: devices.length,
        devices: devices.map((d) => ({ id: d.id, device_type: d.device_type, lifecycle_state: d.lifecycle_state, health_status: d.health_status })),
        health_status: devices.length ? robotHealth(devices) : 'unknown',
        ...(raw?.['location'] !== undefined ? { location: raw['location'] } : {}),
      };
    });
  }

  /** The fleet of this agent (none without robots and a fleet id), with its robots' health counts. */
  fleets() {
    const cfg = this.deps.config();
    if (!cfg || (cfg.robots.length === 0 && !cfg.fleetId)) return { fleets: [] };
    const robots = this.robots();
    return {
      fleets: [
        {
          id: cfg.fleetId ?? 'fleet',
          robot_count: robots.length,
          robots: robots.map((r) => r.id),
          device_count: this.deps.devices().length,
          health: { healthy: robots.filter((r) => r.health_status === 'healthy').length, degraded: robots.filter((r) => r.health_status === 'degraded').length, offline: robots.filter((r) => r.health_status === 'offline').length },
        },
      ],
    };
  }

  /** Where the robots are and how they are doing, plus the configured facilities. */
  fleetMap() {
    const cfg = this.deps.config();
    const facilities = table(cfg?.tree, 'facilities');
    return {
      fleet_id: cfg?.fleetId ?? null,
      robots: this.robots().map((r) => ({ id: r.id, health_status: r.health_status, device_count: r.device_count, location: (r as { location?: unknown }).location ?? null })),
      facilities: Object.keys(facilities).sort(),
    };
  }

  /** Fleet → robots → compute → devices, plus devices not bound to a robot. */
  deviceTree() {
    const cfg = this.deps.config();
    const bound = new Set<string>();
    const robots = (cfg?.robots ?? []).map((r) => {
      const devices = this.devicesOf(r.id);
      devices.forEach((d) => bound.add(d.id));
      return {
        id: r.id,
        kind: 'robot',
        hardware_profile: r.hardware_profile,
        compute: r.compute ? { ...r.compute, kind: 'compute' } : null,
        children: devices.map((d) => ({ id: d.id, kind: 'device', device_type: d.device_type, mount: d.mount, port: d.port, bus: d.bus, lifecycle_state: d.lifecycle_state, health_status: d.health_status })),
      };
    });
    const unbound = this.deps.devices().filter((d) => !bound.has(d.id));
    return {
      tree: { id: cfg?.fleetId ?? 'fleet', kind: 'fleet', children: robots },
      unassigned: unbound.map((d) => ({ id: d.id, kind: 'device', device_type: d.device_type, lifecycle_state: d.lifecycle_state, health_status: d.health_status })),
    };
  }

  /** Per-device health, lifecycle, identity and freshness, plus the HAL links' counters. */
  deviceReports() {
    const now = this.now();
    const reports = this.deps.devices().map((d) => {
      const issues: string[] = [];
      if (d.health_status === 'offline') issues.push('offline');
      if (d.health_status === 'degraded') issues.push('degraded');
      if (d.lifecycle_state === 'quarantined') issues.push(`quarantined${d.quarantine_reason ? `: ${d.quarantine_reason}` : ''}`);
      if (d.transport && !d.firmware_version) issues.push('firmware version unknown');
      if (!d.trust_level) issues.push('no trust level');
      return {
        device_id: d.id,
        device_type: d.device_type,
        lifecycle_state: d.lifecycle_state,
        health_status: d.health_status,
        transport: d.transport,
        firmware_version: d.firmware_version,
        last_seen_ms: d.last_seen_ms,
        age_ms: d.last_seen_ms === null ? null : now - d.last_seen_ms,
        issues,
      };
    });
    return { reports, count: reports.length, links: this.deps.linkStats() };
  }

  /** Redundant device groups in failover order, with the device that serves now. */
  failoverChains() {
    const chains = failoverChains(this.deps.devices());
    return { chains, count: chains.length };
  }

  /** Trust score of the project packages (all, or the one named). */
  packageTrust(packageName?: string) {
    return packageTrust(this.deps.config()?.tree, this.deps.devices(), packageName);
  }

  /** The assurance policy in force (configuration over defaults). */
  assuranceSummary() {
    const cfg = this.deps.config();
    return { ...assurancePolicy(cfg?.tree), config_loaded: cfg !== null };
  }

  /** The diagnosis policy in force ([diagnosis] wins over [assurance]). */
  diagnosisSummary() {
    const tree = this.deps.config()?.tree;
    return { ...diagnosisPolicy(tree), config_loaded: tree !== undefined };
  }
}
