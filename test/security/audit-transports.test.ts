import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer as grpcBearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { layeredProject } from '../entities/fixture.js';

/**
 * The audit rule of docs/security.md §10: a mutation is recorded exactly once, whatever the transport;
 * a read (GET or read-like POST) never, authenticated or not. Before this rule, every non-GET REST
 * route was recorded (so anonymous read-like POSTs filled the fsynced chain), a JSON-RPC mutation was
 * recorded twice (the gateway route and the inner operation), and an anonymous verify published
 * readiness events into the chain.
 */
const REPO = path.resolve(__dirname, '../..');
const ADMIN = 'a7'.repeat(32);
const auth = { Authorization: `Bearer ${ADMIN}` };
const jsonPost = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

let running: RunningAgent[] = [];
let clients: GrpcTestClient[] = [];
afterEach(async () => {
  clients.forEach((c) => c.close());
  clients = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function start(configPath: string, programPath?: string) {
  const a = await startAgent({
    stateDir: tempDir(),
    configPath,
    ...(programPath ? { programPath } : {}),
    grpcBind: '127.0.0.1:0',
    env: { SVC_API_KEY: ADMIN, SVC_SESSION_JWT_SECRET: 'audit-transports' },
  });
  running.push(a);
  const g = connectGrpc(a.agent.grpcAddress!);
  clients.push(g);
  return { a, g };
}

async function records(a: RunningAgent): Promise<Array<{ event_type: string; payload: string }>> {
  const r = await a.json('/v1/audit/mutations', { headers: auth });
  expect(r.status).toBe(200);
  expect(r.body.chain_valid).toBe(true);
  return r.body.audit.records;
}

function demoProject(): string {
  const root = tempDir('svc-audit-demo-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  return root;
}

describe('audit: mutations exactly once on every transport, reads never', () => {
  it('anonymous read-like POSTs over REST, gRPC and JSON-RPC add no record; one mutation per transport adds exactly one', async () => {
    const root = demoProject();
    const { a, g } = await start(path.join(root, 'svc.toml'), path.join(root, 'programs', 'patrol.sd'));
    const entity = (await a.json('/v1/entities/query', jsonPost({}))).body.result.entities[0].id as string;
    expect(typeof entity).toBe('string');
    const before = (await records(a)).length;

    // REST, anonymous.
    for (const [p, body] of [
      ['/v1/programs/readiness', {}],
      ['/v1/entities/query', {}],
      [`/v1/entities/${encodeURIComponent(entity)}/verify`, {}],
    ] as const) {
      for (let i = 0; i < 5; i++) expect((await a.json(p, jsonPost(body))).status).toBe(200);
    }
    // gRPC, anonymous.
    for (const [rpc, req] of [
      ['EvaluateProgramReadiness', { body_json: '{}' }],
      ['QueryEntities', { body_json: '{}' }],
      ['VerifyEntity', { entity_id: entity, body_json: '{}' }],
    ] as const) {
      const out = await callUnary(g.client, rpc, req);
      expect(out.ok, `${rpc}: ${out.message}`).toBe(true);
    }
    // JSON-RPC, anonymous: the gateway route is public and the inner operations are reads.
    for (const [rpc, params] of [
      ['EvaluateProgramReadiness', { body_json: '{}' }],
      ['QueryEntities', { body_json: '{}' }],
      ['VerifyEntity', { entity_id: entity, body_json: '{}' }],
    ] as const) {
      const r = await a.json('/v1/rpc', jsonPost({ method: `svc.v1.ControlCenter/${rpc}`, params }));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    expect((await records(a)).length).toBe(before);

    // One mutation per transport: exactly one record each.
    expect((await a.json('/v1/alerts/test', { method: 'POST', headers: auth })).status).toBe(200);
    let all = await records(a);
    expect(all.length).toBe(before + 1);
    expect(JSON.parse(all.at(-1)!.payload)).toMatchObject({ method: 'POST', path: '/v1/alerts/test' });

    const viaGrpc = await callUnary(g.client, 'CreateAdminApiKey', { body_json: '{"role":"developer"}' }, grpcBearer(ADMIN));
    expect(viaGrpc.ok, viaGrpc.message).toBe(true);
    all = await records(a);
    expect(all.length).toBe(before + 2);
    expect(all.at(-1)!.event_type).toBe('control_center.grpc.mutation');
    expect(JSON.parse(all.at(-1)!.payload)).toMatchObject({ rpc: 'svc.v1.ControlCenter/CreateAdminApiKey', path: '/v1/admin/api-keys' });

    const viaJsonRpc = await a.json('/v1/rpc', jsonPost({ method: 'svc.v1.ControlCenter/CreateAdminApiKey', params: { body_json: '{"role":"developer"}' } }, auth));
    expect(viaJsonRpc.status, JSON.stringify(viaJsonRpc.body)).toBe(200);
    all = await records(a);
    expect(all.length).toBe(before + 3);
    expect(all.at(-1)!.event_type).toBe('control_center.api.mutation');
    expect(JSON.parse(all.at(-1)!.payload)).toMatchObject({ path: '/v1/rpc', rpc: 'svc.v1.ControlCenter/CreateAdminApiKey', parity_path: '/v1/admin/api-keys' });

    // The read-like route that writes (a recorded simulation, Operate) records itself: once per call,
    // on every transport (REST used to record it twice: the route and the handler).
    const record = JSON.stringify({ execute: true, record_trace: true });
    expect((await a.json('/v1/programs/simulation', { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: record })).status).toBe(200);
    all = await records(a);
    expect(all.length).toBe(before + 4);
    expect(JSON.parse(all.at(-1)!.payload)).toMatchObject({ method: 'POST', path: '/v1/programs/simulation' });
    const simGrpc = await callUnary(g.client, 'RunProgramSimulation', { body_json: record }, grpcBearer(ADMIN));
    expect(simGrpc.ok, simGrpc.message).toBe(true);
    all = await records(a);
    expect(all.length).toBe(before + 5);
    expect(all.at(-1)!.event_type).toBe('control_center.grpc.mutation');
    expect(JSON.parse(all.at(-1)!.payload)).toMatchObject({ rpc: 'svc.v1.ControlCenter/RunProgramSimulation', path: '/v1/programs/simulation' });
    const simRpc = await a.json('/v1/rpc', jsonPost({ method: 'svc.v1.ControlCenter/RunProgramSimulation', params: { body_json: record } }, auth));
    expect(simRpc.status, JSON.stringify(simRpc.body)).toBe(200);
    all = await records(a);
    expect(all.length).toBe(before + 6);
    expect(JSON.parse(all.at(-1)!.payload)).toMatchObject({ path: '/v1/rpc', rpc: 'svc.v1.ControlCenter/RunProgramSimulation', parity_path: '/v1/programs/simulation' });
  });

  it('an anonymous verify publishes no readiness or health event; a caller holding Operate does', async () => {
    // A discovered (not yet provisioned) device is not mission ready (docs/entities.md § Kinds and statuses).
    const { a, g } = await start(layeredProject('[[devices]]\nid = "dock-relay"\ntype = "relay"\nlifecycle_state = "discovered"\n'));
    const events: PlatformEvent[] = [];
    a.agent.services.bus.subscribe((e) => events.push(e));
    const before = (await records(a)).length;
    const STATUS_EVENTS = ['HealthChanged', 'HealthCheckFailed', 'DegradedModeEntered', 'ReadinessChanged', 'ReadinessGateFailed'];

    // dock-relay is not mission ready: a first observation would publish ReadinessGateFailed.
    for (const id of ['dock-relay', 'insp-01', 'gps-a']) {
      const r = await a.json(`/v1/entities/${id}/verify`, jsonPost({}));
      expect(r.status).toBe(200);
      expect(r.body.entity_id).toBe(id);
      expect((await callUnary(g.client, 'VerifyEntity', { entity_id: id, body_json: '{}' })).ok).toBe(true);
      expect((await a.json('/v1/rpc', jsonPost({ method: 'svc.v1.ControlCenter/VerifyEntity', params: { entity_id: id, body_json: '{}' } }))).status).toBe(200);
    }
    expect(events.filter((e) => STATUS_EVENTS.includes(e.type))).toEqual([]);
    expect((await records(a)).length).toBe(before);

    // The same call by an administrator (who holds Operate) publishes the transition (first readiness
    // seen, gate failed), once: a second identical call changes nothing and adds no record.
    expect((await a.json('/v1/entities/dock-relay/verify', jsonPost({}, auth))).status).toBe(200);
    const afterFirst = await records(a);
    expect((await a.json('/v1/entities/dock-relay/verify', jsonPost({}, auth))).status).toBe(200);
    expect(events.filter((e) => e.type === 'ReadinessGateFailed' && e.entity_id === 'dock-relay')).toHaveLength(1);
    expect(events.filter((e) => STATUS_EVENTS.includes(e.type)).map((e) => e.type)).toEqual(['ReadinessChanged', 'ReadinessGateFailed']);
    const after = await records(a);
    expect(after.length).toBe(afterFirst.length);
    expect(after.slice(before).map((r) => r.event_type)).toEqual(['ReadinessChanged', 'ReadinessGateFailed']);
  });
});
