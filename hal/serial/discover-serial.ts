/**
 * Serial port discovery.
 *
 * Candidates = configured paths and glob patterns (`/dev/ttyUSB*`, `/tmp/svc-*`; `*` and `?` in the last
 * path segment) ∪ `SerialPort.list()` (needs `udevadm`; a failure is reported, not fatal) ∪ the default
 * globs `/dev/ttyUSB*`, `/dev/ttyACM*`. Entries are folded by realpath (a `/dev/serial/by-id/…` or
 * socat symlink and its target are one port) and keep every name they were found under.
 */
import { promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export type SerialCandidateSource = 'configured' | 'list' | 'default';

export interface SerialCandidate {
  /** The name to open: the first configured/listed name (keeps stable symlinks like /dev/serial/by-id/...). */
  path: string;
  /** The device node after following symlinks; the identity used for de-duplication. */
  realPath: string;
  /** Every name this port was found under, `path` first. */
  aliases: string[];
  sources: SerialCandidateSource[];
  manufacturer?: string;
  serialNumber?: string;
  vendorId?: string;
  productId?: string;
  pnpId?: string;
}

export interface DiscoverSerialOptions {
  /** Configured paths and glob patterns (e.g. from SVC_HAL_SERIAL_PORTS). */
  patterns?: string[];
  /** Also glob /dev/ttyUSB* and /dev/ttyACM*. Default true. */
  defaults?: boolean;
  /** Ask `SerialPort.list()` (udev). Default true. */
  useList?: boolean;
  /** Give up on `SerialPort.list()` after this long. Default 3000 ms. */
  listTimeoutMs?: number;
  /** Override for tests. */
  list?: () => Promise<Array<Record<string, string | undefined>>>;
}

export interface DiscoverSerialResult {
  ports: SerialCandidate[];
  /** Configured plain paths (no wildcard) that do not exist right now. */
  missing: string[];
  /** Non-fatal problems (e.g. "SerialPort.list failed: spawn udevadm ENOENT"). */
  errors: string[];
}

export const DEFAULT_SERIAL_GLOBS = ['/dev/ttyUSB*', '/dev/ttyACM*'];

/** Split a comma-separated list (SVC_HAL_SERIAL_PORTS style), trimming blanks. */
export function splitPortList(value: string | undefined | null): string[] {
  if (!value) return [];
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function hasGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

/** A RegExp for one path segment: `*` = any run of characters except `/`, `?` = one character. */
export function globSegmentToRegExp(segment: string): RegExp {
  let re = '^';
  for (const c of segment) {
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${re}$`);
}

/**
 * Expand a pattern whose wildcards are in the last path segment only. A pattern without wildcards
 * yields itself when it exists. Hidden entries match only when the pattern segment starts with a dot.
 * Results are sorted naturally (ttyUSB2 before ttyUSB10).
 */
export async function expandSerialGlob(pattern: string): Promise<string[]> {
  if (!hasGlob(pattern)) return (await exists(pattern)) ? [pattern] : [];
  const dir = path.dirname(pattern);
  const segment = path.basename(pattern);
  if (hasGlob(dir)) throw new RangeError(`wildcards are only supported in the last path segment: ${pattern}`);
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return [];
  }
  const re = globSegmentToRegExp(segment);
  const dotOk = segment.startsWith('.');
  return names
    .filter((n) => re.test(n) && (dotOk || !n.startsWith('.')))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((n) => path.join(dir, n));
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.stat(p); // follows symlinks: a dangling socat link is not a port
    return true;
  } catch {
    return false;
  }
}

async function listWithTimeout(opts: DiscoverSerialOptions): Promise<Array<Record<string, string | undefined>>> {
  const list =
    opts.list ??
    (async () => {
      const require = createRequire(import.meta.url);
      const { SerialPort } = require('serialport') as { SerialPort: { list(): Promise<Array<Record<string, string | undefined>>> } };
      return SerialPort.list();
    });
  const timeoutMs = opts.listTimeoutMs ?? 3000;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      list(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/** Discover serial ports; never throws for environmental problems (they land in `errors`). */
export async function discoverSerialPorts(options: DiscoverSerialOptions = {}): Promise<DiscoverSerialResult> {
  const errors: string[] = [];
  const missing: string[] = [];
  const found: Array<{ path: string; source: SerialCandidateSource; info?: Record<string, string | undefined> }> = [];

  for (const pattern of options.patterns ?? []) {
    try {
      const matches = await expandSerialGlob(pattern);
      if (!hasGlob(pattern) && matches.length === 0) missing.push(pattern);
      for (const m of matches) found.push({ path: m, source: 'configured' });
    } catch (err) {
      errors.push(`${pattern}: ${(err as Error).message}`);
    }
  }

  if (options.useList ?? true) {
    try {
      for (const info of await listWithTimeout(options)) {
        if (info.path) found.push({ path: info.path, source: 'list', info });
      }
    } catch (err) {
      errors.push(`SerialPort.list failed (${(err as Error).message}); using globs only`);
    }
  }

  if (options.defaults ?? true) {
    for (const pattern of DEFAULT_SERIAL_GLOBS) {
      for (const m of await expandSerialGlob(pattern)) found.push({ path: m, source: 'default' });
    }
  }

  const byReal = new Map<string, SerialCandidate>();
  for (const f of found) {
    let realPath: string;
    try {
      realPath = await fs.realpath(f.path);
    } catch {
      continue; // vanished between listing and resolving, or a dangling link
    }
    let c = byReal.get(realPath);
    if (!c) {
      c = { path: f.path, realPath, aliases: [f.path], sources: [f.source] };
      byReal.set(realPath, c);
    } else {
      if (!c.aliases.includes(f.path)) c.aliases.push(f.path);
      if (!c.sources.includes(f.source)) c.sources.push(f.source);
    }
    if (f.info) {
      for (const key of ['manufacturer', 'serialNumber', 'vendorId', 'productId', 'pnpId'] as const) {
        const v = f.info[key];
        if (v && c[key] === undefined) c[key] = v;
      }
    }
  }
  return { ports: [...byReal.values()], missing, errors };
}
