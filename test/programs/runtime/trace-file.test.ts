import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import {
  framesFrom,
  parseOffset,
  readTrace,
  writeTrace,
  type TraceFile,
  type TraceFrame,
} from '../../../agent/programs/runtime/trace-file.js';

const dirs: string[] = [];
function tmpDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-trace-')));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const state = {
  pose: { x: 0.04, y: 0, theta: 0, z: 0 },
  velocity: { linear: 0.4, angular: 0 },
  emergency_stop: false,
  active_mode: 'normal',
};

describe('trace files', () => {
  it('writes version 2 once a frame has a state, pretty-printed, source relative to the trace', () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, 'programs'));
    const tracePath = path.join(dir, 'traces', 'run.trace');
    const frame: TraceFrame = { sim_time_ms: 100, event: 'behavior_tick', payload: { sim_time_ms: 100, interval_ms: 100, iteration: 1 }, state };
    const trace: TraceFile = { version: 1, source: path.join(dir, 'programs', 'patrol.sd'), deterministic: true, frames: [frame] };
    const written = writeTrace(tracePath, trace);
    expect(written.version).toBe(2);
    expect(written.source).toBe('../programs/patrol.sd');
    const text = fs.readFileSync(tracePath, 'utf8');
    expect(text.startsWith('{\n  "version": 2,\n  "source": "../programs/patrol.sd",\n  "deterministic": true,')).toBe(true);
    expect(text).toContain('"sim_time_ms": 100,');
    expect(fs.readdirSync(path.join(dir, 'traces'))).toEqual(['run.trace']);
    const back = readTrace(tracePath);
    expect(back).toEqual({ version: 2, source: '../programs/patrol.sd', deterministic: true, frames: [frame] });
  });

  it('writes version 1 when no frame has a state', () => {
    const dir = tmpDir();
    const tracePath = path.join(dir, 'a.trace');
    const written = writeTrace(tracePath, {
      version: 2,
      source: path.join(dir, 'a.sd'),
      deterministic: false,
      frames: [{ sim_time_ms: 5, event: 'provider_call', payload: { failed: false }, state: null }],
    });
    expect(written.version).toBe(1);
    expect(written.source).toBe('a.sd');
    expect(JSON.parse(fs.readFileSync(tracePath, 'utf8')).frames[0].state).toBeNull();
  });

  it('fills defaults for absent fields and accepts 100.0 like 100', () => {
    const dir = tmpDir();
    const tracePath = path.join(dir, 'old.trace');
    fs.writeFileSync(
      tracePath,
      '{"source":"x.sd","frames":[{"sim_time_ms":100.0,"event":"behavior_tick"},' +
        '{"sim_time_ms":200,"event":"mode_enter","payload":{"mode":"safe"},"state":{"pose":{"x":1.5,"y":2.0,"theta":0.0},"velocity":{"linear":0.0,"angular":0.0},"emergency_stop":true}}]}',
    );
    const trace = readTrace(tracePath);
    expect(trace.version).toBe(2);
    expect(trace.deterministic).toBe(false);
    expect(trace.frames[0]).toEqual({ sim_time_ms: 100, event: 'behavior_tick', payload: {}, state: null });
    expect(trace.frames[1]!.state).toEqual({
      pose: { x: 1.5, y: 2, theta: 0, z: 0 },
      velocity: { linear: 0, angular: 0 },
      emergency_stop: true,
      active_mode: null,
    });
    fs.writeFileSync(tracePath, '{}');
    expect(readTrace(tracePath)).toEqual({ version: 1, source: '', deterministic: false, frames: [] });
  });

  it('rejects malformed JSON and wrong shapes with a clear message', () => {
    const dir = tmpDir();
    const tracePath = path.join(dir, 'bad.trace');
    fs.writeFileSync(tracePath, '{"frames": [');
    expect(() => readTrace(tracePath)).toThrow(new RegExp(`^invalid trace ${tracePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
    fs.writeFileSync(tracePath, '{"frames": {}}');
    expect(() => readTrace(tracePath)).toThrow(`invalid trace ${tracePath}: frames must be an array`);
    fs.writeFileSync(tracePath, '{"frames": [{"sim_time_ms": "soon", "event": "x"}]}');
    expect(() => readTrace(tracePath)).toThrow(`invalid trace ${tracePath}: frames[0].sim_time_ms must be a number`);
    fs.writeFileSync(tracePath, '[1,2]');
    expect(() => readTrace(tracePath)).toThrow(`invalid trace ${tracePath}: top level must be an object`);
    expect(() => readTrace(path.join(dir, 'missing.trace'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  });

  it('parses replay offsets', () => {
    expect(parseOffset('1500')).toBe(1500);
    expect(parseOffset('T+00:02')).toBe(2000);
    expect(parseOffset('T+01:30')).toBe(90_000);
    expect(parseOffset('T+01:02:03')).toBe(3_723_000);
    expect(parseOffset('T+00:00.5')).toBe(500);
    expect(() => parseOffset('T+00:75')).toThrow("invalid offset 'T+00:75'");
    expect(() => parseOffset('soon')).toThrow('expected milliseconds, T+mm:ss or T+hh:mm:ss');
  });

  it('selects frames from the first one at or after the offset', () => {
    const frames = [100, 200, 300].map((t) => ({ sim_time_ms: t, event: 'behavior_tick', payload: {}, state: null }));
    expect(framesFrom(frames, 150).map((f) => f.sim_time_ms)).toEqual([200, 300]);
    expect(framesFrom(frames, 0)).toHaveLength(3);
    expect(framesFrom(frames, 301)).toEqual([]);
  });
});
