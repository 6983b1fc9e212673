import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProgramFacts } from '../../agent/entities/program-facts.js';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import { lossByDevice, MESH_FILE } from '../../agent/mesh/mesh-service.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer as grpcBearer, callUnary, connectGrpc } from '../helpers/grpc-client.js';
import { MOSQUITTO_SKIP_REASON, freePort, startMosquitto } from '../helpers/mosquitto.js';
import { writeProject } from '../helpers/project-fixture.js';

const ADMIN = 'm1'.repeat(32);
const json = { 'content-type': 'application/json' };
const auth = (t: string) => ({ Authorization: `Bearer ${t}`, ...json });

/**
 * A small mesh: `a` (verified, coordinator) —communicates_with— `b` —communicates_with— `c`, and `d`
 * alone. `a` advertises a thermal camera; `c` is only partially ready and flies a mission.
 */
function meshProject(extra = ''): string {
  return writeProject({
    'svc.toml': `
[project]
name = "Mesh"
version = "0.1.0"
[extends]
environment = "layers/mesh.toml"
`,
    'layers/mesh.toml': `
[[entities]]
id = "a"
kind = "robot"
trust_status = "verified"
health_status = "healthy"
readiness_status = "ready"
capabilities = ["thermal_camera", "navigation"]
tags = ["mqtt"]
[[entities]]
id = "b"
kind = "robot"
trust_status = "trusted"
health_status = "healthy"
readiness_status = "ready"
capabilities = ["navigation"]
[[entities]]
id = "c"
kind = "robot"
trust_status = "trusted"
health_status = "healthy"
readiness_status = "partial"
[[entities]]
id = "d"
kind = "robot"
trust_status = "untrusted"
health_status = "healthy"
[[relationships]]
from_id = "a"
to_id = "b"
kind = "communicates_with"
[[relationships]]
from_id = "b"
to_id = "c"
kind = "communicates_with"
${extra}`,
  });
}

const PROGRAM: ProgramFacts = {
  file: 'mesh.sd',
  robots: [
    { name: 'b', sensors: [], actuators: [], missions: [{ name: 'haul' }] },
    { name: 'c', sensors: [], actuators: [], missions: [{ name: 'survey' }] },
  ],
  missionPlans: [],
};

let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function agent(options: { stateDir?: string; configPath?: string; env?: Record<string, string>; grpc?: boolean } = {}) {
  const a = await startAgent({
    stateDir: options.stateDir ?? tempDir(),
    configPath: options.configPath ?? meshProject(),
    env: { SVC_API_KEY: ADMIN, ...(options.env ?? {}) },
    programFacts: () => PROGRAM,
    ...(options.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
  });
  running.push(a);
  return a;
}
const get = (a: RunningAgent, p: string) => a.json(p);
const post = (a: RunningAgent, p: string, body: unknown, token: string | null = null) =>
  a.json(p, { method: 'POST', headers: token ? auth(token) : json, body: JSON.stringify(body) });
async function keyFor(a: RunningAgent, role: string): Promise<string> {
  const r = await post(a, '/v1/admin/api-keys', { role }, ADMIN);
  expect(r.status).toBe(200);
  return r.body.token as string;
}
function events(a: RunningAgent): PlatformEvent[] {
  const out: PlatformEvent[] = [];
  a.agent.services.bus.subscribe((e) => out.push(e));
  return out;
}

describe('entity mesh over the registry and the persisted mesh store', () => {
  it('builds nodes, links and the trust-weighted coordinator from the registry; link quality is unknown, never a constant (F15)', async () => {
    const a = await agent();
    const topo = await get(a, '/v1/mesh/topology');
    expect(topo.status).toBe(200);
    expect(topo.body.version).toBe('v1');
    expect(topo.body.mesh_id).toBe('control-center');
    const nodes = topo.body.topology.nodes.filter((n: any) => ['a', 'b', 'c', 'd'].includes(n.entity_id));
    expect(nodes.map((n: any) => n.entity_id)).toEqual(['a', 'b', 'c', 'd']);
    const byId = Object.fromEntries(nodes.map((n: any) => [n.entity_id, n]));
    expect(byId.a.transport).toBe('mqtt');
    expect(byId.b.transport).toBe('local_runtime');
    expect(byId.a.trust_score).toBe(0.98);
    expect(byId.d.trust_score).toBe(0.2);
    // Every relationship is a neighbour entry (b participates in its mission); communicates_with runs both ways.
    expect(byId.b.neighbors.map((n: any) => n.entity_id)).toEqual(['a', 'c', 'mission:b:haul']);
    expect(byId.d.neighbors).toEqual([]);
    expect(topo.body.topology.coordinator.entity_id).toBe('a');
    expect(byId.a.role).toBe('coordinator');
    const ab = topo.body.topology.links.find((l: any) => l.from_entity === 'a' && l.to_entity === 'b');
    expect(ab).toMatchObject({ latency_ms: null, packet_loss: null, trusted: true, active: true });
    const graph = await get(a, '/v1/mesh/graph');
    expect(graph.body.graph.nodes.find((n: any) => n.id === 'a').role).toBe('Coordinator');
    expect(graph.body.graph.edges.find((e: any) => e.from === 'a' && e.to === 'b').latency_ms).toBeNull();
    const nodesBody = (await get(a, '/v1/mesh/nodes')).body;
    expect(nodesBody.count).toBe(nodesBody.nodes.length);
  });

  it('check 17: a route a→b is trust-weighted, lands in the route history and survives a restart (F16)', async () => {
    const stateDir = tempDir();
    const configPath = meshProject();
    const a = await agent({ stateDir, configPath });
    expect((await get(a, '/v1/mesh/routes')).body).toEqual({ version: 'v1', history: [], count: 0 });
    const r = await get(a, '/v1/mesh/routes?source=a&target=b');
    expect(r.status).toBe(200);
    expect(r.body.route).toMatchObject({ source_entity: 'a', target_entity: 'b', hops: ['a', 'b'], mode: 'trust_weighted', trust_score: 0.95, trusted: true, latency_ms: null });
    expect(r.body.route.evidence).toEqual(['mode=TrustWeighted', 'hops=2']);
    const two = await get(a, '/v1/mesh/routes?source=a&target=c');
    expect(two.body.route.hops).toEqual(['a', 'b', 'c']);
    const blocked = await get(a, '/v1/mesh/routes?source=a&target=d');
    expect(blocked.status).toBe(400);
    expect(blocked.body.error).toBe('no route from a to d');
    const history = (await get(a, '/v1/mesh/routes')).body;
    expect(history.count).toBe(2);
    expect(history.history.map((h: any) => h.hops)).toEqual([['a', 'b'], ['a', 'b', 'c']]);
    await a.close();
    running = running.filter((x) => x !== a);
    const again = await agent({ stateDir, configPath });
    const kept = (await get(again, '/v1/mesh/routes')).body;
    expect(kept.history.map((h: any) => h.route_id)).toEqual(history.history.map((h: any) => h.route_id));
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, MESH_FILE), 'utf8')).routes).toHaveLength(2);
  });

  it('a hop below trust 0.5 blocks the route', async () => {
    const a = await agent({ configPath: meshProject(`[[relationships]]\nfrom_id = "d"\nto_id = "a"\nkind = "communicates_with"\n`) });
    const r = await get(a, '/v1/mesh/routes?source=d&target=a');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'bad_request', error: "route through 'd' blocked: trust 0.20 below minimum 0.50" });
  });

  it('check 18: find-capability lists each advertising entity once (F18); a missing capability is 400', async () => {
    const a = await agent();
    const one = await post(a, '/v1/mesh/find-capability', { capability: 'thermal_camera' });
    expect(one.status).toBe(200);
    expect(one.body.matches).toHaveLength(1);
    expect(one.body.matches[0]).toMatchObject({ entity_id: 'a', transport: 'mqtt', verified: true });
    const nav = await post(a, '/v1/mesh/find-capability', { capability: 'navigation' });
    expect(nav.body.matches.map((m: any) => m.entity_id)).toEqual(['a', 'b']);
    const missing = await post(a, '/v1/mesh/find-capability', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('capability required');
    const bad = await a.json('/v1/mesh/find-capability', { method: 'POST', headers: json, body: '{"capability":' });
    expect(bad.status).toBe(400);
  });

  it('check 19: discover is Provision (401/403/200), stores nodes and publishes FleetMemberJoined per new node only', async () => {
    const stateDir = tempDir();
    const a = await agent({ stateDir });
    const seen = events(a);
    const operator = await keyFor(a, 'operator');
    const supervisor = await keyFor(a, 'supervisor');
    expect((await post(a, '/v1/mesh/discover', {})).status).toBe(401);
    expect((await post(a, '/v1/mesh/discover', {}, operator)).status).toBe(403);
    const ok = await post(a, '/v1/mesh/discover', {}, supervisor);
    expect(ok.status).toBe(200);
    const d = ok.body.discovery;
    expect(d.sources).toEqual(['local_runtime', 'entity_graph']);
    const ids: string[] = d.discovered.map((n: any) => n.entity_id);
    expect(ids).toEqual(expect.arrayContaining(['a', 'b', 'c', 'd']));
    expect(d.new_entities).toBe(ids.length);
    expect(d.updated_entities).toBe(0);
    expect(d.discovered.find((n: any) => n.entity_id === 'b').neighbors.map((n: any) => n.entity_id)).toEqual(['a', 'c', 'mission:b:haul']);
    const joined = seen.filter((e) => e.type === 'FleetMemberJoined');
    expect(joined.map((e) => e.entity_id).sort()).toEqual([...ids].sort());
    expect(joined.every((e) => e.source === 'svc-mesh')).toBe(true);
    const stored = JSON.parse(fs.readFileSync(path.join(stateDir, MESH_FILE), 'utf8'));
    expect(Object.keys(stored.nodes).sort()).toEqual([...ids].sort());
    // Again: nothing new, every node updated, no further event.
    const again = await post(a, '/v1/mesh/discover', { sources: ['LOCAL', 'bogus'] }, supervisor);
    expect(again.body.discovery).toMatchObject({ sources: ['local_runtime'], new_entities: 0, updated_entities: ids.length });
    expect(seen.filter((e) => e.type === 'FleetMemberJoined')).toHaveLength(ids.length);
    // Discovery lands in the audit of action POSTs.
    const skipped = await post(a, '/v1/mesh/discover', { sources: ['ros2', 'mqtt'] }, supervisor);
    expect(skipped.body.discovery.discovered).toEqual([]);
    expect(skipped.body.discovery.skipped.map((s: any) => s.source).sort()).toEqual(['mqtt', 'ros2']);
  });

  it('check 20: simulate-partition without entity_ids is 400 entity_ids required', async () => {
    const a = await agent();
    for (const body of [{}, { entity_ids: [] }]) {
      const r = await post(a, '/v1/mesh/simulate-partition', body);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: 'entity_ids required', code: 'bad_request' });
    }
  });

  it('simulate-partition: affected = isolated + cut off from the coordinator; paused = linked missions of not-ready entities (F19)', async () => {
    const a = await agent();
    const r = await post(a, '/v1/mesh/simulate-partition', { entity_ids: ['b', 'nobody'] });
    expect(r.status).toBe(200);
    const rep = r.body.report;
    expect(rep.isolated_entities).toEqual(['b']);
    // c and both missions hung off the coordinator's component only through b.
    expect(rep.cut_off_entities).toEqual(['c', 'mission:b:haul', 'mission:c:survey']);
    expect(rep.partition.affected_entities).toEqual(['b', 'c', 'mission:b:haul', 'mission:c:survey']);
    expect(rep.coordinator_entity).toBe('a');
    // c (partial) pauses its mission; b (ready) keeps its own.
    expect(rep.paused_missions).toEqual(['mission:c:survey']);
    expect(rep.continued_missions).toEqual(['mission:b:haul']);
    expect(rep.evidence).toContain('paused_unsafe:mission:c:survey');
    expect(rep.evidence).toContain('cut_off:c');
    // The coordinator itself cut: a new one is elected among the rest; nothing stored.
    const before = fs.existsSync(path.join(a.stateDir, MESH_FILE)) ? fs.readFileSync(path.join(a.stateDir, MESH_FILE), 'utf8') : null;
    const lead = (await post(a, '/v1/mesh/simulate-partition', { entity_ids: ['a'] })).body.report;
    expect(lead.isolated_entities).toEqual(['a']);
    expect(lead.coordinator_entity).not.toBe('a');
    const after = fs.existsSync(path.join(a.stateDir, MESH_FILE)) ? fs.readFileSync(path.join(a.stateDir, MESH_FILE), 'utf8') : null;
    expect(after).toBe(before);
  });

  it('partitions are detected, kept across restarts and resolved when the topology heals; health counts components (F16, F17)', async () => {
    const stateDir = tempDir();
    const configPath = meshProject();
    const a = await agent({ stateDir, configPath });
    const first = (await get(a, '/v1/mesh/partitions')).body;
    expect(first.active).toBe(1);
    const p = first.partitions[0];
    const clusters = p.clusters.map((c: any) => c.entity_ids);
    expect(clusters).toContainEqual(['a', 'b', 'c', 'mission:b:haul', 'mission:c:survey']);
    expect(clusters).toContainEqual(['d']);
    const comps = clusters.length;
    expect(comps).toBeGreaterThanOrEqual(2);
    const health = (await get(a, '/v1/mesh/health')).body.health;
    expect(health.topology_components).toBe(comps);
    expect(health.active_partitions).toBe(1);
    expect(health.coordinator_status).toBe('active');
    expect(health.issues).toContain('1 active partition(s)');
    expect(health.total_nodes).toBeGreaterThanOrEqual(4);
    await a.close();
    running = running.filter((x) => x !== a);
    const b = await agent({ stateDir, configPath });
    const kept = (await get(b, '/v1/mesh/partitions')).body;
    expect(kept.partitions.map((x: any) => x.partition_id)).toEqual([p.partition_id]);
    // Linking d to c joins its component: the recorded partition is resolved, a new one (fewer clusters) may follow.
    const rel = await post(b, '/v1/entities/relationships', { from_id: 'd', to_id: 'c', kind: 'communicates_with' }, ADMIN);
    expect(rel.status).toBe(200);
    const healed = (await get(b, '/v1/mesh/partitions')).body;
    const old = healed.partitions.find((x: any) => x.partition_id === p.partition_id);
    expect(old.active).toBe(false);
    expect(old.resolved_at).not.toBeNull();
    const h2 = (await get(b, '/v1/mesh/health')).body.health;
    expect(h2.topology_components).toBe(comps - 1 >= 2 ? comps - 1 : 0);
  });

  it('merge report compares the stored nodes with the current registry and lists the active partitions', async () => {
    const a = await agent();
    const empty = (await get(a, '/v1/mesh/merge-report')).body.report;
    expect(empty.plan.conflicts.filter((c: any) => c.kind !== 'duplicate_identity')).toEqual([]);
    expect(empty.plan.partition_ids).toHaveLength(1);
    expect((await post(a, '/v1/mesh/discover', {}, ADMIN)).status).toBe(200);
    // `b` gains a capability after discovery; `c` goes offline.
    const reg = await post(a, '/v1/entities/register', { id: 'b', entity_type: 'robot', capabilities: ['navigation', 'lifting'], trust_status: 'trusted', readiness_status: 'ready' }, ADMIN);
    expect(reg.status).toBe(200);
    const report = (await get(a, '/v1/mesh/merge-report')).body.report;
    const mismatch = report.plan.conflicts.find((c: any) => c.conflict_id === 'capability-mismatch-b');
    expect(mismatch).toMatchObject({ kind: 'capability_advertisement_mismatch', entity_ids: ['b'], resolution: 'prefer_newer_timestamp' });
    expect(report.evidence).toContain('resolved:capability-mismatch-b');
    expect(report.conflicts_resolved).toBe(report.plan.conflicts.length);
    expect(report.plan.sync_actions).toContain('sync_entity_state');
  });

  it('gRPC: the ten mesh RPCs answer; GetMeshHealth carries health.total_nodes; DiscoverMesh needs Provision', async () => {
    const a = await agent({ grpc: true });
    const g = connectGrpc(a.agent.grpcAddress!);
    try {
      const h = await callUnary(g.client, 'GetMeshHealth', {}, grpcBearer(ADMIN));
      expect(h.ok).toBe(true);
      const body = h.json;
      expect(body.health.total_nodes).toBe((await get(a, '/v1/mesh/health')).body.health.total_nodes);
      const route = await callUnary(g.client, 'GetMeshRoutes', { query: 'source=a&target=b' }, grpcBearer(ADMIN));
      expect(route.json.route.hops).toEqual(['a', 'b']);
      const denied = await callUnary(g.client, 'DiscoverMesh', { body_json: '{}' });
      expect(denied.statusName).toBe('UNAUTHENTICATED');
      const found = await callUnary(g.client, 'FindMeshCapability', { body_json: JSON.stringify({ capability: 'thermal_camera' }) }, grpcBearer(ADMIN));
      expect(found.json.matches).toHaveLength(1);
    } finally {
      g.close();
    }
  });

  it('packet loss comes from HAL link counters when a device has any (F15)', () => {
    const loss = lossByDevice([
      { transport: 'serial', devices: ['gps-1'], link: { frames_in: 95, malformed_in: 5 } },
      { transport: 'mqtt', devices: ['cam-1'], link: { frames_in: 0, malformed_in: 0 } },
    ]);
    expect(loss.get('gps-1')).toBe(0.05);
    expect(loss.has('cam-1')).toBe(false);
  });
});

describe.skipIf(MOSQUITTO_SKIP_REASON !== null)('live MQTT mesh discovery against a real broker', () => {
  it('SVC_LIVE_MQTT probes the broker: a stored node with the measured connect latency; a dead broker adds nothing', async () => {
    const broker = await startMosquitto();
    try {
      const stateDir = tempDir();
      const configPath = meshProject();
      const env = { SVC_LIVE_MQTT: '1', SVC_MQTT_BROKER: `${broker.host}:${broker.port}`, SVC_MESH_DISCOVERY_TIMEOUT_MS: '3000' };
      const a = await agent({ stateDir, configPath, env });
      const r = await post(a, '/v1/mesh/discover', { sources: ['mqtt'] }, ADMIN);
      expect(r.status).toBe(200);
      const node = r.body.discovery.discovered.find((n: any) => n.entity_id === 'mqtt-broker');
      expect(node).toMatchObject({ transport: 'mqtt', reachable: true, trust_score: 0.75, packet_loss: 0, hop_count: 1, link_quality_source: 'discovery_probe' });
      expect(node.latency_ms).toBeGreaterThan(0);
      expect(r.body.discovery.probes[0]).toMatchObject({ source: 'mqtt', ok: true });
      await a.close();
      running = running.filter((x) => x !== a);
      const b = await agent({ stateDir, configPath, env: { ...env, SVC_MQTT_BROKER: `127.0.0.1:${await freePort()}`, SVC_MESH_DISCOVERY_TIMEOUT_MS: '500' } });
      const kept = (await get(b, '/v1/mesh/nodes')).body.nodes.find((n: any) => n.entity_id === 'mqtt-broker');
      expect(kept.latency_ms).toBe(node.latency_ms);
      const dead = await post(b, '/v1/mesh/discover', { sources: ['mqtt'] }, ADMIN);
      expect(dead.body.discovery.discovered).toEqual([]);
      expect(dead.body.discovery.probes[0].ok).toBe(false);
    } finally {
      await broker.dispose();
    }
  });
});
