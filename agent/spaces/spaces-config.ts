/**
 * The smart-space model read from the merged configuration tree (docs/spaces.md § Configuration):
 * `[[facilities]]` with nested zones (and their devices), gateways, robots, energy systems, humans
 * and wearables; `[[continuity_pairs]]`, `[[twins]]`, `[readiness.profiles.smart_space]`,
 * `[security]`; plus `[[devices]]` that name a `zone`, so devices the pool already knows (MQTT,
 * serial) can be placed in a zone without being declared twice. Pure: no I/O.
 */
import type { ResolvedConfig } from '../project/resolve-config.js';
import { isTable, type Table } from '../project/deep-merge.js';

export interface FacilityEntry {
  id: string;
  name: string | null;
  facility_type: string | null;
  compliance_profile: string | null;
  location: unknown;
  /** `type` / `entity_kind` as written (decides the commercial / residential segment). */
  kind: string | null;
  raw: Table;
}

/** A nested entry with the facility it belongs to (null = unscoped: belongs to every facility). */
interface Scoped {
  id: string;
  facility: string | null;
  type: string | null;
  provider: string | null;
  capabilities: string[];
  raw: Table;
}

export interface ZoneEntry extends Scoped {
  name: string | null;
  parent: string | null;
  health_zone: boolean;
}
export interface ZoneDevice extends Scoped {
  zone: string | null;
  battery_ok: boolean | null;
}
export interface GatewayEntry extends Scoped {
  role: string;
  failover_from: string | null;
}
export type RobotEntry = Scoped;
export type EnergyEntry = Scoped;
export interface HumanEntry {
  id: string;
  facility: string | null;
  role: string | null;
  display_name: string | null;
  trust_level: string | null;
  health_opt_in: boolean;
}
export interface WearableEntry extends Scoped {
  human_id: string | null;
}
export interface ContinuityPair {
  primary: string | null;
  backup: string | null;
  on_failure: string | null;
  missions: string[];
}
export interface TwinEntry {
  id: string | null;
  entity_id: string | null;
  entity_type: string | null;
  mirror: string[];
  replay: unknown;
}

export interface SmartSpaceProfile {
  /** `smart_space` when `[readiness.profiles.smart_space].min_score` exists, else `default`. */
  name: string;
  minScore: number;
  /** Per-dimension weight ×100, or null for the built-in defaults. */
  weights: Record<string, number> | null;
  requiredDevices: { residential: string[]; commercial: string[] };
  gatewayFailoverRequired: boolean;
}

export interface SpacesModel {
  facilities: FacilityEntry[];
  zones: ZoneEntry[];
  zoneDevices: ZoneDevice[];
  gateways: GatewayEntry[];
  robots: RobotEntry[];
  energy: EnergyEntry[];
  humans: HumanEntry[];
  wearables: WearableEntry[];
  continuityPairs: ContinuityPair[];
  twins: TwinEntry[];
  profile: SmartSpaceProfile;
  security: Table;
}

function str(v: unknown): string | null {
  if (typeof v === 'string') return v.trim() === '' ? null : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return null;
}
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(str).filter((s): s is string => s !== null) : []);
const tables = (v: unknown): Table[] => (Array.isArray(v) ? v.filter(isTable) : isTable(v) ? [v] : []);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);

function scoped(t: Table, facility: string | null): Scoped | null {
  const id = str(t['id']);
  if (id === null) return null;
  return {
    id,
    // An entry's own `facility` wins; otherwise the facility entry it is nested under (TOML attaches
    // `[[facilities.zones]]` to the facility written just above it), else unscoped.
    facility: str(t['facility']) ?? facility,
    type: str(t['type']) ?? str(t['device_type']),
    provider: str(t['provider']),
    capabilities: strings(t['capabilities']),
    raw: t,
  };
}

const byId = <T extends { id: string }>(list: T[]): T[] => {
  const seen = new Set<string>();
  return list.filter((x) => (seen.has(x.id) ? false : (seen.add(x.id), true))).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
};

const DEFAULT_MIN_SCORE = 85;
const WEIGHT_KEYS = ['gateway_availability', 'network_connectivity', 'device_health', 'battery_levels', 'calibration', 'security_status', 'critical_sensors', 'emergency_systems'] as const;

function profileOf(tree: Table): SmartSpaceProfile {
  const readiness = isTable(tree['readiness']) ? tree['readiness'] : {};
  const profiles = isTable(readiness['profiles']) ? readiness['profiles'] : {};
  const smart = isTable(profiles['smart_space']) ? profiles['smart_space'] : null;
  const min = smart && typeof smart['min_score'] === 'number' ? smart['min_score'] : null;
  let weights: Record<string, number> | null = null;
  if (smart) {
    const w = isTable(smart['weights']) ? smart['weights'] : {};
    weights = {};
    for (const k of WEIGHT_KEYS) weights[k] = typeof w[k] === 'number' ? Math.round((w[k] as number) * 100) : 0;
  }
  const seg = (name: string) => (smart && isTable(smart[name]) ? strings((smart[name] as Table)['required_devices']) : []);
  const redundancy = smart && isTable(smart['redundancy']) ? smart['redundancy'] : {};
  const rootMin = typeof readiness['min_score'] === 'number' ? (readiness['min_score'] as number) : null;
  return {
    name: min !== null ? 'smart_space' : 'default',
    minScore: min ?? rootMin ?? DEFAULT_MIN_SCORE,
    weights,
    requiredDevices: { residential: seg('residential'), commercial: seg('commercial') },
    gatewayFailoverRequired: redundancy['gateway_failover_required'] === true,
  };
}

/** The smart-space model of a resolved configuration. */
export function spacesModel(config: ResolvedConfig): SpacesModel {
  const tree = config.tree;
  const facilities: FacilityEntry[] = [];
  const zones: ZoneEntry[] = [];
  const zoneDevices: ZoneDevice[] = [];
  const gateways: GatewayEntry[] = [];
  const robots: RobotEntry[] = [];
  const energy: EnergyEntry[] = [];
  const humans: HumanEntry[] = [];
  const wearables: WearableEntry[] = [];

  const gather = (container: Table, facility: string | null) => {
    for (const z of tables(container['zones'])) {
      const s = scoped(z, facility);
      if (!s) continue;
      zones.push({ ...s, name: str(z['name']), parent: str(z['parent']), health_zone: z['health_zone'] === true });
      for (const d of tables(z['devices'])) {
        const ds = scoped(d, s.facility);
        if (ds) zoneDevices.push({ ...ds, zone: str(d['zone']) ?? s.id, battery_ok: bool(d['battery_ok']) });
      }
    }
    for (const d of tables(container['devices'])) {
      const ds = scoped(d, facility);
      if (ds) zoneDevices.push({ ...ds, zone: str(d['zone']), battery_ok: bool(d['battery_ok']) });
    }
    for (const g of tables(container['gateways'])) {
      const s = scoped(g, facility);
      if (s) gateways.push({ ...s, role: str(g['role']) ?? 'primary', failover_from: str(g['failover_from']) });
    }
    for (const r of tables(container['robots'])) {
      const s = scoped(r, facility);
      if (s) robots.push(s);
    }
    for (const e of tables(container['energy_systems'])) {
      const s = scoped(e, facility);
      if (s) energy.push(s);
    }
    for (const h of tables(container['humans'])) {
      const id = str(h['id']);
      if (id) humans.push({ id, facility: str(h['facility']) ?? facility, role: str(h['role']), display_name: str(h['display_name']), trust_level: str(h['trust_level']), health_opt_in: h['health_opt_in'] === true });
    }
    for (const w of tables(container['wearables'])) {
      const s = scoped(w, facility);
      if (s) wearables.push({ ...s, human_id: str(w['human_id']) });
    }
  };

  const raw = tree['facilities'];
  if (Array.isArray(raw)) {
    for (const f of raw.filter(isTable)) {
      const id = str(f['id']);
      if (id === null) continue;
      const kind = str(f['type']) ?? str(f['entity_kind']);
      facilities.push({ id, name: str(f['name']), facility_type: str(f['facility_type']) ?? kind, compliance_profile: str(f['compliance_profile']), location: f['location'] ?? null, kind, raw: f });
      gather(f, id);
    }
  } else if (isTable(raw)) {
    // A `[facilities]` table: its nested arrays are unscoped unless they name a facility.
    gather(raw, null);
  }

  // Pool devices placed in a zone by `[[devices]]` (`zone = "…"`, optional `facility = "…"`).
  for (const d of config.devices) {
    const zone = str(d.raw['zone']);
    if (zone === null) continue;
    const owner = str(d.raw['facility']) ?? zones.find((z) => z.id === zone)?.facility ?? null;
    zoneDevices.push({ id: d.id, facility: owner, type: d.device_type, provider: d.provider, capabilities: d.capabilities, raw: d.raw, zone, battery_ok: bool(d.raw['battery_ok']) });
  }

  const continuityPairs = tables(tree['continuity_pairs']).map((p) => ({ primary: str(p['primary']), backup: str(p['backup']), on_failure: str(p['on_failure']), missions: strings(p['missions']) }));
  const twins = tables(tree['twins']).map((t) => ({ id: str(t['id']), entity_id: str(t['entity_id']), entity_type: str(t['entity_type']), mirror: strings(t['mirror']), replay: t['replay'] ?? null }));
  return {
    facilities: byId(facilities),
    zones: byId(zones),
    zoneDevices: byId(zoneDevices),
    gateways: byId(gateways),
    robots: byId(robots),
    energy: byId(energy),
    humans: byId(humans),
    wearables: byId(wearables),
    continuityPairs,
    twins,
    profile: profileOf(tree),
    security: isTable(tree['security']) ? tree['security'] : {},
  };
}

/** Membership (docs/spaces.md): an entry belongs to F when its facility is F or it names none. */
export const belongsTo = (entry: { facility: string | null }, facilityId: string): boolean => entry.facility === null || entry.facility === facilityId;

/** E-stop devices are recognised by type (`EStop`, `e-stop`, `emergency_stop`…). */
export const ESTOP_TYPE = /e-?stop|emergency[_ -]?stop/i;

/** Every device whose telemetry a smart-space route reads: the facilities' devices and configured e-stops. */
export function spaceDeviceIds(config: ResolvedConfig): Set<string> {
  const m = spacesModel(config);
  const ids = new Set<string>();
  for (const list of [m.zoneDevices, m.gateways, m.robots, m.energy]) for (const e of list) ids.add(e.id);
  for (const d of config.devices) if (ESTOP_TYPE.test(d.device_type)) ids.add(d.id);
  return ids;
}
