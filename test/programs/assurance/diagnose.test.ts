import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseProgram, diagnoseTrace } from '../../../agent/programs/assurance/diagnose.js';
import { at, frame, makeProgram } from './factory.js';
import { removeTempDirs, writeProject } from './project.js';

afterAll(removeTempDirs);

const monitored = makeProgram({
  mitigations: [
    { name: 'AirQuality', rules: [{ condition: 'air.co2_high', actions: ['reduce_speed 0.3m/s', 'notify shift_lead'] }], loc: at() },
  ],
  anomalyDetectors: [
    { name: 'Co2', learnedBackend: null, expected: [{ metric: 'air.co2', operator: '<=', threshold: '1000ppm' }], loc: at() },
    { name: 'Temp', learnedBackend: null, expected: [], loc: at() },
  ],
  anomalyHandlers: [
    { detector: 'Co2', severity: 'Medium', actions: ['reduce_speed 0.3m/s', 'notify shift_lead'], loc: at() },
    { detector: 'Temp', severity: 'High', actions: ['notify shift_lead'], loc: at() },
  ],
});

describe('diagnoseProgram', () => {
  it('turns each mitigation into a diagnosis and builds the causal graph', () => {
    expect(diagnoseProgram(monitored)).toEqual({
      static_diagnoses: [
        {
          subject: 'AirQuality',
          root_causes: [{ description: 'air.co2_high', confidence: 0.7, contributing: ['reduce_speed 0.3m/s', 'notify shift_lead'] }],
          fault_tree: { top_event: 'AirQuality', gates: ['reduce_speed 0.3m/s', 'notify shift_lead'] },
        },
      ],
      causal_graph: {
        nodes: ['system', 'Co2', 'Temp', 'reduce_speed 0.3m/s', 'notify shift_lead'],
        edges: [
          ['system', 'Co2'],
          ['Co2', 'reduce_speed 0.3m/s'],
          ['Co2', 'notify shift_lead'],
          ['system', 'Temp'],
          ['Temp', 'notify shift_lead'],
        ],
      },
      trace_diagnosis: null,
      passed: true,
    });
  });

  it('fails a program with neither mitigations nor detectors', () => {
    const report = diagnoseProgram(makeProgram());
    expect(report).toEqual({ static_diagnoses: [], causal_graph: { nodes: ['system'], edges: [] }, trace_diagnosis: null, passed: false });
  });

  it('passes on detectors alone', () => {
    const program = makeProgram({ anomalyDetectors: monitored.anomalyDetectors });
    expect(diagnoseProgram(program).passed).toBe(true);
  });

  it('adds a diagnosis for each networked device without endpoint or IP and fails', () => {
    const { config } = writeProject(`
[[devices]]
id = "probe"
protocol = "mqtt"
[[devices]]
id = "cam"
protocol = "rtsp"
ip = "10.0.0.5"
[[devices]]
id = "imu"
protocol = "serial"
[[devices]]
id = "gw"
hostname = "gw.local"
`);
    const report = diagnoseProgram(monitored, { config });
    expect(report.static_diagnoses.slice(1)).toEqual([
      {
        subject: 'probe',
        root_causes: [{ description: 'network device missing endpoint or IP in configuration', confidence: 0.9, contributing: ['probe'] }],
        fault_tree: { top_event: 'probe', gates: [] },
      },
      {
        subject: 'gw',
        root_causes: [{ description: 'network device missing endpoint or IP in configuration', confidence: 0.9, contributing: ['gw'] }],
        fault_tree: { top_event: 'gw', gates: [] },
      },
    ]);
    expect(report.passed).toBe(false);
  });

  it('enforces require_mitigations, with [diagnosis] winning over [assurance]', () => {
    const detectorsOnly = makeProgram({ anomalyDetectors: monitored.anomalyDetectors, anomalyHandlers: monitored.anomalyHandlers });
    const strict = writeProject('[assurance]\nrequire_mitigations = true\n').config;
    expect(diagnoseProgram(detectorsOnly, { config: strict }).passed).toBe(false);
    const overridden = writeProject('[assurance]\nrequire_mitigations = true\n[diagnosis]\nrequire_mitigations = false\n').config;
    expect(diagnoseProgram(detectorsOnly, { config: overridden }).passed).toBe(true);
  });

  it('enforces require_anomaly_handlers: every detector needs a handler', () => {
    const { config } = writeProject('[diagnosis]\nrequire_anomaly_handlers = true\n');
    expect(diagnoseProgram(monitored, { config }).passed).toBe(true);
    const unhandled = makeProgram({ ...monitored, anomalyHandlers: monitored.anomalyHandlers.slice(0, 1) });
    expect(diagnoseProgram(unhandled, { config }).passed).toBe(false);
  });
});

describe('diagnoseTrace', () => {
  const tick = (t: number) => frame(t, 'behavior_tick', { sim_time_ms: t, interval_ms: 100, iteration: t / 100 });

  it('rule 1: the first frame whose event contains "fail" or whose payload has failed:true', () => {
    const report = diagnoseTrace({
      frames: [
        tick(100),
        frame(150, 'safety_stop', { rule: 'stop_if' }),
        frame(200, 'sensor_read', { sensor: 'gps', failed: true }),
        frame(300, 'retry_fallback', {}),
      ],
    });
    expect(report.static_diagnoses).toEqual([]);
    expect(report.causal_graph).toEqual({ nodes: [], edges: [] });
    expect(report.passed).toBe(true);
    expect(report.trace_diagnosis).toEqual({
      root_cause: 'sensor_read: {"sensor":"gps","failed":true}',
      contributing_factors: ['safety_stop at T+150ms', 'retry_fallback at T+300ms'],
      timeline: [
        { sim_time_ms: 100, event: 'behavior_tick', detail: '{"sim_time_ms":100,"interval_ms":100,"iteration":1}' },
        { sim_time_ms: 150, event: 'safety_stop', detail: '{"rule":"stop_if"}' },
        { sim_time_ms: 200, event: 'sensor_read', detail: '{"sensor":"gps","failed":true}' },
        { sim_time_ms: 300, event: 'retry_fallback', detail: '{}' },
      ],
      recommended_actions: [
        "Investigate 'sensor_read' at T+200ms and the handler that should have absorbed it",
        'Replay mission with --deterministic for confirmation',
      ],
    });
  });

  it('rule 1 also matches on the event name', () => {
    const report = diagnoseTrace({ frames: [tick(100), frame(200, 'recovery_failed', { policy: 'P' })] });
    expect(report.trace_diagnosis?.root_cause).toBe('recovery_failed: {"policy":"P"}');
  });

  it('rule 2: a provider_call whose failed field carries an error', () => {
    const report = diagnoseTrace({
      frames: [
        tick(100),
        frame(120, 'kill_switch', {}),
        frame(140, 'provider_call', { category: 'ai', failed: 'timeout', function: 'infer', module: 'vision', provider_key: 'mock' }),
      ],
    });
    expect(report.trace_diagnosis?.root_cause).toBe('Provider failure: mock.infer (timeout)');
    expect(report.trace_diagnosis?.recommended_actions).toEqual([
      'Check provider mock.infer (timeout): configuration, credentials and connectivity',
      'Replay mission with --deterministic for confirmation',
    ]);
    expect(report.trace_diagnosis?.contributing_factors).toEqual(['kill_switch at T+120ms']);
  });

  it('rule 3: the first safety or kill event', () => {
    const report = diagnoseTrace({ frames: [tick(100), frame(200, 'kill_switch_activated', { name: 'FloorStop' })] });
    expect(report.trace_diagnosis?.root_cause).toBe('Safety intervention: kill_switch_activated at T+200ms');
    expect(report.trace_diagnosis?.recommended_actions.at(-1)).toBe('Replay mission with --deterministic for confirmation');
  });

  it('rule 4: empty trace, and a trace without failures', () => {
    expect(diagnoseTrace({ frames: [] }).trace_diagnosis).toEqual({
      root_cause: 'Empty trace — no runtime events recorded',
      contributing_factors: [],
      timeline: [],
      recommended_actions: [
        'Record a new trace (simulation with record_trace, or svc sim --record)',
        'Replay mission with --deterministic for confirmation',
      ],
    });
    const quiet = diagnoseTrace({ frames: [tick(100), tick(200), frame(200, 'provider_call', { failed: false })] });
    expect(quiet.trace_diagnosis?.root_cause).toBe('No explicit failure event; inspect timeline for anomalies');
    expect(quiet.trace_diagnosis?.contributing_factors).toEqual([]);
    expect(quiet.trace_diagnosis?.timeline).toHaveLength(3);
  });
});
