import {
  getEntity,
  getEntityAutonomy,
  getEntityDecisions,
  getEntityGraph,
  getEntityHealth,
  getEntityReadiness,
  getEntityRelationships,
  getEntityTraceability,
  getEntityTrust,
  listEntities,
  queryEntities,
  registerEntity,
  relateEntities,
  syncEntities,
  tagEntity,
  verifyEntity,
  type InventoryQuery,
  type QueryBody,
  type RegisterBody,
} from '../../api/domains/entities.js';
import type { OperationSpec } from '../../api/spec.js';
import { API_VERSION } from '../../api/versions.js';
import { badRequest } from '../core/errors.js';
import { handlersFor, type Handler } from '../core/handlers.js';
import type { CallContext } from '../core/operation.js';
import type { Services } from '../runtime/services.js';
import { roleAllows } from '../security/rbac.js';
import type { EntityDeclaration } from './declaration.js';
import { list, type Criteria } from './filters.js';

const on = handlersFor(['entities', 'programs']);
type EntityServices = Pick<Services, 'entities' | 'programs'>;

/**
 * Every entity view includes the robots and missions of the server's `--program`; the program
 * engine loads on first use, so each entity handler makes sure it is there before it runs.
 */
function onEntities<B, Q>(spec: OperationSpec<B, Q>, run: Handler<B, Q, EntityServices>) {
  return on(spec, async (input, ctx) => {
    await ctx.services.programs.prepareFacts();
    return run(input, ctx);
  });
}

const actor = (ctx: Pick<CallContext, 'principal'>) => ctx.principal?.user_id ?? ctx.principal?.key_id ?? 'operator';
const id = (params: Record<string, string>) => params['id']!;
const lowered = (v: string | undefined) => list(v)?.map((x) => x.toLowerCase());
const arr = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

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

function declarationOf(b: RegisterBody): EntityDeclaration {
  const { persist: _p, security, ...rest } = b;
  const decl = { ...rest } as EntityDeclaration;
  if (security) decl.security = { certificates: security.certificates ?? [], permissions: security.permissions ?? [], ...(security.identity ? { identity: security.identity } : {}), ...(security.encryption ? { encryption: security.encryption } : {}) };
  for (const k of Object.keys(decl) as Array<keyof EntityDeclaration>) if (decl[k] === undefined) delete decl[k];
  return decl;
}

/** The entity registry (docs/entities.md). */
export const entityHandlers = [
  onEntities(listEntities, ({ query }, ctx) => {
    const entities = ctx.services.entities.list(inventoryCriteria(query));
    return { version: API_VERSION, entities, count: entities.length };
  }),
  onEntities(getEntityGraph, (_i, ctx) => {
    const { nodes, edges, dangling_edges } = ctx.services.entities.graph();
    return { version: API_VERSION, graph: { nodes, edges }, node_count: nodes.length, edge_count: edges.length, dangling_edges };
  }),
  onEntities(getEntityTraceability, ({ query }, ctx) => ({ version: API_VERSION, traceability: ctx.services.entities.traceability({ entityId: query.entity_id }) })),
  onEntities(queryEntities, ({ body }, ctx) => {
    const r = ctx.services.entities.query(queryCriteria(body), { limit: body.limit, offset: body.offset, sort: body.sort });
    return { version: API_VERSION, result: { entities: r.entities, count: r.count, total: r.total, query: body } };
  }),
  onEntities(registerEntity, ({ body }, ctx) => {
    const r = ctx.services.entities.register(declarationOf(body), actor(ctx), { persist: body.persist });
    return { version: API_VERSION, ok: true, entity: r.entity, overlay_version: r.overlay_version, created: r.created, sync: r.sync };
  }),
  onEntities(relateEntities, ({ body }, ctx) => {
    const r = ctx.services.entities.relate(body, actor(ctx));
    return { version: API_VERSION, ok: true, relationship: r.relationship, overlay_version: r.overlay_version, created: r.created };
  }),
  onEntities(syncEntities, (_i, ctx) => ({ version: API_VERSION, ok: true, sync: ctx.services.entities.sync() })),
  onEntities(getEntity, ({ params }, ctx) => ({ version: API_VERSION, entity: ctx.services.entities.get(id(params)) })),
  onEntities(getEntityRelationships, ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.relationships(id(params)) })),
  onEntities(getEntityHealth, ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.health(id(params)) })),
  onEntities(getEntityReadiness, ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.readiness(id(params)) })),
  onEntities(getEntityTrust, ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.trust(id(params)) })),
  onEntities(getEntityAutonomy, ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.autonomy(id(params)) })),
  onEntities(getEntityDecisions, ({ params }, ctx) => ({ version: API_VERSION, ...ctx.services.entities.decisions(id(params)) })),
  // Transitions are published only for a caller holding Operate (EntityService.verify).
  onEntities(verifyEntity, ({ params, body }, ctx) => ({
    version: API_VERSION,
    ...ctx.services.entities.verify(id(params), body, ctx.principal !== null && roleAllows(ctx.principal.role, 'Operate')),
  })),
  onEntities(tagEntity, ({ params, body }, ctx) => {
    const add = body.add ?? [];
    const remove = body.remove ?? [];
    const both = add.filter((t) => remove.includes(t));
    if (both.length) throw badRequest(`tag '${both[0]}' is both added and removed`);
    const r = ctx.services.entities.tag(id(params), add, remove, actor(ctx));
    return { version: API_VERSION, ok: true, entity: r.entity, overlay_version: r.overlay_version };
  }),
];
