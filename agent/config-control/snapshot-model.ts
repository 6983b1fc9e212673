import type { DeviceRecord } from '../devices/device-registry.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import type { SnapshotMeta } from '../../api/domains/config-control.js';

export type { SnapshotMeta };

/**
 * A device of the pool as a snapshot keeps it: its configured identity and what operators decided at
 * run time (lifecycle, assignment, trust). Observations that change by themselves (last seen,
 * health) are not configuration and are left out, so a snapshot compares and publishes decisions only.
 */
export type SnapshotDevice = Omit<DeviceRecord, 'last_seen_ms' | 'health_status' | 'updated_at_ms' | 'discovered_at_ms'>;

/**
 * The frozen configuration: the resolved project configuration as the agent holds it (merged tree,
 * manifest, robots, devices, providers, packages) and the device pool with the run-time decisions
 * layered over the configured devices.
 */
export interface SnapshotResolved {
  config: ResolvedConfig;
  device_pool: SnapshotDevice[];
}

export interface StoredSnapshot {
  meta: SnapshotMeta;
  resolved: SnapshotResolved;
}

export function snapshotDevice(d: DeviceRecord): SnapshotDevice {
  const { last_seen_ms: _l, health_status: _h, updated_at_ms: _u, discovered_at_ms: _d, ...rest } = d;
  return { ...rest, capabilities: [...rest.capabilities] };
}

/** The live configuration in snapshot form (also the "current" side of a drift comparison). */
export function liveResolved(config: ResolvedConfig, devices: readonly DeviceRecord[]): SnapshotResolved {
  // A deep copy: later changes to the live objects must not reach a snapshot being written or compared.
  return JSON.parse(JSON.stringify({ config, device_pool: devices.map(snapshotDevice) }, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))) as SnapshotResolved;
}
