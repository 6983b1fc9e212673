/**
 * Program simulation (docs/program-language.md §16): a dry run counts robots; an executed run type-checks and interprets
 * the program against the simulated robot and, with `recordTrace`, saves the trace next to the
 * program (`<file without .sd>.trace`) or at `traceOut`.
 */
import type { Program } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import { NO_DECISION_SETTINGS, type DecisionSettings } from '../../settings/settings.js';
import { injectionPlan, type HealthOutcome } from './health-injection.js';
import { DEFAULT_MAX_LOOP_ITERATIONS, runProgram, type RunOutcome } from './interpreter.js';
import { writeTrace } from './trace-file.js';
import type { EscalationPort, EscalationRecord } from './escalations.js';

export interface SimulateOptions {
  /** The program's path: trace source and default trace location. */
  file: string;
  execute?: boolean;
  decisionTrace?: boolean;
  recordTrace?: boolean;
  maxLoopIterations?: number;
  /** Where to save the trace instead of next to the program. */
  traceOut?: string | null;
  /** `SVC_DECISION_TRACE` / `SVC_DECISION_POLICY_SIGNING_KEY` as parsed by loadSettings (default: off, unsigned). */
  decisions?: DecisionSettings;
  /**
   * `inject_health_faults`: inject GPSDegraded, CameraOffline, RobotHealthCritical and the
   * configuration's `[health] inject_faults` lists before each robot's entry (docs/program-language.md §24.1 step 4).
   */
  injectHealthFaults?: boolean;
  /** `--inject-failure NAME` (gps, camera, lidar, imu, health): one failure plus its recovery policies. */
  injectFailure?: string | null;
  /** Configuration whose `[health]` section the injection reads (ignored without injection). */
  config?: ResolvedConfig | null;
  /** The escalation store as this run sees it (docs/decisions.md § Escalations); absent: nothing granted, nothing kept. */
  escalations?: EscalationPort | null;
  /**
   * `svc sim|run --wall-clock` (docs/program-language.md §24.1): every loop iteration and scheduler
   * tick really waits its interval. The run blocks while it sleeps, so only the CLI asks for it.
   */
  wallClock?: boolean;
}

/** Sleeps `ms` milliseconds without returning to the event loop (the interpreter is synchronous). */
function sleepBlocking(ms: number): void {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export interface DryRunSimulation {
  robot_count: number;
  dry_run: true;
  status: 'planned';
}

export interface ExecutedSimulation {
  dry_run: false;
  status: 'completed';
  event_count: number;
  log_count: number;
  has_trace: boolean;
  trace_path: string | null;
  decision_trace: boolean;
  /** Escalations the run's decisions met; present only when there were some. */
  escalations?: EscalationRecord[];
  /** With `escalations`: whether the pending ones were registered in the escalation store. */
  escalations_registered?: boolean;
  result: {
    state: RunOutcome['state'];
    events: string[];
    logs: string[];
    metrics: Record<string, unknown>;
    mission_trace: Record<string, unknown> | null;
    twin_replay: Record<string, unknown> | null;
    /**
     * The robot's pose at every recorded frame that carries a state, in order (docs/program-language.md §16):
     * the trajectory the panel plots. A multi-robot run keeps the last robot's frames, like the trace.
     */
    path: PathPoint[];
    /** Present only when health faults or a failure were injected. */
    health?: HealthOutcome;
  };
}

export interface PathPoint {
  sim_time_ms: number;
  x: number;
  y: number;
  theta: number;
}

export type SimulationBody = DryRunSimulation | ExecutedSimulation;

/** `<file without .sd>.trace` (a file without the extension gets `.trace` appended). */
export function defaultTracePath(file: string): string {
  return file.endsWith('.sd') ? `${file.slice(0, -3)}.trace` : `${file}.trace`;
}

/**
 * Simulate a parsed program. Throws `ProgramRuntimeError` for type, runtime and contract faults.
 * Decision tracing is on with `decisionTrace` or `recordTrace` (scoped to this run), else when
 * the settings' `decisions.trace` (SVC_DECISION_TRACE) asks for it.
 */
export function simulateProgram(program: Program, options: SimulateOptions): SimulationBody {
  if (!options.execute) return { robot_count: program.robots.length, dry_run: true, status: 'planned' };
  const decisions = options.decisions ?? NO_DECISION_SETTINGS;
  const recordTrace = options.recordTrace ?? false;
  const decisionTrace = Boolean(options.decisionTrace) || recordTrace || decisions.trace;
  const outcome = runProgram(program, {
    maxLoopIterations: options.maxLoopIterations ?? DEFAULT_MAX_LOOP_ITERATIONS,
    decisionTrace,
    signingKey: decisions.policySigningKey,
    injection: injectionPlan({
      healthFaults: options.injectHealthFaults === true,
      failure: options.injectFailure ?? null,
      config: options.config ?? null,
    }),
    escalations: options.escalations ?? null,
    pace: options.wallClock === true ? sleepBlocking : null,
  });
  let tracePath: string | null = null;
  if (recordTrace) {
    tracePath = options.traceOut ?? defaultTracePath(options.file);
    writeTrace(tracePath, { version: 2, source: options.file, deterministic: true, frames: outcome.frames });
  }
  return {
    dry_run: false,
    status: 'completed',
    event_count: outcome.events.length,
    log_count: outcome.logs.length,
    has_trace: tracePath !== null,
    trace_path: tracePath,
    decision_trace: decisionTrace,
    ...(outcome.escalations.length > 0 ? { escalations: outcome.escalations } : {}),
    result: {
      state: outcome.state,
      events: outcome.events,
      logs: outcome.logs,
      metrics: outcome.metrics,
      mission_trace: outcome.missionTrace,
      twin_replay: outcome.twinReplay,
      path: outcome.frames.flatMap((f) => (f.state ? [{ sim_time_ms: f.sim_time_ms, x: f.state.pose.x, y: f.state.pose.y, theta: f.state.pose.theta }] : [])),
      ...(outcome.health ? { health: outcome.health } : {}),
    },
  };
}
