import { describe, expect, it } from 'vitest';

import { parseProgram } from '../../../agent/programs/language/index.js';
import { typeCheckProgram } from '../../../agent/programs/runtime/type-check.js';
import { runSource, typeError } from './program-source.js';

/**
 * `execute f(…);`, `call S(…);`, `spawn t(…);` on their own line (docs/program-language.md §4.1 "Forms added
 * in issue 18"): the keyword expression with its result discarded — same logs, same `spawn_run`
 * frames, same type errors as `let r = execute f(…);` — and spawned runs drain after the entry (§24.1 step 6).
 */
const run = (source: string, maxLoopIterations = 2) => runSource(source, maxLoopIterations);


const STATE_AT_REST = { pose: { x: 0, y: 0, theta: 0, z: 0 }, emergency_stop: false, active_mode: null };

describe('keyword statements at run time', () => {
  it('spawn t(…); queues the call and runs it after the entry as a spawn_run frame', () => {
    const outcome = run(`robot R {
      actuator wheels: DifferentialDrive;
      task beacon(n: Int) { print(n); }
      behavior main() {
        spawn beacon(1);
        spawn beacon(n: 2);
        print("entry done");
        wheels.stop();
      }
    }`);
    expect(outcome.events).toEqual(['spawn(beacon)', 'spawn(beacon)', 'stop()']);
    // The entry finishes first; the spawned runs follow in the order they were queued.
    expect(outcome.logs).toEqual(['entry done', '1', '2']);
    expect(outcome.frames).toEqual([
      { sim_time_ms: 0, event: 'spawn_run', payload: { task: 'beacon' }, state: { ...STATE_AT_REST, velocity: { linear: 0, angular: 0 } } },
      { sim_time_ms: 0, event: 'spawn_run', payload: { task: 'beacon' }, state: { ...STATE_AT_REST, velocity: { linear: 0, angular: 0 } } },
    ]);
  });

  it('execute f(…); logs action(name) and runs a declared behavior at once; a declared-only action gets a stand-in', () => {
    const outcome = run(`robot R {
      actuator wheels: DifferentialDrive;
      action navigate_to: NavigateGoal;
      behavior main() {
        execute dock("bay_3");
        execute navigate_to(goal: "bay_3");
        wheels.drive(linear: 0.2 m/s, angular: 0.0 rad/s);
      }
      behavior dock(goal: String) { print(goal); wheels.stop(); }
    }`);
    expect(outcome.events).toEqual(['action(dock)', 'stop()', 'action(navigate_to)', 'drive(0.20 m/s, 0.00 rad/s)']);
    expect(outcome.logs).toEqual(['bay_3']);
    expect(outcome.frames).toEqual([]);
  });

  it('call S(…); logs service(name) and runs a module function or returns a stand-in for a declared service', () => {
    const outcome = run(`fn reset(level: Int) -> Int { print(level); return level; }
      robot R {
        service GetBattery: BatteryState;
        behavior main() {
          call GetBattery();
          call reset(3);
        }
      }`);
    expect(outcome.events).toEqual(['service(GetBattery)', 'service(reset)']);
    expect(outcome.logs).toEqual(['3']);
  });

  it('the statement and the expression forms give the same events, logs and frames', () => {
    const program = (body: string) => `robot R {
      actuator wheels: DifferentialDrive;
      service GetBattery: BatteryState;
      task beacon() { wheels.stop(); }
      behavior main() { ${body} }
    }`;
    const statements = run(program('call GetBattery(); execute beacon(); spawn beacon();'));
    const expressions = run(program('let a = call GetBattery(); let b = execute beacon(); let c = spawn beacon();'));
    expect(statements.events).toEqual(['service(GetBattery)', 'action(beacon)', 'stop()', 'spawn(beacon)', 'stop()']);
    expect(expressions.events).toEqual(statements.events);
    expect(expressions.logs).toEqual(statements.logs);
    expect(expressions.frames).toEqual(statements.frames);
    expect(statements.frames.map((f) => f.event)).toEqual(['spawn_run']);
  });

  it('a spawn statement inside a loop queues one run per iteration, drained after the loop ends', () => {
    const outcome = run(`robot R {
      task ping() { print("ping"); }
      behavior main() { loop every 100ms { spawn ping(); } }
    }`);
    expect(outcome.frames.map((f) => [f.event, f.sim_time_ms, f.payload])).toEqual([
      ['behavior_tick', 100, { sim_time_ms: 100, interval_ms: 100, iteration: 1 }],
      ['behavior_tick', 200, { sim_time_ms: 200, interval_ms: 100, iteration: 2 }],
      ['spawn_run', 200, { task: 'ping' }],
      ['spawn_run', 200, { task: 'ping' }],
    ]);
    expect(outcome.logs).toEqual(['ping', 'ping']);
  });

  it('a keyword statement in a match arm runs like any other', () => {
    const outcome = run(`enum Phase { Idle, Busy }
      robot R {
        action dock: DockAction;
        behavior main() { let p = Phase.Busy; match p { Idle => call dock(), Busy => execute dock(), } }
      }`);
    expect(outcome.events).toEqual(['action(dock)']);
  });
});

describe('keyword statements in the type check', () => {
  it('the target must be declared, as in the expression form', () => {
    expect(typeError('robot R { behavior b() { execute nowhere(); } }')).toBe("type error: 'execute nowhere(…)' names nothing declared in behavior b (line 1, column 34)");
    expect(typeError('robot R { behavior b() { call Missing(); } }')).toBe("type error: 'call Missing(…)' names nothing declared in behavior b (line 1, column 31)");
    expect(typeError('robot R { behavior b() { spawn track_balls(); } }')).toBe("type error: 'spawn track_balls(…)' names nothing declared in behavior b (line 1, column 32)");
  });

  it('spawn needs a task, behavior or function', () => {
    expect(typeError('robot R { sensor lidar: Lidar; behavior b() { spawn lidar(); } }')).toBe(
      "type error: spawn needs a task, behavior or function, and 'lidar' is none in behavior b (line 1, column 53)",
    );
    expect(typeError('robot R { service Reset: Empty; behavior b() { spawn Reset(); } }')).toBe(
      "type error: spawn needs a task, behavior or function, and 'Reset' is none in behavior b (line 1, column 54)",
    );
  });

  it('arguments are checked', () => {
    expect(typeError('robot R { task t(n: Int) { print(n); } behavior b() { spawn t(missing); } }')).toBe(
      "type error: undefined identifier 'missing' in behavior b (line 1, column 63)",
    );
  });

  it('declared targets pass', () => {
    expect(() =>
      typeCheckProgram(parseProgram(`fn f() { print(1); }
        robot R { action dock: DockAction; service GetBattery: BatteryState; task t() { print(2); }
          behavior b() { spawn t(); spawn f(); execute dock(); call GetBattery(); execute t(); } }`, 'r.sd')),
    ).not.toThrow();
  });
});
