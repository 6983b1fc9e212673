import type { Entity, EntityStatus } from '../entities/model.js';

/**
 * The mesh as pure data (docs/mesh.md): nodes, neighbour entries, links, coordinator election,
 * connected components and routes. No I/O; `mesh-service.ts` feeds it the registry and the store.
 */

export type MeshTransport = string;

export interface MeshNeighbor {
  entity_id: string;
  node_id: string;
  transport: MeshTransport;
  reachable: boolean;
  latency_ms: number | null;
  packet_loss: number | null;
  last_seen: string | null;
}

export interface SecurityIdentity {
  identity?: string;
  certificates?: string[];
  encryption?: string;
  permissions?: string[];
}

export interface MeshNode {
  entity_id: string;
  node_id: string;
  transport: MeshTransport;
  reachable: boolean;
  neighbors: MeshNeighbor[];
  capabilities: string[];
  health: string;
  readiness: string;
  trust_score: number;
  latency_ms: number | null;
  bandwidth_kbps: number | null;
  packet_loss: number | null;
  hop_count: number | null;
  last_seen: string | null;
  battery_percent: number | null;
  role: string;
  coordinator_status: string;
  supported_protocols: string[];
  security_identity: SecurityIdentity;
  /** Where the node came from: `registry`, `discovery` or both. */
  sources: string[];
  /** Where `latency_ms`/`packet_loss` come from: `discovery_probe`, `link_stats`, or null when unknown. */
  link_quality_source: string | null;
  /** The entity's kind in the registry (null for nodes only discovery knows). */
  kind: string | null;
}

export interface MeshLink {
  from_entity: string;
  to_entity: string;
  transport: MeshTransport;
  /** Measured latency of the far end (discovery probe), null when unknown: never a constant. */
  latency_ms: number | null;
  bandwidth_kbps: number | null;
  /** Measured loss of the far end (probe or link statistics), null when unknown. */
  packet_loss: number | null;
  trusted: boolean;
  active: boolean;
}

export interface Coordinator {
  entity_id: string;
  status: 'active';
  leader: {
    entity_id: string;
    elected_at: string;
    election_method: 'TrustWeighted';
    trust_score: number;
    readiness_score: number;
    term: number;
  };
  backup_entity_ids: string[];
  quorum_size: number;
}

export interface Cluster {
  cluster_id: string;
  entity_ids: string[];
  coordinator_entity: string | null;
  partition_id: string;
}

export interface Partition {
  partition_id: string;
  detected_at: string;
  resolved_at: string | null;
  clusters: Cluster[];
  affected_entities: string[];
  active: boolean;
}

export interface MeshRoute {
  route_id: string;
  source_entity: string;
  target_entity: string;
  mode: 'trust_weighted';
  hops: string[];
  trust_score: number;
  readiness_score: number;
  /** Sum of the measured latencies along the path; null when a hop's latency is unknown. */
  latency_ms: number | null;
  trusted: boolean;
  evidence: string[];
  computed_at: string;
}

export const TRUST_SCORES: Record<string, number> = { verified: 0.98, trusted: 0.95, untrusted: 0.2, compromised: 0, unknown: 0.5 };
export const MIN_ROUTE_TRUST = 0.5;
export const TRUSTED_LINK = 0.6;
export const PARTITION_POLICY = {
  allow_safe_missions: true,
  pause_unsafe_missions: true,
  require_local_coordinator: true,
  min_trust_for_relay: 0.6,
  max_partition_duration_secs: 3600,
};

const readinessScore = (r: string) => (r === 'ready' ? 1 : r === 'partial' ? 0.6 : r === 'not_ready' ? 0.2 : 0.5);
const routeReadiness = (r: string) => (r === 'ready' ? 1 : r === 'partial' ? 0.6 : 0.3);

/** Transport of an entity: tags/labels first, then the provider, else the local runtime. */
export function transportOf(e: Pick<Entity, 'tags' | 'labels' | 'provider'>): MeshTransport {
  const fromWords = (words: readonly string[]): MeshTransport | null => {
    for (const raw of words) {
      const w = raw.toLowerCase();
      if (w.includes('mqtt')) return 'mqtt';
      if (w.includes('ros2') || w.includes('ros_2')) return 'ros2';
      if (w.includes('dds')) return 'dds';
      if (w.includes('mdns')) return 'mdns';
      if (w.includes('ble') || w.includes('bluetooth')) return 'ble';
    }
    return null;
  };
  const tagged = fromWords([...e.tags, ...e.labels]);
  if (tagged) return tagged;
  const p = (e.provider ?? '').toLowerCase();
  if (p.includes('mqtt')) return 'mqtt';
  if (p.includes('ros2')) return 'ros2';
  if (p.includes('dds')) return 'dds';
  return 'local_runtime';
}

export function registryNode(e: Entity, status: EntityStatus): MeshNode {
  const sec = e.security;
  const identity: SecurityIdentity = {};
  if (sec?.identity) identity.identity = sec.identity;
  if (sec?.certificates?.length) identity.certificates = [...sec.certificates];
  if (sec?.encryption) identity.encryption = sec.encryption;
  if (sec?.permissions?.length) identity.permissions = [...sec.permissions];
  return {
    entity_id: e.id,
    node_id: `node-${e.id}`,
    transport: transportOf(e),
    reachable: status.health_status !== 'offline',
    neighbors: [],
    capabilities: [...e.capabilities],
    health: status.health_status,
    readiness: status.readiness_status,
    trust_score: TRUST_SCORES[status.trust_status] ?? 0.5,
    latency_ms: null,
    bandwidth_kbps: null,
    packet_loss: null,
    hop_count: null,
    last_seen: e.audit?.updated_at ?? null,
    battery_percent: null,
    role: 'participant',
    coordinator_status: 'none',
    supported_protocols: ['secure_messaging'],
    security_identity: identity,
    sources: ['registry'],
    link_quality_source: null,
    kind: e.kind,
  };
}

/** Neighbour entries from relationships: `from` → `to`, and back for `communicates_with`/`connected_to`. */
export function linkNeighbors(nodes: Map<string, MeshNode>, relationships: readonly { from_id: string; to_id: string; kind: string }[]): void {
  const add = (from: string, to: string) => {
    const a = nodes.get(from);
    const b = nodes.get(to);
    if (!a || !b || from === to || a.neighbors.some((n) => n.entity_id === to)) return;
    a.neighbors.push({ entity_id: to, node_id: b.node_id, transport: b.transport, reachable: b.reachable, latency_ms: b.latency_ms, packet_loss: b.packet_loss, last_seen: b.last_seen });
  };
  for (const r of relationships) {
    add(r.from_id, r.to_id);
    if (r.kind === 'communicates_with' || r.kind === 'connected_to') add(r.to_id, r.from_id);
  }
  for (const n of nodes.values()) n.neighbors.sort((x, y) => (x.entity_id < y.entity_id ? -1 : x.entity_id > y.entity_id ? 1 : 0));
}

/** Neighbour entries follow the current reachability of the node they name (after a simulated cut). */
export function refreshNeighbors(nodes: Map<string, MeshNode>): void {
  for (const n of nodes.values()) for (const nb of n.neighbors) nb.reachable = nodes.get(nb.entity_id)?.reachable ?? false;
}

export function linksOf(nodes: Map<string, MeshNode>): MeshLink[] {
  const links: MeshLink[] = [];
  for (const n of nodes.values()) {
    for (const nb of n.neighbors) {
      const far = nodes.get(nb.entity_id);
      links.push({
        from_entity: n.entity_id,
        to_entity: nb.entity_id,
        transport: nb.transport,
        latency_ms: far?.latency_ms ?? null,
        bandwidth_kbps: n.bandwidth_kbps,
        packet_loss: far?.packet_loss ?? null,
        trusted: n.trust_score >= TRUSTED_LINK,
        active: n.reachable && nb.reachable,
      });
    }
  }
  return links;
}

/** Trust-weighted election: the reachable node with the highest trust (ties → greatest id). Marks its role. */
export function elect(nodes: Map<string, MeshNode>, at: string): Coordinator | null {
  let best: MeshNode | null = null;
  for (const n of nodes.values()) {
    if (!n.reachable) continue;
    if (!best || n.trust_score > best.trust_score || (n.trust_score === best.trust_score && n.entity_id > best.entity_id)) best = n;
  }
  if (!best) return null;
  best.role = 'coordinator';
  best.coordinator_status = 'active';
  return {
    entity_id: best.entity_id,
    status: 'active',
    leader: { entity_id: best.entity_id, elected_at: at, election_method: 'TrustWeighted', trust_score: best.trust_score, readiness_score: readinessScore(best.readiness), term: 1 },
    backup_entity_ids: [],
    quorum_size: 1,
  };
}

/** Connected components of the reachable nodes over reachable neighbour entries (undirected), each sorted, by smallest id. */
export function components(nodes: Map<string, MeshNode>): string[][] {
  const adj = new Map<string, Set<string>>();
  for (const n of nodes.values()) if (n.reachable) adj.set(n.entity_id, new Set());
  for (const n of nodes.values()) {
    if (!n.reachable) continue;
    for (const nb of n.neighbors) {
      if (!nb.reachable || !adj.has(nb.entity_id)) continue;
      adj.get(n.entity_id)!.add(nb.entity_id);
      adj.get(nb.entity_id)!.add(n.entity_id);
    }
  }
  const seen = new Set<string>();
  const out: string[][] = [];
  for (const id of [...adj.keys()].sort()) {
    if (seen.has(id)) continue;
    const comp: string[] = [];
    const stack = [id];
    seen.add(id);
    while (stack.length) {
      const cur = stack.pop()!;
      comp.push(cur);
      for (const next of adj.get(cur)!) if (!seen.has(next)) (seen.add(next), stack.push(next));
    }
    out.push(comp.sort());
  }
  return out;
}

/**
 * Partition detection: when at least one link is active and the reachable nodes form two or more
 * components, one partition whose clusters are the components (local coordinator = highest-trust
 * member with trust ≥ 0.6). Returns the components too (their count is `topology_components`).
 */
export function detectPartition(nodes: Map<string, MeshNode>, links: readonly MeshLink[], partitionId: string, at: string): { partition: Partition | null; components: string[][] } {
  const comps = components(nodes);
  if (!links.some((l) => l.active) || comps.length < 2) return { partition: null, components: comps };
  const clusters = comps.map((ids, i): Cluster => {
    let coord: MeshNode | null = null;
    for (const id of ids) {
      const n = nodes.get(id)!;
      if (n.trust_score < TRUSTED_LINK) continue;
      if (!coord || n.trust_score > coord.trust_score || (n.trust_score === coord.trust_score && n.entity_id > coord.entity_id)) coord = n;
    }
    return { cluster_id: `cluster-${i + 1}`, entity_ids: ids, coordinator_entity: coord?.entity_id ?? null, partition_id: partitionId };
  });
  return {
    partition: { partition_id: partitionId, detected_at: at, resolved_at: null, clusters, affected_entities: comps.flat().sort(), active: true },
    components: comps,
  };
}

/** Signature of a partition's shape: the same clusters mean the same partition event. */
export const partitionShape = (p: Pick<Partition, 'clusters'>) =>
  p.clusters
    .map((c) => c.entity_ids.join(','))
    .sort()
    .join('|');

export class RouteError extends Error {}

/** Breadth-first shortest hop path over reachable neighbour entries, every hop with trust ≥ 0.5. */
export function trustWeightedRoute(nodes: Map<string, MeshNode>, links: readonly MeshLink[], source: string, target: string, at: Date): MeshRoute {
  let hops: string[] | null = null;
  if (source === target) hops = [source];
  else if (nodes.has(source)) {
    const prev = new Map<string, string>([[source, '']]);
    const queue = [source];
    while (queue.length && !hops) {
      const cur = queue.shift()!;
      for (const nb of nodes.get(cur)!.neighbors) {
        if (!nb.reachable || prev.has(nb.entity_id)) continue;
        prev.set(nb.entity_id, cur);
        if (nb.entity_id === target) {
          const path = [target];
          let p = cur;
          while (p) (path.unshift(p), (p = prev.get(p)!));
          hops = path;
          break;
        }
        queue.push(nb.entity_id);
      }
    }
  }
  if (!hops) throw new RouteError(`no route from ${source} to ${target}`);
  let trust = Infinity;
  let readiness = Infinity;
  for (const h of hops) {
    const n = nodes.get(h);
    if (!n) throw new RouteError(`route hop '${h}' not in mesh`);
    if (n.trust_score < MIN_ROUTE_TRUST) throw new RouteError(`route through '${h}' blocked: trust ${n.trust_score.toFixed(2)} below minimum ${MIN_ROUTE_TRUST.toFixed(2)}`);
    trust = Math.min(trust, n.trust_score);
    readiness = Math.min(readiness, routeReadiness(n.readiness));
  }
  let latency: number | null = 0;
  for (let i = 0; i + 1 < hops.length; i++) {
    const link = links.find((l) => l.from_entity === hops![i] && l.to_entity === hops![i + 1] && l.active);
    if (!link || link.latency_ms === null) {
      latency = null;
      break;
    }
    latency += link.latency_ms;
  }
  return {
    route_id: `route-${source}-${target}-${Math.floor(at.getTime() / 1000)}`,
    source_entity: source,
    target_entity: target,
    mode: 'trust_weighted',
    hops,
    trust_score: trust,
    readiness_score: readiness,
    latency_ms: latency,
    trusted: trust >= MIN_ROUTE_TRUST,
    evidence: ['mode=TrustWeighted', `hops=${hops.length}`],
    computed_at: at.toISOString(),
  };
}

const PASCAL: Record<string, string> = {
  participant: 'Participant',
  relay: 'Relay',
  coordinator: 'Coordinator',
  backup_coordinator: 'BackupCoordinator',
  gateway: 'Gateway',
  observer: 'Observer',
};
export const graphRole = (role: string) => PASCAL[role] ?? role;
export const graphTransport = (t: string) => (t === 'five_g' ? '5g' : t);
