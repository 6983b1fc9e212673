/**
 * The analyses over parsed `.sd` sources: the bundled demo (patrol.sd, dock.sd with demo/svc.toml)
 * and small programs written to temp directories. Expected figures are worked out by hand from
 * the docs/program-language.md §9 rules in the comments.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveProjectConfig, type ResolvedConfig } from '../../../agent/project/resolve-config.js';
import { verifyCapabilities } from '../../../agent/programs/analysis/capabilities.js';
import { verifyContract } from '../../../agent/programs/analysis/contract.js';
import { evaluateReadiness, type ReadinessReport } from '../../../agent/programs/analysis/readiness.js';
import { verifyHardware } from '../../../agent/programs/analysis/verify-hardware.js';
import { verifyMission } from '../../../agent/programs/analysis/verify-mission.js';
import { parseProgram } from '../../../agent/programs/language/index.js';
import { writeProject } from './config-fixture.js';

const repo = path.resolve(import.meta.dirname, '../../..');
const load = (relative: string) => parseProgram(fs.readFileSync(path.join(repo, relative), 'utf8'), relative);
const demoConfig = (): ResolvedConfig => resolveProjectConfig(path.join(repo, 'demo/svc.toml'));
const scores = (report: ReadinessReport) => Object.fromEntries(report.score.factors.map((f) => [f.factor, f.score]));

describe('demo/programs/patrol.sd', () => {
  const patrol = load('demo/programs/patrol.sd');

  it('is mission ready on its own RoverV2 with the demo policy (weights sum 100 + Operator 6)', () => {
    const report = evaluateReadiness(patrol, { config: demoConfig() });
    expect(scores(report)).toEqual({
      Hardware: 100,
      Capabilities: 100,
      Health: 100,
      Connectivity: 65, // 1 actuator warning + 6 unused RoverV2 declarations
      Safety: 95,
      Battery: 90, // 10 W × 1.5 h = 15 Wh of 180 Wh
      Storage: 90,
      Compute: 88,
      Packages: 100,
      Providers: 100,
      'Mission Requirements': 100,
      Assurance: 100,
      Operator: 100, // shift_lead is a configured role
    });
    expect(report.score.factors.map((f) => f.weight)).toEqual([14, 12, 10, 8, 14, 8, 3, 5, 6, 6, 6, 8, 6]);
    // Σ weighted = 100.8 over 106 → 95.09.
    expect(report.score.total).toBe(95);
    expect(report.policy.minimum_score).toBe(75);
    expect(report.issues).toEqual([
      {
        factor: 'Battery',
        severity: 'Low',
        message: "Mission 'Patrol' needs 15 Wh of RoverV2 battery capacity 180 Wh (margin 91.67%)",
        suggested_action: null,
      },
    ]);
    expect(report).toMatchObject({ status: 'Degraded', mission_ready: true, target: 'RoverV2', robots: ['Sentinel'] });
  });

  it('scores with the default policy without a configuration', () => {
    const report = evaluateReadiness(patrol, { config: null });
    // 12 + 12 + 12 + 5.2 + 11.4 + 7.2 + 3.6 + 5.28 + 8 + 8 + 2 + 8 = 94.68
    expect(report.score.total).toBe(95);
    expect(report.score.factors.map((f) => f.factor)).not.toContain('Operator');
    expect(report.policy.minimum_score).toBe(80);
  });

  it('fails against the built-in RoverV1 named explicitly', () => {
    const report = evaluateReadiness(patrol, { config: demoConfig(), target: 'RoverV1' });
    expect(report.target).toBe('RoverV1');
    expect(report.issues.map((i) => [i.factor, i.severity, i.message])).toEqual([
      ['Hardware', 'High', "Sensor 'gps' (GPS) not supported by RoverV1"],
      ['Hardware', 'High', "Sensor 'air' (AirQuality) not supported by RoverV1"],
      ['Hardware', 'High', "Fused sensor 'gps' (GPS) not supported by RoverV1"],
      ['Battery', 'Low', "Mission 'Patrol' needs 22.5 Wh of RoverV1 battery capacity 100 Wh (margin 77.5%)"],
    ]);
    expect(scores(report).Hardware).toBe(30);
    expect([report.mission_ready, report.status]).toEqual([false, 'Degraded']);
  });

  it('verifies hardware, capabilities, mission and contract', () => {
    const config = demoConfig();
    const hw = verifyHardware(patrol, { config });
    expect([hw.compatible, hw.target, hw.matrix]).toEqual([true, 'RoverV2', null]);
    expect(hw.items.slice(0, 3).map((i) => i.message)).toEqual([
      "Framework import 'positioning.gps' declared",
      "Framework import 'fusion.sensor' declared",
      'Certification ISO3691_4 (level PLd) declared',
    ]);
    expect(hw.items.filter((i) => i.category === 'timing').map((i) => i.message)).toEqual([
      "Task 'air_watch' period 1000 ms meets RoverV2 minimum period 8 ms",
      "Task 'fix_report' period 500 ms meets RoverV2 minimum period 8 ms",
      "Loop in behavior 'sweep' period 100 ms meets RoverV2 minimum period 8 ms",
      'Aggregate CPU load 6.5% on RoverV2',
    ]);

    const caps = verifyCapabilities(patrol, { config, traceability: true });
    expect(caps.capabilities[0]!.inferred).toEqual([
      'autonomous_navigation',
      'emergency_stop',
      'gps_navigation',
      'obstacle_avoidance',
      'remote_control',
      'telemetry_streaming',
      'vision_processing',
    ]);
    expect(caps.capabilities[0]!.rows.every((r) => r.status === 'PASS')).toBe(true);
    expect(caps.health.overall).toBe('Healthy');
    expect(caps.health.checks.map((c) => `${c.metric} ${c.operator} ${c.threshold}`)).toEqual([
      'battery.level >= 25 %',
      'lidar.scan_hz >= 8Hz',
      'drive.can_errors <= 3',
    ]);
    expect(caps.traceability?.hardware_rows.map((r) => [r.used_by, r.provider])).toEqual([
      ['Sentinel.lidar', 'lidar_serial'],
      ['Sentinel.imu', 'imu_serial'],
      ['Sentinel.gps', 'gps_nmea'],
      ['Sentinel.dock_cam', 'camera_rtsp'],
      ['Sentinel.air', 'mqtt_bridge'],
      ['Sentinel.wheels', 'can_motion'],
    ]);

    expect(verifyMission(patrol, { config })).toEqual([
      expect.objectContaining({ achievable: true, mission_name: 'Patrol', robot: 'Sentinel', issues: [] }),
    ]);
    const contract = verifyContract(patrol, { config });
    expect(contract.passed).toBe(true);
    expect(contract.report.contracts[1]?.constraints).toEqual(['duration_hours=1.5']);
  });
});

describe('demo/programs/dock.sd', () => {
  const dock = load('demo/programs/dock.sd');

  it('is Ready on RaspberryPi5 with no issues', () => {
    const report = evaluateReadiness(dock, { config: demoConfig() });
    // 14 + 12 + 10 + 7.6 + 13.3 + 7.2 + 2.7 + 4.4 + 6 + 6 + 6 + 8 + 6 = 103.2 over 106 → 97.36
    expect(report.score.total).toBe(97);
    expect(scores(report).Connectivity).toBe(95);
    expect(report).toMatchObject({ status: 'Ready', mission_ready: true, issues: [], target: 'RaspberryPi5' });
  });

  it('builds the all-targets matrix', () => {
    const hw = verifyHardware(dock, { config: demoConfig(), allTargets: true });
    expect(hw.target).toBe('BuildingEdgeV1');
    expect(hw.matrix?.cells.map((c) => [c.target, c.compatible])).toEqual([
      ['BuildingEdgeV1', false],
      ['ESP32', false],
      ['JetsonOrin', true],
      ['RaspberryPi5', true],
      ['RoverV1', true],
      ['RoverV2', true],
      ['SmartSpaceGatewayV1', false],
    ]);
    expect(evaluateReadiness(dock, { config: demoConfig(), allTargets: true }).target).toBeNull();
  });

  it('fails contract verify: no mission, no fallback mode, no recovery', () => {
    const result = verifyContract(dock, { config: null });
    expect(result.report.checks.map((c) => [c.name, c.passed])).toEqual([
      ['mission_declared', false],
      ['safety_clause', true],
      ['continuity_clause', false],
      ['recovery_clause', false],
      ['mission_achievable', true],
    ]);
    expect(result.report.issues).toEqual(['No mission_plan or robot mission declarations found']);
  });
});

describe('parsed programs with a temp project', () => {
  const hauler = [
    'robot Hauler {',
    '    sensor lidar: Lidar;',
    '    sensor gps: GPS;',
    '    actuator wheels: DifferentialDrive;',
    '    mission Haul {',
    '        duration: 8 h;',
    '        requires capabilities [obstacle_avoidance, gps_navigation];',
    '        load; drive; unload;',
    '    }',
    '}',
    '',
  ].join('\n');

  it('uses the configured default target and reports the battery shortfall', () => {
    const dir = writeProject({
      'svc.toml': '[config]\nfleet = "svc.fleet.toml"\n',
      'svc.fleet.toml': '[fleet]\nid = "yard"\n[[fleet.robots]]\nid = "Hauler"\nhardware_profile = "RoverV2"\n',
      'hauler.sd': hauler,
    });
    const config = resolveProjectConfig(path.join(dir, 'svc.toml'));
    const program = parseProgram(fs.readFileSync(path.join(dir, 'hauler.sd'), 'utf8'), 'hauler.sd');
    const report = evaluateReadiness(program, { config });
    const battery = "Mission 'Haul' needs 160 Wh: RoverV2 battery capacity 150 Wh is below the mission energy";
    expect(report.target).toBe('RoverV2');
    expect(report.issues.map((i) => [i.factor, i.severity, i.message])).toEqual([
      ['Hardware', 'High', battery],
      ['Battery', 'Medium', battery],
      ['Capabilities', 'High', "Robot 'Hauler' requires capability 'gps_navigation'"],
      ['Battery', 'Medium', 'Battery below recommended threshold'],
    ]);
    // 7.2 + 7.2 + 10.2 + 7.6 + 4.8 + 2.4 + 3.6 + 5.28 + 8 + 8 + 1.5 + 8 = 73.78
    expect(scores(report)).toMatchObject({ Hardware: 60, Capabilities: 60, Safety: 40, Battery: 30, 'Mission Requirements': 75 });
    expect([report.score.total, report.mission_ready, report.status]).toEqual([74, false, 'Degraded']);

    expect(verifyMission(program, { config })[0]?.issues).toEqual([
      'Insufficient battery for mission duration',
      'Safety capability requirements not satisfied',
      'Hardware compatibility check failed',
    ]);
    // An explicit target wins over the configured default: JetsonOrin has no battery figure.
    expect(verifyHardware(program, { config, target: 'JetsonOrin' }).items.find((i) => i.category === 'battery')).toMatchObject({
      severity: 'warning',
      message: 'Mission duration declared but target battery capacity unknown',
    });
    // Without configuration and deploys nothing is checked.
    expect(verifyHardware(program, { config: null }).items.map((i) => i.message)).toEqual([
      'No deployment targets declared — hardware compatibility not required',
    ]);
  });

  it('scores a 5 000-line program with hundreds of robots', () => {
    const robots: string[] = [];
    let lines = 0;
    for (let n = 0; lines < 5000; n++) {
      const block = [
        `robot Unit${n} {`,
        '    sensor lidar: Lidar;',
        '    sensor cam: Camera;',
        '    actuator wheels: DifferentialDrive;',
        '    exposes capabilities [obstacle_avoidance, vision_processing];',
        '    safety { max_speed = 1.0 m/s; stop_if lidar.read().nearest_distance < 0.3 m; }',
        '    mission Patrol { duration: 30 min; requires capabilities [obstacle_avoidance]; a; b; }',
        '    behavior run() {',
        '        loop every 100ms {',
        '            let scan = lidar.read();',
        '            if scan.nearest_distance < 0.5 m { wheels.stop(); } else { wheels.drive(linear: 0.5 m/s, angular: 0.0 rad/s); }',
        '        }',
        '    }',
        '    task report every 1s { let f = cam.read(); }',
        '}',
        `deploy Unit${n} to RoverV1;`,
        `health_check Vitals${n} for robot Unit${n} { check battery.level >= 20%; }`,
      ];
      robots.push(...block);
      lines += block.length;
    }
    const source = robots.join('\n');
    // Timing lives in scripts/bench/program-analysis.js; here only the result of a large input.
    const report: ReadinessReport = evaluateReadiness(parseProgram(source, 'big.sd'), { config: null });
    expect(report.robots.length).toBeGreaterThan(290);
    expect(report.score.factors.find((f) => f.factor === 'Hardware')?.score).toBe(100);
  });
});
