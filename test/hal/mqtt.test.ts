import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventEmitter } from 'node:events';
import { CommandTimeoutError, MqttGateway, type StatusEvent, type TelemetryEvent } from '../../hal/mqtt/mqtt-gateway.js';
import { MqttDevice, type MqttDeviceOptions } from '../../hal/mqtt/mqtt-device.js';
import { MqttLink } from '../../hal/mqtt/mqtt-link.js';
import { MOSQUITTO_SKIP_REASON, startMosquitto, type MosquittoBroker } from '../helpers/mosquitto.js';

/** Resolves with the first `event` whose payload satisfies `pred`. */
function waitForEvent<T>(emitter: EventEmitter, event: string, pred: (v: T) => boolean = () => true, timeoutMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${event}`));
    }, timeoutMs);
    const on = (v: T) => {
      if (!pred(v)) return;
      clearTimeout(timer);
      emitter.off(event, on);
      resolve(v);
    };
    emitter.on(event, on);
  });
}

async function until(cond: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const FAST_LINK = { backoffBaseMs: 50, backoffMaxMs: 300 };

if (MOSQUITTO_SKIP_REASON) console.warn(`[mqtt] skipping broker tests: ${MOSQUITTO_SKIP_REASON}`);
const title = MOSQUITTO_SKIP_REASON ? `MQTT devices over a real mosquitto — SKIPPED: ${MOSQUITTO_SKIP_REASON}` : 'MQTT devices over a real mosquitto';

describe.skipIf(MOSQUITTO_SKIP_REASON !== null)(title, () => {
  let broker: MosquittoBroker;
  const cleanups: Array<() => Promise<unknown>> = [];

  beforeEach(async () => {
    broker = await startMosquitto();
  });

  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => {});
    await broker.dispose();
  });

  function device(id: string, extra: Partial<MqttDeviceOptions> = {}): MqttDevice {
    let n = 0;
    const d = new MqttDevice({
      url: broker.url,
      identity: {
        id,
        device_type: 'motor-controller',
        firmware_version: '2.4.1',
        hardware_revision: 'B',
        serial: `SN-${id}`,
        capabilities: ['telemetry', 'commands'],
        metrics: [
          { name: 'temperature', unit: 'degC', type: 'number' },
          { name: 'rpm', unit: 'rpm', type: 'integer' },
          { name: 'enabled', unit: '', type: 'boolean' },
        ],
        commands: ['set_speed', 'fail', 'ping'],
      },
      telemetryIntervalMs: 20,
      heartbeatIntervalMs: 50,
      sample: () => ({ temperature: 21.5, rpm: 1000 + n++, enabled: true }),
      commands: {
        ping: () => ({ status: 'ok' }),
        set_speed: (args) => (typeof args['rpm'] === 'number' ? { status: 'ok', detail: `speed ${args['rpm']}` } : { status: 'rejected', detail: 'rpm must be a number' }),
        fail: () => {
          throw new Error('motor stalled');
        },
      },
      link: FAST_LINK,
      ...extra,
    });
    cleanups.push(() => d.stop());
    return d;
  }

  function gateway(): MqttGateway {
    const g = new MqttGateway({ url: broker.url, linkOptions: FAST_LINK });
    cleanups.push(() => g.close());
    return g;
  }

  function rawLink(): MqttLink {
    const l = new MqttLink({ url: broker.url, ...FAST_LINK });
    cleanups.push(() => l.close());
    return l;
  }

  it('discovery is retained: a gateway started after the device still discovers it, with status online', async () => {
    const dev = device('arm-1');
    await dev.start();
    // The birth messages are QoS 1: once the device's queue is empty and nothing is in flight, the broker has them.
    await until(() => dev.link.stats().inflight === 0, 2000, 'birth messages acknowledged');

    const gw = gateway();
    const discovered = waitForEvent<{ device_id: string; identity: { firmware_version: string }; retained: boolean }>(gw, 'device-discovered');
    const status = waitForEvent<StatusEvent>(gw, 'device-status');
    await gw.start();
    const d = await discovered;
    expect(d.device_id).toBe('arm-1');
    expect(d.retained).toBe(true);
    expect(d.identity).toMatchObject({
      id: 'arm-1',
      device_type: 'motor-controller',
      firmware_version: '2.4.1',
      hardware_revision: 'B',
      serial: 'SN-arm-1',
      protocol_version: 1,
      commands: ['set_speed', 'fail', 'ping'],
    });
    expect(await status).toMatchObject({ device_id: 'arm-1', status: 'online', retained: true });
    expect(gw.device('arm-1')?.identity?.metrics).toHaveLength(3);
  });

  it('telemetry and heartbeats flow with units from discovery', async () => {
    const gw = gateway();
    await gw.start();
    const seen: TelemetryEvent[] = [];
    gw.on('telemetry', (t) => seen.push(t));
    const dev = device('arm-2');
    dev.setFaults(['overtemp']);
    await dev.start();
    await until(() => seen.filter((t) => t.metric === 'rpm').length >= 5, 5000, 'five rpm readings');
    const rpm = seen.filter((t) => t.metric === 'rpm');
    expect(rpm[0]).toMatchObject({ device_id: 'arm-2', unit: 'rpm' });
    expect(typeof rpm[0]!.ts_ms).toBe('number');
    // Consecutive samples in order (QoS 0 over one connection keeps order).
    const values = rpm.map((t) => t.value as number);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(seen.find((t) => t.metric === 'temperature')).toMatchObject({ value: 21.5, unit: 'degC' });
    expect(seen.find((t) => t.metric === 'enabled')).toMatchObject({ value: true, unit: '' });

    const hb = await waitForEvent<{ device_id: string; faults: string[]; uptime_ms: number }>(gw, 'heartbeat', (h) => h.device_id === 'arm-2');
    expect(hb.faults).toEqual(['overtemp']);
    expect(hb.uptime_ms).toBeGreaterThanOrEqual(0);
    expect(gw.stats().malformed).toBe(0);
  });

  it('command → ack round trip, correlated by id; unknown device times out', async () => {
    const gw = gateway();
    await gw.start();
    const dev = device('arm-3', { telemetryIntervalMs: 0 });
    await dev.start();

    await expect(gw.sendCommand('arm-3', 'set_speed', { rpm: 1200 }, 2000)).resolves.toMatchObject({ status: 'ok', detail: 'speed 1200' });
    await expect(gw.sendCommand('arm-3', 'set_speed', { rpm: 'fast' }, 2000)).resolves.toMatchObject({ status: 'rejected' });
    await expect(gw.sendCommand('arm-3', 'fail', {}, 2000)).resolves.toMatchObject({ status: 'error', detail: 'motor stalled' });
    await expect(gw.sendCommand('arm-3', 'self_destruct', {}, 2000)).resolves.toMatchObject({ status: 'rejected', detail: 'unknown command self_destruct' });

    // Concurrent commands resolve with their own acks.
    const acks = await Promise.all([1, 2, 3, 4, 5].map((rpm) => gw.sendCommand('arm-3', 'set_speed', { rpm }, 2000)));
    expect(acks.map((a) => a.detail)).toEqual(['speed 1', 'speed 2', 'speed 3', 'speed 4', 'speed 5']);
    expect(new Set(acks.map((a) => a.id)).size).toBe(5);

    const started = Date.now();
    const err = await gw.sendCommand('ghost-9', 'ping', {}, 300).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandTimeoutError);
    expect((err as CommandTimeoutError).deviceId).toBe('ghost-9');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(gw.stats()).toMatchObject({ commands_sent: 10, acks_matched: 9, command_timeouts: 1, pending_commands: 0 });
    await expect(gw.sendCommand('bad/id', 'ping')).rejects.toThrow(RangeError);
    await expect(gw.sendCommand('arm-3', 'not a name')).rejects.toThrow(RangeError);
  });

  it('Last Will: an abruptly destroyed device socket makes the broker publish offline; the device comes back online', async () => {
    const gw = gateway();
    await gw.start();
    const statuses: StatusEvent[] = [];
    gw.on('device-status', (s) => statuses.push(s));
    const dev = device('arm-4', { telemetryIntervalMs: 0, heartbeatIntervalMs: 0, link: { ...FAST_LINK, backoffBaseMs: 400, backoffMaxMs: 400 } });
    await dev.start();
    await until(() => statuses.some((s) => s.status === 'online'), 3000, 'online');

    dev.simulateConnectionLoss(); // socket.destroy(): no DISCONNECT, so the Will fires
    const offline = await waitForEvent<StatusEvent>(gw, 'device-status', (s) => s.status === 'offline');
    expect(offline).toMatchObject({ device_id: 'arm-4', status: 'offline' });
    expect(gw.device('arm-4')?.status).toBe('offline');

    // The device reconnects on its own and re-announces itself.
    await waitForEvent<StatusEvent>(gw, 'device-status', (s) => s.status === 'online');
    expect(dev.link.stats().reconnects).toBe(1);

    // A clean stop also ends in offline (published by the device, not by the Will).
    const cleanOffline = waitForEvent<StatusEvent>(gw, 'device-status', (s) => s.status === 'offline');
    await dev.stop();
    await cleanOffline;
    expect(statuses.map((s) => s.status)).toEqual(['online', 'offline', 'online', 'offline']);
  });

  it('broker restart: device and gateway reconnect by themselves, retained state is restored and flow resumes', async () => {
    const gw = gateway();
    await gw.start();
    const dev = device('arm-5');
    await dev.start();
    await waitForEvent(gw, 'telemetry');

    const gwDown = waitForEvent(gw.link, 'disconnect');
    const devDown = waitForEvent(dev.link, 'disconnect');
    await broker.stop();
    await Promise.all([gwDown, devDown]);
    expect(gw.link.state).not.toBe('open');
    await new Promise((r) => setTimeout(r, 200));
    await broker.restart();

    await Promise.all([gw.link.whenOpen(5000), dev.link.whenOpen(5000)]);
    const after = Date.now();
    const t = await waitForEvent<TelemetryEvent>(gw, 'telemetry', (e) => e.received_ms >= after, 5000);
    expect(t.device_id).toBe('arm-5');
    expect(gw.link.stats().reconnects).toBeGreaterThanOrEqual(1);
    expect(dev.link.stats().reconnects).toBeGreaterThanOrEqual(1);
    await expect(gw.sendCommand('arm-5', 'ping', {}, 2000)).resolves.toMatchObject({ status: 'ok' });

    // The restarted broker kept nothing (persistence false); the device's birth messages restored its retained state.
    const late = gateway();
    const discovered = waitForEvent<{ device_id: string; retained: boolean }>(late, 'device-discovered', (d) => d.device_id === 'arm-5');
    await late.start();
    expect(await discovered).toMatchObject({ retained: true });
  });

  it('offline queue is bounded: the oldest messages are dropped and counted, the rest flushed in order', async () => {
    const sub = rawLink();
    const got: string[] = [];
    sub.on('message', (_topic, payload) => got.push(payload.toString()));
    sub.start();
    await sub.whenOpen();
    await sub.subscribe('q/test', 1);

    // The publisher's first reconnect waits at least 300 ms (backoff floor = base / 4).
    const pub = new MqttLink({ url: broker.url, queueCapacity: 10, backoffBaseMs: 1200, backoffMaxMs: 1200 });
    cleanups.push(() => pub.close());
    pub.start();
    await pub.whenOpen();
    const down = waitForEvent(pub, 'state', (s) => s === 'backoff');
    pub.dropConnection();
    await down;

    for (let i = 0; i < 25; i++) expect(pub.publish('q/test', `m${i}`, { qos: 1 })).toBe('queued');
    expect(pub.stats()).toMatchObject({ queued: 10, dropped_out: 15, state: 'backoff' });

    await pub.whenOpen(5000);
    await until(() => got.length >= 10, 3000, 'ten flushed messages');
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => `m${i + 15}`));
    expect(pub.stats()).toMatchObject({ queued: 0, dropped_out: 15, reconnects: 1 });
  });

  it('malformed payloads on device topics are counted and reported, never fatal', async () => {
    const gw = gateway();
    await gw.start();
    const reasons: string[] = [];
    gw.on('malformed', (m) => reasons.push(m.reason));
    const raw = rawLink();
    raw.start();
    await raw.whenOpen();

    raw.publish('svc/devices/dev-x/telemetry', '{not json');
    raw.publish('svc/devices/dev-x/telemetry', JSON.stringify({ ts_ms: 1, readings: { temp: { nested: 1 } } }));
    raw.publish('svc/devices/dev-x/heartbeat', JSON.stringify({ ts_ms: -5, uptime_ms: 1, faults: [] }));
    raw.publish('svc/devices/dev-x/status', 'maybe');
    raw.publish('svc/devices/dev-x/discovery', JSON.stringify({ id: 'someone-else', protocol_version: 1 }));
    raw.publish('svc/devices/dev-x/ack', JSON.stringify({ id: 'c1', status: 'done' }));
    raw.publish('svc/devices/dev-x/telemetry', Buffer.alloc(70 * 1024, 0x20));
    raw.publish('svc/devices/bad$id/telemetry', JSON.stringify({ ts_ms: 1, readings: { t: 1 } }));
    // A valid message after all that is still delivered.
    const ok = waitForEvent<TelemetryEvent>(gw, 'telemetry', (t) => t.device_id === 'dev-x');
    raw.publish('svc/devices/dev-x/telemetry', JSON.stringify({ ts_ms: 5, readings: { t: 1.5 } }));
    expect(await ok).toMatchObject({ metric: 't', value: 1.5, unit: null, ts_ms: 5 });

    expect(gw.stats().malformed).toBe(8);
    expect(gw.stats().link.malformed_in).toBe(8);
    expect(reasons).toContain('invalid JSON');
    expect(reasons).toContain('invalid device id in topic');
    expect(reasons.some((r) => r.includes('exceeds'))).toBe(true);
    expect(gw.link.isOpen).toBe(true);

    // Device side: garbage on the command topic is counted; a bad command with a readable id is rejected by ack.
    const dev = device('arm-6', { telemetryIntervalMs: 0 });
    await dev.start();
    const rejected = waitForEvent<{ device_id: string; ack: { id: string; status: string } }>(gw, 'ack', (a) => a.device_id === 'arm-6');
    raw.publish('svc/devices/arm-6/command', '\u0000\u0001garbage', { qos: 1 });
    raw.publish('svc/devices/arm-6/command', JSON.stringify({ id: 'x-1', name: 'no spaces allowed' }), { qos: 1 });
    expect(await rejected).toMatchObject({ ack: { id: 'x-1', status: 'rejected' } });
    expect(dev.stats().commands_malformed).toBe(2);
    await expect(gw.sendCommand('arm-6', 'ping', {}, 2000)).resolves.toMatchObject({ status: 'ok' });
  });

  it('the device table is bounded: ids beyond maxDevices are counted, not stored', async () => {
    const g = new MqttGateway({ url: broker.url, linkOptions: FAST_LINK, maxDevices: 2 });
    cleanups.push(() => g.close());
    await g.start();
    const raw = rawLink();
    raw.start();
    await raw.whenOpen();
    const third = waitForEvent<{ reason: string; device_id: string }>(g, 'malformed');
    for (const id of ['d1', 'd2', 'd3']) raw.publish(`svc/devices/${id}/status`, 'online', { qos: 1 });
    expect(await third).toMatchObject({ device_id: 'd3', reason: 'device table full' });
    expect(g.devices().map((d) => d.id)).toEqual(['d1', 'd2']);
  });

  it('a redelivered command (same id) is re-acked, not re-executed', async () => {
    let executed = 0;
    const dev = device('arm-7', { telemetryIntervalMs: 0, commands: { ping: () => void executed++ } });
    await dev.start();
    const raw = rawLink();
    const acks: string[] = [];
    raw.on('message', (_t, p) => acks.push(p.toString()));
    raw.start();
    await raw.whenOpen();
    await raw.subscribe('svc/devices/arm-7/ack', 1);
    const cmd = JSON.stringify({ id: 'dup-1', name: 'ping', args: {} });
    raw.publish('svc/devices/arm-7/command', cmd, { qos: 1 });
    raw.publish('svc/devices/arm-7/command', cmd, { qos: 1 });
    await until(() => acks.length === 2, 3000, 'two acks');
    expect(executed).toBe(1);
    expect(acks.map((a) => JSON.parse(a) as unknown)).toEqual([
      { id: 'dup-1', status: 'ok' },
      { id: 'dup-1', status: 'ok' },
    ]);
    expect(dev.stats().commands_duplicate).toBe(1);
  });

  it('round trips are fast (Nagle off on both sides): 200 sequential command/ack round trips in under 2 s', async () => {
    const gw = gateway();
    await gw.start();
    const dev = device('arm-8', { telemetryIntervalMs: 0, heartbeatIntervalMs: 0 });
    await dev.start();
    await gw.sendCommand('arm-8', 'ping', {}, 2000); // warm-up
    const started = performance.now();
    for (let i = 0; i < 200; i++) await gw.sendCommand('arm-8', 'ping', {}, 2000);
    const elapsed = performance.now() - started;
    console.info(`[mqtt] 200 command/ack round trips in ${elapsed.toFixed(0)} ms (${((200 / elapsed) * 1000).toFixed(0)}/s)`);
    // With Nagle on this is ~11 round trips/s (~18 s); the bound is deliberately generous.
    expect(elapsed).toBeLessThan(2000);
  });
});
