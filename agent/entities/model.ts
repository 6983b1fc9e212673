import { entityTypeJson, type HealthStatus, type LifecycleState, type ReadinessStatus, type RelationshipKind, type TrustStatus } from './kinds.js';

/** Where an entity (or a fact about it) came from. */
export type EntitySource = 'config' | 'device_pool' | 'program' | 'overlay';

export interface EntityLocation {
  name?: string;
  coordinates?: Record<string, number>;
  zone_id?: string;
}

export interface EntitySecurity {
  identity?: string;
  certificates: string[];
  encryption?: string;
  permissions: string[];
}

/**
 * One entity as the registry holds it while a view is built. Statuses set here are *stated* (by the
 * configuration, the device pool or an operator); the graph computes the effective ones.
 */
export interface Entity {
  id: string;
  kind: string;
  custom: boolean;
  name?: string;
  display_name?: string;
  description?: string;
  parent_id?: string;
  labels: string[];
  tags: string[];
  version?: string;
  manufacturer?: string;
  model?: string;
  serial_number?: string;
  hardware_revision?: string;
  firmware_version?: string;
  software_version?: string;
  provider?: string;
  package?: string;
  location?: EntityLocation;
  capabilities: string[];
  health_status?: HealthStatus;
  readiness_status?: ReadinessStatus;
  trust_status?: TrustStatus;
  lifecycle_state?: LifecycleState;
  security?: EntitySecurity;
  owner?: string;
  metadata: Record<string, string>;
  audit?: { created_at?: string; updated_at?: string; source?: string };
  governance?: Record<string, unknown> | null;
  autonomy?: Record<string, unknown> | null;
  /** Every source that contributed to this entity, in merge order. */
  sources: EntitySource[];
}

export interface Relationship {
  from_id: string;
  to_id: string;
  kind: RelationshipKind;
  label?: string;
}

export const relationshipKey = (r: Pick<Relationship, 'from_id' | 'to_id' | 'kind'>) => `${r.from_id}\u0000${r.kind}\u0000${r.to_id}`;

/** Effective statuses of one entity, computed over the graph. */
export interface EntityStatus {
  health_status: HealthStatus;
  readiness_status: ReadinessStatus;
  trust_status: TrustStatus;
  lifecycle_state: LifecycleState;
}

export function newEntity(id: string, kind: string, custom: boolean, source: EntitySource): Entity {
  return { id, kind, custom, labels: [], tags: [], capabilities: [], metadata: {}, sources: [source] };
}

const nonEmpty = <T>(xs: T[] | undefined): T[] | undefined => (xs && xs.length > 0 ? xs : undefined);

function compact<T extends Record<string, unknown>>(o: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    out[k] = v;
  }
  return out as Partial<T>;
}

/** The full record of GET /v1/entities/{id} (empty arrays and maps omitted, statuses always present). */
export function toRecord(e: Entity, status: EntityStatus, childrenIds: string[]) {
  return compact({
    id: e.id,
    name: e.name,
    display_name: e.display_name,
    description: e.description,
    entity_type: entityTypeJson(e.kind, e.custom),
    parent_id: e.parent_id,
    children_ids: nonEmpty(childrenIds),
    labels: nonEmpty(e.labels),
    tags: nonEmpty(e.tags),
    version: e.version,
    manufacturer: e.manufacturer,
    model: e.model,
    serial_number: e.serial_number,
    hardware_revision: e.hardware_revision,
    firmware_version: e.firmware_version,
    software_version: e.software_version,
    provider: e.provider,
    package: e.package,
    location: e.location ? compact({ ...e.location }) : undefined,
    capabilities: nonEmpty(e.capabilities),
    health_status: status.health_status,
    readiness_status: status.readiness_status,
    trust_status: status.trust_status,
    security: e.security ? compact({ ...e.security }) : undefined,
    lifecycle_state: status.lifecycle_state,
    owner: e.owner,
    metadata: e.metadata,
    audit: e.audit ? compact({ ...e.audit }) : undefined,
    governance: e.governance ?? undefined,
    autonomy: e.autonomy ?? undefined,
  });
}

/** The inventory summary of GET /v1/entities. */
export function toSummary(e: Entity, status: EntityStatus) {
  return {
    id: e.id,
    kind: e.kind,
    entity_type: entityTypeJson(e.kind, e.custom),
    display_name: e.display_name ?? e.name ?? e.id,
    name: e.name ?? e.id,
    health_status: status.health_status,
    readiness_status: status.readiness_status,
    trust_status: status.trust_status,
    lifecycle_state: status.lifecycle_state,
    parent_id: e.parent_id ?? null,
    capabilities: e.capabilities,
    tags: e.tags,
    governance: e.governance ?? null,
    autonomy: e.autonomy ?? null,
  };
}

export type EntityRecordJson = ReturnType<typeof toRecord>;
export type EntitySummaryJson = ReturnType<typeof toSummary>;
