import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { AUDITOR, OPERATOR, startTwinAgent, twinProject } from './fixture.js';

/** The twin RPCs under the names and request messages the reference clients call (docs/twins.md), answering what REST answers. */
describe('twins over gRPC', () => {
  let agent: RunningAgent;
  let g: GrpcTestClient;
  beforeAll(async () => {
    agent = await startTwinAgent(twinProject(), { grpc: true });
    g = connectGrpc(agent.agent.grpcAddress!);
  });
  afterAll(async () => {
    g.close();
    await agent.close();
  });

  it('the contract names every twin RPC; the HRI routes have none', () => {
    const rpc = (path: string, method: string) => SPECS.find((s) => s.path === path && s.method === method)?.rpc;
    expect(rpc('/v1/twins', 'GET')).toEqual({ name: 'ListTwins', request: 'Empty' });
    expect(rpc('/v1/twins/usage', 'GET')).toEqual({ name: 'GetTwinUsage', request: 'Empty' });
    expect(rpc('/v1/twins/{id}', 'GET')).toEqual({ name: 'GetTwin', request: 'EntityIdRequest' });
    expect(rpc('/v1/twins/{id}/history', 'GET')).toEqual({ name: 'GetTwinHistory', request: 'EntityIdRequest' });
    expect(rpc('/v1/twins/sync', 'POST')).toEqual({ name: 'SyncTwin', request: 'QueryRequest' });
    expect(rpc('/v1/twins/{id}/snapshots', 'POST')).toEqual({ name: 'PushTwinSnapshot', request: 'EntityBodyRequest' });
    expect(rpc('/v1/twins/import-replay', 'POST')).toEqual({ name: 'ImportTwinReplay', request: 'JsonBodyRequest' });
    const hri = SPECS.filter((s) => s.path.startsWith('/v1/hri/'));
    expect(hri.map((s) => `${s.method} ${s.path}`).sort()).toEqual([
      'GET /v1/hri/collaboration',
      'GET /v1/hri/context',
      'GET /v1/hri/sessions',
      'GET /v1/hri/sessions/{id}/replay',
      'POST /v1/hri/sessions',
      'POST /v1/hri/sessions/{id}/annotate',
    ]);
    expect(hri.every((s) => s.rpc === undefined && s.jsonRpc === undefined)).toBe(true);
  });

  it('SyncTwin needs Operate, GetTwin/GetTwinHistory/ListTwins/GetTwinUsage read what REST reads; writes are audited', async () => {
    expect((await callUnary(g.client, 'SyncTwin', { query: 'twin_id=g1' })).status).toBe(Status.UNAUTHENTICATED);
    expect((await callUnary(g.client, 'SyncTwin', { query: 'twin_id=g1' }, bearer(AUDITOR))).status).toBe(Status.PERMISSION_DENIED);
    const sync = await callUnary(g.client, 'SyncTwin', { query: 'twin_id=g1' }, bearer(OPERATOR));
    expect(sync.ok).toBe(true);
    expect(sync.json.twin_id).toBe('g1');
    const got = await callUnary(g.client, 'GetTwin', { entity_id: 'g1' });
    expect(got.json).toEqual((await agent.json('/v1/twins/g1')).body);
    const missing = await callUnary(g.client, 'GetTwin', { entity_id: 'nope' });
    expect(missing.status).toBe(Status.NOT_FOUND);

    const push = await callUnary(
      g.client,
      'PushTwinSnapshot',
      { entity_id: 'g2', body_json: JSON.stringify({ program: 'x.sd', mission_twin: { risks: { mission_ready: false, readiness_score: 40 } } }) },
      bearer(OPERATOR),
    );
    expect(push.json.snapshot).toMatchObject({ twin_id: 'g2', tenant_id: 'default' });
    const bad = await callUnary(g.client, 'PushTwinSnapshot', { entity_id: 'g2', body_json: JSON.stringify({ twin_id: 'g3', program: 'x.sd' }) }, bearer(OPERATOR));
    expect(bad.status).toBe(Status.INVALID_ARGUMENT);
    const imported = await callUnary(g.client, 'ImportTwinReplay', { body_json: JSON.stringify({ program: 'programs/dock.sd' }) }, bearer(OPERATOR));
    expect(imported.json).toMatchObject({ ok: true, twin_id: 'dock' });

    const history = await callUnary(g.client, 'GetTwinHistory', { entity_id: 'g1' });
    expect(history.json.snapshots).toHaveLength(1);
    const list = await callUnary(g.client, 'ListTwins', {});
    expect(list.json.twins.map((t: any) => t.twin_id)).toEqual(['dock', 'g1', 'g2']);
    expect((await callUnary(g.client, 'GetTwinUsage', {})).json).toMatchObject({ twin_count: 3, push_count: 2, sync_count: 1, history_count: 1 });

    const records = [...agent.agent.services.audit.chain.records()].map((r) => JSON.stringify(r));
    for (const name of ['SyncTwin', 'PushTwinSnapshot', 'ImportTwinReplay']) expect(records.filter((r) => r.includes(name)).length, name).toBe(1);
    expect(records.some((r) => r.includes('GetTwin"') || r.includes('ListTwins'))).toBe(false);
  });
});
