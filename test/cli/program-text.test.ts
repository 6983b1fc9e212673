import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectCli } from '../helpers/svc-project-cli.js';

/**
 * The lines people grep for in `svc check`, `svc heal` and `svc verify` (docs/programs.md, "The
 * CLI"); `--json` stays the REST body. Runs the built `svc` (`npm run build` first).
 */
const { root: dir, svc, json } = projectCli('svc-cli-text', path.join(__dirname, 'fixtures'));

beforeAll(() => {
  fs.writeFileSync(
    path.join(dir, 'typo.sd'),
    'robot Typo {\n  sensor lidar: Lidar;\n  actuator wheels: DifferentialDrive;\n  behavior main() {\n    loop every 100ms {\n      wheels.drive(linear: speedd, angular: 0.0);\n    }\n  }\n}\n',
  );
  fs.writeFileSync(path.join(dir, 'broken.sd'), 'robot Broken {\n  sensor lidar: Lidar\n}\n');
});

describe('svc check', () => {
  it('prints ✓ <file> — no type errors per clean file and the reason per failing one', () => {
    const clean = svc(['check', 'courier.sd']);
    expect(clean).toEqual({ code: 0, stdout: '✓ courier.sd — no type errors\n', stderr: '' });
    const typed = svc(['check', 'courier.sd', 'typo.sd']);
    expect(typed.stdout).toBe(
      "✓ courier.sd — no type errors\n✗ typo.sd — type error: undefined identifier 'speedd' in behavior main (line 6, column 28)\n",
    );
    expect(typed.code).toBe(1);
    const parse = svc(['check', 'broken.sd', 'typo.sd']);
    expect(parse.code).toBe(2);
    expect(parse.stdout.split('\n')[0]).toBe('✗ broken.sd — parse failed: broken.sd:3:1: expected \';\' after sensor declaration, found \'}\'');
  });

  it('--json is one result per file, a type error with its stage and location', () => {
    const r = json(['check', 'typo.sd']);
    expect(r.code).toBe(1);
    expect(r.body).toEqual([
      {
        file: 'typo.sd',
        ok: false,
        stage: 'type',
        error: "type error: undefined identifier 'speedd' in behavior main (line 6, column 28)",
        location: { line: 6, column: 28 },
        robots: 1,
        declarations: 1,
        warnings: ["robot 'Typo' has actuators but no safety block"],
      },
    ]);
  });
});

describe('svc heal', () => {
  it('shows per failure its diagnosis, actions, risk, safety validation and outcome, then readiness and success rate', () => {
    const r = svc(['heal', 'courier.sd']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      [
        'Recovery Report',
        'Passed: false',
        '',
        'Failure: gps.lost',
        '  Diagnosis: Satellite lock lost (SensorFailure)',
        '  Recovery Action 1: reduce_speed 0.3m/s',
        '  Recovery Action 2: enter degraded',
        '  Risk: Low',
        '  Safety Validation: PASS',
        '  Outcome: Success (2/2 action(s) executed)',
        '',
        'Failure: brake.safety_fault',
        '  Diagnosis: Safety condition violated (SafetyFailure)',
        '  Recovery Action 1: enter safe_mode (blocked by Safety Validation)',
        '  Risk: Low',
        '  Safety Validation: FAIL',
        '  Outcome: Unsafe (0/1 action(s) executed)',
        '',
        'Recovery Ready: NO',
        'Success Rate: 67%',
        '',
      ].join('\n'),
    );
    const body = json(['heal', 'courier.sd']).body;
    expect(Object.keys(body)).toEqual(['version', 'file', 'report']);
    expect(body.report.assurance.success_rate).toBeCloseTo(2 / 3);
  });
});

describe('svc verify', () => {
  it('ends with "Deployment compatible", or with the reason it is not', () => {
    const ok = svc(['verify', 'courier.sd']);
    expect(ok.code).toBe(0);
    expect(ok.stdout.startsWith('Hardware compatible: YES (target YardCart)\n')).toBe(true);
    expect(ok.stdout.endsWith('\nDeployment compatible\n')).toBe(true);
    const esp = svc(['verify', 'courier.sd', '--target', 'ESP32']);
    expect(esp.code).toBe(1);
    expect(esp.stdout.endsWith("\nDeployment not compatible: sensor: Sensor 'lidar' (Lidar) not supported by ESP32 (and 1 more error(s))\n")).toBe(true);
    expect(json(['verify', 'courier.sd']).body.report.compatible).toBe(true);
  });
});
