import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { parseProgram } from '../../../agent/programs/language/index.js';
import { evaluateReadiness } from '../../../agent/programs/analysis/readiness.js';
import {
  DEFAULT_HEALTH_FAULTS,
  conditionMatchesFailure,
  injectionPlan,
  injectionPlanFromFrames,
  worstStatus,
} from '../../../agent/programs/runtime/health-injection.js';
import { runProgram } from '../../../agent/programs/runtime/interpreter.js';
import { verifyDeterministic } from '../../../agent/programs/runtime/replay.js';
import { SimRobot } from '../../../agent/programs/runtime/sim-robot.js';
import { simulateProgram, type ExecutedSimulation } from '../../../agent/programs/runtime/simulate.js';
import { readTrace } from '../../../agent/programs/runtime/trace-file.js';
import { configFrom } from '../analysis/config-fixture.js';
import { ProgramEngine } from '../../../agent/programs/program-engine.js';
import { NO_DECISION_SETTINGS } from '../../../agent/settings/settings.js';

/** Runtime health-fault injection (docs/program-language.md §24.1 step 4, §7.4 `[health]`). */
const dirs: string[] = [];
function tmpDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-health-')));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const ROVER = `
robot Rover {
    sensor lidar: Lidar on "/dev/lidar";
    sensor gps: GPS on "/dev/gps";
    sensor cam: Camera on "/dev/video0";
    actuator wheels: DifferentialDrive;
    topic status: Status publish on "/rover/status";
    safety { max_speed = 1.0 m/s; }
    kill_switch HardStop { priority: critical; action { wheels.stop(); emergency_stop; } }
    mode normal { }
    mode degraded { publish status with "degraded"; }
    mode safe_mode { wheels.stop(); }
    behavior run() {
        loop every 100ms {
            wheels.drive(linear: 0.8 m/s, angular: 0.0 rad/s);
            publish status with gps.read().fix_quality;
        }
    }
}
health_policy RoverResponse { on Degraded { enter degraded; reduce_speed 0.3 m/s; notify crew; } on Critical { enter safe_mode; } }
health_policy Other { on Degraded { wheels.stop(); } }
recovery_policy RoverRecovery {
    on gps.lost { switch_to lidar_localization; reduce_speed 0.4 m/s; enter degraded; }
    on lidar.timeout { enter safe_mode; }
}
`;

const program = () => parseProgram(ROVER, 'rover.sd');

function simulate(options: Partial<Parameters<typeof simulateProgram>[1]> = {}): ExecutedSimulation {
  return simulateProgram(program(), { file: 'rover.sd', execute: true, ...options }) as ExecutedSimulation;
}

describe('fault catalogue and plans', () => {
  it('orders statuses and matches recovery conditions by their first segment', () => {
    expect(worstStatus(['Degraded', 'Critical', 'Degraded'])).toBe('Critical');
    expect(worstStatus([])).toBeNull();
    expect(conditionMatchesFailure('gps.lost', 'gps')).toBe(true);
    expect(conditionMatchesFailure('gnss.rtk_float', 'gps')).toBe(true);
    expect(conditionMatchesFailure('lidar.timeout', 'gps')).toBe(false);
  });

  it('plans nothing without a flag, and the defaults plus the configured lists with one', () => {
    expect(injectionPlan({ healthFaults: false, failure: null, config: null })).toBeNull();
    const config = configFrom(
      '[health]\ninject_faults = ["LidarOffline", "GPSDegraded"]\n[health.robots.Rover]\npolicy = "RoverResponse"\ninject_faults = ["ImuOffline"]\n',
    );
    const plan = injectionPlan({ healthFaults: true, failure: null, config })!;
    const robot = program().robots[0]!;
    expect(plan(robot)).toEqual({
      faults: [
        ...DEFAULT_HEALTH_FAULTS.map((fault) => ({ fault, source: 'inject_health_faults' })),
        { fault: 'LidarOffline', source: 'config' },
        { fault: 'ImuOffline', source: 'config' },
      ],
      policy: 'RoverResponse',
      failure: null,
    });
    const failureOnly = injectionPlan({ healthFaults: false, failure: 'gps', config: null })!;
    expect(failureOnly(robot)).toEqual({ faults: [{ fault: 'GPSDegraded', source: 'inject_failure' }], policy: null, failure: 'gps' });
  });
});

describe('the simulated robot under injected faults', () => {
  it('GPSDegraded drops the fix quality; an offline sensor reads void', () => {
    const robot = new SimRobot();
    expect(robot.gps()['fix_quality']).toBe(1);
    robot.gpsDegraded = true;
    expect(robot.gps()).toMatchObject({ fix_quality: 0, satellites: 3 });
    robot.failedSensorTypes.add('Camera');
    expect(robot.readSensor('Camera')).toBeNull();
  });
});

describe('simulation with inject_health_faults', () => {
  it('without the flag the run has no health key and no injection frames', () => {
    const plain = simulate({ recordTrace: false });
    expect(plain.result).not.toHaveProperty('health');
    expect(JSON.stringify(plain)).toBe(JSON.stringify(simulate({ injectHealthFaults: false })));
  });

  it('injects the three default faults, runs the matching policies and fires the kill switch', () => {
    const sim = simulate({ injectHealthFaults: true });
    const health = sim.result.health!;
    expect(health.status).toBe('Critical');
    expect(health.injected.map((f) => [f.fault, f.status, f.effect])).toEqual([
      ['GPSDegraded', 'Degraded', 'gps_quality_degraded'],
      ['CameraOffline', 'Degraded', 'sensor_offline'],
      ['RobotHealthCritical', 'Critical', 'health_critical'],
    ]);
    // Every health policy applies when the configuration names none; Degraded handlers before Critical ones.
    expect(health.policy_actions.map((a) => `${a.policy}/${a.status}: ${a.action} ${a.executed}`)).toEqual([
      'RoverResponse/Degraded: enter degraded true',
      'RoverResponse/Degraded: reduce_speed 0.3m/s true',
      'RoverResponse/Degraded: notify crew false',
      'Other/Degraded: wheels . stop ( ) true',
      'RoverResponse/Critical: enter safe_mode true',
    ]);
    expect(health.kill_switches).toEqual([{ robot: 'Rover', name: 'HardStop', fault: 'RobotHealthCritical' }]);
    expect(sim.result.state.emergency_stop).toBe(true);
    expect(sim.result.events).toContain('emergency_stop()');
  });

  it('records the injection as trace frames before the first tick', () => {
    const outcome = runProgram(program(), {
      injection: injectionPlan({ healthFaults: true, failure: null, config: null }),
    });
    const events = outcome.frames.map((f) => f.event);
    const firstTick = events.indexOf('behavior_tick');
    const before = events.slice(0, firstTick);
    expect(before.filter((e) => e === 'health_fault_injected')).toHaveLength(3);
    expect(before).toContain('health_status');
    expect(before).toContain('health_policy_action');
    expect(before).toContain('kill_switch_triggered');
    expect(before).toContain('mode_enter');
    const fault = outcome.frames.find((f) => f.event === 'health_fault_injected')!;
    expect(fault.payload).toEqual({ robot: 'Rover', fault: 'GPSDegraded', status: 'Degraded', effect: 'gps_quality_degraded', source: 'inject_health_faults' });
    expect(fault.sim_time_ms).toBe(0);
    // The e-stop latched before the entry: one tick, then the loop stops.
    expect(events.filter((e) => e === 'behavior_tick')).toHaveLength(1);
  });

  it('uses only the configured health_policy and adds the configured faults', () => {
    const config = configFrom('[health.robots.Rover]\npolicy = "Other"\ninject_faults = ["LidarOffline"]\n');
    const sim = simulate({ injectHealthFaults: true, config });
    expect(sim.result.health!.injected.map((f) => f.fault)).toEqual([...DEFAULT_HEALTH_FAULTS, 'LidarOffline']);
    expect(new Set(sim.result.health!.policy_actions.map((a) => a.policy))).toEqual(new Set(['Other']));
  });

  it('a Degraded-only injection keeps the robot moving with the GPS fix degraded and the speed cap lowered', () => {
    const outcome = runProgram(program(), {
      injection: () => ({ faults: [{ fault: 'GPSDegraded', source: 'config' }], policy: 'RoverResponse', failure: null }),
    });
    expect(outcome.state.emergency_stop).toBe(false);
    expect(outcome.activeMode).toBe('degraded');
    // reduce_speed 0.3 m/s caps the 0.8 m/s drive.
    expect(outcome.events).toContain('drive(0.30 m/s, 0.00 rad/s)');
    expect(outcome.health!.status).toBe('Degraded');
    expect(outcome.health!.kill_switches).toEqual([]);
  });

  it('a RobotHealthCritical without any kill switch latches nothing by itself', () => {
    const source = ROVER.replace(/kill_switch HardStop[^\n]*\n/, '').replace('on Critical { enter safe_mode; }', 'on Critical { notify crew; }');
    const outcome = runProgram(parseProgram(source, 'r.sd'), {
      injection: () => ({ faults: [{ fault: 'RobotHealthCritical', source: 'inject_health_faults' }], policy: null, failure: null }),
    });
    expect(outcome.health!.kill_switches).toEqual([]);
    expect(outcome.state.emergency_stop).toBe(false);
  });

  it('is deterministic', () => {
    const a = simulate({ injectHealthFaults: true, injectFailure: 'gps' });
    const b = simulate({ injectHealthFaults: true, injectFailure: 'gps' });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });
});

describe('inject failure', () => {
  it('gps injects GPSDegraded and runs the recovery policy `on gps.*` as recovery_* frames', () => {
    const outcome = runProgram(program(), { injection: injectionPlan({ healthFaults: false, failure: 'gps', config: null }) });
    expect(outcome.health!.injected.map((f) => f.fault)).toEqual(['GPSDegraded']);
    expect(outcome.health!.recovery.map((r) => [r.condition, r.action, r.executed])).toEqual([
      ['gps.lost', 'switch_to lidar_localization', false],
      ['gps.lost', 'reduce_speed 0.4m/s', true],
      ['gps.lost', 'enter degraded', true],
    ]);
    const recovery = outcome.frames.filter((f) => f.event.startsWith('recovery_'));
    expect(recovery.map((f) => f.event)).toEqual(['recovery_triggered', 'recovery_action', 'recovery_action', 'recovery_action']);
    expect(recovery[0]!.payload).toEqual({ robot: 'Rover', failure: 'gps', policy: 'RoverRecovery', condition: 'gps.lost' });
    const fault = outcome.frames.find((f) => f.event === 'health_fault_injected')!;
    expect(fault.payload['failure']).toBe('gps');
  });

  it('camera takes the camera offline; no recovery policy matches', () => {
    const outcome = runProgram(program(), { injection: injectionPlan({ healthFaults: false, failure: 'camera', config: null }) });
    expect(outcome.health!.injected.map((f) => [f.fault, f.effect])).toEqual([['CameraOffline', 'sensor_offline']]);
    expect(outcome.health!.recovery).toEqual([]);
  });
});

describe('recorded injected runs replay deterministically', () => {
  it('re-injects the faults named by the trace frames', () => {
    const dir = tmpDir();
    const file = path.join(dir, 'rover.sd');
    fs.writeFileSync(file, ROVER);
    const sim = simulateProgram(parseProgram(ROVER, file), { file, execute: true, recordTrace: true, injectFailure: 'gps' }) as ExecutedSimulation;
    const trace = readTrace(sim.trace_path!);
    const plan = injectionPlanFromFrames(trace.frames)!;
    expect(plan(parseProgram(ROVER, file).robots[0]!)).toMatchObject({ faults: [{ fault: 'GPSDegraded', source: 'inject_failure' }], failure: 'gps' });
    const replay = verifyDeterministic(sim.trace_path!);
    expect(replay.verification).toEqual({ ok: true, matched: trace.frames.length, mismatches: [] });
  });

  it('a trace without injection frames has no plan', () => {
    expect(injectionPlanFromFrames([{ event: 'behavior_tick', payload: {} }])).toBeNull();
  });
});

describe('readiness with a runtime health outcome', () => {
  it('folds injected statuses into the Health factor and the issues', () => {
    const p = program();
    const base = evaluateReadiness(p, { config: null });
    const healthScore = (r: typeof base) => r.score.factors.find((f) => f.factor === 'Health')!.score;
    expect(healthScore(base)).toBe(85); // no health_check: Unknown
    const degraded = evaluateReadiness(p, {
      config: null,
      runtimeHealth: { executed: true, status: 'Degraded', injected: [{ robot: 'Rover', fault: 'GPSDegraded', status: 'Degraded' }], emergency_stop: false, error: null },
    });
    expect(healthScore(degraded)).toBe(70);
    expect(degraded.issues).toContainEqual(expect.objectContaining({ factor: 'Health', severity: 'Medium', message: "Injected fault GPSDegraded on robot 'Rover': Degraded" }));
    expect(degraded.runtime?.status).toBe('Degraded');
    const critical = evaluateReadiness(p, {
      config: null,
      runtimeHealth: { executed: true, status: 'Critical', injected: [{ robot: 'Rover', fault: 'RobotHealthCritical', status: 'Critical' }], emergency_stop: true, error: null },
    });
    expect(healthScore(critical)).toBe(30);
    expect(critical.issues).toContainEqual(expect.objectContaining({ factor: 'Health', severity: 'High' }));
    expect(critical.mission_ready).toBe(false);
    // A healthy run leaves the static health alone; the report says a runtime ran.
    const healthy = evaluateReadiness(p, { config: null, runtimeHealth: { executed: true, status: 'Healthy', injected: [], emergency_stop: false, error: null } });
    expect(healthScore(healthy)).toBe(85);
    expect(healthy.runtime?.executed).toBe(true);
    expect(base).not.toHaveProperty('runtime');
  });
});

describe('engine: REST flags', () => {
  const engineFor = (dir: string) =>
    new ProgramEngine({ projectRoot: dir, config: null, programPath: null, stateDir: path.join(dir, 'state'), decisions: NO_DECISION_SETTINGS, confineToRoot: true, cwd: dir });

  it('REST readiness ignores include_runtime and inject_health_faults (docs/program-language.md §8); the CLI method folds them in', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'rover.sd'), ROVER);
    const engine = engineFor(dir);
    const plain = engine.readiness({ file: 'rover.sd' });
    expect(engine.readiness({ file: 'rover.sd', include_runtime: true, inject_health_faults: true })).toEqual(plain);
    const runtime = engine.readinessWithRuntime({ file: 'rover.sd', include_runtime: true, inject_health_faults: true });
    expect(runtime.report.runtime).toMatchObject({ executed: true, status: 'Critical', emergency_stop: true });
    expect(runtime.report.score.factors.find((f) => f.factor === 'Health')!.score).toBe(30);
  });

  it('REST simulation honours inject_health_faults; the CLI-only fields stay out of it', () => {
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'rover.sd'), ROVER);
    const engine = engineFor(dir);
    const sim = engine.simulate({ file: 'rover.sd', execute: true, inject_health_faults: true }).simulation as ExecutedSimulation;
    expect(sim.result.health!.status).toBe('Critical');
    const local = engine.simulateLocal({ file: 'rover.sd', execute: true, max_loop_iterations: 10 }).simulation as ExecutedSimulation;
    expect(local.result.metrics['execution']).toMatchObject({ max_loop_iterations: 10, loop_iterations: 10 });
    expect(() => engine.simulateLocal({ file: 'rover.sd', execute: true, inject_failure: 'wifi' })).toThrow(/unknown failure 'wifi'/);
  });

  it('a runtime error makes the runtime health Failed', () => {
    const dir = tmpDir();
    const broken = ROVER.replace('behavior run() {', 'behavior run() requires lidar.read().nearest_distance > 50 m {');
    fs.writeFileSync(path.join(dir, 'rover.sd'), broken);
    const report = engineFor(dir).readinessWithRuntime({ file: 'rover.sd', include_runtime: true }).report;
    expect(report.runtime).toMatchObject({ executed: false, status: 'Failed' });
    expect(report.runtime!.error).toMatch(/requires contract failed/);
    expect(report.issues).toContainEqual(expect.objectContaining({ factor: 'Health', severity: 'High' }));
  });
});
