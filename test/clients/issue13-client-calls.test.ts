import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';

/**
 * The calls the official REST clients make for recovery, autonomy, operator, mesh and decisions,
 * as they make them: same method, path and body shape, and credentials only where the client sends
 * them (docs/recovery.md, docs/autonomy.md, docs/operator.md, docs/mesh.md, docs/decisions.md). Each
 * must succeed against a live agent — except the two that the clients send anonymously to routes we
 * guard by role (executeRecovery, meshDiscover), whose 401 is the documented outcome
 * (docs/wire-decisions.md D2). The gRPC clients call the ten mesh RPCs with a bearer key.
 */
const REPO = path.resolve(__dirname, '../..');
const OPERATOR = 'd5'.repeat(32);
let a: RunningAgent;
let g: GrpcTestClient;

beforeAll(async () => {
  const root = tempDir('svc-clients-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(keys, JSON.stringify([{ key_id: 'ops', token: OPERATOR, role: 'operator' }]));
  a = await startAgent({
    configPath: path.join(root, 'svc.toml'),
    programPath: path.join(root, 'programs', 'patrol.sd'),
    grpcBind: '127.0.0.1:0',
    env: { SVC_API_KEYS_FILE: keys },
  });
  g = connectGrpc(a.agent.grpcAddress!);
});
afterAll(async () => {
  g?.close();
  await a?.close();
});

const json = { 'content-type': 'application/json' };
const get = (p: string) => a.json(p);
const post = (p: string, body: unknown, headers: Record<string, string> = {}) => a.json(p, { method: 'POST', headers: { ...json, ...headers }, body: JSON.stringify(body) });

describe('official REST client calls (no credentials unless the client sends them)', () => {
  it('recovery: plan, simulate, validate, recommend, the GETs and predictive answer 200 with what the panel reads', async () => {
    for (const p of ['/v1/recovery/plan', '/v1/recovery/simulate', '/v1/recovery/validate', '/v1/recovery/recommend']) {
      const r = await post(p, { failure: 'gps_loss' });
      expect(r.status, p).toBe(200);
    }
    expect((await post('/v1/recovery/plan', {})).body.report.plans.length).toBeGreaterThan(0);
    expect((await get('/v1/recovery/policies')).body).toHaveProperty('policies');
    expect((await get('/v1/recovery/playbooks')).body.playbooks.length).toBeGreaterThanOrEqual(5);
    expect((await get('/v1/recovery/history')).body).toMatchObject({ history: [], count: 0 });
    expect((await get('/v1/recovery/metrics')).body).toHaveProperty('metrics');
    expect((await get('/v1/recovery/recoverable-entities')).body.count).toBeGreaterThan(0);
    expect((await get('/v1/recovery/predictive')).body).toHaveProperty('indicators');
    expect((await post('/v1/recovery/predictive', { telemetry: { 'robot-1': { memory_leak: 95 } } })).body.indicators[0]).toMatchObject({ indicator: 'memory_leak', entity_id: 'robot-1' });
    const graph = (await get('/v1/recovery/graph')).body.graph;
    expect(Object.keys(graph)).toEqual(expect.arrayContaining(['nodes', 'dependency_edges', 'impact_edges', 'recovery_edges']));
    // The client sends execute anonymously: refused by the Recover rule.
    expect((await post('/v1/recovery/execute', { force_execute: true })).status).toBe(401);
  });

  it('autonomy: every GET answers 200 with the fields the panel reads', async () => {
    expect((await get('/v1/autonomy/reflex')).body.reflexes.length).toBeGreaterThan(0);
    expect(Object.keys((await get('/v1/autonomy/reflex/traces')).body)).toEqual(expect.arrayContaining(['traces', 'source', 'catalog_examples']));
    expect(Object.keys((await get('/v1/autonomy/homeostasis')).body)).toEqual(expect.arrayContaining(['reports', 'policy_source']));
    expect((await get('/v1/autonomy/immunity')).body).toHaveProperty('quarantined');
    expect((await get('/v1/autonomy/attention')).body.attention).toHaveProperty('items');
    expect((await get('/v1/autonomy/fusion')).body).toHaveProperty('fusion');
    expect(Object.keys((await get('/v1/autonomy/memory')).body)).toEqual(expect.arrayContaining(['memory', 'by_category']));
    expect((await get('/v1/autonomy/maintenance/windows')).body).toHaveProperty('windows');
  });

  it('operator: missions listed anonymously; pause, resume and cancel with the client’s key', async () => {
    const missions = (await get('/v1/operator/missions')).body.missions as Array<{ mission_id?: string; id?: string; entity_id?: string }>;
    expect(missions.length).toBeGreaterThan(0);
    const id = missions[0]!.mission_id ?? missions[0]!.entity_id ?? missions[0]!.id;
    const auth = { authorization: `Bearer ${OPERATOR}` };
    expect((await post('/v1/operator/mission/pause', { mission_id: id }, auth)).status).toBe(200);
    expect((await post('/v1/operator/mission/resume', { mission_id: id }, auth)).status).toBe(200);
    expect((await post('/v1/operator/mission/cancel', { mission_id: id }, auth)).status).toBe(200);
  });

  it('mesh: the GETs, find-capability and simulate-partition answer 200; discover sent anonymously is 401', async () => {
    for (const p of ['topology', 'nodes', 'routes', 'health', 'partitions', 'graph', 'merge-report']) {
      expect((await get(`/v1/mesh/${p}`)).status, p).toBe(200);
    }
    const nodes = (await get('/v1/mesh/nodes')).body.nodes as Array<{ id?: string; entity_id?: string }>;
    expect((await post('/v1/mesh/find-capability', { capability: 'navigation' })).status).toBe(200);
    expect((await post('/v1/mesh/simulate-partition', { entity_ids: [nodes[0]!.id ?? nodes[0]!.entity_id] })).status).toBe(200);
    expect((await post('/v1/mesh/discover', {})).status).toBe(401);
  });

  it('decisions: list, policies and simulate answer 200 against the server program', async () => {
    expect((await get('/v1/decisions')).body).toHaveProperty('decision_trees');
    expect((await get('/v1/decision-policies')).body).toHaveProperty('offline_policies');
    expect((await post('/v1/decisions/simulate', {})).status).toBe(200);
  });
});

describe('official gRPC client calls: the ten mesh RPCs with a bearer key', () => {
  it('each answers OK with the REST body; health carries total_nodes', async () => {
    const md = bearer(OPERATOR);
    for (const rpc of ['GetMeshTopology', 'GetMeshNodes', 'GetMeshPartitions', 'GetMeshHealth', 'GetMeshGraph', 'GetMeshMergeReport']) {
      const r = await callUnary(g.client, rpc, {}, md);
      expect(r.ok, `${rpc}: ${r.message}`).toBe(true);
    }
    expect((await callUnary(g.client, 'GetMeshHealth', {}, md)).json.health.total_nodes).toBeGreaterThan(0);
    expect((await callUnary(g.client, 'GetMeshRoutes', { query: '' }, md)).ok).toBe(true);
    expect((await callUnary(g.client, 'FindMeshCapability', { body_json: JSON.stringify({ capability: 'navigation' }) }, md)).ok).toBe(true);
    const nodes = (await callUnary(g.client, 'GetMeshNodes', {}, md)).json.nodes as Array<{ id?: string; entity_id?: string }>;
    expect((await callUnary(g.client, 'SimulateMeshPartition', { body_json: JSON.stringify({ entity_ids: [nodes[0]!.id ?? nodes[0]!.entity_id] }) }, md)).ok).toBe(true);
    // An operator lacks Provision: the client's DiscoverMesh is refused with a real status.
    expect((await callUnary(g.client, 'DiscoverMesh', { body_json: '{}' }, md)).statusName).toBe('PERMISSION_DENIED');
  });
});
