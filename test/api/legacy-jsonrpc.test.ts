import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { bearer as grpcBearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';

/**
 * The legacy JSON-RPC names the official clients call (docs/grpc.md § JSON-RPC gateway):
 * `svc.v1.SvcService/GetHealth`, `GetDashboard` and `GetSreSummary` reach the parity REST route with
 * its access rule, and answer its body as `result`.
 */
const ADMIN = 'a7'.repeat(32);
let running: RunningAgent[] = [];
let clients: GrpcTestClient[] = [];
afterEach(async () => {
  clients.forEach((c) => c.close());
  clients = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function rpc(a: RunningAgent, method: string, key?: string, params: unknown = { body_json: '{}', query: '', entity_id: '' }) {
  return a.json('/v1/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ method, params }),
  });
}

describe('legacy SvcService JSON-RPC methods', () => {
  it('GetHealth, GetDashboard and GetSreSummary answer their REST bodies', async () => {
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN }, grpcBind: '127.0.0.1:0' });
    running.push(a);
    const health = await rpc(a, 'svc.v1.SvcService/GetHealth');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ version: 'v1', method: 'svc.v1.SvcService/GetHealth', result: { ok: true, service: expect.any(String) } });
    const rest = (await a.json('/v1/health')).body;
    expect(health.body.result.grpc).toEqual(rest.grpc);

    const dash = await rpc(a, 'svc.v1.SvcService/GetDashboard');
    expect(dash.status).toBe(200);
    expect(dash.body.method).toBe('svc.v1.SvcService/GetDashboard');
    expect(dash.body.result).toEqual((await a.json('/v1/dashboard')).body);
    expect(dash.body.result.device_pool).toMatchObject({ total: 0 });

    const sre = await rpc(a, 'svc.v1.SvcService/GetSreSummary', ADMIN);
    expect(sre.status).toBe(200);
    expect(sre.body.result).toHaveProperty('burn_rate');

    // Unknown legacy name: 400 as any unknown method.
    const unknown = await rpc(a, 'svc.v1.SvcService/GetNothing');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('unknown rpc method: svc.v1.SvcService/GetNothing');

    // GetHealth is also a gRPC RPC now (beside the built-in Health probe).
    const g = connectGrpc(a.agent.grpcAddress!);
    clients.push(g);
    const viaGrpc = await callUnary(g.client, 'GetHealth', {}, grpcBearer(ADMIN));
    expect(viaGrpc.ok).toBe(true);
    expect(viaGrpc.json).toMatchObject({ ok: true, grpc: rest.grpc });
  });

  it('GetDashboard keeps its route’s access rule: 401 without a credential when sensitive reads need one', async () => {
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_API_REQUIRE_AUTH_READS: '1' } });
    running.push(a);
    expect((await rpc(a, 'svc.v1.SvcService/GetDashboard')).status).toBe(401);
    expect((await rpc(a, 'svc.v1.SvcService/GetDashboard', ADMIN)).status).toBe(200);
    // Health is public under every read policy.
    expect((await rpc(a, 'svc.v1.SvcService/GetHealth')).status).toBe(200);
  });
});
