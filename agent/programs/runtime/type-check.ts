/**
 * The minimal type check run before interpreting (docs/program-language.md §6: "simulation runs the type checker"): every
 * identifier must be bound (a `let`, a parameter, a robot entity, a declared function or type, a
 * built-in), and `publish` / `run_pipeline` must name something declared. The check is scope
 * aware but deliberately shallow — it exists to reject programs that would fail half-way through
 * a run, not to infer types.
 */
import type { Expr, Program, RobotDecl, Stmt } from '../language/ast.js';
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
      expr.fields.forEach((field) => checkExpr(field.value, scope, where));
      return;
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
      checkExpr(stmt.value, scope, where);
      scope[scope.length - 1]!.add(stmt.name);
      return;
    case 'assign':
      checkExpr(stmt.target, scope, where);
      checkExpr(stmt.value, scope, where);
      return;
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
  for (const robot of program.robots) {
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
      if (task.requires) checkExpr(task.requires, base, `task ${task.name}`);
      checkBlock(task.body, base, pipelines, `task ${task.name}`);
    }
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
  for (const fn of program.functions) {
    checkBlock(fn.body, [names, new Set(fn.params.map((p) => p.name))], allPipelines, `fn ${fn.name}`);
  }
}
