import { createHmac } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import type { DecisionTreeDecl, SafetyRule } from '../../../agent/programs/language/ast.js';
import { ProgramRuntimeError, runProgram } from '../../../agent/programs/runtime/interpreter.js';
import { loadSettings } from '../../../agent/settings/settings.js';
import {
  at,
  behavior,
  bin,
  drive,
  id,
  maxAngular,
  maxSpeed,
  method,
  num,
  program,
  reading,
  robot,
  stmt,
  stopIf,
  task,
} from './program-builder.js';

// Runs nobody configured: no decision tracing, unsigned envelopes (the settings' values are passed in).
const noEnv = {};

describe('loops and frames', () => {
  it('runs loop every D twenty times with absolute times per loop and behavior_tick frames', () => {
    const prog = program([
      robot('Rover', {
        modes: [{ name: 'normal', body: [], loc: at }],
        behaviors: [
          behavior('go', [
            stmt.loop(100, 'ms', [drive(0.4)]),
            stmt.loop(50, 'ms', [stmt.publish('status')]),
          ]),
        ],
      }),
    ]);
    const out = runProgram(prog, noEnv);
    const ticks = out.frames.filter((f) => f.event === 'behavior_tick');
    expect(ticks).toHaveLength(40);
    expect(ticks.slice(0, 20).map((f) => f.sim_time_ms)).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 100));
    // The second loop restarts at its own interval: absolute per loop, not cumulative.
    expect(ticks.slice(20).map((f) => f.sim_time_ms)).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 50));
    expect(ticks[2]!.payload).toEqual({ sim_time_ms: 300, interval_ms: 100, iteration: 3 });
    expect(out.frames[0]).toMatchObject({ sim_time_ms: 0, event: 'mode_enter', payload: { mode: 'normal' } });
    // Every interpreter frame carries the state, including the active mode.
    expect(out.frames.every((f) => f.state !== null && f.state.active_mode === 'normal')).toBe(true);
    // Drive starts in iteration 1 after the first tick: 19 ticks of 0.1 s at 0.4 m/s in loop 1,
    // then 20 more ticks of 0.05 s in loop 2 at the same velocity.
    expect(out.state.pose.x).toBeCloseTo(0.4 * 0.1 * 19 + 0.4 * 0.05 * 20, 10);
    expect(out.events.filter((e) => e === 'drive(0.40 m/s, 0.00 rad/s)')).toHaveLength(20);
    expect(out.events.filter((e) => e === 'publish(/rover/status, Status)')).toHaveLength(20);
    expect(out.frames.filter((f) => f.event === 'topic_publish')[0]!.payload).toEqual({ topic: 'status' });
    expect(out.metrics['execution']).toMatchObject({ loop_iterations: 40, behaviors_run: 1, sim_time_ms: 2000 });
  });

  it('honours the iteration budget', () => {
    const prog = program([robot('Rover', { behaviors: [behavior('go', [stmt.loop(1, 's', [drive(1)])])] })]);
    const out = runProgram(prog, { ...noEnv, maxLoopIterations: 10 });
    expect(out.frames.map((f) => f.sim_time_ms)).toEqual([1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000]);
    expect(out.state.pose.x).toBeCloseTo(9, 10);
  });

  it('reads sensors by type and branches on them', () => {
    const prog = program([
      robot('Rover', {
        behaviors: [
          behavior('go', [
            stmt.loop(100, 'ms', [
              stmt.let('scan', method('lidar', 'read')),
              stmt.if(bin('<', { kind: 'member', object: id('scan'), property: 'nearest_distance', loc: at }, num(1.6, 'm')), [drive(0.2, 0.5)], [drive(0.9)]),
            ]),
          ]),
        ],
      }),
    ]);
    const out = runProgram(prog, { ...noEnv, maxLoopIterations: 1 });
    // At the origin the nearest surface is obstacle 2 at 1.55 m.
    expect(out.events).toEqual(['drive(0.20 m/s, 0.50 rad/s)']);
  });
});

describe('safety', () => {
  it('clamps drive commands to max_speed and max_angular', () => {
    const prog = program([
      robot('Rover', { safety: [maxSpeed(1.0), maxAngular(0.5)], behaviors: [behavior('go', [drive(2, -3)])] }),
    ]);
    expect(runProgram(prog, noEnv).events).toEqual(['drive(1.00 m/s, -0.50 rad/s)']);
  });

  it('latches an emergency stop when stop_if holds before a motion call and blocks motion', () => {
    const prog = program([
      robot('Rover', {
        safety: [stopIf(bin('<', reading('lidar', 'nearest_distance'), num(0.35, 'm')), 'lidar . read ( ) . nearest_distance < 0.35m')],
        behaviors: [behavior('go', [stmt.loop(100, 'ms', [drive(1)])])],
      }),
    ]);
    const out = runProgram(prog, noEnv);
    // x after tick i is 0.1·(i−1); obstacle 1's surface is at 1.7, so at i = 15 (x = 1.4) it is 0.3 away.
    expect(out.frames).toHaveLength(15);
    expect(out.frames[14]!.sim_time_ms).toBe(1500);
    expect(out.events.filter((e) => e.startsWith('drive'))).toHaveLength(14);
    expect(out.events[out.events.length - 1]).toBe('emergency_stop()');
    expect(out.state.emergency_stop).toBe(true);
    expect(out.state.velocity).toEqual({ linear: 0, angular: 0 });
    expect(out.state.pose.x).toBeCloseTo(1.4, 10);
    expect(out.logs).toEqual(['emergency stop: stop_if lidar . read ( ) . nearest_distance < 0.35m']);
    expect((out.metrics['scheduler'] as Record<string, number>)['emergency_stops']).toBe(1);
  });

  it('blocks motion after an emergency_stop statement', () => {
    const prog = program([robot('Rover', { behaviors: [behavior('go', [stmt.estop(), drive(1), stmt.expr(method('wheels', 'stop'))])] })]);
    const out = runProgram(prog, noEnv);
    expect(out.events).toEqual(['emergency_stop()', 'stop()']);
    expect(out.state.emergency_stop).toBe(true);
  });

  it('caps speed inside a safety zone', () => {
    const zone: SafetyRule = { kind: 'zone', name: 'plate', shape: 'rect', center: [num(0), num(0)], size: [num(2), num(2)], text: 'zone plate rect at ( 0 , 0 ) size ( 2 , 2 )', loc: at };
    const prog = program([
      robot('Rover', { safety: [maxSpeed(1.2), zone], behaviors: [behavior('go', [drive(1)])] }),
    ]);
    expect(runProgram(prog, noEnv).events).toEqual(['drive(0.60 m/s, 0.00 rad/s)']);
  });
});

describe('scheduler', () => {
  it('multiplexes two tasks on the smallest interval in priority order', () => {
    const prog = program([
      robot('Rover', {
        topics: [
          { name: 'slow_t', type: 'S', direction: 'publish', channel: '/slow', qos: {}, loc: at },
          { name: 'fast_t', type: 'F', direction: 'publish', channel: '/fast', qos: {}, loc: at },
        ],
        tasks: [
          task('slow', 100, [stmt.publish('slow_t')], { deadline: { value: 4, unit: 'ms', text: '4ms' } }),
          task('fast', 50, [stmt.publish('fast_t')], { priority: 'high' }),
        ],
      }),
    ]);
    const out = runProgram(prog, noEnv);
    const ticks = out.frames.filter((f) => f.event === 'scheduler_tick');
    expect(ticks.map((f) => f.sim_time_ms)).toEqual(Array.from({ length: 20 }, (_, i) => (i + 1) * 50));
    expect(ticks[1]!.payload).toEqual({ sim_time_ms: 100, tick: 2, base_tick_ms: 50, tasks_run: ['fast', 'slow'] });
    expect(out.events.slice(0, 3)).toEqual(['publish(/fast, F)', 'publish(/fast, F)', 'publish(/slow, S)']);
    const metrics = out.metrics as { tasks: Record<string, Record<string, unknown>>; scheduler: unknown };
    expect(metrics.scheduler).toEqual({ multiplexed_tasks: 2, scheduler_ticks: 20, base_tick_ms: 50, emergency_stops: 0 });
    expect(metrics.tasks['fast']).toMatchObject({ runs: 20, interval_ms: 50, max_jitter_ms: 0, deadline_misses: 0, priority: 'high' });
    // slow runs after fast (5 ms modelled) and would finish at 10 ms: past its 4 ms deadline.
    expect(metrics.tasks['slow']).toMatchObject({ runs: 10, interval_ms: 100, max_jitter_ms: 5, deadline_misses: 10, deadline_ms: 4 });
    expect(Object.keys(metrics.tasks)).toEqual(['fast', 'slow']);
    expect(metrics.tasks['slow']!['last_duration_ms']).toBeGreaterThanOrEqual(5);
  });

  it('runs a single task as the entry loop and fires nothing else', () => {
    const prog = program([robot('Rover', { tasks: [task('only', 200, [drive(0.5)])] })]);
    const out = runProgram(prog, { ...noEnv, maxLoopIterations: 5 });
    expect(out.events).toHaveLength(5);
    expect(out.frames.filter((f) => f.event === 'scheduler_tick')).toHaveLength(0);
    expect((out.metrics['tasks'] as Record<string, { runs: number }>)['only']!.runs).toBe(5);
    expect(out.state.pose.x).toBeCloseTo(0.5 * 0.2 * 4, 10);
  });

  it('fires every-triggers of a trigger-only robot', () => {
    const prog = program([
      robot('Rover', { triggers: [{ kind: 'every', interval: { value: 250, unit: 'ms', text: '250ms' }, body: [stmt.publish('status')], loc: at }] }),
    ]);
    const out = runProgram(prog, { ...noEnv, maxLoopIterations: 4 });
    expect(out.frames.filter((f) => f.event === 'topic_publish').map((f) => f.sim_time_ms)).toEqual([250, 500, 750, 1000]);
    expect(out.metrics['triggers']).toEqual({ 'every:250ms': { fired: 4 } });
  });
});

describe('errors', () => {
  it('fails a requires contract with a runtime error', () => {
    const prog = program([robot('Rover', { behaviors: [behavior('go', [drive(1)], { requires: bin('>', num(1), num(2)) })] })]);
    expect(() => runProgram(prog, noEnv)).toThrow(ProgramRuntimeError);
    expect(() => runProgram(prog, noEnv)).toThrow(/^requires contract failed in behavior 'go': 1 > 2/);
  });

  it('fails an ensures contract after the body', () => {
    const prog = program([robot('Rover', { behaviors: [behavior('go', [stmt.ret(num(3))], { ensures: bin('==', id('result'), num(4)) })] })]);
    expect(() => runProgram(prog, noEnv)).toThrow(/ensures contract failed in behavior 'go'/);
  });

  it('rejects undefined identifiers before running', () => {
    const prog = program([robot('Rover', { behaviors: [behavior('go', [stmt.expr(method('wheelz', 'stop'))])] })]);
    let error: unknown;
    try {
      runProgram(prog, noEnv);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProgramRuntimeError);
    expect((error as ProgramRuntimeError).kind).toBe('type');
    expect((error as Error).message).toContain("type error: undefined identifier 'wheelz' in behavior go");
  });

  it('rejects a run_pipeline of an undeclared pipeline', () => {
    const prog = program([robot('Rover', { behaviors: [behavior('go', [{ kind: 'run_pipeline', pipeline: 'vision', loc: at }])] })]);
    expect(() => runProgram(prog, noEnv)).toThrow("type error: unknown pipeline 'vision' in behavior go");
  });

  it('logs failing verify rules after the body as warnings', () => {
    const prog = program([
      robot('Rover', {
        verify: [bin('>', reading('lidar', 'nearest_distance'), num(3, 'm')), bin('>', reading('lidar', 'nearest_distance'), num(1, 'm'))],
        behaviors: [behavior('go', [drive(0.1)])],
      }),
    ]);
    expect(runProgram(prog, noEnv).logs).toEqual(['verify failed: lidar.read().nearest_distance > 3m']);
  });

  it('refuses to execute a raw AI proposal', () => {
    const prog = program([
      robot('Rover', {
        aiModels: [{ name: 'planner', type: 'LLM', config: {}, loc: at }],
        behaviors: [behavior('go', [stmt.let('p', method('planner', 'infer')), stmt.expr(method('wheels', 'execute', [id('p')]))])],
      }),
    ]);
    expect(() => runProgram(prog, noEnv)).toThrow(/must pass safety.validate\(\) before execute/);
    const validated = program([
      robot('Rover', {
        aiModels: [{ name: 'planner', type: 'LLM', config: {}, loc: at }],
        behaviors: [
          behavior('go', [
            stmt.let('p', method('planner', 'infer')),
            stmt.expr(method('wheels', 'execute', [method('safety', 'validate', [id('p')])])),
          ]),
        ],
      }),
    ]);
    const out = runProgram(validated, noEnv);
    // The mock's forward proposal at the start pose (nearest surface 1.553 m): min(0.8, 0.45 × 1.553).
    expect(out.events).toEqual(['drive(0.70 m/s, 0.00 rad/s)']);
    expect(out.frames[0]).toMatchObject({ event: 'provider_call', state: null, payload: { provider_key: 'mock', module: 'planner' } });
  });
});

describe('decision trees', () => {
  const trees: DecisionTreeDecl[] = [
    { name: 'AisleReflex', layer: 'reflex', version: '1.0.0', rules: [{ condition: 'lidar . nearest_distance < 1.6m', actions: ['stop_drive', 'sound_horn'], loc: at }], loc: at },
    { name: 'YardFix', layer: 'local', version: '1.0.0', rules: [{ condition: 'gps.fix_quality == 0', actions: ['switch_to lidar_localization'], loc: at }], loc: at },
  ];
  const prog = program(
    [robot('Rover', { missions: [{ name: 'Patrol', durationHours: 1, requiredCapabilities: [], approvals: [], steps: [], loc: at }], behaviors: [behavior('go', [stmt.loop(100, 'ms', [stmt.estop()])])] })],
    { decisionTrees: trees },
  );

  it('records a v3 decision frame; the reflex layer wins and the local one is rejected', () => {
    const out = runProgram(prog, { decisionTrace: true, signingKey: 'k1' });
    const decisions = out.frames.filter((f) => f.event === 'decision_tree_eval');
    expect(decisions).toHaveLength(1);
    const frame = decisions[0]!;
    expect(frame.sim_time_ms).toBe(100);
    expect(frame.state).toMatchObject({ emergency_stop: true });
    const p = frame.payload as Record<string, any>;
    expect(p).toMatchObject({
      version: 3,
      decision_id: 'd-100-decision_tree_eval',
      mission: 'Patrol',
      decision: 'stop_drive',
      layer: 'reflex',
      entity_id: 'Rover',
      authority_scope: 'local',
      policy_version: '1.0.0',
      capability_validation: { passed: true },
      trust_validation: { passed: true },
      safety_checks: [{ rule: 'distributed_decision', passed: true }],
      escalation_path: ['reflex', 'local_entity', 'group_fleet', 'control_center'],
      input_signals: ['lidar.nearest_distance'],
    });
    expect(p.evidence.signals['lidar.nearest_distance']).toBeCloseTo(1.5527756377319946, 12);
    expect(p.evidence).toMatchObject({ tree: 'AisleReflex', condition: 'lidar . nearest_distance < 1.6m', actions: ['stop_drive', 'sound_horn'], central_connected: true, offline_minutes: 0 });
    expect(p.tree_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(p.policy_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(p.tree_hash).not.toBe(p.policy_hash);
    expect(p.rejected_alternatives).toEqual([
      { tree: 'YardFix', condition: 'gps.fix_quality == 0', decision: 'switch_to lidar_localization', layer: 'local_entity', reason: 'lower precedence than reflex' },
    ]);
    expect(p.alternatives_considered.map((a: { tree: string }) => a.tree)).toEqual(['AisleReflex', 'YardFix']);
    const envelope = p.security_envelope;
    expect(envelope.nonce).toBe('n-100-1');
    expect(JSON.parse(envelope.signing_payload)).toMatchObject({ decision_id: 'd-100-decision_tree_eval', entity_id: 'Rover', nonce: 'n-100-1' });
    expect(envelope.signature).toBe(createHmac('sha256', 'k1').update(envelope.signing_payload).digest('hex'));
    expect(p.audit_record).toMatchObject({ id: envelope.audit_record_id, decision_id: 'd-100-decision_tree_eval', tree: 'AisleReflex' });
  });

  it('signs only with a key, traces only when asked, and honours SVC_DECISION_TRACE', () => {
    const unsigned = runProgram(prog, { decisionTrace: true });
    const envelope = (unsigned.frames.find((f) => f.event === 'decision_tree_eval')!.payload as Record<string, any>).security_envelope;
    expect('signature' in envelope).toBe(false);
    expect(runProgram(prog, {}).frames.some((f) => f.event === 'decision_tree_eval')).toBe(false);
    // SVC_DECISION_TRACE is parsed by loadSettings and handed to the run (agent/settings).
    const traced = (value: string) => runProgram(prog, { decisionTrace: loadSettings({ SVC_DECISION_TRACE: value }, '/').decisions.trace });
    expect(traced('yes').frames.some((f) => f.event === 'decision_tree_eval')).toBe(true);
    expect(traced('off').frames.some((f) => f.event === 'decision_tree_eval')).toBe(false);
  });
});

describe('robots, triggers and watchdogs', () => {
  it('keeps only the last robot\'s frames in the trace but every robot\'s events', () => {
    const prog = program([
      robot('First', { behaviors: [behavior('go', [stmt.loop(100, 'ms', [stmt.publish('status')])])] }),
      robot('Second', { missions: [{ name: 'Tidy', durationHours: null, requiredCapabilities: [], approvals: [], steps: ['sweep'], loc: at }], behaviors: [behavior('go', [drive(0.3), stmt.publish('status')])] }),
    ]);
    const out = runProgram(prog, noEnv);
    expect(out.frames).toHaveLength(1);
    expect(out.frames[0]).toMatchObject({ sim_time_ms: 0, event: 'topic_publish' });
    expect(out.events.filter((e) => e.startsWith('publish'))).toHaveLength(21);
    expect(out.events[20]).toBe('drive(0.30 m/s, 0.00 rad/s)');
    expect(out.state.velocity.linear).toBe(0.3);
    expect(out.missionTrace).toEqual({
      mission: 'Tidy',
      robots: ['First', 'Second'],
      steps: ['sweep'],
      status: 'completed',
      events: [
        { sim_time_ms: 0, robot: 'First', event: 'mission_started' },
        { sim_time_ms: 0, robot: 'Second', event: 'mission_started' },
        { sim_time_ms: 0, robot: 'Second', event: 'mission_completed' },
      ],
    });
    expect((out.metrics['execution'] as Record<string, number>)['robots']).toBe(2);
  });

  it('runs on-emergency_stop handlers when the stop latches', () => {
    const prog = program([
      robot('Rover', {
        triggers: [{ kind: 'on', event: 'emergency_stop', body: [stmt.publish('status')], loc: at }],
        behaviors: [behavior('go', [stmt.estop(), stmt.estop()])],
      }),
    ]);
    const out = runProgram(prog, noEnv);
    expect(out.events).toEqual(['emergency_stop()', 'publish(/rover/status, Status)']);
    expect(out.metrics['triggers']).toEqual({ 'on:emergency_stop': { fired: 1 } });
  });

  it('fires when-triggers on the rising edge only', () => {
    const prog = program([
      robot('Rover', {
        triggers: [
          { kind: 'every', interval: { value: 100, unit: 'ms', text: '100ms' }, body: [drive(1)], loc: at },
          { kind: 'when', condition: bin('<', reading('lidar', 'nearest_distance'), num(0.95, 'm')), body: [stmt.publish('status')], loc: at },
        ],
      }),
    ]);
    const out = runProgram(prog, noEnv);
    // x at tick k is 0.1·(k−1): obstacle 1's surface is 0.9 m away at tick 9 and nearer after.
    expect(out.frames.filter((f) => f.event === 'topic_publish').map((f) => f.sim_time_ms)).toEqual([900]);
    expect(out.metrics['triggers']).toEqual({
      'every:100ms': { fired: 20 },
      'when:lidar.read().nearest_distance < 0.95m': { fired: 1 },
    });
  });

  it('times out a watchdog that no task feeds, runs its body and recovery handlers', () => {
    const never = { kind: 'bool' as const, value: false, loc: at };
    const prog = program([
      robot('Rover', {
        modes: [{ name: 'degraded', body: [], loc: at }],
        tasks: [task('a', 100, [drive(1)], { requires: never }), task('b', 200, [drive(1)], { requires: never })],
        watchdogs: [{ name: 'feed', timeout: { value: 250, unit: 'ms', text: '250ms' }, body: [stmt.enter('degraded')], loc: at }],
        triggers: [{ kind: 'recover', failure: 'feed', body: [stmt.publish('status')], loc: at }],
      }),
    ]);
    const out = runProgram(prog, noEnv);
    const times = [300, 600, 900, 1200, 1500, 1800];
    expect(out.frames.filter((f) => f.event === 'watchdog_timeout').map((f) => f.sim_time_ms)).toEqual(times);
    expect(out.frames.filter((f) => f.event === 'watchdog_timeout')[0]!.payload).toEqual({ watchdog: 'feed', timeout_ms: 250 });
    expect(out.frames.filter((f) => f.event === 'mode_enter').map((f) => f.sim_time_ms)).toEqual(times);
    expect(out.frames.filter((f) => f.event === 'topic_publish')).toHaveLength(6);
    expect(out.activeMode).toBe('degraded');
    expect(out.metrics['watchdogs']).toEqual({ feed: { timeout_ms: 250, timeouts: 6 } });
    const tasks = out.metrics['tasks'] as Record<string, { runs: number; skipped: number }>;
    expect([tasks['a']!.runs, tasks['a']!.skipped, tasks['b']!.runs, tasks['b']!.skipped]).toEqual([0, 20, 0, 10]);
    expect(out.events.some((e) => e.startsWith('drive'))).toBe(false);
  });
});
