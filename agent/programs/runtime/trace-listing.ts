/**
 * Trace listing (docs/program-language.md §18): every `*.trace` under a root, newest first (ties by path), then limited.
 * All files are collected before sorting so the limit never depends on directory-walk order.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const DEFAULT_TRACE_LIMIT = 50;
export const MAX_TRACE_LIMIT = 200;

export interface TraceListingEntry {
  /** Relative to the root, `/`-separated. */
  path: string;
  absolute: string;
  size_bytes: number;
  modified_ms: number;
}

export interface TraceListing {
  root: string;
  traces: TraceListingEntry[];
  count: number;
}

/** Default 50; clamped to 1..200; anything that is not a number falls back to the default. */
export function clampTraceLimit(limit: number | string | null | undefined): number {
  const value = typeof limit === 'string' ? (limit.trim() === '' ? NaN : Number(limit)) : (limit ?? NaN);
  if (!Number.isFinite(value)) return DEFAULT_TRACE_LIMIT;
  return Math.min(MAX_TRACE_LIMIT, Math.max(1, Math.trunc(value)));
}

function collect(dir: string, out: string[]): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return; // unreadable directories are skipped, not fatal
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    // Symlinked directories are not followed (no cycles); symlinked files are listed.
    if (entry.isDirectory()) collect(full, out);
    else if (entry.name.endsWith('.trace') && (entry.isFile() || entry.isSymbolicLink())) out.push(full);
  }
}

export function listTraces(root: string, limit?: number | string | null): TraceListing {
  const absoluteRoot = path.resolve(root);
  const files: string[] = [];
  collect(absoluteRoot, files);
  const entries: TraceListingEntry[] = [];
  for (const file of files) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      continue;
    }
    if (!stat.isFile()) continue;
    entries.push({
      path: path.relative(absoluteRoot, file).split(path.sep).join('/'),
      absolute: file,
      size_bytes: stat.size,
      modified_ms: Math.floor(stat.mtimeMs),
    });
  }
  entries.sort((a, b) => b.modified_ms - a.modified_ms || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const traces = entries.slice(0, clampTraceLimit(limit));
  return { root: absoluteRoot, traces, count: traces.length };
}
