import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { parseProgram, type SafetyRule, type TriggerDecl } from '../../../agent/programs/language/index.js';

const demo = (name: string) => {
  const file = path.resolve('demo/programs', name);
  return parseProgram(readFileSync(file, 'utf8'), file);
};

/** Drops `loc` everywhere so structural assertions stay readable. */
function strip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === 'loc' ? undefined : v))) as T;
}

describe('demo/programs/patrol.sd', () => {
  const program = demo('patrol.sd');
  const robot = program.robots[0]!;

  it('reads module, imports, the hardware profile and program-level requirements', () => {
    expect(program.file.endsWith('demo/programs/patrol.sd')).toBe(true);
    expect(program.module).toBe('demo.warehouse.patrol');
    expect(program.imports).toEqual(['positioning.gps', 'fusion.sensor']);
    expect(strip(program.hardware)).toEqual([
      {
        name: 'RoverV2', cpu: 'CortexA78AE', memoryMb: 8192, storageMb: 131072, gpu: 32,
        sensors: ['Lidar', 'Camera', 'IMU', 'GPS', 'AirQuality'], actuators: ['DifferentialDrive'],
        connectivity: ['WiFi', 'LTE', 'Bluetooth'], batteryWh: 180, bandwidthMbps: 100, latencyMs: 15,
        minPeriodMs: 8, powerW: null,
      },
    ]);
    expect(program.hardware[0]!.loc).toEqual({ line: 11, column: 1 });
    expect(strip(program.requiresHardware)).toEqual({ memoryGb: 4, storageGb: null, gpu: null, sensors: ['Lidar', 'IMU'], actuators: [] });
    expect(strip(program.requiresNetwork)).toEqual({ bandwidthMbps: 20, latencyMs: 50, connectivity: [] });
    expect(program.requiresConnectivity).toBeNull();
    expect(strip(program.certifications)).toEqual([{ standard: 'ISO3691_4', level: 'PLd' }]);
    expect(strip(program.deploys)).toEqual([{ robot: 'Sentinel', targets: ['RoverV2'] }]);
  });

  it('reads the robot header, sensors, actuators, topics and capabilities', () => {
    expect(program.robots).toHaveLength(1);
    expect(robot.name).toBe('Sentinel');
    expect(robot.doc).toBe('Patrol rover for the aisles and the trailer yard.');
    expect(robot.loc).toEqual({ line: 29, column: 1 });
    expect(robot.usesHardware).toEqual(['RoverV2']);
    expect(robot.buses).toEqual(['can0']);
    expect(strip(robot.sensors)).toEqual([
      { name: 'lidar', type: 'Lidar', source: '/dev/ttyUSB1' },
      { name: 'imu', type: 'IMU', source: '/dev/ttyUSB0' },
      { name: 'gps', type: 'GPS', source: '/dev/ttyACM0' },
      { name: 'dock_cam', type: 'Camera', source: 'rtsp://192.168.50.21:554/aisle' },
      { name: 'air', type: 'AirQuality', source: 'mqtt://127.0.0.1:1883' },
    ]);
    expect(robot.sensors[0]!.loc).toEqual({ line: 32, column: 5 });
    expect(strip(robot.actuators)).toEqual([{ name: 'wheels', type: 'DifferentialDrive' }]);
    expect(strip(robot.topics)).toEqual([
      { name: 'patrol_status', type: 'PatrolStatus', direction: 'publish', channel: '/sentinel/status', qos: {} },
      { name: 'air_readings', type: 'AirSample', direction: 'publish', channel: '/sentinel/air', qos: {} },
    ]);
    expect(robot.exposes).toEqual([
      'obstacle_avoidance', 'gps_navigation', 'autonomous_navigation', 'telemetry_streaming', 'emergency_stop', 'vision_processing',
    ]);
    expect(robot.generic).toEqual([]);
  });

  it('reads the safety block with quantities, stop_if and both zone shapes', () => {
    const [maxSpeed, maxAngular, stopIf, circle, rect] = robot.safety as [SafetyRule, SafetyRule, SafetyRule, SafetyRule, SafetyRule];
    expect(strip(maxSpeed)).toEqual({ kind: 'max_speed', value: { value: 1.2, unit: 'm/s', text: '1.2m/s' } });
    expect(strip(maxAngular)).toEqual({ kind: 'max_angular', value: { value: 0.8, unit: 'rad/s', text: '0.8rad/s' } });
    expect(stopIf!.kind).toBe('stop_if');
    if (stopIf!.kind !== 'stop_if') throw new Error('stop_if');
    expect(stopIf.text).toBe('lidar . read ( ) . nearest_distance < 0.35m');
    expect(strip(stopIf.condition)).toEqual({
      kind: 'binary', op: '<',
      left: {
        kind: 'member', property: 'nearest_distance',
        object: { kind: 'call', args: [], callee: { kind: 'member', property: 'read', object: { kind: 'ident', name: 'lidar' } } },
      },
      right: { kind: 'number', value: 0.35, unit: 'm', text: '0.35m' },
    });
    expect(circle).toMatchObject({ kind: 'zone', name: 'charging_room', shape: 'circle', text: 'zone charging_room circle at ( - 4 , 3 ) radius 2.5m' });
    if (circle!.kind !== 'zone' || circle!.shape !== 'circle') throw new Error('circle');
    expect(strip(circle.center)).toEqual([
      { kind: 'unary', op: '-', operand: { kind: 'number', value: 4, unit: null, text: '4' } },
      { kind: 'number', value: 3, unit: null, text: '3' },
    ]);
    expect(strip(circle.radius)).toEqual({ kind: 'number', value: 2.5, unit: 'm', text: '2.5m' });
    if (rect!.kind !== 'zone' || rect!.shape !== 'rect') throw new Error('rect');
    expect(rect.name).toBe('dock_apron');
    expect(strip(rect.size)).toEqual([
      { kind: 'number', value: 8, unit: null, text: '8' },
      { kind: 'number', value: 4, unit: null, text: '4' },
    ]);
  });

  it('reads the kill switch, the mission and the modes', () => {
    expect(strip(robot.killSwitches)).toEqual([
      {
        name: 'FloorStop', priority: 'critical', remoteSigned: true, actions: ['wheels . stop ( )', 'emergency_stop'],
        body: [
          { kind: 'expr', expr: { kind: 'call', args: [], callee: { kind: 'member', property: 'stop', object: { kind: 'ident', name: 'wheels' } } } },
          { kind: 'emergency_stop' },
        ],
      },
    ]);
    expect(strip(robot.missions)).toEqual([
      {
        name: 'Patrol', durationHours: 1.5,
        requiredCapabilities: ['obstacle_avoidance', 'gps_navigation', 'emergency_stop', 'telemetry_streaming'],
        approvals: [{ actor: 'shift_lead', actions: ['reenter_dock_apron', 'extend_round'] }],
        steps: ['undock', 'sweep_aisles', 'check_dock_doors', 'loop_trailer_yard', 'sample_charging_room_air', 'return_to_dock'],
      },
    ]);
    expect(robot.modes.map((m) => [m.name, m.body.map((s) => s.kind)])).toEqual([
      ['normal', []], ['degraded', ['publish']], ['safe_mode', ['expr']],
    ]);
  });

  it('reads the entry behaviour with its loop, lets, if/else-if chain and named drive arguments', () => {
    expect(robot.behaviors).toHaveLength(1);
    const sweep = robot.behaviors[0]!;
    expect([sweep.name, sweep.params, sweep.returnType, sweep.requires]).toEqual(['sweep', [], null, null]);
    const loop = sweep.body[0]!;
    if (loop.kind !== 'loop') throw new Error('loop');
    expect(loop.every).toEqual({ value: 100, unit: 'ms', text: '100ms' });
    expect(loop.body.map((s) => s.kind)).toEqual(['let', 'let', 'if', 'publish']);
    const branch = loop.body[2]!;
    if (branch.kind !== 'if') throw new Error('if');
    const drive = branch.then[0]!;
    if (drive.kind !== 'expr' || drive.expr.kind !== 'call') throw new Error('call');
    expect(strip(drive.expr.args)).toEqual([
      { name: 'linear', value: { kind: 'number', value: 0.2, unit: 'm/s', text: '0.2m/s' } },
      { name: 'angular', value: { kind: 'number', value: 0.5, unit: 'rad/s', text: '0.5rad/s' } },
    ]);
    const elseIf = branch.else![0]!;
    expect(elseIf.kind).toBe('if');
    if (elseIf.kind !== 'if') throw new Error('else if');
    expect(elseIf.else).toHaveLength(1);
    expect(strip(loop.body[3])).toEqual({ kind: 'publish', topic: 'patrol_status', value: { kind: 'ident', name: 'heading' } });
  });

  it('reads tasks with deadline, jitter and budget', () => {
    expect(strip(robot.tasks.map(({ body, ...rest }) => ({ ...rest, body: body.map((s) => s.kind) })))).toEqual([
      {
        name: 'air_watch', priority: null, every: { value: 1, unit: 's', text: '1s' },
        deadline: { value: 50, unit: 'ms', text: '50ms' }, jitter: { value: 10, unit: 'ms', text: '10ms' }, requires: null,
        budget: [{ resource: 'cpu', limit: { value: 5, unit: '%', text: '5%' } }], body: ['let', 'publish'],
      },
      {
        name: 'fix_report', priority: null, every: { value: 500, unit: 'ms', text: '500ms' },
        deadline: null, jitter: null, requires: null, budget: [], body: ['let', 'publish'],
      },
    ]);
  });

  it('reads watchdog, observe, twin, verify and the robot-level triggers', () => {
    expect(strip(robot.watchdogs)).toMatchObject([{ name: 'lidar_feed', timeout: { value: 300, unit: 'ms', text: '300ms' } }]);
    expect(robot.watchdogs[0]!.body.map((s) => s.kind)).toEqual(['expr', 'enter']);
    expect(robot.observe).toEqual(['lidar', 'imu', 'gps']);
    expect(strip(robot.twins)).toEqual([{ name: 'sentinel_twin', mirror: ['wheels'], replay: true }]);
    expect(robot.verify).toHaveLength(1);
    expect(robot.verify[0]).toMatchObject({ kind: 'binary', op: '>', right: { kind: 'number', value: 0.3, unit: 'm' } });
    expect(robot.triggers.map((t) => t.kind)).toEqual(['every', 'when', 'recover']);
    const [every, when, recover] = robot.triggers as [TriggerDecl, TriggerDecl, TriggerDecl];
    if (every!.kind !== 'every' || when!.kind !== 'when' || recover!.kind !== 'recover') throw new Error('triggers');
    expect(every.interval).toEqual({ value: 2, unit: 's', text: '2s' });
    expect(when.condition).toMatchObject({ kind: 'binary', op: '>', right: { value: 0.15, unit: 'rad' } });
    expect(recover.failure).toBe('lidar_timeout');
    expect(recover.body.map((s) => s.kind)).toEqual(['expr', 'enter']);
  });

  it('reads every policy-style declaration with token-joined strings', () => {
    expect(strip(program.healthChecks)).toEqual([
      {
        name: 'SentinelVitals', targetKind: 'robot', target: 'Sentinel', requirements: [],
        checks: [
          { metric: 'battery.level', operator: '>=', threshold: '25 %' },
          { metric: 'lidar.scan_hz', operator: '>=', threshold: '8Hz' },
          { metric: 'drive.can_errors', operator: '<=', threshold: '3' },
        ],
      },
    ]);
    expect(strip(program.healthPolicies)).toEqual([
      { name: 'SentinelResponse', handlers: [{ status: 'Degraded', actions: ['enter degraded'] }, { status: 'Critical', actions: ['enter safe_mode'] }] },
    ]);
    expect(strip(program.requiresCapabilities)).toEqual([
      { capability: 'obstacle_avoidance', sensors: ['Lidar', 'DepthCamera'], actuators: ['DifferentialDrive'], connectivity: [] },
    ]);
    expect(strip(program.recoveryPolicies)).toEqual([
      {
        name: 'SentinelRecovery',
        triggers: [
          { condition: 'gps.lost', actions: ['switch_to lidar_localization', 'reduce_speed 0.4m/s', 'enter degraded'] },
          { condition: 'lidar.timeout', actions: ['reduce_speed 0.2m/s', 'enter safe_mode'] },
          { condition: 'mqtt.disconnected', actions: ['buffer air_samples', 'reconnect broker'] },
        ],
      },
    ]);
    expect(strip(program.mitigations)).toEqual([
      { name: 'ChargingRoomAir', rules: [{ condition: 'air.co2_high', actions: ['reduce_speed 0.3m/s', 'notify shift_lead'] }] },
    ]);
    expect(strip(program.decisionTrees)).toEqual([
      { name: 'AisleReflex', layer: 'reflex', version: '1.0.0', rules: [{ condition: 'lidar . nearest_distance < 0.5m', actions: ['stop_drive', 'sound_horn'] }] },
      { name: 'YardFix', layer: 'local', version: '1.0.0', rules: [{ condition: 'gps . fix_quality == 0', actions: ['switch_to lidar_localization', 'reduce_speed 0.4m/s'] }] },
    ]);
    expect(strip(program.missionPlans)).toEqual([
      {
        name: 'NightRound',
        steps: ['undock', 'sweep_aisles', 'check_dock_doors', 'loop_trailer_yard', 'sample_charging_room_air', 'return_to_dock'],
        constraints: ['battery . level >= 30 %', 'speed <= 1.2m/s'],
      },
    ]);
    expect(strip(program.operatingModes)).toEqual([
      { name: 'RoundNormal', kind: 'normal' }, { name: 'RoundDegraded', kind: 'degraded' }, { name: 'RoundSafe', kind: 'safe' },
    ]);
    expect(program.assuranceCases[0]!.evidence).toEqual([
      'hardware_profile_review', 'capability_matrix', 'health_monitoring', 'replay_of_pilot_runs', 'safety_zone_survey',
    ]);
    expect(strip(program.knowledgeModels)).toEqual([
      {
        name: 'SentinelModel', components: ['lidar', 'gps', 'imu', 'drive_can'],
        dependencies: [
          { capability: 'obstacle_avoidance', requires: ['lidar', 'drive_can'] },
          { capability: 'gps_navigation', requires: ['gps', 'imu', 'drive_can'] },
        ],
      },
    ]);
    expect(strip(program.stateEstimators)).toEqual([{ name: 'SentinelPose', inputs: ['gps.fix', 'imu.yaw', 'wheels.odometry'], output: 'PoseEstimate' }]);
    expect(strip(program.anomalyDetectors)).toEqual([
      {
        name: 'ChargingRoomAirQuality', learnedBackend: null,
        expected: [
          { metric: 'air.co2', operator: '<=', threshold: '1000ppm' },
          { metric: 'air.temperature', operator: '<=', threshold: '35celsius' },
        ],
      },
    ]);
    expect(strip(program.anomalyHandlers)).toEqual([
      { detector: 'ChargingRoomAirQuality', severity: 'Medium', actions: ['reduce_speed 0.3m/s', 'notify shift_lead'] },
    ]);
    expect(program.resiliencePolicies[0]!.strategies).toEqual(['lidar_only_localization', 'reduced_speed_round', 'early_return_to_dock']);
    expect(program.generic).toEqual([]);
    expect(program.faultHandlers).toEqual([]);
  });
});

describe('demo/programs/dock.sd', () => {
  const program = demo('dock.sd');
  const robot = program.robots[0]!;

  it('reads a robot with no hardware block, a state machine and two tasks', () => {
    expect(program.module).toBe('demo.warehouse.dock');
    expect(program.hardware).toEqual([]);
    expect(strip(program.deploys)).toEqual([{ robot: 'Dockhand', targets: ['RaspberryPi5'] }]);
    expect(strip(program.certifications)).toEqual([{ standard: 'ISO3691_4', level: null }]);
    expect(robot.doc).toBe('Charging-bay tug.');
    expect(robot.sensors.map((s) => [s.name, s.type, s.source])).toEqual([
      ['bay_cam', 'Camera', '/dev/video0'], ['imu', 'IMU', 'i2c-1'],
    ]);
    expect(robot.usesHardware).toEqual([]);
    expect(robot.behaviors).toEqual([]);
    expect(robot.exposes).toEqual(['vision_processing', 'emergency_stop']);
    expect(robot.safety.map((r) => r.kind)).toEqual(['max_speed', 'max_angular', 'zone']);
    expect(strip(robot.stateMachines)).toEqual([
      {
        name: 'docking', states: ['waiting', 'squaring_up', 'holding'],
        transitions: [{ from: 'waiting', to: 'squaring_up' }, { from: 'squaring_up', to: 'holding' }, { from: 'holding', to: 'waiting' }],
      },
    ]);
    expect(robot.killSwitches.map((k) => [k.name, k.priority, k.remoteSigned, k.actions])).toEqual([
      ['BayStop', 'critical', false, ['wheels . stop ( )', 'emergency_stop']],
    ]);
  });

  it('reads task periods, deadlines, budgets and negative unit arguments', () => {
    const [squareUp, bayReport] = robot.tasks;
    expect(squareUp!.every!.text).toBe('50ms');
    expect(squareUp!.deadline!.text).toBe('20ms');
    expect(squareUp!.budget).toEqual([{ resource: 'cpu', limit: { value: 10, unit: '%', text: '10%' } }]);
    expect(squareUp!.body.map((s) => s.kind)).toEqual(['let', 'if']);
    const branch = squareUp!.body[1]!;
    if (branch.kind !== 'if') throw new Error('if');
    const drive = branch.then[0]!;
    if (drive.kind !== 'expr' || drive.expr.kind !== 'call') throw new Error('drive');
    expect(strip(drive.expr.args[1])).toEqual({
      name: 'angular', value: { kind: 'unary', op: '-', operand: { kind: 'number', value: 0.2, unit: 'rad/s', text: '0.2rad/s' } },
    });
    expect(bayReport!.every).toEqual({ value: 1, unit: 's', text: '1s' });
    expect(strip(program.healthChecks[0]!.checks)).toEqual([
      { metric: 'battery.level', operator: '>=', threshold: '15 %' },
      { metric: 'imu.update_hz', operator: '>=', threshold: '50Hz' },
    ]);
    expect(strip(program.healthPolicies)).toEqual([{ name: 'DockhandResponse', handlers: [{ status: 'Critical', actions: ['emergency_stop'] }] }]);
  });
});
