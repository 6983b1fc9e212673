import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { parseProgram } from '../../../agent/programs/language/index.js';
import {
  TraceSourceNotFoundError,
  compareFrames,
  inspectTrace,
  playbackTrace,
  replayTrace,
  verifyDeterministic,
} from '../../../agent/programs/runtime/replay.js';
import { defaultTracePath, simulateProgram, type ExecutedSimulation } from '../../../agent/programs/runtime/simulate.js';
import { readTrace, type TraceFile } from '../../../agent/programs/runtime/trace-file.js';

const dirs: string[] = [];
function tmpDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-sim-')));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const SCOUT = `
robot Scout {
    sensor lidar: Lidar on "/dev/lidar";
    sensor gps: GPS on "/dev/gps";
    actuator wheels: DifferentialDrive;
    topic status: Status publish on "/scout/status";
    safety {
        max_speed = 1.0 m/s;
        stop_if lidar.read().nearest_distance < 0.35 m;
    }
    mission Sweep { duration: 30 min; sweep; }
    mode normal { }
    behavior run() {
        loop every 100ms {
            wheels.drive(linear: 1.5 m/s, angular: 0.0 rad/s);
            publish status with lidar.read().nearest_distance;
        }
    }
}
decision_tree Near reflex {
    version = "1.0.0";
    when lidar.nearest_distance < 0.9 m { slow_down; }
}
decision_tree NoFix local {
    when gps.fix_quality == 0 { hold_position; }
}
`;

function writeProgram(dir: string, name: string, source: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, source);
  return file;
}

function simulateFile(file: string, options: { recordTrace?: boolean; decisionTrace?: boolean; traceOut?: string } = {}): ExecutedSimulation {
  const program = parseProgram(fs.readFileSync(file, 'utf8'), file);
  return simulateProgram(program, { file, execute: true, ...options }) as ExecutedSimulation;
}

describe('simulateProgram', () => {
  it('plans without executing by default', () => {
    const program = parseProgram(fs.readFileSync('demo/programs/patrol.sd', 'utf8'), 'demo/programs/patrol.sd');
    expect(simulateProgram(program, { file: 'demo/programs/patrol.sd' })).toEqual({ robot_count: 1, dry_run: true, status: 'planned' });
  });

  it('runs demo/programs/patrol.sd: 20 ticks of sweep(), clamped and logged', () => {
    const dir = tmpDir();
    const file = writeProgram(dir, 'patrol.sd', fs.readFileSync('demo/programs/patrol.sd', 'utf8'));
    const sim = simulateFile(file);
    expect(Object.keys(sim)).toEqual(['dry_run', 'status', 'event_count', 'log_count', 'has_trace', 'trace_path', 'decision_trace', 'result']);
    expect(sim).toMatchObject({ dry_run: false, status: 'completed', event_count: 40, log_count: 0, has_trace: false, trace_path: null, decision_trace: false });
    expect(Object.keys(sim.result)).toEqual(['state', 'events', 'logs', 'metrics', 'mission_trace', 'twin_replay', 'path']);
    // The trajectory: one pose per frame with a state, from the origin to the final pose (docs/program-language.md §16).
    expect(sim.result.path).toHaveLength(41);
    expect(sim.result.path[0]).toEqual({ sim_time_ms: 0, x: 0, y: 0, theta: 0 });
    const last = sim.result.path[sim.result.path.length - 1]!;
    expect({ x: last.x, y: last.y, theta: last.theta }).toEqual({ x: sim.result.state.pose.x, y: sim.result.state.pose.y, theta: sim.result.state.pose.theta });
    expect(sim.result.path.every((p, i, all) => i === 0 || p.sim_time_ms >= all[i - 1]!.sim_time_ms)).toBe(true);
    expect(sim.result.events.slice(0, 2)).toEqual(['drive(0.90 m/s, 0.00 rad/s)', 'publish(/sentinel/status, PatrolStatus)']);
    expect(sim.result.events.filter((e) => e.startsWith('drive'))).toHaveLength(20);
    expect(Object.keys(sim.result.metrics)).toEqual(['tasks', 'triggers', 'pipelines', 'watchdogs', 'topics', 'providers', 'scheduler', 'execution', 'replay_frames']);
    expect(sim.result.metrics['replay_frames']).toBe(41);
    expect(sim.result.metrics['scheduler']).toEqual({ multiplexed_tasks: 0, scheduler_ticks: 0, base_tick_ms: 0, emergency_stops: 0 });
    expect(sim.result.state.emergency_stop).toBe(false);
    expect(sim.result.mission_trace).toMatchObject({ mission: 'Patrol', status: 'completed' });
    expect(sim.result.twin_replay).toMatchObject({ twin: 'sentinel_twin', robot: 'Sentinel', mirror: ['wheels'] });
    expect(fs.existsSync(path.join(dir, 'patrol.trace'))).toBe(false);
  });

  it('runs demo/programs/dock.sd under the multiplexed scheduler', () => {
    const sim = simulateFile(path.resolve('demo/programs/dock.sd'));
    expect(sim.result.metrics['scheduler']).toEqual({ multiplexed_tasks: 2, scheduler_ticks: 20, base_tick_ms: 50, emergency_stops: 0 });
    expect(sim.result.events.filter((e) => e === 'stop()')).toHaveLength(20);
    expect(sim.result.events).toContain('publish(/dockhand/state, DockState)');
    expect(sim.result.mission_trace).toBeNull();
  });

  it('records the trace next to the program with decisions, or at traceOut', () => {
    const dir = tmpDir();
    const file = writeProgram(dir, 'scout.sd', SCOUT);
    const sim = simulateFile(file, { recordTrace: true });
    expect(sim.has_trace).toBe(true);
    expect(sim.trace_path).toBe(path.join(dir, 'scout.trace'));
    expect(sim.decision_trace).toBe(true);
    const trace = readTrace(sim.trace_path!);
    expect(trace).toMatchObject({ version: 2, source: 'scout.sd', deterministic: true });
    expect(trace.frames[0]).toMatchObject({ sim_time_ms: 0, event: 'mode_enter', payload: { mode: 'normal' } });
    const decisions = trace.frames.filter((f) => f.event === 'decision_tree_eval');
    expect(decisions.map((f) => (f.payload as { evidence: { tree: string } }).evidence.tree)).toEqual(['Near', 'NoFix']);
    // Clamped to max_speed 1.0; the stop_if latches at 1500 ms (x = 1.4, 0.3 m from obstacle 1).
    expect(sim.result.events[0]).toBe('drive(1.00 m/s, 0.00 rad/s)');
    expect(sim.result.state).toMatchObject({ emergency_stop: true, velocity: { linear: 0, angular: 0 } });
    expect(decisions[1]!.sim_time_ms).toBe(1500);
    expect(sim.result.metrics['replay_frames']).toBe(trace.frames.length);

    const out = path.join(dir, 'runs', 'first.trace');
    const again = simulateFile(file, { recordTrace: true, traceOut: out });
    expect(again.trace_path).toBe(out);
    expect(readTrace(out).source).toBe('../scout.sd');
    expect(defaultTracePath('a/b.sd')).toBe('a/b.trace');
  });
});

describe('replay', () => {
  function recorded(): { dir: string; tracePath: string; trace: TraceFile } {
    const dir = tmpDir();
    const file = writeProgram(dir, 'scout.sd', SCOUT);
    const sim = simulateFile(file, { recordTrace: true });
    return { dir, tracePath: sim.trace_path!, trace: readTrace(sim.trace_path!) };
  }

  it('inspects a trace', () => {
    const { tracePath, trace } = recorded();
    expect(replayTrace(tracePath)).toEqual({ source: 'scout.sd', frame_count: trace.frames.length, deterministic: true, loaded: true });
    expect(inspectTrace(tracePath).frame_count).toBe(trace.frames.length);
  });

  it('re-runs the source and matches frame by frame', () => {
    const { dir, tracePath, trace } = recorded();
    // The source is stored relative to the trace; it is found beside the trace, not in the cwd.
    const result = replayTrace(tracePath, { deterministic: true });
    expect(result).toEqual({
      mode: 'deterministic',
      source: path.join(dir, 'scout.sd'),
      frame_count: trace.frames.length,
      verification: { ok: true, matched: trace.frames.length, mismatches: [] },
      loaded: true,
    });
  });

  it('reports tampered events, shifted times and frame count differences', () => {
    const { tracePath, trace } = recorded();
    const frames = trace.frames.map((f) => ({ ...f }));
    frames[3] = { ...frames[3]!, event: 'pipeline_run' };
    frames[4] = { ...frames[4]!, sim_time_ms: frames[4]!.sim_time_ms + 0.5 };
    frames[5] = { ...frames[5]!, sim_time_ms: frames[5]!.sim_time_ms + 0.0005 };
    frames.pop();
    fs.writeFileSync(tracePath, JSON.stringify({ ...trace, frames }));
    const result = verifyDeterministic(tracePath, {});
    const n = trace.frames.length;
    expect(result.verification.ok).toBe(false);
    expect(result.verification.matched).toBe(n - 1);
    expect(result.verification.mismatches).toEqual([
      `frame 3: expected event pipeline_run at ${trace.frames[3]!.sim_time_ms}ms, got ${trace.frames[3]!.event} at ${trace.frames[3]!.sim_time_ms}ms`,
      `frame 4: ${trace.frames[4]!.event} expected at ${trace.frames[4]!.sim_time_ms + 0.5}ms, got ${trace.frames[4]!.sim_time_ms}ms`,
      `frame count mismatch: expected ${n - 1}, got ${n}`,
    ]);
  });

  it('compares from an offset', () => {
    const { tracePath, trace } = recorded();
    const result = verifyDeterministic(tracePath, { from: 'T+00:01' });
    const expected = trace.frames.filter((f) => f.sim_time_ms >= 1000).length;
    expect(result.frame_count).toBe(expected);
    expect(result.verification).toEqual({ ok: true, matched: expected, mismatches: [] });
  });

  it('uses an injected program loader and reports a missing source', () => {
    const { dir, tracePath } = recorded();
    const seen: string[] = [];
    verifyDeterministic(tracePath, {
      loadProgram: (file) => {
        seen.push(file);
        return parseProgram(fs.readFileSync(file, 'utf8'), file);
      },
    });
    expect(seen).toEqual([path.join(dir, 'scout.sd')]);
    fs.rmSync(path.join(dir, 'scout.sd'));
    expect(() => verifyDeterministic(tracePath, {})).toThrow(TraceSourceNotFoundError);
    expect(() => verifyDeterministic(tracePath, {})).toThrow('trace source not found: scout.sd');
  });

  it('plays states back onto a fresh simulator (playback wins over deterministic)', () => {
    const { tracePath, trace } = recorded();
    const result = replayTrace(tracePath, { playback: true, deterministic: true });
    const last = trace.frames[trace.frames.length - 1]!;
    expect(result).toEqual({
      mode: 'playback',
      frames_applied: trace.frames.length,
      states_applied: trace.frames.length,
      final_pose: last.state!.pose,
      loaded: true,
    });
    const fromOneSecond = playbackTrace(tracePath, 1000);
    expect(fromOneSecond.replay.frames_applied).toBe(trace.frames.filter((f) => f.sim_time_ms >= 1000).length);
    expect(fromOneSecond.events[0]!.sim_time_ms).toBe(1000);
  });

  it('compareFrames needs equal names and times within 0.001 ms', () => {
    const frame = (event: string, t: number) => ({ sim_time_ms: t, event, payload: {}, state: null });
    expect(compareFrames([frame('a', 1)], [frame('a', 1.001)])).toEqual({ ok: true, matched: 1, mismatches: [] });
    expect(compareFrames([frame('a', 1)], [frame('a', 1.0021)]).ok).toBe(false);
    expect(compareFrames([], [frame('a', 1)])).toEqual({ ok: false, matched: 0, mismatches: ['frame count mismatch: expected 0, got 1'] });
  });
});

describe('decision trees under the scheduler', () => {
  const BUMPER = `
robot Bumper {
    sensor front_lidar: Lidar on "/dev/ttyUSB0";
    sensor imu: IMU on "/dev/ttyUSB1";
    actuator wheels: DifferentialDrive;
    topic trolley_count: TrolleyCount publish on "/carpark/bumper/count";
    safety { max_speed = 0.8 m/s; stop_if front_lidar.read().nearest_distance < 0.25 m; }
    task cruise high every 100ms deadline 30ms { wheels.drive(linear: 0.5 m/s, angular: 0.0 rad/s); }
    task count_trolleys low every 500ms { publish trolley_count with imu.read().yaw; }
}
decision_tree ShopperReflex reflex { version = "1.0.0"; when lidar.nearest_distance < 0.97 m { stop_drive; flash_beacon; } }
decision_tree TrolleyLineLocal local {
    when lidar.nearest_distance < 1.27 m { slow_to 0.2 m/s; }
    when gps.fix_quality == 0 { hold_position; }
}
decision_tree CarParkGroup group { when lidar.nearest_distance < 1.47 m { announce_presence; } }
`;

  it('fires group, local and reflex trees in turn as the obstacle nears, once each', () => {
    const dir = tmpDir();
    const file = writeProgram(dir, 'bumper.sd', BUMPER);
    const sim = simulateFile(file, { decisionTrace: true });
    expect(sim.result.metrics['scheduler']).toEqual({ multiplexed_tasks: 2, scheduler_ticks: 20, base_tick_ms: 100, emergency_stops: 0 });
    const tracePath = path.join(dir, 'bumper.trace');
    simulateFile(file, { recordTrace: true });
    const decisions = readTrace(tracePath).frames.filter((f) => f.event === 'decision_tree_eval');
    // x after tick k is 0.05·(k−1); obstacle 1's surface is 1.7 − x away.
    expect(decisions.map((f) => [f.sim_time_ms, (f.payload as { layer: string }).layer, (f.payload as { decision: string }).decision])).toEqual([
      [600, 'group_fleet', 'announce_presence'],
      [1000, 'local_entity', 'slow_to 0.2m/s'],
      [1600, 'reflex', 'stop_drive'],
    ]);
    expect((decisions[0]!.payload as { authority_scope: string }).authority_scope).toBe('fleet');
    expect(replayTrace(readTrace(tracePath), { mode: 'deterministic', traceFile: tracePath })).toMatchObject({
      mode: 'deterministic',
      verification: { ok: true, mismatches: [] },
    });
  });
});
