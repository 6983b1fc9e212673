import { Status } from 'nice-grpc';
import { afterEach, describe, expect, it } from 'vitest';
import { callUnary, connectGrpc } from '../helpers/grpc-client.js';
import { gateAgent, gateProject, get, writeFleetAgents, type GateAgent } from './fixture.js';

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

const KINDS = [
  'warehouse', 'factory', 'hospital', 'operating_room', 'search_rescue', 'agriculture', 'mining', 'construction', 'maritime', 'aviation',
  'space', 'road_vehicle', 'campus', 'smart_building', 'home', 'retail', 'office', 'defense', 'research',
];

describe('GET /v1/deploy/gate', () => {
  it('F16: without configuration and program: four checklist items, config_loaded false, agents check passes, not ready, gates null', async () => {
    const a = await agent(null);
    const r = await get(a, '/v1/deploy/gate');
    expect(r.status).toBe(200);
    expect(r.body.checklist.map((c: { name: string }) => c.name)).toEqual(['config_loaded', 'mission_ready', 'device_pool_healthy', 'fleet_agents_registered']);
    expect(r.body.checklist[0]).toEqual({ name: 'config_loaded', passed: false, message: 'no --config loaded' });
    expect(r.body.checklist[3]).toEqual({ name: 'fleet_agents_registered', passed: true, message: 'agents=0' });
    expect(r.body).toMatchObject({ version: 'v1', ready: false, gates: null, alert_count: 0, fleet_agent_count: 0, readiness: { total_devices: 0, blocked_count: 0, blocked_devices: [] } });
    expect(r.body.device_pool).toEqual({ total: 0, discovered: 0, quarantined: 0, verified: 0, assigned: 0, active: 0, healthy: 0, degraded: 0, offline: 0, failed: 0, retired: 0 });
    // Additive `checks` mirror the checklist with pass/fail words (the panel's deploy dialog).
    expect(r.body.checks).toEqual(r.body.checklist.map((c: { name: string; passed: boolean; message: string }) => ({ name: c.name, status: c.passed ? 'pass' : 'fail', message: c.message })));
  });

  it('with configuration and program: blocked devices listed with their blockers, program gates plus package_trust and governance', async () => {
    const a = await agent(gateProject({ governance: 'deployment_profile = "warehouse"', robot: 'governance = { operational_maturity = "production" }' }));
    const r = await get(a, '/v1/deploy/gate');
    expect(r.status).toBe(200);
    expect(r.body.ready).toBe(false);
    const item = (name: string) => r.body.checklist.find((c: { name: string }) => c.name === name);
    expect(item('config_loaded')).toEqual({ name: 'config_loaded', passed: true, message: 'configuration resolved' });
    // Calibration expired and firmware below the floor block; gps-1 (valid, 2.0 ≥ 1.9.9) does not.
    expect(item('mission_ready')).toEqual({ name: 'mission_ready', passed: false, message: 'blocked_devices=2' });
    expect(r.body.readiness.total_devices).toBe(3);
    expect(r.body.readiness.blocked_devices).toEqual([
      expect.objectContaining({ device_id: 'imu-1', firmware_supported: false, calibration_expired: false, identity_verified: true, lifecycle_ok: true, readiness_blocked: true, blockers: ['firmware_unsupported'] }),
      expect.objectContaining({ device_id: 'lidar-1', calibration_status: 'expired', calibration_expired: true, firmware_supported: true, readiness_blocked: true, blockers: ['calibration_expired'] }),
    ]);
    expect(item('fleet_agents_registered')).toEqual({ name: 'fleet_agents_registered', passed: false, message: 'agents=0' });
    expect(r.body.gates.gates.map((g: { name: string }) => g.name)).toEqual(['readiness', 'safety', 'capability', 'health', 'package_trust', 'governance']);
    // The program gates also sit in the checklist, after the four fleet items.
    expect(r.body.checklist.slice(4)).toEqual(r.body.gates.gates);
    expect(item('readiness').message).toMatch(/^score \d+ \(min 80\), mission_ready=(true|false)$/);
    // No kill switch (critical) and no safety block on Rover (high): the safety audit fails.
    expect(item('safety')).toMatchObject({ passed: false, message: expect.stringMatching(/^critical=[1-9]\d*, high=[1-9]\d*, medium=\d+, low=\d+$/) });
    expect(item('package_trust')).toEqual({ name: 'package_trust', passed: false, message: 'low trust packages: vision (30/100)' });
    expect(item('governance')).toEqual({ name: 'governance', passed: false, message: 'governance blocks live deployment for: Rover' });
    expect(r.body.gates.passed).toBe(false);
    expect(r.body.checks.find((c: { name: string }) => c.name === 'governance')).toEqual({ name: 'governance', status: 'fail', message: 'governance blocks live deployment for: Rover' });
  });

  it('a project that satisfies the gate is ready: healthy devices, trusted packages, governed robot certified and accountable, safe program, an agent registered', async () => {
    const program = `
kill_switch Estop { priority: critical; remote_signed; action { emergency_stop; } }
health_check RoverVitals for robot Rover {
    check battery.level >= 30%;
}
robot Rover {
    sensor lidar: Lidar;
    actuator wheels: DifferentialDrive;
    safety {
        max_speed = 0.5 m/s;
        stop_if lidar.nearest_distance < 0.5 m;
    }
    mode normal { }
}
`;
    const project = gateProject({
      program,
      devices: '[[devices]]\nid = "lidar-1"\ntype = "lidar"\nrobot_id = "Rover"\ntrust_level = "trusted"\ncalibration_status = "valid"\n',
      robot: 'governance = { operational_maturity = "production", certification_status = "certified", deployment_owner = "ops", responsible_person = "ana", emergency_contact = { email = "oncall@example.org" } }',
      governance: 'deployment_profile = "warehouse"',
    });
    const first = await agent(project);
    writeFleetAgents(first.stateDir, [{ robot_name: 'Rover', url: 'http://127.0.0.1:9', token: 't' }]);
    const r = await get(first, '/v1/deploy/gate');
    const failing = r.body.checklist.filter((c: { passed: boolean }) => !c.passed).map((c: { name: string; message: string }) => `${c.name}: ${c.message}`);
    // Package trust still flags the unpinned `vision`; everything else passes.
    expect(failing).toEqual(['package_trust: low trust packages: vision (30/100)']);
    expect(r.body.fleet_agent_count).toBe(1);
    expect(r.body.readiness.blocked_count).toBe(0);
    expect(r.body.checklist.find((c: { name: string }) => c.name === 'governance')).toEqual({ name: 'governance', passed: true, message: 'governance allows live deployment' });
    expect(r.body.checklist.find((c: { name: string }) => c.name === 'safety').passed).toBe(true);
    expect(r.body.ready).toBe(false);
  });

  it('a program that does not parse gives no program gates (gates null), the fleet checklist stays', async () => {
    const a = await agent(gateProject({ program: 'robot Rover { sensor lidar Lidar' }));
    const r = await get(a, '/v1/deploy/gate');
    expect(r.status).toBe(200);
    expect(r.body.gates).toBeNull();
    expect(r.body.checklist).toHaveLength(4);
  });

  it('the read-auth policy applies: with SVC_API_REQUIRE_AUTH_ALL_READS an anonymous call is 401, any key reads', async () => {
    const a = await agent(null, { env: { SVC_API_REQUIRE_AUTH_ALL_READS: 'true' } });
    expect((await get(a, '/v1/deploy/gate')).status).toBe(401);
    expect((await get(a, '/v1/deploy/gate', a.keys.auditor)).status).toBe(200);
  });
});

describe('GET /v1/deployment-profiles', () => {
  it('lists the 19 built-in kinds in catalogue order, list items without hardware or constraints', async () => {
    const a = await agent(null);
    const r = await get(a, '/v1/deployment-profiles');
    expect(r.status).toBe(200);
    expect(r.body.profiles.map((p: { kind: string }) => p.kind)).toEqual(KINDS);
    expect(r.body.profiles[0]).toEqual({
      kind: 'warehouse',
      display_name: 'Warehouse',
      description: 'Built-in Warehouse deployment profile',
      default_risk_level: 'medium',
      max_autonomy_level: 'partial_automation',
      required_capabilities: ['navigation', 'obstacle_avoidance'],
      required_certifications: ['iso3691-4'],
      standards_profiles: ['industrial_safety'],
    });
    expect(r.body.profiles.some((p: Record<string, unknown>) => 'active' in p)).toBe(false);
  });

  it('F14: ?name=SAR resolves the alias to search_rescue with its full record; ?profile= and other spellings too', async () => {
    const a = await agent(null);
    const r = await get(a, '/v1/deployment-profiles?name=SAR');
    expect(r.status).toBe(200);
    expect(r.body.profile).toMatchObject({ kind: 'search_rescue', display_name: 'Search & Rescue', default_risk_level: 'mission_critical' });
    expect(r.body.profile).toEqual({
      kind: 'search_rescue',
      display_name: 'Search & Rescue',
      description: 'Built-in Search & Rescue deployment profile',
      safety_policies: ['safety.default'],
      recovery_policies: ['recovery.default'],
      default_risk_level: 'mission_critical',
      required_capabilities: ['navigation', 'gps_fallback', 'thermal_imaging'],
      required_hardware: ['gps', 'lidar', 'thermal_camera'],
      required_certifications: ['iso26262'],
      decision_authority: { max_autonomy_level: 'conditional_autonomy', requires_human_approval_above_risk: 'high' },
      communication: { offline_capable: false },
      environmental: {},
      operational_constraints: ['outdoor', 'remote', 'limited_bandwidth'],
      standards_profiles: ['aviation'],
    });
    expect((await get(a, '/v1/deployment-profiles?profile=healthcare')).body.profile.kind).toBe('hospital');
    expect((await get(a, '/v1/deployment-profiles?name=Road-Vehicle')).body.profile.kind).toBe('road_vehicle');
    expect((await get(a, '/v1/deployment-profiles?name=smart%20building')).body.profile.kind).toBe('smart_building');
    // A present but empty name falls back to the warehouse profile.
    expect((await get(a, '/v1/deployment-profiles?name=')).body.profile.kind).toBe('warehouse');
    // Empty lists are omitted from the detail form.
    const plain = (await get(a, '/v1/deployment-profiles?name=mining')).body.profile;
    expect(plain).toMatchObject({ kind: 'mining', display_name: 'mining', default_risk_level: 'medium' });
    expect(plain).not.toHaveProperty('required_capabilities');
  });

  it('F15: an unknown name keeps answering 200 with a custom profile on the catalogue lookup; the path form answers 404', async () => {
    const a = await agent(null);
    const r = await get(a, '/v1/deployment-profiles?name=moonbase');
    expect(r.status).toBe(200);
    expect(r.body.profile).toMatchObject({ kind: { custom: 'moonbase' }, display_name: 'moonbase', default_risk_level: 'medium', decision_authority: { max_autonomy_level: 'partial_automation' } });
    expect(await get(a, '/v1/deployment-profiles/moonbase')).toMatchObject({ status: 404, body: { code: 'not_found', error: "Unknown deployment profile 'moonbase'" } });
    const sar = await get(a, '/v1/deployment-profiles/sar');
    expect(sar.status).toBe(200);
    expect(sar.body.profile.kind).toBe('search_rescue');
  });

  it("marks the project's [governance] deployment_profile active in the list and the detail", async () => {
    const a = await agent(gateProject({ governance: 'deployment_profile = "healthcare"', program: null }));
    const list = (await get(a, '/v1/deployment-profiles')).body.profiles;
    expect(list.filter((p: { active?: boolean }) => p.active).map((p: { kind: string }) => p.kind)).toEqual(['hospital']);
    expect((await get(a, '/v1/deployment-profiles?name=hospital')).body.profile.active).toBe(true);
    expect((await get(a, '/v1/deployment-profiles/hospital')).body.profile.active).toBe(true);
    expect((await get(a, '/v1/deployment-profiles?name=warehouse')).body.profile).not.toHaveProperty('active');
  });

  it('gRPC: ListDeploymentProfiles (Empty) and GetDeploymentProfile (QueryRequest) answer what REST answers', async () => {
    const a = await agent(null, { grpc: true });
    const g = connectGrpc(a.agent.grpcAddress!);
    try {
      const list = await callUnary(g.client, 'ListDeploymentProfiles', {});
      expect(list.status).toBe(Status.OK);
      expect(list.json).toEqual((await get(a, '/v1/deployment-profiles')).body);
      const one = await callUnary(g.client, 'GetDeploymentProfile', { query: 'name=SAR' });
      expect(one.json).toEqual((await get(a, '/v1/deployment-profiles?name=SAR')).body);
      const custom = await callUnary(g.client, 'GetDeploymentProfile', { query: 'name=moonbase' });
      expect(custom.json.profile.kind).toEqual({ custom: 'moonbase' });
      // Without a name the detail RPC answers the list, as the REST route does without a query.
      expect((await callUnary(g.client, 'GetDeploymentProfile', { query: '' })).json.profiles).toHaveLength(19);
    } finally {
      g.close();
    }
  });
});
