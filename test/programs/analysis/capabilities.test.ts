import { describe, expect, it } from 'vitest';
import {
  analyseCapabilities,
  minimumCapabilities,
  OPERATOR_CAPABILITIES,
  verifyCapabilities,
} from '../../../agent/programs/analysis/capabilities.js';
import type { RequiresCapabilityDecl } from '../../../agent/programs/language/ast.js';
import { actuator, at, hardware, killSwitch, mission, program, robot, rover, sensor } from './program-factory.js';

const requires = (capability: string): RequiresCapabilityDecl => ({ capability, sensors: [], actuators: [], connectivity: [], loc: at() });

describe('capability inference (docs/program-language.md §9.7)', () => {
  it('combines own components with the program-declared profile it uses (connectivity only from there)', () => {
    const r = robot('R', {
      sensors: [sensor('fix', 'GNSS')],
      actuators: [actuator('wheels', 'DifferentialDrive')],
      usesHardware: ['Cell'],
    });
    const [a] = analyseCapabilities(program({ robots: [r], hardware: [hardware('Cell', { connectivity: ['LTE'] })] }));
    expect(a!.inferred).toEqual(['emergency_stop', 'gps_navigation', 'remote_control', 'telemetry_streaming']);
    expect(a!.rows.every((row) => row.source === 'inferred' && row.status === 'PASS')).toBe(true);
  });

  it('ignores built-in profiles named by uses hardware', () => {
    const r = robot('R', { sensors: [sensor('fix', 'GPS')], actuators: [actuator('w', 'DifferentialDrive')], usesHardware: ['RoverV2'] });
    const [a] = analyseCapabilities(program({ robots: [r] }));
    expect(a!.components.connectivity.size).toBe(0);
    expect(a!.rowByCapability.get('gps_navigation')).toEqual({
      capability: 'gps_navigation',
      source: 'inferred',
      required_components: ['any_of sensors [GPS, GNSS]', 'any_of actuators [DifferentialDrive]', 'any_of connectivity [WiFi, LTE, FiveG]'],
      status: 'PARTIAL',
      notes: 'Missing any_of connectivity [WiFi, LTE, FiveG]',
    });
  });

  it('infers emergency_stop from a kill switch, vision from a camera, secure_communication from permissions', () => {
    const r = robot('R', { sensors: [sensor('cam', 'Camera')], killSwitches: [killSwitch('K')], hasPermissions: true });
    expect(analyseCapabilities(program({ robots: [r] }))[0]!.inferred).toEqual(['emergency_stop', 'secure_communication', 'vision_processing']);
  });

  it('adds the four Patrol capabilities for a mission named Patrol', () => {
    const r = robot('P', { sensors: [sensor('imu', 'IMU')], missions: [mission({ name: 'Patrol' })] });
    const [a] = analyseCapabilities(program({ robots: [r] }));
    expect(a!.inferred).toEqual(['emergency_stop', 'gps_navigation', 'obstacle_avoidance', 'telemetry_streaming']);
    expect(a!.rows.map((row) => row.status)).toEqual(['PARTIAL', 'PARTIAL', 'PARTIAL', 'PARTIAL']);
    expect(analyseCapabilities(program({ robots: [robot('Q', { missions: [mission({ name: 'patrol' })] })] }))[0]!.inferred).toEqual([]);
  });

  it('orders rows declared first, then inferred-only sorted, and marks sources', () => {
    const r = rover('R', { exposes: ['vision_processing', 'teleport', 'human_approval', 'vision_processing'] });
    const [a] = analyseCapabilities(program({ robots: [r] }));
    expect(a!.declared).toEqual(['vision_processing', 'teleport', 'human_approval']);
    expect(a!.rows.map((row) => [row.capability, row.source, row.status])).toEqual([
      ['vision_processing', 'declared+inferred', 'PASS'],
      ['teleport', 'declared', 'PARTIAL'],
      ['human_approval', 'declared', 'PASS'],
      ['autonomous_navigation', 'inferred', 'PASS'],
      ['emergency_stop', 'inferred', 'PASS'],
      ['gps_navigation', 'inferred', 'PARTIAL'],
      ['obstacle_avoidance', 'inferred', 'PASS'],
    ]);
    expect(a!.rowByCapability.get('teleport')).toMatchObject({ required_components: [], notes: 'Unknown capability: not in the capability registry' });
    expect(a!.rowByCapability.get('human_approval')?.notes).toBe('Operator capability: no hardware minimum');
  });

  it('has eleven operator capabilities', () => {
    expect(OPERATOR_CAPABILITIES).toHaveLength(11);
  });
});

describe('minimum capabilities (docs/program-language.md §9.8)', () => {
  it('reports PARTIAL rows of error-severity capabilities, not unknown or soft ones', () => {
    const r = robot('P', { sensors: [sensor('imu', 'IMU')], missions: [mission({ name: 'Patrol' })], exposes: ['teleport'] });
    const result = minimumCapabilities(program({ robots: [r] }));
    expect(result.compatible).toBe(false);
    expect(result.errors).toEqual([
      "Robot 'P' requires capability 'emergency_stop'",
      "Robot 'P' requires capability 'gps_navigation'",
      "Robot 'P' requires capability 'obstacle_avoidance'",
    ]);
  });

  it('requires the three mission minimums of every robot with a mission', () => {
    const r = robot('D', { sensors: [sensor('cam', 'Camera')], actuators: [actuator('w', 'DifferentialDrive')], missions: [mission({ name: 'Deliver' })] });
    expect(minimumCapabilities(program({ robots: [r] })).errors).toEqual([
      "Mission requires obstacle_avoidance. Robot 'D' lacks minimum hardware.",
      "Mission requires gps_navigation. Robot 'D' lacks minimum hardware.",
    ]);
    const idle = robot('I', { sensors: [sensor('cam', 'Camera')] });
    expect(minimumCapabilities(program({ robots: [idle] }))).toEqual({ compatible: true, errors: [], items: [] });
  });

  it('checks program requires_capability against PASS rows of any robot', () => {
    const arm = robot('A', { sensors: [sensor('cam', 'Camera')], exposes: ['manipulation'] });
    const good = rover('G');
    const result = minimumCapabilities(
      program({
        robots: [arm, good],
        requiresCapabilities: [requires('obstacle_avoidance'), requires('manipulation'), requires('teleport'), requires('human_approval'), requires('ota_update')],
      }),
    );
    expect(result.items.map((i) => [i.severity, i.message])).toEqual([
      ['pass', "Mission requires obstacle_avoidance. Provided by robot 'G'"],
      ['error', 'Mission requires manipulation. Missing: any_of actuators [Arm, Gripper]'],
      ['error', 'Mission requires teleport. Missing: teleport is not in the capability registry'],
      ['error', 'Mission requires ota_update. Missing: no robot exposes or infers ota_update'],
      ['error', "Robot 'A' requires capability 'manipulation'"],
      ['error', "Robot 'G' requires capability 'gps_navigation'"],
    ]);
    expect(result.errors).toHaveLength(5);
  });
});

describe('verify capabilities body (docs/program-language.md §14)', () => {
  it('returns rows per robot, static health, and traceability only on request', () => {
    const p = program({ robots: [rover('R', { exposes: ['obstacle_avoidance'] })] });
    const body = verifyCapabilities(p, { config: null });
    expect(body.capabilities).toEqual([
      {
        robot: 'R',
        rows: analyseCapabilities(p)[0]!.rows,
        declared: ['obstacle_avoidance'],
        inferred: ['autonomous_navigation', 'emergency_stop', 'gps_navigation', 'obstacle_avoidance', 'vision_processing'],
      },
    ]);
    expect(body.health).toEqual({ checks: [], overall: 'Unknown', policies: [] });
    expect(body.traceability).toBeNull();
    expect(verifyCapabilities(p, { config: null, traceability: true }).traceability?.warnings).toEqual([
      "Actuator 'wheels' on robot 'R' has no safety gate",
    ]);
  });
});
