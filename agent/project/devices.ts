/**
 * Device tree, device registry and human registry built from the merged
 * configuration tree (docs/program-language.md §7.3, §7.4).
 */
import { cloneValue, isTable, type Table } from './deep-merge.js';

export interface ConfiguredDevice {
  id: string;
  device_type: string;
  logical_name: string | null;
  robot_id: string | null;
  protocol: string | null;
  port: string | null;
  bus: string | null;
  can_id: number | null;
  provider: string | null;
  mount: string | null;
  serial: string | null;
  ip_address: string | null;
  hostname: string | null;
  endpoint_url: string | null;
  mac_address: string | null;
  trust_level: string | null;
  security_identity: string | null;
  certificate_fingerprint: string | null;
  capabilities: string[];
  networked: boolean;
  source: 'devices' | 'fleet_compute';
  /** The table as written, after merge. */
  raw: Record<string, unknown>;
}

export interface FleetRobot {
  id: string;
  hardware_profile: string | null;
  model: string | null;
  compute: { id: string | null; type: string | null; serial: string | null } | null;
  devices: ConfiguredDevice[];
}

export interface ConfiguredHuman {
  id: string;
  name: string | null;
  role: string | null;
  email: string | null;
  raw: Record<string, unknown>;
}

/** A device together with the place it was declared in the merged tree. */
export interface DeviceEntry {
  device: ConfiguredDevice;
  path: string;
}

const NETWORK_PROTOCOLS: ReadonlySet<string> = new Set(['http', 'https', 'rtsp', 'mqtt', 'ws', 'wss', 'tcp', 'udp']);

/** A non-empty string, or a number rendered as a string; anything else is null. */
export function str(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() === '' ? null : value;
  if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') return String(value);
  return null;
}

function firstStr(table: Table, ...keys: string[]): string | null {
  for (const key of keys) {
    const value = str(table[key]);
    if (value !== null) return value;
  }
  return null;
}

/** CAN identifiers: integers, or strings such as "0x123", "0b101", "0o17", "291". */
export function parseCanId(value: unknown): number | null {
  if (typeof value === 'bigint') return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : null;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : null;
  if (typeof value !== 'string') return null;
  const text = value.trim().replace(/_/g, '');
  if (!/^(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+|\d+)$/.test(text)) return null;
  const parsed = Number(text.toLowerCase());
  return Number.isSafeInteger(parsed) ? parsed : null;
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === 'string' && item !== '');
}

export function isNetworked(table: Table): boolean {
  for (const key of ['ip', 'ip_address', 'hostname', 'dns_name', 'mdns_name', 'endpoint', 'endpoint_url']) {
    if (str(table[key]) !== null) return true;
  }
  const protocol = str(table['protocol']);
  return protocol !== null && NETWORK_PROTOCOLS.has(protocol.toLowerCase());
}

export function normalizeDevice(table: Table, source: ConfiguredDevice['source'], robotId: string | null = null): ConfiguredDevice {
  return {
    id: str(table['id']) ?? '',
    device_type: firstStr(table, 'type', 'device_type') ?? 'unknown',
    logical_name: str(table['logical_name']),
    robot_id: source === 'fleet_compute' ? robotId : str(table['robot_id']),
    protocol: str(table['protocol']),
    port: str(table['port']),
    bus: str(table['bus']),
    can_id: parseCanId(table['can_id']),
    provider: str(table['provider']),
    mount: str(table['mount']),
    serial: str(table['serial']),
    ip_address: firstStr(table, 'ip', 'ip_address'),
    hostname: str(table['hostname']),
    endpoint_url: firstStr(table, 'endpoint', 'endpoint_url'),
    mac_address: firstStr(table, 'mac', 'mac_address'),
    trust_level: str(table['trust_level']),
    security_identity: str(table['security_identity']),
    certificate_fingerprint: str(table['certificate_fingerprint']),
    capabilities: strings(table['capabilities']),
    networked: isNetworked(table),
    source,
    raw: cloneValue(table),
  };
}

function tablesAt(value: unknown): Array<{ table: Table; index: number }> {
  if (!Array.isArray(value)) return [];
  const out: Array<{ table: Table; index: number }> = [];
  value.forEach((item, index) => {
    if (isTable(item)) out.push({ table: item, index });
  });
  return out;
}

export function fleetOf(tree: Table): Table | null {
  const fleet = tree['fleet'];
  return isTable(fleet) ? fleet : null;
}

/** `[[fleet.robots]]` with their compute devices, plus each robot's position in the tree. */
export function collectRobots(tree: Table): Array<{ robot: FleetRobot; path: string; devices: DeviceEntry[] }> {
  const fleet = fleetOf(tree);
  if (!fleet) return [];
  return tablesAt(fleet['robots']).map(({ table, index }) => {
    const id = str(table['id']) ?? '';
    const path = `fleet.robots[${index}]`;
    const computeTable = isTable(table['compute']) ? table['compute'] : null;
    const devices: DeviceEntry[] = computeTable
      ? tablesAt(computeTable['devices']).map(({ table: dev, index: di }) => ({
          device: normalizeDevice(dev, 'fleet_compute', id === '' ? null : id),
          path: `${path}.compute.devices[${di}]`,
        }))
      : [];
    const robot: FleetRobot = {
      id,
      hardware_profile: str(table['hardware_profile']),
      model: str(table['model']),
      compute: computeTable
        ? { id: str(computeTable['id']), type: str(computeTable['type']), serial: str(computeTable['serial']) }
        : null,
      devices: devices.map((entry) => entry.device),
    };
    return { robot, path, devices };
  });
}

/** Every declared device, `[[devices]]` first, then fleet compute devices; not de-duplicated. */
export function collectDeviceEntries(tree: Table): DeviceEntry[] {
  const declared: DeviceEntry[] = tablesAt(tree['devices']).map(({ table, index }) => ({
    device: normalizeDevice(table, 'devices'),
    path: `devices[${index}]`,
  }));
  const compute = collectRobots(tree).flatMap((robot) => robot.devices);
  return [...declared, ...compute];
}

/** De-duplicate by id, first declaration wins; devices without an id are all kept. */
export function dedupeDevices<T extends { device: ConfiguredDevice }>(entries: readonly T[]): T[] {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const entry of entries) {
    const id = entry.device.id;
    if (id !== '') {
      if (seen.has(id)) continue;
      seen.add(id);
    }
    out.push(entry);
  }
  return out;
}

/** `[[humans]]`, then `[[people]]`, de-duplicated by id (first wins). */
export function collectHumans(tree: Table): ConfiguredHuman[] {
  const out: ConfiguredHuman[] = [];
  const seen = new Set<string>();
  for (const key of ['humans', 'people']) {
    for (const { table } of tablesAt(tree[key])) {
      const id = str(table['id']) ?? '';
      if (id !== '') {
        if (seen.has(id)) continue;
        seen.add(id);
      }
      out.push({ id, name: str(table['name']), role: str(table['role']), email: str(table['email']), raw: cloneValue(table) });
    }
  }
  return out;
}
