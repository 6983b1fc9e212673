import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { analyseCapabilities } from '../../../agent/programs/analysis/capability-inference.js';
import { evaluateReadiness } from '../../../agent/programs/analysis/readiness.js';
import { verifyHardware } from '../../../agent/programs/analysis/verify-hardware.js';
import { assureProgram } from '../../../agent/programs/assurance/assure.js';
import { auditProgramSecurity } from '../../../agent/programs/assurance/security-audit.js';
import { parseProgram } from '../../../agent/programs/language/index.js';

/** Where the analyses read the issue-18 forms (docs/program-language.md §4.1 "Forms added in issue 18"). */
const FORMS = path.join(__dirname, '../language/forms');
const fixture = (name: string) => parseProgram(fs.readFileSync(path.join(FORMS, name), 'utf8'), name);
const items = (report: { items: { category: string; severity: string; message: string }[] }, category: string) =>
  report.items.filter((i) => i.category === category).map((i) => [i.severity, i.message]);

describe('secure topics feed the secure-communication checks', () => {
  it('a secure topic makes secure_communication an inferred capability, which then needs WiFi or LTE', () => {
    const program = fixture('secure_topic.sd');
    expect(analyseCapabilities(program)[0]!.inferred).toContain('secure_communication');
    // No program-declared profile gives the robot connectivity: the capability is PARTIAL, an error (§9.8).
    const report = evaluateReadiness(program, { config: null });
    expect(report.issues.filter((i) => i.factor === 'Capabilities').map((i) => i.message)).toEqual([
      "Robot 'PalletJack' requires capability 'secure_communication'",
    ]);
  });

  it('with a WiFi link from its hardware profile the capability passes', () => {
    const source = fs.readFileSync(path.join(FORMS, 'secure_topic.sd'), 'utf8')
      .replace('robot PalletJack {', 'hardware JackBoard { sensors [Lidar]; actuators [DifferentialDrive]; connectivity [WiFi]; }\nrobot PalletJack {\n    uses hardware JackBoard;');
    const rows = analyseCapabilities(parseProgram(source, 'jack.sd'))[0]!.rows;
    expect(rows.find((r) => r.capability === 'secure_communication')).toMatchObject({ source: 'inferred', status: 'PASS' });
    expect(evaluateReadiness(parseProgram(source, 'jack.sd'), { config: null }).issues.filter((i) => i.factor === 'Capabilities')).toEqual([]);
  });

  it('assure carries the same check: the capability error is a known risk and fails verification', () => {
    const report = assureProgram(fixture('secure_topic.sd'), { config: null });
    expect(report.assurance.safety_case.known_risks).toContain("Robot 'PalletJack' requires capability 'secure_communication'");
    expect(report.assurance.verification.compatible).toBe(false);
  });

  it('a plain topic does not count as secure communication', () => {
    const program = parseProgram('robot R { topic t: T publish on "/t"; }', 'r.sd');
    expect(analyseCapabilities(program)[0]!.inferred).not.toContain('secure_communication');
  });

  it('the security audit: a secure topic on a plaintext scheme is an error; secure topics need no secure_comm block', () => {
    const findings = auditProgramSecurity(parseProgram(`robot R {
      topic a: T publish on "mqtt://broker/a" secure;
      topic b: T publish on "mqtts://broker/b" secure;
    }`, 'r.sd'));
    expect(findings).toEqual([{ severity: 'error', message: "Topic 'a' on robot 'R' is declared secure but uses plaintext mqtt://" }]);
    const plain = auditProgramSecurity(parseProgram('robot R { topic b: T publish on "mqtts://broker/b"; }', 'r.sd'));
    expect(plain).toEqual([{ severity: 'info', message: "Robot 'R' reaches networked endpoints without a secure_comm block" }]);
  });
});

describe('topic rate without a channel clause feeds topic bandwidth', () => {
  it('checks the block-only topic and the publish topic against the profile, not subscriptions', () => {
    const report = verifyHardware(fixture('topic_block.sd'), { config: null });
    expect(items(report, 'bandwidth')).toEqual([
      ['pass', "Topic 'status' needs 0.04 Mbps at 5Hz of RaspberryPi5 bandwidth 100 Mbps"],
      ['error', "Topic 'frames' needs 221.18 Mbps at 30Hz, more than RaspberryPi5 bandwidth 100 Mbps"],
    ]);
    const sub = verifyHardware(parseProgram('robot R { topic cmd: Twist subscribe { rate: 50 Hz; } }\ndeploy R to RoverV1;', 'r.sd'), { config: null });
    expect(items(sub, 'bandwidth')).toEqual([]);
  });
});

describe('sensor driver clauses feed hardware verification', () => {
  it('lists each sensor driver with vendor and model as a pass item', () => {
    const report = verifyHardware(fixture('sensor_driver.sd'), { config: null });
    expect(items(report, 'driver')).toEqual([
      ['pass', "Sensor 'imu' (IMU) uses driver bosch.bno055 (vendor bosch, model bno055)"],
      ['pass', "Sensor 'fix' (GPS) uses driver ublox.zed_f9p (vendor ublox, model zed_f9p)"],
    ]);
    expect(report.compatible).toBe(true);
  });
});

describe('on-demand tasks and the timing checks', () => {
  it('a task without every adds no period to the timing check', () => {
    const report = verifyHardware(fixture('generic_types.sd'), { config: null, target: 'ESP32' });
    expect(items(report, 'timing').map(([, m]) => m)).toEqual([
      "Task 'sample' period 1000 ms meets ESP32 minimum period 50 ms",
      'Aggregate CPU load 0.5% on ESP32',
    ]);
  });
});
