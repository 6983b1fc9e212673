/**
 * The program interpreter (docs/program-language.md §24): sets each robot up, runs its entry point against the simulated
 * robot and records trace frames. Deterministic by construction: simulated time only (interval ×
 * iteration), a fixed world, a fixed iteration budget and no randomness.
 */
import type {
  ActuatorDecl,
  BehaviorDecl,
  Expr,
  FunctionDecl,
  Loc,
  Program,
  RobotDecl,
  SensorDecl,
  Stmt,
  TaskDecl,
  TopicDecl,
} from '../language/ast.js';
import { actuate } from './actuators.js';
import { BUILTINS, argument } from './builtins.js';
import { DECISION_EVENT, DecisionEngine } from './decision-trees.js';
import { ProgramRuntimeError } from './errors.js';
import type { EscalationPort, EscalationRecord } from './escalations.js';
import { evaluate, exprText, type ExpressionHost } from './expressions.js';
import { emptyHealthOutcome, type HealthOutcome, type InjectionPlan } from './health-injection.js';
import { injectHealth } from './health-runtime.js';
import { mockProposal, promptOf, proposalRecord, scanDistance, validateProposal } from './mock-provider.js';
import { RunMetrics } from './run-metrics.js';
import { SafetyMonitor } from './safety-monitor.js';
import { buildSafetyMonitor, safetyRuleText } from './safety-rules.js';
import { runScheduler, type SchedulerMode } from './scheduler.js';
import { toMilliseconds } from './si-units.js';
import { SimRobot, type SimSnapshot } from './sim-robot.js';
import type { TraceFrame, TraceState } from './trace-file.js';
import { TraceRecorder } from './trace-recorder.js';
import { typeCheckProgram } from './type-check.js';
import { listMethod, recordMethod, stringMethod } from './value-methods.js';
import {
  ActuatorRef,
  CallableRef,
  Environment,
  ModelRef,
  SensorRef,
  TopicRef,
  TypeRef,
  describeValue,
  isRecord,
  truthy,
  type ArgValue,
  type RecordValue,
  type Value,
} from './values.js';

export { ProgramRuntimeError } from './errors.js';
export { safetyRuleText } from './safety-rules.js';

export const DEFAULT_MAX_LOOP_ITERATIONS = 20;
const MAX_CALL_DEPTH = 64;
/** Fault names of `simulate_compatibility` that fail a simulated sensor type. */
const SENSOR_FAULTS: Record<string, string> = { LidarFailure: 'Lidar', CameraFailure: 'Camera', ImuFailure: 'IMU', GpsFailure: 'GPS' };

export interface InterpreterOptions {
  /** Iterations of every `loop every` and of the scheduler (default 20). */
  maxLoopIterations?: number;
  /** Decision tracing (default off; callers fold in `Settings.decisions.trace`). */
  decisionTrace?: boolean;
  /** Key that signs decision envelopes (`Settings.decisions.policySigningKey`); absent or null: unsigned. */
  signingKey?: string | null;
  /** Health faults to inject before each robot's entry (docs/program-language.md §24.1 step 4); absent: none. */
  injection?: InjectionPlan | null;
  /** The escalation store as this run sees it (docs/decisions.md § Escalations); absent: nothing granted, nothing kept. */
  escalations?: EscalationPort | null;
  /**
   * Called with the interval of every loop iteration and scheduler tick before the simulated clock
   * advances by it. The CLI's `--wall-clock` passes a real sleep (docs/program-language.md §24.1);
   * absent, time is simulated only. Simulated time, frames and events are the same either way.
   */
  pace?: ((intervalMs: number) => void) | null;
}

export interface RunOutcome {
  state: SimSnapshot;
  activeMode: string | null;
  events: string[];
  logs: string[];
  /** Frames of the trace (for multi-robot programs, those after the last robot's setup). */
  frames: TraceFrame[];
  metrics: Record<string, unknown>;
  missionTrace: Record<string, unknown> | null;
  twinReplay: Record<string, unknown> | null;
  decisionTrace: boolean;
  /** What the health injection did; null when no injection was asked for. */
  health: HealthOutcome | null;
  /** Escalations the run's decisions met (pending ones were handed to the port). */
  escalations: EscalationRecord[];
}

/** Type-check, then interpret. Runtime, type and contract faults throw `ProgramRuntimeError`. */
export function runProgram(program: Program, options: InterpreterOptions = {}): RunOutcome {
  typeCheckProgram(program);
  return new Interpreter(program, options).run();
}

class ReturnSignal {
  constructor(readonly value: Value) {}
}

/** The robot being run: its declarations by name and its safety monitor. */
export interface RobotContext {
  decl: RobotDecl;
  backend: SimRobot;
  monitor: SafetyMonitor;
  env: Environment;
  sensors: Map<string, SensorDecl>;
  actuators: Map<string, ActuatorDecl>;
  topics: Map<string, TopicDecl>;
  topicLastPublished: Map<string, number>;
}

export class Interpreter implements ExpressionHost {
  readonly maxLoopIterations: number;
  readonly decisionTrace: boolean;
  readonly metrics = new RunMetrics();
  readonly events: string[] = [];
  readonly logs: string[] = [];
  readonly recorder: TraceRecorder;
  simTimeMs = 0;
  activeMode: string | null = null;
  private robot: RobotContext | null = null;
  private backend = new SimRobot(this.events);
  private readonly globals = new Environment();
  private readonly decisions: DecisionEngine;
  private readonly signingKey: string | null;
  private readonly escalations: EscalationPort | null;
  private readonly missionEvents: { sim_time_ms: number; robot: string; event: string }[] = [];
  private callDepth = 0;
  /** Calls queued by `spawn f(…)`, run after the robot's entry (docs/program-language.md §24.1 step 6). */
  private spawnQueue: { target: string; run: () => Value }[] = [];
  private spawnCount = 0;
  private enteringModes = new Set<string>();
  private readonly injection: InjectionPlan | null;
  private readonly health: HealthOutcome | null;
  /** InterpreterOptions.pace (the scheduler calls it too). */
  readonly pace: ((intervalMs: number) => void) | null;

  constructor(
    readonly program: Program,
    options: InterpreterOptions = {},
  ) {
    this.maxLoopIterations = options.maxLoopIterations ?? DEFAULT_MAX_LOOP_ITERATIONS;
    this.decisionTrace = options.decisionTrace ?? false;
    this.signingKey = options.signingKey || null;
    this.escalations = options.escalations ?? null;
    this.pace = options.pace ?? null;
    this.recorder = new TraceRecorder(() => this.traceState());
    this.decisions = new DecisionEngine(program);
    this.metrics.execution.max_loop_iterations = this.maxLoopIterations;
    this.injection = options.injection ?? null;
    this.health = this.injection ? emptyHealthOutcome() : null;
    for (const fn of program.functions) this.globals.define(fn.name, this.functionRef(fn));
  }

  get current(): RobotContext {
    if (!this.robot) throw new ProgramRuntimeError('runtime', 'no robot is running');
    return this.robot;
  }

  get sim(): SimRobot {
    return this.backend;
  }

  traceState(): TraceState {
    return { ...this.backend.snapshot(), active_mode: this.activeMode };
  }

  /** Record a frame at the current simulated time, state attached. */
  record(event: string, payload: Record<string, unknown>, withState = true): void {
    this.recorder.record(this.simTimeMs, event, payload, withState);
  }

  // ---------------------------------------------------------------------------------------------
  // Run order (docs/program-language.md §24.1)

  run(): RunOutcome {
    const missionNames: string[] = [];
    for (const robot of this.program.robots) {
      this.setUpRobot(robot);
      const mission = robot.missions[0];
      if (mission) missionNames.push(mission.name ?? `${robot.name}_mission`);
      this.missionEvent('mission_started');
      this.fireEvent('mission_started');
      for (const fault of this.program.simulateFaults) {
        const type = SENSOR_FAULTS[fault];
        if (type) this.backend.failedSensorTypes.add(type);
      }
      const injection = this.injection?.(robot) ?? null;
      if (injection && injection.faults.length > 0 && this.health) injectHealth(this, injection, this.health);
      this.runEntry(robot);
      this.drainSpawnQueue();
      this.metrics.execution.sim_time_ms = Math.max(this.metrics.execution.sim_time_ms, this.simTimeMs);
    }
    if (this.robot) {
      this.missionEvent('mission_completed');
      this.fireEvent('mission_completed');
    }
    const frames = [...this.recorder.recorded];
    return {
      state: this.backend.snapshot(),
      activeMode: this.activeMode,
      events: [...this.events],
      logs: [...this.logs],
      frames,
      metrics: this.metrics.toJson(frames.length),
      missionTrace: this.missionTrace(missionNames),
      twinReplay: this.twinReplay(frames),
      decisionTrace: this.decisionTrace,
      health: this.health,
      escalations: [...this.decisions.escalations],
    };
  }

  private setUpRobot(robot: RobotDecl): void {
    this.recorder.reset();
    this.simTimeMs = 0;
    this.activeMode = null;
    this.backend = new SimRobot(this.events);
    this.metrics.execution.robots += 1;
    const env = this.globals.child();
    const context: RobotContext = {
      decl: robot,
      backend: this.backend,
      monitor: new SafetyMonitor({ maxSpeed: null, maxAngular: null, zones: [] }),
      env,
      sensors: new Map(robot.sensors.map((s) => [s.name, s])),
      actuators: new Map(robot.actuators.map((a) => [a.name, a])),
      topics: new Map(robot.topics.map((t) => [t.name, t])),
      topicLastPublished: new Map(),
    };
    this.robot = context;
    context.monitor = buildSafetyMonitor(robot, (expr) => evaluate(expr, env, this));
    for (const topic of robot.topics) {
      this.metrics.topics.set(topic.name, { channel: topicChannel(topic), type: topic.type, published: 0, deadline_misses: 0 });
    }
    if (robot.modes.some((mode) => mode.name === 'normal')) this.enterMode('normal');
  }

  /** Entry point (docs/program-language.md §6): first behavior; else the first task, or the scheduler for several; else triggers. */
  private runEntry(robot: RobotDecl): void {
    const behavior = robot.behaviors[0];
    if (behavior) {
      this.callBehavior(behavior, []);
      return;
    }
    let mode: SchedulerMode | null = null;
    // Only periodic tasks are entries; an on-demand task (`task T() -> R { … }`) waits for a call or spawn.
    const periodic = robot.tasks.filter((task) => task.every !== null).length;
    if (periodic > 1) mode = 'multiplexed';
    else if (periodic === 1) mode = 'single';
    else if (robot.triggers.some((t) => t.kind === 'every' || t.kind === 'when')) mode = 'triggers';
    if (mode) runScheduler(this, mode);
  }

  private missionEvent(event: string): void {
    this.missionEvents.push({ sim_time_ms: this.simTimeMs, robot: this.current.decl.name, event });
  }

  private missionTrace(names: string[]): Record<string, unknown> | null {
    // Only programs that declare a mission get a mission trace.
    if (this.missionEvents.length === 0 || names.length === 0) return null;
    const robots = this.program.robots;
    return {
      mission: names[0] ?? 'mission',
      robots: robots.map((r) => r.name),
      steps: robots.flatMap((r) => r.missions.flatMap((m) => m.steps)),
      status: 'completed',
      events: this.missionEvents.map((e) => ({ ...e })),
    };
  }

  private twinReplay(frames: TraceFrame[]): Record<string, unknown> | null {
    for (const robot of [...this.program.robots].reverse()) {
      const twin = robot.twins.find((t) => t.replay);
      if (twin) {
        return {
          twin: twin.name,
          robot: robot.name,
          mirror: [...twin.mirror],
          frames: frames.filter((f) => f.state !== null).length,
          final_state: this.traceState(),
        };
      }
    }
    return null;
  }

  /** The mission name decisions are attributed to. */
  missionName(): string {
    const mission = this.robot?.decl.missions[0];
    if (mission?.name) return mission.name;
    return this.program.missionPlans[0]?.name ?? 'mission';
  }

  // ---------------------------------------------------------------------------------------------
  // Behaviors, tasks, modes, triggers

  callBehavior(behavior: BehaviorDecl, args: ArgValue[]): Value {
    const env = this.current.env.child();
    bindParams(behavior.params.map((p) => p.name), args, env);
    this.metrics.execution.behaviors_run += 1;
    const where = `behavior '${behavior.name}'`;
    if (behavior.requires && !truthy(evaluate(behavior.requires, env, this))) {
      throw new ProgramRuntimeError('contract', `requires contract failed in ${where}: ${exprText(behavior.requires)}`, behavior.requires.loc);
    }
    const result = this.runBody(behavior.body, env);
    const after = env.child();
    after.define('result', result);
    if (behavior.ensures && !truthy(evaluate(behavior.ensures, after, this))) {
      throw new ProgramRuntimeError('contract', `ensures contract failed in ${where}: ${exprText(behavior.ensures)}`, behavior.ensures.loc);
    }
    if (behavior.invariant && !truthy(evaluate(behavior.invariant, after, this))) {
      throw new ProgramRuntimeError('contract', `invariant contract failed in ${where}: ${exprText(behavior.invariant)}`, behavior.invariant.loc);
    }
    this.runVerify();
    return result;
  }

  /** Run a task body once (the scheduler handles timing); false when its `requires` is false. */
  runTask(task: TaskDecl): boolean {
    const env = this.current.env.child();
    if (task.requires && !truthy(evaluate(task.requires, env, this))) return false;
    this.runBody(task.body, env);
    this.metrics.execution.tasks_run += 1;
    this.runVerify();
    return true;
  }

  /** `verify {}` rules after a body: a failing rule is a warning in the logs. */
  runVerify(): void {
    for (const rule of this.current.decl.verify) {
      let holds = false;
      try {
        holds = truthy(evaluate(rule, this.current.env, this));
      } catch (error) {
        if (!(error instanceof ProgramRuntimeError)) throw error;
      }
      if (!holds) this.logs.push(`verify failed: ${exprText(rule)}`);
    }
  }

  enterMode(mode: string): void {
    this.activeMode = mode;
    this.record('mode_enter', { mode });
    const decl = this.current.decl.modes.find((m) => m.name === mode);
    if (!decl || this.enteringModes.has(mode)) return;
    this.enteringModes.add(mode);
    try {
      this.runBody(decl.body, this.current.env.child());
    } finally {
      this.enteringModes.delete(mode);
    }
  }

  /** Run the `on <event>` and `recover from <event>` handlers of the current robot. */
  fireEvent(event: string): void {
    if (!this.robot) return;
    for (const trigger of this.robot.decl.triggers) {
      if ((trigger.kind === 'on' && trigger.event === event) || (trigger.kind === 'recover' && trigger.failure === event)) {
        this.metrics.fireTrigger(`${trigger.kind}:${event}`);
        this.runBody(trigger.body, this.robot.env.child());
      }
    }
  }

  /** Poll decision trees (when tracing) and record the winning decision. */
  pollDecisions(): void {
    if (!this.decisionTrace || !this.decisions.hasRules || !this.robot) return;
    const robot = this.robot;
    const seen = this.decisions.escalations.length;
    const payload = this.decisions.poll({
      simTimeMs: this.simTimeMs,
      robot: robot.decl.name,
      mission: this.missionName(),
      safetyRules: robot.decl.safety.map(safetyRuleText),
      evaluate: (expr) => evaluate(expr, robot.env, this),
      signingKey: this.signingKey,
      authority: robot.decl,
      escalations: this.escalations,
    });
    if (payload) {
      this.metrics.execution.decisions += 1;
      this.record(DECISION_EVENT, payload);
      // Neighbouring frames (§25): each escalation the decision now waits on.
      for (const e of this.decisions.escalations.slice(seen)) {
        if (e.status === 'pending') this.record('decision_escalation_pending', { ...e });
      }
    }
  }

  latchEmergencyStop(reason: string): void {
    if (this.backend.emergencyStop) return;
    this.backend.latchEmergencyStop();
    this.metrics.scheduler.emergency_stops += 1;
    this.logs.push(`emergency stop: ${reason}`);
    this.fireEvent('emergency_stop');
  }

  // ---------------------------------------------------------------------------------------------
  // Statements

  /** Run a body; returns the `return` value or void. */
  runBody(stmts: Stmt[], env: Environment): Value {
    try {
      this.execBlock(stmts, env);
      return null;
    } catch (signal) {
      if (signal instanceof ReturnSignal) return signal.value;
      throw signal;
    }
  }

  private execBlock(stmts: Stmt[], env: Environment): void {
    for (const stmt of stmts) this.exec(stmt, env);
  }

  private exec(stmt: Stmt, env: Environment): void {
    switch (stmt.kind) {
      case 'let':
        // `let x: T;` exists from here on, unset (void) until assigned.
        env.define(stmt.name, stmt.value === null ? null : evaluate(stmt.value, env, this));
        return;
      case 'assign':
        this.assign(stmt.target, evaluate(stmt.value, env, this), env);
        return;
      case 'if':
        if (truthy(evaluate(stmt.condition, env, this))) this.execBlock(stmt.then, env.child());
        else if (stmt.else) this.execBlock(stmt.else, env.child());
        return;
      case 'loop':
        this.runLoop(toMilliseconds(stmt.every.value, stmt.every.unit), stmt.body, env);
        return;
      case 'while': {
        // Bounded like every loop, so a program cannot hang the simulator.
        for (let i = 0; i < this.maxLoopIterations && truthy(evaluate(stmt.condition, env, this)); i += 1) {
          this.execBlock(stmt.body, env.child());
        }
        return;
      }
      case 'publish':
        // The published value is evaluated (it may read sensors) but not recorded: frames carry the topic only.
        if (stmt.value) evaluate(stmt.value, env, this);
        this.publish(stmt.topic);
        return;
      case 'enter':
        this.enterMode(stmt.mode);
        return;
      case 'emergency_stop':
        this.latchEmergencyStop('emergency_stop statement');
        return;
      case 'return':
        throw new ReturnSignal(stmt.value ? evaluate(stmt.value, env, this) : null);
      case 'match': {
        const subject = describeValue(evaluate(stmt.subject, env, this));
        const arm = stmt.arms.find((a) => a.pattern === '_' || a.pattern === subject || subject.endsWith(`.${a.pattern}`));
        if (arm) this.execBlock(arm.body, env.child());
        return;
      }
      case 'run_pipeline':
        this.runPipeline(stmt.pipeline, stmt.loc);
        return;
      case 'expr':
        // Also `spawn t();`, `execute f();`, `call S();` on their own line: the keyword expression,
        // result discarded — one code path with `let h = spawn t();` (docs/program-language.md §4.1 "Forms added in issue 18").
        evaluate(stmt.expr, env, this);
        return;
      case 'opaque':
        return; // kept for the analyses; never executed
    }
  }

  private assign(target: Expr, value: Value, env: Environment): void {
    if (target.kind === 'ident') {
      if (!env.assign(target.name, value)) {
        throw new ProgramRuntimeError('runtime', `assignment to undefined variable '${target.name}'`, target.loc);
      }
      return;
    }
    if (target.kind === 'member') {
      const object = evaluate(target.object, env, this);
      if (isRecord(object)) {
        object[target.property] = value;
        return;
      }
    }
    throw new ProgramRuntimeError('runtime', `cannot assign to ${exprText(target)}`, target.loc);
  }

  /** `loop every D` (docs/program-language.md §24.2): absolute time per loop, a behavior_tick frame per iteration. */
  private runLoop(intervalMs: number, body: Stmt[], env: Environment): void {
    const { monitor } = this.current;
    for (let iteration = 1; iteration <= this.maxLoopIterations; iteration += 1) {
      const cap = monitor.speedCapAt(this.backend.pose);
      if (cap !== null) this.backend.clampFollowSpeed(cap);
      this.pace?.(intervalMs);
      this.backend.tick(intervalMs / 1000);
      this.simTimeMs = iteration * intervalMs;
      this.metrics.execution.sim_time_ms = Math.max(this.metrics.execution.sim_time_ms, this.simTimeMs);
      this.record('behavior_tick', { sim_time_ms: this.simTimeMs, interval_ms: intervalMs, iteration });
      this.metrics.execution.loop_iterations += 1;
      this.execBlock(body, env.child());
      this.pollDecisions();
      if (this.backend.emergencyStop) break;
    }
  }

  publish(topicName: string): void {
    const robot = this.current;
    const decl = robot.topics.get(topicName);
    const channel = decl ? topicChannel(decl) : `/${topicName}`;
    const type = decl?.type ?? 'Unknown';
    this.backend.log(`publish(${channel}, ${type})`);
    this.record('topic_publish', { topic: topicName });
    const entry = this.metrics.topics.get(topicName) ?? { channel, type, published: 0, deadline_misses: 0 };
    entry.published += 1;
    this.metrics.topics.set(topicName, entry);
    robot.topicLastPublished.set(topicName, this.simTimeMs);
  }

  private runPipeline(name: string, loc: Loc): void {
    const decl = this.current.decl.pipelines.find((p) => p.name === name);
    if (!decl) throw new ProgramRuntimeError('runtime', `unknown pipeline '${name}'`, loc);
    const entry = this.metrics.pipelines.get(name) ?? { runs: 0, budget_ms: decl.budget ? toMilliseconds(decl.budget.value, decl.budget.unit) : null };
    entry.runs += 1;
    this.metrics.pipelines.set(name, entry);
    this.record('pipeline_run', { pipeline: name });
    this.runBody(decl.body, this.current.env.child());
  }

  // ---------------------------------------------------------------------------------------------
  // ExpressionHost

  resolveName(name: string, loc: Loc): Value {
    const robot = this.robot;
    if (robot) {
      const sensor = robot.sensors.get(name);
      if (sensor) return new SensorRef(sensor);
      const actuator = robot.actuators.get(name);
      if (actuator) return new ActuatorRef(actuator);
      const topic = robot.topics.get(name);
      if (topic) return new TopicRef(topic);
      const model = robot.decl.aiModels.find((m) => m.name === name);
      if (model) return new ModelRef(model);
      const behavior = robot.decl.behaviors.find((b) => b.name === name);
      if (behavior) return new CallableRef(name, (args) => this.callBehavior(behavior, args));
      // Decision-tree signals name sensors by kind (`lidar.nearest_distance`, `gps.fix_quality`)
      // whatever the robot called them; program code never gets here (the type check rejects it).
      const byType = robot.decl.sensors.find((s) => sensorKind(s.type) === name.toLowerCase());
      if (byType) return new SensorRef(byType);
    }
    const builtin = BUILTINS[name];
    if (builtin) {
      return new CallableRef(name, (args) =>
        builtin(args, { log: (line) => this.logs.push(line), simTimeMs: () => this.simTimeMs }, loc),
      );
    }
    if (name === 'emergency_stop') return new CallableRef(name, () => (this.latchEmergencyStop('emergency_stop()'), null));
    if (name === 'safety') return new TypeRef('safety');
    if (name === 'self' || name === 'robot') return { name: robot?.decl.name ?? null, ...(this.traceState() as unknown as RecordValue) };
    if (robot) {
      const d = robot.decl;
      const named = [d.modes, d.pipelines, d.watchdogs, d.twins, d.stateMachines, d.agents, d.tasks].some((list) =>
        list.some((item) => item.name === name),
      );
      if (named || d.peers.includes(name) || d.buses.includes(name)) return name;
    }
    if (this.program.robots.some((r) => r.name === name)) return name;
    if (this.program.operatingModes.some((m) => m.name === name) || this.program.killSwitches.some((k) => k.name === name)) return name;
    if (this.program.generic.some((g) => g.name === name) || ['Distance', 'Angle', 'Path', 'mission'].includes(name)) return new TypeRef(name);
    if (this.program.imports.some((imp) => imp.split('.').includes(name))) return new TypeRef(name);
    throw new ProgramRuntimeError('runtime', `undefined identifier '${name}'`, loc);
  }

  member(object: Value, property: string, loc: Loc): Value {
    if (object === null) return null;
    if (isRecord(object)) return object[property] ?? null;
    if (object instanceof SensorRef) return this.member(this.readSensor(object.decl), property, loc);
    if (object instanceof TypeRef) return `${object.name}.${property}`;
    if (Array.isArray(object) || typeof object === 'string') return property === 'length' || property === 'len' ? object.length : null;
    return null;
  }

  callValue(callee: Value, args: ArgValue[], loc: Loc): Value {
    if (!(callee instanceof CallableRef)) throw new ProgramRuntimeError('runtime', `${describeValue(callee)} is not callable`, loc);
    this.callDepth += 1;
    try {
      if (this.callDepth > MAX_CALL_DEPTH) throw new ProgramRuntimeError('runtime', `call depth exceeded calling '${callee.name}'`, loc);
      return callee.invoke(args);
    } finally {
      this.callDepth -= 1;
    }
  }

  /**
   * Keyword expressions (docs/program-language.md §4.1 "Forms added in issue 18"). The target is looked up as
   * a task, behavior or module function of the robot. `execute` logs `action(name)` and `call` logs
   * `service(name)`, then run a declared body at once and yield its result, or — for an action or
   * service the program only declares (`action navigate: …`, a ROS-style service) — a stand-in
   * response. `spawn` queues the body to run after the robot's entry and yields a handle.
   */
  keywordCall(keyword: 'execute' | 'call' | 'spawn', target: string, args: ArgValue[], loc: Loc): Value {
    const body = this.bodyFor(target);
    if (keyword === 'spawn') {
      if (body === null) throw new ProgramRuntimeError('runtime', `spawn needs a task, behavior or function, and '${target}' is none`, loc);
      this.spawnCount += 1;
      this.spawnQueue.push({ target, run: () => body(args) });
      this.backend.log(`spawn(${target})`);
      return { type: 'TaskHandle', task: target, id: this.spawnCount };
    }
    this.backend.log(`${keyword === 'execute' ? 'action' : 'service'}(${target})`);
    if (body !== null) return this.callValue(new CallableRef(target, body), args, loc);
    return keyword === 'execute' ? { type: 'ActionResult', action: target, status: 'succeeded' } : { type: 'ServiceResponse', service: target, success: true };
  }

  /** The runnable body a keyword expression names: a task, behavior or module function. */
  private bodyFor(target: string): ((args: ArgValue[]) => Value) | null {
    const decl = this.robot?.decl;
    const task = decl?.tasks.find((t) => t.name === target);
    if (task) return (args) => this.callTask(task, args);
    const behavior = decl?.behaviors.find((b) => b.name === target);
    if (behavior) return (args) => this.callBehavior(behavior, args);
    const fn = this.program.functions.find((f) => f.name === target);
    return fn ? (args) => this.functionRef(fn).invoke(args) : null;
  }

  /** A task run on demand (called, executed or spawned): parameters bound, its `return` value yielded. */
  private callTask(task: TaskDecl, args: ArgValue[]): Value {
    const env = this.current.env.child();
    bindParams((task.params ?? []).map((p) => p.name), args, env);
    if (task.requires && !truthy(evaluate(task.requires, env, this))) return null;
    const result = this.runBody(task.body, env);
    this.metrics.execution.tasks_run += 1;
    return result;
  }

  /** Run spawned calls in order; a spawned body may spawn more (bounded like every loop). */
  private drainSpawnQueue(): void {
    let budget = this.maxLoopIterations * 10;
    while (this.spawnQueue.length > 0 && budget > 0) {
      budget -= 1;
      const next = this.spawnQueue.shift()!;
      this.record('spawn_run', { task: next.target });
      next.run();
    }
    this.spawnQueue = [];
  }

  callMethod(object: Value, method: string, args: ArgValue[], loc: Loc): Value {
    if (object instanceof SensorRef) return this.readSensor(object.decl);
    if (object instanceof ActuatorRef) {
      return actuate({ backend: this.backend, monitor: this.current.monitor, latchEmergencyStop: (reason) => this.latchEmergencyStop(reason) }, object.decl, method, args, loc);
    }
    if (object instanceof ModelRef) return this.inferMock(object.decl.name, method, args);
    if (object instanceof TopicRef) {
      this.publish(object.decl.name);
      return null;
    }
    if (object instanceof TypeRef) {
      if (object.name === 'safety' && method === 'validate') {
        return validateProposal(argument(args, 'proposal', 0) ?? null, this.robot?.monitor ?? null, this.backend);
      }
      return `${object.name}.${method}`;
    }
    if (object instanceof CallableRef) return this.callValue(object, args, loc);
    if (isRecord(object)) return recordMethod(object, method, args, loc, (callee, a, l) => this.callValue(callee, a, l));
    if (Array.isArray(object)) return listMethod(object, method, args);
    if (typeof object === 'string') return stringMethod(object, method, args);
    if (object === null) return null;
    throw new ProgramRuntimeError('runtime', `cannot call '${method}' on ${describeValue(object)}`, loc);
  }

  readSensor(sensor: SensorDecl): Value {
    const reading = this.backend.readSensor(sensor.type);
    return reading === null ? null : (reading as RecordValue);
  }

  /** The deterministic "mock" AI provider (docs/program-language.md §24.4): an unvalidated motion proposal. */
  private inferMock(model: string, method: string, args: ArgValue[]): Value {
    const entry = this.metrics.providers.get('mock') ?? { calls: 0, failures: 0 };
    entry.calls += 1;
    this.metrics.providers.set('mock', entry);
    this.record('provider_call', { category: 'ai', failed: false, function: method, module: model, provider_key: 'mock' }, false);
    const sensorTypes = this.current.decl.sensors.map((s) => s.type);
    const distance = scanDistance(args, sensorTypes, this.backend);
    return proposalRecord(model, mockProposal(promptOf(args), distance), distance);
  }

  private functionRef(fn: FunctionDecl): CallableRef {
    return new CallableRef(fn.name, (args) => {
      const env = (this.robot?.env ?? this.globals).child();
      bindParams(fn.params.map((p) => p.name), args, env);
      return this.runBody(fn.body, env);
    });
  }
}

function bindParams(names: string[], args: ArgValue[], env: Environment): void {
  const positional = args.filter((a) => a.name === null);
  names.forEach((name, index) => {
    const named = args.find((a) => a.name === name);
    env.define(name, named ? named.value : (positional[index]?.value ?? null));
  });
}

/** `gps` for GPS and GNSS receivers, else the lower-cased type (`lidar`, `imu`, `camera`). */
function sensorKind(type: string): string {
  const lower = type.toLowerCase();
  return lower === 'gnss' ? 'gps' : lower;
}

export function topicChannel(topic: TopicDecl): string {
  // A topic declared without a channel clause publishes on `/<name>` (docs/program-language.md §4.1 "Forms added in issue 18").
  return topic.channel ?? `/${topic.name}`;
}

