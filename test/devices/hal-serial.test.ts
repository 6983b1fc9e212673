import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { eventually, openStream } from '../helpers/stream-client.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from '../hal/helpers/socat-pair.js';
import { simDevice } from '../helpers/sim-device.js';

const ADMIN = 'f2'.repeat(32);
const auth = { Authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

describe.skipIf(!socatAvailable)(`firmware-bridge devices over serial and SLCAN (socat pty pairs) ${socatAvailable ? '' : SOCAT_SKIP_REASON}`, () => {
  const children: ChildProcess[] = [];
  const pairs: SocatPair[] = [];
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
    await Promise.all(pairs.splice(0).map((p) => p.dispose()));
  });

  it('serial: discovery with firmware version, telemetry on the stream, corrupted frames counted, offline within the timeout, replug', async () => {
    const pair = await startSocatPair();
    pairs.push(pair);
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_HAL_SERIAL_PORTS: pair.a, SVC_HAL_OFFLINE_AFTER_MS: '1200' } });
    agents.push(a);
    const stream = await openStream(a.wsUrl);
    children.push(simDevice(['--serial', pair.b, '--id', 'imu-3', '--type', 'imu', '--firmware', '1.4.2', '--rate', '25', '--corrupt-every', '7']));

    const found = await eventually(
      () => a.json('/v1/devices/discover', { method: 'POST', headers: auth, body: JSON.stringify({ transports: ['serial'], timeout_ms: 400 }) }),
      (r) => r.body.results?.[0]?.matches?.length > 0,
      15_000,
      100,
    );
    expect(found.body.results[0]).toMatchObject({ transport: 'serial', supported: true, scanned: [pair.a] });
    expect(found.body.results[0].matches[0]).toMatchObject({ device_id: 'imu-3', device_type: 'imu', firmware_version: '1.4.2', transport: 'serial', target: pair.a });
    const device = (await a.json('/v1/devices/imu-3')).body.device;
    expect(device).toMatchObject({ protocol: 'svc-fw-bridge/1', port: pair.a, serial: 'SIM-imu-3', hardware_revision: 'sim-1', lifecycle_state: 'discovered' });
    expect(device.capabilities).toContain('fw_update');

    const t = await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'device' && f.event.device_id === 'imu-3');
    expect(t.event).toMatchObject({ metric: expect.stringMatching(/^(accel_z|gyro_z|temperature)$/), unit: expect.any(String) });
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'device_heartbeat' && f.event.device_id === 'imu-3');

    // Line noise: every 7th frame has a flipped byte; the gateway counts CRC errors and keeps going.
    const links = await eventually(
      async () => (await a.json('/v1/device-reports')).body.links,
      (l: any[]) => l.some((x) => x.transport === 'serial' && x.frames.crc_errors + x.frames.cobs_errors > 0),
      10_000,
    );
    const serial = links.find((x: any) => x.transport === 'serial');
    expect(serial.frames.frames_ok).toBeGreaterThan(serial.frames.malformed);

    // Commands over the line.
    const cmd = await a.json('/v1/devices/imu-3/command', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'identify', args: { seconds: 2 } }) });
    expect(cmd.body).toMatchObject({ ok: true, ack: { status: 'ok', detail: 'imu-3 blinking' } });
    const bad = await a.json('/v1/devices/imu-3/command', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'launch' }) });
    expect(bad.status).toBe(400);

    // Unplug: the emulator dies; the line stays (socat), so the heartbeat timeout decides.
    const killedAt = Date.now();
    children[0]!.kill('SIGKILL');
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'health' && f.event.target === 'imu-3' && f.event.status === 'offline', 8000);
    expect(Date.now() - killedAt).toBeLessThan(1200 + 1500);
    expect((await a.json('/v1/alerts')).body.alerts).toContainEqual(expect.objectContaining({ alert_type: 'health_critical', source: 'device-health' }));

    // Replug: a fresh emulator on the same line; the HELLO retries find it again.
    children.push(simDevice(['--serial', pair.b, '--id', 'imu-3', '--type', 'imu', '--firmware', '1.4.2']));
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'health' && f.event.target === 'imu-3' && f.event.status === 'healthy' && f.event.from === 'offline', 15_000);
    stream.close();
  }, 60_000);

  it('serial: a firmware update that fails verification rolls back and the device keeps its version; a good one activates', async () => {
    const pair = await startSocatPair();
    pairs.push(pair);
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_HAL_SERIAL_PORTS: pair.a } });
    agents.push(a);
    children.push(simDevice(['--serial', pair.b, '--id', 'ctl-9', '--type', 'motor_controller', '--firmware', '3.0.0', '--update-self-test', 'corrupt']));
    await a.agent.services.deviceHub.start(3000);
    await eventually(() => a.json('/v1/devices/ctl-9'), (r) => r.status === 200 && r.body.device.firmware_version === '3.0.0', 15_000, 100);

    const image = Buffer.alloc(3000, 0x42).toString('base64');
    const refused = await a.json('/v1/devices/ctl-9/firmware', { method: 'POST', headers: { Authorization: 'Bearer nope', 'content-type': 'application/json' }, body: JSON.stringify({ version: '3.1.0', image_base64: image }) });
    expect(refused.status).toBe(401);
    const failed = await a.json('/v1/devices/ctl-9/firmware', { method: 'POST', headers: auth, body: JSON.stringify({ version: '3.1.0', image_base64: image }) });
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ ok: false, outcome: { result: 'rolled_back', version: '3.0.0' }, firmware_version: '3.0.0' });
    expect((await a.json('/v1/alerts')).body.alerts).toContainEqual(expect.objectContaining({ source: 'firmware-update', alert_type: 'recovery_failed' }));

    // Same line, a device whose flash works: the update activates and the registry shows the new version.
    children[0]!.kill('SIGKILL');
    children.push(simDevice(['--serial', pair.b, '--id', 'ctl-9', '--type', 'motor_controller', '--firmware', '3.0.0']));
    await eventually(() => a.json('/v1/devices/ctl-9/command', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'read_telemetry' }) }), (r) => r.body.ok === true, 15_000, 200);
    const ok = await a.json('/v1/devices/ctl-9/firmware', { method: 'POST', headers: auth, body: JSON.stringify({ version: '3.1.0', image_base64: image }) });
    expect(ok.body).toMatchObject({ ok: true, outcome: { result: 'activated', version: '3.1.0' }, firmware_version: '3.1.0' });
  }, 60_000);

  it('SLCAN: a CAN node behind an emulated USB-CAN adapter is discovered and streams telemetry; garbled lines are counted', async () => {
    const pair = await startSocatPair();
    pairs.push(pair);
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_HAL_SLCAN_PORTS: pair.a, SVC_HAL_OFFLINE_AFTER_MS: '1500' } });
    agents.push(a);
    const stream = await openStream(a.wsUrl);
    children.push(simDevice(['--slcan', pair.b, '--id', 'drive-2', '--node', '12', '--type', 'motor_controller', '--firmware', '0.9.0', '--rate', '20', '--corrupt-every', '97']));
    const found = await eventually(
      () => a.json('/v1/devices/discover', { method: 'POST', headers: auth, body: JSON.stringify({ transports: ['can'], timeout_ms: 500 }) }),
      (r) => r.body.results?.[0]?.matches?.length > 0,
      15_000,
      100,
    );
    expect(found.body.results[0]).toMatchObject({ transport: 'can', supported: true, scanned: [`slcan:${pair.a}`] });
    expect(found.body.results[0].matches[0]).toMatchObject({ device_id: 'drive-2', firmware_version: '0.9.0', transport: 'slcan' });
    expect((await a.json('/v1/devices/drive-2')).body.device).toMatchObject({ bus: pair.a, can_id: 12, protocol: 'svc-fw-bridge/1' });
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'device' && f.event.device_id === 'drive-2');
    const cmd = await a.json('/v1/devices/drive-2/command', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'clear_faults' }) });
    expect(cmd.body.ack.status).toBe('ok');
    const links = await eventually(
      async () => (await a.json('/v1/device-reports')).body.links,
      (l: any[]) => l.some((x) => x.transport === 'slcan' && (x.bus.malformed_in > 0 || x.reassembler.malformed > 0)),
      10_000,
    );
    expect(links.find((x: any) => x.transport === 'slcan').nodes).toBe(1);
    children[0]!.kill('SIGKILL');
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.kind === 'health' && f.event.target === 'drive-2' && f.event.status === 'offline', 8000);
    stream.close();
  }, 60_000);
});
