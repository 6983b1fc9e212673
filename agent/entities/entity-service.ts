import type { AuditRecord } from '../audit/audit-chain.js';
import { ApiError, badRequest, notFound } from '../core/errors.js';
import type { DeviceRecord } from '../devices/device-registry.js';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { Alert } from '../observability/alerts.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { autonomyProfile, entityDecisions } from './autonomy.js';
import { declarationFromTable, entityFromDeclaration, type EntityDeclaration } from './declaration.js';
import { select, type Criteria } from './filters.js';
import { EntityGraph } from './graph.js';
import { entityTypeJson, isRelationshipKind, parseKind, RELATIONSHIP_KINDS } from './kinds.js';
import { toRecord, toSummary, type Entity, type Relationship } from './model.js';
import { OverlayStore, type TagEdits } from './overlay-store.js';
import type { ProgramFactsSource } from './program-facts.js';
import { fromConfig, fromDevices, fromMissionSeeds, fromProgram, type Derived } from './sources.js';
import { StatusEvaluator } from './status.js';
import { readEntityFragment, writeEntityFragment, type SyncResult } from './sync-fragment.js';
import { traceability } from './traceability.js';
import { StatusTransitions } from './transitions.js';
import { verifyEntity, type VerifyOptions } from './verification.js';

export const ENTITY_EVENT_SOURCE = 'svc-api';

export interface EntityServiceDeps {
  /** Where the overlay is persisted (`SVC_ENTITY_OVERLAY_PATH`, default `<state dir>/entity-overlays.json`). */
  overlayFile: string;
  /** The resolved project configuration, or null when the agent runs without one. */
  config: ResolvedConfig | null;
  /** The device pool, read live on every view. */
  devices: () => readonly DeviceRecord[];
  /** Facts of the loaded program (robots, sensors, actuators, missions); null without a program. */
  programFacts: ProgramFactsSource;
  bus: EventBus;
  /** Recent alerts, for the attention snapshot. */
  alerts?: () => readonly Alert[];
  /** The audit chain's records, oldest first, for an entity's decisions (streamed from its files). */
  auditRecords?: () => Iterable<AuditRecord>;
  warn?: (message: string) => void;
}

/** One consistent view of the registry: the merged graph and the statuses computed over it. */
export interface RegistryView {
  graph: EntityGraph;
  status: StatusEvaluator;
}

export const entityNotFound = (id: string) => notFound(`entity '${id}' not found`);

/**
 * The entity registry (issue #6): robots, devices, sensors, missions, fleets, facilities, people and
 * services as one graph. Entities come from the live sources (configuration, device pool, program)
 * and the operator's persisted overlay; every read builds a fresh view, so it reflects the device
 * pool as it is now. Health and readiness evaluations publish events on transitions only.
 */
export class EntityService {
  private readonly transitions: StatusTransitions;
  private fragment: Derived & { tagEdits: Record<string, TagEdits> };

  private constructor(
    private readonly deps: EntityServiceDeps,
    readonly overlay: OverlayStore,
  ) {
    this.transitions = new StatusTransitions(deps.bus);
    this.fragment = deps.config ? readEntityFragment(deps.config.projectRoot, this.warn) : { entities: [], relationships: [], tagEdits: {} };
  }

  static async open(deps: EntityServiceDeps): Promise<EntityService> {
    return new EntityService(deps, await OverlayStore.open(deps.overlayFile, deps.warn));
  }

  private readonly warn = (m: string) => (this.deps.warn ?? ((x: string) => process.stderr.write(`warning: ${x}\n`)))(m);

  // -------------------------------------------------------------------------------------------
  // Views

  view(): RegistryView {
    const { config } = this.deps;
    const layers: Derived[] = [];
    if (config) layers.push(fromConfig(config));
    layers.push(fromDevices(this.deps.devices(), config));
    const facts = this.deps.programFacts();
    if (facts) layers.push(fromProgram(facts));
    if (config) layers.push(fromMissionSeeds(config));
    layers.push(this.fragment);
    layers.push(this.overlayLayer());
    const graph = new EntityGraph(layers, { ...this.fragment.tagEdits, ...this.overlay.data.tags });
    return { graph, status: new StatusEvaluator(graph) };
  }

  private overlayLayer(): Derived {
    const data = this.overlay.data;
    const entities = Object.values(data.entities)
      .map((d) => {
        // Read through the lenient parser: the file may have been edited by hand.
        const decl = d && typeof d === 'object' ? declarationFromTable(d as unknown as Record<string, unknown>) : null;
        const e = decl ? entityFromDeclaration(decl, 'overlay') : null;
        if (e) e.audit = { created_at: d.registered_at, updated_at: d.updated_at, source: `registered by ${d.registered_by}` };
        return e;
      })
      .filter((e): e is Entity => e !== null);
    const relationships = data.relationships.map(({ from_id, to_id, kind, label }) => ({ from_id, to_id, kind, ...(label !== undefined ? { label } : {}) }));
    return { entities, relationships };
  }

  private require(view: RegistryView, id: string): Entity {
    const e = view.graph.get(id);
    if (!e) throw entityNotFound(id);
    return e;
  }

  private record(view: RegistryView, e: Entity) {
    return toRecord(e, view.status.status(e.id), view.graph.children(e.id));
  }

  list(criteria: Criteria) {
    const view = this.view();
    return select(view.graph, view.status, criteria).map((e) => toSummary(e, view.status.status(e.id)));
  }

  query(criteria: Criteria, page: { limit?: number | undefined; offset?: number | undefined; sort?: 'id' | 'name' | 'kind' | undefined }) {
    const view = this.view();
    let matched = select(view.graph, view.status, criteria);
    if (page.sort === 'name') matched = [...matched].sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id) || a.id.localeCompare(b.id));
    if (page.sort === 'kind') matched = [...matched].sort((a, b) => a.kind.localeCompare(b.kind) || a.id.localeCompare(b.id));
    const offset = page.offset ?? 0;
    const slice = matched.slice(offset, page.limit !== undefined ? offset + page.limit : undefined);
    return { entities: slice.map((e) => this.record(view, e)), count: slice.length, total: matched.length };
  }

  get(id: string) {
    const view = this.view();
    return this.record(view, this.require(view, id));
  }

  graph() {
    const view = this.view();
    const nodes = view.graph.list().map((e) => this.record(view, e));
    // Each dangling edge says which end is unknown, with a likely meant id (docs/entities.md § Where entities come from).
    const dangling_edges = view.graph.dangling.map((r) => ({ ...r, ...view.graph.unresolved(r) }));
    return { nodes, edges: view.graph.relationships, dangling_edges };
  }

  relationships(id: string) {
    const view = this.view();
    this.require(view, id);
    return { entity_id: id, relationships: view.graph.relationshipsOf(id), impact: view.graph.impact(id), dependency_chain: view.graph.dependencyChain(id) };
  }

  health(id: string) {
    const view = this.view();
    const e = this.require(view, id);
    const report = view.status.healthReport(id);
    this.transitions.observeHealth(report);
    return { entity_id: id, kind: e.kind, health_status: report.health_status, lifecycle_state: report.lifecycle_state, report };
  }

  readiness(id: string) {
    const view = this.view();
    const e = this.require(view, id);
    const report = view.status.readinessReport(id);
    this.transitions.observeReadiness(report);
    const out: Record<string, unknown> = {
      entity_id: id,
      kind: e.kind,
      readiness_status: report.readiness_status,
      capabilities: e.capabilities,
      report,
      mission_ready: report.mission_ready,
    };
    if (e.kind === 'mission') {
      out['mission_state'] = e.metadata['mission_state'] ?? (report.mission_ready ? 'ready' : 'planned');
      out['current_step'] = e.metadata['current_step'] ?? null;
      out['participants'] = view.graph.sourcesOf(id, 'participates_in');
    }
    const linked = view.graph.targetsOf(id, 'participates_in');
    if (linked.length > 0) out['linked_missions'] = linked;
    if (e.kind === 'robot') {
      const devices = view.status.devicesUnder(id).filter((d) => d.id !== id);
      const blocked = devices.filter((d) => !view.status.readinessReport(d.id).mission_ready);
      out['device_readiness'] = { mission_ready: blocked.length === 0, blocked_count: blocked.length, total_devices: devices.length, blocked_devices: blocked.map((d) => d.id) };
    }
    return out;
  }

  trust(id: string) {
    const view = this.view();
    const e = this.require(view, id);
    const report = view.status.trustReport(id);
    const s = view.status.status(id);
    return {
      entity_id: id,
      kind: e.kind,
      trust_status: report.trust_status,
      lifecycle_state: s.lifecycle_state,
      security: e.security ?? { certificates: [], permissions: [] },
      report,
    };
  }

  autonomy(id: string) {
    const view = this.view();
    const e = this.require(view, id);
    return { entity_id: id, kind: e.kind, autonomy: autonomyProfile(view.graph, view.status, e, this.deps.alerts?.() ?? []) };
  }

  decisions(id: string) {
    const view = this.view();
    const e = this.require(view, id);
    const { decisions, standing } = entityDecisions(e, this.deps.auditRecords?.() ?? []);
    return { entity_id: id, kind: e.kind, decisions, count: decisions.length, standing };
  }

  /**
   * `publish` says whether this verification may publish health and readiness transitions. Verify is a
   * read-like POST that anyone passing the read policy may call, and those events land in the audit
   * chain and on the stream: only a caller who holds Operate (the action that changes readiness:
   * quarantine, mission pause/resume) publishes them; anyone else gets the same answer and leaves no
   * trace (docs/security.md §10).
   */
  verify(id: string, options: VerifyOptions, publish = false) {
    const view = this.view();
    const e = this.require(view, id);
    if (publish) {
      this.transitions.observeHealth(view.status.healthReport(id));
      this.transitions.observeReadiness(view.status.readinessReport(id));
    }
    return { ...verifyEntity(view.graph, view.status, e, options), verified_at: new Date().toISOString() };
  }

  traceability(filter: { entityId?: string | undefined }) {
    const view = this.view();
    if (filter.entityId !== undefined) this.require(view, filter.entityId);
    return traceability(view.graph, view.status, filter);
  }

  // -------------------------------------------------------------------------------------------
  // Mutations (Provision)

  /** Registers an entity, or updates the overlay of one that exists (in any source). */
  register(decl: EntityDeclaration, actor: string, options: { persist?: boolean | undefined } = {}) {
    if (options.persist && !this.deps.config) throw badRequest('no resolved configuration loaded; use --config');
    const kind = parseKind(decl.entity_type);
    if (!kind) throw badRequest(`invalid field 'entity_type': '${JSON.stringify(decl.entity_type)}' is not an entity kind`);
    const before = this.view();
    if (decl.parent_id !== undefined && decl.parent_id !== decl.id && !before.graph.get(decl.parent_id) && this.overlay.data.entities[decl.parent_id] === undefined) {
      throw new ApiError(400, 'not_found', `entity '${decl.parent_id}' not found (parent_id)`);
    }
    if (decl.parent_id === decl.id) throw badRequest('an entity cannot be its own parent');
    const existed = before.graph.get(decl.id) !== undefined;
    const normalized: EntityDeclaration = { ...decl, entity_type: entityTypeJson(kind.kind, kind.custom) };
    const { version } = this.overlay.upsertEntity(normalized, actor);
    if (!existed) {
      this.publish('EntityCreated', decl.id, { entity_id: decl.id, entity_type: kind.kind, actor });
    } else {
      this.publish('EntityUpdated', decl.id, { entity_id: decl.id, entity_type: kind.kind, path: overlayName(this.overlay.file), actor });
    }
    const sync = options.persist ? this.sync() : null;
    return { entity: this.get(decl.id), overlay_version: version, sync, created: !existed };
  }

  tag(id: string, add: readonly string[], remove: readonly string[], actor: string) {
    const view = this.view();
    this.require(view, id);
    const version = this.overlay.editTags(id, add, remove);
    const entity = this.get(id);
    this.publish('EntityTagged', id, { entity_id: id, added: [...add], removed: [...remove], tags: entity.tags ?? [], actor });
    return { entity, overlay_version: version };
  }

  relate(r: { from_id: string; to_id: string; kind: string; label?: string | undefined }, actor: string) {
    if (!isRelationshipKind(r.kind)) throw badRequest(`invalid field 'kind': must be one of ${RELATIONSHIP_KINDS.join(', ')}`);
    if (r.from_id === r.to_id) throw badRequest('an entity cannot be related to itself');
    const view = this.view();
    for (const id of [r.from_id, r.to_id]) if (!view.graph.get(id)) throw new ApiError(400, 'not_found', `entity '${id}' not found`);
    const relationship: Relationship = { from_id: r.from_id, to_id: r.to_id, kind: r.kind, ...(r.label !== undefined ? { label: r.label } : {}) };
    const { created, version } = this.overlay.relate(relationship, actor);
    this.publish('EntityRelated', r.from_id, { from_id: r.from_id, to_id: r.to_id, kind: r.kind, created, actor });
    return { relationship, overlay_version: version, created };
  }

  /** Writes the overlay into the project's entity fragment (atomically), so it travels with the configuration. */
  sync(): SyncResult {
    const cfg = this.deps.config;
    if (!cfg) throw badRequest('no resolved configuration loaded; use --config');
    const result = writeEntityFragment(cfg.projectRoot, this.overlay.data);
    this.fragment = readEntityFragment(cfg.projectRoot, this.warn);
    this.publish('EntityUpdated', undefined, { path: result.path, entities_written: result.entities_written, relationships_written: result.relationships_written });
    return result;
  }

  private publish(type: 'EntityCreated' | 'EntityUpdated' | 'EntityTagged' | 'EntityRelated', entityId: string | undefined, payload: Record<string, unknown>): void {
    this.deps.bus.publish(platformEvent(type, ENTITY_EVENT_SOURCE, payload, entityId));
  }

  flush(): Promise<void> {
    return this.overlay.flush();
  }
}

/** Events reach the stream and the audit: they name the overlay file, never where the state directory is (docs/security.md §5, "Program files"). */
function overlayName(file: string): string {
  return file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
}
