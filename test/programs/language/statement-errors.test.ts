/**
 * Malformed statements and members the simulator or the analyses read are syntax errors with a
 * precise location; only unknown statement forms and unknown members stay opaque / generic (docs/program-language.md §4.3).
 */

import { describe, expect, it } from 'vitest';

import { ProgramSyntaxError, parseProgram, type RobotDecl, type Stmt } from '../../../agent/programs/language/index.js';

function parseError(source: string): ProgramSyntaxError {
  try {
    parseProgram(source, 'typo.sd');
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a syntax error');
}

/** kind, line, column and detail of the error for `source`. */
function failure(source: string): [string, number, number, string] {
  const error = parseError(source);
  return [error.kind, error.line, error.column, error.detail];
}

/** A robot whose behavior `b` has `body` on the lines after line 2 (body line 1 = file line 3). */
function inBehavior(body: string): string {
  return `robot R {\n  behavior b() {\n${body}\n  }\n}\n`;
}

const robotOf = (members: string): RobotDecl => parseProgram(`robot R {\n${members}\n}`, 'ok.sd').robots[0]!;
const kinds = (body: Stmt[]): string[] => body.map((s) => (s.kind === 'opaque' ? `opaque:${s.keyword}` : s.kind));

describe('malformed statements are parse errors', () => {
  it('a call with a missing named argument value (the typo that used to disable motion)', () => {
    const source = [
      'robot R {',
      '  actuator wheels: DifferentialDrive;',
      '  behavior b() {',
      '    loop every 100ms {',
      '      wheels.drive(linear: 0.2 m/s, angular: );',
      '    }',
      '  }',
      '}',
    ].join('\n');
    const error = parseError(source);
    expect([error.kind, error.file, error.line, error.column]).toEqual(['parse', 'typo.sd', 5, 46]);
    expect(error.detail).toBe("expected an expression after 'angular:', found ')'");
    expect(error.sourceLine).toBe('      wheels.drive(linear: 0.2 m/s, angular: );');
    expect(error.message).toBe(
      "typo.sd:5:46: expected an expression after 'angular:', found ')'\n" +
        '        wheels.drive(linear: 0.2 m/s, angular: );\n' +
        '                                               ^',
    );
  });

  it('let without a value', () => {
    expect(failure(inBehavior('    let x = ;'))).toEqual(['parse', 3, 13, "expected an expression after 'let x =', found ';'"]);
    expect(failure(inBehavior('    let speed: Float = ;'))).toEqual(['parse', 3, 24, "expected an expression after 'let speed =', found ';'"]);
    expect(failure(inBehavior('    let = 3;'))).toEqual(['parse', 3, 9, "expected a name after 'let', found '='"]);
  });

  it('if and while without a condition', () => {
    expect(failure(inBehavior('    if { }'))).toEqual(['parse', 3, 8, "expected a condition after 'if', found '{'"]);
    expect(failure(inBehavior('    while { wheels.stop(); }'))).toEqual(['parse', 3, 11, "expected a condition after 'while', found '{'"]);
    expect(failure(inBehavior('    if x > 1 { } else wheels.stop();'))).toEqual(['parse', 3, 23, "expected '{' to open the else body, found 'wheels'"]);
  });

  it('publish, enter and run_pipeline without their name', () => {
    expect(failure(inBehavior('    publish ;'))).toEqual(['parse', 3, 13, "expected a name for the topic after 'publish', found ';'"]);
    expect(failure(inBehavior('    publish status with ;'))).toEqual(['parse', 3, 25, "expected an expression after 'publish status with', found ';'"]);
    expect(failure(inBehavior('    enter ;'))).toEqual(['parse', 3, 11, "expected a name for the mode after 'enter', found ';'"]);
    expect(failure(inBehavior('    run_pipeline 42;'))).toEqual(['parse', 3, 18, "expected a name for the pipeline after 'run_pipeline', found '42'"]);
  });

  it('a broken member chain', () => {
    expect(failure(inBehavior('    wheels.;'))).toEqual(['parse', 3, 12, "expected a member name after 'wheels.', found ';'"]);
    expect(failure(inBehavior('    robot.arm.gripper.(1);'))).toEqual(['parse', 3, 23, "expected a member name after 'robot.arm.gripper.', found '('"]);
  });

  it('assignments, operators, return and loop', () => {
    expect(failure(inBehavior('    x = ;'))).toEqual(['parse', 3, 9, "expected an expression after '=', found ';'"]);
    expect(failure(inBehavior('    x += ;'))).toEqual(['parse', 3, 10, "expected an expression after '+=', found ';'"]);
    expect(failure(inBehavior('    let y = 1 + ;'))).toEqual(['parse', 3, 17, "expected an expression after '+', found ';'"]);
    expect(failure(inBehavior('    wheels.drive(0.1 m/s 0.2 rad/s);'))).toEqual(['parse', 3, 26, "expected ')' to close the argument list, found '0.2rad/s'"]);
    expect(failure(inBehavior('    return 1 2;'))).toEqual(['parse', 3, 14, "expected ';' after return statement, found '2'"]);
    expect(failure(inBehavior('    loop { wheels.stop(); }'))).toEqual(['parse', 3, 10, "expected 'every' after 'loop', found '{'"]);
    expect(failure(inBehavior('    loop every { }'))).toEqual(['parse', 3, 16, "expected a duration after 'loop every', found '{'"]);
    expect(failure(inBehavior('    wheels.stop() wheels.stop();'))).toEqual(['parse', 3, 19, "expected ';' after statement, found 'wheels'"]);
  });

  it('errors in every body the simulator runs: tasks, modes, triggers, functions, kill switch actions, match arms', () => {
    const task = 'robot R {\n  task t every 100ms {\n    wheels.drive(linear: );\n  }\n}';
    expect(failure(task)).toEqual(['parse', 3, 26, "expected an expression after 'linear:', found ')'"]);
    expect(failure('robot R {\n  mode safe {\n    publish ;\n  }\n}')).toEqual(['parse', 3, 13, "expected a name for the topic after 'publish', found ';'"]);
    expect(failure('robot R {\n  every 1s {\n    let x = ;\n  }\n}')).toEqual(['parse', 3, 13, "expected an expression after 'let x =', found ';'"]);
    expect(failure('fn f() {\n  return wheels.;\n}')).toEqual(['parse', 2, 17, "expected a member name after 'wheels.', found ';'"]);
    expect(failure('kill_switch K {\n  action { wheels.; }\n}')).toEqual(['parse', 2, 19, "expected a member name after 'wheels.', found ';'"]);
    const arm = inBehavior('    match phase {\n      Idle => wheels.drive(angular: ),\n    }');
    expect(failure(arm)).toEqual(['parse', 4, 37, "expected an expression after 'angular:', found ')'"]);
  });
});

describe('unknown statement forms stay opaque', () => {
  it('keeps keyword-like statements followed by a name or a block', () => {
    const r = robotOf(`behavior b() {
      spawn { poll(); }
      parallel { scan(); report(); }
      send_goal nav with x;
      for x in xs { beep(x); }
      navigate { goal: home; }
      reduce_speed 0.4 m/s;
      @retry(3) upload();
      wheels.stop();
    }`);
    const body = r.behaviors[0]!.body;
    expect(kinds(body)).toEqual([
      'opaque:spawn', 'opaque:parallel', 'opaque:send_goal', 'opaque:for', 'opaque:navigate', 'opaque:reduce_speed', 'opaque:@', 'expr',
    ]);
    expect(body.map((s) => (s.kind === 'opaque' ? s.text : null))).toEqual([
      'spawn { poll ( ) ; }',
      'parallel { scan ( ) ; report ( ) ; }',
      'send_goal nav with x',
      'for x in xs { beep ( x ) ; }',
      'navigate { goal : home ; }',
      'reduce_speed 0.4m/s',
      '@ retry ( 3 ) upload ( )',
      null,
    ]);
    expect(body[0]!.loc).toEqual({ line: 3, column: 7 });
  });

  it('execute / call / spawn followed by a name are keyword expressions, not opaque (§4.1 "Forms added in issue 18")', () => {
    const body = robotOf(`behavior b() {
      spawn worker(1);
      execute nav.go(goal: home);
      call GetBattery();
    }`).behaviors[0]!.body;
    expect(kinds(body)).toEqual(['expr', 'expr', 'expr']);
    expect(body.map((s) => (s.kind === 'expr' && s.expr.kind === 'keyword' ? s.expr.keyword : null))).toEqual(['spawn', 'execute', 'call']);
    expect(body[1]).toMatchObject({ expr: { call: { callee: { kind: 'member', property: 'go' } } } });
    // Without a call they are the expression form's syntax error, never a silent no-op.
    expect(failure(inBehavior('    call svc;'))).toEqual(['parse', 3, 13, "expected a call after 'call' (e.g. call svc()), found ';'"]);
    expect(failure(inBehavior('    spawn worker { poll(); }'))).toEqual(['parse', 3, 18, "expected a call after 'spawn' (e.g. spawn worker()), found '{'"]);
  });

  it('still reads the strict forms that look like them', () => {
    const body = robotOf(`behavior b() {
      publish(status);
      enter(safe);
      let ok = serial matches /^SN/;
      emergency_stop;
      match phase { Idle => return, Busy => wheels.stop(), }
    }`).behaviors[0]!.body;
    expect(kinds(body)).toEqual(['expr', 'expr', 'let', 'emergency_stop', 'match']);
    expect(body[0]).toMatchObject({ kind: 'expr', expr: { kind: 'call', callee: { kind: 'ident', name: 'publish' } } });
  });
});

describe('robot members with a strict keyword', () => {
  it('malformed sensor, actuator, topic, ai_model, behavior and task headers are errors', () => {
    const member = (text: string) => failure(`robot R {\n  ${text}\n}`);
    expect(member('sensor lidar Lidar;')).toEqual(['parse', 2, 16, "expected ':' after sensor name 'lidar', found 'Lidar'"]);
    expect(member('sensor lidar: Lidar on;')).toEqual(['parse', 2, 25, "expected a name for the sensor source after 'on', found ';'"]);
    expect(member('actuator wheels DifferentialDrive;')).toEqual(['parse', 2, 19, "expected ':' after actuator name 'wheels', found 'DifferentialDrive'"]);
    expect(member('topic status: Status "robot/status";')).toEqual(['parse', 2, 24, "expected 'on' before the channel of topic 'status' (or a '{' member block), found '\"robot/status\"'"]);
    expect(member('ai_model planner Llm;')).toEqual(['parse', 2, 20, "expected ':' after ai_model name 'planner', found 'Llm'"]);
    expect(member('behavior b() requires battery > { }')).toEqual(['parse', 2, 35, "expected an expression after '>', found '{'"]);
    expect(member('task t { wheels.stop(); }')).toEqual(['parse', 2, 10, "expected 'every' after task 't', found '{'"]);
    expect(member('watchdog w timeout { }')).toEqual(['parse', 2, 22, "expected a duration after 'timeout', found '{'"]);
    expect(member('verify { battery > ; }')).toEqual(['parse', 2, 22, "expected an expression after '>', found ';'"]);
  });

  it('malformed safety rules are errors; unknown safety rules stay generic', () => {
    const safety = (rule: string) => failure(`robot R {\n  safety {\n    ${rule}\n  }\n}`);
    expect(safety('max_speed = ;')).toEqual(['parse', 3, 17, "expected a number after 'max_speed =', found ';'"]);
    expect(safety('max_angular: fast;')).toEqual(['parse', 3, 18, "expected a number after 'max_angular :', found 'fast'"]);
    expect(safety('max_speed = 0.5 m/s max_angular = 1 rad/s;')).toEqual(['parse', 3, 25, "expected ';' after max_speed rule, found 'max_angular'"]);
    expect(safety('stop_if ;')).toEqual(['parse', 3, 13, "expected a condition after 'stop_if', found ';'"]);
    expect(safety('stop_if lidar.read().nearest_distance < ;')).toEqual(['parse', 3, 45, "expected an expression after '<', found ';'"]);
    expect(safety('zone dock circle at (0, 0) radius ;')).toEqual(['parse', 3, 39, "expected an expression after 'radius', found ';'"]);
    expect(safety('zone dock rect at (0, 0);')).toEqual(['parse', 3, 29, "expected 'size' after the centre of zone 'dock', found ';'"]);

    expect(robotOf('safety { max_speed = 0.4 m/s }').safety).toMatchObject([{ kind: 'max_speed', value: { value: 0.4, unit: 'm/s' } }]);
    const r = robotOf('safety {\n  max_speed = 0.5 m/s;\n  max_acceleration = ;\n  zone pen polygon [(0, 0), (1, 0), (1, 1)];\n  require_estop;\n}');
    expect(r.safety.map((rule) => rule.kind)).toEqual(['max_speed']);
    expect(r.generic.map((g) => g.text)).toEqual(['max_acceleration =', 'zone pen polygon [ ( 0 , 0 ) , ( 1 , 0 ) , ( 1 , 1 ) ]', 'require_estop']);
  });
});
