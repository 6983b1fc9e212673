import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { eventually, openStream } from '../helpers/stream-client.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from '../hal/helpers/socat-pair.js';
import { simDevice } from '../helpers/sim-device.js';

/**
 * Firmware update progress on the stream (docs/devices.md § Firmware update progress): while the
 * route flashes an emulated serial device, `firmware_update_progress` platform events carry the bytes
 * the device acknowledged, then the result.
 */
const ADMIN = 'f7'.repeat(32);
const auth = { Authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

describe.skipIf(!socatAvailable)(`firmware update progress events ${socatAvailable ? '' : SOCAT_SKIP_REASON}`, () => {
  const children: ChildProcess[] = [];
  const pairs: SocatPair[] = [];
  let agents: RunningAgent[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(agents.splice(0).map((a) => a.close()));
    await Promise.all(pairs.splice(0).map((p) => p.dispose()));
  });

  it('publishes started, rising acknowledged bytes and the outcome; the answer carries duration_ms', async () => {
    const pair = await startSocatPair();
    pairs.push(pair);
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN, SVC_HAL_SERIAL_PORTS: pair.a } });
    agents.push(a);
    children.push(simDevice(['--serial', pair.b, '--id', 'ctl-p', '--type', 'motor_controller', '--firmware', '2.0.0']));
    await a.agent.services.deviceHub.start(3000);
    await eventually(() => a.json('/v1/devices/ctl-p/command', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'read_telemetry' }) }), (r) => r.body.ok === true, 15_000, 200);

    const stream = await openStream(a.wsUrl);
    const size = 20_000;
    const res = await a.json('/v1/devices/ctl-p/firmware', { method: 'POST', headers: auth, body: JSON.stringify({ version: '2.1.0', image_base64: Buffer.alloc(size, 0x5a).toString('base64') }) });
    expect(res.body).toMatchObject({ ok: true, outcome: { result: 'activated', version: '2.1.0' }, firmware_version: '2.1.0', duration_ms: expect.any(Number) });
    await stream.waitFor((f) => f.type === 'telemetry' && f.event.event_type === 'firmware_update_progress' && f.event.payload.phase === 'done');
    const events = stream.frames.filter((f) => f.type === 'telemetry' && f.event.event_type === 'firmware_update_progress').map((f) => f.event);
    stream.close();
    expect(events.every((e) => e.kind === 'platform' && e.source === 'svc-hal' && e.entity_id === 'ctl-p')).toBe(true);
    const payloads = events.map((e) => e.payload);
    expect(payloads[0]).toMatchObject({ device_id: 'ctl-p', version: '2.1.0', phase: 'started', sent_bytes: 0, total_bytes: size });
    expect(payloads.at(-1)).toMatchObject({ phase: 'done', result: 'activated', running_version: '2.1.0', total_bytes: size });
    const transfer = payloads.filter((p) => p.phase === 'transfer').map((p) => p.sent_bytes as number);
    // Several intermediate steps, rising, ending with the whole image; never more than one per 2 %.
    expect(transfer.length).toBeGreaterThan(3);
    expect(transfer.length).toBeLessThanOrEqual(51);
    expect([...transfer].sort((x, y) => x - y)).toEqual(transfer);
    expect(transfer.at(-1)).toBe(size);
  }, 60_000);
});
