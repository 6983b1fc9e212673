import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveProjectConfig } from '../../../agent/project/resolve-config.js';
import { DEFAULT_WEIGHTS, evaluateReadiness, sfc, type ReadinessReport } from '../../../agent/programs/analysis/readiness.js';
import type { Program } from '../../../agent/programs/language/ast.js';
import { configFrom, writeProject } from './config-fixture.js';
import { actuator, at, hardware, mission, program, robot, rover, sensor } from './program-factory.js';

const score = (report: ReadinessReport, factor: string) => report.score.factors.find((f) => f.factor === factor)?.score;
const ready = (p: Program, extra: Record<string, unknown> = {}) => evaluateReadiness(p, { config: null, ...extra });
const deploy = (target: string) => [{ robot: 'R', targets: [target], loc: at(20) }];

describe('readiness formulas (docs/program-language.md §9.4)', () => {
  it('sfc', () => {
    expect([sfc(true, 0), sfc(true, 2), sfc(false, 1), sfc(false, 2), sfc(false, 0)]).toEqual([100, 85, 60, 30, 30]);
  });

  it('scores an empty program with the default weights', () => {
    const report = ready(program());
    expect(report.score.factors).toEqual([
      { factor: 'Hardware', score: 100, weight: 12, weighted: 12 },
      { factor: 'Capabilities', score: 100, weight: 12, weighted: 12 },
      { factor: 'Health', score: 85, weight: 12, weighted: 10.2 },
      { factor: 'Connectivity', score: 100, weight: 8, weighted: 8 },
      { factor: 'Safety', score: 95, weight: 12, weighted: 11.4 },
      { factor: 'Battery', score: 90, weight: 8, weighted: 7.2 },
      { factor: 'Storage', score: 90, weight: 4, weighted: 3.6 },
      { factor: 'Compute', score: 88, weight: 6, weighted: 5.28 },
      { factor: 'Packages', score: 100, weight: 8, weighted: 8 },
      { factor: 'Providers', score: 100, weight: 8, weighted: 8 },
      { factor: 'Mission Requirements', score: 100, weight: 2, weighted: 2 },
      { factor: 'Assurance', score: 100, weight: 8, weighted: 8 },
    ]);
    // Σ weighted = 95.68 over Σ weight 100.
    expect(report).toMatchObject({
      status: 'Ready',
      mission_ready: true,
      score: { total: 96, maximum: 100 },
      issues: [],
      policy: { minimum_score: 80, weights: DEFAULT_WEIGHTS },
      target: null,
      robots: [],
    });
  });
});

describe('readiness factors (docs/program-language.md §9.3)', () => {
  it('Hardware and Capabilities follow sfc of their error counts', () => {
    const r = robot('R', { sensors: [sensor('t', 'Thermal'), sensor('s', 'Sonar')], missions: [mission({ name: 'Deliver' })] });
    const report = ready(program({ robots: [r], deploys: deploy('RoverV1') }));
    expect(score(report, 'Hardware')).toBe(30);
    // obstacle_avoidance, gps_navigation and emergency_stop all missing for a mission robot.
    expect(score(report, 'Capabilities')).toBe(30);
    expect(score(report, 'Safety')).toBe(40);
    const one = ready(program({ robots: [robot('R', { sensors: [sensor('t', 'Thermal')] })], deploys: deploy('RoverV1') }));
    expect([score(one, 'Hardware'), score(one, 'Capabilities'), score(one, 'Safety')]).toEqual([60, 100, 95]);
  });

  it('Health is 100 with declared checks, 85 without', () => {
    const p = program({
      healthChecks: [{ name: 'H', targetKind: 'robot', target: 'R', checks: [{ metric: 'battery.level', operator: '>=', threshold: '20 %', loc: at() }], requirements: [], loc: at() }],
    });
    expect(score(ready(p), 'Health')).toBe(100);
  });

  it('Connectivity loses 25 per traceability error and 5 per warning, floor 20', () => {
    const r = robot('R', { actuators: [actuator('a', 'DifferentialDrive'), actuator('b', 'Gripper')], usesHardware: ['Ghost'] });
    expect(score(ready(program({ robots: [r] })), 'Connectivity')).toBe(65);
    const worse = robot('R', { usesHardware: ['G1', 'G2', 'G3', 'G4'] });
    expect(score(ready(program({ robots: [worse] })), 'Connectivity')).toBe(20);
  });

  it('Battery: error 30, warning 65, pass 90, none 90', () => {
    const pack = hardware('Pack', { batteryWh: 100, powerW: 40 });
    const withHours = (hours: number) => program({ robots: [robot('R', { missions: [mission({ name: 'M', durationHours: hours })] })], hardware: [pack], deploys: deploy('Pack') });
    expect(score(ready(withHours(3)), 'Battery')).toBe(30);
    expect(score(ready(withHours(2.2)), 'Battery')).toBe(65);
    expect(score(ready(withHours(1)), 'Battery')).toBe(90);
    const unknown = ready(program({ robots: [robot('R', { missions: [mission({ durationHours: 1 })] })], deploys: deploy('JetsonOrin') }));
    expect(score(unknown, 'Battery')).toBe(65);
    expect(unknown.issues.filter((i) => i.factor === 'Battery').map((i) => [i.severity, i.message])).toEqual([
      ['Low', 'Mission duration declared but target battery capacity unknown'],
      ['Medium', 'Battery below recommended threshold'],
    ]);
  });

  it('Packages and Providers count capability rows without registry data', () => {
    const p = program({
      robots: [robot('R'), robot('S')],
      requiresCapabilities: [{ capability: 'teleport', sensors: [], actuators: [], connectivity: [], loc: at() }],
    });
    const report = ready(p);
    expect([score(report, 'Packages'), score(report, 'Providers')]).toEqual([30, 30]);
  });

  it('Mission Requirements: 50 when a mission capability is absent, 75 with a PARTIAL row', () => {
    const absent = rover('R', { missions: [mission({ requiredCapabilities: ['ota_update'] })] });
    expect(score(ready(program({ robots: [absent] })), 'Mission Requirements')).toBe(50);
    // rover() has GPS but no connectivity: gps_navigation is PARTIAL.
    expect(score(ready(program({ robots: [rover('R')] })), 'Mission Requirements')).toBe(75);
    expect(score(ready(program({ robots: [robot('C', { sensors: [sensor('c', 'Camera')] })] })), 'Mission Requirements')).toBe(100);
  });

  it('Assurance deducts per rule and floors at 0, with one issue per deduction', () => {
    const p = program({
      assuranceCases: [{ name: 'Case', evidence: [], loc: at() }],
      knowledgeModels: [{ name: 'KM', components: [], dependencies: [], loc: at() }],
      stateEstimators: [
        { name: 'E1', inputs: [], output: null, loc: at() },
        { name: 'E2', inputs: ['gps.fix'], output: null, loc: at() },
      ],
      anomalyDetectors: [{ name: 'D', learnedBackend: null, expected: [], loc: at() }],
    });
    const report = ready(p);
    // 100 − 40 − 20 − 15 − 10 − 10 = 5
    expect(score(report, 'Assurance')).toBe(5);
    expect(report.issues.map((i) => [i.factor, i.severity, i.message])).toEqual([
      ['Assurance', 'Medium', 'Assurance case without evidence: Case'],
      ['Assurance', 'Low', 'Knowledge model without components: KM'],
      ['Assurance', 'Medium', "State estimator 'E1' has no inputs"],
      ['Assurance', 'Medium', "Anomaly detector 'D' has no 'on anomaly' handler"],
      ['Assurance', 'Medium', 'Anomaly detectors declared but no mitigation'],
    ]);
    const floor = program({ ...p, stateEstimators: [1, 2, 3].map((n) => ({ name: `E${n}`, inputs: [], output: null, loc: at() })) });
    expect(score(ready(floor), 'Assurance')).toBe(0);
  });
});

describe('readiness policy from the merged configuration', () => {
  it('reads [readiness] from fragments and layers, not from the root manifest', () => {
    const dir = writeProject({
      'svc.toml': '[config]\nreadiness = "svc.readiness.toml"\n[readiness]\nminimum_score = 10\n',
      'svc.readiness.toml': '[readiness]\nminimum_score = 90\n[readiness.weights]\nhardware = 30\nmission = 20\n',
    });
    const report = evaluateReadiness(program(), { config: resolveProjectConfig(path.join(dir, 'svc.toml')) });
    expect(report.policy).toEqual({ minimum_score: 90, weights: { ...DEFAULT_WEIGHTS, hardware: 30, mission: 20 } });
    // Σ weighted = 95.68 − 12 − 2 + 30 + 20 = 131.68 over Σ weight 136 → 96.82.
    expect(report.score.total).toBe(97);
    expect(report.mission_ready).toBe(true);

    const rootOnly = writeProject({ 'svc.toml': '[project]\nname = "x"\n[readiness]\nminimum_score = 10\n[readiness.weights]\nhardware = 50\n' });
    expect(evaluateReadiness(program(), { config: resolveProjectConfig(path.join(rootOnly, 'svc.toml')) }).policy).toEqual({
      minimum_score: 80,
      weights: DEFAULT_WEIGHTS,
    });
  });

  it('adds the Operator factor when humans are configured, weighted min(mission, 15)', () => {
    const config = configFrom('[readiness.weights]\nmission = 20\n[[humans]]\nid = "op-1"\nrole = "shift_lead"\n');
    const approvals = (actor: string) =>
      program({ robots: [robot('C', { sensors: [sensor('c', 'Camera')], missions: [] }), robot('R', { missions: [mission({ name: 'M', approvals: [{ actor, actions: ['go'] }] })] })] });
    const ok = evaluateReadiness(approvals('shift_lead'), { config });
    expect(ok.score.factors.at(-1)).toEqual({ factor: 'Operator', score: 100, weight: 15, weighted: 15 });
    const missing = evaluateReadiness(approvals('night_manager'), { config });
    expect(missing.score.factors.at(-1)).toEqual({ factor: 'Operator', score: 70, weight: 15, weighted: 10.5 });
    expect(missing.issues.at(-1)).toEqual({
      factor: 'Operator',
      severity: 'High',
      message: "Mission 'M' on robot 'R' requires approval by 'night_manager', but no configured operator has that id or role",
      suggested_action: 'Add a [[humans]] entry with role = "night_manager"',
    });
    expect(missing.mission_ready).toBe(false);
    expect(evaluateReadiness(approvals('shift_lead'), { config: null }).score.factors.map((f) => f.factor)).not.toContain('Operator');
  });
});

describe('readiness issues in emission order and the verdict (docs/program-language.md §9.5, §9.6)', () => {
  it('emits every rule in order', () => {
    const config = configFrom(
      [
        '[fleet]',
        'id = "f"',
        '[[fleet.robots]]',
        'id = "Other"',
        'hardware_profile = "RoverV2"',
        '[[devices]]',
        'id = "probe"',
        'type = "air"',
        'protocol = "mqtt"',
        '[[humans]]',
        'id = "op-1"',
        'role = "operator"',
      ].join('\n'),
    );
    const r = rover('R', {
      actuators: [actuator('wheels', 'DifferentialDrive'), actuator('signal_light', 'Beacon')],
      missions: [mission({ name: 'M', durationHours: 10, approvals: [{ actor: 'shift_lead', actions: ['go'] }] })],
      healthChecks: [{ name: 'Cal', targetKind: null, target: null, checks: [{ metric: 'imu.calibration', operator: '==', threshold: '1', loc: at() }], requirements: [], loc: at() }],
    });
    const p = program({ robots: [r], deploys: deploy('RoverV1'), anomalyDetectors: [{ name: 'D', learnedBackend: null, expected: [], loc: at() }] });
    const report = evaluateReadiness(p, {
      config,
      validation: {
        passed: false,
        findings: [
          { severity: 'error', message: 'duplicate serial "X"', path: 'devices[0].serial' },
          { severity: 'warning', message: 'type mismatch', path: 'devices[1].type' },
        ],
      },
    });
    expect(report.issues.map((i) => [i.factor, i.severity, i.message])).toEqual([
      ['Hardware', 'High', "Sensor 'gps' (GPS) not supported by RoverV1"],
      ['Hardware', 'High', "Actuator 'signal_light' (Beacon) not supported by RoverV1"],
      ['Hardware', 'High', "Mission 'M' needs 150 Wh: RoverV1 battery capacity 100 Wh is below the mission energy"],
      ['Connectivity', 'Low', "Actuator 'signal_light' (Beacon) not supported by RoverV1"],
      ['Battery', 'Medium', "Mission 'M' needs 150 Wh: RoverV1 battery capacity 100 Wh is below the mission energy"],
      ['Configuration', 'Medium', "Robot 'R' is not declared in the fleet configuration"],
      ['Connectivity', 'High', "Networked device 'probe' has no endpoint or IP address"],
      ['Connectivity', 'Medium', "Networked device 'probe' has no security identity"],
      ['Connectivity', 'Low', "Networked device 'probe' has an unknown trust level"],
      ['Configuration', 'High', 'duplicate serial "X" (devices[0].serial)'],
      ['Capabilities', 'High', "Robot 'R' requires capability 'gps_navigation'"],
      ['Health', 'Low', 'imu.calibration == 1 is evaluated at runtime'],
      ['Connectivity', 'Medium', "Actuator 'signal_light' on robot 'R' has no safety gate"],
      ['Battery', 'Medium', 'Battery below recommended threshold'],
      ['Assurance', 'Medium', "Anomaly detector 'D' has no 'on anomaly' handler"],
      ['Assurance', 'Medium', 'Anomaly detectors declared but no mitigation'],
      ['Operator', 'High', "Mission 'M' on robot 'R' requires approval by 'shift_lead', but no configured operator has that id or role"],
    ]);
    expect(report.mission_ready).toBe(false);
    expect(report.target).toBe('RoverV1');
    expect(report.robots).toEqual(['R']);
  });

  it('does not read "lte" inside words such as filter', () => {
    const r = robot('R', { actuators: [actuator('filter', 'Pump')] });
    const report = ready(program({ robots: [r], deploys: deploy('RoverV1') }));
    expect(report.issues.map((i) => i.factor)).toEqual(['Hardware']);
  });

  it('Ready, Degraded (ready with minor issues), Degraded (close) and NotReady', () => {
    expect(ready(program()).status).toBe('Ready');
    const kit = hardware('Kit', { sensors: ['Lidar', 'GPS'], actuators: ['DifferentialDrive'], connectivity: ['WiFi'], batteryWh: 100 });
    const fielded = robot('R', {
      usesHardware: ['Kit'],
      sensors: [sensor('lidar', 'Lidar'), sensor('gps', 'GPS')],
      actuators: [actuator('wheels', 'DifferentialDrive')],
      missions: [mission({ name: 'M', durationHours: 1 })],
    });
    const minor = ready(program({ robots: [fielded], hardware: [kit], deploys: deploy('Kit') }));
    // A battery pass item still mentions the battery: one Low issue.
    expect(minor.issues.map((i) => [i.factor, i.severity, i.message])).toEqual([
      ['Battery', 'Low', "Mission 'M' needs 10 Wh of Kit battery capacity 100 Wh (margin 90%)"],
    ]);
    // Connectivity 100 − 5 × 4 warnings = 80; Σ weighted = 94.08.
    expect([minor.score.total, minor.mission_ready, minor.status]).toEqual([94, true, 'Degraded']);

    const strict = (minimum: number) => configFrom(`[readiness]\nminimum_score = ${minimum}\n`);
    const close = evaluateReadiness(program(), { config: strict(100) });
    expect([close.score.total, close.mission_ready, close.status]).toEqual([96, false, 'Degraded']);
    const far = evaluateReadiness(program(), { config: strict(120) });
    expect([far.mission_ready, far.status]).toEqual([false, 'NotReady']);
  });

  it('a hardware error blocks mission_ready even with a high total', () => {
    const report = ready(program({ robots: [robot('R', { sensors: [sensor('t', 'Thermal')] })], deploys: deploy('RoverV1') }));
    expect(report.score.total).toBeGreaterThanOrEqual(80);
    expect([report.mission_ready, report.status]).toEqual([false, 'Degraded']);
  });

  it('reports a null target with all_targets', () => {
    const report = ready(program({ robots: [rover('R')] }), { allTargets: true });
    expect(report.target).toBeNull();
    expect(score(report, 'Hardware')).toBe(30);
  });
});
