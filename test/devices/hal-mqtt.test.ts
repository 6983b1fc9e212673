import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { MOSQUITTO_SKIP_REASON, startMosquitto, type MosquittoBroker } from '../helpers/mosquitto.js';
import { eventually, openStream } from '../helpers/stream-client.js';
import { simDevice } from '../helpers/sim-device.js';

const ADMIN = 'e1'.repeat(32);
const auth = { Authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

describe.skipIf(MOSQUITTO_SKIP_REASON !== null)(`MQTT devices end to end ${MOSQUITTO_SKIP_REASON ?? ''}`, () => {
  let broker: MosquittoBroker;
  const children: ChildProcess[] = [];
  let agents: RunningAgent[] = [];
  beforeAll(async () => {
    broker = await startMosquitto();
  });
  afterAll(async () => {
    await broker?.dispose();
  });
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
  });

  it('discovers an emulated device with its firmware, streams its telemetry, and marks it offline when it dies', async () => {
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_HAL_MQTT_URL: broker.url, SVC_HAL_OFFLINE_AFTER_MS: '1500' } });
    agents.push(a);
    await a.agent.services.deviceHub.start(3000);
    const stream = await openStream(a.wsUrl);
    children.push(simDevice(['--mqtt', broker.url, '--id', 'probe-7', '--type', 'environment', '--firmware', '2.3.1', '--rate', '20']));

    const found = await eventually(
      () => a.json('/v1/devices/discover', { method: 'POST', headers: auth, body: JSON.stringify({ transports: ['mqtt', 'ble'], timeout_ms: 300 }) }),
      (r) => r.body.results?.[0]?.matches?.some((m: { device_id: string }) => m.device_id === 'probe-7'),
      15_000,
      200,
    );
    expect(found.status).toBe(200);
    const mqtt = found.body.results[0];
    expect(mqtt).toMatchObject({ transport: 'mqtt', supported: true, scanned: [broker.url] });
    expect(mqtt.matches.find((m: { device_id: string }) => m.device_id === 'probe-7')).toMatchObject({ device_type: 'environment', firmware_version: '2.3.1', transport: 'mqtt' });
    expect(found.body.results[1]).toMatchObject({ transport: 'ble', supported: false, matches: [] });
    expect(found.body.results[1].reason).toContain('not supported');
    expect(found.body.registered).toContainEqual(expect.objectContaining({ ok: true, device_id: 'probe-7', lifecycle_state: 'discovered' }));

    const device = (await a.json('/v1/devices/probe-7')).body.device;
    expect(device).toMatchObject({ firmware_version: '2.3.1', protocol: 'svc-mqtt/1', transport: 'mqtt', serial: 'SIM-probe-7', source: 'discovered' });
    expect(device.capabilities).toEqual(['measure_co2', 'measure_humidity', 'measure_temperature']);

    const reading = await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'device' && f.event.device_id === 'probe-7');
    expect(reading.event).toMatchObject({ metric: expect.stringMatching(/^(temperature|humidity|co2)$/), unit: expect.any(String) });
    expect(typeof reading.event.value).toBe('number');
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'health' && f.event.target === 'probe-7' && f.event.status === 'healthy');

    // Command round trip through the broker.
    const cmd = await a.json('/v1/devices/probe-7/command', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'identify' }) });
    expect(cmd.body).toMatchObject({ ok: true, ack: { status: 'ok', detail: 'probe-7 blinking' } });
    const unknown = await a.json('/v1/devices/probe-7/command', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'self_destruct' }) });
    expect(unknown.body.ok).toBe(false);

    // Unplug: the emulator dies without a goodbye; the broker publishes its last will.
    children[0]!.kill('SIGKILL');
    const offline = await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'health' && f.event.target === 'probe-7' && f.event.status === 'offline', 10_000);
    expect(offline.event.from).toBe('healthy');
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'platform' && f.event.event_type === 'health_changed' && f.event.entity_id === 'probe-7' && f.event.payload.to === 'offline');
    const alerts = (await a.json('/v1/alerts')).body.alerts;
    expect(alerts).toContainEqual(expect.objectContaining({ alert_type: 'health_critical', source: 'device-health' }));
    expect((await a.json('/v1/devices/probe-7')).body.device.health_status).toBe('offline');

    // Replug: a new emulator with the same id comes back healthy.
    children.push(simDevice(['--mqtt', broker.url, '--id', 'probe-7', '--type', 'environment', '--firmware', '2.3.1']));
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'health' && f.event.target === 'probe-7' && f.event.status === 'healthy' && f.event.from === 'offline', 10_000);
    stream.close();
  }, 40_000);
});
