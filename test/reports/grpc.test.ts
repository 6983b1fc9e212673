import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { auth, DEPLOY_KEY, OPERATOR_KEY, reportsProject, startReportsAgent } from './fixture.js';

/** The report RPCs answer what REST answers, and ExportReports keeps the Deploy gate. */
describe('reports over gRPC', () => {
  let agent: RunningAgent;
  let g: GrpcTestClient;
  beforeAll(async () => {
    agent = await startReportsAgent(reportsProject({ robots: 2 }), { grpc: true });
    g = connectGrpc(agent.agent.grpcAddress!);
  });
  afterAll(async () => {
    g.close();
    await agent.close();
  });

  it('GetExecutiveScorecard and QueryDigitalThread equal their REST answers', async () => {
    const card = await callUnary(g.client, 'GetExecutiveScorecard', {});
    expect(card.ok).toBe(true);
    expect(card.json).toEqual((await agent.json('/v1/executive/scorecard')).body);
    const thread = await callUnary(g.client, 'QueryDigitalThread', { query: 'lifecycle_phase=design' });
    expect(thread.json.digital_thread.chain_summary[2]).toBe('Lifecycle phase filter: design');
    expect(thread.json).toEqual((await agent.json('/v1/digital-thread/query?lifecycle_phase=design')).body);
  });

  it('ExportReports: no key → UNAUTHENTICATED, operator → PERMISSION_DENIED, developer → the report; reads are not audited', async () => {
    const req = { query: 'format=json&profile=industrial' };
    expect((await callUnary(g.client, 'ExportReports', req)).status).toBe(Status.UNAUTHENTICATED);
    expect((await callUnary(g.client, 'ExportReports', req, bearer(OPERATOR_KEY))).status).toBe(Status.PERMISSION_DENIED);
    const ok = await callUnary(g.client, 'ExportReports', req, bearer(DEPLOY_KEY));
    expect(ok.ok).toBe(true);
    expect(ok.json.profile).toBe('industrial');
    const rest = await agent.json('/v1/reports/export?format=json&profile=industrial', auth(DEPLOY_KEY));
    expect(ok.json.scorecard).toEqual(rest.body.scorecard);
    const audit = await agent.json('/v1/audit/mutations', auth(DEPLOY_KEY));
    expect(audit.status).toBe(200);
    expect(JSON.stringify(audit.body)).not.toContain('ExportReports');
    expect(JSON.stringify(audit.body)).not.toContain('/v1/reports/export');
  });
});
