import { describe, expect, it } from 'vitest';
import { CERTIFICATION_WARNING, verifyHardware } from '../../../agent/programs/analysis/verify-hardware.js';
import type { Program, RobotDecl } from '../../../agent/programs/language/ast.js';
import { actuator, at, hardware, loopEvery, mission, program, q, robot, rover, sensor, task } from './program-factory.js';

const deployTo = (target: string) => [{ robot: 'R', targets: [target], loc: at(9, 1) }];

function single(r: RobotDecl, target: string, extra: Partial<Program> = {}) {
  return verifyHardware(program({ robots: [r], deploys: deployTo(target), certifications: [{ standard: 'ISO', level: null, loc: at() }], ...extra }), {
    config: null,
  });
}

const messages = (items: { message: string }[]) => items.map((i) => i.message);
const errors = (items: { severity: string; message: string }[]) => items.filter((i) => i.severity === 'error').map((i) => i.message);

describe('verify hardware: components', () => {
  it('checks sensor, fused sensor and actuator types against the profile', () => {
    const r = robot('R', {
      sensors: [sensor('lidar', 'Lidar'), sensor('therm', 'Thermal')],
      actuators: [actuator('arm', 'RoboticArm')],
      observe: ['lidar', 'therm'],
    });
    const report = single(r, 'RoverV1');
    expect(report.compatible).toBe(false);
    expect(report.target).toBe('RoverV1');
    expect(errors(report.items)).toEqual([
      "Sensor 'therm' (Thermal) not supported by RoverV1",
      "Fused sensor 'therm' (Thermal) not supported by RoverV1",
      "Actuator 'arm' (RoboticArm) not supported by RoverV1",
    ]);
    expect(report.items[0]).toEqual({ category: 'certification', message: 'Certification ISO declared', severity: 'pass', line: 1, column: 1 });
  });

  it('reports an unknown target as an error', () => {
    const report = single(rover('R'), 'MysteryBoard');
    expect(errors(report.items)).toEqual(["Hardware target 'MysteryBoard' is not a known profile"]);
    expect(report.items.find((i) => i.category === 'target')).toMatchObject({ line: 9, column: 1 });
  });

  it('applies simulate_compatibility faults before checking', () => {
    const report = single(robot('R', { sensors: [sensor('cam', 'Camera')] }), 'RoverV1', { simulateFaults: ['CameraFailure'] });
    expect(errors(report.items)).toEqual(["Sensor 'cam' (Camera) not supported by RoverV1"]);
  });
});

describe('verify hardware: mission battery', () => {
  const pack = hardware('Pack', { batteryWh: 100, powerW: 40 });
  const withMission = (hours: number) => robot('R', { missions: [mission({ name: 'M', durationHours: hours })] });

  it('is an error when the mission energy exceeds the capacity', () => {
    const report = single(withMission(3), 'Pack', { hardware: [pack] });
    expect(report.items.filter((i) => i.category === 'battery')).toEqual([
      { category: 'battery', severity: 'error', message: "Mission 'M' needs 120 Wh: Pack battery capacity 100 Wh is below the mission energy", line: 1, column: 1 },
    ]);
  });

  it('warns when the margin is under 20% of the capacity', () => {
    const report = single(withMission(2.2), 'Pack', { hardware: [pack] });
    expect(report.compatible).toBe(true);
    expect(report.items.filter((i) => i.category === 'battery').map((i) => [i.severity, i.message])).toEqual([
      ['warning', "Mission 'M' needs 88 Wh: Pack battery margin 12 Wh is below 20% of capacity 100 Wh"],
    ]);
  });

  it('passes with enough margin', () => {
    const report = single(withMission(1), 'Pack', { hardware: [pack] });
    expect(report.items.filter((i) => i.category === 'battery').map((i) => [i.severity, i.message])).toEqual([
      ['pass', "Mission 'M' needs 40 Wh of Pack battery capacity 100 Wh (margin 60%)"],
    ]);
  });

  it('warns when the target has no battery figure', () => {
    const report = single(withMission(1), 'JetsonOrin');
    expect(report.items.filter((i) => i.category === 'battery').map((i) => [i.severity, i.message])).toEqual([
      ['warning', 'Mission duration declared but target battery capacity unknown'],
    ]);
  });

  it('uses the built-in power figure (RoverV2: 20 W × 6 h = 120 Wh of 150 Wh → margin 20%, no warning)', () => {
    const report = single(withMission(6), 'RoverV2');
    expect(report.items.find((i) => i.category === 'battery')?.severity).toBe('pass');
    const tighter = single(withMission(6.5), 'RoverV2');
    expect(tighter.items.find((i) => i.category === 'battery')?.severity).toBe('warning');
  });
});

describe('verify hardware: timing', () => {
  it('rejects periods shorter than the profile minimum, tasks and loops alike', () => {
    const r = robot('R', {
      tasks: [task('fast', '20ms')],
      behaviors: [{ name: 'b', params: [], returnType: null, requires: null, ensures: null, invariant: null, body: [loopEvery('100ms')], loc: at() }],
    });
    const report = single(r, 'ESP32');
    expect(report.items.filter((i) => i.category === 'timing').map((i) => [i.severity, i.message])).toEqual([
      ['error', "Task 'fast' period 20 ms is shorter than ESP32 minimum period 50 ms"],
      ['pass', "Loop in behavior 'b' period 100 ms meets ESP32 minimum period 50 ms"],
      ['pass', 'Aggregate CPU load 30% on ESP32'],
    ]);
  });

  it('finds loops nested in if statements and converts seconds', () => {
    const nested = { kind: 'if' as const, condition: { kind: 'bool' as const, value: true, loc: at() }, then: [loopEvery('5ms')], else: null, loc: at() };
    const r = robot('R', { tasks: [task('slow', '1s', { body: [nested] })] });
    const report = single(r, 'RoverV1');
    // 5 ms per period: 1 s → 0.5%, 5 ms → 100%.
    expect(errors(report.items)).toEqual([
      "Loop in task 'slow' period 5 ms is shorter than RoverV1 minimum period 10 ms",
      'Aggregate CPU load 100.5% on RoverV1 exceeds 100%',
    ]);
    expect(messages(report.items)).toContain("Task 'slow' period 1000 ms meets RoverV1 minimum period 10 ms");
  });

  it('warns above 80% aggregate CPU', () => {
    const quick = hardware('Quick', { minPeriodMs: 1 });
    const report = single(robot('R', { tasks: [task('a', '10ms'), task('b', '20ms'), task('c', '60ms')] }), 'Quick', { hardware: [quick] });
    expect(report.items.filter((i) => i.category === 'timing').at(-1)).toMatchObject({
      severity: 'warning',
      message: 'Aggregate CPU load 83.33% on Quick exceeds 80%',
    });
  });
});

describe('verify hardware: requirements, budgets, models, adapters, topics', () => {
  it('checks requires_hardware and requires_network against the profile', () => {
    const p = program({
      robots: [robot('R')],
      deploys: deployTo('RoverV1'),
      certifications: [{ standard: 'ISO', level: 'PLd', loc: at() }],
      requiresHardware: { memoryGb: 4, storageGb: null, gpu: true, sensors: ['Lidar', 'Thermal'], actuators: [], loc: at(4, 1) },
      requiresNetwork: { bandwidthMbps: 200, latencyMs: 10, connectivity: ['WiFi', 'LTE'], loc: at(5, 1) },
    });
    const report = verifyHardware(p, { config: null });
    expect(report.items.slice(1).map((i) => [i.category, i.severity, i.message])).toEqual([
      ['requirements', 'warning', 'Memory requirement 4 GB cannot be verified: RoverV1 memory unknown'],
      ['requirements', 'error', 'GPU required but RoverV1 has none'],
      ['requirements', 'pass', "Required sensor 'Lidar' provided by RoverV1"],
      ['requirements', 'error', "Required sensor 'Thermal' not provided by RoverV1"],
      ['network', 'error', 'RoverV1 bandwidth 50 Mbps is below required 200 Mbps'],
      ['network', 'error', 'RoverV1 latency 20 ms exceeds required 10 ms'],
      ['connectivity', 'pass', "Required connectivity 'WiFi' available on RoverV1"],
      ['connectivity', 'error', "Required connectivity 'LTE' not available on RoverV1"],
    ]);
  });

  it('prefers robot-level requirements and compares memory in GB', () => {
    const big = hardware('Big', { memoryMb: 8192 });
    const r = robot('R', { requiresHardware: { memoryGb: 16, storageGb: null, gpu: null, sensors: [], actuators: [], loc: at() } });
    const report = single(r, 'Big', {
      hardware: [big],
      requiresHardware: { memoryGb: 4, storageGb: null, gpu: null, sensors: [], actuators: [], loc: at() },
    });
    expect(errors(report.items)).toEqual(['Big memory 8 GB is below required 16 GB']);
  });

  it('checks task budgets', () => {
    const r = robot('R', {
      tasks: [
        task('t', '20ms', {
          budget: [
            { resource: 'cpu', limit: q('10%') },
            { resource: 'time', limit: q('30ms') },
            { resource: 'power', limit: q('50W') },
          ],
        }),
      ],
    });
    const report = single(r, 'RoverV1');
    expect(report.items.filter((i) => i.category === 'budget').map((i) => [i.severity, i.message])).toEqual([
      ['warning', "Task 't' cpu budget 10% is under the estimated 25% load"],
      ['error', "Task 't' time budget 30ms exceeds the task period 20 ms"],
      ['error', "Task 't' power budget 50W exceeds RoverV1 power 15 W"],
    ]);
  });

  it('checks AI model memory and GPU needs', () => {
    const r = robot('R', { aiModels: [{ name: 'det', type: 'Detector', config: { memory_required: q('2GB'), gpu_required: true }, loc: at() }] });
    const report = single(r, 'JetsonOrin');
    expect(report.items.filter((i) => i.category === 'ai_model').map((i) => [i.severity, i.message])).toEqual([
      ['warning', "AI model 'det' memory requirement cannot be verified against JetsonOrin"],
      ['pass', "AI model 'det' GPU requirement met by JetsonOrin"],
    ]);
    expect(errors(single(r, 'RoverV1').items)).toEqual(["AI model 'det' requires a GPU but RoverV1 has none"]);
  });

  it('lists built-in adapters and compares topic bandwidth', () => {
    const r = robot('R', {
      sensors: [sensor('imu', 'IMU', '/dev/ttyUSB0'), sensor('cam', 'Camera', 'rtsp://10.0.0.2/x'), sensor('odd', 'IMU', 'carrier-pigeon')],
      buses: ['can0'],
      topics: [{ name: 'video', type: 'CameraFrame', direction: 'publish', channel: '/v', qos: { rate: q('30Hz') }, loc: at() }],
    });
    const report = single(r, 'RoverV1');
    expect(report.items.filter((i) => i.category === 'adapter').map((i) => i.message)).toEqual([
      "Built-in serial adapter for sensor 'imu' (/dev/ttyUSB0)",
      "Built-in RTSP adapter for sensor 'cam' (rtsp://10.0.0.2/x)",
      "Built-in CAN adapter for bus 'can0'",
    ]);
    expect(errors(report.items)).toEqual(["Topic 'video' needs 221.18 Mbps at 30Hz, more than RoverV1 bandwidth 50 Mbps"]);
  });
});

describe('verify hardware: report assembly (docs/program-language.md §13)', () => {
  it('puts program-level items first, then robots, configuration findings and the certification warning', () => {
    const p = program({
      imports: ['positioning.gps'],
      geofences: [{ keyword: 'geofence', name: 'Yard', tokens: [], text: '', loc: at(2) }],
      robots: [robot('R', { sensors: [sensor('imu', 'IMU')] })],
      deploys: deployTo('RoverV1'),
    });
    const report = verifyHardware(p, {
      config: null,
      validation: { passed: false, findings: [{ severity: 'error', message: 'duplicate port "/dev/x"', path: 'devices[1].port' }] },
    });
    expect(report.items.map((i) => [i.category, i.severity, i.message])).toEqual([
      ['geofence', 'pass', "Geofence 'Yard' declared"],
      ['import', 'pass', "Framework import 'positioning.gps' declared"],
      ['sensor', 'pass', "Sensor 'imu' (IMU) supported by RoverV1"],
      ['configuration', 'error', 'duplicate port "/dev/x" (devices[1].port)'],
      ['certification', 'warning', CERTIFICATION_WARNING],
    ]);
    expect(report.compatible).toBe(false);
    expect(report.matrix).toBeNull();
  });

  it('with all_targets groups items by profile name and fills the matrix', () => {
    const r = robot('R', { sensors: [sensor('lidar', 'Lidar')], actuators: [actuator('wheels', 'DifferentialDrive')] });
    const p = program({ robots: [r, robot('Idle')], hardware: [hardware('Alpha', { sensors: ['Lidar'], actuators: ['DifferentialDrive'] })] });
    const report = verifyHardware(p, { config: null, allTargets: true, target: 'RoverV1' });
    const profileOrder = report.items
      .map((i) => /supported by (\w+)/.exec(i.message)?.[1])
      .filter((x): x is string => x !== undefined)
      .filter((name, i, all) => all.indexOf(name) === i);
    expect(profileOrder).toEqual(['Alpha', 'BuildingEdgeV1', 'ESP32', 'JetsonOrin', 'RaspberryPi5', 'RoverV1', 'RoverV2', 'SmartSpaceGatewayV1']);
    expect(report.target).toBe('Alpha');
    expect(report.matrix?.cells.filter((c) => c.robot === 'R')).toEqual([
      { robot: 'R', target: 'Alpha', compatible: true },
      { robot: 'R', target: 'BuildingEdgeV1', compatible: false },
      { robot: 'R', target: 'ESP32', compatible: false },
      { robot: 'R', target: 'JetsonOrin', compatible: true },
      { robot: 'R', target: 'RaspberryPi5', compatible: false },
      { robot: 'R', target: 'RoverV1', compatible: true },
      { robot: 'R', target: 'RoverV2', compatible: true },
      { robot: 'R', target: 'SmartSpaceGatewayV1', compatible: false },
    ]);
    expect(report.matrix?.cells.filter((c) => c.robot === 'Idle').every((c) => c.compatible)).toBe(true);
    expect(report.compatible).toBe(false);
  });
});
