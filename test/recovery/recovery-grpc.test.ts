import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { DEVELOPER_KEY, OPERATOR_KEY, recoveryProject, startRecoveryAgent } from './fixture.js';

/** The recovery RPCs answer what REST answers, and ExecuteRecovery keeps the Recover gate (docs/grpc.md). */
describe('recovery over gRPC', () => {
  let agent: RunningAgent;
  let g: GrpcTestClient;
  beforeAll(async () => {
    agent = await startRecoveryAgent(recoveryProject(), { grpc: true });
    g = connectGrpc(agent.agent.grpcAddress!);
  });
  afterAll(async () => {
    g.close();
    await agent.close();
  });

  it('PlanRecovery and GetRecoveryGraph compute the same answers as REST', async () => {
    const body = { entity_id: 'robot-1', failure: 'gps_loss' };
    const plan = await callUnary(g.client, 'PlanRecovery', { body_json: JSON.stringify(body) });
    expect(plan.ok).toBe(true);
    expect(plan.json.report.plans[0]).toMatchObject({ plan_id: 'plan-robot-1-gps_loss', strategies: ['switch_sensor'] });
    const graph = await callUnary(g.client, 'GetRecoveryGraph', { query: 'entity_id=Rover' });
    expect(graph.json.graph.root_entity_id).toBe('Rover');
    const rest = await agent.json('/v1/recovery/graph?entity_id=Rover');
    expect(graph.json.graph).toEqual(rest.body.graph);
  });

  it('ExecuteRecovery: no key → UNAUTHENTICATED, developer → PERMISSION_DENIED, operator → evidence recorded', async () => {
    const req = { body_json: JSON.stringify({ entity_id: 'robot-1', failure: 'gps_loss', force_execute: true }) };
    expect((await callUnary(g.client, 'ExecuteRecovery', req)).status).toBe(Status.UNAUTHENTICATED);
    expect((await callUnary(g.client, 'ExecuteRecovery', req, bearer(DEVELOPER_KEY))).status).toBe(Status.PERMISSION_DENIED);
    const ok = await callUnary(g.client, 'ExecuteRecovery', req, bearer(OPERATOR_KEY));
    expect(ok.ok).toBe(true);
    const id = ok.json.report.evidence[0].evidence_id;
    const history = await callUnary(g.client, 'GetRecoveryHistory', {});
    expect(history.json.history[0].evidence_id).toBe(id);
  });
});
