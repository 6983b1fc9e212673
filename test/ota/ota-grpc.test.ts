import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { ADMIN, DEVELOPER, OPERATOR, otaAgent, post } from './fixture.js';

/** GetOtaStatus, PlanOta and ExecuteOta over gRPC answer what REST answers, keep the Deploy gate, and are audited. */
describe('OTA over gRPC, and the audit of plan/execute', () => {
  let agent: RunningAgent;
  let g: GrpcTestClient;
  beforeAll(async () => {
    agent = await otaAgent({ grpc: true });
    g = connectGrpc(agent.agent.grpcAddress!);
  });
  afterAll(async () => {
    g.close();
    await agent.close();
  });

  const body = { strategy: 'canary', version: '2.0', canary_percent: 50, assignments: [1, 2, 3, 4].map((i) => ({ robot_name: `r${i}`, hardware: 'Pi' })) };

  it('PlanOta equals the REST plan; no key → UNAUTHENTICATED, operator → PERMISSION_DENIED', async () => {
    const req = { body_json: JSON.stringify(body) };
    expect((await callUnary(g.client, 'PlanOta', req)).status).toBe(Status.UNAUTHENTICATED);
    expect((await callUnary(g.client, 'PlanOta', req, bearer(OPERATOR))).status).toBe(Status.PERMISSION_DENIED);
    const plan = await callUnary(g.client, 'PlanOta', req, bearer(DEVELOPER));
    expect(plan.ok).toBe(true);
    const rest = await agent.json('/v1/ota/plan', post(body, DEVELOPER));
    expect(plan.json.rollout).toEqual(rest.body.rollout);
    const missing = await callUnary(g.client, 'PlanOta', { body_json: JSON.stringify({ version: '1' }) }, bearer(DEVELOPER));
    expect(missing.status).toBe(Status.INVALID_ARGUMENT);
  });

  it('ExecuteOta and GetOtaStatus; every plan and execute is in the mutation audit', async () => {
    const exec = await callUnary(g.client, 'ExecuteOta', { body_json: JSON.stringify({ ...body, assignments: body.assignments.slice(0, 2) }) }, bearer(ADMIN));
    expect(exec.json).toMatchObject({ executed: true, rollout: { success: false } });
    const status = await callUnary(g.client, 'GetOtaStatus', {}, bearer(ADMIN));
    expect(status.json.state).toEqual({ current_version: {}, previous_version: {}, history: [] });
    expect(status.json.rollout.status).toBe('failed');
    const audit = JSON.stringify((await agent.json('/v1/audit/mutations', { headers: { authorization: `Bearer ${ADMIN}` } })).body);
    for (const op of ['PlanOta', 'ExecuteOta', '/v1/ota/plan']) expect(audit).toContain(op);
  });
});
