import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { SvcClient, streamUrl, type BackpressureFrame, type HeartbeatFrame, type StreamHandle } from '../../clients/typescript/src/index.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { eventually } from '../helpers/stream-client.js';

const KEYS = { operator: 'd2'.repeat(32), auditor: 'd3'.repeat(32) };
let running: RunningAgent[] = [];
let streams: StreamHandle[] = [];
let servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of streams) s.close();
  streams = [];
  await Promise.all(running.map((a) => a.close()));
  running = [];
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          for (const c of s.clients) c.terminate();
          s.close(() => resolve());
        }),
    ),
  );
  servers = [];
});

async function agentWith(env: Record<string, string> = {}): Promise<RunningAgent> {
  const stateDir = tempDir('svc-client-ts-stream-');
  const keys = path.join(stateDir, 'keys.json');
  fs.writeFileSync(keys, JSON.stringify(Object.entries(KEYS).map(([role, token]) => ({ key_id: role, token, role }))));
  const a = await startAgent({ stateDir, env: { SVC_API_KEYS_FILE: keys, ...env } });
  running.push(a);
  return a;
}

const WS = WebSocket as unknown as NonNullable<ConstructorParameters<typeof SvcClient>[0]['WebSocket']>;

describe('client.stream() against a live agent', () => {
  it.each(['header', 'query'] as const)('receives hello and a test alert (key in the %s) under SVC_API_REQUIRE_AUTH_READS', async (tokenIn) => {
    const a = await agentWith({ SVC_API_REQUIRE_AUTH_READS: '1', SVC_WS_HEARTBEAT_INTERVAL_MS: '200' });
    const reader = new SvcClient({ baseUrl: a.baseUrl, apiKey: KEYS.auditor, WebSocket: WS });
    const alerts: { alert: Record<string, unknown>; offset: number }[] = [];
    const heartbeats: HeartbeatFrame[] = [];
    const stream = reader.stream({ tokenIn, onAlert: (alert, offset) => alerts.push({ alert, offset }), onHeartbeat: (h) => heartbeats.push(h) });
    streams.push(stream);
    const hello = await stream.ready;
    expect(hello).toMatchObject({ type: 'hello', version: 'v1', stream: 'telemetry' });
    await new SvcClient({ baseUrl: a.baseUrl, apiKey: KEYS.operator }).testAlert({ message: `stream ${tokenIn}` });
    await eventually(() => alerts, (l) => l.some((x) => JSON.stringify(x.alert).includes(`stream ${tokenIn}`)));
    expect(stream.offsets.alert).toBe(alerts.at(-1)!.offset);
    await eventually(() => heartbeats, (l) => l.length > 0);
    expect(heartbeats[0]).toMatchObject({ type: 'heartbeat', dropped_frames: expect.any(Number) });
    expect(stream.connected).toBe(true);
    stream.close();
    await eventually(() => stream.connected, (c) => !c);
  });

  it('without a key under SVC_API_REQUIRE_AUTH_READS the upgrade is refused and the stream gives up after maxRetries', async () => {
    const a = await agentWith({ SVC_API_REQUIRE_AUTH_READS: '1' });
    const closes: boolean[] = [];
    const stream = new SvcClient({ baseUrl: a.baseUrl, WebSocket: WS }).stream({
      maxRetries: 1,
      initialDelayMs: 10,
      onError: () => undefined,
      onClose: (c) => closes.push(c.willReconnect),
    });
    streams.push(stream);
    await expect(stream.ready).rejects.toThrow(/stream closed/);
    expect(closes).toEqual([true, false]);
  });
});

describe('client.stream() reconnect and resume (a local WebSocket server plays the agent)', () => {
  it('reconnects with backoff, resumes at the last offsets + 1, never delivers an offset twice, and surfaces backpressure', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    servers.push(wss);
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const port = (wss.address() as { port: number }).port;
    const received: { url: string; auth: string | undefined; messages: unknown[] }[] = [];
    wss.on('connection', (sock, req) => {
      const conn = { url: req.url ?? '', auth: req.headers.authorization, messages: [] as unknown[] };
      received.push(conn);
      sock.on('message', (data) => conn.messages.push(JSON.parse(String(data))));
      const send = (f: unknown) => sock.send(JSON.stringify(f));
      send({ type: 'hello', version: 'v1', stream: 'telemetry', contract: { resume_supported: true, max_pending_frames: 4, heartbeat_interval_ms: 1000 } });
      const n = received.length;
      if (n === 1) {
        for (let i = 0; i < 3; i++) send({ type: 'telemetry', offset: i, event: { kind: 'sensor', value: i } });
        send({ type: 'alert', offset: 0, alert: { message: 'first' } });
        send({ type: 'trace', offset: 5, record: { correlation_id: 'c', method: 'GET', path: '/v1/health', status: 200, timestamp_ms: 1, duration_ms: 1 } });
        send({ type: 'backpressure', paused: true, pending_frames: 4, dropped_frames: 2 });
        send({ type: 'heartbeat', offsets: { telemetry: 3, traces: 6, alerts: 1 }, dropped_frames: 2 });
        setTimeout(() => sock.terminate(), 50);
      } else {
        // The agent replays from 0 on connect until it reads the resume: the client drops what it saw.
        sock.once('message', () => {
          for (let i = 0; i < 5; i++) send({ type: 'telemetry', offset: i, event: { kind: 'sensor', value: i } });
          send({ type: 'alert', offset: 0, alert: { message: 'first' } });
          send({ type: 'alert', offset: 1, alert: { message: 'second' } });
          send({ type: 'resumed', telemetry_offset: 3, trace_offset: 6, alert_offset: 1 });
          send({ type: 'backpressure', paused: false, pending_frames: 0, dropped_frames: 2 });
        });
      }
    });

    const telemetry: number[] = [];
    const alerts: string[] = [];
    const traces: number[] = [];
    const backpressure: BackpressureFrame[] = [];
    const opens: boolean[] = [];
    const client = new SvcClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'TOKEN', WebSocket: WS });
    const stream = client.stream({
      initialDelayMs: 20,
      onTelemetry: (_e, offset) => telemetry.push(offset),
      onAlert: (alert) => alerts.push(String(alert.message)),
      onTrace: (_r, offset) => traces.push(offset),
      onBackpressure: (b) => backpressure.push(b),
      onOpen: ({ reconnect }) => opens.push(reconnect),
    });
    streams.push(stream);
    await eventually(() => backpressure, (b) => b.length === 2);
    expect(telemetry).toEqual([0, 1, 2, 3, 4]);
    expect(alerts).toEqual(['first', 'second']);
    expect(traces).toEqual([5]);
    expect(opens).toEqual([false, true]);
    expect(backpressure.map((b) => b.paused)).toEqual([true, false]);
    expect(stream.droppedFrames).toBe(2);
    expect(stream.offsets).toEqual({ telemetry: 4, trace: 5, alert: 1 });
    // `ws` takes headers: the key went as a Bearer header, not in the URL
    expect(received[0]!.auth).toBe('Bearer TOKEN');
    expect(received[0]!.url).toBe('/v1/stream/telemetry');
    expect(received[0]!.messages).toEqual([]);
    expect(received[1]!.messages[0]).toEqual({ type: 'resume', telemetry_offset: 3, trace_offset: 6, alert_offset: 1 });

    stream.ping();
    await eventually(() => received[1]!.messages, (m) => m.length === 2);
    expect(received[1]!.messages[1]).toEqual({ type: 'ping' });

    stream.close();
    await new Promise((r) => setTimeout(r, 150));
    expect(received).toHaveLength(2);
    expect(stream.connected).toBe(false);
  });

  it('an abort signal ends the stream; the URL is ws:// (wss://) from the base, relay prefix included', async () => {
    expect(streamUrl('http://relay.test/agents/robot-7/')).toBe('ws://relay.test/agents/robot-7/v1/stream/telemetry');
    expect(streamUrl('https://agent.test')).toBe('wss://agent.test/v1/stream/telemetry');
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    servers.push(wss);
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const port = (wss.address() as { port: number }).port;
    const urls: string[] = [];
    wss.on('connection', (sock, req) => {
      urls.push(req.url ?? '');
      sock.send(JSON.stringify({ type: 'hello', version: 'v1', stream: 'telemetry', contract: {} }));
    });
    const ac = new AbortController();
    const stream = new SvcClient({ baseUrl: `http://127.0.0.1:${port}/agents/a1`, apiKey: 'k y', WebSocket: WS }).stream({ signal: ac.signal, tokenIn: 'query' });
    streams.push(stream);
    await stream.ready;
    expect(urls).toEqual(['/agents/a1/v1/stream/telemetry?access_token=k%20y']);
    ac.abort();
    await eventually(() => stream.connected, (c) => !c);
  });
});
