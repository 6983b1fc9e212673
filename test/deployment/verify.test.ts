import { afterEach, describe, expect, it } from 'vitest';
import { gateAgent, gateProject, post, type GateAgent } from './fixture.js';

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

const VERIFY = '/v1/deployment/verify';

describe('POST /v1/deployment/verify', () => {
  it('without a configuration: 400 No configuration loaded', async () => {
    const a = await agent(null);
    expect(await post(a, VERIFY, a.keys.operator)).toMatchObject({ status: 400, body: { code: 'bad_request', error: 'No configuration loaded' } });
  });

  it('without a profile: a DEPLOY_NO_PROFILE warning that passes, and fails in strict mode (body or query, the query wins)', async () => {
    const a = await agent(gateProject({ program: null }));
    const r = await post(a, VERIFY, a.keys.operator);
    expect(r.status).toBe(200);
    expect(r.body.report).toEqual({
      passed: true,
      findings: [{ severity: 'warning', code: 'DEPLOY_NO_PROFILE', message: 'No deployment profile configured' }],
      recommended_actions: ['Set deployment_profile in svc.governance.toml'],
    });
    expect(r.body.text.split('\n')).toEqual([
      'Deployment Verification Report',
      '==============================',
      'Result: PASS',
      '',
      'Findings:',
      '  [Warning] DEPLOY_NO_PROFILE — No deployment profile configured',
      '',
      'Recommended Actions:',
      '  - Set deployment_profile in svc.governance.toml',
    ]);
    expect((await post(a, VERIFY, a.keys.operator, { strict: true })).body.report.passed).toBe(false);
    expect((await post(a, `${VERIFY}?strict=true`, a.keys.operator, { strict: false })).body.report.passed).toBe(false);
    expect((await post(a, `${VERIFY}?strict=false`, a.keys.operator, { strict: true })).body.report.passed).toBe(true);
    const strict = await post(a, VERIFY, a.keys.operator, { strict: true });
    expect(strict.body.text.split('\n')[2]).toBe('Result: FAIL');
  });

  it('a governed robot lacking a capability the profile requires: DEPLOY_CAPABILITY missing, passed false, with the action', async () => {
    const a = await agent(gateProject({ governance: 'deployment_profile = "warehouse"\noperational_maturity = "simulation"\nrisk_level = "medium"', robot: 'capabilities = ["navigation"]', program: null }));
    const r = await post(a, VERIFY, a.keys.operator);
    expect(r.status).toBe(200);
    expect(r.body.report).toEqual({
      passed: false,
      deployment_profile: 'warehouse',
      operational_maturity: 'simulation',
      findings: [{ severity: 'missing', code: 'DEPLOY_CAPABILITY', message: "Profile 'warehouse' requires capability 'obstacle_avoidance'", entity_id: 'Rover' }],
      recommended_actions: ["Add capability 'obstacle_avoidance' to Rover"],
    });
    expect(r.body.text.split('\n')).toEqual([
      'Deployment Verification Report',
      '==============================',
      'Result: FAIL',
      'Deployment Profile: warehouse',
      'Operational Maturity: simulation',
      '',
      'Findings:',
      "  [Missing] DEPLOY_CAPABILITY — Profile 'warehouse' requires capability 'obstacle_avoidance' (Rover)",
      '',
      'Recommended Actions:',
      "  - Add capability 'obstacle_avoidance' to Rover",
    ]);
    // Only the fleet entity: it is governed but not a robot, so nothing is missing.
    expect((await post(a, VERIFY, a.keys.operator, { entity_id: 'gate-fleet' })).body.report).toEqual({ passed: true, deployment_profile: 'warehouse', operational_maturity: 'simulation' });
    // An unknown entity examines nothing.
    expect((await post(a, `${VERIFY}?entity_id=nope`, a.keys.operator)).body.report.passed).toBe(true);
  });

  it('governance blockers become DEPLOY_GOV findings (high → missing, medium → warning) and autonomy above the profile a DEPLOY_AUTONOMY warning', async () => {
    const a = await agent(
      gateProject({
        governance: 'deployment_profile = "warehouse"',
        robot: 'capabilities = ["navigation", "obstacle_avoidance"]\ngovernance = { autonomy_level = "high", risk_level = "moderate", operational_maturity = "prototype" }',
        // A device of unknown identity: Rover's trust posture is not trusted.
        devices: '[[devices]]\nid = "cam-1"\ntype = "camera"\nrobot_id = "Rover"\n',
        program: null,
      }),
    );
    const r = await post(a, VERIFY, a.keys.operator, { entity_id: 'Rover' });
    expect(r.body.report.findings).toEqual([
      { severity: 'missing', code: 'DEPLOY_GOV', message: "Autonomy 'high_autonomy' blocked until trust posture is trusted or verified", entity_id: 'Rover' },
      { severity: 'warning', code: 'DEPLOY_GOV', message: 'Medium+ risk requires at least simulation maturity', entity_id: 'Rover' },
      { severity: 'warning', code: 'DEPLOY_AUTONOMY', message: 'Autonomy high_autonomy exceeds profile max partial_automation', entity_id: 'Rover' },
    ]);
    expect(r.body.report.passed).toBe(false);
    expect(r.body.text).toContain("  [Missing] DEPLOY_GOV — Autonomy 'high_autonomy' blocked until trust posture is trusted or verified (Rover)");
    expect(r.body.text).toContain('  [Warning] DEPLOY_AUTONOMY — Autonomy high_autonomy exceeds profile max partial_automation (Rover)');
  });

  it('a configured profile outside the catalogue is 404 where it is used', async () => {
    const a = await agent(gateProject({ governance: 'deployment_profile = "moonbase"', program: null }));
    expect(await post(a, VERIFY, a.keys.operator)).toMatchObject({ status: 404, body: { code: 'not_found', error: "Unknown deployment profile 'moonbase'" } });
  });

  it('access and input: anonymous 401, auditor 403, developer (Operate) 200; bad JSON and wrong types 400', async () => {
    const a = await agent(gateProject({ program: null }));
    expect((await post(a, VERIFY, null)).status).toBe(401);
    expect(await post(a, VERIFY, a.keys.auditor)).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect((await post(a, VERIFY, a.keys.developer)).status).toBe(200);
    const bad = await post(a, VERIFY, a.keys.operator, '{');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid JSON body: /);
    expect((await post(a, VERIFY, a.keys.operator, { strict: 'yes' })).status).toBe(400);
    expect((await post(a, `${VERIFY}?strict=maybe`, a.keys.operator)).status).toBe(400);
  });
});
