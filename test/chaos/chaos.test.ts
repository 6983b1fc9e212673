import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { EXPERIMENTS_FILE } from '../../agent/chaos/experiments.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { eventually } from '../helpers/stream-client.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from '../hal/helpers/socat-pair.js';
import { simDevice } from '../helpers/sim-device.js';

const DEMO = path.resolve(__dirname, '../../demo');
const ADMIN = 'c1'.repeat(32);
const json = { 'content-type': 'application/json' };
const auth = (t: string) => ({ Authorization: `Bearer ${t}`, ...json });

let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function agent(withProgram: boolean, stateDir = tempDir()) {
  const project = tempDir('svc-chaos-project-');
  fs.cpSync(DEMO, project, { recursive: true });
  const a = await startAgent({
    stateDir,
    env: { SVC_API_KEY: ADMIN },
    configPath: path.join(project, 'svc.toml'),
    programPath: withProgram ? path.join(project, 'programs/patrol.sd') : null,
  });
  running.push(a);
  return a;
}
const post = (a: RunningAgent, p: string, body: unknown, token: string | null = null) =>
  a.json(p, { method: 'POST', headers: token ? auth(token) : json, body: JSON.stringify(body) });

const CATALOGUE = ['gps-failure', 'camera-failure', 'lidar-failure', 'connectivity-failure', 'provider-failure', 'package-failure', 'battery-failure'];

describe('static chaos experiment over the loaded program', () => {
  it('lists the seven injection kinds', async () => {
    const a = await agent(false);
    expect((await a.json('/v1/chaos/injections')).body).toEqual({ version: 'v1', injections: CATALOGUE });
  });

  it('check 25: without a program the answer is 200 ok:false with the catalogue', async () => {
    const a = await agent(false);
    const r = await post(a, '/v1/chaos/simulate', {});
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: 'v1', ok: false, message: 'no program loaded; pass --program to Control Center to run chaos experiments', injections: CATALOGUE });
    const bad = await a.json('/v1/chaos/simulate', { method: 'POST', headers: json, body: '{"injections":' });
    expect(bad.status).toBe(400);
  });

  it('check 26: an unknown injection fails every flag with its reason', async () => {
    const a = await agent(true);
    const r = await post(a, '/v1/chaos/simulate', { injections: ['warp-drive', 42] });
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(r.body.report.program).toBe('patrol.sd');
    expect(r.body.report.injections).toEqual([
      { injection: 'warp-drive', recovery_passed: false, health_passed: false, readiness_passed: false, safety_passed: false, passed: false, details: ['unknown injection kind: warp-drive'] },
    ]);
    expect(r.body.report.passed).toBe(false);
  });

  it('runs heal, a simulated run with the failure injected, readiness and safety per kind; defaults come from the program text (F23)', async () => {
    const a = await agent(true);
    const r = await post(a, '/v1/chaos/simulate', {});
    expect(r.status).toBe(200);
    const labels = r.body.report.injections.map((i: any) => i.injection);
    // patrol.sd mentions gps, camera, lidar, connectivity and battery.
    expect(labels).toEqual(['gps-failure', 'camera-failure', 'lidar-failure', 'connectivity-failure', 'battery-failure']);
    for (const i of r.body.report.injections) {
      expect(i.details).toHaveLength(4);
      expect(i.details[0]).toMatch(/^recovery: (pass|fail) \(plans=\d+, success_rate=\d+%\)$/);
      expect(i.details[1]).toMatch(/^readiness: (pass|fail) \(mission_ready=(true|false), score \d+\/100\)$/);
      expect(i.details[2]).toMatch(/^health: (pass|fail) \(overall=\w+, checks=\d+\)$/);
      expect(i.details[3]).toMatch(/^safety: (pass|fail) \(unsafe_results=\d+, approved_actions=\d+\/\d+\)$/);
      expect(i.passed).toBe(i.recovery_passed && i.health_passed && i.readiness_passed && i.safety_passed);
    }
    // Each kind runs the program with its own fault: a critical battery is a critical robot; connectivity has no runtime model.
    const by = Object.fromEntries(r.body.report.injections.map((i: any) => [i.injection, i]));
    expect(by['gps-failure'].runtime_faults.map((f: any) => f.fault)).toContain('GPSDegraded');
    expect(by['battery-failure'].runtime_faults.map((f: any) => f.fault)).toContain('RobotHealthCritical');
    expect(by['battery-failure'].health_passed).toBe(false);
    expect(by['battery-failure'].details[2]).toMatch(/overall=Critical/);
    expect(by['connectivity-failure'].runtime_faults).toEqual([]);
    expect(by['connectivity-failure'].details[2]).toMatch(/overall=Healthy/);
    // Spellings normalise to the same kind; the label is echoed as given.
    const gps = await post(a, '/v1/chaos/simulate', { injections: ['GPS_Failure', 'gps'] });
    const [x, y] = gps.body.report.injections;
    expect(x.injection).toBe('GPS_Failure');
    expect({ ...x, injection: 'gps' }).toEqual(y);
    // The gps plan is planned for the gps context only.
    expect(x.details[0]).toMatch(/plans=1,/);
  });
});

describe('live chaos experiments (Operate)', () => {
  it('needs Operate: 401 anonymous, 403 auditor, 400 unknown fault or device; an operator starts it (200, a running report) and a second one on the same device is 409', async () => {
    const a = await agent(false);
    const key = async (role: string) => (await post(a, '/v1/admin/api-keys', { role }, ADMIN)).body.token as string;
    const id = a.agent.services.devices.list()[0]!.id;
    const body = { device_id: id, fault: 'link_loss', duration_secs: 0.5, recovery_timeout_secs: 1 };
    expect((await post(a, '/v1/chaos/experiments', body)).status).toBe(401);
    expect((await post(a, '/v1/chaos/experiments', body, await key('auditor'))).status).toBe(403);
    const operator = await key('operator');
    expect((await post(a, '/v1/chaos/experiments', { ...body, fault: 'fire' }, operator)).status).toBe(400);
    const unknown = await post(a, '/v1/chaos/experiments', { ...body, device_id: 'nope' }, operator);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatch(/device 'nope' not found/);
    expect((await a.json('/v1/chaos/experiments')).body).toEqual({ version: 'v1', experiments: [], count: 0 });
    const r = await post(a, '/v1/chaos/experiments', body, operator);
    expect(r.status).toBe(200);
    expect(r.body.experiment).toMatchObject({ device_id: id, fault: 'link_loss', status: 'running', duration_ms: 500, recovery_timeout_ms: 1000, transitions: [], detected_at_ms: null });
    expect(r.body.experiment.requested_by).toBeTruthy();
    // The demo's devices have no live link: DeviceActions refuses the injection and the report says so.
    const done = await eventually(async () => (await a.json('/v1/chaos/experiments')).body.experiments[0], (x: any) => x.status !== 'running', 10_000);
    expect(done).toMatchObject({ id: r.body.experiment.id, status: 'failed', detected_at_ms: null });
    expect(done.error).toMatch(/not attached through the HAL/);
    expect(done.finished_at).toBeTruthy();
  });
});

/**
 * End to end: an emulated serial device (`svc sim-device`, the compiled build) over a real socat
 * pty, the agent's HAL and health monitor, the fault injected by the devices domain's DeviceActions
 * through `POST /v1/chaos/experiments`.
 */
describe.skipIf(!socatAvailable)(`live chaos experiments on an emulated device over a socat pty ${socatAvailable ? '' : SOCAT_SKIP_REASON}`, () => {
  const children: ChildProcess[] = [];
  const pairs: SocatPair[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(pairs.splice(0).map((p) => p.dispose()));
  });

  const OFFLINE_AFTER_MS = 1000;
  async function liveAgent(port: string, stateDir: string) {
    const a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN, SVC_HAL_SERIAL_PORTS: port, SVC_HAL_OFFLINE_AFTER_MS: String(OFFLINE_AFTER_MS) } });
    running.push(a);
    await a.agent.services.deviceHub.start(3000);
    return a;
  }
  async function attached(a: RunningAgent, id: string) {
    const { deviceHub, devices } = a.agent.services;
    await eventually(() => devices.get(id)?.health_status === 'healthy' && deviceHub.has(id), (v) => v, 20_000, 50);
  }
  async function until(a: RunningAgent, id: string, timeoutMs: number) {
    return eventually(async () => ((await a.json('/v1/chaos/experiments')).body.experiments as any[]).find((x) => x.id === id), (x: any) => x !== undefined && x.status !== 'running', timeoutMs, 100);
  }

  it('link_loss: degraded after half the offline timeout, offline after it, recovery after the fault ends, HealthChanged offline -> healthy, the report persists across a restart', async () => {
    const p = await startSocatPair();
    pairs.push(p);
    const stateDir = tempDir();
    const a = await liveAgent(p.a, stateDir);
    const operator = (await post(a, '/v1/admin/api-keys', { role: 'operator' }, ADMIN)).body.token as string;
    children.push(simDevice(['--serial', p.b, '--id', 'ctl-7', '--type', 'motor_controller', '--rate', '10']));
    await attached(a, 'ctl-7');
    const health: Array<{ at: number; from: string; to: string; source: string }> = [];
    a.agent.services.bus.subscribe((e) => {
      if (e.type === 'HealthChanged' && e.entity_id === 'ctl-7') health.push({ at: Date.parse(e.timestamp), from: String(e.payload['from']), to: String(e.payload['to']), source: e.source });
    });

    const r = await post(a, '/v1/chaos/experiments', { device_id: 'ctl-7', fault: 'link_loss', duration_secs: 3, recovery_timeout_secs: 10 }, operator);
    expect(r.status).toBe(200);
    expect(r.body.experiment).toMatchObject({ device_id: 'ctl-7', fault: 'link_loss', status: 'running', health_before: 'healthy', duration_ms: 3000 });
    const again = await post(a, '/v1/chaos/experiments', { device_id: 'ctl-7', fault: 'noise', duration_secs: 1 }, operator);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/already running on device 'ctl-7'/);
    const x = await until(a, r.body.experiment.id, 30_000);
    console.log(`chaos link_loss ctl-7: detect (degraded) ${x.time_to_detect_ms} ms, offline ${x.transitions[1]?.offset_ms} ms (offline timeout ${OFFLINE_AFTER_MS} ms), fault ${x.fault_ended_at_ms - x.fault_started_at_ms} ms, recover ${x.time_to_recover_ms} ms after the fault ended, outage ${x.total_outage_ms} ms`);
    expect(x.status).toBe('recovered');
    expect(x.error).toBeNull();
    // The health monitor's rule (docs/devices.md): a device not heard for half the offline timeout is
    // degraded (late), for the whole timeout offline. Detection is the first of these; its sweep runs
    // every offline/10 ms, and the last frame before the drop may be up to one period (100 ms) old.
    expect(x.detected_health).toBe('degraded');
    expect(x.time_to_detect_ms).toBeGreaterThanOrEqual(OFFLINE_AFTER_MS / 2 - 150);
    expect(x.time_to_detect_ms).toBeLessThan(OFFLINE_AFTER_MS / 2 + 1000);
    const offline = x.transitions[1];
    expect(offline).toMatchObject({ from: 'degraded', to: 'offline' });
    expect(offline.reason).toMatch(/no heartbeat or telemetry/);
    expect(offline.offset_ms).toBeGreaterThanOrEqual(OFFLINE_AFTER_MS - 150);
    expect(offline.offset_ms).toBeLessThan(OFFLINE_AFTER_MS + 1000);
    expect(x.fault_ended_at_ms - x.fault_started_at_ms).toBeGreaterThanOrEqual(2990);
    // Recovery: after the link is restored, from the next frames the device sends.
    expect(x.recovered_at_ms).toBeGreaterThanOrEqual(x.fault_ended_at_ms);
    expect(x.time_to_recover_ms).toBeGreaterThanOrEqual(0);
    expect(x.time_to_recover_ms).toBeLessThan(5000);
    expect(x.total_outage_ms).toBe(x.recovered_at_ms - x.fault_started_at_ms);
    expect(x.transitions.map((t: any) => [t.from, t.to])).toEqual([['healthy', 'degraded'], ['degraded', 'offline'], ['offline', 'healthy']]);
    expect(x.transitions[0].offset_ms).toBe(x.time_to_detect_ms);
    // The same transitions went over the bus as the health monitor's HealthChanged events.
    const hal = health.filter((h) => h.source === 'svc-hal');
    expect(hal.map((h) => [h.from, h.to])).toEqual([['healthy', 'degraded'], ['degraded', 'offline'], ['offline', 'healthy']]);
    expect(hal.map((h) => h.at)).toEqual(x.transitions.map((t: any) => t.at_ms));
    expect((await a.json('/v1/devices/ctl-7')).body.device.health_status).toBe('healthy');

    await a.close();
    running = running.filter((r) => r !== a);
    const onDisk = JSON.parse(fs.readFileSync(path.join(stateDir, EXPERIMENTS_FILE), 'utf8'));
    expect(onDisk.map((r: any) => [r.id, r.status])).toEqual([[x.id, 'recovered']]);
    const b = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    running.push(b);
    const after = (await b.json('/v1/chaos/experiments')).body;
    expect(after.count).toBe(1);
    expect(after.experiments[0]).toEqual(x);
  }, 90_000);

  it('noise: the report ends (no health drop needed) and the link\'s malformed-frame counters served by /v1/device-reports rise', async () => {
    const p = await startSocatPair();
    pairs.push(p);
    const a = await liveAgent(p.a, tempDir());
    const operator = (await post(a, '/v1/admin/api-keys', { role: 'operator' }, ADMIN)).body.token as string;
    children.push(simDevice(['--serial', p.b, '--id', 'imu-3', '--type', 'imu', '--rate', '25']));
    await attached(a, 'imu-3');
    const frames = async () => {
      const links = (await a.json('/v1/device-reports')).body.links as Array<{ frames: { malformed: number; crc_errors: number; cobs_errors: number; frames_ok: number } }>;
      expect(links).toHaveLength(1);
      return links[0]!.frames;
    };
    const before = await frames();
    const r = await post(a, '/v1/chaos/experiments', { device_id: 'imu-3', fault: 'noise', share: 0.5, duration_secs: 2, recovery_timeout_secs: 3 }, operator);
    expect(r.status).toBe(200);
    expect(r.body.experiment).toMatchObject({ fault: 'noise', share: 0.5, status: 'running' });
    const x = await until(a, r.body.experiment.id, 30_000);
    const after = await frames();
    console.log(`chaos noise imu-3: ${x.status}, malformed ${before.malformed} -> ${after.malformed} (crc ${before.crc_errors} -> ${after.crc_errors}, cobs ${before.cobs_errors} -> ${after.cobs_errors}), transitions ${JSON.stringify(x.transitions.map((t: any) => t.to))}`);
    // Half the frames corrupted for 2 s: the device is still heard, so nothing is detected (or, if it was, it came back).
    expect(['not_detected', 'recovered']).toContain(x.status);
    expect(x.fault_ended_at_ms - x.fault_started_at_ms).toBeGreaterThanOrEqual(1990);
    expect(after.malformed).toBeGreaterThan(before.malformed + 5);
    expect(after.crc_errors + after.cobs_errors).toBeGreaterThan(before.crc_errors + before.cobs_errors);
    // Restored: frames decode again.
    const ok = after.frames_ok;
    await eventually(frames, (f) => f.frames_ok > ok + 10, 10_000);
  }, 90_000);
});
