/**
 * Entities derived from the live sources: the resolved configuration, the device pool and the loaded
 * program. Each function reads one source and returns entities and relationships; the graph merges
 * them (and the operator's overlay) by id.
 */
import type { DeviceRecord } from '../devices/device-registry.js';
import { failoverOrder, redundancyGroups } from '../fleet/failover.js';
import { isTable, type Table } from '../project/deep-merge.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { declarationFromTable, entityFromDeclaration, locationOf, relationshipFromTable, stringMap } from './declaration.js';
import { isBuiltinKind, kindOfDeviceType, type BuiltinKind, type LifecycleState, type RelationshipKind } from './kinds.js';
import { newEntity, type Entity, type Relationship } from './model.js';
import { missionStatuses } from './mission-state.js';
import type { ProgramFacts } from './program-facts.js';

export interface Derived {
  entities: Entity[];
  relationships: Relationship[];
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : undefined);
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.map(text).filter((x): x is string => x !== undefined) : typeof v === 'string' && v !== '' ? [v] : []);
const tables = (v: unknown): Table[] => (Array.isArray(v) ? v.filter(isTable) : []);

/**
 * The organisation's id: `org:` and the project name as written (`org:Yard Inspection`), so a
 * `[[relationships]]` table can name it the way the operator named the project.
 */
export const orgId = (projectName: string) => `org:${projectName.trim()}`;
/** A provider is known by its own name (`[providers.ublox]` → `ublox`), as `[[relationships]]` name it. */
export const providerId = (name: string) => name;
export const packageId = (name: string) => `package:${name}`;
export const missionId = (robot: string, mission: string | null) => `mission:${robot}:${mission ?? 'mission'}`;
export const planId = (name: string) => `mission:${name}`;

function kindOr(v: unknown, fallback: BuiltinKind): BuiltinKind {
  const t = text(v)?.toLowerCase();
  return t !== undefined && isBuiltinKind(t) ? t : fallback;
}

class Collector implements Derived {
  entities: Entity[] = [];
  relationships: Relationship[] = [];
  add(e: Entity): Entity {
    this.entities.push(e);
    return e;
  }
  relate(from_id: string, kind: RelationshipKind, to_id: string, label?: string): void {
    if (from_id === to_id) return;
    this.relationships.push({ from_id, to_id, kind, ...(label ? { label } : {}) });
  }
}

// ---------------------------------------------------------------------------------------------
// Configuration

/** Copies the named keys of a configuration table that hold text into the entity's metadata. */
function copyMetadata(e: Entity, t: Table, keys: readonly string[]): void {
  for (const k of keys) if (text(t[k])) e.metadata[k] = text(t[k])!;
}

/**
 * A zone (nested in a facility or from `[[zones]]`) and its hazards. The zone's `type` names a
 * built-in kind or, more often, what kind of zone it is (`zone_type`: "operational", "charging").
 */
function addZone(c: Collector, id: string, z: Table, parentId: string | undefined, placeName: string | undefined): void {
  const zone = c.add(newEntity(id, kindOr(z['kind'] ?? z['type'], 'zone'), false, 'config'));
  if (text(z['name'])) zone.name = text(z['name'])!;
  if (text(z['description'])) zone.description = text(z['description'])!;
  zone.lifecycle_state = 'active';
  zone.capabilities = texts(z['capabilities']);
  const type = text(z['zone_type'] ?? z['type']);
  if (type && !isBuiltinKind(type.toLowerCase())) zone.metadata['zone_type'] = type;
  if (typeof z['radius_m'] === 'number') zone.metadata['radius_m'] = String(z['radius_m']);
  const centre = locationOf(isTable(z['center']) ? { coordinates: z['center'] } : undefined);
  zone.location = { zone_id: id, ...(placeName ? { name: placeName } : {}), ...(centre?.coordinates ? { coordinates: centre.coordinates } : {}) };
  if (parentId) {
    zone.parent_id = parentId;
    c.relate(parentId, 'contains', id);
  }
  for (const [i, h] of tables(z['hazards']).entries()) {
    const hid = text(h['id']) ?? `${id}:hazard-${i + 1}`;
    const hazard = c.add(newEntity(hid, 'hazard', false, 'config'));
    if (text(h['name'])) hazard.name = text(h['name'])!;
    if (text(h['severity'])) hazard.metadata['severity'] = text(h['severity'])!;
    hazard.parent_id = id;
    hazard.lifecycle_state = 'active';
    c.relate(hid, 'located_in', id);
  }
}

/** Organisation, fleet, robots and their compute, providers, packages, facilities and zones, people, declared entities. */
export function fromConfig(cfg: ResolvedConfig): Derived {
  const c = new Collector();
  const tree = cfg.tree;
  const org = cfg.projectName?.trim() ? orgId(cfg.projectName) : null;
  if (org) {
    const organisation = c.add(newEntity(org, 'organization', false, 'config'));
    organisation.name = cfg.projectName!;
    if (cfg.projectVersion) organisation.version = cfg.projectVersion;
    organisation.lifecycle_state = 'active';
  }

  // Fleet and robots.
  const fleet = isTable(tree['fleet']) ? tree['fleet'] : null;
  const fleetId = cfg.fleetId;
  if (fleetId) {
    const f = c.add(newEntity(fleetId, 'fleet', false, 'config'));
    if (text(fleet?.['name'])) f.name = text(fleet?.['name'])!;
    f.lifecycle_state = 'active';
    if (org) {
      f.parent_id = org;
      c.relate(org, 'owns', fleetId);
    }
  }
  const robotTables = tables(fleet?.['robots']);
  for (const robot of cfg.robots) {
    if (robot.id === '') continue;
    const raw = robotTables.find((t) => text(t['id']) === robot.id) ?? {};
    const r = c.add(newEntity(robot.id, kindOr(raw['kind'], 'robot'), false, 'config'));
    if (text(raw['name'])) r.name = text(raw['name'])!;
    if (robot.model) r.model = robot.model;
    if (text(raw['manufacturer'])) r.manufacturer = text(raw['manufacturer'])!;
    if (robot.hardware_profile) r.metadata['hardware_profile'] = robot.hardware_profile;
    r.capabilities = texts(raw['capabilities']);
    r.labels = texts(raw['labels']);
    r.tags = texts(raw['tags']);
    r.lifecycle_state = 'active';
    const loc = locationOf(raw['location']);
    if (loc) r.location = loc;
    if (isTable(raw['autonomy'])) r.autonomy = { ...raw['autonomy'] };
    if (isTable(raw['governance'])) r.governance = { ...raw['governance'] };
    if (fleetId) {
      r.parent_id = fleetId;
      c.relate(fleetId, 'contains', robot.id);
    }
    const place = text(raw['zone']) ?? text(raw['facility']) ?? loc?.zone_id;
    if (place) c.relate(robot.id, 'located_in', place);
    if (robot.compute?.id) {
      const cpu = c.add(newEntity(robot.compute.id, 'compute', false, 'config'));
      cpu.parent_id = robot.id;
      if (robot.compute.serial) cpu.serial_number = robot.compute.serial;
      if (robot.compute.type) cpu.metadata['compute_type'] = robot.compute.type;
      cpu.lifecycle_state = 'active';
      c.relate(robot.id, 'contains', robot.compute.id);
      for (const d of robot.devices) if (d.id) c.relate(d.id, 'connected_to', robot.compute.id);
    }
  }

  // Providers and packages.
  const deps = isTable(tree['dependencies']) ? tree['dependencies'] : {};
  for (const name of cfg.packages) {
    const p = c.add(newEntity(packageId(name), 'package', false, 'config'));
    p.name = name;
    const spec = deps[name];
    const version = text(spec) ?? (isTable(spec) ? text(spec['version']) : undefined);
    if (version) p.version = version;
    p.lifecycle_state = 'active';
  }
  const providers = isTable(tree['providers']) ? tree['providers'] : {};
  for (const name of cfg.providers) {
    const t = isTable(providers[name]) ? providers[name] : {};
    const p = c.add(newEntity(providerId(name), 'provider', false, 'config'));
    p.name = name;
    p.lifecycle_state = 'active';
    const pkg = text(t['package']);
    if (pkg) {
      p.package = pkg;
      c.relate(providerId(name), 'depends_on', packageId(pkg));
    }
    p.metadata = stringMap(Object.fromEntries(Object.entries(t).filter(([k]) => k !== 'package')));
  }

  // Facilities with their zones and hazards: `[facilities.<id>]` tables or `[[facilities]]`; then the
  // top-level `[[buildings]]` and `[[zones]]` arrays, which name their place by `facility_id` /
  // `building_id` (docs/entities.md § Where entities come from).
  const facilities = tree['facilities'];
  const facilityTables: Array<[string, Table]> = isTable(facilities)
    ? Object.entries(facilities).filter((kv): kv is [string, Table] => isTable(kv[1])).map(([k, t]) => [text(t['id']) ?? k, t])
    : tables(facilities).flatMap((t) => (text(t['id']) ? [[text(t['id'])!, t] as [string, Table]] : []));
  for (const [id, t] of facilityTables) {
    const f = c.add(newEntity(id, kindOr(t['kind'] ?? t['type'], 'facility'), false, 'config'));
    if (text(t['name'])) f.name = text(t['name'])!;
    const loc = locationOf(t['location'] ?? t['address']);
    if (loc) f.location = loc;
    f.lifecycle_state = 'active';
    f.capabilities = texts(t['capabilities']);
    copyMetadata(f, t, ['facility_type', 'compliance_profile']);
    if (org) c.relate(org, 'owns', id);
    const zones = isTable(t['zones'])
      ? Object.entries(t['zones']).filter((kv): kv is [string, Table] => isTable(kv[1])).map(([k, z]) => [text(z['id']) ?? `${id}:${k}`, z] as [string, Table])
      : tables(t['zones']).map((z, i) => [text(z['id']) ?? `${id}:zone-${i + 1}`, z] as [string, Table]);
    for (const [zid, z] of zones) addZone(c, zid, z, id, f.location?.name);
  }
  const places = new Map(c.entities.map((e) => [e.id, e]));
  for (const t of tables(tree['buildings'])) {
    const id = text(t['id']);
    if (!id) continue;
    const b = c.add(newEntity(id, kindOr(t['kind'], 'building'), false, 'config'));
    places.set(id, b);
    if (text(t['name'])) b.name = text(t['name'])!;
    const loc = locationOf(t['location'] ?? t['address']);
    if (loc) b.location = loc;
    b.lifecycle_state = 'active';
    b.capabilities = texts(t['capabilities']);
    copyMetadata(b, t, ['building_type', 'compliance_profile']);
    if (!b.metadata['building_type'] && text(t['type'])) b.metadata['building_type'] = text(t['type'])!;
    const facility = text(t['facility_id'] ?? t['facility']);
    if (facility) {
      b.parent_id = facility;
      c.relate(facility, 'contains', id);
    } else if (org) c.relate(org, 'owns', id);
  }
  for (const z of tables(tree['zones'])) {
    const id = text(z['id']);
    if (!id) continue;
    const parent = text(z['building_id'] ?? z['building']) ?? text(z['facility_id'] ?? z['facility']);
    addZone(c, id, z, parent, parent ? places.get(parent)?.location?.name : undefined);
  }

  // Instances of declared kinds: `[[entity_kinds]]` {id, kind, display_name, capabilities, package, parent_id, …}.
  for (const t of tables(tree['entity_kinds'])) {
    const d = declarationFromTable(t);
    const e = d ? entityFromDeclaration(d, 'config') : null;
    if (!e) continue;
    e.lifecycle_state ??= 'active';
    copyMetadata(e, t, ['compliance_profile']);
    c.add(e);
    if (e.parent_id) c.relate(e.parent_id, 'contains', e.id);
    if (e.package && cfg.packages.includes(e.package)) c.relate(e.id, 'depends_on', packageId(e.package));
  }

  // People.
  for (const h of cfg.humans) {
    if (h.id === '') continue;
    const e = c.add(newEntity(h.id, 'human', false, 'config'));
    if (h.name) e.name = h.name;
    if (h.role) e.metadata['role'] = h.role;
    if (h.email) e.metadata['email'] = h.email;
    e.lifecycle_state = 'active';
    const team = text(h.raw['team']);
    if (team) {
      const tid = `team:${team}`;
      if (!c.entities.some((x) => x.id === tid)) {
        const t = c.add(newEntity(tid, 'team', false, 'config'));
        t.name = team;
        t.lifecycle_state = 'active';
      }
      c.relate(h.id, 'belongs_to', tid);
    }
    for (const robot of texts(h.raw['robots'] ?? h.raw['supervises'])) c.relate(h.id, 'monitors', robot);
  }

  // Entities and relationships written straight into the configuration (or by a sync).
  const declared = fromDeclarations(tree['entities'], tree['relationships']);
  c.entities.push(...declared.entities);
  c.relationships.push(...declared.relationships);
  return c;
}

/** `[[entities]]` and `[[relationships]]` tables (a configuration layer, or the fragment a sync writes). */
export function fromDeclarations(entities: unknown, relationships: unknown): Derived {
  const out: Derived = { entities: [], relationships: [] };
  for (const t of tables(entities)) {
    const d = declarationFromTable(t);
    const e = d ? entityFromDeclaration(d, 'config') : null;
    if (e) out.entities.push(e);
  }
  for (const t of tables(relationships)) {
    const r = relationshipFromTable(t);
    if (r) out.relationships.push(r);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Device pool

function providerPackage(cfg: ResolvedConfig | null, provider: string | null): string | undefined {
  const providers = cfg?.tree['providers'];
  const entry = provider && isTable(providers) ? providers[provider] : undefined;
  return isTable(entry) ? text(entry['package']) : undefined;
}

function securityOf(cfg: ResolvedConfig | null, id: string): Table | null {
  const security = cfg?.tree['security'];
  const devices = isTable(security) ? security['devices'] : undefined;
  const entry = isTable(devices) ? devices[id] : undefined;
  return isTable(entry) ? entry : null;
}

const DEVICE_LIFECYCLE: Record<string, LifecycleState> = {
  discovered: 'discovered',
  quarantined: 'suspended',
  verified: 'verified',
  assigned: 'assigned',
  active: 'active',
  healthy: 'active',
  degraded: 'degraded',
  offline: 'offline',
  failed: 'offline',
  retired: 'retired',
};

/** Every device of the pool (configured and discovered), bound to its robot, provider and failover group. */
export function fromDevices(devices: readonly DeviceRecord[], cfg: ResolvedConfig | null): Derived {
  const c = new Collector();
  const raws = new Map((cfg?.devices ?? []).map((d) => [d.id, d.raw]));
  for (const d of devices) {
    const raw = raws.get(d.id) ?? {};
    const e = c.add(newEntity(d.id, kindOr(raw['kind'], kindOfDeviceType(d.device_type)), false, 'device_pool'));
    if (d.logical_name) e.name = d.logical_name;
    if (text(raw['name'])) e.display_name = text(raw['name'])!;
    if (d.serial) e.serial_number = d.serial;
    if (d.firmware_version) e.firmware_version = d.firmware_version;
    if (d.hardware_revision) e.hardware_revision = d.hardware_revision;
    if (d.provider) e.provider = d.provider;
    const pkg = text(raw['package']) ?? providerPackage(cfg, d.provider);
    if (pkg) e.package = pkg;
    if (text(raw['manufacturer'])) e.manufacturer = text(raw['manufacturer'])!;
    if (text(raw['model'])) e.model = text(raw['model'])!;
    e.capabilities = [...d.capabilities];
    e.labels = [...new Set([d.device_type, ...texts(raw['labels'])])];
    e.tags = texts(raw['tags']);
    e.lifecycle_state = DEVICE_LIFECYCLE[d.lifecycle_state] ?? 'unknown';
    const meta: Record<string, string | number | null> = {
      device_type: d.device_type,
      device_lifecycle: d.lifecycle_state,
      device_health: d.health_status,
      protocol: d.protocol,
      transport: d.transport,
      port: d.port,
      bus: d.bus,
      can_id: d.can_id,
      mount: d.mount,
      ip_address: d.ip_address,
      endpoint_url: d.endpoint_url,
      trust_level: d.trust_level,
      trusted_by: d.trusted_by,
      quarantine_reason: d.quarantine_reason,
      redundant_group: d.redundant_group,
      source: d.source,
    };
    for (const [k, v] of Object.entries(meta)) if (v !== null && v !== undefined && v !== '') e.metadata[k] = String(v);
    if (d.security_identity || d.certificate_fingerprint) {
      e.security = {
        ...(d.security_identity ? { identity: d.security_identity } : {}),
        certificates: d.certificate_fingerprint ? [d.certificate_fingerprint] : [],
        permissions: [],
      };
    }
    // `[security.devices.<id>]`: identity and an operator's verdict kept beside the device table.
    const sec = securityOf(cfg, d.id);
    if (sec) {
      const identity = text(sec['identity']);
      if (identity) e.security = { certificates: [], permissions: [], ...e.security, identity };
      if (sec['trusted'] === true && !e.metadata['trust_level']) e.metadata['trust_level'] = 'trusted';
      if (sec['trusted'] === false) e.metadata['trust_level'] = 'untrusted';
      const encryption = text(sec['encryption']);
      if (encryption && e.security) e.security.encryption = encryption;
    }
    const loc = locationOf(raw['location']);
    if (loc) e.location = loc;
    const robot = d.assigned_robot ?? d.robot_id;
    if (robot) {
      e.parent_id = robot;
      c.relate(d.id, 'assigned_to', robot);
    }
    const place = text(raw['zone']) ?? loc?.zone_id;
    if (place) c.relate(d.id, 'located_in', place);
    if (d.provider) c.relate(d.id, 'depends_on', providerId(d.provider));
    e.audit = {
      ...(d.discovered_at_ms ? { created_at: new Date(d.discovered_at_ms).toISOString() } : {}),
      updated_at: new Date(d.updated_at_ms).toISOString(),
      source: d.source === 'config' ? 'configuration' : 'discovery',
    };
  }
  // A failover group: every lower-priority device backs up the one just ahead of it (the failover
  // order of `/v1/failover/chains`).
  for (const members of redundancyGroups(devices).values()) {
    const ordered = failoverOrder(members);
    for (let i = 1; i < ordered.length; i++) c.relate(ordered[i]!.id, 'backs_up', ordered[i - 1]!.id);
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Program

/** Robots, their sensors and actuators, and missions (linked by `participates_in`). */
export function fromProgram(facts: ProgramFacts): Derived {
  const c = new Collector();
  for (const robot of facts.robots) {
    if (!robot.name) continue;
    const r = c.add(newEntity(robot.name, 'robot', false, 'program'));
    r.metadata['program_file'] = facts.file;
    r.capabilities = [...new Set([...robot.sensors.map((s) => s.type), ...robot.actuators.map((a) => a.type)].filter(Boolean))].sort();
    r.lifecycle_state = 'provisioned';
    for (const [list, fallback] of [[robot.sensors, 'sensor'], [robot.actuators, 'actuator']] as const) {
      for (const part of list) {
        const id = `${robot.name}:${part.name}`;
        const byType = kindOfDeviceType(part.type);
        const e = c.add(newEntity(id, fallback === 'sensor' ? (byType === 'device' || byType === 'actuator' ? 'sensor' : byType) : 'actuator', false, 'program'));
        e.name = part.name;
        e.parent_id = robot.name;
        e.capabilities = part.type ? [part.type] : [];
        e.labels = part.type ? [part.type] : [];
        e.metadata['declared_in'] = facts.file;
        // A sensor's driver clause names its part (docs/program-language.md §4.1 "Forms added in issue 18").
        if ('vendor' in part && part.vendor) e.metadata['vendor'] = part.vendor;
        if ('model' in part && part.model) e.metadata['model'] = part.model;
        e.lifecycle_state = 'provisioned';
        c.relate(robot.name, 'contains', id);
      }
    }
    for (const m of robot.missions) {
      const id = missionId(robot.name, m.name);
      const e = c.add(newEntity(id, 'mission', false, 'program'));
      e.name = m.name ?? 'mission';
      e.metadata['robot'] = robot.name;
      e.metadata['declared_in'] = facts.file;
      e.lifecycle_state = 'provisioned';
      c.relate(robot.name, 'participates_in', id);
    }
  }
  for (const plan of facts.missionPlans) {
    const e = c.add(newEntity(planId(plan.name), 'mission', false, 'program'));
    e.name = plan.name;
    e.metadata['declared_in'] = facts.file;
    e.metadata['mission_plan'] = 'true';
    e.lifecycle_state = 'provisioned';
  }
  return c;
}

// ---------------------------------------------------------------------------------------------
// Mission approval seeds

export interface MissionApprovalSeed {
  id: string;
  mission_id: string;
  requested_by: string | null;
  requires_capability: string | null;
  status: 'pending' | 'approved' | 'rejected';
  note: string | null;
}

/** `[[mission_approvals]]` of the resolved configuration (docs/operator.md § Approvals); entries without `id` or `mission_id` are skipped. */
export function missionApprovalSeeds(cfg: ResolvedConfig): MissionApprovalSeed[] {
  const seeds: MissionApprovalSeed[] = [];
  for (const t of tables(cfg.tree['mission_approvals'])) {
    const id = text(t['id']);
    const mission = text(t['mission_id']);
    if (!id || !mission) continue;
    const status = text(t['status']);
    seeds.push({
      id,
      mission_id: mission,
      requested_by: text(t['requested_by']) ?? null,
      requires_capability: text(t['requires_capability']) ?? null,
      status: status === 'approved' || status === 'rejected' ? status : 'pending',
      note: text(t['note']) ?? null,
    });
  }
  return seeds;
}

/** One mission entity `mission:<mission_id>` per approval seed: awaiting approval unless the seed says approved. */
export function fromMissionSeeds(cfg: ResolvedConfig): Derived {
  const c = new Collector();
  for (const seed of missionApprovalSeeds(cfg)) {
    const id = planId(seed.mission_id);
    if (c.entities.some((e) => e.id === id)) continue;
    const e = c.add(newEntity(id, 'mission', false, 'config'));
    e.name = seed.mission_id;
    const state = seed.status === 'approved' ? 'Pending' : seed.status === 'rejected' ? 'cancelled' : 'PendingApproval';
    e.metadata['mission_name'] = seed.mission_id;
    e.metadata['mission_state'] = state;
    e.metadata['approval_id'] = seed.id;
    e.metadata['approval_status'] = seed.status;
    Object.assign(e, missionStatuses(state));
    e.capabilities = ['cancel', 'pause', 'resume', ...(seed.requires_capability ? [seed.requires_capability] : []), ...(seed.status === 'pending' ? ['awaiting_approval'] : [])];
    e.tags = ['mission'];
  }
  return c;
}
