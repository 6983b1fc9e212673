import { createHash, generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { ADMIN, bearer, DEVELOPER, otaAgent, post, SOIL_PROGRAM } from './fixture.js';

const TARGET = 'SoilStation@ESP32';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** A control center whose deploy agent registry names `target` at `url`. */
async function controlCenter(env: Record<string, string>, agents: { target: string; url: string; token?: string }[], programPath = SOIL_PROGRAM) {
  const stateDir = tempDir('svc-ota-cc-');
  fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents }));
  return otaAgent({ env, stateDir, programPath });
}

describe('OTA to remote deploy agents (a second real agent as the target)', () => {
  const agents: RunningAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
  });

  it('HMAC: the target installs the signed bundle (source text), refuses tampered and unsigned ones, reports its version; rollback', async () => {
    const secret = 'ota-shared-secret-for-tests';
    const target = await otaAgent({ env: { SVC_OTA_VERIFY_KEY: secret } });
    agents.push(target);
    const cc = await controlCenter({ SVC_OTA_SIGNING_KEY: secret }, [{ target: TARGET, url: target.baseUrl, token: DEVELOPER }]);
    agents.push(cc);

    const started = Date.now();
    const r = await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '2.0', rollback_on_readiness_fail: true }, ADMIN));
    const elapsed = Date.now() - started;
    expect(r.status).toBe(200);
    expect(r.body.rollout.steps).toEqual([expect.objectContaining({ robot_name: 'SoilStation', hardware: 'ESP32', status: 'deployed', version: '2.0', readiness: { ready: true, detail: 'mission ready' } })]);
    expect(r.body.rollout.success).toBe(true);
    process.stdout.write(`[ota bench] remote agent rollout (1 target, HMAC-signed bundle, readiness gate): ${elapsed} ms\n`);

    // The target runs the program it was sent: its source, written under its state dir, served now.
    const source = fs.readFileSync(SOIL_PROGRAM, 'utf8');
    const installed = path.join(target.stateDir, 'ota', 'programs', '2.0.sd');
    expect(fs.readFileSync(installed, 'utf8')).toBe(source);
    const status = await target.json('/v1/status');
    expect(status.body).toMatchObject({ ok: true, target: TARGET, current_version: '2.0', previous_version: null, healthy: true, program: '2.0.sd', program_hash: sha(source), signature_verified: true, robot_name: 'SoilStation', hardware_profile: 'ESP32' });
    const ready = await target.json('/v1/readiness');
    expect(ready.body).toMatchObject({ ok: true, mission_ready: true, readiness: { program: { mission_ready: true } } });
    // The control center's deploy state moved.
    const cs = await cc.json('/v1/ota/status', bearer(ADMIN));
    expect(cs.body.state.current_version).toEqual({ [TARGET]: '2.0' });
    expect(cs.body.state.history).toHaveLength(1);

    // A bundle changed after signing (or not signed at all) is refused, and nothing changes on the target.
    const { signBundle, canonicalBundle } = await import('../../agent/ota/bundle.js');
    const bundle = canonicalBundle({ version: '2.1', program: source, program_hash: sha(source), assignments: [{ robot_name: 'SoilStation', hardware: 'ESP32' }], certifications: [] });
    const sig = signBundle(bundle, secret);
    const tampered = source.replace('every 500ms', 'every 5000ms');
    const refused = await target.json('/v1/rollout', post({ ...bundle, target: TARGET, program: tampered, program_hash: sha(tampered), ...sig }, DEVELOPER));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('rollout refused: bundle signature does not verify');
    const unsigned = await target.json('/v1/rollout', post({ ...bundle, target: TARGET }, DEVELOPER));
    expect(unsigned.body.error).toBe('rollout refused: bundle is not signed');
    const wrongHash = await target.json('/v1/rollout', post({ ...canonicalBundle({ ...bundle, program_hash: sha('x') }), target: TARGET, ...signBundle(canonicalBundle({ ...bundle, program_hash: sha('x') }), secret) }, DEVELOPER));
    expect(wrongHash.body.error).toBe('rollout refused: program_hash does not match the program source');
    expect((await target.json('/v1/status')).body.current_version).toBe('2.0');

    // A genuine 2.1 keeps 2.0 as previous, on both sides; the target's rollback returns to 2.0.
    const second = await cc.json('/v1/ota/execute', post({ strategy: 'canary', version: '2.1', canary_percent: 100 }, ADMIN));
    expect(second.body.rollout.success).toBe(true);
    expect((await cc.json('/v1/ota/status', bearer(ADMIN))).body.state).toMatchObject({ current_version: { [TARGET]: '2.1' }, previous_version: { [TARGET]: '2.0' } });
    expect((await target.json('/v1/status')).body).toMatchObject({ current_version: '2.1', previous_version: '2.0' });
    const back = await target.json('/v1/rollback', post({ target: TARGET }, DEVELOPER));
    expect(back.body).toMatchObject({ ok: true, target: TARGET, version: '2.0', previous_version: '2.1' });
    expect((await target.json('/v1/status')).body).toMatchObject({ current_version: '2.0', previous_version: '2.1', program: '2.0.sd' });
  });

  it('Ed25519: a PEM private key signs, the target verifies with the public key; a wrong key is refused', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const priv = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const target = await otaAgent({ env: { SVC_OTA_VERIFY_KEY: publicKey.export({ type: 'spki', format: 'pem' }).toString() } });
    agents.push(target);
    const cc = await controlCenter({ SVC_OTA_SIGNING_KEY: priv }, [{ target: TARGET, url: target.baseUrl, token: DEVELOPER }]);
    agents.push(cc);
    const r = await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '5.0' }, ADMIN));
    expect(r.body.rollout.steps[0]).toMatchObject({ status: 'deployed' });
    expect((await target.json('/v1/status')).body).toMatchObject({ current_version: '5.0', signature_verified: true });

    const wrong = await controlCenter({ SVC_OTA_SIGNING_KEY: other.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }, [{ target: TARGET, url: target.baseUrl, token: DEVELOPER }]);
    agents.push(wrong);
    const refused = await wrong.json('/v1/ota/execute', post({ strategy: 'all', version: '6.0' }, ADMIN));
    expect(refused.body.rollout.success).toBe(false);
    expect(refused.body.rollout.steps[0]).toMatchObject({ status: 'failed', detail: 'rollout answered HTTP 400: rollout refused: bundle signature does not verify' });
    expect((await target.json('/v1/status')).body.current_version).toBe('5.0');
  });

  it('a target that is not ready after the update is rolled back with rollback_on_readiness_fail; without it the rollout halts and leaves it', async () => {
    const secret = 's3cret';
    const target = await otaAgent({ env: { SVC_OTA_SIGNING_KEY: secret } });
    agents.push(target);
    // First a good version, so the target has something to return to.
    const good = await controlCenter({ SVC_OTA_SIGNING_KEY: secret }, [{ target: TARGET, url: target.baseUrl, token: DEVELOPER }]);
    agents.push(good);
    expect((await good.json('/v1/ota/execute', post({ strategy: 'all', version: '1.0' }, ADMIN))).body.rollout.success).toBe(true);

    // A program whose robot needs a sensor its hardware lacks: it installs, but the target is not mission ready.
    const dir = tempDir('svc-ota-bad-');
    const badFile = path.join(dir, 'soil_bad.sd');
    fs.writeFileSync(badFile, fs.readFileSync(SOIL_PROGRAM, 'utf8').replace('sensor wetness: LeafWetness on "adc-2";', 'sensor wetness: LeafWetness on "adc-2";\n    sensor eye: Thermal on "csi-0";'));
    const bad = await controlCenter({ SVC_OTA_SIGNING_KEY: secret }, [{ target: TARGET, url: target.baseUrl, token: DEVELOPER }], badFile);
    agents.push(bad);
    const r = await bad.json('/v1/ota/execute', post({ strategy: 'all', version: '1.1', rollback_on_readiness_fail: true }, ADMIN));
    expect(r.body.rollout.success).toBe(false);
    expect(r.body.rollout.steps[0]).toMatchObject({ status: 'rolled_back', readiness: { ready: false } });
    expect(r.body.halted).toBe(true);
    expect((await target.json('/v1/status')).body).toMatchObject({ current_version: '1.0', previous_version: '1.1', program: '1.0.sd' });
    expect((await bad.json('/v1/ota/status', bearer(ADMIN))).body.state.current_version).toEqual({});

    const left = await bad.json('/v1/ota/execute', post({ strategy: 'all', version: '1.2' }, ADMIN));
    expect(left.body.rollout.steps[0]).toMatchObject({ status: 'failed', detail: expect.stringContaining('left updated') });
    expect((await target.json('/v1/status')).body.current_version).toBe('1.2');
  });
});
