/**
 * Trace files (docs/program-language.md §26): the recorded frames of one simulation run, read by replay,
 * diagnose, explain and audit. Readers are lenient about absent fields (defaults below) and strict
 * about shape: anything that is not a trace fails with `invalid trace <path>: <detail>`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeFileDurablySync } from '../../state/durable-file.js';

export interface TracePose {
  x: number;
  y: number;
  theta: number;
  z: number;
}

export interface TraceState {
  pose: TracePose;
  velocity: { linear: number; angular: number };
  emergency_stop: boolean;
  active_mode: string | null;
}

export interface TraceFrame {
  sim_time_ms: number;
  event: string;
  payload: Record<string, unknown>;
  /** Null for frames recorded without a backend (e.g. provider_call) and in version-1 traces. */
  state: TraceState | null;
}

export interface TraceFile {
  /** 1, or 2 as soon as any frame carries a state. */
  version: number;
  /** The program the trace was recorded from; relative to the trace's directory when saved. */
  source: string;
  deterministic: boolean;
  frames: TraceFrame[];
}

/** The version a trace is saved with: 2 once any frame carries a state. */
export function traceVersion(frames: readonly TraceFrame[]): number {
  return frames.some((frame) => frame.state !== null) ? 2 : 1;
}

class TraceShapeError extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function numberField(obj: Record<string, unknown>, key: string, where: string, fallback: number): number {
  const value = obj[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TraceShapeError(`${where}.${key} must be a number`);
  }
  return value;
}

function parseState(value: unknown, where: string): TraceState | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw new TraceShapeError(`${where} must be an object or null`);
  const pose = value['pose'] ?? {};
  const velocity = value['velocity'] ?? {};
  if (!isObject(pose)) throw new TraceShapeError(`${where}.pose must be an object`);
  if (!isObject(velocity)) throw new TraceShapeError(`${where}.velocity must be an object`);
  const estop = value['emergency_stop'] ?? false;
  if (typeof estop !== 'boolean') throw new TraceShapeError(`${where}.emergency_stop must be a boolean`);
  const mode = value['active_mode'] ?? null;
  if (mode !== null && typeof mode !== 'string') throw new TraceShapeError(`${where}.active_mode must be a string or null`);
  return {
    pose: {
      x: numberField(pose, 'x', `${where}.pose`, 0),
      y: numberField(pose, 'y', `${where}.pose`, 0),
      theta: numberField(pose, 'theta', `${where}.pose`, 0),
      z: numberField(pose, 'z', `${where}.pose`, 0),
    },
    velocity: {
      linear: numberField(velocity, 'linear', `${where}.velocity`, 0),
      angular: numberField(velocity, 'angular', `${where}.velocity`, 0),
    },
    emergency_stop: estop,
    active_mode: mode,
  };
}

function parseFrame(value: unknown, index: number): TraceFrame {
  const where = `frames[${index}]`;
  if (!isObject(value)) throw new TraceShapeError(`${where} must be an object`);
  const event = value['event'];
  if (typeof event !== 'string') throw new TraceShapeError(`${where}.event must be a string`);
  const time = value['sim_time_ms'];
  if (typeof time !== 'number' || !Number.isFinite(time)) {
    throw new TraceShapeError(`${where}.sim_time_ms must be a number`);
  }
  const payload = value['payload'] ?? {};
  if (!isObject(payload)) throw new TraceShapeError(`${where}.payload must be an object`);
  return { sim_time_ms: time, event, payload, state: parseState(value['state'], `${where}.state`) };
}

/** Validate an already-parsed JSON value as a trace (defaults applied, docs/program-language.md §26). */
export function parseTraceValue(value: unknown): TraceFile {
  if (!isObject(value)) throw new TraceShapeError('top level must be an object');
  const framesValue = value['frames'] ?? [];
  if (!Array.isArray(framesValue)) throw new TraceShapeError('frames must be an array');
  const frames = framesValue.map((frame, index) => parseFrame(frame, index));
  const source = value['source'] ?? '';
  if (typeof source !== 'string') throw new TraceShapeError('source must be a string');
  const deterministic = value['deterministic'] ?? false;
  if (typeof deterministic !== 'boolean') throw new TraceShapeError('deterministic must be a boolean');
  const version = value['version'] ?? traceVersion(frames);
  if (typeof version !== 'number' || !Number.isInteger(version)) throw new TraceShapeError('version must be an integer');
  return { version, source, deterministic, frames };
}

/**
 * Read and validate a trace file. A missing file surfaces as the filesystem error (code ENOENT),
 * so callers can answer "not found"; malformed JSON or a wrong shape throws
 * `invalid trace <path>: <detail>`.
 */
export function readTrace(tracePath: string): TraceFile {
  const text = fs.readFileSync(tracePath, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`invalid trace ${tracePath}: ${(error as Error).message}`);
  }
  try {
    return parseTraceValue(value);
  } catch (error) {
    if (error instanceof TraceShapeError) throw new Error(`invalid trace ${tracePath}: ${error.message}`);
    throw error;
  }
}

/**
 * The `source` as stored in a trace saved at `tracePath`: relative to the trace's directory.
 * A relative `source` is taken relative to the process working directory first.
 */
export function sourceRelativeToTrace(source: string, tracePath: string): string {
  if (source === '') return source;
  const traceDir = path.dirname(path.resolve(tracePath));
  const relative = path.relative(traceDir, path.resolve(source));
  return relative === '' ? '.' : relative.split(path.sep).join('/');
}


/**
 * Save a trace pretty-printed, atomically (temp file + rename, so a reader never sees half a
 * trace). `version` is recomputed from the frames and `source` is made relative to the trace's
 * directory. Returns the trace as written.
 */
export function writeTrace(tracePath: string, trace: TraceFile): TraceFile {
  const frames = trace.frames.map((frame) => ({
    sim_time_ms: frame.sim_time_ms,
    event: frame.event,
    payload: frame.payload ?? {},
    state: frame.state ?? null,
  }));
  const written: TraceFile = {
    version: traceVersion(frames),
    source: sourceRelativeToTrace(trace.source, tracePath),
    deterministic: trace.deterministic,
    frames,
  };
  fs.mkdirSync(path.dirname(path.resolve(tracePath)), { recursive: true });
  writeFileDurablySync(tracePath, `${JSON.stringify(written, null, 2)}\n`, 0o644);
  return written;
}

/**
 * A replay offset (`--from`, docs/program-language.md §27): plain milliseconds (`1500`), `T+mm:ss` or `T+hh:mm:ss`
 * (seconds may carry a fraction). Returns milliseconds.
 */
export function parseOffset(text: string): number {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const clock = /^T\+(\d+):(\d{1,2}(?:\.\d+)?)(?::(\d{1,2}(?:\.\d+)?))?$/i.exec(trimmed);
  if (clock) {
    const [, first, second, third] = clock;
    // Two parts are minutes:seconds; three are hours:minutes:seconds.
    const hours = third === undefined ? 0 : Number(first);
    const minutes = third === undefined ? Number(first) : Number(second);
    const seconds = third === undefined ? Number(second) : Number(third);
    const wellFormed = seconds < 60 && (third === undefined || (Number.isInteger(minutes) && minutes < 60));
    if (wellFormed) return Math.round((hours * 3600 + minutes * 60 + seconds) * 1_000_000) / 1000;
  }
  throw new Error(`invalid offset '${text}': expected milliseconds, T+mm:ss or T+hh:mm:ss`);
}

/** Frames from an offset on: replay starts at the first frame with sim_time_ms ≥ offset (docs/program-language.md §27). */
export function framesFrom(frames: readonly TraceFrame[], offsetMs: number): TraceFrame[] {
  const start = frames.findIndex((frame) => frame.sim_time_ms >= offsetMs);
  return start < 0 ? [] : frames.slice(start);
}
