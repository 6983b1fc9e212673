import path from 'node:path';
import { badRequest } from '../core/errors.js';
import type { EntityService } from '../entities/entity-service.js';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { MeshSettings } from '../settings/settings.js';
import { JsonStore } from '../state/json-store.js';
import {
  components,
  detectPartition,
  elect,
  graphRole,
  graphTransport,
  linkNeighbors,
  linksOf,
  PARTITION_POLICY,
  partitionShape,
  refreshNeighbors,
  registryNode,
  RouteError,
  trustWeightedRoute,
  type Coordinator,
  type MeshLink,
  type MeshNode,
  type MeshRoute,
  type Partition,
} from './mesh-model.js';

export const MESH_FILE = 'control-center-mesh.json';
export const MESH_ID = 'control-center';
export const ROUTE_RING = 100;
export const PARTITION_RING = 50;
export const MESH_EVENT_SOURCE = 'svc-mesh';

/** What discovery recorded about a node: the transport side (registry statuses win when the entity exists). */
export interface StoredNode {
  entity_id: string;
  transport: string;
  reachable: boolean;
  latency_ms: number | null;
  packet_loss: number | null;
  hop_count: number | null;
  trust_score: number;
  capabilities: string[];
  health: string;
  readiness: string;
  identity: string | null;
  kind: string | null;
  last_seen: string;
  discovered_by: string[];
  link_quality_source: string | null;
}

export interface MeshDocument {
  nodes: Record<string, StoredNode>;
  routes: MeshRoute[];
  partitions: Partition[];
}

/** Result of a live probe: the round trip to a usable session, or why it failed. */
export type ProbeResult = { ok: true; latency_ms: number } | { ok: false; error: string };

export interface MeshServiceDeps {
  entities: EntityService;
  /** Loads the program engine so the registry sees the program's robots and missions. */
  prepare: () => Promise<void>;
  /** HAL link statistics per attachment (device hub), for measured packet loss. */
  linkStats: () => Array<Record<string, unknown>>;
  bus: EventBus;
  settings: MeshSettings;
  probeMqtt: (broker: string, timeoutMs: number) => Promise<ProbeResult>;
  now?: () => number;
}

export interface MeshView {
  nodes: Map<string, MeshNode>;
  links: MeshLink[];
  coordinator: Coordinator | null;
  components: string[][];
  relationships: readonly { from_id: string; to_id: string; kind: string }[];
  at: string;
}

const SOURCE_ALIASES: Record<string, string> = {
  local_runtime: 'local_runtime',
  local: 'local_runtime',
  entity_graph: 'entity_graph',
  graph: 'entity_graph',
  mqtt: 'mqtt',
  ros2: 'ros2',
  ros_2: 'ros2',
  dds: 'dds',
  mdns: 'mdns',
  ble: 'ble',
  wifi_subnet: 'wifi_subnet',
  wifi: 'wifi_subnet',
  subnet: 'wifi_subnet',
  manual_config: 'manual_config',
  manual: 'manual_config',
};

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Share of malformed inbound frames per device, from the HAL attachments' link counters (null when nothing was received). */
export function lossByDevice(stats: Array<Record<string, unknown>>): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of stats) {
    const link = (s['link'] && typeof s['link'] === 'object' ? s['link'] : s) as Record<string, unknown>;
    const good = num(link['frames_in']) ?? num(link['messages_in']);
    const bad = num(link['malformed_in']);
    if (good === null || bad === null || good + bad === 0) continue;
    const devices = Array.isArray(s['devices']) ? (s['devices'] as unknown[]) : [];
    for (const d of devices) if (typeof d === 'string') out.set(d, Math.round((bad / (good + bad)) * 10_000) / 10_000);
  }
  return out;
}

/**
 * The entity mesh (docs/mesh.md): every read builds the mesh from the entity registry merged with
 * the persisted mesh store; route computations, partition events and discovered nodes are kept in
 * `control-center-mesh.json` across calls and restarts.
 */
export class MeshService {
  private lastPartitionMs = 0;

  private constructor(
    private readonly deps: MeshServiceDeps,
    private readonly store: JsonStore<MeshDocument>,
  ) {}

  static async open(stateDir: string, deps: MeshServiceDeps): Promise<MeshService> {
    const store = await JsonStore.open<MeshDocument>(path.join(stateDir, MESH_FILE), {
      defaults: () => ({ nodes: {}, routes: [], partitions: [] }),
      revive: (raw) => {
        if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('expected a mesh document');
        const r = raw as Partial<MeshDocument>;
        return {
          nodes: r.nodes && typeof r.nodes === 'object' && !Array.isArray(r.nodes) ? r.nodes : {},
          routes: Array.isArray(r.routes) ? r.routes : [],
          partitions: Array.isArray(r.partitions) ? r.partitions : [],
        };
      },
    });
    return new MeshService(deps, store);
  }

  /** Writes what reads recorded (route history, partitions) before the agent stops. */
  close(): Promise<void> {
    return this.store.close();
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  // -------------------------------------------------------------------------------------------
  // Building the mesh

  /** Registry nodes, overlaid with what discovery stored (transport, latency, loss, last seen) and live link loss. */
  private async build(): Promise<MeshView> {
    await this.deps.prepare();
    const view = this.deps.entities.view();
    const stored = this.store.data.nodes;
    const loss = lossByDevice(this.deps.linkStats());
    const nodes = new Map<string, MeshNode>();
    for (const e of view.graph.list()) {
      const node = registryNode(e, view.status.status(e.id));
      const s = stored[e.id];
      if (s) {
        node.transport = s.transport;
        node.latency_ms = s.latency_ms;
        node.packet_loss = s.packet_loss;
        node.hop_count = s.hop_count;
        node.last_seen = s.last_seen;
        node.sources.push('discovery');
        node.link_quality_source = s.link_quality_source;
      }
      const live = loss.get(e.id);
      if (live !== undefined) {
        node.packet_loss = live;
        node.link_quality_source = node.latency_ms !== null ? `${s?.link_quality_source ?? 'discovery_probe'}+link_stats` : 'link_stats';
      }
      nodes.set(e.id, node);
    }
    for (const s of Object.values(stored).sort((a, b) => (a.entity_id < b.entity_id ? -1 : 1))) {
      if (nodes.has(s.entity_id) || s.kind !== null) continue; // registry entities that are gone stay out of the mesh
      nodes.set(s.entity_id, storedOnlyNode(s));
    }
    const sorted = new Map([...nodes.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    linkNeighbors(sorted, view.graph.relationships);
    const links = linksOf(sorted);
    const at = new Date(this.now()).toISOString();
    const coordinator = elect(sorted, at);
    return { nodes: sorted, links, coordinator, components: components(sorted), relationships: view.graph.relationships, at };
  }

  /** Records a partition event when the topology splits, and resolves recorded ones the topology no longer shows. */
  private observe(mesh: MeshView): Partition | null {
    const id = `partition-${Math.max(this.now(), this.lastPartitionMs + 1)}`;
    const { partition } = detectPartition(mesh.nodes, mesh.links, id, mesh.at);
    const shape = partition ? partitionShape(partition) : null;
    const stale = this.store.data.partitions.filter((p) => p.active && partitionShape(p) !== shape);
    const known = this.store.data.partitions.find((p) => p.active && shape !== null && partitionShape(p) === shape);
    if (stale.length === 0 && (known || !partition)) return known ?? null;
    this.store.change((d) => {
      for (const p of stale) {
        p.active = false;
        p.resolved_at = mesh.at;
      }
      if (partition && !known) {
        this.lastPartitionMs = Number(id.slice('partition-'.length));
        d.partitions.push(partition);
        if (d.partitions.length > PARTITION_RING) d.partitions.splice(0, d.partitions.length - PARTITION_RING);
      }
    });
    return known ?? partition;
  }

  private async current(): Promise<MeshView> {
    const mesh = await this.build();
    this.observe(mesh);
    return mesh;
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  async topology() {
    const mesh = await this.current();
    return {
      topology: {
        nodes: [...mesh.nodes.values()],
        links: mesh.links,
        coordinator: mesh.coordinator,
        partitions: this.store.data.partitions.filter((p) => p.active),
        updated_at: mesh.at,
      },
      mesh_id: MESH_ID,
    };
  }

  async nodes() {
    const mesh = await this.current();
    const nodes = [...mesh.nodes.values()];
    return { nodes, count: nodes.length };
  }

  async routes(query: { source?: string | undefined; target?: string | undefined }) {
    if (!query.source || !query.target) {
      const history = this.store.data.routes.slice();
      return { history, count: history.length };
    }
    const mesh = await this.build();
    let route: MeshRoute;
    try {
      route = trustWeightedRoute(mesh.nodes, mesh.links, query.source, query.target, new Date(this.now()));
    } catch (err) {
      if (err instanceof RouteError) throw badRequest(err.message);
      throw err;
    }
    this.store.change((d) => {
      d.routes.push(route);
      if (d.routes.length > ROUTE_RING) d.routes.splice(0, d.routes.length - ROUTE_RING);
    });
    return { route };
  }

  async partitions() {
    await this.current();
    const partitions = this.store.data.partitions.slice();
    return { partitions, active: partitions.filter((p) => p.active).length };
  }

  async health() {
    const mesh = await this.current();
    const nodes = [...mesh.nodes.values()];
    const offline = nodes.filter((n) => !n.reachable).map((n) => n.entity_id);
    const degraded = mesh.links
      .filter((l) => l.active && ((l.latency_ms ?? 0) > 200 || (l.packet_loss ?? 0) > 0.05))
      .map((l) => `${l.from_entity}->${l.to_entity}`);
    const activePartitions = this.store.data.partitions.filter((p) => p.active).length;
    const topologyComponents = mesh.components.length >= 2 ? mesh.components.length : 0;
    const avgTrust = nodes.length ? nodes.reduce((s, n) => s + n.trust_score, 0) / nodes.length : 0;
    const measured = mesh.links.filter((l) => l.latency_ms !== null);
    const avgLatency = measured.length ? Math.round(measured.reduce((s, l) => s + (l.latency_ms ?? 0), 0) / measured.length) : 0;
    const issues: string[] = [];
    if (offline.length) issues.push(`${offline.length} node(s) offline`);
    if (degraded.length) issues.push(`${degraded.length} degraded link(s)`);
    if (activePartitions) issues.push(`${activePartitions} active partition(s)`);
    else if (topologyComponents) issues.push(`${topologyComponents} topology component(s)`);
    if (nodes.length && avgTrust < 0.4) issues.push('mesh trust degraded');
    if (!mesh.coordinator) issues.push('no active coordinator');
    return {
      health: {
        total_nodes: nodes.length,
        reachable_nodes: nodes.length - offline.length,
        offline_nodes: offline,
        degraded_links: degraded,
        active_partitions: activePartitions,
        topology_components: topologyComponents,
        coordinator_status: mesh.coordinator ? 'active' : null,
        average_trust_score: avgTrust,
        average_latency_ms: avgLatency,
        measured_links: measured.length,
        issues,
      },
    };
  }

  async graph() {
    const mesh = await this.current();
    return {
      graph: {
        nodes: [...mesh.nodes.values()].map((n) => ({ id: n.entity_id, transport: graphTransport(n.transport), reachable: n.reachable, trust_score: n.trust_score, role: graphRole(n.role) })),
        edges: mesh.links.map((l) => ({ from: l.from_entity, to: l.to_entity, transport: graphTransport(l.transport), latency_ms: l.latency_ms, packet_loss: l.packet_loss, trusted: l.trusted, active: l.active })),
      },
    };
  }

  /**
   * A merge preview: conflicts over the active partitions (duplicate leaders), the current nodes
   * (duplicate identities) and the stored versus current nodes (capabilities, health/readiness, gone
   * entities), each with the merge policy's resolution. Nothing changes.
   */
  async mergeReport() {
    const mesh = await this.current();
    const at = mesh.at;
    const active = this.store.data.partitions.filter((p) => p.active);
    type Conflict = { conflict_id: string; kind: string; entity_ids: string[]; description: string; detected_at: string; resolved: boolean; resolution: string | null };
    const conflicts: Conflict[] = [];
    const add = (conflict_id: string, kind: string, entity_ids: string[], description: string) =>
      conflicts.push({ conflict_id, kind, entity_ids, description, detected_at: at, resolved: false, resolution: null });
    const leaders = new Map<string, number>();
    for (const p of active) for (const c of p.clusters) if (c.coordinator_entity) leaders.set(c.coordinator_entity, (leaders.get(c.coordinator_entity) ?? 0) + 1);
    for (const [id, n] of leaders) if (n > 1) add(`dup-leader-${id}`, 'duplicate_leader', [id], `${id} leads ${n} clusters`);
    const identities = new Map<string, string[]>();
    for (const n of mesh.nodes.values()) {
      const ident = n.security_identity.identity;
      if (ident) identities.set(ident, [...(identities.get(ident) ?? []), n.entity_id]);
    }
    for (const [ident, ids] of identities) if (ids.length > 1) add(`dup-identity-${ident}`, 'duplicate_identity', ids, `identity ${ident} is claimed by ${ids.join(', ')}`);
    for (const s of Object.values(this.store.data.nodes).sort((a, b) => (a.entity_id < b.entity_id ? -1 : 1))) {
      if (s.kind === null) continue; // discovery-only nodes have no registry counterpart to diverge from
      const cur = mesh.nodes.get(s.entity_id);
      if (!cur) {
        add(`missing-${s.entity_id}`, 'missing_entity', [s.entity_id], `${s.entity_id} was discovered at ${s.last_seen} but is no longer in the registry`);
        continue;
      }
      const was = [...s.capabilities].sort().join(',');
      const now = [...cur.capabilities].sort().join(',');
      if (was !== now) add(`capability-mismatch-${s.entity_id}`, 'capability_advertisement_mismatch', [s.entity_id], `advertised [${was}] at discovery, now [${now}]`);
      if (s.health !== cur.health || s.readiness !== cur.readiness)
        add(`state-${s.entity_id}`, 'state_divergence', [s.entity_id], `stored health/readiness ${s.health}/${s.readiness}, now ${cur.health}/${cur.readiness}`);
    }
    const trustOf = (id: string) => mesh.nodes.get(id)?.trust_score ?? 0;
    const highest = (ids: string[]) => [...ids].sort((a, b) => trustOf(b) - trustOf(a) || (a < b ? 1 : -1))[0]!;
    for (const c of conflicts) {
      c.resolution =
        c.kind === 'duplicate_leader'
          ? `retain_leader:${highest([...active.flatMap((p) => p.clusters.map((x) => x.coordinator_entity).filter((x): x is string => !!x))])}`
          : c.kind === 'duplicate_identity'
            ? `retain_identity:${highest(c.entity_ids)}`
            : 'prefer_newer_timestamp';
    }
    const mergeId = `merge-${Math.floor(this.now() / 1000)}`;
    return {
      report: {
        merge_id: mergeId,
        merged_at: at,
        plan: {
          merge_id: mergeId,
          partition_ids: active.map((p) => p.partition_id),
          conflicts,
          sync_actions: ['sync_entity_state', 'sync_health_readiness_trust', 'sync_mission_progress', 'sync_decision_traces', 'sync_recovery_events'],
          audit_merge_actions: ['merge_audit_trails'],
          entity_graph_updates: ['update_entity_graph_relationships'],
        },
        conflicts_resolved: conflicts.filter((c) => c.resolution !== null).length,
        conflicts_remaining: conflicts.filter((c) => c.resolution === null).length,
        evidence: conflicts.filter((c) => c.resolution !== null).map((c) => `resolved:${c.conflict_id}`),
      },
    };
  }

  async findCapability(capability: string | undefined) {
    if (!capability) throw badRequest('capability required');
    const mesh = await this.build();
    const matches = [...mesh.nodes.values()]
      .filter((n) => n.capabilities.includes(capability))
      .map((n) => ({ entity_id: n.entity_id, capabilities: n.capabilities, advertised_at: n.last_seen ?? mesh.at, transport: n.transport, verified: n.trust_score >= 0.6 }));
    return { capability, matches };
  }

  /**
   * Marks the given nodes unreachable on a copy of the mesh. Affected = the isolated ids plus every
   * node that was connected to the coordinator before and is not after; missions linked to affected
   * entities pause when the entity is not ready, else continue. Nothing is stored.
   */
  async simulatePartition(entityIds: readonly string[] | undefined) {
    if (!entityIds || entityIds.length === 0) throw badRequest('entity_ids required');
    const base = await this.build();
    const before = base.coordinator ? (base.components.find((c) => c.includes(base.coordinator!.entity_id)) ?? []) : [];
    const nodes = new Map<string, MeshNode>();
    for (const [id, n] of base.nodes) nodes.set(id, { ...n, role: 'participant', coordinator_status: 'none', neighbors: n.neighbors.map((x) => ({ ...x })) });
    const isolated = [...new Set(entityIds)].filter((id) => nodes.has(id)).sort();
    for (const id of isolated) nodes.get(id)!.reachable = false;
    refreshNeighbors(nodes);
    const links = linksOf(nodes);
    const keep = base.coordinator && nodes.get(base.coordinator.entity_id)?.reachable ? base.coordinator.entity_id : null;
    const coordinatorId = keep ?? elect(nodes, base.at)?.entity_id ?? null;
    const unix = Math.floor(this.now() / 1000);
    const detected = detectPartition(nodes, links, `partition-${unix}`, base.at);
    const after = coordinatorId ? (detected.components.find((c) => c.includes(coordinatorId)) ?? []) : [];
    const cutOff = before.filter((id) => !isolated.includes(id) && !after.includes(id));
    const affected = [...new Set([...isolated, ...cutOff])].sort();
    const partition: Partition = detected.partition
      ? { ...detected.partition, affected_entities: affected }
      : {
          partition_id: `sim-${unix}`,
          detected_at: base.at,
          resolved_at: null,
          clusters: [{ cluster_id: 'isolated', entity_ids: [...entityIds], coordinator_entity: null, partition_id: 'sim-partition' }],
          affected_entities: affected,
          active: true,
        };
    const paused = new Set<string>();
    const continued = new Set<string>();
    for (const r of base.relationships) {
      if (r.kind !== 'participates_in' || !affected.includes(r.from_id)) continue;
      const ready = base.nodes.get(r.from_id)?.readiness === 'ready';
      (ready ? continued : paused).add(r.to_id);
    }
    for (const m of paused) continued.delete(m);
    const localCoordinator = partition.clusters[0]?.coordinator_entity ?? null;
    const evidence = [`partition_id=${partition.partition_id}`, `clusters=${partition.clusters.length}`];
    for (const id of cutOff) evidence.push(`cut_off:${id}`);
    for (const m of [...paused].sort()) evidence.push(`paused_unsafe:${m}`);
    if (!localCoordinator) evidence.push('no_local_coordinator:restrictive_mode');
    return {
      report: {
        partition,
        isolated_entities: isolated,
        cut_off_entities: cutOff,
        coordinator_entity: coordinatorId,
        policy_applied: { ...PARTITION_POLICY },
        paused_missions: [...paused].sort(),
        continued_missions: [...continued].sort(),
        local_coordinator: localCoordinator,
        evidence,
      },
    };
  }

  // -------------------------------------------------------------------------------------------
  // Discovery

  async discover(requested: readonly string[] | undefined) {
    const names = [...new Set((requested ?? []).map((s) => SOURCE_ALIASES[s.toLowerCase()]).filter((s): s is string => !!s))];
    const sources = names.length ? names : ['local_runtime', 'entity_graph'];
    const discovered = new Map<string, MeshNode>();
    const probes: Array<Record<string, unknown>> = [];
    const skipped: Array<{ source: string; reason: string }> = [];
    const seenAt = new Date(this.now()).toISOString();
    const mesh = sources.includes('local_runtime') || sources.includes('entity_graph') ? await this.build() : null;
    if (mesh && sources.includes('local_runtime')) {
      for (const n of mesh.nodes.values()) {
        if (n.kind === null) continue;
        discovered.set(n.entity_id, { ...n, neighbors: [], role: 'participant', coordinator_status: 'none', last_seen: seenAt });
      }
    }
    if (sources.includes('mqtt')) {
      const { liveMqtt, mqttBroker, discoveryTimeoutMs } = this.deps.settings;
      if (!liveMqtt) skipped.push({ source: 'mqtt', reason: 'live MQTT discovery is off (SVC_LIVE_MQTT)' });
      else {
        const r = await this.deps.probeMqtt(mqttBroker, discoveryTimeoutMs);
        probes.push({ source: 'mqtt', target: mqttBroker, ...r });
        if (r.ok) discovered.set('mqtt-broker', brokerNode(r.latency_ms, seenAt));
      }
    }
    for (const s of ['ros2', 'dds']) if (sources.includes(s)) skipped.push({ source: s, reason: 'no ROS 2/DDS stack on this gateway' });
    for (const s of ['mdns', 'ble', 'wifi_subnet', 'manual_config']) if (sources.includes(s)) skipped.push({ source: s, reason: 'accepted; discovers nothing on this gateway' });
    if (mesh && sources.includes('entity_graph')) {
      if (!sources.includes('local_runtime')) for (const n of mesh.nodes.values()) if (n.kind !== null && !discovered.has(n.entity_id)) discovered.set(n.entity_id, { ...n, neighbors: [], last_seen: seenAt });
      linkNeighbors(discovered, mesh.relationships);
    }
    const list = [...discovered.values()].sort((a, b) => (a.entity_id < b.entity_id ? -1 : 1));
    const stored = this.store.data.nodes;
    const fresh = list.filter((n) => !stored[n.entity_id]).map((n) => n.entity_id);
    if (list.length) {
      this.store.change((d) => {
        for (const n of list) {
          const prev = d.nodes[n.entity_id];
          d.nodes[n.entity_id] = {
            entity_id: n.entity_id,
            transport: n.transport,
            reachable: n.reachable,
            latency_ms: n.latency_ms ?? prev?.latency_ms ?? null,
            packet_loss: n.packet_loss ?? prev?.packet_loss ?? null,
            hop_count: n.hop_count,
            trust_score: n.trust_score,
            capabilities: [...n.capabilities],
            health: n.health,
            readiness: n.readiness,
            identity: n.security_identity.identity ?? null,
            kind: n.kind,
            last_seen: seenAt,
            discovered_by: sources.filter((s) => (n.kind === null ? s === 'mqtt' : s === 'local_runtime' || s === 'entity_graph')),
            link_quality_source: n.link_quality_source ?? prev?.link_quality_source ?? null,
          };
        }
      });
    }
    for (const id of fresh) this.deps.bus.publish(platformEvent('FleetMemberJoined', MESH_EVENT_SOURCE, { via: 'mesh_discovery', sources }, id));
    return {
      discovery: { discovered: list, sources, new_entities: fresh.length, updated_entities: list.length - fresh.length, probes, skipped },
    };
  }
}

function storedOnlyNode(s: StoredNode): MeshNode {
  return {
    entity_id: s.entity_id,
    node_id: `node-${s.entity_id}`,
    transport: s.transport,
    reachable: s.reachable,
    neighbors: [],
    capabilities: [...s.capabilities],
    health: s.health,
    readiness: s.readiness,
    trust_score: s.trust_score,
    latency_ms: s.latency_ms,
    bandwidth_kbps: null,
    packet_loss: s.packet_loss,
    hop_count: s.hop_count,
    last_seen: s.last_seen,
    battery_percent: null,
    role: 'participant',
    coordinator_status: 'none',
    supported_protocols: ['secure_messaging'],
    security_identity: s.identity ? { identity: s.identity } : {},
    sources: ['discovery'],
    link_quality_source: s.link_quality_source,
    kind: null,
  };
}

function brokerNode(latency: number, at: string): MeshNode {
  return {
    ...storedOnlyNode({
      entity_id: 'mqtt-broker',
      transport: 'mqtt',
      reachable: true,
      latency_ms: latency,
      packet_loss: 0,
      hop_count: 1,
      trust_score: 0.75,
      capabilities: [],
      health: 'healthy',
      readiness: 'ready',
      identity: null,
      kind: null,
      last_seen: at,
      discovered_by: ['mqtt'],
      link_quality_source: 'discovery_probe',
    }),
  };
}
