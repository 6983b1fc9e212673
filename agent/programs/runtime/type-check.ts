/**
 * The minimal type check run before interpreting (docs/program-language.md §6: "simulation runs the type checker"): every
 * identifier must be bound (a `let`, a parameter, a robot entity, a declared function or type, a
 * built-in), and `publish` / `run_pipeline` must name something declared. The check is scope
 * aware but deliberately shallow — it exists to reject programs that would fail half-way through
 * a run, not to infer types.
 */
import type { Expr, Loc, Program, RobotDecl, Stmt } from '../language/ast.js';
import { exprText } from '../language/expr-text.js';
import { ProgramRuntimeError } from './errors.js';

/** Names callable or readable anywhere without a declaration. */
export const BUILTIN_NAMES: readonly string[] = [
  'pose', 'trajectory', 'serialize', 'deserialize', 'Ok', 'Err', 'Some', 'None',
  'print', 'println', 'log', 'len', 'abs', 'min', 'max', 'sqrt', 'clamp', 'now',
  'Distance', 'Angle', 'Path', 'safety', 'self', 'robot', 'mission', 'emergency_stop',
];

/** Names a robot's code may use: its entities, the program's declarations and the built-ins. */
export function robotScopeNames(program: Program, robot: RobotDecl): Set<string> {
  const names = new Set<string>(BUILTIN_NAMES);
  const add = (name: string | null | undefined): void => {
    if (name) names.add(name);
  };
  robot.sensors.forEach((s) => add(s.name));
  robot.actuators.forEach((a) => add(a.name));
  robot.topics.forEach((t) => add(t.name));
  robot.aiModels.forEach((m) => add(m.name));
  robot.behaviors.forEach((b) => add(b.name));
  robot.tasks.forEach((t) => add(t.name));
  robot.modes.forEach((m) => add(m.name));
  robot.pipelines.forEach((p) => add(p.name));
  robot.watchdogs.forEach((w) => add(w.name));
  robot.twins.forEach((t) => add(t.name));
  robot.stateMachines.forEach((m) => add(m.name));
  robot.agents.forEach((a) => add(a.name));
  robot.peers.forEach(add);
  robot.buses.forEach(add);
  robot.generic.forEach((g) => add(g.name));
  robot.killSwitches.forEach((k) => add(k.name));
  robot.healthChecks.forEach((h) => add(h.name));
  robot.missions.forEach((m) => add(m.name));
  add(robot.name);
  program.robots.forEach((r) => add(r.name));
  // Named top-level declarations may be referred to as plain names (never evaluated as values).
  for (const list of [
    program.killSwitches, program.healthChecks, program.healthPolicies, program.recoveryPolicies,
    program.continuityPolicies, program.mitigations, program.decisionTrees, program.offlinePolicies,
    program.missionPlans, program.operatingModes, program.assuranceCases, program.knowledgeModels,
    program.stateEstimators, program.anomalyDetectors, program.prognostics, program.resiliencePolicies,
    program.safetyZones, program.hardware,
  ] as { name: string | null }[][]) {
    list.forEach((decl) => add(decl.name));
  }
  program.functions.forEach((f) => add(f.name));
  program.generic.forEach((g) => add(g.name));
  program.fleets.forEach((f) => add(f.name));
  for (const imported of program.imports) {
    const parts = imported.split('.');
    add(parts[0]);
    add(parts[parts.length - 1]);
  }
  return names;
}

type Scope = Set<string>[];

/**
 * What the check knows about the program's declared types and runnable names, for the forms that
 * carry type information (docs/program-language.md §4.1 "Forms added in issue 18"): `dyn Trait` must name a declared
 * trait, a generic struct literal must match its struct's type parameters, a `spawn` target must be
 * runnable, and a variable annotated with a primitive type takes only literals of that type.
 */
interface TypeFacts {
  traits: ReadonlySet<string>;
  /** Declared structs and their type-parameter count (0 when not generic). */
  structs: ReadonlyMap<string, number>;
  /** Tasks, behaviors and module functions in scope (what `spawn` can start). */
  runnable: ReadonlySet<string>;
  /** Annotated variables, innermost binding wins: name → annotation. */
  annotations: Map<string, string>;
}

const PRIMITIVE_LITERALS: Readonly<Record<string, 'number' | 'string' | 'bool'>> = {
  Int: 'number', Float: 'number', Number: 'number', Bool: 'bool', String: 'string',
};

function literalTypeName(kind: 'number' | 'string' | 'bool'): string {
  return kind === 'number' ? 'a number' : kind === 'string' ? 'a string' : 'a boolean';
}

/** `struct Sample<T, U> { … }` → 2; the generic declaration's tokens start after the keyword. */
function structArity(tokens: readonly string[]): number {
  if (tokens[1] !== '<') return 0;
  let count = 1;
  for (let i = 2; i < tokens.length && tokens[i] !== '>'; i += 1) if (tokens[i] === ',') count += 1;
  return count;
}

function programTypeFacts(program: Program): Omit<TypeFacts, 'runnable' | 'annotations'> {
  const decls = [...program.generic, ...program.robots.flatMap((r) => r.generic)];
  const traits = new Set(decls.filter((g) => g.keyword === 'trait' && g.name).map((g) => g.name!));
  const structs = new Map(decls.filter((g) => g.keyword === 'struct' && g.name).map((g) => [g.name!, structArity(g.tokens)] as const));
  // An imported module may provide traits; its last segment is accepted as a trait name.
  for (const imported of program.imports) traits.add(imported.split('.').pop()!);
  return { traits, structs };
}

/** A type annotation's `dyn X` parts must name declared traits. */
function checkTypeText(type: string | null | undefined, facts: TypeFacts, loc: Loc, what: string): void {
  if (!type) return;
  for (const match of type.matchAll(/\bdyn ([A-Za-z_][A-Za-z0-9_.]*)/g)) {
    const trait = match[1]!.split('.').pop()!;
    if (!facts.traits.has(trait)) {
      throw new ProgramRuntimeError('type', `type error: 'dyn ${match[1]}' in ${what} names no declared trait (declare 'trait ${trait} { … }')`, loc);
    }
  }
}

function literalKind(expr: Expr): 'number' | 'string' | 'bool' | null {
  if (expr.kind === 'number') return 'number';
  if (expr.kind === 'string') return 'string';
  if (expr.kind === 'bool') return 'bool';
  if (expr.kind === 'unary' && expr.op === '-' && expr.operand.kind === 'number') return 'number';
  return null;
}

/** A literal stored in a variable annotated Int/Float/Bool/String must be of that kind. */
function checkAnnotatedValue(name: string, type: string, value: Expr, where: string): void {
  const expected = PRIMITIVE_LITERALS[type];
  const actual = literalKind(value);
  if (expected === undefined || actual === null || expected === actual) return;
  throw new ProgramRuntimeError('type', `type error: '${name}' is declared ${type} but is given ${literalTypeName(actual)} in ${where}`, value.loc);
}

/** Set by `typeCheckProgram` before each robot's (and the module functions') bodies; the check is synchronous, so one slot suffices. */
let facts: TypeFacts = { traits: new Set(), structs: new Map(), runnable: new Set(), annotations: new Map() };

function bound(scope: Scope, name: string): boolean {
  return scope.some((frame) => frame.has(name));
}

function checkExpr(expr: Expr, scope: Scope, where: string): void {
  switch (expr.kind) {
    case 'ident':
      if (!bound(scope, expr.name)) {
        throw new ProgramRuntimeError('type', `type error: undefined identifier '${expr.name}' in ${where}`, expr.loc);
      }
      return;
    case 'list':
      expr.items.forEach((item) => checkExpr(item, scope, where));
      return;
    case 'unary':
      checkExpr(expr.operand, scope, where);
      return;
    case 'binary':
      checkExpr(expr.left, scope, where);
      checkExpr(expr.right, scope, where);
      return;
    case 'member':
      checkExpr(expr.object, scope, where);
      return;
    case 'call':
      checkExpr(expr.callee, scope, where);
      expr.args.forEach((arg) => checkExpr(arg.value, scope, where));
      return;
    case 'struct':
      if (expr.typeArgs && expr.typeArgs.length > 0) {
        const arity = facts.structs.get(expr.name);
        const written = `${expr.name}<${expr.typeArgs.join(', ')}>`;
        if (arity === undefined) {
          throw new ProgramRuntimeError('type', `type error: generic struct literal '${written}' names no declared struct in ${where}`, expr.loc);
        }
        if (arity !== expr.typeArgs.length) {
          const takes = arity === 0 ? 'takes no type arguments' : `takes ${arity} type argument${arity === 1 ? '' : 's'}`;
          throw new ProgramRuntimeError('type', `type error: struct '${expr.name}' ${takes}, but '${written}' gives ${expr.typeArgs.length} in ${where}`, expr.loc);
        }
        expr.typeArgs.forEach((arg) => checkTypeText(arg, facts, expr.loc, where));
      }
      expr.fields.forEach((field) => checkExpr(field.value, scope, where));
      return;
    case 'keyword': {
      const callee = expr.call.callee;
      if (callee.kind === 'ident' && !bound(scope, callee.name)) {
        throw new ProgramRuntimeError('type', `type error: '${expr.keyword} ${callee.name}(…)' names nothing declared in ${where}`, callee.loc);
      }
      if (expr.keyword === 'spawn' && (callee.kind !== 'ident' || !facts.runnable.has(callee.name))) {
        throw new ProgramRuntimeError('type', `type error: spawn needs a task, behavior or function, and '${exprText(callee)}' is none in ${where}`, callee.loc);
      }
      expr.call.args.forEach((arg) => checkExpr(arg.value, scope, where));
      return;
    }
    default:
      return;
  }
}

function checkBlock(stmts: Stmt[], outer: Scope, pipelines: ReadonlySet<string>, where: string): void {
  const scope: Scope = [...outer, new Set<string>()];
  for (const stmt of stmts) checkStmt(stmt, scope, pipelines, where);
}

function checkStmt(stmt: Stmt, scope: Scope, pipelines: ReadonlySet<string>, where: string): void {
  switch (stmt.kind) {
    case 'let':
      checkTypeText(stmt.type, facts, stmt.loc, `let ${stmt.name}`);
      if (stmt.value !== null) {
        checkExpr(stmt.value, scope, where);
        if (stmt.type !== null) checkAnnotatedValue(stmt.name, stmt.type, stmt.value, where);
      }
      scope[scope.length - 1]!.add(stmt.name);
      if (stmt.type !== null) facts.annotations.set(stmt.name, stmt.type);
      else facts.annotations.delete(stmt.name);
      return;
    case 'assign': {
      checkExpr(stmt.target, scope, where);
      checkExpr(stmt.value, scope, where);
      const annotation = stmt.target.kind === 'ident' ? facts.annotations.get(stmt.target.name) : undefined;
      if (stmt.target.kind === 'ident' && annotation !== undefined) checkAnnotatedValue(stmt.target.name, annotation, stmt.value, where);
      return;
    }
    case 'if':
      checkExpr(stmt.condition, scope, where);
      checkBlock(stmt.then, scope, pipelines, where);
      if (stmt.else) checkBlock(stmt.else, scope, pipelines, where);
      return;
    case 'loop':
      checkBlock(stmt.body, scope, pipelines, where);
      return;
    case 'while':
      checkExpr(stmt.condition, scope, where);
      checkBlock(stmt.body, scope, pipelines, where);
      return;
    case 'publish':
      if (stmt.value) checkExpr(stmt.value, scope, where);
      return;
    case 'return':
      if (stmt.value) checkExpr(stmt.value, scope, where);
      return;
    case 'match':
      checkExpr(stmt.subject, scope, where);
      stmt.arms.forEach((arm) => checkBlock(arm.body, scope, pipelines, where));
      return;
    case 'run_pipeline':
      if (!pipelines.has(stmt.pipeline)) {
        throw new ProgramRuntimeError('type', `type error: unknown pipeline '${stmt.pipeline}' in ${where}`, stmt.loc);
      }
      return;
    case 'expr':
      checkExpr(stmt.expr, scope, where);
      return;
    default:
      return;
  }
}

/** Throws a `ProgramRuntimeError` of kind `type` for the first problem found. */
export function typeCheckProgram(program: Program): void {
  const declared = programTypeFacts(program);
  const moduleRunnable = program.functions.map((f) => f.name);
  for (const fn of program.functions) {
    fn.params.forEach((p) => checkTypeText(p.type, { ...declared, runnable: new Set(), annotations: new Map() }, fn.loc, `fn ${fn.name}`));
  }
  for (const robot of program.robots) {
    facts = {
      ...declared,
      runnable: new Set([...moduleRunnable, ...robot.tasks.map((t) => t.name), ...robot.behaviors.map((b) => b.name)]),
      annotations: new Map(),
    };
    const base: Scope = [robotScopeNames(program, robot)];
    const pipelines = new Set(robot.pipelines.map((p) => p.name));
    const inRobot = `robot ${robot.name}`;
    for (const rule of robot.safety) {
      if (rule.kind === 'stop_if') checkExpr(rule.condition, base, `${inRobot} safety`);
      if (rule.kind === 'zone') {
        rule.center.forEach((e) => checkExpr(e, base, `${inRobot} zone ${rule.name}`));
        if (rule.shape === 'circle') checkExpr(rule.radius, base, `${inRobot} zone ${rule.name}`);
        else rule.size.forEach((e) => checkExpr(e, base, `${inRobot} zone ${rule.name}`));
      }
    }
    for (const behavior of robot.behaviors) {
      const where = `behavior ${behavior.name}`;
      const scope: Scope = [...base, new Set(behavior.params.map((p) => p.name))];
      for (const contract of [behavior.requires, behavior.ensures, behavior.invariant]) {
        if (contract) checkExpr(contract, [...scope, new Set(['result'])], where);
      }
      checkBlock(behavior.body, scope, pipelines, where);
    }
    for (const task of robot.tasks) {
      const where = `task ${task.name}`;
      const params = task.params ?? [];
      params.forEach((p) => checkTypeText(p.type, facts, task.loc, where));
      checkTypeText(task.returnType, facts, task.loc, where);
      const scope: Scope = [...base, new Set(params.map((p) => p.name))];
      if (task.requires) checkExpr(task.requires, scope, where);
      // A task declared without `-> T` returns nothing; `return x;` in it is a mistake.
      if (!task.returnType) {
        const valued = findValuedReturn(task.body);
        if (valued) throw new ProgramRuntimeError('type', `type error: task '${task.name}' returns a value but declares no return type (write 'task ${task.name}() -> Type')`, valued.loc);
      }
      checkBlock(task.body, scope, pipelines, where);
    }
    for (const behavior of robot.behaviors) behavior.params.forEach((p) => checkTypeText(p.type, facts, behavior.loc, `behavior ${behavior.name}`));
    robot.modes.forEach((mode) => checkBlock(mode.body, base, pipelines, `mode ${mode.name}`));
    robot.watchdogs.forEach((w) => checkBlock(w.body, base, pipelines, `watchdog ${w.name}`));
    robot.pipelines.forEach((p) => checkBlock(p.body, base, pipelines, `pipeline ${p.name}`));
    robot.killSwitches.forEach((k) => checkBlock(k.body, base, pipelines, `kill_switch ${k.name}`));
    robot.verify.forEach((expr) => checkExpr(expr, base, `${inRobot} verify`));
    for (const trigger of robot.triggers) {
      if (trigger.kind === 'when') checkExpr(trigger.condition, base, `${inRobot} when`);
      checkBlock(trigger.body, base, pipelines, `${inRobot} ${trigger.kind}`);
    }
  }
  // A module function runs on whichever robot calls it: any robot's pipeline may be meant.
  const allPipelines = new Set(program.robots.flatMap((r) => r.pipelines.map((p) => p.name)));
  // Likewise its names may be any calling robot's entities.
  const names = new Set<string>(BUILTIN_NAMES);
  program.functions.forEach((f) => names.add(f.name));
  program.generic.forEach((g) => g.name && names.add(g.name));
  for (const imported of program.imports) imported.split('.').forEach((part) => names.add(part));
  for (const robot of program.robots) robotScopeNames(program, robot).forEach((name) => names.add(name));
  facts = {
    ...declared,
    runnable: new Set([...moduleRunnable, ...program.robots.flatMap((r) => [...r.tasks.map((t) => t.name), ...r.behaviors.map((b) => b.name)])]),
    annotations: new Map(),
  };
  for (const fn of program.functions) {
    checkBlock(fn.body, [names, new Set(fn.params.map((p) => p.name))], allPipelines, `fn ${fn.name}`);
  }
}

/** The first `return <value>;` in a body, nested blocks included. */
function findValuedReturn(stmts: readonly Stmt[]): Extract<Stmt, { kind: 'return' }> | null {
  for (const stmt of stmts) {
    if (stmt.kind === 'return' && stmt.value !== null) return stmt;
    const nested =
      stmt.kind === 'if' ? [stmt.then, stmt.else ?? []]
      : stmt.kind === 'loop' || stmt.kind === 'while' ? [stmt.body]
      : stmt.kind === 'match' ? stmt.arms.map((a) => a.body)
      : [];
    for (const body of nested) {
      const found = findValuedReturn(body);
      if (found) return found;
    }
  }
  return null;
}
