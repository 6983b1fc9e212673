import { Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPECS } from '../../api/index.js';
import { accessLabel, accessOf } from '../../api/spec.js';
import { bearer, callUnary, connectGrpc, type GrpcTestClient } from '../helpers/grpc-client.js';
import { tempDir } from '../helpers/agent-harness.js';
import { ADMIN, auth, gateAgent, gateProject, type GateAgent } from '../deployment/fixture.js';

/** Routes #1–#18 of the governance area with their access and the RPC names the reference clients call. */
const ROUTES: Array<[method: string, path: string, access: string, rpc: string | null]> = [
  ['GET', '/v1/governance', 'read', 'GetGovernance'],
  ['POST', '/v1/governance/validate', 'action:Operate', 'ValidateGovernance'],
  ['GET', '/v1/compliance', 'action:Operate', 'GetCompliance'],
  ['POST', '/v1/compliance/check', 'action:Operate', 'CheckCompliance'],
  ['GET', '/v1/certifications', 'action:Operate', 'ListCertifications'],
  ['GET', '/v1/certifications/report', 'action:Operate', null],
  ['GET', '/v1/risk', 'action:Operate', 'GetOperationalRisk'],
  ['GET', '/v1/governance/policies', 'action:Operate', null],
  ['POST', '/v1/governance/policies/assign', 'action:Deploy', null],
  ['POST', '/v1/governance/policies/detach', 'action:Deploy', null],
  ['GET', '/v1/governance/audit', 'action:Operate', null],
  ['GET', '/v1/governance/accountability', 'action:Operate', null],
  ['PUT', '/v1/governance/accountability', 'action:Deploy', null],
  ['POST', '/v1/governance/accountability', 'action:Deploy', null],
  ['GET', '/v1/compliance/profiles', 'sensitive-read', null],
  ['GET', '/v1/compliance/export', 'action:Deploy', 'ExportCompliance'],
  ['POST', '/v1/compliance/export', 'action:Deploy', null],
  ['GET', '/v1/compliance/evidence', 'action:Deploy', 'ListComplianceEvidence'],
];

describe('governance routes in the contract', () => {
  it('lists 18 routes', () => expect(ROUTES).toHaveLength(18));
  it.each(ROUTES)('%s %s: access %s, RPC %s', (method, path, access, rpc) => {
    const spec = SPECS.find((s) => s.method === method && s.path === path);
    expect(spec, `${method} ${path} missing from api/index.ts#SPECS`).toBeDefined();
    expect(accessLabel(accessOf(spec!))).toBe(access);
    expect(spec!.rpc?.name ?? null).toBe(rpc);
  });
});

describe('governance over gRPC', () => {
  let a: GateAgent;
  let g: GrpcTestClient;
  beforeAll(async () => {
    a = await gateAgent(gateProject({ governance: 'risk_level = "high"\noperational_maturity = "production"' }), { grpc: true, stateDir: tempDir('svc-gov-grpc-') });
    g = connectGrpc(a.agent.grpcAddress!);
  });
  afterAll(async () => {
    g.close();
    await a.close();
  });

  it('GetGovernance is open and equals REST', async () => {
    const r = await callUnary(g.client, 'GetGovernance', {});
    expect(r.ok).toBe(true);
    expect(r.json).toEqual((await a.json('/v1/governance')).body);
  });

  it('CheckCompliance and ValidateGovernance take the JSON body; Operate is needed', async () => {
    expect((await callUnary(g.client, 'CheckCompliance', { body_json: '{"strict":true}' })).status).toBe(Status.UNAUTHENTICATED);
    expect((await callUnary(g.client, 'CheckCompliance', { body_json: '{}' }, bearer(a.keys.auditor))).status).toBe(Status.PERMISSION_DENIED);
    const r = await callUnary(g.client, 'CheckCompliance', { body_json: '{"strict":true}' }, bearer(a.keys.operator));
    expect(r.ok).toBe(true);
    expect(r.json.report.passed).toBe(false);
    expect(r.json.report.missing_requirements.map((m: { code: string }) => m.code)).toContain('GOV_CERT_LIVE');
    const v = await callUnary(g.client, 'ValidateGovernance', { body_json: '' }, bearer(a.keys.operator));
    expect(v.json.validation.passed).toBe(false);
    for (const rpc of ['GetCompliance', 'ListCertifications', 'GetOperationalRisk']) {
      const x = await callUnary(g.client, rpc, {}, bearer(a.keys.operator));
      expect(x.ok, rpc).toBe(true);
    }
  });

  it('ExportCompliance (query form) appends evidence that ListComplianceEvidence returns; Deploy is needed', async () => {
    expect((await callUnary(g.client, 'ExportCompliance', { query: 'profile=medical' }, bearer(a.keys.operator))).status).toBe(Status.PERMISSION_DENIED);
    const r = await callUnary(g.client, 'ExportCompliance', { query: 'profile=medical' }, bearer(a.keys.developer));
    expect(r.ok).toBe(true);
    expect(r.json.export.profile).toBe('medical');
    const ev = await callUnary(g.client, 'ListComplianceEvidence', {}, bearer(a.keys.developer));
    expect(ev.json.evidence.map((e: { audit_export_id: string }) => e.audit_export_id)).toEqual([r.json.export.audit_export_id]);
    const audit = await a.json('/v1/audit/mutations', { headers: auth(ADMIN) });
    expect(JSON.stringify(audit.body)).toContain('svc.v1.ControlCenter/ExportCompliance');
    const rest = await a.json('/v1/compliance/evidence', { headers: auth(a.keys.developer) });
    expect(rest.body).toEqual(ev.json);
  });
});
