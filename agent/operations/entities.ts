import * as z from 'zod';
import { badRequest } from '../core/errors.js';
import { defineOperation, type Operation, type OperationContext } from './legacy-operation.js';
import type { EntityDeclaration } from '../entities/declaration.js';
import { list, type Criteria } from '../entities/filters.js';
import { HEALTH_STATUSES, LIFECYCLE_STATES, READINESS_STATUSES, RELATIONSHIP_KINDS, TRUST_STATUSES } from '../entities/kinds.js';
import { API_VERSION } from '../../api/versions.js';
import { roleAllows } from '../security/rbac.js';

const actor = (ctx: OperationContext) => ctx.principal?.user_id ?? ctx.principal?.key_id ?? 'operator';

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
    .refine((v) => (list(v) ?? []).every((x) => values.includes(x.toLowerCase())), `expected one of ${values.join(', ')}`);

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
type InventoryQuery = z.infer<typeof inventoryQuery>;

const lowered = (v: string | undefined) => list(v)?.map((x) => x.toLowerCase());

/** The query string of GET /v1/entities → criteria (each filter has a short and a long name). */
function inventoryCriteria(q: InventoryQuery): Criteria {
  const c: Criteria = {};
  const set = <K extends keyof Criteria>(k: K, v: Criteria[K] | undefined) => {
    if (v !== undefined) c[k] = v;
  };
  set('kinds', lowered(q.kind ?? q.entity_type));
  set('health', lowered(q.health ?? q.health_status));
  set('readiness', lowered(q.readiness ?? q.readiness_status));
  set('trust', lowered(q.trust ?? q.trust_status));
  set('lifecycle', lowered(q.lifecycle ?? q.lifecycle_state));
  set('tags', list(q.tag));
  set('labels', list(q.label));
  set('capabilities', list(q.capability));
  set('provider', list(q.provider));
  set('package', list(q.package));
  set('firmware', list(q.firmware ?? q.firmware_version));
  set('assignedTo', list(q.assigned_to));
  set('dependsOn', list(q.depends_on));
  set('participatesIn', list(q.participates_in));
  set('parentId', list(q.parent_id));
  const search = (q.search ?? q.q)?.trim();
  if (search) c.search = search;
  return c;
}

const oneOrMany = (values: readonly [string, ...string[]]) => z.union([z.enum(values), z.array(z.enum(values)).max(20)]);
const oneOrManyText = z.lazy(() => z.union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).max(50)]));
const arr = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

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
type QueryBody = z.infer<typeof queryBody>;

function queryCriteria(b: QueryBody): Criteria {
  const c: Criteria = {};
  const set = <K extends keyof Criteria>(k: K, v: Criteria[K] | undefined) => {
    if (v !== undefined) c[k] = v;
  };
  set('kinds', arr(b.kind ?? b.entity_type)?.map((k) => k.toLowerCase()));
  set('health', arr(b.health));
  set('readiness', arr(b.readiness));
  set('trust', arr(b.trust));
  set('lifecycle', arr(b.lifecycle));
  set('tags', b.tags);
  set('anyTags', b.any_tags);
  set('labels', b.labels);
  set('capabilities', b.capabilities);
  set('provider', arr(b.provider));
  set('package', arr(b.package));
  set('firmware', arr(b.firmware_version));
  set('parentId', arr(b.parent_id));
  set('assignedTo', arr(b.assigned_to));
  set('dependsOn', arr(b.depends_on));
  set('participatesIn', arr(b.participates_in));
  if (b.related_to) c.relatedTo = { id: b.related_to.id, direction: b.related_to.direction ?? 'any', ...(b.related_to.kind ? { kind: b.related_to.kind } : {}) };
  set('impactedBy', b.impacted_by);
  set('metadata', b.metadata);
  if (b.search?.trim()) c.search = b.search.trim();
  return c;
}

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
type RegisterBody = z.infer<typeof registerBody>;

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

function declarationOf(b: RegisterBody): EntityDeclaration {
  const { persist: _p, security, ...rest } = b;
  const decl = { ...rest } as EntityDeclaration;
  if (security) decl.security = { certificates: security.certificates ?? [], permissions: security.permissions ?? [], ...(security.identity ? { identity: security.identity } : {}), ...(security.encryption ? { encryption: security.encryption } : {}) };
  for (const k of Object.keys(decl) as Array<keyof EntityDeclaration>) if (decl[k] === undefined) delete decl[k];
  return decl;
}

// ---------------------------------------------------------------------------------------------
// Operations. Fixed paths come before `/v1/entities/{id}` so `graph` is never read as an id.

const id = (params: Record<string, string>) => params['id']!;

/** The entity registry (api-behaviour §10.3; issue #6). */
const entityOperationList: Operation[] = [
  defineOperation<Record<string, never>, InventoryQuery>({
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
    query: inventoryQuery,
    handler: ({ query }, ctx) => {
      const entities = ctx.services.entities.list(inventoryCriteria(query));
      return { version: API_VERSION, entities, count: entities.length };
    },
  }),
  defineOperation({
    id: 'getEntityGraph',
    group: 'entities',
    summary: 'The whole registry as a graph: every entity (full record) and every relationship',
    method: 'GET',
    path: '/v1/entities/graph',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntityGraph', request: 'Empty' },
    jsonRpc: true,
    cli: ['entities', 'graph'],
    handler: (_i, ctx) => {
      const { nodes, edges, dangling_edges } = ctx.services.entities.graph();
      return { version: API_VERSION, graph: { nodes, edges }, node_count: nodes.length, edge_count: edges.length, dangling_edges };
    },
  }),
  defineOperation<Record<string, never>, z.infer<typeof traceQuery>>({
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
    handler: ({ query }, ctx) => ({ version: API_VERSION, traceability: ctx.services.entities.traceability({ entityId: query.entity_id }) }),
  }),
  defineOperation<QueryBody>({
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
    handler: ({ body }, ctx) => {
      const r = ctx.services.entities.query(queryCriteria(body), { limit: body.limit, offset: body.offset, sort: body.sort });
      return { version: API_VERSION, result: { entities: r.entities, count: r.count, total: r.total, query: body } };
    },
  }),
  defineOperation<RegisterBody>({
    id: 'registerEntity',
    group: 'entities',
    summary: 'Register an entity, or update the overlay of an existing one (persist: also sync to the project)',
    method: 'POST',
    path: '/v1/entities/register',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'RegisterEntity', request: 'JsonBodyRequest' },
    cli: ['entities', 'register'],
    body: registerBody,
    handler: ({ body }, ctx) => {
      const r = ctx.services.entities.register(declarationOf(body), actor(ctx), { persist: body.persist });
      return { version: API_VERSION, ok: true, entity: r.entity, overlay_version: r.overlay_version, created: r.created, sync: r.sync };
    },
  }),
  defineOperation<z.infer<typeof relateBody>>({
    id: 'relateEntities',
    group: 'entities',
    summary: 'Relate two existing entities (owns, contains, depends_on, participates_in, …)',
    method: 'POST',
    path: '/v1/entities/relationships',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'RelateEntities', request: 'JsonBodyRequest' },
    cli: ['entities', 'relate'],
    body: relateBody,
    handler: ({ body }, ctx) => {
      const r = ctx.services.entities.relate(body, actor(ctx));
      return { version: API_VERSION, ok: true, relationship: r.relationship, overlay_version: r.overlay_version, created: r.created };
    },
  }),
  defineOperation({
    id: 'syncEntities',
    group: 'entities',
    summary: "Write the overlay (registered entities, tags, relationships) into the project's svc.entities.toml",
    method: 'POST',
    path: '/v1/entities/sync',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'SyncEntities', request: 'Empty' },
    cli: ['entities', 'sync'],
    body: z.lazy(() => z.object({})),
    handler: (_i, ctx) => ({ version: API_VERSION, ok: true, sync: ctx.services.entities.sync() }),
  }),
  defineOperation({
    id: 'getEntity',
    group: 'entities',
    summary: 'One entity: its full record',
    method: 'GET',
    path: '/v1/entities/{id}',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntity', request: 'EntityIdRequest' },
    jsonRpc: true,
    cli: ['entities', 'get'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, entity: ctx.services.entities.get(id(params)) }),
  }),
  defineOperation({
    id: 'getEntityRelationships',
    group: 'entities',
    summary: "An entity's relationships, what its failure impacts, and its dependency chain",
    method: 'GET',
    path: '/v1/entities/{id}/relationships',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntityRelationships', request: 'EntityIdRequest' },
    jsonRpc: true,
    cli: ['entities', 'relationships'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.relationships(id(params)) }),
  }),
  defineOperation({
    id: 'getEntityHealth',
    group: 'entities',
    summary: 'Health snapshot of an entity and its members (publishes health events on transitions)',
    method: 'GET',
    path: '/v1/entities/{id}/health',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntityHealth', request: 'EntityIdRequest' },
    jsonRpc: true,
    cli: ['entities', 'health'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.health(id(params)) }),
  }),
  defineOperation({
    id: 'getEntityReadiness',
    group: 'entities',
    summary: 'Readiness snapshot: mission readiness, device readiness, linked missions (events on transitions)',
    method: 'GET',
    path: '/v1/entities/{id}/readiness',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntityReadiness', request: 'EntityIdRequest' },
    jsonRpc: true,
    cli: ['entities', 'readiness'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.readiness(id(params)) }),
  }),
  defineOperation({
    id: 'getEntityTrust',
    group: 'entities',
    summary: 'Trust status and security metadata of an entity',
    method: 'GET',
    path: '/v1/entities/{id}/trust',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntityTrust', request: 'EntityIdRequest' },
    jsonRpc: true,
    cli: ['entities', 'trust'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.trust(id(params)) }),
  }),
  defineOperation({
    id: 'getEntityAutonomy',
    group: 'entities',
    summary: 'Enriched autonomy profile with an attention snapshot of what needs attention now',
    method: 'GET',
    path: '/v1/entities/{id}/autonomy',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntityAutonomy', request: 'EntityIdRequest' },
    cli: ['entities', 'autonomy'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.autonomy(id(params)) }),
  }),
  defineOperation({
    id: 'getEntityDecisions',
    group: 'entities',
    summary: 'Decisions recorded about an entity (audit chain) and the standing ones (trust, quarantine)',
    method: 'GET',
    path: '/v1/entities/{id}/decisions',
    access: { kind: 'sensitive-read' },
    rpc: { name: 'GetEntityDecisions', request: 'EntityIdRequest' },
    cli: ['entities', 'decisions'],
    handler: ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.decisions(id(params)) }),
  }),
  defineOperation<z.infer<typeof verifyBody>>({
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
    // Transitions are published only for a caller holding Operate (EntityService.verify).
    handler: ({ params, body }, ctx) => ({
      version: API_VERSION,
      ...ctx.services.entities.verify(id(params), body, ctx.principal !== null && roleAllows(ctx.principal.role, 'Operate')),
    }),
  }),
  defineOperation<z.infer<typeof tagsBody>>({
    id: 'tagEntity',
    group: 'entities',
    summary: 'Add or remove tags of an entity',
    method: 'POST',
    path: '/v1/entities/{id}/tags',
    access: { kind: 'action', action: 'Provision' },
    rpc: { name: 'TagEntity', request: 'EntityBodyRequest' },
    cli: ['entities', 'tag'],
    body: tagsBody,
    handler: ({ params, body }, ctx) => {
      const add = body.add ?? [];
      const remove = body.remove ?? [];
      const both = add.filter((t) => remove.includes(t));
      if (both.length) throw badRequest(`tag '${both[0]}' is both added and removed`);
      const r = ctx.services.entities.tag(id(params), add, remove, actor(ctx));
      return { version: API_VERSION, ok: true, entity: r.entity, overlay_version: r.overlay_version };
    },
  }),
];

/**
 * Every entity view includes the robots and missions of the server's `--program`; the program
 * engine loads on first use, so each entity operation makes sure it is there before it runs.
 */
export const entityOperations: Operation[] = entityOperationList.map((op) => ({
  ...op,
  handler: async (input, ctx) => {
    await ctx.services.programs.prepareFacts();
    return op.handler(input, ctx);
  },
}));
