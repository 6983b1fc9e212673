import { describe, expect, it } from 'vitest';
import { NO_MISSION_ISSUE, NO_SAFETY_ISSUE, verifyContract } from '../../../agent/programs/analysis/contract.js';
import { verifyMission } from '../../../agent/programs/analysis/verify-mission.js';
import { actuator, at, hardware, maxSpeed, mission, program, robot, rover, sensor } from './program-factory.js';

const kit = hardware('Kit', { sensors: ['Lidar', 'GPS'], actuators: ['DifferentialDrive'], connectivity: ['WiFi'], batteryWh: 100 });
const fielded = (overrides = {}) =>
  robot('R', {
    usesHardware: ['Kit'],
    sensors: [sensor('lidar', 'Lidar'), sensor('gps', 'GPS')],
    actuators: [actuator('wheels', 'DifferentialDrive')],
    safety: [maxSpeed('1m/s')],
    missions: [mission({ name: 'Round', durationHours: 0.75, requiredCapabilities: ['obstacle_avoidance', 'telemetry_streaming'], steps: ['go', 'back'] })],
    ...overrides,
  });

describe('verify mission (docs/program-language.md §15)', () => {
  it('reports an achievable mission', () => {
    const p = program({ robots: [fielded()], hardware: [kit], deploys: [{ robot: 'R', targets: ['Kit'], loc: at() }] });
    expect(verifyMission(p, { config: null })).toEqual([
      {
        achievable: true,
        mission_name: 'Round',
        robot: 'R',
        required_capabilities: ['obstacle_avoidance', 'telemetry_streaming'],
        hardware_satisfied: true,
        capabilities_satisfied: true,
        connectivity_satisfied: true,
        battery_sufficient: true,
        compute_sufficient: true,
        safety_satisfied: true,
        issues: [],
      },
    ]);
  });

  it('lists every failed flag as an issue in order', () => {
    const r = rover('R', {
      missions: [mission({ name: 'M', durationHours: 10, requiredCapabilities: ['obstacle_avoidance', 'ota_update', 'teleport'] })],
      requiresConnectivity: { bandwidthMbps: null, latencyMs: null, connectivity: ['LTE'], loc: at() },
    });
    const [report] = verifyMission(program({ robots: [r], deploys: [{ robot: 'R', targets: ['RoverV1'], loc: at() }] }), { config: null });
    expect(report).toEqual({
      achievable: false,
      mission_name: 'M',
      robot: 'R',
      required_capabilities: ['obstacle_avoidance', 'ota_update', 'teleport'],
      hardware_satisfied: false,
      capabilities_satisfied: false,
      connectivity_satisfied: false,
      battery_sufficient: false,
      compute_sufficient: true,
      safety_satisfied: false,
      issues: [
        'Missing required capability: ota_update',
        'Missing required capability: teleport',
        'Unknown capability in mission: teleport',
        'Insufficient battery for mission duration',
        'Required connectivity not available',
        'Safety capability requirements not satisfied',
        'Hardware compatibility check failed',
      ],
    });
  });

  it('counts exposed capabilities as present and needs no hardware without a target', () => {
    const r = robot('R', { exposes: ['ota_update'], missions: [mission({ name: 'Patrol', requiredCapabilities: ['ota_update'] })] });
    const [report] = verifyMission(program({ robots: [r] }), { config: null });
    expect(report).toMatchObject({ hardware_satisfied: true, capabilities_satisfied: true, safety_satisfied: false });
    expect(report!.issues).toEqual(['Safety capability requirements not satisfied']);
  });

  it('fails hardware for an unknown target and honours extra simulated faults', () => {
    const p = program({ robots: [fielded()], hardware: [kit], deploys: [{ robot: 'R', targets: ['Kit'], loc: at() }] });
    const [unknown] = verifyMission(p, { config: null, target: 'Nowhere' });
    expect(unknown).toMatchObject({ hardware_satisfied: false, battery_sufficient: true, issues: ['Hardware compatibility check failed'] });
    // Kit: 10 W × 0.75 h = 7.5 Wh; halving the 100 Wh pack still leaves a wide margin, losing Lidar does not.
    const [faulty] = verifyMission(p, { config: null, simulateFaults: ['BatteryDegradation', 'LidarFailure'] });
    expect(faulty).toMatchObject({ hardware_satisfied: false, battery_sufficient: true, issues: ['Hardware compatibility check failed'] });
  });

  it('returns one synthetic report when no robot has a mission', () => {
    const p = program({ robots: [robot('A', { sensors: [sensor('c', 'Camera')], exposes: ['manipulation'] })] });
    expect(verifyMission(p, { config: null })).toEqual([
      {
        achievable: false,
        mission_name: null,
        robot: null,
        required_capabilities: [],
        hardware_satisfied: true,
        capabilities_satisfied: false,
        connectivity_satisfied: true,
        battery_sufficient: true,
        compute_sufficient: true,
        safety_satisfied: false,
        issues: ["Robot 'A' requires capability 'manipulation'"],
      },
    ]);
    expect(verifyMission(program(), { config: null })[0]).toMatchObject({ achievable: true, issues: [] });
  });
});

describe('contract verify (docs/program-language.md §21)', () => {
  it('passes a program with missions, safety, continuity, recovery and an achievable mission', () => {
    const p = program({
      robots: [fielded({ modes: [{ name: 'degraded', body: [], loc: at() }] })],
      hardware: [kit],
      deploys: [{ robot: 'R', targets: ['Kit'], loc: at() }],
      missionPlans: [{ name: 'Night', steps: ['undock', 'sweep'], constraints: ['battery . level >= 30 %', 'avoid dock', 'invariant speed'], loc: at() }],
      healthChecks: [{ name: 'HC', targetKind: 'robot', target: 'R', checks: [], requirements: [], loc: at() }],
      healthPolicies: [{ name: 'HP', handlers: [], loc: at() }],
      mitigations: [{ name: 'Mit', rules: [], loc: at() }],
    });
    const result = verifyContract(p, { config: null });
    expect(result.passed).toBe(true);
    expect(result.report.issues).toEqual([]);
    expect(result.report.contracts).toEqual([
      {
        name: 'Night',
        kind: 'mission_plan',
        objectives: ['undock', 'sweep'],
        constraints: ['battery . level >= 30 %', 'avoid dock', 'invariant speed'],
        assumptions: ['health_check:HC', 'health_policy:HP'],
        invariants: ['battery . level >= 30 %', 'invariant speed'],
        guarantees: ['mission_steps_declared'],
        continuity_aligned: false,
        recovery_aligned: true,
        safety_aligned: true,
      },
      {
        name: 'Round',
        kind: 'robot_mission:R',
        objectives: ['go', 'back'],
        constraints: ['duration_hours=0.75'],
        assumptions: ['obstacle_avoidance', 'telemetry_streaming'],
        invariants: [],
        guarantees: ['capabilities_declared'],
        continuity_aligned: false,
        recovery_aligned: true,
        safety_aligned: true,
      },
    ]);
    expect(result.report.checks.map((c) => [c.name, c.category, c.passed])).toEqual([
      ['mission_declared', 'structure', true],
      ['safety_clause', 'safety', true],
      ['continuity_clause', 'continuity', true],
      ['recovery_clause', 'recovery', true],
      ['mission_achievable', 'verify', true],
    ]);
  });

  it('fails an empty program with both structural issues', () => {
    const result = verifyContract(program(), { config: null });
    expect(result.passed).toBe(false);
    expect(result.report.issues).toEqual([NO_MISSION_ISSUE, NO_SAFETY_ISSUE]);
    expect(result.report.checks.map((c) => [c.name, c.passed])).toEqual([
      ['mission_declared', false],
      ['safety_clause', false],
      ['recovery_clause', false],
      ['mission_achievable', true],
    ]);
  });

  it('names unnamed robot missions, prints none for no duration, and adds mission issues', () => {
    const r = robot('R', {
      safety: [maxSpeed('1m/s')],
      missions: [mission({ requiredCapabilities: ['teleport'], approvals: [{ actor: 'lead', actions: ['x'] }] })],
    });
    const result = verifyContract(program({ robots: [r], continuityPolicies: [{ name: 'C', triggers: [], loc: at() }] }), { config: null });
    expect(result.report.contracts[0]).toMatchObject({
      name: 'R_mission',
      kind: 'robot_mission:R',
      constraints: ['duration_hours=none'],
      invariants: ['requires_approval:lead'],
      continuity_aligned: true,
    });
    expect(result.report.issues).toEqual([
      'Missing required capability: teleport',
      'Unknown capability in mission: teleport',
      'Safety capability requirements not satisfied',
    ]);
    expect(result.passed).toBe(false);
  });
});
