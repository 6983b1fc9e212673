import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { healProgram } from '../../../agent/programs/assurance/heal.js';
import { classifyFailure, correctionOf, riskOf, strategyOf } from '../../../agent/programs/assurance/recovery-actions.js';
import type { Program } from '../../../agent/programs/language/ast.js';
import { at, makeProgram, makeRobot } from './factory.js';
import { removeTempDirs, tempDir } from './project.js';

afterAll(removeTempDirs);

const sentinel = makeRobot({
  name: 'Sentinel',
  sensors: [
    { name: 'lidar', type: 'Lidar', source: null, loc: at() },
    { name: 'gps', type: 'GPS', source: null, loc: at() },
  ],
  actuators: [{ name: 'wheels', type: 'DifferentialDrive', loc: at() }],
});

const modes = [
  { name: 'RoundNormal', kind: 'normal', loc: at() },
  { name: 'RoundDegraded', kind: 'degraded', loc: at() },
  { name: 'RoundSafe', kind: 'safe', loc: at() },
];

function patrolLike(overrides: Partial<Program> = {}): Program {
  return makeProgram({
    robots: [sentinel],
    operatingModes: modes,
    recoveryPolicies: [
      {
        name: 'SentinelRecovery',
        triggers: [
          { condition: 'gps.lost', actions: ['switch_to lidar_localization', 'reduce_speed 0.4m/s', 'enter degraded'] },
          { condition: 'lidar.timeout', actions: ['reduce_speed 0.2m/s', 'enter safe_mode'] },
          { condition: 'mqtt.disconnected', actions: ['buffer air_samples', 'reconnect broker'] },
        ],
        loc: at(),
      },
    ],
    mitigations: [{ name: 'ChargingRoomAir', rules: [{ condition: 'air.co2_high', actions: ['reduce_speed 0.3m/s', 'notify shift_lead'] }], loc: at() }],
    ...overrides,
  });
}

const gates = (names: string[]) => names;

describe('recovery vocabulary', () => {
  it('classifies by keyword family in precedence order', () => {
    expect(
      ['gps.lost', 'wheel_motor.stall', 'lte.down', 'mqtt.disconnected', 'provider.timeout', 'package.corrupt', 'mission.blocked', 'health.degraded', 'fleet.split', 'swarm.lost', 'kill.triggered', 'air.co2_high'].map(classifyFailure),
    ).toEqual([
      'SensorFailure', 'ActuatorFailure', 'ConnectivityFailure', 'ConnectivityFailure', 'ProviderFailure', 'PackageFailure',
      'MissionFailure', 'HealthDegradation', 'FleetFailure', 'SwarmFailure', 'SafetyFailure', 'Unknown',
    ]);
  });

  it('tags strategies, corrections and risks', () => {
    expect(['switch_to visual_odometry', 'reduce_speed 0.5m/s', 'enter safe_mode', 'reconnect broker', 'pause mission', 'notify shift_lead'].map(strategyOf)).toEqual([
      'failover', 'speed_reduction', 'degraded_mode', 'provider_reconnect', 'mission_pause', { custom: 'notify shift_lead' },
    ]);
    expect(['enter degraded', 'enter recovery', 'switch_to rtk', 'reduce_speed 18km/h', 'pause mission', 'halt', 'sing'].map(correctionOf)).toEqual([
      { enter_mode: { mode: 'DegradedMode' } },
      { enter_mode: { mode: 'RecoveryMode' } },
      { switch_source: { to: 'rtk' } },
      { limit_speed: { max_mps: 5 } },
      'pause_mission',
      'stop_motion',
      { custom: 'sing' },
    ]);
    expect(['halt drive', 'emergency_stop', 'proceed unsafe', 'restart fleet', 'open_gate dock', 'restart node'].map(riskOf)).toEqual([
      'Critical', 'Critical', 'High', 'High', 'High', 'Low',
    ]);
  });
});

describe('healProgram', () => {
  it('plans every trigger condition from recovery policies and mitigations and executes low-risk actions', () => {
    const report = healProgram(patrolLike(), { config: null });
    expect(report.policies).toEqual([
      {
        name: 'SentinelRecovery',
        triggers: [
          ['gps.lost', ['switch_to lidar_localization', 'reduce_speed 0.4m/s', 'enter degraded']],
          ['lidar.timeout', ['reduce_speed 0.2m/s', 'enter safe_mode']],
          ['mqtt.disconnected', ['buffer air_samples', 'reconnect broker']],
        ],
      },
      { name: 'ChargingRoomAir', triggers: [['air.co2_high', ['reduce_speed 0.3m/s', 'notify shift_lead']]] },
    ]);
    expect(report.contexts).toEqual([
      { issue: 'gps.lost', classification: 'SensorFailure', diagnosis: 'Satellite lock lost', level: 'Level2AutomaticLowRisk' },
      { issue: 'lidar.timeout', classification: 'SensorFailure', diagnosis: 'Lidar scans unavailable', level: 'Level2AutomaticLowRisk' },
      { issue: 'mqtt.disconnected', classification: 'ConnectivityFailure', diagnosis: 'Message broker unreachable', level: 'Level2AutomaticLowRisk' },
      { issue: 'air.co2_high', classification: 'Unknown', diagnosis: 'Unclassified failure', level: 'Level2AutomaticLowRisk' },
    ]);
    expect(report.plans[0]).toEqual({
      name: 'recovery_gps_lost',
      failure: 'gps.lost',
      classification: 'SensorFailure',
      diagnosis: 'Satellite lock lost',
      actions: [
        { description: 'switch_to lidar_localization', strategy: 'failover', correction: { switch_source: { to: 'lidar_localization' } }, risk: 'Low', requires_approval: false, order: 1 },
        { description: 'reduce_speed 0.4m/s', strategy: 'speed_reduction', correction: { limit_speed: { max_mps: 0.4 } }, risk: 'Low', requires_approval: false, order: 2 },
        { description: 'enter degraded', strategy: 'degraded_mode', correction: { enter_mode: { mode: 'DegradedMode' } }, risk: 'Low', requires_approval: false, order: 3 },
      ],
      target_mode: 'DegradedMode',
      level: 'Level2AutomaticLowRisk',
      risk: 'Low',
    });
    expect(report.plans.map((p) => [p.name, p.target_mode])).toEqual([
      ['recovery_gps_lost', 'DegradedMode'],
      ['recovery_lidar_timeout', 'SafeMode'],
      ['recovery_mqtt_disconnected', null],
      ['recovery_air_co2_high', null],
    ]);
    expect(report.results.map((r) => r.status)).toEqual(['Success', 'Success', 'Success', 'Success']);
    expect(report.results[0]!.actions[0]!.gates.map((g) => [g.gate, g.passed])).toEqual([
      ['Safety Validation', true],
      ['Hardware Verification', true],
      ['Capability Verification', true],
      ['Readiness Validation', true],
    ]);
    expect(report.results[0]!.actions[0]!.gates[1]!.detail).toBe('Compatible with no declared target');
    expect(report.audit).toHaveLength(9);
    expect(report.audit[0]).toEqual({
      plan: 'recovery_gps_lost', order: 1, action: 'switch_to lidar_localization', outcome: 'executed', failed_gates: [], timestamp_hint: 'static-analysis',
    });
    expect(report.readiness.recovery_ready).toBe(true);
    expect(report.readiness.risk).toBe('Low');
    expect(report.readiness.blockers).toEqual([]);
    expect(report.readiness.readiness_score).toBeGreaterThan(0);
    expect(report.assurance).toEqual({
      recovery_evidence: ['recovery_policy SentinelRecovery: 3 trigger(s)', 'mitigation ChargingRoomAir: 1 rule(s)'],
      recovery_readiness: true,
      success_rate: 1,
      traceability: [
        { failure: 'gps.lost', plan: 'recovery_gps_lost', source: 'policy', policies: ['SentinelRecovery'] },
        { failure: 'lidar.timeout', plan: 'recovery_lidar_timeout', source: 'policy', policies: ['SentinelRecovery'] },
        { failure: 'mqtt.disconnected', plan: 'recovery_mqtt_disconnected', source: 'policy', policies: ['SentinelRecovery'] },
        { failure: 'air.co2_high', plan: 'recovery_air_co2_high', source: 'policy', policies: ['ChargingRoomAir'] },
      ],
    });
    expect(report.fleet_plans).toEqual([]);
    expect(report.mode_issues).toEqual([]);
    expect(report.passed).toBe(true);
  });

  it('collects actions from every policy whose condition matches (numbered across policies)', () => {
    const program = patrolLike({
      continuityPolicies: [],
      recoveryPolicies: [
        { name: 'A', triggers: [{ condition: 'gps.lost', actions: ['switch_to rtk'] }], loc: at() },
        { name: 'B', triggers: [{ condition: 'robot.gps.lost', actions: ['reduce_speed 0.2m/s'] }], loc: at() },
      ],
      mitigations: [],
    });
    const report = healProgram(program, { config: null });
    expect(report.contexts.map((c) => c.issue)).toEqual(['gps.lost', 'robot.gps.lost']);
    expect(report.plans[0]!.actions.map((a) => [a.order, a.description])).toEqual([
      [1, 'switch_to rtk'],
      [2, 'reduce_speed 0.2m/s'],
    ]);
    expect(report.assurance.traceability[0]!.policies).toEqual(['A', 'B']);
  });

  it('uses the default context and default actions without policies', () => {
    const report = healProgram(makeProgram({ robots: [sentinel] }), { config: null, knowledgePath: null });
    expect(report.policies).toEqual([]);
    expect(report.contexts).toEqual([{ issue: 'gps.failed', classification: 'SensorFailure', diagnosis: 'Satellite lock lost', level: 'Level2AutomaticLowRisk' }]);
    expect(report.plans[0]!.name).toBe('recovery_gps_failed');
    expect(report.plans[0]!.actions.map((a) => a.description)).toEqual(['switch_to visual_odometry', 'reduce_speed 0.5m/s', 'enter degraded_mode']);
    expect(report.assurance.traceability[0]!.source).toBe('default');
    expect(report.knowledge).toEqual({
      path: null,
      loaded: false,
      error: null,
      entries: [
        { failure: 'gps.failed', classification: 'SensorFailure', actions: ['switch_to visual_odometry', 'reduce_speed 0.5m/s', 'enter degraded_mode'], success_rate: null, source: 'analysis' },
        { failure: 'lidar.failed', classification: 'SensorFailure', actions: ['switch_to camera_depth', 'reduce_speed 0.3m/s', 'enter degraded_mode'], success_rate: null, source: 'analysis' },
      ],
    });
    expect(report.passed).toBe(true);
  });

  it('falls back to the best knowledge-store entry read from the state directory', () => {
    const stateDir = tempDir();
    const knowledgePath = path.join(stateDir, 'recovery_knowledge.json');
    fs.writeFileSync(
      knowledgePath,
      JSON.stringify({
        entries: [
          { failure: 'camera.failed', actions: ['switch_to thermal'], success_rate: 0.99 },
          { classification: 'SensorFailure', failure: 'imu.drift', actions: ['recalibrate imu'], success_rate: 0.95 },
          { failure: 'gps.failed', actions: ['switch_to rtk_base', 'enter degraded'], success_rate: 0.6 },
          { failure: 'gps.failed', actions: ['switch_to wheel_odometry', 'reduce_speed 0.3m/s'], success_rate: 0.9 },
          { failure: 'broken' },
        ],
      }),
    );
    // The process working directory holds a decoy that must never be read.
    const report = healProgram(makeProgram({ robots: [sentinel] }), { config: null, knowledgePath });
    expect(report.plans[0]!.actions.map((a) => a.description)).toEqual(['switch_to wheel_odometry', 'reduce_speed 0.3m/s']);
    expect(report.assurance.traceability[0]!.source).toBe('knowledge');
    expect(report.knowledge.path).toBe(knowledgePath);
    expect(report.knowledge.loaded).toBe(true);
    expect(report.knowledge.entries.filter((e) => e.source === 'store')).toHaveLength(4);
    expect(report.knowledge.entries[0]).toEqual({ failure: 'camera.failed', classification: 'SensorFailure', actions: ['switch_to thermal'], success_rate: 0.99, source: 'store' });

    // Only a classification match: the best-rated entry of that class.
    const lidar = healProgram(makeProgram({ robots: [sentinel], recoveryPolicies: [{ name: 'P', triggers: [{ condition: 'lidar.blind', actions: [] }], loc: at() }] }), { config: null, knowledgePath });
    expect(lidar.plans[0]!.actions.map((a) => a.description)).toEqual(['switch_to thermal']);
  });

  it('reports an unreadable knowledge store and plans with defaults', () => {
    const stateDir = tempDir();
    const knowledgePath = path.join(stateDir, 'recovery_knowledge.json');
    fs.writeFileSync(knowledgePath, '{not json');
    const report = healProgram(makeProgram({ robots: [sentinel] }), { config: null, knowledgePath });
    expect(report.knowledge.loaded).toBe(false);
    expect(report.knowledge.error).toMatch(/JSON/);
    expect(report.assurance.traceability[0]!.source).toBe('default');
  });

  it('marks safety failures Unsafe and needs approval for critical actions', () => {
    const program = patrolLike({
      recoveryPolicies: [{ name: 'Stop', triggers: [{ condition: 'kill.triggered', actions: ['emergency_stop', 'enter safe_mode'] }], loc: at() }],
      mitigations: [],
    });
    const report = healProgram(program, { config: null });
    expect(report.plans[0]!.classification).toBe('SafetyFailure');
    expect(report.plans[0]!.risk).toBe('Critical');
    expect(report.plans[0]!.actions[0]).toMatchObject({ description: 'emergency_stop', strategy: { custom: 'emergency_stop' }, correction: 'stop_motion', risk: 'Critical', requires_approval: true });
    expect(report.results[0]!.status).toBe('Unsafe');
    expect(report.results[0]!.actions[0]!.gates.map((g) => g.gate)).toEqual(
      gates(['Safety Validation', 'Hardware Verification', 'Capability Verification', 'Readiness Validation', 'Operator Approval']),
    );
    expect(report.audit[0]).toMatchObject({ outcome: 'blocked', failed_gates: ['Safety Validation', 'Readiness Validation', 'Operator Approval'] });
    expect(report.readiness.blockers[0]).toBe('recovery_kill_triggered#1 Safety Validation: Failure is a safety violation: automatic recovery is not allowed');
    expect(report.readiness.risk).toBe('Critical');
    expect(report.assurance.success_rate).toBe(0);
    expect(report.passed).toBe(false);
  });

  it('is PartialSuccess when an action waits for approval (resume mission)', () => {
    const program = patrolLike({
      recoveryPolicies: [{ name: 'Motor', triggers: [{ condition: 'motor.fault', actions: ['resume mission', 'reduce_speed 0.2m/s'] }], loc: at() }],
      mitigations: [],
    });
    const report = healProgram(program, { config: null });
    expect(report.plans[0]!.actions[0]).toMatchObject({ risk: 'Low', requires_approval: true });
    expect(report.results[0]!.status).toBe('PartialSuccess');
    expect(report.results[0]!.actions.map((a) => a.executed)).toEqual([false, true]);
    expect(report.assurance.success_rate).toBe(0.5);
    expect(report.passed).toBe(true);
  });

  it('fails without robots (capability gate) and reports mode issues', () => {
    const report = healProgram(patrolLike({ robots: [] }), { config: null });
    expect(report.results.every((r) => r.status === 'Failed')).toBe(true);
    expect(report.passed).toBe(false);

    const onlyRobotModes = patrolLike({ operatingModes: [], robots: [{ ...sentinel, modes: [{ name: 'safe_mode', body: [], loc: at() }] }] });
    const modesReport = healProgram(onlyRobotModes, { config: null });
    expect(modesReport.mode_issues).toEqual(['No safe mode declared', 'No degraded mode declared']);
    expect(modesReport.readiness.blockers).toEqual(['No safe mode declared', 'No degraded mode declared']);
    expect(modesReport.passed).toBe(false);
  });

  it('fails the hardware gate on an incompatible target', () => {
    const report = healProgram(patrolLike(), { config: null, target: 'ESP32' });
    expect(report.results[0]!.actions[0]!.gates[1]).toEqual({ gate: 'Hardware Verification', passed: false, detail: 'Incompatible with ESP32' });
    expect(report.results.map((r) => r.status)).toEqual(['Failed', 'Failed', 'Failed', 'Failed']);
    expect(report.passed).toBe(false);
  });

  it('adds a failover to a backup device when the issue names a registry device', () => {
    const program = patrolLike({
      recoveryPolicies: [{ name: 'P', triggers: [{ condition: 'sentinel.gps.lost', actions: ['reduce_speed 0.4m/s'] }], loc: at() }],
      mitigations: [],
    });
    const devices = [
      { id: 'imu-1', type: 'imu', logical_name: 'sentinel.imu' },
      { id: 'gps-main', type: 'gps', logical_name: 'sentinel.gps' },
      { id: 'gps-backup', device_type: 'gps', logical_name: null },
    ];
    const report = healProgram(program, { config: null, devices });
    expect(report.plans[0]!.actions.map((a) => [a.order, a.description, a.strategy])).toEqual([
      [1, 'switch_to gps-backup', 'failover'],
      [2, 'reduce_speed 0.4m/s', 'speed_reduction'],
    ]);
    const alone = healProgram(program, { config: null, devices: devices.slice(0, 2) });
    expect(alone.plans[0]!.actions).toHaveLength(1);
  });

  it('adds the fixed fleet playbook per fleet', () => {
    const report = healProgram(patrolLike({ fleets: [{ name: 'Yard', members: ['Sentinel', 'Scout'], loc: at() }] }), { config: null });
    expect(report.fleet_plans).toEqual([
      { fleet: 'Yard', failed_robot: 'Rover', members: ['Sentinel', 'Scout'], actions: ['isolate_failed_robot', 'reassign_mission', 'rebalance_coverage', 'notify_operator'] },
    ]);
  });
});
