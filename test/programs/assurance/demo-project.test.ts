/**
 * The assurance operations on the bundled demo project, parsed and resolved from disk, and on trace
 * files written and read by the runtime's trace-file module.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseProgram, diagnoseTrace } from '../../../agent/programs/assurance/diagnose.js';
import { healProgram } from '../../../agent/programs/assurance/heal.js';
import { programTrust } from '../../../agent/programs/assurance/trust.js';
import { auditDecisions } from '../../../agent/programs/assurance/audit-decisions.js';
import { readTrace, writeTrace } from '../../../agent/programs/runtime/trace-file.js';
import { frame } from './factory.js';
import { demoConfig, parseFile, patrol, PATROL_FILE } from './demo.js';
import { removeTempDirs, tempDir } from './project.js';

afterAll(removeTempDirs);

describe('demo patrol', () => {
  it('diagnoses the mitigation and the anomaly chain; the demo devices all have endpoints', () => {
    const report = diagnoseProgram(patrol(), { config: demoConfig() });
    expect(report).toEqual({
      static_diagnoses: [
        {
          subject: 'ChargingRoomAir',
          root_causes: [{ description: 'air.co2_high', confidence: 0.7, contributing: ['reduce_speed 0.3m/s', 'notify shift_lead'] }],
          fault_tree: { top_event: 'ChargingRoomAir', gates: ['reduce_speed 0.3m/s', 'notify shift_lead'] },
        },
      ],
      causal_graph: {
        nodes: ['system', 'ChargingRoomAirQuality', 'reduce_speed 0.3m/s', 'notify shift_lead'],
        edges: [
          ['system', 'ChargingRoomAirQuality'],
          ['ChargingRoomAirQuality', 'reduce_speed 0.3m/s'],
          ['ChargingRoomAirQuality', 'notify shift_lead'],
        ],
      },
      trace_diagnosis: null,
      passed: true,
    });
  });

  it('heals with the configured device registry and a knowledge store in the state dir', () => {
    const config = demoConfig();
    const stateDir = tempDir();
    const knowledgePath = path.join(stateDir, 'recovery_knowledge.json');
    fs.writeFileSync(knowledgePath, JSON.stringify([{ failure: 'lidar.failed', actions: ['switch_to camera_depth'], success_rate: 0.8 }]));
    const report = healProgram(patrol(), { config, devices: config.devices, knowledgePath });
    expect(report.contexts.map((c) => [c.issue, c.classification])).toEqual([
      ['gps.lost', 'SensorFailure'],
      ['lidar.timeout', 'SensorFailure'],
      ['mqtt.disconnected', 'ConnectivityFailure'],
      ['air.co2_high', 'Unknown'],
    ]);
    expect(report.plans[1]).toMatchObject({ name: 'recovery_lidar_timeout', target_mode: 'SafeMode', risk: 'Low' });
    expect(report.plans[2]!.actions.map((a) => [a.description, a.strategy, a.correction])).toEqual([
      ['buffer air_samples', { custom: 'buffer air_samples' }, { custom: 'buffer air_samples' }],
      ['reconnect broker', 'provider_reconnect', { reconnect: { target: 'broker' } }],
    ]);
    expect(report.results.map((r) => r.status)).toEqual(['Success', 'Success', 'Success', 'Success']);
    expect(report.results[0]!.actions[0]!.gates[1]).toEqual({ gate: 'Hardware Verification', passed: true, detail: 'Compatible with RoverV2' });
    expect(report.knowledge.loaded).toBe(true);
    expect(report.knowledge.entries.map((e) => `${e.source}:${e.failure}`)).toEqual([
      'store:lidar.failed',
      'analysis:gps.failed',
      'analysis:camera.failed',
      'analysis:lidar.failed',
      'analysis:lte.lost',
      'analysis:wifi.lost',
      'analysis:battery.low',
      'analysis:provider.failed',
      'analysis:package.failed',
    ]);
    expect(report.passed).toBe(true);
  });

  it('trusts a copy of the patrol program, then reports it Modified after an edit', () => {
    const root = tempDir();
    const file = path.join(root, 'patrol.sd');
    fs.copyFileSync(PATROL_FILE, file);
    const stateDir = path.join(root, '.svc-control-center');
    const first = programTrust(parseFile(file), { file, projectRoot: root, stateDir });
    expect(first.integrity_status).toBe('Trusted');
    expect(first.categories.map((c) => [c.name, c.score, c.weighted])).toEqual([
      ['package_trust', 82, 16],
      ['device_integrity', 50, 10],
      ['firmware_integrity', 100, 15],
      ['configuration_integrity', 100, 20],
      ['identity_validation', 82, 12],
      ['safety_integrity', 50, 5],
    ]);
    expect(first).toMatchObject({ label: 'patrol.sd', score: 78, tier: 'acceptable', passed: true });

    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('max_speed = 1.2 m/s;', 'max_speed = 2.5 m/s;'));
    const second = programTrust(parseFile(file), { file, projectRoot: root, stateDir });
    expect(second.integrity_status).toBe('Modified');
    expect(second.passed).toBe(false);
    expect(second.recommendations.at(-1)).toMatch(/^Program changed since its integrity baseline/);
  });
});

describe('trace files on disk', () => {
  it('diagnoses and audits a trace written and read by the runtime module', () => {
    const dir = tempDir();
    const file = path.join(dir, 'patrol.trace');
    writeTrace(file, {
      version: 1,
      source: path.join(dir, 'patrol.sd'),
      deterministic: true,
      frames: [
        frame(100, 'behavior_tick', { sim_time_ms: 100, interval_ms: 100, iteration: 1 }),
        frame(200, 'provider_call', { category: 'ai', failed: 'quota exceeded', function: 'classify', module: 'vision', provider_key: 'mock' }),
        frame(300, 'recovery_started', { policy: 'SentinelRecovery' }),
      ],
    });
    const trace = readTrace(file);
    expect(trace.source).toBe('patrol.sd');
    expect(diagnoseTrace(trace).trace_diagnosis?.root_cause).toBe('Provider failure: mock.classify (quota exceeded)');
    const audit = auditDecisions(trace, { source: file, explain: true });
    expect(audit.decision_count).toBe(2);
    expect(audit.report.timeline.source).toBe('patrol.sd');
    expect(audit.explanation).toBe(
      [
        `Decision explanations for ${file}`,
        "At T+200ms the system decided to 'provider_dispatch' because synthesized_from_event:provider_call (event: provider_call).",
        "At T+300ms the system decided to 'recovery_action' because synthesized_from_event:recovery_started (event: recovery_started).",
      ].join('\n'),
    );
  });
});
