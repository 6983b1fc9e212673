/**
 * Trace time travel (docs/analytics.md § Time travel): what a recorded simulation trace
 * (agent/programs/runtime/trace-file.ts) shows as of a point in simulated time. The trace path is
 * confined to the project root or the program's directory; anything else is "not found".
 */
import fs from 'node:fs';
import path from 'node:path';
import { badRequest } from '../core/errors.js';
import { resolveInsideProject } from '../project/project-paths.js';
import { parseOffset, readTrace, type TraceFile, type TraceFrame } from '../programs/runtime/trace-file.js';

export const FACETS = ['decisions', 'health', 'readiness', 'safety'] as const;
type Facet = (typeof FACETS)[number];

/** `decisions` when absent; `all` or a list left empty after dropping unknown names → every facet. */
export function parseInspect(raw: string | undefined): Facet[] {
  if (raw === undefined || raw.trim() === '') return ['decisions'];
  const names = raw.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '');
  if (names.includes('all')) return [...FACETS];
  const out = new Set<Facet>();
  for (const n of names) {
    const f = n === 'decision' ? 'decisions' : n;
    if ((FACETS as readonly string[]).includes(f)) out.add(f as Facet);
  }
  return out.size === 0 ? [...FACETS] : FACETS.filter((f) => out.has(f));
}

const badAt = (raw: string) => badRequest(`Invalid --at value '${raw}'; expected T+mm:ss, HH:MM:SS, milliseconds, or ISO-8601`);

/** Milliseconds of simulated time for `at` (milliseconds, T+…, a clock, or an RFC 3339 time matched against `recorded_at`). */
export function parseAt(raw: string, trace: TraceFile): number {
  const text = raw.trim();
  if (text === '') throw badAt(raw);
  try {
    return parseOffset(text);
  } catch {
    /* not a plain offset */
  }
  const clock = /^(\d+):(\d{1,2}(?:\.\d+)?)(?::(\d{1,2}(?:\.\d+)?))?$/.exec(text);
  if (clock) {
    const [, a, b, c] = clock;
    const [h, m, s] = c === undefined ? [0, Number(a), Number(b)] : [Number(a), Number(b), Number(c)];
    if (s < 60 && (c === undefined || m < 60)) return Math.round((h * 3600 + m * 60 + s) * 1_000_000) / 1000;
    throw badAt(raw);
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    const when = Date.parse(text);
    if (Number.isNaN(when)) throw badAt(raw);
    const frame = trace.frames.find((f) => {
      const at = typeof f.payload['recorded_at'] === 'string' ? Date.parse(f.payload['recorded_at']) : NaN;
      return !Number.isNaN(at) && at >= when;
    });
    // Past every recorded frame: the whole trace.
    return frame ? frame.sim_time_ms : trace.frames.reduce((max, f) => Math.max(max, f.sim_time_ms), 0);
  }
  throw badAt(raw);
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function within(dir: string, p: string): boolean {
  const rel = path.relative(dir, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The trace a request names: as given relative to the project root, then relative to the program's
 * directory; only `.trace` files inside the project root (or the program's directory), never in the
 * state directory, symlinks followed. Anything else is 400 `trace file not found: <raw>`, so a caller
 * learns nothing about files outside.
 */
export function resolveTrace(raw: string, where: { projectRoot: string; programDir: string | null; stateDir: string }): string {
  const notFound = () => badRequest(`trace file not found: ${raw}`);
  if (!raw.toLowerCase().endsWith('.trace') || raw.includes('\0')) throw notFound();
  const bases = [where.projectRoot, ...(where.programDir ? [where.programDir] : [])];
  for (const base of bases) {
    let candidate: string;
    try {
      candidate = resolveInsideProject(base, path.resolve(base, raw));
    } catch {
      continue;
    }
    const real = (() => {
      try {
        return fs.realpathSync(candidate);
      } catch {
        return candidate;
      }
    })();
    const stateDir = (() => {
      try {
        return fs.realpathSync(where.stateDir);
      } catch {
        return path.resolve(where.stateDir);
      }
    })();
    if (within(stateDir, real)) continue;
    if (isFile(candidate)) return candidate;
  }
  throw notFound();
}

export function loadTraceFile(file: string): TraceFile {
  try {
    return readTrace(file);
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}

const entry = (f: TraceFrame) => `t=${f.sim_time_ms.toFixed(1)}ms ${f.event} ${JSON.stringify(f.payload)}`;
const WORDS: Record<Exclude<Facet, 'decisions'>, string[]> = {
  health: ['health', 'fault', 'degraded'],
  readiness: ['readiness', 'mission_ready'],
  safety: ['safety', 'emergency', 'kill_switch', 'stop'],
};

export function timeTravel(trace: TraceFile, atMs: number, facets: Facet[]) {
  const frames = trace.frames.filter((f) => f.sim_time_ms <= atMs);
  const latest = frames.reduce<TraceFrame | null>((best, f) => (best === null || f.sim_time_ms >= best.sim_time_ms ? f : best), null);
  const decisions: unknown[] = [];
  const events: Record<Exclude<Facet, 'decisions'>, string[]> = { health: [], readiness: [], safety: [] };
  for (const f of frames) {
    if (facets.includes('decisions')) {
      if (f.event.includes('decision') || 'version' in f.payload) decisions.push({ sim_time_ms: f.sim_time_ms, event: f.event, payload: f.payload });
      else if ('decision' in f.payload) decisions.push({ sim_time_ms: f.sim_time_ms, event: f.event, decision: f.payload['decision'] });
    }
    const text = `${f.event} ${JSON.stringify(f.payload)}`.toLowerCase();
    for (const facet of ['health', 'readiness', 'safety'] as const) {
      if (facets.includes(facet) && WORDS[facet].some((w) => text.includes(w))) events[facet].push(entry(f));
    }
  }
  return {
    source: trace.source,
    at_ms: atMs,
    total_frames: trace.frames.length,
    inspected_frames: frames.length,
    state: {
      at_ms: atMs,
      frame_count: frames.length,
      latest_event: latest?.event ?? null,
      state: latest?.state ?? null,
      decisions,
      health_events: events.health,
      readiness_events: events.readiness,
      safety_events: events.safety,
    },
  };
}
