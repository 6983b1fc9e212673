/**
 * Trace replay (docs/program-language.md §17, §27): inspect a trace, play its states back onto a fresh simulated robot, or
 * re-run its source program and verify that the same events happen at the same simulated times.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { Program } from '../language/ast.js';
import { parseProgram } from '../language/index.js';
import { injectionPlanFromFrames } from './health-injection.js';
import { DEFAULT_MAX_LOOP_ITERATIONS, runProgram } from './interpreter.js';
import { SimRobot, type Pose } from './sim-robot.js';
import { framesFrom, parseOffset, readTrace, type TraceFile, type TraceFrame } from './trace-file.js';
import type { EscalationPort } from './escalations.js';

/** Time tolerance of a deterministic comparison, in milliseconds. */
export const TIME_TOLERANCE_MS = 0.001;

export type ProgramLoader = (file: string) => Program;

export type ReplayMode = 'inspect' | 'playback' | 'deterministic';

export interface ReplayOptions {
  /** Explicit mode; otherwise `playback` (checked first) and `deterministic` pick it. */
  mode?: ReplayMode;
  deterministic?: boolean;
  /** Checked before `deterministic`. */
  playback?: boolean;
  /**
   * Path of the trace when an already-read `TraceFile` is passed: a relative `source` is looked
   * up beside it. Without it, a relative source can only be resolved against the working directory.
   */
  traceFile?: string;
  /** `--from`: milliseconds or `T+mm:ss` / `T+hh:mm:ss`. */
  from?: string | number | null;
  /** Parses the trace's source program (default: read the file and `parseProgram`). */
  loadProgram?: ProgramLoader;
  maxLoopIterations?: number;
  /** Key that signs the re-run's decision envelopes (`Settings.decisions.policySigningKey`). */
  signingKey?: string | null;
}

export interface InspectResult {
  source: string;
  frame_count: number;
  deterministic: boolean;
  loaded: true;
}

export interface PlaybackResult {
  mode: 'playback';
  frames_applied: number;
  states_applied: number;
  final_pose: Pose;
  loaded: true;
}

export interface Verification {
  ok: boolean;
  matched: number;
  mismatches: string[];
}

export interface DeterministicResult {
  mode: 'deterministic';
  source: string;
  frame_count: number;
  verification: Verification;
  loaded: true;
}

export type ReplayResult = InspectResult | PlaybackResult | DeterministicResult;

/** The trace's source program could not be found where the trace points (docs/program-language.md §17, §26). */
export class TraceSourceNotFoundError extends Error {
  constructor(
    readonly source: string,
    /** Where it was looked for (null when the trace names no source at all). */
    readonly resolved: string | null = null,
    readonly tracePath: string | null = null,
  ) {
    super(
      resolved === null
        ? `trace source not found: the trace${tracePath ? ` ${tracePath}` : ''} names no source program`
        : `trace source not found: ${source} (looked for ${resolved}${tracePath ? `, relative to the folder of the trace ${tracePath}` : ''})`,
    );
    this.name = 'TraceSourceNotFoundError';
  }
}

function offsetMs(from: string | number | null | undefined): number {
  if (from === null || from === undefined || from === '') return 0;
  return typeof from === 'number' ? from : parseOffset(from);
}

const defaultLoader: ProgramLoader = (file) => parseProgram(fs.readFileSync(file, 'utf8'), file);

/** A trace given by path or already read, with the path its relative source is resolved from. */
function loadTrace(input: string | TraceFile, traceFile?: string): { trace: TraceFile; tracePath: string | null } {
  if (typeof input === 'string') return { trace: readTrace(input), tracePath: input };
  return { trace: input, tracePath: traceFile ?? null };
}

export function inspectTrace(input: string | TraceFile): InspectResult {
  const { trace } = loadTrace(input);
  return { source: trace.source, frame_count: trace.frames.length, deterministic: trace.deterministic, loaded: true };
}

/**
 * Apply each frame's state (from the offset) to a fresh simulator. `events` lists the frame
 * events in order for the CLI's output. Nothing sleeps between frames, here or in the CLI
 * (docs/program-language.md §27).
 */
export function playbackTrace(input: string | TraceFile, from?: string | number | null): { replay: PlaybackResult; events: TraceFrame[] } {
  const { trace } = loadTrace(input);
  const frames = framesFrom(trace.frames, offsetMs(from));
  const robot = new SimRobot();
  let statesApplied = 0;
  for (const frame of frames) {
    if (frame.state === null) continue;
    robot.applyState(frame.state);
    statesApplied += 1;
  }
  return {
    replay: { mode: 'playback', frames_applied: frames.length, states_applied: statesApplied, final_pose: { ...robot.pose }, loaded: true },
    events: frames,
  };
}

/**
 * Where a trace's `source` points (docs/program-language.md §17, §26): an absolute path as it is, a
 * relative one against the folder of the trace file, which is how a saved trace writes it, so a
 * replay works from any working directory. A trace with no known path (already read by the caller)
 * can only be taken relative to the working directory.
 */
export function traceSourcePath(source: string, tracePath: string | null): string {
  if (path.isAbsolute(source)) return source;
  return tracePath === null ? path.resolve(source) : path.resolve(path.dirname(path.resolve(tracePath)), source);
}

/** The trace's source program, which must exist as a file where the trace points. */
export function resolveTraceSource(source: string, tracePath: string | null): string {
  if (source === '') throw new TraceSourceNotFoundError(source, null, tracePath);
  const resolved = traceSourcePath(source, tracePath);
  if (fs.existsSync(resolved) && fs.statSync(resolved).isFile()) return resolved;
  throw new TraceSourceNotFoundError(source, resolved, tracePath);
}

/** Compare expected and actual frames index by index (event names and |Δt| only, docs/program-language.md §27). */
export function compareFrames(expected: readonly TraceFrame[], actual: readonly TraceFrame[]): Verification {
  const matched = Math.min(expected.length, actual.length);
  const mismatches: string[] = [];
  for (let i = 0; i < matched; i += 1) {
    const want = expected[i]!;
    const got = actual[i]!;
    if (want.event !== got.event) {
      mismatches.push(`frame ${i}: expected event ${want.event} at ${want.sim_time_ms}ms, got ${got.event} at ${got.sim_time_ms}ms`);
    } else if (Math.abs(want.sim_time_ms - got.sim_time_ms) > TIME_TOLERANCE_MS) {
      mismatches.push(`frame ${i}: ${want.event} expected at ${want.sim_time_ms}ms, got ${got.sim_time_ms}ms`);
    }
  }
  if (expected.length !== actual.length) {
    mismatches.push(`frame count mismatch: expected ${expected.length}, got ${actual.length}`);
  }
  return { ok: mismatches.length === 0, matched, mismatches };
}

/**
 * Re-run the trace's source with the simulated clock and recording on (decision tracing on, as
 * when the trace was recorded) and verify it reproduces the trace from the offset. A trace
 * recorded with injected health faults names them in its `health_fault_injected` frames; the
 * re-run injects the same ones.
 */
export function verifyDeterministic(input: string | TraceFile, options: ReplayOptions = {}): DeterministicResult {
  const { trace, tracePath } = loadTrace(input, options.traceFile);
  const source = resolveTraceSource(trace.source, tracePath);
  const program = (options.loadProgram ?? defaultLoader)(source);
  const outcome = runProgram(program, {
    maxLoopIterations: options.maxLoopIterations ?? DEFAULT_MAX_LOOP_ITERATIONS,
    decisionTrace: true,
    signingKey: options.signingKey ?? null,
    injection: injectionPlanFromFrames(trace.frames),
    escalations: grantsFromFrames(trace.frames),
  });
  const offset = offsetMs(options.from);
  const expected = framesFrom(trace.frames, offset);
  const actual = framesFrom(outcome.frames, offset);
  return { mode: 'deterministic', source, frame_count: expected.length, verification: compareFrames(expected, actual), loaded: true };
}

/**
 * The re-run sees the escalations granted as they were when the trace was recorded (decision frames
 * whose `escalation_path` says `granted`), so it reproduces the trace whatever the store holds now,
 * and it registers nothing.
 */
function grantsFromFrames(frames: readonly { payload?: unknown }[]): EscalationPort {
  const granted = new Set<string>();
  for (const f of frames) {
    const path = (f.payload as { escalation_path?: unknown } | undefined)?.escalation_path;
    if (!Array.isArray(path)) continue;
    for (const step of path) {
      const s = step as { escalation_id?: unknown; granted?: unknown } | null;
      if (s && typeof s === 'object' && s.granted === true && typeof s.escalation_id === 'string') granted.add(s.escalation_id);
    }
  }
  return { isGranted: (id) => granted.has(id), registerPending: () => undefined };
}

/** docs/program-language.md §17 dispatch: playback (checked first), deterministic, else inspect. */
export function replayTrace(input: string | TraceFile, options: ReplayOptions = {}): ReplayResult {
  const mode: ReplayMode = options.mode ?? (options.playback ? 'playback' : options.deterministic ? 'deterministic' : 'inspect');
  if (mode === 'playback') return playbackTrace(input, options.from).replay;
  if (mode === 'deterministic') return verifyDeterministic(input, options);
  return inspectTrace(input);
}
