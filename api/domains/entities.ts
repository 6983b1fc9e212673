import * as z from 'zod';
import { defineSpec } from '../spec.js';
import { HEALTH_STATUSES, LIFECYCLE_STATES, READINESS_STATUSES, RELATIONSHIP_KINDS, TRUST_STATUSES } from '../vocabulary/entities.js';

/**
 * The entity registry (docs/entities.md): inventory, graph, traceability, structured query, the
 * operator's overlay (register, relate, tag, sync) and per-entity views. Fixed paths come before
 * `/v1/entities/{id}` so `graph` is never read as an id.
 */

// ---------------------------------------------------------------------------------------------
// Schemas

/** Ids travel in paths: no slash, no control characters, no surrounding blanks. */
const entityId = (name: string) =>
  z
    .string()
    .min(1, `missing ${name}`)
    .max(200)
    .regex(/^[^/\u0000-\u001f\u007f]+$/, 'ids cannot contain "/" or control characters')
    .refine((s) => s.trim() === s, 'ids cannot start or end with blanks');
const tag = z.lazy(() => z.string().min(1).max(64).regex(/^[^,\u0000-\u001f]+$/, 'tags cannot contain commas or control characters'));
const shortText = z.lazy(() => z.string().max(500));
const names = z.lazy(() => z.array(z.string().min(1).max(100)).max(200));

/** A status filter: one value or a comma-separated list, each one of the enumeration (any case). */
const statusFilter = (values: readonly string[]) =>
  z
    .string()
    .max(500)
    .refine((v) => v.split(',').map((x) => x.trim()).filter((x) => x !== '').every((x) => values.includes(x.toLowerCase())), `expected one of ${values.join(', ')}`);

const inventoryQuery = z.lazy(() => z.object({
  kind: z.string().max(500).optional(),
  entity_type: z.string().max(500).optional(),
  health: statusFilter(HEALTH_STATUSES).optional(),
  health_status: statusFilter(HEALTH_STATUSES).optional(),
  readiness: statusFilter(READINESS_STATUSES).optional(),
  readiness_status: statusFilter(READINESS_STATUSES).optional(),
  trust: statusFilter(TRUST_STATUSES).optional(),
  trust_status: statusFilter(TRUST_STATUSES).optional(),
  lifecycle: statusFilter(LIFECYCLE_STATES).optional(),
  lifecycle_state: statusFilter(LIFECYCLE_STATES).optional(),
  tag: z.string().max(500).optional(),
  label: z.string().max(500).optional(),
  capability: z.string().max(500).optional(),
  provider: z.string().max(200).optional(),
  package: z.string().max(200).optional(),
  firmware: z.string().max(200).optional(),
  firmware_version: z.string().max(200).optional(),
  assigned_to: z.string().max(200).optional(),
  depends_on: z.string().max(200).optional(),
  participates_in: z.string().max(200).optional(),
  parent_id: z.string().max(200).optional(),
  search: z.string().max(200).optional(),
  q: z.string().max(200).optional(),
}));
export type InventoryQuery = z.infer<typeof inventoryQuery>;

const oneOrMany = (values: readonly [string, ...string[]]) => z.union([z.enum(values), z.array(z.enum(values)).max(20)]);
const oneOrManyText = z.lazy(() => z.union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).max(50)]));

const queryBody = z.lazy(() => z.object({
  kind: oneOrManyText.optional(),
  entity_type: oneOrManyText.optional(),
  health: oneOrMany(HEALTH_STATUSES).optional(),
  readiness: oneOrMany(READINESS_STATUSES).optional(),
  trust: oneOrMany(TRUST_STATUSES).optional(),
  lifecycle: oneOrMany(LIFECYCLE_STATES).optional(),
  tags: z.array(tag).max(50).optional(),
  any_tags: z.array(tag).max(50).optional(),
  labels: names.optional(),
  capabilities: names.optional(),
  provider: oneOrManyText.optional(),
  package: oneOrManyText.optional(),
  firmware_version: oneOrManyText.optional(),
  parent_id: oneOrManyText.optional(),
  assigned_to: oneOrManyText.optional(),
  depends_on: oneOrManyText.optional(),
  participates_in: oneOrManyText.optional(),
  related_to: z
    .object({ id: z.string().min(1, 'missing related_to.id').max(200), kind: z.enum(RELATIONSHIP_KINDS).optional(), direction: z.enum(['out', 'in', 'any']).optional() })
    .optional(),
  impacted_by: z.string().min(1).max(200).optional(),
  metadata: z.record(z.string().max(100), z.string().max(500)).optional(),
  search: z.string().max(200).optional(),
  sort: z.enum(['id', 'name', 'kind']).optional(),
  limit: z.number().int().min(1).max(10_000).optional(),
  offset: z.number().int().min(0).optional(),
}));
export type QueryBody = z.infer<typeof queryBody>;

const entityType = z.lazy(() => z.union([z.string().min(1).max(64), z.object({ custom: z.string().min(1).max(64) })]));
const registerBody = z.lazy(() => z.object({
  id: entityId('id'),
  entity_type: entityType,
  name: shortText.optional(),
  display_name: shortText.optional(),
  description: z.string().max(4000).optional(),
  parent_id: entityId('parent_id').optional(),
  labels: names.optional(),
  tags: z.array(tag).max(100).optional(),
  capabilities: names.optional(),
  metadata: z.record(z.string().min(1).max(100), z.string().max(2000)).optional(),
  version: shortText.optional(),
  manufacturer: shortText.optional(),
  model: shortText.optional(),
  serial_number: shortText.optional(),
  hardware_revision: shortText.optional(),
  firmware_version: shortText.optional(),
  software_version: shortText.optional(),
  provider: shortText.optional(),
  package: shortText.optional(),
  owner: shortText.optional(),
  location: z
    .object({ name: shortText.optional(), zone_id: shortText.optional(), coordinates: z.record(z.string().max(20), z.number()).optional() })
    .optional(),
  security: z
    .object({ identity: shortText.optional(), certificates: z.array(shortText).max(20).optional(), encryption: shortText.optional(), permissions: names.optional() })
    .optional(),
  health_status: z.enum(HEALTH_STATUSES).optional(),
  readiness_status: z.enum(READINESS_STATUSES).optional(),
  trust_status: z.enum(TRUST_STATUSES).optional(),
  lifecycle_state: z.enum(LIFECYCLE_STATES).optional(),
  governance: z.record(z.string(), z.unknown()).optional(),
  autonomy: z.record(z.string(), z.unknown()).optional(),
  /** Also write the overlay into the project's entity fragment (as POST /v1/entities/sync does). */
  persist: z.boolean().optional(),
}));
export type RegisterBody = z.infer<typeof registerBody>;

const tagsBody = z
  .object({ add: z.array(tag).max(100).optional(), remove: z.array(tag).max(100).optional() })
  .refine((b) => (b.add?.length ?? 0) + (b.remove?.length ?? 0) > 0, 'add or remove at least one tag');
const relateBody = z.lazy(() => z.object({
  from_id: z.string().min(1, 'missing from_id').max(200),
  to_id: z.string().min(1, 'missing to_id').max(200),
  kind: z.enum(RELATIONSHIP_KINDS),
  label: z.string().max(200).optional(),
}));
const verifyBody = z.lazy(() => z.object({ required_capabilities: names.optional(), require_trust: z.boolean().optional() }));
const traceQuery = z.lazy(() => z.object({ entity_id: z.string().min(1).max(200).optional() }));
export type TagsBody = z.infer<typeof tagsBody>;
export type RelateBody = z.infer<typeof relateBody>;
export type VerifyBody = z.infer<typeof verifyBody>;
export type TraceQuery = z.infer<typeof traceQuery>;

// ---------------------------------------------------------------------------------------------
// Operations

export const listEntities = defineSpec<Record<string, never>, InventoryQuery>({
  id: 'listEntities',
  group: 'entities',
  summary: 'Entity inventory (robots, devices, sensors, missions, fleets, facilities, people, services) with filters',
  description:
    'Filters (all optional, combined with AND; lists are comma-separated): kind|entity_type, health|health_status, readiness|readiness_status, trust|trust_status, lifecycle|lifecycle_state, tag, label, capability, provider, package, firmware|firmware_version, assigned_to, depends_on, participates_in, parent_id, search|q.',
  method: 'GET',
  path: '/v1/entities',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'ListEntities', request: 'Empty' },
  jsonRpc: true,
  cli: ['entities', 'list'],
  cliAliases: [['entity', 'list']],
  query: inventoryQuery,
});

export const getEntityGraph = defineSpec({
  id: 'getEntityGraph',
  group: 'entities',
  summary: 'The whole registry as a graph: every entity (full record) and every relationship',
  method: 'GET',
  path: '/v1/entities/graph',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityGraph', request: 'Empty' },
  jsonRpc: true,
  cli: ['entities', 'graph'],
  cliAliases: [['entity', 'graph']],
});

export const getEntityTraceability = defineSpec<Record<string, never>, TraceQuery>({
  id: 'getEntityTraceability',
  group: 'entities',
  summary: 'Unified traceability: mission → robot → capability → device → provider → package',
  method: 'GET',
  path: '/v1/entities/traceability',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityTraceability', request: 'QueryRequest' },
  jsonRpc: true,
  cli: ['entities', 'traceability'],
  query: traceQuery,
});

export const queryEntities = defineSpec<QueryBody>({
  id: 'queryEntities',
  group: 'entities',
  summary: 'Structured entity query (statuses, tags, capabilities, relationships, impact, metadata, paging)',
  method: 'POST',
  path: '/v1/entities/query',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'QueryEntities', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['entities', 'query'],
  body: queryBody,
});

export const registerEntity = defineSpec<RegisterBody>({
  id: 'registerEntity',
  group: 'entities',
  summary: 'Register an entity, or update the overlay of an existing one (persist: also sync to the project)',
  method: 'POST',
  path: '/v1/entities/register',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'RegisterEntity', request: 'JsonBodyRequest' },
  cli: ['entities', 'register'],
  body: registerBody,
});

export const relateEntities = defineSpec<RelateBody>({
  id: 'relateEntities',
  group: 'entities',
  summary: 'Relate two existing entities (owns, contains, depends_on, participates_in, …)',
  method: 'POST',
  path: '/v1/entities/relationships',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'RelateEntities', request: 'JsonBodyRequest' },
  cli: ['entities', 'relate'],
  body: relateBody,
});

export const syncEntities = defineSpec({
  id: 'syncEntities',
  group: 'entities',
  summary: "Write the overlay (registered entities, tags, relationships) into the project's svc.entities.toml",
  method: 'POST',
  path: '/v1/entities/sync',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'SyncEntities', request: 'Empty' },
  cli: ['entities', 'sync'],
  body: z.lazy(() => z.object({})),
});

export const getEntity = defineSpec({
  id: 'getEntity',
  group: 'entities',
  summary: 'One entity: its full record',
  method: 'GET',
  path: '/v1/entities/{id}',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntity', request: 'EntityIdRequest' },
  jsonRpc: true,
  cli: ['entities', 'get'],
});

export const getEntityRelationships = defineSpec({
  id: 'getEntityRelationships',
  group: 'entities',
  summary: "An entity's relationships, what its failure impacts, and its dependency chain",
  method: 'GET',
  path: '/v1/entities/{id}/relationships',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityRelationships', request: 'EntityIdRequest' },
  jsonRpc: true,
  cli: ['entities', 'relationships'],
});

export const getEntityHealth = defineSpec({
  id: 'getEntityHealth',
  group: 'entities',
  summary: 'Health snapshot of an entity and its members (publishes health events on transitions)',
  method: 'GET',
  path: '/v1/entities/{id}/health',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityHealth', request: 'EntityIdRequest' },
  jsonRpc: true,
  cli: ['entities', 'health'],
});

export const getEntityReadiness = defineSpec({
  id: 'getEntityReadiness',
  group: 'entities',
  summary: 'Readiness snapshot: mission readiness, device readiness, linked missions (events on transitions)',
  method: 'GET',
  path: '/v1/entities/{id}/readiness',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityReadiness', request: 'EntityIdRequest' },
  jsonRpc: true,
  cli: ['entities', 'readiness'],
});

export const getEntityTrust = defineSpec({
  id: 'getEntityTrust',
  group: 'entities',
  summary: 'Trust status and security metadata of an entity',
  method: 'GET',
  path: '/v1/entities/{id}/trust',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityTrust', request: 'EntityIdRequest' },
  jsonRpc: true,
  cli: ['entities', 'trust'],
});

export const getEntityAutonomy = defineSpec({
  id: 'getEntityAutonomy',
  group: 'entities',
  summary: 'Enriched autonomy profile with an attention snapshot of what needs attention now',
  method: 'GET',
  path: '/v1/entities/{id}/autonomy',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityAutonomy', request: 'EntityIdRequest' },
  cli: ['entities', 'autonomy'],
});

export const getEntityDecisions = defineSpec({
  id: 'getEntityDecisions',
  group: 'entities',
  summary: 'Decisions recorded about an entity (audit chain) and the standing ones (trust, quarantine)',
  method: 'GET',
  path: '/v1/entities/{id}/decisions',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetEntityDecisions', request: 'EntityIdRequest' },
  cli: ['entities', 'decisions'],
});

export const verifyEntity = defineSpec<VerifyBody>({
  id: 'verifyEntity',
  group: 'entities',
  summary: 'Unified verification: graph consistency, health, readiness, trust, lifecycle, identity, capabilities',
  method: 'POST',
  path: '/v1/entities/{id}/verify',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'VerifyEntity', request: 'EntityBodyRequest' },
  jsonRpc: true,
  cli: ['entities', 'verify'],
  body: verifyBody,
});

export const tagEntity = defineSpec<TagsBody>({
  id: 'tagEntity',
  group: 'entities',
  summary: 'Add or remove tags of an entity',
  method: 'POST',
  path: '/v1/entities/{id}/tags',
  access: { kind: 'action', action: 'Provision' },
  rpc: { name: 'TagEntity', request: 'EntityBodyRequest' },
  cli: ['entities', 'tag'],
  body: tagsBody,
});

export const entitySpecs = [
  listEntities,
  getEntityGraph,
  getEntityTraceability,
  queryEntities,
  registerEntity,
  relateEntities,
  syncEntities,
  getEntity,
  getEntityRelationships,
  getEntityHealth,
  getEntityReadiness,
  getEntityTrust,
  getEntityAutonomy,
  getEntityDecisions,
  verifyEntity,
  tagEntity,
];
