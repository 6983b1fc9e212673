import { isTable } from '../project/deep-merge.js';
import {
  HEALTH_STATUSES,
  isRelationshipKind,
  LIFECYCLE_STATES,
  parseKind,
  READINESS_STATUSES,
  TRUST_STATUSES,
  type HealthStatus,
  type LifecycleState,
  type ReadinessStatus,
  type TrustStatus,
} from './kinds.js';
import { newEntity, type Entity, type EntityLocation, type EntitySecurity, type EntitySource, type Relationship } from './model.js';

/**
 * An entity as an operator states it: the body of POST /v1/entities/register, an entry of the
 * persisted overlay, and a `[[entities]]` table of a configuration fragment all share this shape.
 */
export interface EntityDeclaration {
  id: string;
  /** Built-in kind name, or `{custom: name}`. */
  entity_type: string | { custom: string };
  name?: string | undefined;
  display_name?: string | undefined;
  description?: string | undefined;
  parent_id?: string | undefined;
  labels?: string[] | undefined;
  tags?: string[] | undefined;
  capabilities?: string[] | undefined;
  metadata?: Record<string, string> | undefined;
  version?: string | undefined;
  manufacturer?: string | undefined;
  model?: string | undefined;
  serial_number?: string | undefined;
  hardware_revision?: string | undefined;
  firmware_version?: string | undefined;
  software_version?: string | undefined;
  provider?: string | undefined;
  package?: string | undefined;
  owner?: string | undefined;
  location?: EntityLocation | undefined;
  security?: Partial<EntitySecurity> | undefined;
  health_status?: HealthStatus | undefined;
  readiness_status?: ReadinessStatus | undefined;
  trust_status?: TrustStatus | undefined;
  lifecycle_state?: LifecycleState | undefined;
  governance?: Record<string, unknown> | undefined;
  autonomy?: Record<string, unknown> | undefined;
}

/** Free-text fields an entity declaration may state (also the first of the fields a merge carries over). */
export const TEXT_FIELDS = [
  'name',
  'display_name',
  'description',
  'parent_id',
  'version',
  'manufacturer',
  'model',
  'serial_number',
  'hardware_revision',
  'firmware_version',
  'software_version',
  'provider',
  'package',
  'owner',
] as const;

const uniq = (xs: readonly string[]) => [...new Set(xs)];

/** Builds the entity a declaration describes. */
export function entityFromDeclaration(d: EntityDeclaration, source: EntitySource): Entity | null {
  const kind = parseKind(d.entity_type);
  if (!kind || d.id.trim() === '') return null;
  const e = newEntity(d.id, kind.kind, kind.custom, source);
  for (const f of TEXT_FIELDS) if (typeof d[f] === 'string' && d[f] !== '') e[f] = d[f];
  e.labels = uniq(d.labels ?? []);
  e.tags = uniq(d.tags ?? []).sort();
  e.capabilities = uniq(d.capabilities ?? []).sort();
  e.metadata = { ...(d.metadata ?? {}) };
  if (d.location && Object.keys(d.location).length > 0) e.location = { ...d.location };
  if (d.security) e.security = { certificates: [...(d.security.certificates ?? [])], permissions: [...(d.security.permissions ?? [])], ...(d.security.identity ? { identity: d.security.identity } : {}), ...(d.security.encryption ? { encryption: d.security.encryption } : {}) };
  if (d.health_status) e.health_status = d.health_status;
  if (d.readiness_status) e.readiness_status = d.readiness_status;
  if (d.trust_status) e.trust_status = d.trust_status;
  if (d.lifecycle_state) e.lifecycle_state = d.lifecycle_state;
  if (d.governance) e.governance = d.governance;
  if (d.autonomy) e.autonomy = d.autonomy;
  return e;
}

// ---------------------------------------------------------------------------------------------
// Lenient reading of configuration tables (a fragment written by hand may hold anything)

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : undefined);
const texts = (v: unknown): string[] => (Array.isArray(v) ? v.map(text).filter((x): x is string => x !== undefined) : typeof v === 'string' && v !== '' ? [v] : []);
const oneOf = <T extends string>(values: readonly T[], v: unknown): T | undefined => {
  const t = text(v)?.toLowerCase();
  return t !== undefined && (values as readonly string[]).includes(t) ? (t as T) : undefined;
};

export function stringMap(v: unknown): Record<string, string> {
  if (!isTable(v)) return {};
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v)) {
    const t = typeof x === 'boolean' ? String(x) : text(x);
    if (t !== undefined) out[k] = t;
  }
  return out;
}

/** `"Bay 3"` → {name}; `{name, zone_id, lat, lon}` / `{coordinates:{…}}` → a location. */
export function locationOf(v: unknown): EntityLocation | undefined {
  if (typeof v === 'string' && v.trim() !== '') return { name: v };
  if (!isTable(v)) return undefined;
  const loc: EntityLocation = {};
  const name = text(v['name']);
  const zone = text(v['zone_id'] ?? v['zone']);
  if (name) loc.name = name;
  if (zone) loc.zone_id = zone;
  const coords: Record<string, number> = {};
  // `coordinates = {…}` keeps every numeric key; a flat table only the usual ones.
  const source = isTable(v['coordinates']) ? v['coordinates'] : v;
  const keys = isTable(v['coordinates']) ? Object.keys(source) : ['lat', 'lon', 'alt', 'x', 'y', 'z'];
  for (const k of keys) {
    const n = source[k];
    if (typeof n === 'number' && Number.isFinite(n)) coords[k] = n;
  }
  if (Object.keys(coords).length > 0) loc.coordinates = coords;
  return Object.keys(loc).length > 0 ? loc : undefined;
}

/** A `[[entities]]` table → a declaration, or null when it has no id or no usable kind. */
export function declarationFromTable(t: Record<string, unknown>): EntityDeclaration | null {
  const id = text(t['id']);
  const type = t['entity_type'] ?? t['kind'] ?? t['type'];
  const kind = parseKind(type);
  if (!id || !kind) return null;
  const d: EntityDeclaration = { id, entity_type: kind.custom ? { custom: kind.kind } : kind.kind };
  for (const f of TEXT_FIELDS) {
    const v = text(t[f]);
    if (v !== undefined) d[f] = v;
  }
  d.labels = texts(t['labels']);
  d.tags = texts(t['tags']);
  d.capabilities = texts(t['capabilities']);
  d.metadata = stringMap(t['metadata']);
  d.location = locationOf(t['location']);
  if (isTable(t['security'])) {
    const s = t['security'];
    d.security = { certificates: texts(s['certificates']), permissions: texts(s['permissions']), ...(text(s['identity']) ? { identity: text(s['identity'])! } : {}), ...(text(s['encryption']) ? { encryption: text(s['encryption'])! } : {}) };
  }
  d.health_status = oneOf(HEALTH_STATUSES, t['health_status']);
  d.readiness_status = oneOf(READINESS_STATUSES, t['readiness_status']);
  d.trust_status = oneOf(TRUST_STATUSES, t['trust_status']);
  d.lifecycle_state = oneOf(LIFECYCLE_STATES, t['lifecycle_state']);
  if (isTable(t['governance'])) d.governance = { ...t['governance'] };
  if (isTable(t['autonomy'])) d.autonomy = { ...t['autonomy'] };
  return d;
}

/** A `[[relationships]]` table → a relationship, or null when incomplete or of an unknown kind. */
export function relationshipFromTable(t: Record<string, unknown>): Relationship | null {
  const from = text(t['from_id'] ?? t['from']);
  const to = text(t['to_id'] ?? t['to']);
  const kind = text(t['kind'])?.toLowerCase();
  if (!from || !to || !kind || !isRelationshipKind(kind) || from === to) return null;
  const label = text(t['label']);
  return { from_id: from, to_id: to, kind, ...(label ? { label } : {}) };
}
