import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { explain } from '../../../agent/programs/assurance/explain.js';
import { programTrust } from '../../../agent/programs/assurance/trust.js';
import { BASELINE_FILE } from '../../../agent/programs/assurance/integrity-baseline.js';
import { ApiError } from '../../../agent/core/errors.js';
import { at, frame, makeProgram, makeRobot } from './factory.js';
import { demoConfig, patrol, PATROL_FILE } from './demo.js';
import { removeTempDirs, tempDir } from './project.js';

afterAll(removeTempDirs);

const trace = {
  version: 2,
  source: 'patrol.sd',
  deterministic: true,
  frames: [
    frame(100, 'behavior_tick', { iteration: 1 }),
    frame(200, 'decision_tree_eval', {
      version: 3,
      decision_id: 'd-200-decision_tree_eval',
      mission: 'Patrol',
      decision: 'stop_drive',
      reason: 'lidar.nearest_distance < 0.5m',
      evidence: { tree: 'AisleReflex', actions: ['stop_drive', 'sound_horn'], rejected_alternatives: ['switch_to lidar_localization'] },
      safety_checks: [{ rule: 'distributed_decision', passed: true }],
    }),
    frame(300, 'kill_switch', { name: 'FloorStop' }),
  ],
};

const topics = (result: ReturnType<typeof explain>) => result.report.sections.map((s) => s.topic);

describe('explain: trace input', () => {
  it('trace mode (default for a trace): one decisions section', () => {
    const result = explain({ kind: 'trace', trace }, { config: null, file: '/p/patrol.trace' });
    expect(result).toEqual({
      mode: 'trace',
      report: {
        program: '/p/patrol.trace',
        sections: [
          {
            topic: 'decisions',
            summary: '2 decision(s) in trace',
            details: [
              'd-200-decision_tree_eval @ 200ms — stop_drive (lidar.nearest_distance < 0.5m)',
              'd-300-kill_switch @ 300ms — emergency_stop (synthesized_from_event:kill_switch)',
            ],
          },
        ],
      },
    });
  });

  it('decision mode: a summary and one section per decision', () => {
    const result = explain({ kind: 'trace', trace }, { config: null, mode: 'Decision', file: '/p/patrol.trace' });
    expect(result.mode).toBe('decision');
    expect(topics(result)).toEqual(['summary', 'decision/d-200-decision_tree_eval', 'decision/d-300-kill_switch']);
    expect(result.report.sections[0]).toEqual({ topic: 'summary', summary: '2 autonomous decision(s) in trace', details: [] });
    expect(result.report.sections[1]).toEqual({
      topic: 'decision/d-200-decision_tree_eval',
      summary: "At T+200ms the system chose 'stop_drive' because lidar.nearest_distance < 0.5m",
      details: [
        'Reason: lidar.nearest_distance < 0.5m',
        'Source event: decision_tree_eval',
        'Mission: Patrol',
        'Evidence: {"actions":["stop_drive","sound_horn"],"rejected_alternatives":["switch_to lidar_localization"],"tree":"AisleReflex"}',
        'Rejected alternatives: ["switch_to lidar_localization"]',
        'Safety checks: [{"rule":"distributed_decision","passed":true}]',
        'Chosen action: stop_drive; sound_horn',
      ],
    });
    expect(result.report.sections[2]!.details[2]).toBe('Mission: -');
  });
});

describe('explain: program input (demo patrol)', () => {
  const program = patrol();
  const config = demoConfig();

  it('readiness mode', () => {
    const result = explain({ kind: 'program', program }, { config, mode: 'readiness', file: PATROL_FILE });
    expect(result.mode).toBe('readiness');
    expect(result.report.program).toBe(PATROL_FILE);
    expect(result.report.sections).toHaveLength(1);
    const [section] = result.report.sections;
    expect(section!.topic).toBe('readiness');
    expect(section!.summary).toMatch(/^Mission ready with score \d+\/100$/);
    for (const detail of section!.details) expect(detail).toMatch(/^\[(Critical|High|Medium|Low|Info)\] /);
  });

  it('readiness mode on a program that is not ready', () => {
    const bare = makeProgram({ robots: [makeRobot({ actuators: [{ name: 'w', type: 'DifferentialDrive', loc: at() }], missions: [{ name: 'M', durationHours: null, requiredCapabilities: [], approvals: [], steps: [], loc: at() }] })] });
    const [section] = explain({ kind: 'program', program: bare }, { config: null, mode: 'readiness' }).report.sections;
    expect(section!.summary).toMatch(/^Mission not ready — score \d+\/100$/);
    expect(section!.details).toContain('[High] Mission requires obstacle_avoidance. Robot \'Rover\' lacks minimum hardware.');
  });

  it('verify mode: non-pass hardware items and mission issues', () => {
    const result = explain({ kind: 'program', program }, { config, mode: 'verify', file: PATROL_FILE });
    expect(result.report.sections).toEqual([{ topic: 'verify', summary: 'Hardware compatible with RoverV2; 1/1 mission(s) achievable', details: [] }]);
    const esp = explain({ kind: 'program', program }, { config, mode: 'verify', target: 'ESP32' }).report.sections[0]!;
    expect(esp.summary).toBe('Hardware incompatible with ESP32; 0/1 mission(s) achievable');
    expect(esp.details).toContain("[sensor] Sensor 'lidar' (Lidar) not supported by ESP32");
    expect(esp.details).toContain('Hardware compatibility check failed');
  });

  it('safety mode: deployable, coverage, rules and uncovered scenarios', () => {
    const result = explain({ kind: 'program', program }, { config, mode: 'safety' });
    expect(result.report.sections).toEqual([
      {
        topic: 'safety',
        summary: 'Safety deployable=true coverage=50%',
        details: [
          'max_speed = 1.2m/s',
          'max_angular = 0.8rad/s',
          'stop_if lidar . read ( ) . nearest_distance < 0.35m',
          'zone charging_room circle at (-4, 3) radius 2.5m',
          'zone dock_apron rect at (12, -6) size (8, 4)',
          'Low battery is not covered by a safety rule',
          'GPS loss is not covered by a safety rule',
        ],
      },
    ]);
  });

  it('program mode with a configuration: every section in order, without writing a trust baseline', () => {
    const stateDir = tempDir();
    const result = explain({ kind: 'program', program }, { config, file: PATROL_FILE, stateDir, projectRoot: path.dirname(PATROL_FILE) });
    expect(result.mode).toBe('program');
    expect(topics(result)).toEqual([
      'structure', 'readiness', 'verify', 'safety', 'composite_trust', 'secure_boot', 'contract', 'configuration', 'deployment_gates', 'package_trust',
    ]);
    const section = (topic: string) => result.report.sections.find((s) => s.topic === topic)!;
    expect(section('structure')).toEqual({
      topic: 'structure',
      summary:
        '1 robot(s), 1 mission plan(s), 1 hardware profile(s), 1 deploy(s), 1 health check(s), 1 recovery policy(ies), 1 mitigation(s), 2 decision tree(s), 1 assurance case(s), 1 anomaly detector(s), 1 kill switch(es)',
      details: ['Robot Sentinel: 5 sensor(s), 1 actuator(s), 1 behavior(s), 2 task(s), 1 mission(s)'],
    });
    expect(section('composite_trust').summary).toBe('Composite trust 72/100 (acceptable), integrity Unknown');
    expect(fs.existsSync(path.join(stateDir, BASELINE_FILE))).toBe(false);
    expect(section('secure_boot')).toEqual({
      topic: 'secure_boot',
      summary: 'Secure boot coverage 50%',
      details: [
        '[fail] hardware_attestation — No hardware attestation package imported',
        '[fail] tamper_policy — No tamper_policy declared',
        '[pass] certification — Certified: ISO3691_4',
        '[pass] signed_kill_switch — Every kill switch is remote_signed',
      ],
    });
    expect(section('contract').summary).toBe('Mission contract verification passed');
    expect(section('configuration').summary).toBe('Warehouse Patrol Demo 0.3.0: 2 layer(s), 8 fragment(s), 11 device(s) (2 networked)');
    expect(section('deployment_gates').summary).toBe('All deployment gates pass');
    expect(section('package_trust')).toEqual({
      topic: 'package_trust',
      summary: '6 package(s), mean trust 67',
      details: [
        'svc-camera: unrated (60)',
        'svc-can-motion: unrated (60)',
        'svc-fusion-sensor: trust 80',
        'svc-mqtt-bridge: unrated (60)',
        'svc-net-cellular: unrated (60)',
        'svc-positioning-gps: trust 85',
      ],
    });
  });

  it('program mode reads (but never records) the trust baseline', () => {
    const root = tempDir();
    const file = path.join(root, 'patrol.sd');
    fs.copyFileSync(PATROL_FILE, file);
    const stateDir = path.join(root, '.svc-control-center');
    programTrust(program, { file, projectRoot: root, stateDir });
    const trusted = explain({ kind: 'program', program }, { config: null, file, stateDir, projectRoot: root });
    expect(trusted.report.sections.find((s) => s.topic === 'composite_trust')!.summary).toBe('Composite trust 78/100 (acceptable), integrity Trusted');
  });

  it('program mode without a configuration stops after contract; no secure_boot without contracts', () => {
    expect(topics(explain({ kind: 'program', program }, { config: null }))).toEqual([
      'structure', 'readiness', 'verify', 'safety', 'composite_trust', 'secure_boot', 'contract',
    ]);
    const noContracts = makeProgram({ robots: [makeRobot()] });
    const result = explain({ kind: 'program', program: noContracts }, { config: null });
    expect(topics(result)).toEqual(['structure', 'readiness', 'verify', 'safety', 'composite_trust', 'contract']);
    expect(result.report.sections.at(-1)!.summary).toBe('Mission contract verification failed (2 issue(s))');
  });

  it('rejects unknown modes and trace modes on a program', () => {
    expect(() => explain({ kind: 'program', program }, { config: null, mode: 'drift' })).toThrow(ApiError);
    expect(() => explain({ kind: 'program', program }, { config: null, mode: 'drift' })).toThrow("unknown explain mode 'drift'");
    expect(() => explain({ kind: 'program', program }, { config: null, mode: 'decision' })).toThrow("explain mode 'decision' needs a .trace file");
  });
});
