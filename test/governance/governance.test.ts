import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { ADMIN, auth, gateAgent, gateProject, get, json, post, type GateAgent } from '../deployment/fixture.js';

let running: GateAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(...args: Parameters<typeof gateAgent>): Promise<GateAgent> {
  const a = await gateAgent(...args);
  running.push(a);
  return a;
}
async function stop(a: GateAgent): Promise<void> {
  running = running.filter((x) => x !== a);
  await a.close();
}
const put = (a: GateAgent, p: string, token: string | null, body: unknown) =>
  a.json(p, { method: 'PUT', headers: token ? auth(token) : json, body: typeof body === 'string' ? body : JSON.stringify(body) });

const RISKY = 'risk_level = "high"\noperational_maturity = "production"';

describe('GET /v1/governance', () => {
  it('answers the framework catalogue without a credential and without configuration', async () => {
    const a = await agent(null);
    const r = await get(a, '/v1/governance');
    expect(r.status).toBe(200);
    expect(r.body.framework).toBe('operational_governance');
    expect(r.body.capabilities).toHaveLength(8);
    expect(r.body.deployment_profiles).toHaveLength(19);
    expect(r.body.deployment_profiles[0]).toEqual({ kind: 'warehouse', display_name: 'Warehouse', default_risk_level: 'medium', max_autonomy_level: 'partial_automation' });
    expect(r.body.standards_profiles).toHaveLength(11);
    expect(r.body.standards_profiles[0]).toEqual({ kind: 'functional_safety', package: 'svc-standards-functional_safety', required_checks: 2 });
    expect(r.body.autonomy_levels).toEqual(['manual', 'assisted', 'partial_automation', 'conditional_autonomy', 'high_autonomy', 'full_autonomy']);
    expect(r.body.disclaimer).toMatch(/not legal or regulatory advice/);
  });
});

describe('compliance check and governance validation', () => {
  it('F1/F2: high risk at production maturity without approval chain or certification fails, strict and not', async () => {
    const a = await agent(gateProject({ governance: RISKY, program: null }));
    for (const body of [{ strict: true }, {}]) {
      const r = await post(a, '/v1/compliance/check', a.keys.operator, body);
      expect(r.status).toBe(200);
      expect(r.body.report.passed).toBe(false);
      const missing = r.body.report.missing_requirements.map((m: { code: string; entity_id: string }) => `${m.code}@${m.entity_id}`);
      for (const id of ['gate-fleet', 'Rover']) {
        expect(missing).toContain(`GOV_APPROVAL_CHAIN@${id}`);
        expect(missing).toContain(`GOV_CERT_LIVE@${id}`);
      }
      expect(r.body.report.summary).toMatchObject({ entities_checked: 2, entities_failed: 2, entities_passed: 0 });
      expect(r.body.report.recommended_actions).toEqual(['Complete certification before live deployment', 'Define an approval chain for high-risk operations']);
      expect(r.body.text).toContain('Result: FAIL');
    }
    // One entity by the query (it wins over the body).
    const one = await post(a, '/v1/compliance/check?entity_id=Rover', a.keys.operator, { entity_id: 'gate-fleet' });
    expect(one.body.report.summary.entities_checked).toBe(1);
    expect(one.body.report.entity_reports[0].entity_id).toBe('Rover');
    expect(one.body.report.entity_reports[0].governance).toMatchObject({ risk_level: 'high', operational_maturity: 'production' });
    const summary = await get(a, '/v1/compliance', a.keys.operator);
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({ passed: false, summary: { entities_checked: 2, entities_failed: 2, missing: 4 } });
  });

  it('a fully accountable, certified entity passes; warnings fail only in strict mode', async () => {
    const gov = [
      'risk_level = "medium"',
      'operational_maturity = "pilot"',
      'certification_status = "certified"',
      'autonomy_level = "high"',
      'deployment_profile = "campus"',
      'responsible_person = "ana"',
      'deployment_owner = "ops"',
      'emergency_contact = { name = "Desk", email = "desk@example.org" }',
    ].join('\n');
    const a = await agent(gateProject({ governance: gov, program: null }));
    const r = await post(a, '/v1/compliance/check', a.keys.operator, {});
    expect(r.status).toBe(200);
    // autonomy high (4) above the campus profile's maximum (partial automation) is a warning, nothing is missing
    expect(r.body.report.missing_requirements).toBeUndefined();
    expect(r.body.report.warnings.map((w: { code: string }) => w.code)).toEqual(['GOV_AUTONOMY_PROFILE', 'GOV_AUTONOMY_PROFILE']);
    expect(r.body.report.warnings[0].message).toBe("Autonomy 'high_autonomy' exceeds the 'campus' profile maximum 'partial_automation'");
    expect(r.body.report.passed).toBe(true);
    expect((await post(a, '/v1/compliance/check?strict=true', a.keys.operator, {})).body.report.passed).toBe(false);
  });

  it('rule by rule: human approval, trust for autonomy, profile capabilities, simulation maturity, with fields and actions', async () => {
    const a = await agent(
      gateProject({
        governance: 'autonomy_level = "conditional"\ndeployment_profile = "warehouse"\nrisk_level = "medium"\noperational_maturity = "prototype"',
        robot: 'capabilities = ["navigation"]',
        // A device of unknown identity: Rover's trust posture is not trusted.
        devices: '[[devices]]\nid = "cam-1"\ntype = "camera"\nrobot_id = "Rover"\n',
        program: null,
      }),
    );
    const r = await post(a, '/v1/compliance/check?entity_id=Rover', a.keys.operator, {});
    expect(r.status).toBe(200);
    const rover = r.body.report.entity_reports[0];
    expect(rover.findings.map((f: { code: string; severity: string; field: string }) => `${f.severity}:${f.code}:${f.field}`)).toEqual([
      'missing:GOV_HUMAN_APPROVAL:accountability.responsible_person',
      expect.stringMatching(/^warning:GOV_TRUST_AUTONOMY:trust_status$/),
      'warning:GOV_SIMULATION_MATURITY:operational_maturity',
      'missing:GOV_CAPABILITY:capabilities',
      'warning:GOV_AUTONOMY_PROFILE:autonomy_level',
    ]);
    expect(rover.findings[3].message).toBe("Deployment profile 'warehouse' requires capability 'obstacle_avoidance'");
    expect(rover.governance).toMatchObject({ autonomy_level: 'conditional_autonomy', deployment_profile: 'warehouse', risk_level: 'medium', operational_maturity: 'prototype' });
    expect(rover.recommended_actions).toEqual(['Assign a responsible person for human approval']);
    expect(r.body.report.passed).toBe(false);
  });

  it('an entity outside the fleet gets the gaps of its governance filled from [governance], its own accountability kept', async () => {
    const gov = 'operational_maturity = "simulation"\nresponsible_organization = "Acme"\ndeployment_owner = "ops"\napproval_chain = [{ role = "supervisor" }]';
    const a = await agent(gateProject({ governance: gov, program: null }));
    const reg = await post(a, '/v1/entities/register', ADMIN, { id: 'dock-1', entity_type: 'facility', metadata: { 'governance.risk_level': 'high', 'governance.responsible_person': 'bob' } });
    expect(reg.status).toBe(200);
    const r = await post(a, '/v1/compliance/check?entity_id=dock-1', a.keys.operator, {});
    expect(r.body.report.summary.entities_checked).toBe(1);
    expect(r.body.report.entity_reports[0].governance).toEqual({
      operational_maturity: 'simulation',
      risk_level: 'high',
      // its own responsible person; the deployment owner and approval chain filled; the organisation not
      accountability: { responsible_person: 'bob', deployment_owner: 'ops', approval_chain: [{ role: 'supervisor', required: true }] },
    });
    expect(r.body.report.passed).toBe(true);
  });

  it('validation adds the [governance] findings and honours entity_id in the query', async () => {
    const a = await agent(gateProject({ governance: 'risk_level = "high"\noperational_maturity = "production"\nresponsible_person = "ana"', program: null }));
    const r = await post(a, '/v1/governance/validate', a.keys.operator, {});
    expect(r.status).toBe(200);
    const codes = r.body.validation.findings.map((f: { code: string }) => f.code);
    expect(codes.slice(0, 2)).toEqual(['GOV_NO_PROFILE', 'GOV_ACCOUNTABILITY_SYSTEM']);
    expect(codes).toContain('GOV_APPROVAL_CHAIN');
    expect(r.body.validation).toMatchObject({ passed: false, operational_maturity: 'production' });
    expect(r.body.compliance.passed).toBe(false);
    expect(r.body.text).toContain('Governance Validation Report');
    const one = await post(a, '/v1/governance/validate?entity_id=Rover', a.keys.operator, {});
    expect(one.body.compliance.summary.entities_checked).toBe(1);
  });

  it('F3: 401 without a credential, 403 without Operate, 400 without configuration, bad JSON and wrong field types', async () => {
    const a = await agent(gateProject({ governance: RISKY, program: null }));
    expect((await get(a, '/v1/compliance')).status).toBe(401);
    expect((await get(a, '/v1/compliance', a.keys.auditor)).status).toBe(403);
    expect((await post(a, '/v1/compliance/check', null, {})).status).toBe(401);
    expect((await post(a, '/v1/governance/validate', a.keys.auditor, {})).status).toBe(403);
    for (const p of ['/v1/certifications', '/v1/risk', '/v1/governance/policies', '/v1/governance/audit', '/v1/governance/accountability', '/v1/certifications/report']) {
      expect((await get(a, p)).status, p).toBe(401);
      expect((await get(a, p, a.keys.auditor)).status, p).toBe(403);
    }
    const bad = await post(a, '/v1/compliance/check', a.keys.operator, '{not json');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/invalid JSON body/);
    expect((await post(a, '/v1/governance/validate', a.keys.operator, { strict: 'yes' })).status).toBe(400);
    const none = await agent(null);
    for (const [p, m] of [['/v1/compliance/check', 'POST'], ['/v1/governance/validate', 'POST'], ['/v1/compliance', 'GET']] as const) {
      const r = m === 'GET' ? await get(none, p, none.keys.operator) : await post(none, p, none.keys.operator, {});
      expect(r, p).toMatchObject({ status: 400, body: { error: 'No configuration loaded', code: 'bad_request' } });
    }
    // Without configuration the entity-derived lists are empty, not errors.
    expect((await get(none, '/v1/certifications', none.keys.operator)).body.certifications).toEqual([]);
    expect((await get(none, '/v1/risk', none.keys.operator)).body.entities).toEqual([]);
  });
});

describe('certifications, risk and accountability', () => {
  it('lists certification and risk rows; the report seeds records once and persists them across a restart', async () => {
    const stateDir = tempDir('svc-gov-state-');
    const project = gateProject({ governance: 'risk_level = "high"\ncertification_status = "validated"\ndeployment_profile = "warehouse"\nautonomy_level = "assisted"\nresponsible_person = "ana"', program: null });
    const a = await agent(project, { stateDir });
    const certs = await get(a, '/v1/certifications', a.keys.operator);
    expect(certs.status).toBe(200);
    expect(certs.body.certifications).toEqual([
      { entity_id: 'Rover', entity_type: 'robot', certification_status: 'validated', deployment_profile: 'warehouse', operational_maturity: null },
      { entity_id: 'gate-fleet', entity_type: 'fleet', certification_status: 'validated', deployment_profile: 'warehouse', operational_maturity: null },
    ].sort((x, y) => x.entity_id.localeCompare(y.entity_id)));
    const risk = await get(a, '/v1/risk', a.keys.operator);
    expect(risk.body.entities.find((e: { entity_id: string }) => e.entity_id === 'Rover')).toMatchObject({ risk_level: 'high', autonomy_level: 'assisted', deployment_profile: 'warehouse', entity_type: 'robot' });
    expect(typeof risk.body.entities[0].health_status).toBe('string');

    const report = await get(a, '/v1/certifications/report?entity_id=Rover', a.keys.operator);
    expect(report.status).toBe(200);
    expect(report.body.report).toMatchObject({ entity_id: 'Rover', operational_count: 1, expired_count: 0, revoked_count: 0 });
    expect(report.body.report.records).toEqual([expect.objectContaining({ id: 'cert-Rover', status: 'validated', applicable_scope: ['Rover'], certified_by: 'ana' })]);
    const file = path.join(stateDir, 'control-center-certifications.json');
    const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(stored.records.map((r: { id: string }) => r.id).sort()).toEqual(['cert-Rover', 'cert-gate-fleet']);
    expect((await get(a, '/v1/governance/audit', a.keys.operator)).body).toMatchObject({ policy_audit: [], certification_records: 2 });

    // A record tooling transitioned (revoked) is what the report shows after a restart: the store is the record, not the metadata.
    await stop(a);
    stored.records.find((r: { id: string }) => r.id === 'cert-Rover').status = 'revoked';
    fs.writeFileSync(file, JSON.stringify(stored));
    const b = await agent(project, { stateDir });
    const again = await get(b, '/v1/certifications/report', b.keys.operator);
    expect(again.body.report.records.map((r: { id: string; status: string }) => `${r.id}:${r.status}`).sort()).toEqual(['cert-Rover:revoked', 'cert-gate-fleet:validated']);
    expect(again.body.report).toMatchObject({ entity_id: null, operational_count: 1, revoked_count: 1 });
  });

  it('F4: PUT sets accountability in the overlay (version bumps), shows in the list and the entity owner; POST is the same; 400/403/404', async () => {
    const a = await agent(gateProject({ governance: RISKY, program: null }));
    const before = await get(a, '/v1/governance/accountability', a.keys.operator);
    expect(before.body.entities.find((e: { entity_id: string }) => e.entity_id === 'Rover')).toMatchObject({ responsible_person: null, approval_chain: [], operational_maturity: 'production' });
    const r = await put(a, '/v1/governance/accountability', a.keys.developer, { entity_id: 'Rover', responsible_person: 'ana', approval_chain: ['supervisor', 'safety_officer'] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ entity_id: 'Rover', governance: { responsible_person: 'ana', approval_chain: ['supervisor', 'safety_officer'] } });
    const v1 = r.body.overlay_version as number;
    expect(v1).toBeGreaterThan(0);
    const list = await get(a, '/v1/governance/accountability', a.keys.operator);
    expect(list.body.entities.find((e: { entity_id: string }) => e.entity_id === 'Rover')).toMatchObject({ responsible_person: 'ana', approval_chain: ['supervisor', 'safety_officer'] });
    const entity = await get(a, '/v1/entities/Rover', a.keys.operator);
    expect(entity.body.owner ?? entity.body.entity?.owner).toBe('ana');
    // The approval chain now satisfies the high-risk rule for Rover.
    const check = await post(a, '/v1/compliance/check?entity_id=Rover', a.keys.operator, {});
    expect(check.body.report.missing_requirements.map((m: { code: string }) => m.code)).not.toContain('GOV_APPROVAL_CHAIN');

    const viaPost = await post(a, '/v1/governance/accountability', a.keys.developer, { entity_id: 'Rover', deployment_owner: 'ops' });
    expect(viaPost.status).toBe(200);
    expect(viaPost.body.overlay_version).toBe(v1 + 1);
    expect(viaPost.body.governance).toMatchObject({ responsible_person: 'ana', deployment_owner: 'ops' });

    expect(await put(a, '/v1/governance/accountability', a.keys.developer, { entity_id: '  ' })).toMatchObject({ status: 400, body: { error: 'entity_id is required' } });
    expect(await put(a, '/v1/governance/accountability', a.keys.developer, { entity_id: 'ghost' })).toMatchObject({ status: 404, body: { error: "entity 'ghost' not found", code: 'not_found' } });
    expect((await put(a, '/v1/governance/accountability', a.keys.operator, { entity_id: 'Rover' })).status).toBe(403);
    expect((await put(a, '/v1/governance/accountability', null, { entity_id: 'Rover' })).status).toBe(401);
    expect((await put(a, '/v1/governance/accountability', a.keys.developer, '[1')).status).toBe(400);
  });
});

describe('policy assignments', () => {
  it('F5: assign then detach; ids never reused; audit in order; persisted across a restart; 404 for unknown entity and assignment', async () => {
    const stateDir = tempDir('svc-gov-state-');
    const project = gateProject({ governance: RISKY, program: null });
    const a = await agent(project, { stateDir });
    const r = await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'Rover', kind: 'Safety', name: 'speed-cap', version: '1.0' });
    expect(r.status).toBe(200);
    expect(r.body.assignment).toMatchObject({ id: 'pol-Rover-1', entity_id: 'Rover', policy: { kind: 'safety', name: 'speed-cap', version: '1.0' }, audit_id: 'audit-pol-Rover-1' });
    expect(r.body.assignment.policy.signature).toBeUndefined();
    const d = await post(a, '/v1/governance/policies/detach', a.keys.developer, { assignment_id: 'pol-Rover-1' });
    expect(d.status).toBe(200);
    expect(d.body.detached).toBe('pol-Rover-1');
    expect(d.body.audit.map((e: { action: string; id: string }) => `${e.action}:${e.id}`)).toEqual(['assign:audit-pol-Rover-1', 'detach:audit-detach-pol-Rover-1']);
    const second = await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'Rover', kind: 'night-shift', name: 'quiet' });
    expect(second.body.assignment).toMatchObject({ id: 'pol-Rover-2', policy: { kind: { custom: 'night-shift' } } });

    expect(await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'ghost', kind: 'safety', name: 'x' })).toMatchObject({ status: 404, body: { error: "entity 'ghost' not found" } });
    expect(await post(a, '/v1/governance/policies/detach', a.keys.developer, { assignment_id: 'pol-x-9' })).toMatchObject({ status: 404, body: { error: "assignment 'pol-x-9' not found", code: 'not_found' } });
    expect((await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'Rover', kind: 'safety' })).status).toBe(400);
    expect((await post(a, '/v1/governance/policies/assign', a.keys.operator, { entity_id: 'Rover', kind: 'safety', name: 'x' })).status).toBe(403);
    expect((await post(a, '/v1/governance/policies/detach', null, { assignment_id: 'pol-Rover-2' })).status).toBe(401);

    // Every 2xx mutation is in the mutation audit (assign and detach are Deploy mutations).
    const audited = JSON.stringify((await get(a, '/v1/audit/mutations', ADMIN)).body);
    expect(audited).toContain('/v1/governance/policies/assign');
    expect(audited).toContain('/v1/governance/policies/detach');

    await stop(a);
    const b = await agent(project, { stateDir });
    const list = await get(b, '/v1/governance/policies', b.keys.operator);
    expect(list.status).toBe(200);
    expect(list.body.assignments.map((x: { id: string }) => x.id)).toEqual(['pol-Rover-2']);
    expect(list.body.audit.map((e: { action: string }) => e.action)).toEqual(['assign', 'detach', 'assign']);
    expect((await get(b, '/v1/governance/audit', b.keys.operator)).body.policy_audit).toHaveLength(3);
    // The counter survived the restart.
    expect((await post(b, '/v1/governance/policies/assign', b.keys.developer, { entity_id: 'Rover', kind: 'safety', name: 'again' })).body.assignment.id).toBe('pol-Rover-3');
  });

  it('sign:true signs with the configured Ed25519 key: verifiable with its public key; a tampered store fails verification', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const keyDir = tempDir('svc-gov-keys-');
    const keyFile = path.join(keyDir, 'governance.pem');
    fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const stateDir = tempDir('svc-gov-state-');
    const project = gateProject({ governance: RISKY, program: null });
    const env = { SVC_GOVERNANCE_SIGNING_KEY: keyFile };
    const a = await agent(project, { stateDir, env });
    const r = await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'Rover', kind: 'safety', name: 'speed-cap', version: '2', sign: true });
    expect(r.status).toBe(200);
    const policy = r.body.assignment.policy;
    expect(policy.signature).toMatch(/^[0-9a-f]{128}$/);
    expect(policy).toMatchObject({ signature_algorithm: 'ed25519', signed_by: expect.any(String), signed_at: expect.any(String) });
    expect(r.body.assignment.signature_verified).toBe(true);
    // Anyone with the public key can check it over the documented signed text.
    const signed = JSON.stringify(['svc-governance-policy/v1', 'pol-Rover-1', 'Rover', 'safety', 'speed-cap', '2', policy.signed_by, policy.signed_at]);
    expect(verify(null, Buffer.from(signed), publicKey, Buffer.from(policy.signature, 'hex'))).toBe(true);
    const listed = await get(a, '/v1/governance/policies', a.keys.operator);
    expect(listed.body.signing_key).toMatchObject({ algorithm: 'Ed25519', source: 'setting' });
    expect(createPublicKey(listed.body.signing_key.public_key_pem).export({ format: 'jwk' })).toEqual(publicKey.export({ format: 'jwk' }));
    expect(listed.body.assignments[0].signature_verified).toBe(true);

    // Someone edits the stored policy name: the signature no longer verifies.
    await stop(a);
    const file = path.join(stateDir, 'control-center-governance-policies.json');
    const stored = JSON.parse(fs.readFileSync(file, 'utf8'));
    stored.assignments[0].policy.name = 'no-speed-cap';
    fs.writeFileSync(file, JSON.stringify(stored));
    const b = await agent(project, { stateDir, env });
    const after = await get(b, '/v1/governance/policies', b.keys.operator);
    expect(after.body.assignments[0]).toMatchObject({ signature_verified: false, signature_problem: expect.stringMatching(/does not verify/) });

    // Another key: the assignment names a key this instance does not hold.
    await stop(b);
    const other = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const c = await agent(project, { stateDir, env: { SVC_GOVERNANCE_SIGNING_KEY: other } });
    expect((await get(c, '/v1/governance/policies', c.keys.operator)).body.assignments[0]).toMatchObject({ signature_verified: false, signature_problem: expect.stringMatching(/not this instance's key/) });
  });

  it('a signing key setting that is unusable refuses signed assignments with 400 without naming the path', async () => {
    const keyDir = tempDir('svc-gov-keys-');
    const a = await agent(gateProject({ governance: RISKY, program: null }), { env: { SVC_GOVERNANCE_SIGNING_KEY: path.join(keyDir, 'missing.pem') } });
    const r = await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'Rover', kind: 'safety', name: 'x', sign: true });
    expect(r).toMatchObject({ status: 400, body: { error: 'SVC_GOVERNANCE_SIGNING_KEY unusable: ENOENT' } });
    // Nothing was stored; unsigned assignments still work.
    expect((await get(a, '/v1/governance/policies', a.keys.operator)).body.assignments).toEqual([]);
    expect((await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'Rover', kind: 'safety', name: 'x' })).body.assignment.id).toBe('pol-Rover-1');
  });

  it('without a configured key the instance generates one in the state directory and keeps it', async () => {
    const stateDir = tempDir('svc-gov-state-');
    const project = gateProject({ governance: RISKY, program: null });
    const a = await agent(project, { stateDir });
    const r = await post(a, '/v1/governance/policies/assign', a.keys.developer, { entity_id: 'gate-fleet', kind: 'trust', name: 't', sign: true });
    expect(r.body.assignment.signature_verified).toBe(true);
    const keyFile = path.join(stateDir, 'governance-signing-key.pem');
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    await stop(a);
    const b = await agent(project, { stateDir });
    const listed = await get(b, '/v1/governance/policies', b.keys.operator);
    expect(listed.body.signing_key.source).toBe('generated');
    expect(listed.body.assignments[0].signature_verified).toBe(true);
  });
});

const COMPLIANT_PROGRAM = `
robot Rover {
    sensor lidar: Lidar;
    actuator wheels: DifferentialDrive;
}
`;

describe('compliance profiles, exports and evidence', () => {
  it('F6/F7: export appends one evidence record with the same audit id, persisted; unknown profile 400 appends nothing; roles', async () => {
    const stateDir = tempDir('svc-gov-state-');
    const project = gateProject({ program: COMPLIANT_PROGRAM });
    const a = await agent(project, { stateDir });
    expect((await get(a, '/v1/compliance/evidence', a.keys.developer)).body).toMatchObject({ evidence: [], store: 'evidence-append.jsonl' });
    const r = await get(a, '/v1/compliance/export?profile=medical', a.keys.developer);
    expect(r.status).toBe(200);
    expect(r.body.evidence_appended).toBe(true);
    expect(r.body.export).toMatchObject({ profile: 'medical', program: 'rover.sd', accreditation_status: 'template_only', passed: false });
    expect(r.body.export.generated_at).toMatch(/^unix-\d+$/);
    const ids = r.body.export.evidence_checklist.map((e: { id: string }) => e.id);
    expect(ids).toEqual(expect.arrayContaining(['tamper_policy', 'secure_boot', 'template_notice']));
    expect(r.body.markdown).toContain('Evaluation:** FAIL');
    const ev = await get(a, '/v1/compliance/evidence', a.keys.developer);
    expect(ev.body.evidence).toHaveLength(1);
    expect(ev.body.evidence[0]).toMatchObject({ profile: 'medical', audit_export_id: r.body.export.audit_export_id, program: 'rover.sd', passed: false });
    expect(typeof ev.body.evidence[0].exported_at_ms).toBe('number');

    // The GET appends evidence, so it is audited like a mutation.
    const audited = (await get(a, '/v1/audit/mutations', ADMIN)).body;
    expect(JSON.stringify(audited).match(/\/v1\/compliance\/export/g)).toHaveLength(1);

    const nope = await get(a, '/v1/compliance/export?profile=nope', a.keys.developer);
    expect(nope).toMatchObject({ status: 400, body: { error: "Unknown compliance profile 'nope'" } });
    // POST: the body's profile wins over the query; default is defense.
    const viaPost = await post(a, '/v1/compliance/export?profile=medical', a.keys.developer, { profile: 'research' });
    expect(viaPost.body.export).toMatchObject({ profile: 'research', passed: true });
    expect((await post(a, '/v1/compliance/export', a.keys.developer, {})).body.export.profile).toBe('defense');
    expect((await get(a, '/v1/compliance/export', a.keys.operator)).status).toBe(403);
    expect((await get(a, '/v1/compliance/evidence')).status).toBe(401);
    expect((await post(a, '/v1/compliance/export', a.keys.developer, '{')).status).toBe(400);

    await stop(a);
    const b = await agent(project, { stateDir });
    const persisted = await get(b, '/v1/compliance/evidence', b.keys.developer);
    expect(persisted.body.evidence.map((e: { profile: string }) => e.profile)).toEqual(['medical', 'research', 'defense']);
    // The log only grows: the file holds exactly those three lines.
    expect(fs.readFileSync(path.join(stateDir, 'evidence-append.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
  });

  it('without a program: 400 no program loaded', async () => {
    const a = await agent(gateProject({ program: null }));
    expect(await get(a, '/v1/compliance/export', a.keys.developer)).toMatchObject({ status: 400, body: { error: 'no program loaded; use control-center serve --program <file.sd>' } });
  });

  it('an evidence append that fails is a 500 and claims nothing', async () => {
    const stateDir = tempDir('svc-gov-state-');
    fs.mkdirSync(path.join(stateDir, 'evidence-append.jsonl'));
    const a = await agent(gateProject({ program: COMPLIANT_PROGRAM }), { stateDir });
    const r = await get(a, '/v1/compliance/export?profile=medical', a.keys.developer);
    expect(r.status).toBe(500);
    expect(r.body.code).toBe('internal_error');
    expect(r.body.error).toMatch(/evidence could not be appended/);
    expect(r.body.evidence_appended).toBeUndefined();
  });

  it('profiles: built-in templates never verify; a catalogue signed with the configured publisher key verifies; tampering fails it', async () => {
    const plain = await agent(null);
    const p = await get(plain, '/v1/compliance/profiles');
    expect(p.status).toBe(200);
    expect(p.body.profiles).toEqual(['industrial', 'warehouse', 'medical', 'agriculture', 'defense', 'iso26262', 'iso13849', 'iec61508', 'research', 'human_collaboration']);
    expect(p.body.signed_catalog.map((e: { name: string }) => e.name)).toEqual(['defense', 'medical', 'iso26262', 'iso13849', 'iec61508']);
    expect(p.body.signed_catalog.every((e: { verified: boolean; content_sha256: string }) => !e.verified && /^[0-9a-f]{64}$/.test(e.content_sha256))).toBe(true);
    expect(p.body.catalog).toMatchObject({ source: 'builtin', publisher_key_configured: false });

    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const dir = tempDir('svc-gov-catalog-');
    const { createHash, sign } = await import('node:crypto');
    const entries = ['medical', 'defense'].map((name) => {
      const bytes = Buffer.from(JSON.stringify({ name, version: '1.0.0', description: `Signed ${name} template` }));
      fs.writeFileSync(path.join(dir, `${name}.json`), bytes);
      return { name, version: '1.0.0', file: `${name}.json`, content_sha256: createHash('sha256').update(bytes).digest('hex'), signature: sign(null, bytes, privateKey).toString('base64') };
    });
    fs.writeFileSync(path.join(dir, 'catalog.json'), JSON.stringify({ publisher: 'test', entries }));
    const pubPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const signedAgent = await agent(gateProject({ program: COMPLIANT_PROGRAM }), { env: { SVC_COMPLIANCE_CATALOG_DIR: dir, SVC_COMPLIANCE_CATALOG_PUBKEY: pubPem } });
    const ok = await get(signedAgent, '/v1/compliance/profiles');
    expect(ok.body.signed_catalog).toEqual([
      { name: 'medical', version: '1.0.0', verified: true, content_sha256: entries[0]!.content_sha256, description: 'Signed medical template' },
      { name: 'defense', version: '1.0.0', verified: true, content_sha256: entries[1]!.content_sha256, description: 'Signed defense template' },
    ]);
    // A verified template supplies the export's description.
    expect((await get(signedAgent, '/v1/compliance/export?profile=medical', signedAgent.keys.developer)).body.export.description).toBe('Signed medical template');

    // Tampered template bytes: the hash no longer matches the manifest.
    fs.writeFileSync(path.join(dir, 'medical.json'), JSON.stringify({ name: 'medical', version: '1.0.0', description: 'Relaxed medical template' }));
    // Forged manifest: the defense hash is updated to new bytes but the signature is not the publisher's.
    const forged = Buffer.from(JSON.stringify({ name: 'defense', version: '1.0.0', description: 'forged' }));
    fs.writeFileSync(path.join(dir, 'defense.json'), forged);
    entries[1]!.content_sha256 = createHash('sha256').update(forged).digest('hex');
    fs.writeFileSync(path.join(dir, 'catalog.json'), JSON.stringify({ entries }));
    const tampered = await get(signedAgent, '/v1/compliance/profiles');
    expect(tampered.body.signed_catalog.map((e: { name: string; verified: boolean; reason: string }) => [e.name, e.verified, e.reason])).toEqual([
      ['medical', false, 'content hash does not match the manifest'],
      ['defense', false, 'signature does not verify under the publisher key'],
    ]);
    // The export falls back to the built-in description.
    expect((await get(signedAgent, '/v1/compliance/export?profile=medical', signedAgent.keys.developer)).body.export.description).not.toBe('Relaxed medical template');

    // The right files but another publisher key: nothing verifies.
    const wrongKey = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const other = await agent(null, { env: { SVC_COMPLIANCE_CATALOG_DIR: dir, SVC_COMPLIANCE_CATALOG_PUBKEY: wrongKey } });
    expect((await get(other, '/v1/compliance/profiles')).body.signed_catalog.every((e: { verified: boolean }) => !e.verified)).toBe(true);
    // An unreadable catalogue: empty list with the reason.
    const broken = await agent(null, { env: { SVC_COMPLIANCE_CATALOG_DIR: tempDir('svc-gov-empty-') } });
    const b = await get(broken, '/v1/compliance/profiles');
    expect(b.body.signed_catalog).toEqual([]);
    expect(b.body.catalog.error).toBe('compliance catalogue unreadable: ENOENT');
    // A malformed publisher key verifies nothing and says why.
    const badKey = await agent(null, { env: { SVC_COMPLIANCE_CATALOG_DIR: dir, SVC_COMPLIANCE_CATALOG_PUBKEY: '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----' } });
    const bk = (await get(badKey, '/v1/compliance/profiles')).body;
    expect(bk.catalog.publisher_key_configured).toBe(false);
    expect(bk.signed_catalog[0]).toMatchObject({ verified: false, reason: expect.stringMatching(/^SVC_COMPLIANCE_CATALOG_PUBKEY unusable/) });
  });
});
