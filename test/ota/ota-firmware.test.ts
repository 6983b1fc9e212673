import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PlatformEvent } from '../../agent/events/platform-events.js';
import type { RunningAgent } from '../helpers/agent-harness.js';
import { writeProject } from '../helpers/project-fixture.js';
import { simDevice } from '../helpers/sim-device.js';
import { eventually } from '../helpers/stream-client.js';
import { SOCAT_SKIP_REASON, socatAvailable, startSocatPair, type SocatPair } from '../hal/helpers/socat-pair.js';
import { ADMIN, bearer, DEVELOPER, otaAgent, post } from './fixture.js';

const IMAGE_BYTES = 16 * 1024;
const image = (seed: number) => Buffer.from(Array.from({ length: IMAGE_BYTES }, (_, i) => (i * 31 + seed) & 0xff)).toString('base64');

/** A project declaring the controllers (verified identities), so the pool knows them before they speak. */
function project(ids: string[]): string {
  return writeProject({
    'svc.toml': '[project]\nname = "OTA bench"\nversion = "1.0.0"\n[config]\ndevices = "svc.devices.toml"\n',
    'svc.devices.toml': ids.map((id) => `[[devices]]\nid = "${id}"\ntype = "motor_controller"\ntrust_level = "verified"\n`).join('\n'),
  });
}

describe.skipIf(!socatAvailable)(`OTA firmware rollouts to emulated serial controllers ${socatAvailable ? '' : SOCAT_SKIP_REASON}`, () => {
  const children: ChildProcess[] = [];
  const pairs: SocatPair[] = [];
  const agents: RunningAgent[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    await Promise.all(agents.splice(0).map((a) => a.close()));
    await Promise.all(pairs.splice(0).map((p) => p.dispose()));
  });

  /** n controllers on their own pty pairs; `failing` ids fail their post-activation self-test. */
  async function fleet(ids: string[], failing: string[] = []): Promise<RunningAgent> {
    const lines = await Promise.all(ids.map(() => startSocatPair()));
    pairs.push(...lines);
    const a = await otaAgent({ configPath: project(ids), env: { SVC_HAL_SERIAL_PORTS: lines.map((p) => p.a).join(',') } });
    agents.push(a);
    ids.forEach((id, i) =>
      children.push(simDevice(['--serial', lines[i]!.b, '--id', id, '--type', 'motor_controller', '--firmware', '1.0.0', ...(failing.includes(id) ? ['--update-self-test', 'fail'] : [])])),
    );
    await a.agent.services.deviceHub.start(3000);
    for (const id of ids) {
      await eventually(() => a.json(`/v1/devices/${id}`, bearer(ADMIN)), (r) => r.status === 200 && r.body.device.firmware_version === '1.0.0' && r.body.device.protocol === 'svc-fw-bridge/1', 20_000, 100);
    }
    return a;
  }

  it('canary at 25 % over 4 controllers: the canary batch passes its readiness gate, then the rest; every device runs the new firmware', async () => {
    const ids = ['mc-1', 'mc-2', 'mc-3', 'mc-4'];
    const a = await fleet(ids);
    const seen: PlatformEvent[] = [];
    a.agent.services.bus.subscribe((e) => void (e.type.startsWith('OtaRollout') && seen.push(e)));
    const body = { strategy: 'canary', version: 'fw-2026.11', canary_percent: 25, rollback_on_readiness_fail: true, firmware: { version: '2.0.0', device_type: 'motor_controller', image_base64: image(1) } };

    const plan = await a.json('/v1/ota/plan', post(body, DEVELOPER));
    expect(plan.body.rollout.steps.map((s: any) => [s.device_id, s.status])).toEqual([['mc-1', 'pending'], ['mc-2', 'skipped'], ['mc-3', 'skipped'], ['mc-4', 'skipped']]);

    const t0 = Date.now();
    const r = await a.json('/v1/ota/execute', post(body, DEVELOPER));
    const total = Date.now() - t0;
    expect(r.status).toBe(200);
    expect(r.body.rollout.success).toBe(true);
    expect(r.body.rollout.batches).toEqual([
      { index: 1, phase_percent: 25, targets: 1 },
      { index: 2, phase_percent: 100, targets: 3, condition: expect.any(String) },
    ]);
    expect(r.body.rollout.steps.map((s: any) => [s.device_id, s.status, s.batch, s.version])).toEqual([
      ['mc-1', 'deployed', 1, '2.0.0'],
      ['mc-2', 'deployed', 2, '2.0.0'],
      ['mc-3', 'deployed', 2, '2.0.0'],
      ['mc-4', 'deployed', 2, '2.0.0'],
    ]);
    for (const s of r.body.rollout.steps) expect(s.readiness).toEqual({ ready: true, detail: 'online with firmware 2.0.0' });
    for (const id of ids) expect((await a.json(`/v1/devices/${id}`, bearer(ADMIN))).body.device.firmware_version).toBe('2.0.0');

    const status = await a.json('/v1/ota/status', bearer(ADMIN));
    expect(status.body.state.current_version).toEqual(Object.fromEntries(ids.map((id) => [`device:${id}`, '2.0.0'])));
    expect(status.body.rollout).toMatchObject({ status: 'succeeded', kind: 'firmware', completed_steps: 4, halted: false });
    expect(seen.filter((e) => e.type === 'OtaRolloutStarted')).toHaveLength(2); // plan + execute
    expect(seen.at(-1)!.payload).toMatchObject({ status: 'success', deployed_targets: 4, step_count: 4, dry_run: false });
    // Each activated image is kept for a later rollback.
    expect(fs.readdirSync(path.join(a.stateDir, 'ota', 'images')).filter((f) => f.endsWith('.bin'))).toHaveLength(1);

    const perDevice = r.body.rollout.steps.map((s: any) => s.duration_ms as number);
    process.stdout.write(
      `[ota bench] firmware canary rollout: ${ids.length} emulated serial devices, image ${IMAGE_BYTES} B, canary 25 % then 75 %: total ${total} ms; ` +
        `per-device flash ms ${perDevice.join('/')} (mean ${Math.round(perDevice.reduce((x: number, y: number) => x + y, 0) / perDevice.length)}); ` +
        `${Math.round((IMAGE_BYTES * ids.length) / (total / 1000) / 1024)} KiB/s delivered\n`,
    );
  }, 120_000);

  it('a canary device that fails its self-test halts the rollout: remaining steps skipped, updated targets re-flashed to their previous image, deploy state unchanged', async () => {
    const ids = ['mc-1', 'mc-2', 'mc-3', 'mc-4'];
    const a = await fleet(ids, ['mc-2']);
    // mc-1 got 1.5.0 through the device route earlier: that image is what a rollback puts back.
    const seeded = await a.json('/v1/devices/mc-1/firmware', post({ version: '1.5.0', image_base64: image(7) }, ADMIN));
    expect(seeded.body).toMatchObject({ ok: true, firmware_version: '1.5.0' });

    const t0 = Date.now();
    const r = await a.json(
      '/v1/ota/execute',
      post({ strategy: 'canary', version: 'fw-bad', canary_percent: 50, rollback_on_readiness_fail: true, firmware: { version: '2.0.0', device_ids: ids, image_base64: image(2) } }, DEVELOPER),
    );
    const total = Date.now() - t0;
    expect(r.status).toBe(200);
    expect(r.body.rollout.success).toBe(false);
    expect(r.body.halted).toBe(true);
    expect(r.body.halt_reason).toMatch(/^batch 1: 1\/2 targets deployed, below the success threshold 1/);
    const byId = Object.fromEntries(r.body.rollout.steps.map((s: any) => [s.device_id, s]));
    expect(byId['mc-1']).toMatchObject({ status: 'rolled_back', detail: 're-flashed 1.5.0' });
    expect(byId['mc-2']).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^rolled_back: .*self-test/), version: '1.0.0' });
    expect(byId['mc-3']).toMatchObject({ status: 'skipped', detail: 'rollout halted' });
    expect(byId['mc-4']).toMatchObject({ status: 'skipped', detail: 'rollout halted' });

    const fw = async (id: string) => (await a.json(`/v1/devices/${id}`, bearer(ADMIN))).body.device.firmware_version;
    expect(await fw('mc-1')).toBe('1.5.0');
    expect(await fw('mc-2')).toBe('1.0.0');
    expect(await fw('mc-3')).toBe('1.0.0');
    expect(await fw('mc-4')).toBe('1.0.0');
    expect(fs.existsSync(path.join(a.stateDir, 'deploy-state.json'))).toBe(false);
    const status = await a.json('/v1/ota/status', bearer(ADMIN));
    expect(status.body.state).toEqual({ current_version: {}, previous_version: {}, history: [] });
    expect(status.body.rollout).toMatchObject({ status: 'failed', halted: true });
    expect((await a.json('/v1/alerts', bearer(ADMIN))).body.alerts).toContainEqual(expect.objectContaining({ source: 'firmware-update', alert_type: 'recovery_failed' }));
    process.stdout.write(`[ota bench] failing canary (2 devices flashed in parallel, 1 self-test failure, 1 rollback re-flash): ${total} ms\n`);
  }, 120_000);

  it('firmware inside a signed bundle: a remote agent flashes its own controller, reports the version, and rolls back to the kept image', async () => {
    const secret = 'fw-bundle-secret';
    const line = await startSocatPair();
    pairs.push(line);
    const robot = await otaAgent({ configPath: project(['mc-9']), env: { SVC_HAL_SERIAL_PORTS: line.a, SVC_OTA_VERIFY_KEY: secret } });
    agents.push(robot);
    children.push(simDevice(['--serial', line.b, '--id', 'mc-9', '--type', 'motor_controller', '--firmware', '1.0.0']));
    await robot.agent.services.deviceHub.start(3000);
    await eventually(() => robot.json('/v1/devices/mc-9', bearer(ADMIN)), (r) => r.status === 200 && r.body.device.firmware_version === '1.0.0', 20_000, 100);
    expect((await robot.json('/v1/devices/mc-9/firmware', post({ version: '1.5.0', image_base64: image(3) }, ADMIN))).body.ok).toBe(true);

    const { tempDir } = await import('../helpers/agent-harness.js');
    const ccState = tempDir('svc-ota-fwcc-');
    fs.writeFileSync(path.join(ccState, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: 'Rover@Pi', url: robot.baseUrl, token: DEVELOPER }] }));
    const cc = await otaAgent({ stateDir: ccState, env: { SVC_OTA_SIGNING_KEY: secret } });
    agents.push(cc);
    const r = await cc.json(
      '/v1/ota/execute',
      post({ strategy: 'all', version: 'bundle-2', assignments: [{ robot_name: 'Rover', hardware: 'Pi' }], firmware: { version: '2.0.0', device_type: 'motor_controller', image_base64: image(4) } }, ADMIN),
    );
    expect(r.body.rollout.steps[0]).toMatchObject({ target: 'Rover@Pi', status: 'deployed', version: 'bundle-2' });
    expect((await robot.json('/v1/devices/mc-9', bearer(ADMIN))).body.device.firmware_version).toBe('2.0.0');
    expect((await robot.json('/v1/status')).body).toMatchObject({ target: 'Rover@Pi', current_version: 'bundle-2', firmware_version: '2.0.0', signature_verified: true });

    // A bundle whose image does not match its digest is refused before any device is touched.
    const { canonicalBundle, signBundle } = await import('../../agent/ota/bundle.js');
    const item = { version: '3.0.0', device_type: 'motor_controller', image_sha256: 'ab'.repeat(32) };
    const bundle = canonicalBundle({ version: 'bundle-3', firmware: [item] });
    const bad = await robot.json('/v1/rollout', post({ ...bundle, target: 'Rover@Pi', firmware: [{ ...item, image_base64: image(5) }], ...signBundle(bundle, secret) }, DEVELOPER));
    expect(bad.body.error).toBe('rollout refused: firmware 3.0.0 image does not match its image_sha256');

    const back = await robot.json('/v1/rollback', post({}, DEVELOPER));
    expect(back.body).toMatchObject({ ok: true, firmware: [{ device_id: 'mc-9', ok: true, detail: 're-flashed 1.5.0' }] });
    expect((await robot.json('/v1/devices/mc-9', bearer(ADMIN))).body.device.firmware_version).toBe('1.5.0');
    expect((await robot.json('/v1/status')).body).toMatchObject({ current_version: null, previous_version: 'bundle-2' });
    const again = await robot.json('/v1/rollback', post({}, DEVELOPER));
    expect(again.body).toMatchObject({ ok: false, error: 'no installed version to roll back' });
  }, 120_000);
});
