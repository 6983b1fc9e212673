import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { DeviceActions } from '../../agent/devices/device-actions.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { MOSQUITTO_SKIP_REASON, startMosquitto } from '../helpers/mosquitto.js';
import { fleetProject } from '../helpers/project-fixture.js';
import { eventually } from '../helpers/stream-client.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from '../hal/helpers/socat-pair.js';
import { simDevice } from '../helpers/sim-device.js';

/**
 * DeviceActions against emulated devices (`svc sim-device`, the compiled build: `npm run build`)
 * over real socat pseudo-terminal pairs. Waits follow events (health transitions on the bus, device
 * signals of the hub); timeouts are generous because the ptys share a loaded machine.
 */

const ADMIN = 'a7'.repeat(32);

interface HealthChange {
  at: number;
  device: string;
  from: string;
  to: string;
}

/** Records every HealthChanged of the agent with its arrival time; `waitFor` resolves on a matching one (past or future). */
function healthLog(a: RunningAgent) {
  const changes: HealthChange[] = [];
  const waiters: Array<{ pred: (c: HealthChange) => boolean; resolve: (c: HealthChange) => void }> = [];
  a.agent.services.bus.subscribe((e) => {
    if (e.type !== 'HealthChanged') return;
    const c = { at: Date.now(), device: String(e.entity_id), from: String(e.payload['from']), to: String(e.payload['to']) };
    changes.push(c);
    for (const w of [...waiters]) if (w.pred(c)) (waiters.splice(waiters.indexOf(w), 1), w.resolve(c));
  });
  return {
    changes,
    waitFor(pred: (c: HealthChange) => boolean, timeoutMs = 15_000, since = 0): Promise<HealthChange> {
      const hit = changes.find((c) => c.at >= since && pred(c));
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching health change within ${timeoutMs} ms; seen ${JSON.stringify(changes.slice(-5))}`)), timeoutMs);
        waiters.push({ pred: (c) => c.at >= since && pred(c), resolve: (c) => (clearTimeout(timer), resolve(c)) });
      });
    },
  };
}

async function expectNotFound(p: Promise<unknown>): Promise<void> {
  await expect(p).rejects.toMatchObject({ status: 404, code: 'not_found' });
}

describe('device actions on the registry (no HAL needed)', () => {
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
  });

  it('quarantine is persisted across a restart; lifecycle refusals are the outcome detail; unknown devices are not_found', async () => {
    const stateDir = tempDir();
    const configPath = fleetProject();
    const a = await startAgent({ stateDir, configPath, env: { SVC_API_KEY: ADMIN } });
    agents.push(a);
    const actions: DeviceActions = a.agent.services.deviceActions;

    const q = await actions.quarantine('rover-1-lidar', 'returns NaN ranges');
    expect(q).toMatchObject({ ok: true, action: 'quarantine', device_id: 'rover-1-lidar', detail: 'device quarantined: returns NaN ranges' });
    expect(q.duration_ms).toBeGreaterThanOrEqual(0);
    expect(q.started_at_ms).toBeGreaterThan(0);

    // A retired device cannot be quarantined: the lifecycle's refusal comes back as the detail.
    a.agent.services.devices.transition('spare-imu', 'retired');
    const refused = await actions.quarantine('spare-imu', 'x');
    expect(refused.ok).toBe(false);
    expect(refused.detail).toContain('retired -> quarantined is not allowed');

    // Failover of a device without a redundant group, or whose group has nobody left, changes nothing.
    const alone = await actions.failover('rover-1-lidar', 'dead');
    expect(alone).toMatchObject({ ok: false, action: 'failover', backup_id: null });

    for (const p of [
      actions.reset('nope', 1000),
      actions.reconnect('nope', 1000),
      actions.failover('nope', 'x'),
      actions.quarantine('nope', 'x'),
      actions.injectLinkLoss('nope', 10),
      actions.injectNoise('nope', 10, 0.5),
    ])
      await expectNotFound(p);
    // Known but not attached through the HAL: the outcome says so rather than throwing.
    const unattached = await actions.reset('gps-a', 1000);
    expect(unattached.ok).toBe(false);
    expect(unattached.detail).toMatch(/not attached through the HAL/);

    await a.close();
    agents = [];
    const b = await startAgent({ stateDir, configPath, env: { SVC_API_KEY: ADMIN } });
    agents.push(b);
    const after = (await b.json('/v1/devices/rover-1-lidar')).body.device;
    expect(after).toMatchObject({ lifecycle_state: 'quarantined', quarantine_reason: 'returns NaN ranges' });
  });
});

describe.skipIf(!socatAvailable)(`device actions on emulated devices over socat ptys ${socatAvailable ? '' : SOCAT_SKIP_REASON}`, () => {
  const children: ChildProcess[] = [];
  const pairs: SocatPair[] = [];
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
    await Promise.all(pairs.splice(0).map((p) => p.dispose()));
  });

  async function pair(): Promise<SocatPair> {
    const p = await startSocatPair();
    pairs.push(p);
    return p;
  }

  async function agentOn(ports: string[], extra: { stateDir?: string; configPath?: string; offlineAfterMs?: number } = {}): Promise<RunningAgent> {
    const a = await startAgent({
      ...(extra.stateDir ? { stateDir: extra.stateDir } : {}),
      ...(extra.configPath ? { configPath: extra.configPath } : {}),
      env: { SVC_API_KEY: ADMIN, SVC_HAL_SERIAL_PORTS: ports.join(','), SVC_HAL_OFFLINE_AFTER_MS: String(extra.offlineAfterMs ?? 1500) },
    });
    agents.push(a);
    await a.agent.services.deviceHub.start(3000);
    return a;
  }

  /** Waits until the device has identified itself through the HAL and reports the wanted health. */
  async function attached(a: RunningAgent, id: string, health: string | null = 'healthy'): Promise<void> {
    const { deviceHub, devices } = a.agent.services;
    await eventually(
      () => devices.get(id) !== undefined && deviceHub.has(id) && (health === null || devices.get(id)!.health_status === health),
      (v) => v,
      20_000,
      50,
    );
  }

  it('reset: a faulty device is rebooted, its faults cleared, and reports healthy again; a hardware fault survives and the outcome says so', async () => {
    const p1 = await pair();
    const p2 = await pair();
    const a = await agentOn([p1.a, p2.a]);
    children.push(simDevice(['--serial', p1.b, '--id', 'imu-7', '--type', 'imu', '--rate', '10', '--fault', 'overtemperature']));
    children.push(simDevice(['--serial', p2.b, '--id', 'imu-8', '--type', 'imu', '--rate', '10', '--persistent-fault', 'undervoltage']));
    await attached(a, 'imu-7', 'degraded');
    await attached(a, 'imu-8', 'degraded');
    const actions = a.agent.services.deviceActions;

    const r = await actions.reset('imu-7', 10_000);
    expect(r, r.detail).toMatchObject({ ok: true, action: 'reset', device_id: 'imu-7' });
    expect(r.detail).toMatch(/rebooted, faults cleared; healthy again/);
    // Reboot ack + 400 ms boot + HELLO/IDENTITY + clear_faults + the next heartbeat (1 s period).
    expect(r.duration_ms).toBeGreaterThanOrEqual(400);
    expect(r.duration_ms).toBeLessThan(10_000);
    expect(a.agent.services.devices.get('imu-7')!.health_status).toBe('healthy');
    console.log(`reset imu-7: ${r.duration_ms} ms (${r.detail})`);

    const stuck = await actions.reset('imu-8', 4000);
    expect(stuck.ok).toBe(false);
    expect(stuck.detail).toMatch(/still reports undervoltage/);
    expect(a.agent.services.devices.get('imu-8')!.health_status).toBe('degraded');
  }, 90_000);

  it('failover: a dead device (emulator killed) hands its robot to the backup of its redundant group; the registry keeps it across a restart', async () => {
    const stateDir = tempDir();
    const configPath = fleetProject();
    const p1 = await pair();
    const p2 = await pair();
    const a = await agentOn([p1.a, p2.a], { stateDir, configPath, offlineAfterMs: 1200 });
    const health = healthLog(a);
    const primary = simDevice(['--serial', p1.b, '--id', 'gps-a', '--type', 'gps', '--rate', '5']);
    children.push(primary, simDevice(['--serial', p2.b, '--id', 'gps-b', '--type', 'gps', '--rate', '5']));
    await attached(a, 'gps-a');
    await attached(a, 'gps-b');
    expect((await a.json('/v1/failover/chains')).body.chains[0]).toMatchObject({ group: 'gps', active_device: 'gps-a' });

    const killedAt = Date.now();
    primary.kill('SIGKILL');
    const offline = await health.waitFor((c) => c.device === 'gps-a' && c.to === 'offline', 15_000, killedAt);
    console.log(`gps-a offline ${offline.at - killedAt} ms after its emulator was killed`);

    const f = await a.agent.services.deviceActions.failover('gps-a', 'no heartbeat');
    expect(f, f.detail).toMatchObject({ ok: true, action: 'failover', device_id: 'gps-a', backup_id: 'gps-b' });
    const check = async (agent: RunningAgent) => {
      // Full records: gps-a still sits on rover-1 (robot_id) but no longer serves it (assigned_robot).
      expect((await agent.json('/v1/devices/gps-a')).body.device).toMatchObject({
        lifecycle_state: 'quarantined',
        robot_id: 'rover-1',
        assigned_robot: null,
        quarantine_reason: 'failover to gps-b: no heartbeat',
      });
      expect((await agent.json('/v1/devices/gps-b')).body.device).toMatchObject({ lifecycle_state: 'active', assigned_robot: 'rover-1' });
      // The robot is mission-ready again: the quarantined device no longer blocks it.
      const readiness = await agent.json('/v1/readiness/run', { method: 'POST', headers: { Authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: '{}' });
      expect(JSON.stringify(readiness.body)).not.toContain('"device_id":"gps-a"');
      expect((await agent.json('/v1/failover/chains')).body.chains[0]).toMatchObject({ group: 'gps', active_device: 'gps-b', exhausted: false });
    };
    await check(a);
    // The backup keeps serving: nothing left to fail over to from it.
    const none = await a.agent.services.deviceActions.failover('gps-b', 'test');
    expect(none).toMatchObject({ ok: false, backup_id: null });

    await a.close();
    agents = [];
    const b = await startAgent({ stateDir, configPath, env: { SVC_API_KEY: ADMIN } });
    agents.push(b);
    await check(b);
  }, 90_000);

  it('reconnect: the link is closed and reopened and the device identifies itself again', async () => {
    const p = await pair();
    const a = await agentOn([p.a]);
    const health = healthLog(a);
    children.push(simDevice(['--serial', p.b, '--id', 'env-4', '--type', 'environment', '--rate', '5']));
    await attached(a, 'env-4');
    const before = a.agent.services.deviceHub.linkStatsOf('env-4')['link'] as { reconnects: number };
    const r = await a.agent.services.deviceActions.reconnect('env-4', 15_000);
    expect(r, r.detail).toMatchObject({ ok: true, action: 'reconnect', device_id: 'env-4' });
    console.log(`reconnect env-4: ${r.duration_ms} ms`);
    const after = a.agent.services.deviceHub.linkStatsOf('env-4')['link'] as { reconnects: number; state: string };
    expect(after).toMatchObject({ state: 'open' });
    expect(after.reconnects).toBe(before.reconnects + 1);
    await attached(a, 'env-4', 'healthy');
    // A reconnect the agent asked for is not a lost device: no offline, no critical alert.
    expect(health.changes.filter((c) => c.device === 'env-4' && c.to === 'offline')).toEqual([]);
  }, 60_000);

  it('link loss: the health monitor sees the device go offline after the timeout and come back by itself', async () => {
    const p = await pair();
    const offlineAfterMs = 1000;
    const a = await agentOn([p.a], { offlineAfterMs });
    const health = healthLog(a);
    children.push(simDevice(['--serial', p.b, '--id', 'ctl-2', '--type', 'motor_controller', '--rate', '10']));
    await attached(a, 'ctl-2');

    const t0 = Date.now();
    const loss = a.agent.services.deviceActions.injectLinkLoss('ctl-2', 3000);
    const offline = await health.waitFor((c) => c.device === 'ctl-2' && c.to === 'offline', 10_000, t0);
    await loss;
    const restored = Date.now();
    const back = await health.waitFor((c) => c.device === 'ctl-2' && c.from === 'offline' && c.to === 'healthy', 10_000, t0);
    console.log(`link loss ctl-2: offline after ${offline.at - t0} ms, restored at ${restored - t0} ms, healthy ${back.at - restored} ms after restore`);
    expect(offline.at - t0).toBeGreaterThanOrEqual(offlineAfterMs - 100);
    expect(offline.at - t0).toBeLessThan(3000);
    expect(back.at).toBeGreaterThanOrEqual(restored);
    expect(back.at - restored).toBeLessThan(5000);
    const injected = a.agent.services.deviceHub.linkStatsOf('ctl-2')['injected_faults'] as Record<string, unknown>;
    expect(injected).toMatchObject({ active: null });
    expect(injected['dropped_in']).toBeGreaterThan(0);
  }, 60_000);

  it('noise: a share of the frames is corrupted, the bridge rejects them and the link error counters rise', async () => {
    const p = await pair();
    const a = await agentOn([p.a]);
    children.push(simDevice(['--serial', p.b, '--id', 'imu-5', '--type', 'imu', '--rate', '25']));
    await attached(a, 'imu-5');
    const errors = () => {
      const f = a.agent.services.deviceHub.linkStatsOf('imu-5')['frames'] as { crc_errors: number; cobs_errors: number; malformed: number; frames_ok: number };
      return f;
    };
    const before = errors();
    await a.agent.services.deviceActions.injectNoise('imu-5', 2000, 0.5);
    const after = errors();
    console.log(`noise imu-5: malformed ${before.malformed} -> ${after.malformed} (crc ${after.crc_errors}, cobs ${after.cobs_errors}), ok frames ${before.frames_ok} -> ${after.frames_ok}`);
    expect(after.malformed).toBeGreaterThan(before.malformed + 5);
    expect(after.crc_errors + after.cobs_errors).toBeGreaterThan(before.crc_errors + before.cobs_errors);
    expect(after.frames_ok).toBeGreaterThan(before.frames_ok);
    const injected = a.agent.services.deviceHub.linkStatsOf('imu-5')['injected_faults'] as Record<string, number | null>;
    expect(injected['active']).toBeNull();
    expect(injected['corrupted_in']).toBeGreaterThan(0);
    // The same counters are what /v1/device-reports shows.
    const links = (await a.json('/v1/device-reports')).body.links as Array<{ frames: { malformed: number } }>;
    expect(links[0]!.frames.malformed).toBeGreaterThanOrEqual(after.malformed);
    // Restored: frames decode again.
    const okAfter = after.frames_ok;
    await eventually(() => errors().frames_ok, (n) => n > okAfter + 10, 10_000);
  }, 60_000);

  it('SLCAN: a CAN node is reset and reconnected without reopening the shared adapter', async () => {
    const p = await pair();
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_HAL_SLCAN_PORTS: p.a, SVC_HAL_OFFLINE_AFTER_MS: '1500' } });
    agents.push(a);
    await a.agent.services.deviceHub.start(3000);
    children.push(simDevice(['--slcan', p.b, '--id', 'drive-3', '--node', '9', '--type', 'motor_controller', '--rate', '10', '--fault', 'overcurrent']));
    await attached(a, 'drive-3', 'degraded');
    const actions = a.agent.services.deviceActions;
    const busBefore = (a.agent.services.deviceHub.linkStatsOf('drive-3') as { bus: { reconnects: number } }).bus.reconnects;
    const r = await actions.reset('drive-3', 10_000);
    expect(r, r.detail).toMatchObject({ ok: true, action: 'reset' });
    const c = await actions.reconnect('drive-3', 10_000);
    expect(c, c.detail).toMatchObject({ ok: true, action: 'reconnect' });
    console.log(`SLCAN drive-3: reset ${r.duration_ms} ms, reconnect ${c.duration_ms} ms`);
    const stats = a.agent.services.deviceHub.linkStatsOf('drive-3') as { bus: { reconnects: number; state: string } };
    expect(stats.bus).toMatchObject({ state: 'open', reconnects: busBefore });
    await attached(a, 'drive-3', 'healthy');
  }, 60_000);
});

describe.skipIf(MOSQUITTO_SKIP_REASON !== null)(`device actions on an emulated MQTT device ${MOSQUITTO_SKIP_REASON ?? ''}`, () => {
  it('reset (no reboot command: clear_faults only), link loss and noise over MQTT', async () => {
    const broker = await startMosquitto();
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_HAL_MQTT_URL: broker.url, SVC_HAL_OFFLINE_AFTER_MS: '1000' } });
    const child = simDevice(['--mqtt', broker.url, '--id', 'probe-9', '--type', 'environment', '--rate', '10', '--fault', 'overtemperature']);
    try {
      await a.agent.services.deviceHub.start(3000);
      const health = healthLog(a);
      const { devices, deviceHub, deviceActions } = a.agent.services;
      await eventually(() => devices.get('probe-9')?.health_status === 'degraded' && deviceHub.has('probe-9'), (v) => v, 20_000, 50);
      const r = await deviceActions.reset('probe-9', 8000);
      expect(r, r.detail).toMatchObject({ ok: true, action: 'reset' });
      expect(r.detail).toMatch(/reboot answered rejected/);

      const t0 = Date.now();
      await deviceActions.injectLinkLoss('probe-9', 2500);
      const offline = await health.waitFor((c) => c.device === 'probe-9' && c.to === 'offline', 5000, t0);
      const back = await health.waitFor((c) => c.device === 'probe-9' && c.from === 'offline', 5000, t0);
      console.log(`MQTT probe-9: reset ${r.duration_ms} ms; link loss offline after ${offline.at - t0} ms, back ${back.at - t0} ms`);
      expect(back.at).toBeGreaterThan(offline.at);

      await deviceActions.injectNoise('probe-9', 1000, 0.5);
      const injected = (deviceHub.linkStatsOf('probe-9')['injected_faults'] as Record<string, { corrupted_in: number; dropped_in: number }>)['probe-9']!;
      expect(injected.dropped_in).toBeGreaterThan(0);
      expect(injected.corrupted_in).toBeGreaterThan(0);
    } finally {
      child.kill('SIGKILL');
      await a.close();
      await broker.dispose();
    }
  }, 60_000);
});
