import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { parseProgram } from '../../../agent/programs/language/index.js';
import { runProgram } from '../../../agent/programs/runtime/interpreter.js';
import { typeCheckProgram } from '../../../agent/programs/runtime/type-check.js';
import { runSource, typeError } from './program-source.js';

/**
 * Type check and runtime of the issue-18 forms (docs/program-language.md §4.1 "Forms added in issue 18"),
 * on our fixture programs (test/programs/language/forms) and small inline programs for the bad cases.
 */
const FORMS = path.join(__dirname, '../language/forms');
const fixture = (name: string) => parseProgram(fs.readFileSync(path.join(FORMS, name), 'utf8'), name);
const run = (source: string, maxLoopIterations = 3) => runSource(source, maxLoopIterations);


describe('type check: good programs', () => {
  it.each(['secure_topic.sd', 'topic_block.sd', 'sensor_driver.sd', 'let_annotated.sd', 'keyword_expressions.sd', 'generic_types.sd'])(
    '%s type-checks',
    (name) => {
      expect(() => typeCheckProgram(fixture(name))).not.toThrow();
    },
  );
});

describe('type check: bad programs', () => {
  it('a let annotation is used: a literal of another type is rejected, at the let and at a later assignment', () => {
    expect(typeError('robot R { behavior b() { let n: Int = "three"; } }')).toBe("type error: 'n' is declared Int but is given a string in behavior b (line 1, column 39)");
    expect(typeError('robot R { behavior b() { let ok: Bool; ok = 1; } }')).toBe("type error: 'ok' is declared Bool but is given a number in behavior b (line 1, column 45)");
  });

  it('a variable declared without initializer is in scope; an undeclared one is not', () => {
    expect(() => typeCheckProgram(parseProgram('robot R { behavior b() { let s: String; s = "x"; } }', 'r.sd'))).not.toThrow();
    expect(typeError('robot R { behavior b() { s = "x"; } }')).toBe("type error: undefined identifier 's' in behavior b (line 1, column 26)");
  });

  it('keyword expressions must name something declared; spawn needs something runnable', () => {
    expect(typeError('robot R { behavior b() { let r = execute nowhere(); } }')).toBe("type error: 'execute nowhere(…)' names nothing declared in behavior b (line 1, column 42)");
    expect(typeError('robot R { behavior b() { let r = call Missing(); } }')).toBe("type error: 'call Missing(…)' names nothing declared in behavior b (line 1, column 39)");
    expect(typeError('robot R { sensor lidar: Lidar; behavior b() { let h = spawn lidar(); } }')).toBe(
      "type error: spawn needs a task, behavior or function, and 'lidar' is none in behavior b (line 1, column 61)",
    );
  });

  it('a generic struct literal must match a declared struct and its type parameters', () => {
    expect(typeError('robot R { behavior b() { let s = Sample<Float> { value: 1.5 }; } }')).toBe(
      "type error: generic struct literal 'Sample<Float>' names no declared struct in behavior b (line 1, column 34)",
    );
    expect(typeError('struct Pair<A, B> { a: A, b: B }\nrobot R { behavior b() { let s = Pair<Int> { a: 1 }; } }')).toBe(
      "type error: struct 'Pair' takes 2 type arguments, but 'Pair<Int>' gives 1 in behavior b (line 2, column 34)",
    );
    expect(typeError('struct Plain { a: Int }\nrobot R { behavior b() { let s = Plain<Int> { a: 1 }; } }')).toBe(
      "type error: struct 'Plain' takes no type arguments, but 'Plain<Int>' gives 1 in behavior b (line 2, column 34)",
    );
  });

  it('dyn must name a declared trait', () => {
    expect(typeError('fn f(x: dyn Reporter) { }')).toBe("type error: 'dyn Reporter' in fn f names no declared trait (declare 'trait Reporter { … }') (line 1, column 1)");
    expect(typeError('robot R { behavior b() { let x: dyn Speaker; } }')).toBe(
      "type error: 'dyn Speaker' in let x names no declared trait (declare 'trait Speaker { … }') (line 1, column 26)",
    );
  });

  it('a task that returns a value must declare its return type', () => {
    expect(typeError('robot R {\n  task t every 1s { return 3; }\n}')).toBe("type error: task 't' returns a value but declares no return type (write 'task t() -> Type') (line 2, column 21)");
  });
});

describe('runtime', () => {
  it('let without initializer is void until assigned', () => {
    const outcome = run('robot R { behavior b() { let s: String; print(s); s = "set"; print(s); } }');
    expect(outcome.logs).toEqual(['void', 'set']);
  });

  it('execute runs a declared behavior and yields its result; call of a declared-only service yields a stand-in response', () => {
    const outcome = run(`robot R {
      actuator wheels: DifferentialDrive;
      service GetBattery: BatteryState;
      behavior main() {
        let r = execute dock("bay_3");
        let b = call GetBattery();
        let nav = execute navigate_to();
        print(r); print(b.service); print(b.success); print(nav.status);
      }
      behavior dock(goal: String) { wheels.drive(linear: 0.2 m/s, angular: 0.0 rad/s); return goal; }
      action navigate_to: NavigateGoal;
    }`);
    expect(outcome.events).toEqual(['action(dock)', 'drive(0.20 m/s, 0.00 rad/s)', 'service(GetBattery)', 'action(navigate_to)']);
    expect(outcome.logs).toEqual(['bay_3', 'GetBattery', 'true', 'succeeded']);
  });

  it('spawn queues the task, yields a handle and runs it after the entry, in order', () => {
    const outcome = run(`robot R {
      actuator wheels: DifferentialDrive;
      task beacon(n: Int) { print(n); }
      behavior main() {
        let h = spawn beacon(1);
        let k = spawn beacon(2);
        print(h.task); print(k.id);
        wheels.stop();
      }
    }`);
    expect(outcome.events).toEqual(['spawn(beacon)', 'spawn(beacon)', 'stop()']);
    expect(outcome.logs).toEqual(['beacon', '2', '1', '2']);
    expect(outcome.frames.filter((f) => f.event === 'spawn_run').map((f) => f.payload)).toEqual([{ task: 'beacon' }, { task: 'beacon' }]);
  });

  it('a task with a return type runs on demand only and returns its value', () => {
    const outcome = runProgram(fixture('generic_types.sd'), { maxLoopIterations: 2 });
    // `sample` is the only periodic task, so it is the entry; Monitor runs once per sample via execute.
    expect(outcome.events).toEqual(['action(Monitor)', 'action(Monitor)']);
    const logs = run(`enum Status { Ok, Bad }
      robot R { task Check() -> Status { return Status.Ok; } behavior main() { let s = execute Check(); print(s); } }`).logs;
    expect(logs).toEqual(['Status.Ok']);
  });

  it('a generic struct literal is a record typed with its arguments', () => {
    const logs = run('struct Sample<T> { value: T }\nrobot R { behavior main() { let s = Sample<Float> { value: 1.5 }; print(s.type); print(s.value); } }').logs;
    expect(logs).toEqual(['Sample<Float>', '1.5']);
  });

  it('a topic without channel publishes on /<name>', () => {
    const outcome = runProgram(fixture('topic_block.sd'), { maxLoopIterations: 2 });
    expect(outcome.events).toEqual(['publish(/status, String)', 'publish(/status, String)']);
  });
});
