/**
 * Builders for program models in runtime tests: a program is assembled from the AST directly so
 * the runtime can be tested independently of the parser.
 */
import { emptyProgram, emptyRobot } from '../../../agent/programs/language/empty.js';
import type { Arg, BehaviorDecl, BinaryOp, Expr, Program, RobotDecl, SafetyRule, Stmt, TaskDecl } from '../../../agent/programs/language/ast.js';

export const at = { line: 1, column: 1 };

export function num(value: number, unit: string | null = null): Expr {
  return { kind: 'number', value, unit, text: `${value}${unit ?? ''}`, loc: at };
}
export function id(name: string): Expr {
  return { kind: 'ident', name, loc: at };
}
export function str(value: string): Expr {
  return { kind: 'string', value, loc: at };
}
export function member(object: Expr, property: string): Expr {
  return { kind: 'member', object, property, loc: at };
}
export function bin(op: BinaryOp, left: Expr, right: Expr): Expr {
  return { kind: 'binary', op, left, right, loc: at };
}
export function call(callee: Expr, args: (Expr | [string, Expr])[] = []): Expr {
  const list: Arg[] = args.map((a) => (Array.isArray(a) ? { name: a[0], value: a[1] } : { name: null, value: a }));
  return { kind: 'call', callee, args: list, loc: at };
}
/** `target.method(args)` */
export function method(target: string, name: string, args: (Expr | [string, Expr])[] = []): Expr {
  return call(member(id(target), name), args);
}
/** `sensor.read().field` */
export function reading(sensor: string, field: string): Expr {
  return member(method(sensor, 'read'), field);
}

export const stmt = {
  expr: (expr: Expr): Stmt => ({ kind: 'expr', expr, loc: at }),
  let: (name: string, value: Expr): Stmt => ({ kind: 'let', name, type: null, value, loc: at }),
  if: (condition: Expr, then: Stmt[], otherwise: Stmt[] | null = null): Stmt => ({ kind: 'if', condition, then, else: otherwise, loc: at }),
  loop: (value: number, unit: string, body: Stmt[]): Stmt => ({ kind: 'loop', every: { value, unit, text: `${value}${unit}` }, body, loc: at }),
  publish: (topic: string, value: Expr | null = null): Stmt => ({ kind: 'publish', topic, value, loc: at }),
  enter: (mode: string): Stmt => ({ kind: 'enter', mode, loc: at }),
  estop: (): Stmt => ({ kind: 'emergency_stop', loc: at }),
  ret: (value: Expr | null = null): Stmt => ({ kind: 'return', value, loc: at }),
};

/** `wheels.drive(linear: v m/s, angular: w rad/s);` */
export function drive(linear: number, angular = 0, actuator = 'wheels'): Stmt {
  return stmt.expr(method(actuator, 'drive', [['linear', num(linear, 'm/s')], ['angular', num(angular, 'rad/s')]]));
}

export function behavior(name: string, body: Stmt[], contracts: Partial<Pick<BehaviorDecl, 'requires' | 'ensures' | 'invariant'>> = {}): BehaviorDecl {
  return { name, params: [], returnType: null, requires: null, ensures: null, invariant: null, body, loc: at, ...contracts };
}

export function task(name: string, everyMs: number, body: Stmt[], extra: Partial<TaskDecl> = {}): TaskDecl {
  return {
    name,
    priority: null,
    every: { value: everyMs, unit: 'ms', text: `${everyMs}ms` },
    deadline: null,
    jitter: null,
    requires: null,
    budget: [],
    body,
    loc: at,
    ...extra,
  };
}

export function maxSpeed(value: number): SafetyRule {
  return { kind: 'max_speed', value: { value, unit: 'm/s', text: `${value}m/s` }, loc: at };
}
export function maxAngular(value: number): SafetyRule {
  return { kind: 'max_angular', value: { value, unit: 'rad/s', text: `${value}rad/s` }, loc: at };
}
export function stopIf(condition: Expr, text: string): SafetyRule {
  return { kind: 'stop_if', condition, text, loc: at };
}

export function robot(name: string, parts: Partial<RobotDecl> = {}): RobotDecl {
  return {
    ...emptyRobot(name, at),
    sensors: [
      { name: 'lidar', type: 'Lidar', source: null, loc: at },
      { name: 'imu', type: 'IMU', source: null, loc: at },
      { name: 'gps', type: 'GPS', source: null, loc: at },
    ],
    actuators: [{ name: 'wheels', type: 'DifferentialDrive', loc: at }],
    topics: [{ name: 'status', type: 'Status', direction: 'publish', channel: '/rover/status', qos: {}, loc: at }],
    ...parts,
  };
}

export function program(robots: RobotDecl[], parts: Partial<Program> = {}): Program {
  return { ...emptyProgram('test.sd'), robots, ...parts };
}
