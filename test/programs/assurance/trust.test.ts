import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { programTrust } from '../../../agent/programs/assurance/trust.js';
import { BASELINE_FILE } from '../../../agent/programs/assurance/integrity-baseline.js';
import type { Program } from '../../../agent/programs/language/ast.js';
import { at, makeProgram, makeRobot } from './factory.js';
import { removeTempDirs, tempDir } from './project.js';

afterAll(removeTempDirs);

const DEVICE_HINT =
  'Add secure-boot evidence: a hardware attestation import, a tamper_policy, certification and remote_signed kill switches';
const SAFETY_HINT = 'Cover obstacle, battery and GPS scenarios with stop_if rules, cap drive speed and declare a kill switch';

const q = (value: number, unit: string) => ({ value, unit, text: `${value}${unit}` });

function rover(overrides: Partial<Program> = {}): Program {
  return makeProgram({
    imports: ['positioning.gps', 'fusion.sensor'],
    hardware: [
      {
        name: 'RoverV2', cpu: null, memoryMb: 8192, storageMb: null, gpu: null, sensors: ['Lidar'], actuators: ['DifferentialDrive'],
        connectivity: ['WiFi'], batteryWh: 180, bandwidthMbps: null, latencyMs: null, minPeriodMs: null, powerW: null, loc: at(),
      },
    ],
    deploys: [{ robot: 'Sentinel', targets: ['RoverV2'], loc: at() }],
    certifications: [{ standard: 'ISO3691_4', level: 'PLd', loc: at() }],
    missionPlans: [{ name: 'NightRound', steps: ['undock'], constraints: [], loc: at() }],
    robots: [
      makeRobot({
        name: 'Sentinel',
        sensors: [
          { name: 'lidar', type: 'Lidar', source: '/dev/ttyUSB1', loc: at() },
          { name: 'air', type: 'AirQuality', source: 'mqtt://127.0.0.1:1883', loc: at() },
        ],
        actuators: [{ name: 'wheels', type: 'DifferentialDrive', loc: at() }],
        topics: [{ name: 'status', type: 'S', direction: 'publish', channel: '/sentinel/status', qos: {}, loc: at() }],
        safety: [
          { kind: 'max_speed', value: q(1.2, 'm/s'), loc: at() },
          { kind: 'stop_if', condition: { kind: 'bool', value: true, loc: at() }, text: 'lidar . read ( ) . nearest_distance < 0.35m', loc: at() },
        ],
        killSwitches: [{ name: 'FloorStop', priority: 'critical', remoteSigned: true, actions: ['wheels . stop ( )'], body: [], loc: at() }],
      }),
    ],
    ...overrides,
  });
}

function programFile(): { file: string; root: string; stateDir: string } {
  const root = tempDir();
  const file = path.join(root, 'programs', 'rover.sd');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, 'robot Sentinel { }\n');
  return { file, root, stateDir: path.join(root, '.svc-control-center') };
}

describe('programTrust', () => {
  it('scores six categories with integer weighting and records a baseline on first sight', () => {
    const { file, root, stateDir } = programFile();
    const report = programTrust(rover(), { file, projectRoot: root, stateDir });
    expect(report).toEqual({
      label: 'rover.sd',
      score: 79,
      tier: 'acceptable',
      passed: true,
      integrity_status: 'Trusted',
      categories: [
        { name: 'package_trust', score: 82, weight: 20, weighted: 16 },
        { name: 'device_integrity', score: 50, weight: 20, weighted: 10 },
        { name: 'firmware_integrity', score: 100, weight: 15, weighted: 15 },
        { name: 'configuration_integrity', score: 100, weight: 20, weighted: 20 },
        { name: 'identity_validation', score: 90, weight: 15, weighted: 13 },
        { name: 'safety_integrity', score: 50, weight: 10, weighted: 5 },
      ],
      recommendations: [DEVICE_HINT, SAFETY_HINT],
    });
    const baselines = JSON.parse(fs.readFileSync(path.join(stateDir, BASELINE_FILE), 'utf8'));
    expect(Object.keys(baselines)).toEqual(['programs/rover.sd']);
    expect(Object.keys(baselines['programs/rover.sd'].artifacts)).toEqual([
      'deploy:Sentinel->RoverV2',
      'hardware:RoverV2',
      'mission:mission_plan/NightRound',
      'kill_switch:Sentinel.FloorStop',
    ]);
    // Same file again: still Trusted, the baseline is not rewritten.
    expect(programTrust(rover(), { file, projectRoot: root, stateDir }).integrity_status).toBe('Trusted');
  });

  it('reports Modified after the file is edited, and fails', () => {
    const { file, root, stateDir } = programFile();
    programTrust(rover(), { file, projectRoot: root, stateDir });
    fs.appendFileSync(file, '// edited\n');
    const report = programTrust(rover(), { file, projectRoot: root, stateDir });
    expect(report.integrity_status).toBe('Modified');
    expect(report.passed).toBe(false);
    expect(report.score).toBe(79);
    expect(report.recommendations).toHaveLength(3);
    expect(report.recommendations[2]).toMatch(/^Program changed since its integrity baseline \(sha256 [0-9a-f]{12} → [0-9a-f]{12}\): review the change before deploying$/);
  });

  it('scores a changed declaration as Modified in its category', () => {
    const { file, root, stateDir } = programFile();
    programTrust(rover(), { file, projectRoot: root, stateDir });
    const edited = rover();
    edited.robots[0]!.killSwitches[0]!.remoteSigned = false;
    edited.robots[0]!.killSwitches[0]!.loc = at(40, 2); // moving a block alone changes nothing
    const report = programTrust(edited, { file, projectRoot: root, stateDir });
    const category = (name: string) => report.categories.find((c) => c.name === name);
    expect(category('configuration_integrity')).toEqual({ name: 'configuration_integrity', score: 50, weight: 20, weighted: 10 });
    expect(category('firmware_integrity')?.score).toBe(100);
    // unsigned kill switch: secure boot loses 25, identity one more info finding
    expect(category('device_integrity')?.score).toBe(25);
    expect(category('identity_validation')?.score).toBe(88);
    expect(report.integrity_status).toBe('Trusted');
    expect(report.recommendations).toEqual([
      DEVICE_HINT,
      'Review policy, kill switch, health and mission declarations changed since the integrity baseline',
      SAFETY_HINT,
    ]);
  });

  it('is Unknown without a state directory and scores artifacts at 85', () => {
    const { file, root } = programFile();
    const report = programTrust(rover(), { file, projectRoot: root, stateDir: null });
    expect(report.integrity_status).toBe('Unknown');
    expect(report.categories.map((c) => c.weighted)).toEqual([16, 10, 12, 17, 13, 5]);
    expect(report.score).toBe(73);
    expect(report.passed).toBe(true);
    expect(report.recommendations).toEqual([
      DEVICE_HINT,
      SAFETY_HINT,
      'No integrity baseline recorded for this program: evaluate trust with a state directory to record one',
    ]);
  });

  it('does not write a baseline when asked not to', () => {
    const { file, root, stateDir } = programFile();
    const report = programTrust(rover(), { file, projectRoot: root, stateDir, recordBaseline: false });
    expect(report.integrity_status).toBe('Unknown');
    expect(fs.existsSync(path.join(stateDir, BASELINE_FILE))).toBe(false);
  });

  it('rates an empty program low', () => {
    const { file, root, stateDir } = programFile();
    const report = programTrust(makeProgram(), { file, projectRoot: root, stateDir });
    expect(report.categories.map((c) => [c.name, c.score])).toEqual([
      ['package_trust', 70],
      ['device_integrity', 50],
      ['firmware_integrity', 50],
      ['configuration_integrity', 50],
      ['identity_validation', 100],
      ['safety_integrity', 0],
    ]);
    expect(report.score).toBe(14 + 10 + 7 + 10 + 15 + 0);
    expect(report.tier).toBe('low');
    expect(report.passed).toBe(false);
    expect(report.recommendations).toHaveLength(4);
  });

  it('applies the trust-boundary floor, attestation imports and plaintext/credential findings', () => {
    const { file, root, stateDir } = programFile();
    const leaky = makeProgram({
      imports: ['trust.jetson'],
      robots: [
        makeRobot({
          sensors: [
            { name: 'cam', type: 'Camera', source: 'rtsp://admin:pw@10.0.0.2/live', loc: at() },
            { name: 'feed', type: 'Camera', source: 'http://10.0.0.3/feed', loc: at() },
            { name: 'secure', type: 'Camera', source: 'rtsps://10.0.0.4/feed', loc: at() },
          ],
        }),
      ],
    });
    const score = (p: Program, name: string) => programTrust(p, { file, projectRoot: root, stateDir }).categories.find((c) => c.name === name)?.score;
    // 1 error (credentials) + 2 warnings (rtsp, http) + 1 info (no secure_comm) = 100 - 25 - 16 - 2
    expect(score(leaky, 'identity_validation')).toBe(57);
    expect(score(leaky, 'package_trust')).toBe(95);
    expect(score(leaky, 'device_integrity')).toBe(100);
    const bounded = makeProgram({
      ...leaky,
      robots: [makeRobot({ ...leaky.robots[0]!, generic: [{ keyword: 'trust_boundary', name: 'yard', tokens: [], text: 'yard', loc: at() }] })],
    });
    expect(score(bounded, 'identity_validation')).toBe(75);
  });
});
