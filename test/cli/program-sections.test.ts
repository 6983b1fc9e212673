import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectCli } from '../helpers/svc-project-cli.js';

/**
 * The section commands (agent/cli/program-sections.ts, docs/programs.md "The CLI"): each prints one
 * part of the assure report, of the capabilities verification, or the heal analysis of one failure.
 * Runs the built `svc` (`npm run build` first).
 */
const { svc, json } = projectCli('svc-cli-sections', path.join(__dirname, 'fixtures'));

const lines = (...l: string[]) => `${l.join('\n')}\n`;

describe('sections of svc assure', () => {
  it('svc mission verify', () => {
    expect(svc(['mission', 'verify', 'courier.sd'])).toEqual({
      code: 0,
      stderr: '',
      stdout: lines(
        'Mission assurance: PASS',
        '  plan DepotRun: load_parcel → drive_to_gate → hand_over',
        '    constraint: battery . level >= 20 %',
        '  execution: DepotRun at step load_parcel (ready)',
        '  verification: Mission Deliver on Courier: ACHIEVABLE',
      ),
    });
  });

  it('svc anomaly scan, svc prognostics, svc resilience check, svc state estimate', () => {
    expect(svc(['anomaly', 'scan', 'courier.sd']).stdout).toBe(
      lines('Anomaly scan: PASS', '  detector MotorHeat: wheels.temperature <= 70celsius', '  [Low] MotorHeat: expected an on anomaly handler, observed no handler declared'),
    );
    expect(svc(['prognostics', 'courier.sd']).stdout).toBe(
      lines(
        'Prognostics: PASS',
        '  model TyreWear → tyres.remaining_life: warn_if tyres . remaining_life < 20min',
        '  remaining useful life of tyres.remaining_life: no threshold declared (confidence 0.75)',
      ),
    );
    expect(svc(['resilience', 'check', 'courier.sd']).stdout).toBe(lines('Resilience: PASS (readiness score 94)', '  policy CourierResilience: slow_lane, return_to_depot'));
    expect(svc(['state', 'estimate', 'courier.sd']).stdout).toBe(lines('State estimation: PASS', '  estimator CartPose: gps.fix, imu.yaw → YardPose (confidence 0.65)'));
  });

  it('--json prints {version, file, <section>} with the section of the assure body', () => {
    const assure = json(['assure', 'courier.sd']).body;
    for (const [words, key] of [
      [['mission', 'verify'], 'mission'],
      [['anomaly', 'scan'], 'anomalies'],
      [['prognostics'], 'prognostics'],
      [['resilience', 'check'], 'resilience'],
      [['state', 'estimate'], 'state'],
      [['mitigation', 'plan'], 'recovery'],
    ] as const) {
      const r = json([...words, 'courier.sd']);
      expect(r.body).toEqual({ version: 'v1', file: assure.file, [key]: assure.report[key] });
    }
  });

  it('svc mitigation plan prints the recovery part as svc heal does, and exits by its verdict', () => {
    const r = svc(['mitigation', 'plan', 'courier.sd']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(svc(['heal', 'courier.sd']).stdout);
  });
});

describe('sections of svc verify --capabilities', () => {
  it('svc robot capabilities and svc trace health', () => {
    expect(svc(['robot', 'capabilities', 'courier.sd']).stdout).toBe(
      lines(
        'Robot Courier',
        '  PASS    autonomous_navigation (inferred)',
        '  PASS    emergency_stop (inferred)',
        '  PASS    gps_navigation (inferred)',
        '  PASS    obstacle_avoidance (inferred)',
        '  PASS    remote_control (inferred)',
        '  PASS    telemetry_streaming (inferred)',
      ),
    );
    expect(svc(['trace', 'health', 'courier.sd']).stdout).toBe(
      lines('Health checks: 1, overall Healthy', '  [Unknown] CartVitals: battery.level >= 20 % is evaluated at runtime'),
    );
  });

  it('svc trace hardware and svc trace capabilities', () => {
    const warnings = [
      "  warning: Actuator 'wheels' on robot 'Courier' has no safety gate",
      "  warning: Declared actuator 'YardCart.DifferentialDrive' is unused",
      "  warning: Declared sensor 'YardCart.GPS' is unused",
      "  warning: Declared sensor 'YardCart.IMU' is unused",
      "  warning: Declared sensor 'YardCart.Lidar' is unused",
    ];
    expect(svc(['trace', 'hardware', 'courier.sd'])).toEqual({
      code: 0,
      stderr: '',
      stdout: lines(
        'Hardware traceability: PASS',
        '  [verified] Lidar used by Courier.lidar (courier.sd:15:5) for autonomous_navigation+obstacle_avoidance',
        '  [verified] GPS used by Courier.gps (courier.sd:16:5) for gps_navigation',
        '  [verified] IMU used by Courier.imu (courier.sd:17:5)',
        '  [verified] DifferentialDrive used by Courier.wheels (courier.sd:18:5) for autonomous_navigation+emergency_stop+gps_navigation+obstacle_avoidance+remote_control',
        ...warnings,
      ),
    });
    expect(svc(['trace', 'capabilities', 'courier.sd']).stdout).toBe(lines('Capability traceability: PASS', ...warnings));
    const caps = json(['verify', 'courier.sd', '--capabilities', '--traceability']).body;
    expect(json(['trace', 'capabilities', 'courier.sd']).body).toEqual({ version: 'v1', file: caps.file, traceability: caps.traceability });
  });
});

describe('svc recover FILE --failure KIND', () => {
  it('evaluates the recovery of that one failure', () => {
    expect(svc(['recover', 'courier.sd', '--failure', 'gps'])).toEqual({
      code: 0,
      stderr: '',
      stdout: lines(
        'Recovery Report',
        'Passed: true',
        '',
        'Failure: gps',
        '  Diagnosis: Satellite lock lost (SensorFailure)',
        '  Recovery Action 1: reduce_speed 0.3m/s',
        '  Recovery Action 2: enter degraded',
        '  Risk: Low',
        '  Safety Validation: PASS',
        '  Outcome: Success (2/2 action(s) executed)',
        '',
        'Recovery Ready: YES',
        'Success Rate: 100%',
      ),
    });
    const unsafe = svc(['recover', 'courier.sd', '--failure', 'brake.safety_fault']);
    expect(unsafe.code).toBe(1);
    expect(unsafe.stdout).toContain('  Safety Validation: FAIL\n  Outcome: Unsafe (0/1 action(s) executed)\n');
    const body = json(['recover', 'courier.sd', '--failure', 'gps']).body;
    expect(Object.keys(body)).toEqual(['version', 'file', 'failure', 'report']);
    expect(body.report.plans.map((p: { failure: string }) => p.failure)).toEqual(['gps']);
  });

  it('usage errors exit 2 with a clear message', () => {
    expect(svc(['recover', 'courier.sd'])).toMatchObject({ code: 2, stderr: "svc: 'svc recover' needs --failure KIND (e.g. --failure gps)\n" });
    expect(svc(['recover', 'courier.sd', '--failure'])).toMatchObject({ code: 2, stderr: 'svc: --failure needs a failure kind (e.g. gps, lidar, lte.lost)\n' });
    expect(svc(['mission', 'verify'])).toMatchObject({ code: 2, stderr: "svc: 'svc mission verify' takes one file (got none)\n" });
    expect(svc(['anomaly', 'scan', 'courier.sd', '--failure', 'gps'])).toMatchObject({
      code: 2,
      stderr: "svc: unknown option --failure for 'svc anomaly scan' (options: --json, --config FILE, --target HW, --all-targets)\n",
    });
    expect(svc(['prognostics', 'missing.sd'])).toMatchObject({ code: 2 });
  });
});

describe('svc help', () => {
  it('lists the section commands and the program flags', () => {
    const help = svc(['help']).stdout;
    for (const text of [
      'svc mission verify FILE.sd',
      'svc anomaly scan FILE.sd',
      'svc prognostics FILE.sd',
      'svc resilience check FILE.sd',
      'svc state estimate FILE.sd',
      'svc mitigation plan FILE.sd',
      'svc trace capabilities FILE.sd',
      'svc trace hardware FILE.sd',
      'svc trace health FILE.sd',
      'svc robot capabilities FILE.sd',
      'svc recover FILE.sd --failure KIND',
      '[--strict] [--policy FILE] [--baseline DIR]',
      '--agent-json',
      '--readiness-json',
      '[--strict-certify]',
      '(alias: svc compatibility)',
      '[--health] [--minimum-capabilities]',
      '[--trace-scheduler]',
      '[--at T] [--show-faults]',
      '--wall-clock',
      '[--project DIR] [--json | --format text|json|markdown]',
      '[--baseline DIR]',
    ]) {
      expect(help, text).toContain(text);
    }
  });
});
