import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, entityAgent, ids, post, YARD_PROGRAM, type EntityAgent } from './fixture.js';

let running: EntityAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(options: Parameters<typeof entityAgent>[0] = {}) {
  const a = await entityAgent(options);
  running.push(a);
  return a;
}
const edge = (from_id: string, kind: string, to_id: string) => ({ from_id, kind, to_id });

describe('entity relationships, impact analysis, graph, query and traceability', () => {
  it('derives relationships of every kind the sources imply', async () => {
    const a = await agent({ program: YARD_PROGRAM });
    const g = (await a.json('/v1/entities/graph')).body;
    expect(g.node_count).toBe(g.graph.nodes.length);
    expect(g.edge_count).toBe(g.graph.edges.length);
    expect(ids(g.graph.nodes)).toContain('mission:insp-01:patrol');
    // Nodes are full records.
    expect(g.graph.nodes.find((n: { id: string }) => n.id === 'gps-a')).toMatchObject({ entity_type: 'gps', security: { identity: 'spiffe://yard/gps-a' } });
    const edges = g.graph.edges.map((e: { from_id: string; kind: string; to_id: string }) => `${e.from_id} ${e.kind} ${e.to_id}`);
    for (const expected of [
      'org:Yard Inspection owns yard-fleet',
      'org:Yard Inspection owns north-yard',
      'yard-fleet contains insp-01',
      'insp-01 contains insp-01-cpu',
      'insp-01 contains insp-01:front_cam',
      'insp-01-lidar connected_to insp-01-cpu',
      'gps-a assigned_to insp-01',
      'gps-a depends_on ublox',
      'ublox depends_on package:gnss-driver',
      'gps-b backs_up gps-a',
      'insp-01 located_in north-yard:bay-1',
      'cam-gate located_in north-yard:gate',
      'hz-forklifts located_in north-yard:bay-1',
      'north-yard contains north-yard:bay-1',
      'ana belongs_to team:night-shift',
      'ana monitors insp-01',
      'insp-01 participates_in mission:insp-01:patrol',
      'insp-02 participates_in mission:insp-02:mission',
      'yard-fleet managed_by bo',
    ]) {
      expect(edges, expected).toContain(expected);
    }
    expect(new Set(g.graph.edges.map((e: { kind: string }) => e.kind))).toEqual(
      new Set(['owns', 'contains', 'connected_to', 'assigned_to', 'depends_on', 'backs_up', 'located_in', 'belongs_to', 'monitors', 'participates_in', 'managed_by']),
    );
    // A relationship declared in the configuration that names an unknown entity is kept aside, not drawn.
    expect(g.dangling_edges).toEqual([{ from_id: 'insp-02', to_id: 'dock-9', kind: 'depends_on', missing: ['dock-9'], diagnostic: "insp-02 depends_on dock-9: no entity 'dock-9'" }]);
  });

  it('answers an entity’s edges, the impact of its failure and its dependency chain', async () => {
    const a = await agent();
    const r = (await a.json('/v1/entities/gps-a/relationships')).body;
    expect(r).toEqual({
      version: 'v1',
      entity_id: 'gps-a',
      relationships: [edge('gps-a', 'assigned_to', 'insp-01'), edge('gps-a', 'depends_on', 'ublox'), edge('gps-b', 'backs_up', 'gps-a')],
      impact: expect.any(Array),
      dependency_chain: ['ublox', 'package:gnss-driver'],
    });
    // Outgoing edges plus whoever depends on / is assigned to what is hit.
    const provider = (await a.json('/v1/entities/ublox/relationships')).body;
    expect(provider.impact).toEqual(['gps-a', 'gps-b', 'insp-01', 'insp-01-cpu', 'insp-01-lidar', 'north-yard:bay-1', 'ouster', 'package:gnss-driver', 'package:lidar-kit']);
    expect(provider.dependency_chain).toEqual(['package:gnss-driver']);
    // A leaf that nothing depends on impacts nothing.
    expect((await a.json('/v1/entities/hz-forklifts/relationships')).body).toMatchObject({ impact: ['north-yard:bay-1'], dependency_chain: [] });
    // A dependency cycle stops the chain instead of looping.
    expect((await post(a, '/v1/entities/relationships', ADMIN, { from_id: 'package:gnss-driver', to_id: 'gps-a', kind: 'depends_on' })).status).toBe(200);
    expect((await a.json('/v1/entities/gps-a/relationships')).body.dependency_chain).toEqual(['ublox', 'package:gnss-driver']);
    expect((await a.json('/v1/entities/ublox/relationships')).body.dependency_chain).toEqual(['package:gnss-driver', 'gps-a']);
  });

  it('runs structured queries with relationships, impact, metadata and paging, and rejects bad bodies', async () => {
    const a = await agent();
    const q = async (body: unknown) => {
      const r = await a.json('/v1/entities/query', { method: 'POST', body: JSON.stringify(body) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.result.query).toEqual(body);
      return r.body.result;
    };
    expect(ids((await q({ kind: ['gps', 'sensor'], related_to: { id: 'insp-01', kind: 'assigned_to', direction: 'out' } })).entities)).toEqual(['gps-a', 'gps-b', 'insp-01-lidar']);
    expect(ids((await q({ impacted_by: 'ublox', kind: 'robot' })).entities)).toEqual(['insp-01']);
    expect(ids((await q({ related_to: { id: 'insp-01' } })).entities)).toEqual(['ana', 'gps-a', 'gps-b', 'insp-01-cpu', 'insp-01-lidar', 'north-yard:bay-1', 'yard-fleet']);
    const page = await q({ metadata: { redundant_group: 'gps' }, sort: 'id', limit: 1, offset: 1 });
    expect(page).toMatchObject({ count: 1, total: 2 });
    expect(page.entities[0]).toMatchObject({ id: 'gps-b', entity_type: 'gps', provider: 'ublox' });
    expect(ids((await q({ any_tags: ['critical', 'nope'], readiness: ['ready', 'partial'] })).entities)).toEqual(['gps-a']);
    expect(ids((await q({ capabilities: ['positioning'], firmware_version: '1.1.0' })).entities)).toEqual(['gps-b']);
    expect((await q({ search: 'zzz' })).count).toBe(0);

    const bad = async (body: unknown, message: RegExp) => {
      const r = await a.json('/v1/entities/query', { method: 'POST', body: JSON.stringify(body) });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(message);
    };
    await bad({ limit: 0 }, /^invalid field 'limit'/);
    await bad({ health: 'bogus' }, /^invalid field 'health'/);
    await bad({ related_to: {} }, /^missing related_to\.id$/);
    await bad({ related_to: { id: 'x', kind: 'likes' } }, /^invalid field 'related_to\.kind'/);
  });

  it('traces missions to robots, capabilities, devices, providers and packages', async () => {
    const a = await agent({ program: YARD_PROGRAM });
    const t = (await a.json('/v1/entities/traceability')).body.traceability;
    const rows = t.rows.filter((r: { robot_id: string }) => r.robot_id === 'insp-01');
    expect(rows.map((r: { capability: string }) => r.capability)).toEqual(['camera', 'contact', 'motor', 'navigation', 'positioning', 'ranging']);
    expect(rows.find((r: { capability: string }) => r.capability === 'positioning')).toEqual({
      mission_id: 'mission:insp-01:patrol',
      robot_id: 'insp-01',
      capability: 'positioning',
      provided_by: ['gps-a', 'gps-b'],
      providers: ['ublox'],
      packages: ['gnss-driver'],
      satisfied: true,
    });
    expect(rows.find((r: { capability: string }) => r.capability === 'navigation')).toMatchObject({ provided_by: [], satisfied: false });
    expect(rows.find((r: { capability: string }) => r.capability === 'camera')).toMatchObject({ provided_by: ['insp-01:front_cam'], satisfied: true });
    expect(t.summary).toEqual({ robots: 2, missions: 3, capabilities: 6, satisfied: 5, unsatisfied: 1 });
    expect(t.unassigned_devices).toEqual(['cam-gate']);
    expect(t.missions_without_robots).toEqual(['mission:night-survey']);
    const one = (await a.json('/v1/entities/traceability?entity_id=ouster')).body.traceability;
    expect(one.rows).toEqual([expect.objectContaining({ capability: 'ranging', provided_by: ['insp-01-lidar'], packages: ['lidar-kit'] })]);
    const missing = await a.json('/v1/entities/traceability?entity_id=ghost');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("entity 'ghost' not found");
  });
});
