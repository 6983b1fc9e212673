import { afterEach, describe, expect, it, vi } from 'vitest';
import { Ring } from '../../agent/observability/ring.js';
import {
  MAX_CONTROL_IN_FLIGHT,
  StreamConnection,
  type BacklogName,
  type StreamOptions,
  type StreamSocket,
} from '../../agent/transports/ws/stream-connection.js';

/**
 * Unit tests of the transport-independent stream connection (docs/streaming.md, docs/wire-decisions.md D6). The fake
 * socket holds every write's completion callback until the test releases it, so the tests decide
 * exactly when the "client" has taken a frame.
 */

type Frame = Record<string, any>;
const DATA_TYPES = new Set(['telemetry', 'trace', 'alert']);
const isData = (f: Frame) => DATA_TYPES.has(f['type']);

class FakeSocket implements StreamSocket {
  /** Every frame handed to the socket, in order. */
  readonly sent: Frame[] = [];
  /** Writes whose completion the test has not released yet, oldest first. */
  readonly held: Array<{ frame: Frame; done: (err?: Error) => void }> = [];
  readonly closes: Array<{ code: number; reason: string }> = [];

  send(data: string, done: (err?: Error) => void): void {
    const frame = JSON.parse(data) as Frame;
    this.sent.push(frame);
    this.held.push({ frame, done });
  }

  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }

  /** Data writes the socket has not completed. */
  heldData(): number {
    return this.held.filter((h) => isData(h.frame)).length;
  }

  /** Completes held writes in order until `n` data writes completed (control writes on the way complete too). */
  complete(n = 1, err?: Error): void {
    let done = 0;
    while (done < n && this.held.length > 0) {
      const h = this.held.shift()!;
      if (isData(h.frame)) done++;
      h.done(err);
    }
  }

  /** Completes every write, including the ones completions cause, until the socket is idle. */
  completeAll(): void {
    for (let guard = 0; this.held.length > 0; guard++) {
      if (guard > 100_000) throw new Error('socket never went idle');
      this.held.shift()!.done();
    }
  }

  data(): Frame[] {
    return this.sent.filter(isData);
  }

  ofType(type: string): Frame[] {
    return this.sent.filter((f) => f['type'] === type);
  }

  offsets(type: string): number[] {
    return this.ofType(type).map((f) => f['offset'] as number);
  }
}

type Backlogs = Record<BacklogName, Ring<unknown>>;

const live: StreamConnection[] = [];
afterEach(() => {
  for (const c of live.splice(0)) c.dispose();
  vi.useRealTimers();
});

function setup(options: Partial<StreamOptions> = {}, capacity: Partial<Record<BacklogName, number>> = {}) {
  const backlogs: Backlogs = {
    telemetry: new Ring<unknown>(capacity.telemetry ?? 1000),
    traces: new Ring<unknown>(capacity.traces ?? 1000),
    alerts: new Ring<unknown>(capacity.alerts ?? 1000),
  };
  const socket = new FakeSocket();
  const conn = new StreamConnection(socket, backlogs, {
    maxPendingFrames: 64,
    heartbeatIntervalMs: 3_600_000,
    streamSeconds: 0,
    tenantId: 'default',
    ...options,
  });
  live.push(conn);
  return { socket, conn, backlogs };
}

const telemetryItem = (i: number, extra: Record<string, unknown> = {}) => ({
  kind: 'device',
  device_id: 'imu-1',
  metric: 'temp',
  value: i,
  timestamp_ms: 1_700_000_000_000 + i,
  ...extra,
});
const traceItem = (i: number) => ({
  correlation_id: `corr-${i}`,
  method: 'GET',
  path: '/v1/version',
  status: 200,
  timestamp_ms: 1_700_000_000_000 + i,
  duration_ms: 0.5,
});
const alertItem = (i: number, extra: Record<string, unknown> = {}) => ({
  id: `alert-${i}`,
  alert_type: 'custom',
  severity: 'info',
  message: `m${i}`,
  source: 'test',
  ...extra,
});

function fill(ring: Ring<unknown>, n: number, make: (i: number) => unknown = telemetryItem): void {
  for (let i = 0; i < n; i++) ring.append(make(ring.headOffset));
}

/** Lets the connection's once-per-turn flush (`setImmediate`) run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('StreamConnection: hello and replay', () => {
  it('sends hello first, with the contract fields', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 17, heartbeatIntervalMs: 1234 });
    fill(backlogs.telemetry, 3);
    conn.start();
    expect(socket.sent[0]).toEqual({
      type: 'hello',
      version: 'v1',
      stream: 'telemetry',
      contract: {
        resume_supported: true,
        max_pending_frames: 17,
        heartbeat_interval_ms: 1234,
        reconnect: 'send {"type":"resume","telemetry_offset":N,"trace_offset":N,"alert_offset":N}',
      },
    });
    expect(socket.ofType('hello')).toHaveLength(1);
    expect(socket.sent.length).toBeGreaterThan(1);
  });

  it('replays all three backlogs from offset 0 with their frame types and payload keys', () => {
    const { socket, conn, backlogs } = setup();
    fill(backlogs.telemetry, 5);
    fill(backlogs.traces, 3, traceItem);
    fill(backlogs.alerts, 2, alertItem);
    conn.start();
    socket.completeAll();

    expect(socket.ofType('telemetry')).toEqual(range(0, 5).map((i) => ({ type: 'telemetry', offset: i, event: telemetryItem(i) })));
    expect(socket.ofType('trace')).toEqual(range(0, 3).map((i) => ({ type: 'trace', offset: i, record: traceItem(i) })));
    expect(socket.ofType('alert')).toEqual(range(0, 2).map((i) => ({ type: 'alert', offset: i, alert: alertItem(i) })));
    expect(socket.data()).toHaveLength(10);
    expect(conn.stats()).toEqual({ pending_frames: 0, dropped_frames: 0, sent_frames: 10, paused: false });
    expect(socket.ofType('backpressure')).toHaveLength(0);
  });

  it('replays from the oldest offset a ring still holds, without counting items evicted before connect', () => {
    const { socket, conn, backlogs } = setup({}, { telemetry: 8 });
    fill(backlogs.telemetry, 20); // the ring keeps the newest 8: offsets 12..19
    expect(backlogs.telemetry.oldestOffset).toBe(12);
    conn.start();
    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual(range(12, 20));
    // Nothing was dropped by this connection: a fresh client gets no backpressure frame.
    expect(conn.stats().dropped_frames).toBe(0);
    expect(socket.ofType('backpressure')).toEqual([]);
  });

  it('a resume below the oldest held offset counts the missing items as dropped', () => {
    const { socket, conn, backlogs } = setup({}, { telemetry: 8 });
    fill(backlogs.telemetry, 20);
    conn.start();
    socket.completeAll();
    const mark = socket.sent.length;
    conn.receive(JSON.stringify({ type: 'resume', telemetry_offset: 5 }));
    socket.completeAll();
    const after = socket.sent.slice(mark);
    expect(after[0]).toEqual({ type: 'resumed', telemetry_offset: 5, trace_offset: 0, alert_offset: 0 });
    expect(after.filter(isData).map((f) => f['offset'])).toEqual(range(12, 20));
    expect(conn.stats().dropped_frames).toBe(7);
    expect(after.find((f) => f['type'] === 'backpressure')).toMatchObject({ paused: true, dropped_frames: 7 });
  });

  it('pulls replay items only up to the pending-frame limit', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 6 });
    fill(backlogs.telemetry, 40);
    fill(backlogs.traces, 10, traceItem);
    conn.start();

    // At most 6 data frames pending (queued + in the socket) at any moment; nothing is dropped.
    expect(conn.stats().pending_frames).toBe(6);
    expect(socket.heldData()).toBeLessThanOrEqual(6);
    const sentBefore = socket.data().length;
    expect(sentBefore).toBeLessThanOrEqual(6);
    for (let i = 0; i < 10; i++) {
      socket.complete(1);
      expect(conn.stats().pending_frames).toBeLessThanOrEqual(6);
    }
    expect(conn.stats().pending_frames).toBe(6);
    expect(conn.stats().dropped_frames).toBe(0);

    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual(range(0, 40));
    expect(socket.offsets('trace')).toEqual(range(0, 10));
    expect(conn.stats()).toMatchObject({ pending_frames: 0, dropped_frames: 0, sent_frames: 50 });
    expect(socket.ofType('backpressure')).toHaveLength(0);
  });

  it('with a limit below the socket write window, never has more writes outstanding than the limit', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 2 });
    fill(backlogs.telemetry, 10);
    conn.start();
    expect(socket.heldData()).toBe(2);
    expect(socket.offsets('telemetry')).toEqual([0, 1]);
    socket.complete(1);
    expect(socket.heldData()).toBe(2);
    expect(socket.offsets('telemetry')).toEqual([0, 1, 2]);
    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual(range(0, 10));
    expect(conn.stats().dropped_frames).toBe(0);
  });

  it('delivers items appended during a slow replay (ring large enough) without loss, in order', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 4 });
    fill(backlogs.telemetry, 10);
    conn.start();
    fill(backlogs.telemetry, 10); // arrive while the replay is still waiting on the client
    socket.complete(2);
    fill(backlogs.telemetry, 5);
    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual(range(0, 25));
    expect(conn.stats().dropped_frames).toBe(0);
  });

  it('switches to live push once caught up, flushing at the end of the turn', async () => {
    const { socket, conn, backlogs } = setup();
    fill(backlogs.telemetry, 2);
    conn.start();
    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual([0, 1]);

    const offset = backlogs.telemetry.append(telemetryItem(99));
    expect(offset).toBe(2);
    // Queued for this turn's flush, not waiting for a poll.
    expect(socket.offsets('telemetry')).toEqual([0, 1]);
    expect(conn.stats().pending_frames).toBe(1);
    await turn();
    expect(socket.ofType('telemetry').at(-1)).toEqual({ type: 'telemetry', offset: 2, event: telemetryItem(99) });
    backlogs.traces.append(traceItem(0));
    backlogs.alerts.append(alertItem(0));
    await turn();
    expect(socket.ofType('trace')).toEqual([{ type: 'trace', offset: 0, record: traceItem(0) }]);
    expect(socket.ofType('alert')).toEqual([{ type: 'alert', offset: 0, alert: alertItem(0) }]);
    socket.completeAll();
    expect(conn.stats()).toMatchObject({ pending_frames: 0, dropped_frames: 0, sent_frames: 5 });
  });
});

describe('StreamConnection: backpressure (docs/wire-decisions.md D6)', () => {
  it('queue full: drops the oldest queued frame, counts it, pauses once, resumes at half', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 8 });
    conn.start();
    socket.completeAll(); // hello
    fill(backlogs.telemetry, 8); // 0..3 in the socket, 4..7 queued
    expect(conn.stats().pending_frames).toBe(8);
    expect(socket.ofType('backpressure')).toHaveLength(0);

    backlogs.telemetry.append(telemetryItem(8)); // drops 4
    expect(conn.stats()).toMatchObject({ pending_frames: 8, dropped_frames: 1, paused: true });
    let bp = socket.ofType('backpressure');
    expect(bp).toEqual([{ type: 'backpressure', paused: true, pending_frames: 8, dropped_frames: 1 }]);

    backlogs.telemetry.append(telemetryItem(9)); // drops 5
    backlogs.telemetry.append(telemetryItem(10)); // drops 6
    expect(conn.stats()).toMatchObject({ pending_frames: 8, dropped_frames: 3, paused: true });
    expect(socket.ofType('backpressure')).toHaveLength(1); // announced once per pause

    // Drain: pending 8 → 7 → 6 → 5 → 4 (= half) un-pauses.
    socket.complete(3);
    expect(conn.stats().pending_frames).toBe(5);
    expect(socket.ofType('backpressure')).toHaveLength(1);
    socket.complete(1);
    bp = socket.ofType('backpressure');
    expect(bp).toHaveLength(2);
    expect(bp[1]).toEqual({ type: 'backpressure', paused: false, pending_frames: 4, dropped_frames: 3 });
    expect(conn.stats().paused).toBe(false);

    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual([0, 1, 2, 3, 7, 8, 9, 10]);
    expect(conn.stats()).toMatchObject({ pending_frames: 0, dropped_frames: 3, sent_frames: 8 });

    // A new overflow after the un-pause is announced again, with the running count.
    fill(backlogs.telemetry, 9);
    bp = socket.ofType('backpressure');
    expect(bp).toHaveLength(3);
    expect(bp[2]).toMatchObject({ paused: true, dropped_frames: 4 });
  });

  it('backpressure frames go out ahead of queued data frames', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 8 });
    conn.start();
    fill(backlogs.telemetry, 9);
    const idx = socket.sent.findIndex((f) => f['type'] === 'backpressure');
    expect(idx).toBeGreaterThan(0);
    // Only the 4 in-flight data frames were written before it; the queued ones come after.
    expect(socket.sent.slice(0, idx).filter(isData)).toHaveLength(4);
    socket.completeAll();
    const after = socket.sent.slice(idx + 1).filter(isData).map((f) => f['offset']);
    expect(after).toEqual([5, 6, 7, 8]);
  });

  it('when every pending frame is already in the socket, the new frame is the one dropped', async () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 2 });
    conn.start();
    fill(backlogs.telemetry, 2);
    await turn();
    expect(socket.heldData()).toBe(2);
    fill(backlogs.telemetry, 3); // 2, 3, 4 find no room
    expect(conn.stats()).toMatchObject({ pending_frames: 2, dropped_frames: 3, paused: true });
    expect(socket.ofType('backpressure')).toHaveLength(1);
    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual([0, 1]);
    expect(socket.ofType('backpressure').at(-1)).toMatchObject({ paused: false, dropped_frames: 3 });
    backlogs.telemetry.append(telemetryItem(5));
    await turn();
    expect(socket.offsets('telemetry')).toEqual([0, 1, 5]);
  });

  it('counts items a slow replay lost to ring overrun as dropped, and delivers the rest in order', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 2 }, { telemetry: 8 });
    fill(backlogs.telemetry, 8);
    conn.start();
    expect(socket.offsets('telemetry')).toEqual([0, 1]);
    // 30 more items while the client reads nothing: the ring overwrites offsets 2..29.
    fill(backlogs.telemetry, 30);
    expect(backlogs.telemetry.oldestOffset).toBe(30);
    expect(conn.stats().dropped_frames).toBe(0);

    socket.completeAll();
    const offsets = socket.offsets('telemetry');
    expect(offsets).toEqual([0, 1, ...range(30, 38)]);
    const stats = conn.stats();
    expect(stats.dropped_frames).toBe(28);
    expect(stats.dropped_frames + offsets.length).toBe(38); // every item either delivered or counted
    const bp = socket.ofType('backpressure');
    expect(bp[0]).toMatchObject({ paused: true, dropped_frames: 28 });
    expect(bp.at(-1)).toMatchObject({ paused: false, dropped_frames: 28 });
    expect(bp.filter((f) => f['paused'] === true)).toHaveLength(1);
  });
});

describe('StreamConnection: client messages', () => {
  it('resume answers resumed and replays from the given offsets', async () => {
    const { socket, conn, backlogs } = setup();
    fill(backlogs.telemetry, 6);
    fill(backlogs.traces, 4, traceItem);
    fill(backlogs.alerts, 3, alertItem);
    conn.start();
    socket.completeAll();
    const mark = socket.sent.length;

    conn.receive(JSON.stringify({ type: 'resume', telemetry_offset: 4, trace_offset: 1, alert_offset: 3 }));
    socket.completeAll();
    const after = socket.sent.slice(mark);
    expect(after[0]).toEqual({ type: 'resumed', telemetry_offset: 4, trace_offset: 1, alert_offset: 3 });
    const offs = (t: string) => after.filter((f) => f['type'] === t).map((f) => f['offset']);
    expect(offs('telemetry')).toEqual([4, 5]);
    expect(offs('trace')).toEqual([1, 2, 3]);
    expect(offs('alert')).toEqual([]);
    expect(after.find((f) => f['type'] === 'telemetry')).toEqual({ type: 'telemetry', offset: 4, event: telemetryItem(4) });

    // And live push continues after the resumed replay.
    backlogs.alerts.append(alertItem(3));
    await turn();
    expect(socket.ofType('alert').at(-1)).toEqual({ type: 'alert', offset: 3, alert: alertItem(3) });
    expect(conn.stats().dropped_frames).toBe(0);
  });

  it('resume treats missing or invalid offsets as 0', () => {
    const { socket, conn, backlogs } = setup();
    fill(backlogs.telemetry, 2);
    fill(backlogs.traces, 2, traceItem);
    conn.start();
    socket.completeAll();
    const mark = socket.sent.length;
    conn.receive(JSON.stringify({ type: 'resume', telemetry_offset: -5, trace_offset: 'x' }));
    socket.completeAll();
    const after = socket.sent.slice(mark);
    expect(after[0]).toEqual({ type: 'resumed', telemetry_offset: 0, trace_offset: 0, alert_offset: 0 });
    expect(after.filter((f) => f['type'] === 'telemetry').map((f) => f['offset'])).toEqual([0, 1]);
    expect(after.filter((f) => f['type'] === 'trace').map((f) => f['offset'])).toEqual([0, 1]);
  });

  it('resume discards frames queued for the old position (no duplicates), keeps in-flight ones', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 8 });
    fill(backlogs.telemetry, 20);
    conn.start();
    // 0..3 are in the socket, 4..7 queued.
    conn.receive(JSON.stringify({ type: 'resume', telemetry_offset: 15 }));
    socket.completeAll();
    const types = socket.sent.map((f) => (isData(f) ? f['offset'] : f['type']));
    expect(types).toEqual(['hello', 0, 1, 2, 3, 'resumed', 15, 16, 17, 18, 19]);
    expect(conn.stats().dropped_frames).toBe(0);
  });

  it('answers ping with pong at once, even when the queue is full', () => {
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 4 });
    fill(backlogs.telemetry, 10);
    conn.start();
    expect(conn.stats().pending_frames).toBe(4);
    conn.receive('{"type":"ping"}');
    expect(socket.sent.at(-1)).toEqual({ type: 'pong' });
    expect(conn.stats().pending_frames).toBe(4);
  });

  it('a client that sends pings but never reads cannot grow the server buffer without bound', () => {
    vi.useFakeTimers();
    const { socket, conn, backlogs } = setup({ maxPendingFrames: 4, heartbeatIntervalMs: 10 });
    conn.start(); // hello stays unwritten: the client reads nothing
    for (let i = 0; i < 5000; i++) conn.receive('{"type":"ping"}');
    vi.advanceTimersByTime(10_000); // 1000 heartbeat ticks
    for (let i = 0; i < 100; i++) conn.receive(JSON.stringify({ type: 'resume', telemetry_offset: 0 }));
    const control = socket.sent.filter((f) => !isData(f) && f['type'] !== 'hello');
    expect(control.length).toBeLessThanOrEqual(MAX_CONTROL_IN_FLIGHT);
    expect(socket.ofType('pong').length).toBeGreaterThan(0);
    // Backpressure announcements are never suppressed.
    fill(backlogs.telemetry, 10);
    expect(socket.ofType('backpressure')).toEqual([{ type: 'backpressure', paused: true, pending_frames: 4, dropped_frames: 1 }]);
    expect(conn.stats().dropped_frames).toBe(6);
    // Once the client reads again, pings are answered again.
    socket.completeAll();
    conn.receive('{"type":"ping"}');
    expect(socket.sent.at(-1)).toEqual({ type: 'pong' });
  });

  it('answers every ping of a reading client, even many at once', () => {
    const { socket, conn } = setup();
    conn.start();
    socket.completeAll();
    for (let i = 0; i < MAX_CONTROL_IN_FLIGHT; i++) conn.receive('{"type":"ping"}');
    expect(socket.ofType('pong')).toHaveLength(MAX_CONTROL_IN_FLIGHT);
    socket.completeAll();
    for (let i = 0; i < 10; i++) conn.receive('{"type":"ping"}');
    expect(socket.ofType('pong')).toHaveLength(MAX_CONTROL_IN_FLIGHT + 10);
  });

  it('ignores junk and unknown messages', () => {
    const { socket, conn } = setup();
    conn.start();
    socket.completeAll();
    const before = socket.sent.length;
    for (const junk of ['hello', '', '{', 'null', '42', '"ping"', '[{"type":"ping"}]', '{}', '{"type":"unknown"}', '{"type":"PING"}', '\u0000\u00ff']) {
      expect(() => conn.receive(junk)).not.toThrow();
    }
    expect(socket.sent.length).toBe(before);
    expect(socket.closes).toEqual([]);
  });
});

describe('StreamConnection: timers', () => {
  it('sends heartbeat frames with backlog offsets and dropped_frames every interval', () => {
    vi.useFakeTimers();
    const { socket, conn, backlogs } = setup({ heartbeatIntervalMs: 1000, maxPendingFrames: 2 });
    fill(backlogs.telemetry, 3);
    fill(backlogs.traces, 2, traceItem);
    conn.start();
    vi.advanceTimersByTime(999);
    expect(socket.ofType('heartbeat')).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(socket.ofType('heartbeat')).toEqual([
      { type: 'heartbeat', offsets: { telemetry: 3, traces: 2, alerts: 0 }, dropped_frames: 0 },
    ]);
    socket.completeAll();
    fill(backlogs.telemetry, 2);
    fill(backlogs.alerts, 1, alertItem);
    fill(backlogs.telemetry, 3); // 2 in the socket, the third dropped
    vi.advanceTimersByTime(1000);
    expect(socket.ofType('heartbeat')[1]).toEqual({
      type: 'heartbeat',
      offsets: { telemetry: 8, traces: 2, alerts: 1 },
      dropped_frames: conn.stats().dropped_frames,
    });
    expect(conn.stats().dropped_frames).toBeGreaterThan(0);
    vi.advanceTimersByTime(3000);
    expect(socket.ofType('heartbeat')).toHaveLength(5);
  });

  it('with stream_seconds > 0 closes normally (1000) after that long, and sends nothing after', () => {
    vi.useFakeTimers();
    const { socket, conn, backlogs } = setup({ streamSeconds: 3 });
    conn.start();
    vi.advanceTimersByTime(2999);
    expect(socket.closes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(socket.closes).toHaveLength(1);
    expect(socket.closes[0]!.code).toBe(1000);
    const n = socket.sent.length;
    fill(backlogs.telemetry, 3);
    conn.receive('{"type":"ping"}');
    vi.advanceTimersByTime(10 * 3_600_000);
    expect(socket.sent.length).toBe(n);
    expect(socket.closes).toHaveLength(1);
  });

  it('with stream_seconds = 0 never ends the stream', () => {
    vi.useFakeTimers();
    const { socket, conn } = setup({ streamSeconds: 0, heartbeatIntervalMs: 60_000 });
    conn.start();
    for (let h = 0; h < 7 * 24; h++) {
      vi.advanceTimersByTime(3_600_000);
      socket.completeAll(); // a client that reads
    }
    expect(socket.closes).toEqual([]);
    expect(socket.ofType('heartbeat')).toHaveLength(7 * 24 * 60);
  });

  it('a stream_seconds or heartbeat interval beyond the 32-bit timer range does not fire early', () => {
    vi.useFakeTimers();
    const { socket, conn } = setup({ streamSeconds: 30 * 24 * 3600, heartbeatIntervalMs: 2 ** 32 });
    conn.start();
    vi.advanceTimersByTime(24 * 3_600_000);
    expect(socket.ofType('heartbeat')).toHaveLength(0);
    expect(socket.closes).toEqual([]);
    vi.advanceTimersByTime(28 * 24 * 3_600_000);
    expect(socket.closes).toEqual([]);
    vi.advanceTimersByTime(2 * 24 * 3_600_000);
    expect(socket.closes).toHaveLength(1);
    expect(socket.closes[0]!.code).toBe(1000);
  });
});

describe('StreamConnection: tenant filter (docs/wire-decisions.md D6)', () => {
  it('never sends a frame carrying a foreign tenant_id, top-level or in payload, in replay or live', async () => {
    const { socket, conn, backlogs } = setup({ tenantId: 'acme' });
    backlogs.telemetry.append(telemetryItem(0)); // 0 no tenant: sent
    backlogs.telemetry.append(telemetryItem(1, { tenant_id: 'other' })); // 1 foreign: hidden
    backlogs.telemetry.append({ kind: 'platform', event_type: 'EntityCreated', source: 's', payload: { tenant_id: 'other' }, timestamp_ms: 1 }); // 2 hidden
    backlogs.telemetry.append({ kind: 'platform', event_type: 'EntityCreated', source: 's', payload: { tenant_id: 'acme' }, timestamp_ms: 1 }); // 3 sent
    backlogs.telemetry.append(telemetryItem(4, { tenant_id: 'acme', payload: { tenant_id: 'other' } })); // 4 hidden
    backlogs.telemetry.append(telemetryItem(5, { tenant_id: 'other', payload: { tenant_id: 'acme' } })); // 5 hidden
    backlogs.telemetry.append(telemetryItem(6, { tenant_id: null, payload: null })); // 6 sent
    backlogs.alerts.append(alertItem(0, { tenant_id: 'other' })); // hidden
    backlogs.alerts.append(alertItem(1, { tenant_id: 'acme' })); // sent
    conn.start();
    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual([0, 3, 6]);
    expect(socket.offsets('alert')).toEqual([1]);

    // Live.
    backlogs.telemetry.append(telemetryItem(7, { tenant_id: 'other' }));
    backlogs.telemetry.append({ kind: 'platform', event_type: 'EntityUpdated', source: 's', payload: { tenant_id: 'ACME' }, timestamp_ms: 1 });
    backlogs.telemetry.append(telemetryItem(9, { tenant_id: 'acme', payload: { tenant_id: 'other' } }));
    backlogs.alerts.append(alertItem(2, { payload: { tenant_id: 'other' } }));
    backlogs.telemetry.append(telemetryItem(10, { tenant_id: 'acme' }));
    await turn();
    socket.completeAll();
    expect(socket.offsets('telemetry')).toEqual([0, 3, 6, 10]);
    expect(socket.offsets('alert')).toEqual([1]);
    expect(JSON.stringify(socket.sent)).not.toContain('other');
    // Filtering is not dropping.
    expect(conn.stats().dropped_frames).toBe(0);
    expect(socket.ofType('backpressure')).toHaveLength(0);
  });
});

describe('StreamConnection: lifecycle', () => {
  it('dispose stops pushes, replies, heartbeats and the stream timer', () => {
    vi.useFakeTimers();
    const { socket, conn, backlogs } = setup({ heartbeatIntervalMs: 100, streamSeconds: 1, maxPendingFrames: 4 });
    fill(backlogs.telemetry, 10);
    conn.start();
    expect(socket.heldData()).toBe(4);
    conn.dispose();
    const n = socket.sent.length;
    socket.completeAll(); // late completions of in-flight writes
    fill(backlogs.telemetry, 5);
    fill(backlogs.alerts, 5, alertItem);
    conn.receive('{"type":"ping"}');
    conn.receive('{"type":"resume"}');
    vi.advanceTimersByTime(10_000);
    expect(socket.sent.length).toBe(n);
    expect(socket.closes).toEqual([]); // the socket's owner closes it
    expect(conn.stats().pending_frames).toBe(0);
    expect(() => conn.dispose()).not.toThrow();
  });

  it('unsubscribes from the backlogs on dispose', () => {
    const { conn, backlogs } = setup();
    const counts = () => (['telemetry', 'traces', 'alerts'] as const).map((n) => (backlogs[n] as any).listeners.size as number);
    expect(counts()).toEqual([0, 0, 0]);
    conn.start();
    expect(counts()).toEqual([1, 1, 1]);
    conn.dispose();
    expect(counts()).toEqual([0, 0, 0]);
  });

  it('a failed write ends the stream with 1011 and stops sending', async () => {
    const { socket, conn, backlogs } = setup();
    conn.start();
    socket.completeAll();
    fill(backlogs.telemetry, 2);
    await turn();
    socket.complete(1, new Error('EPIPE'));
    expect(socket.closes).toEqual([{ code: 1011, reason: 'write failed' }]);
    const n = socket.sent.length;
    fill(backlogs.telemetry, 2);
    await turn();
    socket.completeAll();
    expect(socket.sent.length).toBe(n);
    expect(socket.closes).toHaveLength(1);
  });
});

describe('frames built from a ring that serialises each item once', () => {
  it('are byte-for-byte the JSON.stringify frames, live and replayed, for every client', async () => {
    const telemetry = new Ring<unknown>(1000, { immutableItems: true });
    const raw: string[][] = [[], []];
    const conns = raw.map((out) => {
      const conn = new StreamConnection(
        { send: (data, done) => (out.push(data), done()), close: () => undefined },
        { telemetry, traces: new Ring<unknown>(10), alerts: new Ring<unknown>(10) },
        { maxPendingFrames: 64, heartbeatIntervalMs: 3_600_000, streamSeconds: 0, tenantId: 'default' },
      );
      live.push(conn);
      return conn;
    });
    telemetry.append(telemetryItem(0, { unit: 'C', note: 'quote " and \\u00e9 é' }));
    conns[0]!.start(); // replays offset 0
    conns[1]!.start();
    telemetry.append(telemetryItem(1)); // live for both
    await turn();
    const expected = [0, 1].map((offset) => JSON.stringify({ type: 'telemetry', offset, event: telemetry.at(offset) }));
    for (const out of raw) expect(out.filter((d) => d.startsWith('{"type":"telemetry"'))).toEqual(expected);
    expect(telemetry.json(telemetry.at(1))).toBe(JSON.stringify(telemetry.at(1)));
  });
});

/**
 * A socket that reports its buffered bytes and corks batches, like `ws` over a net socket: bytes
 * written while uncorked (or at uncork) leave at once unless the "kernel" is full; write callbacks are
 * held until the test releases them, as they fire on a later tick in Node.
 */
class ByteSocket extends FakeSocket {
  buffered = 0;
  corked = false;
  kernelFull = false;
  batches: number[] = [];
  private batchWrites = 0;

  override send(data: string, done: (err?: Error) => void): void {
    super.send(data, done);
    this.buffered += data.length;
    this.batchWrites++;
    if (!this.corked) this.flushBytes();
  }

  bufferedAmount(): number {
    return this.buffered;
  }

  batch(writes: () => void): void {
    this.corked = true;
    this.batchWrites = 0;
    writes();
    this.corked = false;
    this.batches.push(this.batchWrites);
    this.flushBytes();
  }

  flushBytes(): void {
    if (!this.kernelFull) this.buffered = 0;
  }
}

describe('StreamConnection: byte-judged socket with batched writes', () => {
  function setupBytes(maxPendingFrames = 64) {
    const backlogs: Backlogs = { telemetry: new Ring<unknown>(10_000), traces: new Ring<unknown>(10), alerts: new Ring<unknown>(10) };
    const socket = new ByteSocket();
    const conn = new StreamConnection(socket, backlogs, { maxPendingFrames, heartbeatIntervalMs: 3_600_000, streamSeconds: 0, tenantId: 'default' });
    live.push(conn);
    return { socket, conn, backlogs };
  }

  it('a burst far above the pending-frame limit, in one turn, reaches a reading client without drops even before any write callback', async () => {
    const { socket, conn, backlogs } = setupBytes(64);
    conn.start();
    fill(backlogs.telemetry, 500);
    await turn();
    expect(socket.offsets('telemetry')).toEqual(range(0, 500));
    expect(conn.stats()).toMatchObject({ dropped_frames: 0, pending_frames: 0, paused: false });
    expect(socket.ofType('backpressure')).toEqual([]);
    // Written in corked batches, not one write per frame.
    expect(socket.batches.length).toBeLessThan(500 / 16);
    socket.completeAll();
    expect(conn.stats().sent_frames).toBe(500);
  });

  it('frames of one turn are flushed together at the end of the turn', async () => {
    const { socket, conn, backlogs } = setupBytes();
    conn.start();
    socket.completeAll();
    socket.batches.length = 0;
    fill(backlogs.telemetry, 10);
    expect(socket.data()).toEqual([]);
    await turn();
    expect(socket.offsets('telemetry')).toEqual(range(0, 10));
    expect(socket.batches).toEqual([10]);
  });

  it('a reader that takes nothing: pending stays bounded, the oldest queued frames are dropped, then it recovers in order', async () => {
    const { socket, conn, backlogs } = setupBytes(8);
    conn.start();
    socket.completeAll();
    socket.kernelFull = true;
    for (let i = 0; i < 50; i++) {
      backlogs.telemetry.append(telemetryItem(backlogs.telemetry.headOffset));
      expect(conn.stats().pending_frames).toBeLessThanOrEqual(8);
      if (i % 7 === 0) await turn();
    }
    await turn();
    const stats = conn.stats();
    expect(stats.pending_frames).toBeLessThanOrEqual(8);
    expect(stats.dropped_frames).toBeGreaterThan(30);
    // Only up to half the limit went into the socket; the rest waited where the oldest could be dropped.
    expect(socket.heldData()).toBeLessThanOrEqual(4);
    expect(socket.ofType('backpressure')).toEqual([expect.objectContaining({ type: 'backpressure', paused: true })]);

    socket.kernelFull = false;
    socket.buffered = 0;
    socket.completeAll();
    await turn();
    socket.completeAll();
    const offsets = socket.offsets('telemetry');
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    expect(offsets.at(-1)).toBe(49);
    expect(offsets.length + conn.stats().dropped_frames).toBe(50);
    expect(socket.ofType('backpressure').at(-1)).toMatchObject({ paused: false, dropped_frames: conn.stats().dropped_frames });
    expect(conn.stats()).toMatchObject({ pending_frames: 0, paused: false });
  });

  it('control frames still go out ahead of queued data frames', async () => {
    const { socket, conn, backlogs } = setupBytes();
    conn.start();
    socket.completeAll();
    fill(backlogs.telemetry, 3);
    conn.receive('{"type":"ping"}');
    await turn();
    expect(socket.sent.slice(1).map((f) => (isData(f) ? f['offset'] : f['type']))).toEqual(['pong', 0, 1, 2]);
  });
});
