import { describe, expect, it } from 'vitest';
import { staticHealth } from '../../../agent/programs/analysis/health.js';
import { namesRobotMember } from '../../../agent/programs/analysis/member-names.js';
import { renderSafetyRule } from '../../../agent/programs/analysis/safety-text.js';
import { traceabilityReport } from '../../../agent/programs/analysis/traceability.js';
import type { Expr, SafetyRule } from '../../../agent/programs/language/ast.js';
import { configFrom } from './config-fixture.js';
import { actuator, at, hardware, maxSpeed, program, q, robot, rover, sensor, stopIf } from './program-factory.js';

const num = (value: number, text = String(value)): Expr => ({ kind: 'number', value, unit: null, text, loc: at() });

describe('static health (docs/program-language.md §9.9)', () => {
  it('turns every condition and requirement into an Unknown check', () => {
    const p = program({
      healthChecks: [
        {
          name: 'FleetVitals',
          targetKind: 'fleet',
          target: 'Yard',
          checks: [{ metric: 'battery.level', operator: '>=', threshold: '25 %', loc: at() }],
          requirements: ['require at_least 80 % robots Healthy'],
          loc: at(),
        },
      ],
      robots: [
        robot('R', { healthChecks: [{ name: 'Own', targetKind: null, target: null, checks: [{ metric: 'imu.calibration', operator: '==', threshold: 'ok', loc: at() }], requirements: [], loc: at() }] }),
      ],
      healthPolicies: [{ name: 'Resp', handlers: [{ status: 'Critical', actions: ['emergency_stop'] }], loc: at() }],
    });
    expect(staticHealth(p)).toEqual({
      checks: [
        { name: 'FleetVitals', target: 'Yard', target_kind: 'fleet', metric: 'battery.level', operator: '>=', threshold: '25 %', status: 'Unknown', message: 'battery.level >= 25 % is evaluated at runtime' },
        { name: 'FleetVitals', target: 'Yard', target_kind: 'fleet', metric: 'requirement', operator: 'require', threshold: 'at_least 80 % robots Healthy', status: 'Unknown', message: 'require at_least 80 % robots Healthy is evaluated at runtime' },
        { name: 'Own', target: 'R', target_kind: 'robot', metric: 'imu.calibration', operator: '==', threshold: 'ok', status: 'Unknown', message: 'imu.calibration == ok is evaluated at runtime' },
      ],
      overall: 'Healthy',
      policies: [{ name: 'Resp', handlers: [{ status: 'Critical', actions: ['emergency_stop'] }] }],
    });
  });
});

describe('traceability (docs/program-language.md §9.10)', () => {
  it('emits actuator warnings in program order, then sorted unused-declaration warnings, and the errors', () => {
    const p = program({
      robots: [
        robot('B', { actuators: [actuator('arm', 'Gripper'), actuator('base', 'DifferentialDrive')], usesHardware: ['Kit', 'Ghost'] }),
        robot('A', { actuators: [actuator('wheels', 'DifferentialDrive')] }),
      ],
      hardware: [hardware('Kit', { sensors: ['Lidar', 'Camera'], actuators: ['DifferentialDrive'] })],
      requiresCapabilities: [{ capability: 'teleport', sensors: [], actuators: [], connectivity: [], loc: at() }],
    });
    const report = traceabilityReport(p, null);
    expect(report.warnings).toEqual([
      "Actuator 'arm' on robot 'B' has no safety gate",
      "Actuator 'base' on robot 'B' has no safety gate",
      "Actuator 'wheels' on robot 'A' has no safety gate",
      "Declared actuator 'Kit.DifferentialDrive' is unused",
      "Declared sensor 'Kit.Camera' is unused",
      "Declared sensor 'Kit.Lidar' is unused",
    ]);
    expect(report.errors).toEqual(["Robot 'B' uses undeclared hardware 'Ghost'", "Unknown capability 'teleport'"]);
    expect(report.capability_rows.map((r) => [r.provided_by, r.status, r.package, r.provider])).toEqual([
      ['B', 'FAIL', '', ''],
      ['A', 'FAIL', '', ''],
    ]);
  });

  it('builds capability rows per requirement and robot with registry packages and providers', () => {
    const p = program({
      robots: [rover('R', { safety: [maxSpeed('1m/s'), stopIf('lidar . read ( ) . nearest_distance < 0.3m')] }), robot('Cam', { sensors: [sensor('c', 'Camera')] })],
      requiresCapabilities: [{ capability: 'obstacle_avoidance', sensors: [], actuators: [], connectivity: [], loc: at() }],
    });
    expect(traceabilityReport(p, null).capability_rows).toEqual([
      {
        capability: 'obstacle_avoidance',
        required_by: 'program',
        provided_by: 'R',
        hardware: 'Lidar+DifferentialDrive',
        package: 'svc-fusion-sensor',
        provider: 'lidar_serial',
        safety_rule: 'stop_if lidar . read ( ) . nearest_distance < 0.3m',
        status: 'PASS',
        notes: 'Minimum met by Lidar, DifferentialDrive',
      },
      {
        capability: 'obstacle_avoidance',
        required_by: 'program',
        provided_by: 'Cam',
        hardware: '',
        package: 'svc-fusion-sensor',
        provider: 'lidar_serial',
        safety_rule: '',
        status: 'FAIL',
        notes: "Robot 'Cam' does not expose or infer obstacle_avoidance",
      },
    ]);
  });

  it('traces hardware rows to configured providers and safety rules', () => {
    const config = configFrom(
      '[[devices]]\nid = "lid"\ntype = "lidar"\nrobot_id = "R"\nlogical_name = "r.lidar"\nprovider = "lidar_serial"\n[[devices]]\nid = "drv"\ntype = "motor"\nrobot_id = "R"\nprovider = "can_motion"\n',
    );
    const r = rover('R', { safety: [maxSpeed('1m/s'), stopIf('lidar . read ( ) . nearest_distance < 0.3m')], usesHardware: ['Kit'] });
    const p = program({ file: 'p.sd', robots: [r], hardware: [hardware('Kit', { sensors: ['Lidar'] })] });
    const rows = traceabilityReport(p, config).hardware_rows;
    expect(rows[0]).toEqual({
      hardware_component: 'Lidar',
      used_by: 'R.lidar',
      source_location: 'p.sd:1:1',
      capability: 'autonomous_navigation+obstacle_avoidance',
      provider: 'lidar_serial',
      verified: true,
      safety_rule: 'stop_if lidar . read ( ) . nearest_distance < 0.3m',
      notes: 'Listed in hardware Kit',
    });
    expect(rows.at(-1)).toMatchObject({ hardware_component: 'DifferentialDrive', provider: '', verified: false, safety_rule: 'max_speed = 1m/s', notes: 'Not listed in hardware Kit' });
  });

  it('finds a member\'s device by `robot.member` without case, never by another robot\'s name (member-names.ts, shared with drift check 14)', () => {
    // Both IMUs are bound to R; the first is named for robot "other", so only the type fallback
    // would pick it. The second names R's imu (in another case) and wins.
    const config = configFrom(
      '[[devices]]\nid = "a"\ntype = "imu"\nrobot_id = "R"\nlogical_name = "other.imu"\nprovider = "imu_a"\n[[devices]]\nid = "b"\ntype = "imu"\nrobot_id = "R"\nlogical_name = "r.IMU"\nprovider = "imu_b"\n',
    );
    const rows = traceabilityReport(program({ robots: [rover('R')] }), config).hardware_rows;
    expect(rows.find((r) => r.used_by === 'R.imu')?.provider).toBe('imu_b');
    expect(namesRobotMember('sentinel.imu', 'Sentinel', 'imu')).toBe(true);
    expect(namesRobotMember('other.imu', 'Sentinel', 'imu')).toBe(false);
    expect(namesRobotMember('imu', 'Sentinel', 'imu')).toBe(false);
    expect(namesRobotMember('sentinel.imu2', 'Sentinel', 'imu')).toBe(false);
  });
});

describe('safety rule text (docs/program-language.md §28)', () => {
  it('renders limits, stop_if tokens and zones readably', () => {
    const zone: SafetyRule = {
      kind: 'zone',
      name: 'dock',
      shape: 'circle',
      center: [{ kind: 'unary', op: '-', operand: num(4), loc: at() }, num(3)],
      radius: { kind: 'number', value: 2.5, unit: 'm', text: '2.5m', loc: at() },
      text: '',
      loc: at(),
    };
    const rect: SafetyRule = { kind: 'zone', name: 'apron', shape: 'rect', center: [num(12), num(-6, '-6')], size: [num(8), num(4)], text: '', loc: at() };
    expect(renderSafetyRule(maxSpeed('1.2m/s'))).toBe('max_speed = 1.2m/s');
    expect(renderSafetyRule({ kind: 'max_angular', value: q('0.8rad/s'), loc: at() })).toBe('max_angular = 0.8rad/s');
    expect(renderSafetyRule(stopIf('battery . level < 10 %'))).toBe('stop_if battery . level < 10 %');
    expect(renderSafetyRule(zone)).toBe('zone dock circle at (-4, 3) radius 2.5m');
    expect(renderSafetyRule(rect)).toBe('zone apron rect at (12, -6) size (8, 4)');
  });
});
