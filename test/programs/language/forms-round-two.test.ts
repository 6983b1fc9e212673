import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { ProgramSyntaxError, parseProgram, type Expr, type Program, type Stmt } from '../../../agent/programs/language/index.js';

/**
 * The language forms added in issue 18 (docs/program-language.md §4.1 "Forms added in issue 18"), parsed
 * from our own fixture programs under ./forms and from inline snippets for the error paths.
 */
const FORMS = path.join(__dirname, 'forms');
const fixture = (name: string): Program => parseProgram(fs.readFileSync(path.join(FORMS, name), 'utf8'), name);
const parse = (source: string): Program => parseProgram(source, 'forms.sd');

function parseError(source: string): string {
  try {
    parseProgram(source, 'broken.sd');
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return error.message.split('\n')[0]!;
    throw error;
  }
  throw new Error('expected a syntax error');
}

function lets(stmts: Stmt[]): Extract<Stmt, { kind: 'let' }>[] {
  return stmts.filter((s): s is Extract<Stmt, { kind: 'let' }> => s.kind === 'let');
}

describe('secure topics', () => {
  it('reads the secure modifier after the channel, with or without a member block', () => {
    const [cmd, odometry] = fixture('secure_topic.sd').robots[0]!.topics;
    expect(cmd).toMatchObject({ name: 'cmd', type: 'Velocity', direction: 'subscribe', channel: '/jack/cmd', secure: true, qos: { qos: 'reliable' } });
    expect(odometry).toMatchObject({ name: 'odometry', direction: 'publish', channel: '/jack/odom', secure: true, qos: {} });
  });

  it('accepts secure before the channel clause; a plain topic has no secure flag', () => {
    const [a, b] = parse('robot R { topic a: T secure publish on "/a"; topic b: T publish on "/b"; }').robots[0]!.topics;
    expect(a).toMatchObject({ direction: 'publish', channel: '/a', secure: true });
    expect(b!.secure).toBeUndefined();
  });
});

describe('topics with a member block and no channel clause', () => {
  it('reads QoS, rate and validation members', () => {
    const [status, frames] = fixture('topic_block.sd').robots[0]!.topics;
    expect(status).toEqual({
      name: 'status', type: 'String', direction: null, channel: null,
      qos: { qos: 'reliable', rate: { value: 5, unit: 'Hz', text: '5Hz' } },
      validations: ['status matches /^[a-z]+$/'],
      loc: { line: 6, column: 5 },
    });
    expect(frames).toMatchObject({ direction: 'publish', channel: null, qos: { rate: { text: '30Hz' } } });
  });

  it('a topic with neither a channel nor a block is an error naming both options', () => {
    expect(parseError('robot R {\n  topic t: T;\n}')).toBe("broken.sd:2:13: expected 'on' before the channel of topic 't' (or a '{' member block), found ';'");
  });
});

describe('sensor driver clauses', () => {
  it('reads vendor and model, with the source after on', () => {
    const sensors = fixture('sensor_driver.sd').robots[0]!.sensors;
    expect(sensors.map((s) => [s.name, s.type, s.driver ?? null, s.source])).toEqual([
      ['imu', 'IMU', { vendor: 'bosch', model: 'bno055' }, 'imu_bus'],
      ['fix', 'GPS', { vendor: 'ublox', model: 'zed_f9p' }, '/dev/ttyACM0'],
      ['lidar', 'Lidar', null, null],
    ]);
  });

  it('a driver that is not vendor.model is an error', () => {
    expect(parseError('robot R {\n  sensor imu: IMU from bno055;\n}')).toBe(
      "broken.sd:2:24: expected the driver of sensor 'imu' as vendor.model (e.g. from bosch.bno055), found 'bno055'",
    );
    expect(parseError('robot R {\n  sensor imu: IMU from a.b.c;\n}')).toBe(
      "broken.sd:2:28: expected the driver of sensor 'imu' as vendor.model (e.g. from bosch.bno055), found 'a.b.c'",
    );
  });
});

describe('let with a type and no initializer', () => {
  it('declares the variable with its type and no value', () => {
    const body = fixture('let_annotated.sd').robots[0]!.behaviors[0]!.body;
    expect(lets(body).map((s) => [s.name, s.type, s.value])).toEqual([
      ['scan', 'Scan', null],
      ['passes', 'Int', null],
    ]);
    const generic = lets(parse('robot R { behavior b() { let scan: Topic<LidarScan>; } }').robots[0]!.behaviors[0]!.body)[0]!;
    expect([generic.type, generic.value]).toEqual(['Topic<LidarScan>', null]);
  });

  it('without a type it is an error that says how to write it', () => {
    expect(parseError('robot R { behavior b() {\n  let scan;\n} }')).toBe(
      "broken.sd:2:11: expected '=' after 'let scan': a let without an initializer needs a type (let scan: Type;)",
    );
  });
});

describe('keyword expressions', () => {
  it('execute, call and spawn wrap a call as an initializer', () => {
    const main = fixture('keyword_expressions.sd').robots[0]!.behaviors.find((b) => b.name === 'main')!;
    const values = lets(main.body).map((s) => s.value as Extract<Expr, { kind: 'keyword' }>);
    expect(values.map((v) => [v.kind, v.keyword, v.call.callee.kind === 'ident' ? v.call.callee.name : null, v.call.args.length])).toEqual([
      ['keyword', 'execute', 'dock', 1],
      ['keyword', 'call', 'GetBattery', 0],
      ['keyword', 'spawn', 'beacon', 0],
    ]);
  });

  it('a keyword expression without a call is an error; execute(x) stays an ordinary call', () => {
    expect(parseError('robot R { behavior b() {\n  let h = spawn tick;\n} }')).toBe("broken.sd:2:21: expected a call after 'spawn' (e.g. spawn tick()), found ';'");
    const body = parse('robot R { actuator arm: Arm; behavior b() { let p = 1; arm.execute(p); let q = execute(p); } }').robots[0]!.behaviors[0]!.body;
    expect(body.map((s) => s.kind)).toEqual(['let', 'expr', 'let']);
    expect(lets(body)[1]!.value!.kind).toBe('call');
  });
});

describe('generic struct literals, dyn types and task signatures', () => {
  const p = fixture('generic_types.sd');
  const mast = p.robots[0]!;

  it('reads Sample<Float> { value: 1.5 } as a struct literal with type arguments', () => {
    const literal = lets(mast.tasks[0]!.body)[0]!.value!;
    expect(literal).toMatchObject({ kind: 'struct', name: 'Sample', typeArgs: ['Float'], fields: [{ name: 'value', value: { kind: 'number', value: 1.5 } }] });
  });

  it('a comparison with < is still a comparison', () => {
    const cond = parse('robot R { behavior b() { let a = 1; let c = 2; let x = a < c; } }').robots[0]!.behaviors[0]!.body[2]!;
    expect(cond).toMatchObject({ kind: 'let', value: { kind: 'binary', op: '<' } });
  });

  it('reads dyn Trait in parameter and nested types', () => {
    expect(p.functions[0]!.params).toEqual([{ name: 'who', type: 'dyn Reporter' }]);
    const nested = parse('fn f(xs: [Box<dyn Reporter>]) { }').functions[0]!.params[0]!;
    expect(nested.type).toBe('[Box<dyn Reporter>]');
  });

  it('reads task parameters and return type; such a task needs no every', () => {
    expect(mast.tasks.map((t) => [t.name, t.params ?? null, t.returnType ?? null, t.every?.text ?? null])).toEqual([
      ['Monitor', [], 'Status', null],
      ['sample', null, null, '1s'],
    ]);
    const withArgs = parse('robot R { task Check(limit: Float) -> Bool every 1s { return true; } }').robots[0]!.tasks[0]!;
    expect([withArgs.params, withArgs.returnType, withArgs.every?.text]).toEqual([[{ name: 'limit', type: 'Float' }], 'Bool', '1s']);
  });

  it('a plain task still needs every', () => {
    expect(parseError('robot R {\n  task t { }\n}')).toBe("broken.sd:2:10: expected 'every' after task 't', found '{'");
  });
});
