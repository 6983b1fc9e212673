import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { clampTraceLimit, listTraces } from '../../../agent/programs/runtime/trace-listing.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, number>): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-traces-')));
  dirs.push(root);
  for (const [rel, seconds] of Object.entries(files)) {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"frames":[]}'.padEnd(20 + rel.length, ' '));
    fs.utimesSync(file, seconds, seconds);
  }
  return root;
}

describe('listTraces', () => {
  it('lists every .trace newest first, ties by path, with sizes and times', () => {
    const root = project({
      'old.trace': 1000,
      'b/d.trace': 3000,
      'b/c.trace': 3000,
      'deep/x/y/z.trace': 2000,
      'notes.txt': 4000,
      'node_modules/pkg/run.trace': 1500,
    });
    const listing = listTraces(root);
    expect(listing.root).toBe(root);
    expect(listing.traces.map((t) => t.path)).toEqual(['b/c.trace', 'b/d.trace', 'deep/x/y/z.trace', 'node_modules/pkg/run.trace', 'old.trace']);
    expect(listing.count).toBe(5);
    expect(listing.traces[0]).toEqual({
      path: 'b/c.trace',
      absolute: path.join(root, 'b', 'c.trace'),
      size_bytes: fs.statSync(path.join(root, 'b', 'c.trace')).size,
      modified_ms: 3_000_000,
    });
  });

  it('sorts before limiting, so the newest survive', () => {
    const root = project({ 'a.trace': 100, 'z/new.trace': 900, 'm.trace': 500 });
    expect(listTraces(root, 2).traces.map((t) => t.path)).toEqual(['z/new.trace', 'm.trace']);
    expect(listTraces(root, 0).traces.map((t) => t.path)).toEqual(['z/new.trace']);
    expect(listTraces(root, '2').count).toBe(2);
  });

  it('clamps the limit to 1..200 with 50 by default', () => {
    expect(clampTraceLimit(undefined)).toBe(50);
    expect(clampTraceLimit(null)).toBe(50);
    expect(clampTraceLimit('abc')).toBe(50);
    expect(clampTraceLimit('')).toBe(50);
    expect(clampTraceLimit(0)).toBe(1);
    expect(clampTraceLimit(-5)).toBe(1);
    expect(clampTraceLimit(500)).toBe(200);
    expect(clampTraceLimit('75')).toBe(75);
  });

  it('returns an empty listing for an empty or missing root', () => {
    const root = project({});
    expect(listTraces(root)).toEqual({ root, traces: [], count: 0 });
    expect(listTraces(path.join(root, 'missing')).count).toBe(0);
  });
});
