import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { platformEvent, streamEventName } from '../../agent/events/platform-events.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * `WS /v1/stream/telemetry` end to end (docs/streaming.md, docs/wire-decisions.md D6): a real agent on a loopback port
 * and real `ws` clients.
 */

const ADMIN_KEY = 'k'.repeat(64);
const STREAM = '/v1/stream/telemetry';

type Frame = Record<string, any>;

let agents: RunningAgent[] = [];
let clients: StreamClient[] = [];

afterEach(async () => {
  for (const c of clients) c.ws.terminate();
  clients = [];
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
});

async function agent(env: Record<string, string> = {}): Promise<RunningAgent> {
  const a = await startAgent({ env });
  agents.push(a);
  return a;
}

/** A real WebSocket client that records every frame and lets a test wait for a specific one. */
class StreamClient {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;
  private waiters: Array<() => void> = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      expect(isBinary).toBe(false);
      this.frames.push(JSON.parse(data.toString()));
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves with the first frame at index >= `from` matching `pred`; rejects after `timeoutMs`. */
  waitFor(pred: (f: Frame) => boolean, { from = 0, timeoutMs = 5000 }: { from?: number; timeoutMs?: number } = {}): Promise<Frame> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`no matching frame within ${timeoutMs} ms; got ${this.frames.length} frames, last: ${JSON.stringify(this.frames.slice(-3)).slice(0, 500)}`));
      }, timeoutMs);
      const check = () => {
        const found = this.frames.slice(from).find(pred);
        if (found) {
          clearTimeout(timer);
          resolve(found);
        } else if (this.closed) {
          clearTimeout(timer);
          reject(new Error(`stream closed (${this.closed.code}) before a matching frame arrived`));
        } else this.waiters.push(check);
      };
      check();
    });
  }

  waitForClose(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not closed within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        if (this.closed) {
          clearTimeout(timer);
          resolve(this.closed);
        } else this.waiters.push(check);
      };
      check();
    });
  }

  send(msg: unknown): void {
    this.ws.send(typeof msg === 'string' || Buffer.isBuffer(msg) ? msg : JSON.stringify(msg));
  }

  ofType(type: string): Frame[] {
    return this.frames.filter((f) => f['type'] === type);
  }
}

function openClient(url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const client = new StreamClient(ws);
    clients.push(client);
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => reject(new Error(`upgrade refused with HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

/** Connects and waits for `hello`. */
async function connect(a: RunningAgent, { query = '', headers = {} }: { query?: string; headers?: Record<string, string> } = {}) {
  const client = await openClient(`${a.wsUrl}${STREAM}${query}`, headers);
  await client.waitFor((f) => f['type'] === 'hello');
  return client;
}

/** Attempts an upgrade that must be refused; resolves with the HTTP status and headers. */
function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    clients.push(new StreamClient(ws));
    ws.once('open', () => reject(new Error('upgrade unexpectedly accepted')));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      res.resume();
      ws.terminate();
    });
    ws.once('error', (err) => reject(err));
  });
}

/** Stream connections of this agent: each one subscribes to the agent's telemetry ring. */
const streamsOf = (a: RunningAgent) => ((a.agent.services.telemetry.ring as any).listeners as Set<unknown>).size;

const deviceEvent = (value: number) => ({ kind: 'device' as const, device_id: 'imu-1', metric: 'temp', value, timestamp_ms: Date.now() });

describe('WS /v1/stream/telemetry: frames', () => {
  it('sends hello first, with the contract reflecting the settings', async () => {
    const a = await agent({ SVC_WS_MAX_PENDING_FRAMES: '16', SVC_WS_HEARTBEAT_INTERVAL_MS: '20000' });
    const c = await connect(a);
    expect(c.frames[0]).toEqual({
      type: 'hello',
      version: 'v1',
      stream: 'telemetry',
      contract: {
        resume_supported: true,
        max_pending_frames: 16,
        heartbeat_interval_ms: 20000,
        reconnect: 'send {"type":"resume","telemetry_offset":N,"trace_offset":N,"alert_offset":N}',
      },
    });
  });

  it('pushes a trace frame for a REST request, and does not trace the upgrade itself', async () => {
    const a = await agent();
    const traceHeadBefore = a.agent.services.traces.headOffset;
    const c = await connect(a);
    expect(a.agent.services.traces.headOffset).toBe(traceHeadBefore);

    const res = await a.fetch('/v1/version', { headers: { 'X-Correlation-ID': 'ws-trace-1' } });
    expect(res.status).toBe(200);
    const f = await c.waitFor((x) => x['type'] === 'trace' && x['record']?.correlation_id === 'ws-trace-1');
    expect(f).toMatchObject({ type: 'trace', offset: traceHeadBefore, record: { correlation_id: 'ws-trace-1', method: 'GET', path: '/v1/version', status: 200 } });
    expect(typeof f['record'].timestamp_ms).toBe('number');
    expect(typeof f['record'].duration_ms).toBe('number');
    expect(Object.keys(f).sort()).toEqual(['offset', 'record', 'type']);
  });

  it('pushes telemetry appended to the store, with its offset', async () => {
    const a = await agent();
    const c = await connect(a);
    const event = deviceEvent(21.5);
    const offset = a.agent.services.telemetry.append(event);
    const f = await c.waitFor((x) => x['type'] === 'telemetry' && x['offset'] === offset);
    expect(f).toEqual({ type: 'telemetry', offset, event });
  });

  it('replays backlog items that existed before the client connected', async () => {
    const a = await agent();
    const first = a.agent.services.telemetry.append(deviceEvent(1));
    a.agent.services.telemetry.append(deviceEvent(2));
    const alert = a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'info', message: 'before connect', source: 'ws-test' });
    expect(alert).not.toBeNull();
    const c = await connect(a);
    const t = await c.waitFor((x) => x['type'] === 'telemetry' && x['offset'] === first + 1);
    expect(t['event'].value).toBe(2);
    expect(c.ofType('telemetry').map((x) => x['offset'])).toEqual([first, first + 1]);
    const al = await c.waitFor((x) => x['type'] === 'alert' && x['alert']?.message === 'before connect');
    expect(al['alert']).toMatchObject({ alert_type: 'custom', severity: 'info', source: 'ws-test', id: alert!.id });
  });

  it('pushes a raised alert as an alert frame', async () => {
    const a = await agent();
    const c = await connect(a);
    const head = a.agent.services.alerts.ring.headOffset;
    const alert = a.agent.services.alerts.raise({ alert_type: 'custom', severity: 'info', message: 'ws alert', source: 'ws-test' });
    expect(alert).not.toBeNull();
    const f = await c.waitFor((x) => x['type'] === 'alert');
    expect(f).toMatchObject({ type: 'alert', offset: head, alert: { id: alert!.id, message: 'ws alert', alert_type: 'custom', severity: 'info', source: 'ws-test' } });
  });

  it('delivers a platform event published on the bus as telemetry of kind platform', async () => {
    const a = await agent();
    const c = await connect(a);
    a.agent.services.bus.publish(platformEvent('HealthChanged', 'ws-test', { target: 'imu-1', status: 'degraded' }, 'imu-1'));
    const f = await c.waitFor((x) => x['type'] === 'telemetry' && x['event']?.kind === 'platform' && x['event']?.source === 'ws-test');
    expect(f['event']).toMatchObject({ kind: 'platform', source: 'ws-test', entity_id: 'imu-1', payload: { target: 'imu-1', status: 'degraded' } });
    expect(f['event'].event_type).toBe(streamEventName('HealthChanged'));
    expect(f['event'].event_type).toBe('health_changed');
    expect(typeof f['event'].timestamp_ms).toBe('number');
  });

  it('answers ping with pong and ignores junk', async () => {
    const a = await agent();
    const c = await connect(a);
    c.send('this is not json');
    c.send({ type: 'nonsense' });
    c.send(Buffer.from('{"type":"ping"}')); // binary frame with JSON text is accepted too
    await c.waitFor((f) => f['type'] === 'pong');
    const mark = c.frames.length;
    c.send({ type: 'ping' });
    await c.waitFor((f) => f['type'] === 'pong', { from: mark });
    expect(c.closed).toBeNull();
  });

  it('resume answers resumed and replays from the given offsets', async () => {
    const a = await agent();
    const t = a.agent.services.telemetry;
    const o0 = t.append(deviceEvent(10));
    t.append(deviceEvent(11));
    t.append(deviceEvent(12));
    const c = await connect(a);
    await c.waitFor((f) => f['type'] === 'telemetry' && f['offset'] === o0 + 2);

    const mark = c.frames.length;
    const traceHead = a.agent.services.traces.headOffset;
    const alertHead = a.agent.services.alerts.ring.headOffset;
    c.send({ type: 'resume', telemetry_offset: o0 + 1, trace_offset: traceHead, alert_offset: alertHead });
    const resumed = await c.waitFor((f) => f['type'] === 'resumed', { from: mark });
    expect(resumed).toEqual({ type: 'resumed', telemetry_offset: o0 + 1, trace_offset: traceHead, alert_offset: alertHead });
    await c.waitFor((f) => f['type'] === 'telemetry' && f['offset'] === o0 + 2, { from: mark });
    const after = c.frames.slice(mark);
    const resumedAt = after.findIndex((f) => f['type'] === 'resumed');
    expect(after.slice(resumedAt + 1).filter((f) => f['type'] === 'telemetry').map((f) => [f['offset'], f['event'].value])).toEqual([
      [o0 + 1, 11],
      [o0 + 2, 12],
    ]);
    // Live push continues after the replay.
    const o3 = t.append(deviceEvent(13));
    await c.waitFor((f) => f['type'] === 'telemetry' && f['offset'] === o3);
  });

  it('sends heartbeat frames with backlog offsets and dropped_frames', async () => {
    const a = await agent({ SVC_WS_HEARTBEAT_INTERVAL_MS: '50' });
    a.agent.services.telemetry.append(deviceEvent(1));
    const c = await connect(a);
    const hb = await c.waitFor((f) => f['type'] === 'heartbeat');
    expect(hb).toEqual({
      type: 'heartbeat',
      offsets: {
        telemetry: a.agent.services.telemetry.ring.headOffset,
        traces: a.agent.services.traces.headOffset,
        alerts: a.agent.services.alerts.ring.headOffset,
      },
      dropped_frames: 0,
    });
  });

  it('never sends frames that carry a foreign tenant id', async () => {
    const a = await agent({ SVC_TENANT_ID: 'acme' });
    const c = await connect(a);
    const t = a.agent.services.telemetry;
    t.append({ ...deviceEvent(1), tenant_id: 'other' } as any);
    a.agent.services.bus.publish(platformEvent('EntityCreated', 'ws-test', { tenant_id: 'other', secret: 'x' }, 'e-other'));
    a.agent.services.bus.publish(platformEvent('EntityCreated', 'ws-test', { tenant_id: 'acme' }, 'e-acme'));
    const last = t.append(deviceEvent(2));
    await c.waitFor((f) => f['type'] === 'telemetry' && f['offset'] === last);
    const tel = c.ofType('telemetry').filter((f) => f['event'].kind === 'device' || f['event'].source === 'ws-test');
    expect(tel.map((f) => f['event'].entity_id ?? f['event'].value)).toEqual(['e-acme', 2]);
    expect(JSON.stringify(c.frames)).not.toContain('other');
  });

  it('closes normally (1000) after SVC_WS_STREAM_SECONDS', async () => {
    const a = await agent({ SVC_WS_STREAM_SECONDS: '1' });
    const started = Date.now(); // before the server's timer can start
    const c = await connect(a);
    const closed = await c.waitForClose(5000);
    expect(closed.code).toBe(1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('disposes the server side when the client goes away', async () => {
    const a = await agent();
    const before = streamsOf(a);
    const c = await connect(a);
    expect(streamsOf(a)).toBe(before + 1);
    c.ws.close(1000);
    await c.waitForClose();
    for (let i = 0; i < 100 && streamsOf(a) > before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(streamsOf(a)).toBe(before);
    // The agent keeps serving.
    expect((await a.fetch('/v1/health')).status).toBe(200);
  });
});

describe('WS /v1/stream/telemetry: access (docs/wire-decisions.md D6)', () => {
  it('a plain GET (no upgrade) is a JSON 404 not_found, and is traced', async () => {
    const a = await agent();
    const head = a.agent.services.traces.headOffset;
    const { status, body, headers } = await a.json(STREAM);
    expect(status).toBe(404);
    expect(body).toEqual({ ok: false, error: 'not found', code: 'not_found' });
    expect(headers.get('content-type')).toMatch(/application\/json/);
    const rec = a.agent.services.traces.at(head) as any;
    expect(rec).toMatchObject({ method: 'GET', path: STREAM, status: 404 });
  });

  it('is open to anonymous clients when no read-auth flag is on', async () => {
    const a = await agent({ SVC_API_KEY: ADMIN_KEY });
    const c = await connect(a);
    expect(c.frames[0]!['type']).toBe('hello');
  });

  for (const flag of ['SVC_API_REQUIRE_AUTH_READS', 'SVC_API_REQUIRE_AUTH_ALL_READS']) {
    it(`with ${flag}: anonymous or unknown credentials get 401 without upgrade; header and access_token work`, async () => {
      const a = await agent({ SVC_API_KEY: ADMIN_KEY, [flag]: '1' });
      const url = `${a.wsUrl}${STREAM}`;
      const before = streamsOf(a);
      expect((await refusedUpgrade(url)).status).toBe(401);
      expect((await refusedUpgrade(url, { Authorization: 'Bearer wrong-key' })).status).toBe(401);
      expect((await refusedUpgrade(`${url}?access_token=wrong-key`)).status).toBe(401);
      expect((await refusedUpgrade(`${url}?access_token=`)).status).toBe(401);
      expect(streamsOf(a)).toBe(before);

      const viaHeader = await connect(a, { headers: { Authorization: `Bearer ${ADMIN_KEY}` } });
      expect(viaHeader.frames[0]!['type']).toBe('hello');
      const viaQuery = await connect(a, { query: `?access_token=${ADMIN_KEY}` });
      expect(viaQuery.frames[0]!['type']).toBe('hello');
      // Both streams work.
      const o = a.agent.services.telemetry.append(deviceEvent(3));
      await viaHeader.waitFor((f) => f['type'] === 'telemetry' && f['offset'] === o);
      await viaQuery.waitFor((f) => f['type'] === 'telemetry' && f['offset'] === o);
    });
  }

  it('the access_token value never reaches traces or the telemetry store', async () => {
    const a = await agent({ SVC_API_KEY: ADMIN_KEY, SVC_API_REQUIRE_AUTH_READS: '1' });
    await connect(a, { query: `?access_token=${ADMIN_KEY}` });
    await refusedUpgrade(`${a.wsUrl}${STREAM}?access_token=not-the-key-${'z'.repeat(20)}`);
    const dump = JSON.stringify([a.agent.services.traces.all(), a.agent.services.telemetry.ring.all()]);
    expect(dump).not.toContain(ADMIN_KEY);
    expect(dump).not.toContain('not-the-key');
  });

  it('a principal of another tenant gets 403 without upgrade, via header or access_token', async () => {
    const a = await agent({ SVC_API_KEY: ADMIN_KEY, SVC_TENANT_ID: 'acme' });
    a.agent.services.credentials.addVerifier((token) =>
      token === 'foreign' ? { key_id: 'k1', role: 'operator', tenant_id: 'other', auth_kind: 'api_key', user_id: null } : null,
    );
    const url = `${a.wsUrl}${STREAM}`;
    const before = streamsOf(a);
    expect((await refusedUpgrade(url, { Authorization: 'Bearer foreign' })).status).toBe(403);
    expect((await refusedUpgrade(`${url}?access_token=foreign`)).status).toBe(403);
    expect(streamsOf(a)).toBe(before);
    // The instance's own key (tenant acme) is fine.
    const ok = await connect(a, { headers: { Authorization: `Bearer ${ADMIN_KEY}` } });
    expect(ok.frames[0]!['type']).toBe('hello');
  });

  it('the foreign-tenant check applies even when no read-auth flag is on', async () => {
    const a = await agent({ SVC_API_REQUIRE_AUTH_READS: '' });
    a.agent.services.credentials.addVerifier((token) =>
      token === 'foreign' ? { key_id: 'k1', role: 'administrator', tenant_id: 'other', auth_kind: 'api_key', user_id: null } : null,
    );
    expect((await refusedUpgrade(`${a.wsUrl}${STREAM}`, { Authorization: 'Bearer foreign' })).status).toBe(403);
  });
});

describe('WS /v1/stream/telemetry: slow reader (docs/streaming.md § Delivery and backpressure)', () => {
  it('a paused reader gets backpressure paused:true with growing dropped_frames, and the stream stays open past 5 s', async () => {
    const a = await agent({ SVC_WS_MAX_PENDING_FRAMES: '8', SVC_WS_HEARTBEAT_INTERVAL_MS: '250' });
    const c = await connect(a);
    const openedAt = Date.now();
    const big = 'x'.repeat(64 * 1024);
    const t = a.agent.services.telemetry;
    // The connection this test opened is the newest one registered.
    const connection = [...a.agent.streams].at(-1)!;
    const server = () => connection.stats();

    // The client stops reading from its socket; the server keeps producing 64 KiB frames at a pace a
    // live reader would easily keep up with.
    (c.ws as any)._socket.pause();
    let produced = 0;
    const producer = setInterval(() => {
      for (let i = 0; i < 4; i++) {
        t.append({ kind: 'device', device_id: 'imu-1', metric: 'blob', value: big, timestamp_ms: Date.now() });
        produced++;
      }
    }, 5);
    try {
      // Wait until the server has been dropping for a while (socket buffers full, queue full).
      const deadline = Date.now() + 4000;
      while (server().dropped_frames < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const droppedWhilePaused = server().dropped_frames;
      expect(droppedWhilePaused).toBeGreaterThanOrEqual(50);
      expect(server().pending_frames).toBeLessThanOrEqual(8);

      // Read again.
      (c.ws as any)._socket.resume();
      const bp = await c.waitFor((f) => f['type'] === 'backpressure' && f['paused'] === true, { timeoutMs: 5000 });
      expect(bp['dropped_frames']).toBeGreaterThanOrEqual(1);
      expect(bp['pending_frames']).toBeLessThanOrEqual(8);
      // Later frames (heartbeats every 250 ms) catch up with the count the server had reached while
      // the reader was paused: well above the first announcement.
      const later = await c.waitFor((f) => typeof f['dropped_frames'] === 'number' && f['dropped_frames'] >= droppedWhilePaused, { timeoutMs: 5000 });
      expect(later['dropped_frames']).toBeGreaterThan(bp['dropped_frames']);
      // dropped_frames never goes down.
      const counts = c.frames.filter((f) => typeof f['dropped_frames'] === 'number').map((f) => f['dropped_frames'] as number);
      expect(counts).toEqual([...counts].sort((x, y) => x - y));
      // Data frames kept their offsets: strictly increasing, with gaps where frames were dropped.
      const offsets = c.ofType('telemetry').map((f) => f['offset'] as number);
      expect(offsets.length).toBeGreaterThan(0);
      for (let i = 1; i < offsets.length; i++) expect(offsets[i]!).toBeGreaterThan(offsets[i - 1]!);
    } finally {
      clearInterval(producer);
    }
    expect(produced).toBeGreaterThan(0);

    // No default end of stream: still open (and answering) well past the reference's 5 s.
    const wait = openedAt + 5500 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const mark = c.frames.length;
    c.send({ type: 'ping' });
    await c.waitFor((f) => f['type'] === 'pong', { from: mark, timeoutMs: 5000 });
    expect(c.closed).toBeNull();
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    // Once the reader keeps up again the server announces the end of the pause.
    const unpaused = await c.waitFor((f) => f['type'] === 'backpressure' && f['paused'] === false, { timeoutMs: 5000 });
    expect(unpaused['pending_frames']).toBeLessThanOrEqual(4);
  }, 20_000);
});
