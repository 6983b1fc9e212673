/**
 * Failover ordering of redundant devices: the one ordering every caller uses (the failover chains
 * of `/v1/failover/chains` and the entity graph's `backs_up` relationships).
 */
import type { DeviceRecord } from '../devices/device-registry.js';

/** What the ordering reads of a device. */
export type FailoverMember = Pick<DeviceRecord, 'id' | 'failover_priority'>;

/** Lifecycle states in which a device cannot take over. */
const UNUSABLE_LIFECYCLE: readonly string[] = ['failed', 'quarantined', 'retired', 'offline'];

/**
 * Members of one redundancy group in failover order: lowest `failover_priority` first, devices
 * without a priority last, ties by id. Returns a new array.
 */
export function failoverOrder<T extends FailoverMember>(members: readonly T[]): T[] {
  return [...members].sort((a, b) => (a.failover_priority ?? 1e9) - (b.failover_priority ?? 1e9) || a.id.localeCompare(b.id));
}

/** Devices by `redundant_group`, groups and members in the order the devices come. */
export function redundancyGroups<T extends Pick<DeviceRecord, 'redundant_group'>>(devices: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const d of devices) if (d.redundant_group) groups.set(d.redundant_group, [...(groups.get(d.redundant_group) ?? []), d]);
  return groups;
}

/** A device can serve its group unless it is offline or out of service. */
export function usableForFailover(d: Pick<DeviceRecord, 'health_status' | 'lifecycle_state'>): boolean {
  return d.health_status !== 'offline' && !UNUSABLE_LIFECYCLE.includes(d.lifecycle_state);
}

export interface FailoverChain {
  group: string;
  chain: Array<{ device_id: string; priority: number | null; lifecycle_state: string; health_status: string; usable: boolean }>;
  /** The first usable device of the chain: the one that serves now. */
  active_device: string | null;
  exhausted: boolean;
}

/** Every redundancy group (sorted by name) in failover order, with the device that serves now. */
export function failoverChains(devices: readonly DeviceRecord[]): FailoverChain[] {
  return [...redundancyGroups(devices).entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, members]) => {
      const ordered = failoverOrder(members);
      const serving = ordered.find(usableForFailover) ?? null;
      return {
        group,
        chain: ordered.map((d) => ({ device_id: d.id, priority: d.failover_priority, lifecycle_state: d.lifecycle_state, health_status: d.health_status, usable: usableForFailover(d) })),
        active_device: serving?.id ?? null,
        exhausted: serving === null,
      };
    });
}
