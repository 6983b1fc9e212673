import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { writeProject } from '../helpers/project-fixture.js';
import { eventually } from '../helpers/stream-client.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from '../hal/helpers/socat-pair.js';
import { simDevice } from '../helpers/sim-device.js';

const ADMIN = 'f4'.repeat(32);
const get = (a: RunningAgent, p: string) => a.json(p, { headers: { authorization: `Bearer ${ADMIN}` } });

/** Rover rover-1 with a redundant IMU pair (imu-a trusted, imu-b not); thermal limit and set point 20 °C (the emulated IMU reads 25–45 °C). */
function project(): string {
  return writeProject({
    'svc.toml': `
[project]
name = "Autonomy Devices"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
fleet = "svc.fleet.toml"
health = "svc.autonomy.toml"
`,
    'svc.fleet.toml': `
[fleet]
id = "f1"
[[fleet.robots]]
id = "rover-1"
hardware_profile = "RoverV2"
`,
    'svc.devices.toml': `
[[devices]]
id = "imu-a"
type = "imu"
robot_id = "rover-1"
redundant_group = "imu"
trust_level = "trusted"
[[devices]]
id = "imu-b"
type = "imu"
robot_id = "rover-1"
redundant_group = "imu"
`,
    'svc.autonomy.toml': `
[autonomy.homeostasis]
temperature_c = { max = 20 }
[autonomy.reflex]
thermal_limit_c = 20
`,
  });
}

describe.skipIf(!socatAvailable)(`autonomy over emulated serial devices (socat ptys) ${socatAvailable ? '' : SOCAT_SKIP_REASON}`, () => {
  const children: ChildProcess[] = [];
  const pairs: SocatPair[] = [];
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
    await Promise.all(pairs.splice(0).map((p) => p.dispose()));
  });

  it('reflexes fire on incoming telemetry (once per excursion, persisted), fusion weighs the redundant pair, and a killed device tops attention and breaks homeostasis', async () => {
    const [pa, pb] = [await startSocatPair(), await startSocatPair()];
    pairs.push(pa, pb);
    const stateDir = tempDir('svc-auto-dev-');
    const manifest = project();
    const env = { SVC_API_KEY: ADMIN, SVC_HAL_SERIAL_PORTS: `${pa.a},${pb.a}`, SVC_HAL_OFFLINE_AFTER_MS: '1200' };
    const a = await startAgent({ configPath: manifest, env, stateDir });
    agents.push(a);
    children.push(simDevice(['--serial', pa.b, '--id', 'imu-a', '--type', 'imu', '--rate', '20', '--seed', '1']));
    const killMe = simDevice(['--serial', pb.b, '--id', 'imu-b', '--type', 'imu', '--rate', '20', '--seed', '2']);
    children.push(killMe);

    // Reflexes: each IMU's first reading above 20 °C records one thermal trace; later samples (still above) record none.
    const fired = await eventually(
      async () => (await get(a, '/v1/autonomy/reflex/traces')).body,
      (b) => b.source === 'runtime' && ['imu-a', 'imu-b'].every((id) => b.traces.some((t: any) => t.device_id === id)),
      20_000,
      100,
    );
    expect(fired.catalog_examples).toEqual([]);
    const t = fired.traces.find((x: any) => x.device_id === 'imu-a');
    expect(t).toMatchObject({ reflex_id: 'reflex.thermal', entity_id: 'imu-a', metric: 'temperature', action_taken: 'reduce_load_and_cool', priority: 180, limit: 20 });
    expect(t.value).toBeGreaterThan(20);
    expect(t.trigger).toBe(`temperature ${t.value} > thermal.limit 20`);
    await new Promise((r) => setTimeout(r, 600));
    const later = (await get(a, '/v1/autonomy/reflex/traces')).body.traces;
    expect(later.filter((x: any) => x.device_id === 'imu-a')).toHaveLength(1);

    // Homeostasis: the device's own temperature against the configured set point.
    const h = (await get(a, '/v1/autonomy/homeostasis')).body;
    expect(h.policy_source).toBe('config');
    const imuA = h.reports.find((r: any) => r.entity_id === 'imu-a');
    const temp = imuA.metrics.find((m: any) => m.name === 'temperature_c');
    expect(temp).toMatchObject({ unit: 'C', source: 'telemetry:imu-a/temperature' });
    expect(temp.value).toBeGreaterThanOrEqual(25);
    expect(imuA.drift_signals).toContainEqual(expect.objectContaining({ metric: 'temperature_c', direction: 'above_max', severity: 'high' }));
    expect(imuA.metrics.find((m: any) => m.name === 'link_error_pct')).toMatchObject({ value: 0, source: `link:${pa.a}` });

    // Fusion: the redundant pair compared metric by metric, trusted imu-a weighted 0.9, imu-b 0.6, both fresh.
    const fu = (await get(a, '/v1/autonomy/fusion')).body;
    const pair = fu.fusion.find((f: any) => f.group === 'imu');
    expect(pair).toMatchObject({ entity_id: 'rover-1', group_kind: 'redundant_group', source_labels: ['imu-a', 'imu-b'], sources: 2 });
    const accel = pair.quantities.find((q: any) => q.metric === 'accel_z');
    expect(accel.readings.map((r: any) => [r.source, r.base_confidence])).toEqual([
      ['imu-a', 0.9],
      ['imu-b', 0.6],
    ]);
    for (const r of accel.readings) expect(r.confidence).toBeGreaterThan(r.base_confidence * 0.9);
    const values = accel.readings.map((r: any) => r.value);
    expect(accel.fused_value).toBeGreaterThanOrEqual(Math.min(...values) - 1e-9);
    expect(accel.fused_value).toBeLessThanOrEqual(Math.max(...values) + 1e-9);

    // Kill imu-b's emulator: the heartbeat timeout marks it offline.
    killMe.kill('SIGKILL');
    await eventually(
      async () => (await get(a, '/v1/devices/imu-b')).body.device?.health_status,
      (s) => s === 'offline',
      10_000,
      100,
    );
    const att = (await get(a, '/v1/autonomy/attention')).body.attention;
    expect(att.items[0]).toMatchObject({ entity_id: 'imu-b', health_status: 'offline', priority: 'critical', suppressed: false });
    // Suppress-routine: while something is critical, routine items are suppressed.
    expect(att.items.filter((i: any) => i.priority === 'routine').every((i: any) => i.suppressed)).toBe(true);
    expect(att.items.find((i: any) => i.entity_id === 'imu-a').priority).not.toBe('critical');

    const h2 = (await get(a, '/v1/autonomy/homeostasis')).body;
    const imuB = h2.reports.find((r: any) => r.entity_id === 'imu-b');
    expect(imuB.stable).toBe(false);
    expect(imuB.drift_signals).toContainEqual(expect.objectContaining({ metric: 'device_health', direction: 'offline', severity: 'high', device_id: 'imu-b' }));
    expect(imuB.corrections).toContainEqual(expect.objectContaining({ metric: 'device_health', action: 'reconnect_device' }));
    expect(imuB.metrics.find((m: any) => m.name === 'telemetry_age_s').value).toBeGreaterThan(1);
    const rover = h2.reports.find((r: any) => r.entity_id === 'rover-1');
    expect(rover.drift_signals).toContainEqual(expect.objectContaining({ metric: 'device_health', direction: 'offline', device_id: 'imu-b' }));

    // Fusion: imu-b's last readings are stale, so their confidence has decayed while imu-a's has not.
    const fu2 = (await get(a, '/v1/autonomy/fusion')).body.fusion.find((f: any) => f.group === 'imu');
    const b = fu2.quantities.find((q: any) => q.metric === 'accel_z').readings.find((r: any) => r.source === 'imu-b');
    expect(b.age_s).toBeGreaterThan(1);
    expect(b.confidence).toBeCloseTo(0.6 * (1 - b.age_s / 60), 2);
    expect(b.confidence).toBeLessThan(0.6);

    // Restart on the same state directory: the traces are still there, nothing re-fired for history.
    const before = (await get(a, '/v1/autonomy/reflex/traces')).body.traces;
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await a.close();
    agents = [];
    const again = await startAgent({ configPath: manifest, env, stateDir });
    agents.push(again);
    const after = (await get(again, '/v1/autonomy/reflex/traces')).body;
    expect(after.source).toBe('runtime');
    expect(after.traces).toEqual(before);
  }, 60_000);
});
