import { afterAll, describe, expect, it } from 'vitest';
import { assureProgram } from '../../../agent/programs/assurance/assure.js';
import { evidenceKind } from '../../../agent/programs/assurance/assure-evidence.js';
import { at, makeProgram, makeRobot } from './factory.js';
import { demoConfig, patrol, PATROL_FILE } from './demo.js';
import { removeTempDirs, writeProject } from './project.js';

afterAll(removeTempDirs);

const flags = (report: ReturnType<typeof assureProgram>) => ({
  assurance: report.assurance.passed,
  anomalies: report.anomalies.passed,
  prognostics: report.prognostics.passed,
  resilience: report.resilience.passed,
  mission: report.mission.passed,
  state: report.state.passed,
  recovery: report.recovery.passed,
});

const ALL_TRUE = { assurance: true, anomalies: true, prognostics: true, resilience: true, mission: true, state: true, recovery: true };

describe('assureProgram on the demo patrol', () => {
  const report = assureProgram(patrol(), { config: demoConfig() });

  it('passes every sub-report with the demo configuration', () => {
    expect(flags(report)).toEqual(ALL_TRUE);
    expect(report.issues).toEqual([]);
    expect(report.score).toBe(100);
    expect(report.passed).toBe(true);
  });

  it('links evidence by kind and renders safety rules readably', () => {
    expect(report.assurance.cases).toEqual([
      {
        name: 'NightRoundCase',
        evidence: [
          { source: 'hardware_profile_review', kind: 'hardware', status: 'linked' },
          { source: 'capability_matrix', kind: 'capability', status: 'linked' },
          { source: 'health_monitoring', kind: 'health', status: 'linked' },
          { source: 'replay_of_pilot_runs', kind: 'replay', status: 'linked' },
          { source: 'safety_zone_survey', kind: 'safety', status: 'linked' },
        ],
      },
    ]);
    expect(report.assurance.verification.compatible).toBe(true);
    expect(report.assurance.verification.items).toHaveLength(10);
    expect(report.assurance.safety).toEqual({
      rules: [
        'max_speed = 1.2m/s',
        'max_angular = 0.8rad/s',
        'stop_if lidar . read ( ) . nearest_distance < 0.35m',
        'zone charging_room circle at (-4, 3) radius 2.5m',
        'zone dock_apron rect at (12, -6) size (8, 4)',
      ],
      kill_switches: ["Kill switch 'FloorStop' declared"],
    });
    expect(report.assurance.traceability.rows.slice(0, 2)).toEqual(['hardware: RoverV2', 'capability: obstacle_avoidance']);
    expect(report.assurance.traceability.rows).toContain('readiness: obstacle_avoidance');
    expect(report.assurance.traceability.rows).toContain('device: sentinel-air-probe (environment_sensor)');
  });

  it('builds the safety case', () => {
    const safetyCase = report.assurance.safety_case;
    expect(safetyCase.program).toBe(PATROL_FILE);
    expect(safetyCase.test_results).toEqual(['Hardware compatible: true', 'Minimum capabilities: true', 'Health checks: Healthy']);
    expect(safetyCase.known_risks[0]).toBe("Actuator 'wheels' on robot 'Sentinel' has no safety gate");
    expect(safetyCase.kill_switch_validation).toEqual([
      { name: 'FloorStop', scope: 'Sentinel', priority: 'critical', remote_signed: true, has_action: true, valid: true },
    ]);
    expect(safetyCase.mission_verification.map((m) => [m.mission_name, m.achievable])).toEqual([['Patrol', true]]);
    expect(safetyCase.traceability_matrix.hardware).toEqual(['RoverV2']);
    expect(safetyCase.deployable).toBe(true);
  });

  it('reports anomalies, prognostics, resilience, mission and state', () => {
    expect(report.anomalies).toEqual({
      detectors: [{ detector: 'ChargingRoomAirQuality', rules: ['air.co2 <= 1000ppm', 'air.temperature <= 35celsius'] }],
      handlers: ['ChargingRoomAirQuality@Medium: reduce_speed 0.3m/s, notify shift_lead'],
      anomalies: [],
      learned: [],
      passed: true,
    });
    expect(report.prognostics).toEqual({ models: [], rul_predictions: [], failure_predictions: [], trends: [], warnings: [], passed: true });
    expect(report.resilience.policies[0]).toEqual({
      name: 'SentinelResilience',
      strategies: [
        { name: 'lidar_only_localization', description: 'Strategy: lidar_only_localization' },
        { name: 'reduced_speed_round', description: 'Strategy: reduced_speed_round' },
        { name: 'early_return_to_dock', description: 'Strategy: early_return_to_dock' },
      ],
    });
    expect(report.resilience.recovery).toEqual([{ name: 'ChargingRoomAir', actions: ['reduce_speed 0.3m/s', 'notify shift_lead'] }]);
    expect(report.resilience.readiness_score).toBeGreaterThanOrEqual(80);
    expect(report.mission.execution).toEqual({ plan: 'NightRound', current_step: 'undock', status: 'ready' });
    expect(report.mission.abort_reasons).toEqual([]);
    expect(report.state).toEqual({
      estimators: [
        {
          estimator: 'SentinelPose',
          inputs: ['gps.fix', 'imu.yaw', 'wheels.odometry'],
          fused: { name: 'PoseEstimate', value: null, confidence: 0.8, sources: ['gps.fix', 'imu.yaw', 'wheels.odometry'] },
        },
      ],
      belief: { estimates: { PoseEstimate: { confidence: 0.8, sources: ['gps.fix', 'imu.yaw', 'wheels.odometry'] } } },
      issues: [],
      passed: true,
    });
    expect(report.recovery.results.map((r) => [r.plan, r.status])).toEqual([
      ['recovery_gps_lost', 'Success'],
      ['recovery_lidar_timeout', 'Success'],
      ['recovery_mqtt_disconnected', 'Success'],
      ['recovery_air_co2_high', 'Success'],
    ]);
  });
});

describe('assureProgram rules', () => {
  it('enforces require_recovery only under a configuration', () => {
    const program = { ...patrol(), recoveryPolicies: [], mitigations: [] };
    const bare = assureProgram(program, { config: null });
    expect(flags(bare)).toEqual(ALL_TRUE);
    expect(bare.passed).toBe(true);
    expect(assureProgram(program, { config: demoConfig() }).passed).toBe(false);
    const relaxed = writeProject('[assurance]\nrequire_recovery = false\nrequire_resilience = true\n').config;
    expect(assureProgram(program, { config: relaxed }).passed).toBe(true);
  });

  it('enforces require_resilience and minimum_score', () => {
    const noResilience = { ...patrol(), resiliencePolicies: [] };
    expect(assureProgram(noResilience, { config: null }).passed).toBe(true);
    expect(assureProgram(noResilience, { config: writeProject('[assurance]\nminimum_score = 70\n').config }).passed).toBe(false);
    expect(assureProgram(noResilience, { config: writeProject('[assurance]\nrequire_resilience = false\n').config }).passed).toBe(true);
    // The score (share of passing sub-reports) must reach minimum_score: 100 is the most it can be.
    expect(assureProgram(patrol(), { config: writeProject('[assurance]\nminimum_score = 101\n').config }).passed).toBe(false);
  });

  it('scores the share of passing sub-reports', () => {
    const program = { ...patrol(), stateEstimators: [{ name: 'Blind', inputs: [], output: null, loc: at() }] };
    const report = assureProgram(program, { config: null });
    expect(report.state.issues).toEqual(["State estimator 'Blind' has no inputs"]);
    expect(report.state.estimators[0]!.fused).toEqual({ name: 'BlindEstimate', value: null, confidence: 0, sources: [] });
    expect(report.issues).toEqual(["State estimator 'Blind' has no inputs"]);
    expect(report.score).toBe(86);
    expect(report.passed).toBe(false);
  });

  it('fails evidence when a networked device has neither identity nor fingerprint', () => {
    const { config } = writeProject('[[devices]]\nid = "cam"\nprotocol = "rtsp"\nip = "10.0.0.2"\n');
    const report = assureProgram(patrol(), { config });
    expect(report.assurance.passed).toBe(false);
    expect(report.assurance.traceability.rows.at(-1)).toBe('device: cam (unknown)');
    expect(report.passed).toBe(false);
  });

  it('applies [mission] require_plans and required_capabilities', () => {
    const { config } = writeProject('[mission]\nrequire_plans = true\nrequired_capabilities = ["obstacle_avoidance", "manipulation"]\n');
    const report = assureProgram({ ...patrol(), missionPlans: [] }, { config });
    expect(report.mission.abort_reasons).toEqual([
      { reason: 'Mission plans are required by configuration but none is declared', severity: 'High' },
      { reason: "Required capability 'manipulation' is not provided by any robot", severity: 'High' },
    ]);
    expect(report.mission.execution).toEqual({ plan: null, current_step: null, status: 'replan' });
    expect(report.mission.passed).toBe(false);
  });

  it('reports knowledge-model, state and mode issues and anomaly findings on a sparse program', () => {
    const program = makeProgram({
      robots: [makeRobot({ modes: [{ name: 'normal', body: [], loc: at() }] })],
      knowledgeModels: [{ name: 'Empty', components: [], dependencies: [{ capability: 'gps_navigation', requires: [] }], loc: at() }],
      anomalyDetectors: [{ name: 'Quiet', learnedBackend: 'onnx.iforest', expected: [], loc: at() }],
      prognostics: [{ name: 'Battery', predicts: ['battery.rul'], warnings: ['battery.rul < 30min'], loc: at() }, { name: 'Motor', predicts: ['motor.wear'], warnings: [], loc: at() }],
    });
    const report = assureProgram(program, { config: null });
    expect(report.issues).toEqual([
      "Knowledge model 'Empty' has no components declared",
      "Knowledge model 'Empty' dependency 'gps_navigation' has empty requires list",
      'No safe mode declared',
      'No degraded mode declared',
    ]);
    expect(report.anomalies.anomalies).toEqual([
      { detector: 'Quiet', metric: null, expected: 'at least one expected rule', observed: 'no expected rule declared', severity: 'Medium' },
      { detector: 'Quiet', metric: null, expected: 'an on anomaly handler', observed: 'no handler declared', severity: 'Low' },
    ]);
    expect(report.anomalies.learned).toEqual([{ detector: 'Quiet', backend: 'onnx.iforest' }]);
    expect(report.anomalies.passed).toBe(true);
    expect(report.prognostics.models).toEqual([
      { name: 'Battery', target: 'battery.rul', rules: ['battery.rul < 30min'] },
      { name: 'Motor', target: 'motor.wear', rules: [] },
    ]);
    expect(report.prognostics.rul_predictions).toEqual([
      { component: 'battery.rul', estimate: '30min', confidence: 0.75 },
      { component: 'motor.wear', estimate: null, confidence: 0.75 },
    ]);
    expect(report.prognostics.warnings).toEqual(["Prognostics 'Motor' has no warn_if rule"]);
    expect(report.assurance.passed).toBe(false); // no assurance_case
    expect(report.mission.verification.mission_name).toBeNull();
    expect(report.recovery.mode_issues).toEqual(['No safe mode declared', 'No degraded mode declared']);
    expect(report.passed).toBe(false);
  });

  it('classifies evidence names', () => {
    expect(['hw_hardware', 'traceability_audit', 'health', 'simulation_runs', 'safety_review', 'fmea'].map(evidenceKind)).toEqual([
      'hardware', 'capability', 'health', 'replay', 'safety', 'verification',
    ]);
  });
});
