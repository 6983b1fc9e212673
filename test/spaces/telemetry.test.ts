import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MqttDevice } from '../../hal/index.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { MOSQUITTO_SKIP_REASON, startMosquitto, type MosquittoBroker } from '../helpers/mosquitto.js';
import { eventually } from '../helpers/stream-client.js';
import { ADMIN, deadPort, liveGateway, spacesProject } from './fixture.js';

/**
 * Zone occupancy, zone environment and energy systems from the live telemetry of emulated MQTT
 * devices (the MQTT device convention, docs/mqtt-devices.md) that a real agent hears through a real
 * broker: the numbers the routes answer are the readings the devices published.
 */
describe.skipIf(MOSQUITTO_SKIP_REASON !== null)(`smart spaces from MQTT telemetry ${MOSQUITTO_SKIP_REASON ?? ''}`, () => {
  let broker: MosquittoBroker;
  let a: RunningAgent;
  let gw: Awaited<ReturnType<typeof liveGateway>>;
  let configPath: string;
  const devices: MqttDevice[] = [];

  const device = async (id: string, type: string, metrics: string[]) => {
    const d = new MqttDevice({
      url: broker.url,
      identity: {
        id,
        device_type: type,
        firmware_version: '1.0.0',
        hardware_revision: 'test-1',
        serial: `T-${id}`,
        capabilities: metrics.map((m) => `measure_${m}`),
        metrics: metrics.map((name) => ({ name, unit: '', type: 'number' as const })),
        commands: [],
      },
      telemetryIntervalMs: 0,
      heartbeatIntervalMs: 1000,
    });
    d.on('error', () => undefined);
    await d.start();
    devices.push(d);
    return d;
  };

  /** Publishes and waits until the agent's telemetry store holds the reading. */
  const publish = async (d: MqttDevice, id: string, readings: Record<string, number>) => {
    d.publishTelemetry(readings);
    const [metric, value] = Object.entries(readings)[0]!;
    await eventually(
      async () => a.agent.services.telemetry.ring.all().some((e) => e.kind === 'device' && e.device_id === id && e.metric === metric && e.value === value),
      (ok) => ok,
      10_000,
      50,
    );
  };

  beforeAll(async () => {
    broker = await startMosquitto();
    gw = await liveGateway();
    configPath = spacesProject({ live: gw.port, dead: await deadPort() });
    a = await startAgent({ configPath, env: { SVC_API_KEY: ADMIN, SVC_HAL_MQTT_URL: broker.url, SVC_HAL_OFFLINE_AFTER_MS: '1500' } });
    await a.agent.services.deviceHub.start(3000);
  });
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.stop()));
    await a?.close();
    await gw?.close();
    await broker?.dispose();
  });

  it('occupancy counts the people counter reported and its flow; the timeline ends at the latest count', async () => {
    const counter = await device('counter-lobby', 'people_counter', ['people_count']);
    await publish(counter, 'counter-lobby', { people_count: 4 });
    const r = await a.json('/v1/zones/lobby/occupancy');
    expect(r.status).toBe(200);
    expect(r.body.occupancy).toEqual({ present: true, count: 4, flow: 'inbound', source: 'telemetry' });
    expect(r.body.explanation).toBeUndefined();
    expect(r.body.sensors).toEqual([expect.objectContaining({ device_id: 'counter-lobby', metric: 'people_count', value: 4 })]);
    expect(r.body.timeline.at(-1)).toEqual({ offset_minutes: 0, count: 4, flow: 'inbound' });
    // Five minutes earlier there was no reading yet.
    expect(r.body.timeline.at(-2).count).toBe(0);

    await publish(counter, 'counter-lobby', { people_count: 0 });
    const empty = await a.json('/v1/zones/lobby/occupancy');
    expect(empty.body.occupancy).toMatchObject({ present: false, count: 0, source: 'telemetry' });
  }, 30_000);

  it('environment averages the zone sensors’ latest CO2, temperature and humidity and judges the baseline', async () => {
    const envA = await device('env-lobby-a', 'environment', ['co2', 'temperature', 'humidity']);
    const envB = await device('env-lobby-b', 'environment', ['co2_ppm', 'temperature_c']);
    await publish(envA, 'env-lobby-a', { co2: 600, temperature: 21, humidity: 40 });
    await publish(envB, 'env-lobby-b', { co2_ppm: 900, temperature_c: 23 });
    let r = await a.json('/v1/zones/lobby/environment');
    expect(r.status).toBe(200);
    expect(r.body.source).toBe('telemetry');
    expect(r.body.readings).toEqual({ co2_ppm: 750, temperature_c: 22, humidity_pct: 40, aq_index: null });
    expect(r.body.within_baseline).toBe(true);
    expect(r.body.twin).toEqual({ id: 'lobby-twin', mirror: ['occupancy'] });

    // CO2 climbs past 800 on average: outside the baseline.
    await publish(envB, 'env-lobby-b', { co2_ppm: 1300 });
    r = await a.json('/v1/zones/lobby/environment');
    expect(r.body.readings.co2_ppm).toBe(950);
    expect(r.body.within_baseline).toBe(false);
  }, 30_000);

  it('a battery and a charger report their state of charge, backup power, session and load', async () => {
    expect((await a.json('/v1/energy/systems/battery-1')).body).toMatchObject({ source: 'none', detail: { soc_percent: null, mode: 'grid_tied', backup_power: null } });
    const battery = await device('battery-1', 'battery', ['soc_percent', 'backup_power']);
    await publish(battery, 'battery-1', { soc_percent: 63.5, backup_power: 1 });
    const b = await a.json('/v1/energy/systems/battery-1');
    expect(b.status).toBe(200);
    expect(b.body).toMatchObject({ source: 'telemetry', system: { id: 'battery-1', type: 'BatteryStorage', facility: 'tower-demo' }, detail: { soc_percent: 63.5, mode: 'grid_tied', backup_power: true } });
    expect(typeof b.body.updated_at_ms).toBe('number');

    const charger = await device('charger-1', 'charger', ['load_kw', 'session_active']);
    await publish(charger, 'charger-1', { load_kw: 7.2, session_active: 1 });
    const c = await a.json('/v1/energy/systems/charger-1');
    expect(c.body).toMatchObject({ source: 'telemetry', detail: { session_active: true, load_kw: 7.2 } });
    await publish(charger, 'charger-1', { load_kw: 0, session_active: 0 });
    expect((await a.json('/v1/energy/systems/charger-1')).body.detail).toEqual({ session_active: false, load_kw: 0 });
  }, 30_000);

  it('a life-safety device that goes offline fails emergency_systems and evacuation; coming back clears both', async () => {
    const factor = async () => (await a.json('/v1/facilities/tower-demo/readiness')).body.factors.find((x: { dimension: string }) => x.dimension === 'emergency_systems');
    const leak = await device('leak-lobby', 'leak', ['leak']);
    await publish(leak, 'leak-lobby', { leak: 0 });
    await eventually(() => a.json('/v1/devices/leak-lobby'), (r) => r.body.device?.health_status === 'healthy', 10_000, 100);
    expect(await factor()).toMatchObject({ score: 100, blockers: [] });

    await leak.stop();
    const down = await eventually(factor, (f) => f.blockers.includes('emergency_offline:leak-lobby'), 15_000, 100);
    expect(down.score).toBe(50);
    const status = (await a.json('/v1/emergency/status')).body;
    // The offline alert is a warning: not an emergency, but evacuation is no longer ready.
    expect(status.evacuation_blockers).toContain('leak-lobby:offline');
    expect(status.active_emergencies).toEqual([]);

    const back = await device('leak-lobby', 'leak', ['leak']);
    await publish(back, 'leak-lobby', { leak: 0 });
    const up = await eventually(factor, (f) => f.blockers.length === 0, 15_000, 100);
    expect(up.score).toBe(100);
    expect((await a.json('/v1/emergency/status')).body.evacuation_blockers).not.toContain('leak-lobby:offline');
  }, 45_000);

  it('an engaged e-stop in a zone is an active emergency', async () => {
    const b = await startAgent({
      configPath: spacesProject({ live: gw.port, dead: gw.port }, '\n[[facilities.zones]]\nid = "dock"\n[[facilities.zones.devices]]\nid = "estop-dock"\ntype = "EStopButton"\n'),
      env: { SVC_HAL_MQTT_URL: broker.url },
    });
    try {
      await b.agent.services.deviceHub.start(3000);
      expect((await b.json('/v1/emergency/status')).body).toMatchObject({ status: 'normal', estop_devices: ['estop-dock'], evacuation_ready: true });
      const estop = await device('estop-dock', 'estop', ['estop_engaged']);
      estop.publishTelemetry({ estop_engaged: 1 });
      const r = await eventually(() => b.json('/v1/emergency/status'), (x) => x.body.status === 'emergency', 10_000, 50);
      expect(r.body.active_emergencies).toEqual([expect.objectContaining({ id: 'estop-dock', kind: 'estop', severity: 'critical' })]);
    } finally {
      await b.close();
    }
  }, 30_000);

  it('after a restart the zones and energy systems answer from the recorded telemetry (no device connected)', async () => {
    // A device no facility names: recorded by the telemetry store, ignored by the smart-space readings.
    a.agent.services.telemetry.ring.append({ kind: 'device', device_id: 'imu-9', metric: 'accel_z', value: 9.8, timestamp_ms: Date.now() });
    const stateDir = a.stateDir;
    await a.close();
    a = await startAgent({ configPath, stateDir, env: { SVC_API_KEY: ADMIN } });
    const battery = await a.json('/v1/energy/systems/battery-1');
    expect(battery.body).toMatchObject({ source: 'telemetry', detail: { soc_percent: 63.5, backup_power: true } });
    const env = await a.json('/v1/zones/lobby/environment');
    expect(env.body.readings).toMatchObject({ co2_ppm: 950, temperature_c: 22 });
    const occ = await a.json('/v1/zones/lobby/occupancy');
    expect(occ.body.occupancy).toMatchObject({ source: 'telemetry', count: 0, present: false });
    expect(occ.body.sensors).toEqual([expect.objectContaining({ device_id: 'counter-lobby', metric: 'people_count', value: 0 })]);
  }, 30_000);
});
