import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { fleetProject } from '../helpers/project-fixture.js';
import { ADMIN, DEVELOPER, otaAgent, post, SOIL_PROGRAM } from './fixture.js';

/**
 * Configuration files in a rollout bundle (docs/operations.md § Rollouts, "Configuration in a
 * bundle"): a control center sends TOML files to a second real agent started with a `--config`
 * project; the target writes them into its project root, resolves its configuration again, and puts
 * the previous files back on a failed resolution or a rollback.
 */
const TARGET = 'SoilStation@ESP32';
const ASSIGN = [{ robot_name: 'SoilStation', hardware: 'ESP32' }];
const SECRET = 'ota-config-secret';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
/** `config_hash` of /v1/status: SHA-256 over `<sha256>  <path>\n` lines sorted by path. */
const configHash = (files: Record<string, string>) =>
  sha(Object.keys(files).sort().map((p) => `${sha(files[p]!)}  ${p}\n`).join(''));

/** The fleet fixture's manifest with another project name and, optionally, a security fragment. */
const manifest = (name: string, security = false) => `
[project]
name = "${name}"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
fleet = "svc.fleet.toml"
providers = "svc.providers.toml"
${security ? 'security = "svc.security.toml"\n' : ''}`;

async function controlCenter(agents: { target: string; url: string; token?: string }[], programPath: string | null = SOIL_PROGRAM) {
  const stateDir = tempDir('svc-ota-cfg-cc-');
  fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents }));
  return otaAgent({ env: { SVC_OTA_SIGNING_KEY: SECRET }, stateDir, programPath });
}

describe('OTA: configuration files in the bundle', () => {
  const agents: RunningAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
  });

  it('installs signed configuration files into the target project, reloads it live, keeps it over a restart, and rolls back', async () => {
    const configPath = fleetProject();
    const root = path.dirname(configPath);
    const original = fs.readFileSync(configPath, 'utf8');
    const targetState = tempDir('svc-ota-cfg-target-');
    let target = await otaAgent({ env: { SVC_OTA_VERIFY_KEY: SECRET }, configPath, stateDir: targetState });
    agents.push(target);
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test');
    expect((await target.json('/v1/status')).body.config_hash).toBeNull();
    const cc = await controlCenter([{ target: TARGET, url: target.baseUrl, token: DEVELOPER }]);
    agents.push(cc);

    // 2.0: a new manifest naming a new security fragment (a file that did not exist) and one more dependency.
    const providers = fs.readFileSync(path.join(root, 'svc.providers.toml'), 'utf8') + 'lidar-driver = "0.3.0"\n';
    const v2 = { 'svc.toml': manifest('Pool Test v2', true), 'svc.security.toml': '[security]\nnote = "from ota"\n', 'svc.providers.toml': providers };
    const config_files = Object.entries(v2).map(([p, content]) => ({ path: p, content }));
    // The plan shows the digests that will be signed.
    const planned = await cc.json('/v1/ota/plan', post({ strategy: 'all', version: '2.0', assignments: ASSIGN, config_files }, ADMIN));
    expect(planned.status).toBe(200);
    expect(planned.body.config_files).toEqual(config_files.map((f) => ({ path: f.path, sha256: sha(f.content) })));

    const r = await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '2.0', assignments: ASSIGN, config_files, rollback_on_readiness_fail: true }, ADMIN));
    expect(r.status).toBe(200);
    expect(r.body.rollout.steps[0]).toMatchObject({ status: 'deployed', target: TARGET });
    for (const [p, content] of Object.entries(v2)) expect(fs.readFileSync(path.join(root, p), 'utf8')).toBe(content);
    // The live configuration is the new one, without a restart.
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test v2');
    const st = (await target.json('/v1/status')).body;
    expect(st).toMatchObject({ current_version: '2.0', signature_verified: true, config_hash: configHash(v2) });
    expect(st.packages).toContain('lidar-driver');
    // What the files held before is kept under the state dir.
    const backups = fs.readdirSync(path.join(targetState, 'ota', 'config'));
    expect(backups).toHaveLength(1);
    const kept = JSON.parse(fs.readFileSync(path.join(targetState, 'ota', 'config', backups[0]!, 'before.json'), 'utf8'));
    expect(kept.files).toContainEqual({ path: 'svc.security.toml', content: null });
    expect(kept.files).toContainEqual({ path: 'svc.toml', content: original });

    // After a restart the target reads the installed files from its project and still reports them.
    await target.close();
    agents.splice(agents.indexOf(target), 1);
    target = await otaAgent({ env: { SVC_OTA_VERIFY_KEY: SECRET }, configPath, stateDir: targetState });
    agents.push(target);
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test v2');
    expect((await target.json('/v1/status')).body.config_hash).toBe(configHash(v2));
    fs.writeFileSync(path.join(cc.stateDir, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: TARGET, url: target.baseUrl, token: DEVELOPER }] }));

    // 2.1: a program the target is not ready for, with a new name; readiness fails and the rollout
    // rolls the target back, configuration included.
    const badDir = tempDir('svc-ota-cfg-bad-');
    const badFile = path.join(badDir, 'soil_bad.sd');
    fs.writeFileSync(badFile, fs.readFileSync(SOIL_PROGRAM, 'utf8').replace('sensor wetness: LeafWetness on "adc-2";', 'sensor wetness: LeafWetness on "adc-2";\n    sensor eye: Thermal on "csi-0";'));
    const bad = await controlCenter([{ target: TARGET, url: target.baseUrl, token: DEVELOPER }], badFile);
    agents.push(bad);
    const v21 = manifest('Pool Test v2.1', true);
    const failed = await bad.json('/v1/ota/execute', post({ strategy: 'all', version: '2.1', assignments: ASSIGN, config_files: [{ path: 'svc.toml', content: v21 }], rollback_on_readiness_fail: true }, ADMIN));
    expect(failed.body.rollout.steps[0]).toMatchObject({ status: 'rolled_back', readiness: { ready: false } });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(v2['svc.toml']);
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test v2');
    expect((await target.json('/v1/status')).body).toMatchObject({ current_version: '2.0', previous_version: '2.1', config_hash: configHash(v2) });

    // 2.2 without configuration keeps the installed files; rolling it back changes none of them.
    expect((await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '2.2', assignments: ASSIGN }, ADMIN))).body.rollout.success).toBe(true);
    expect((await target.json('/v1/status')).body).toMatchObject({ current_version: '2.2', config_hash: configHash(v2) });
    const back22 = await target.json('/v1/rollback', post({ target: TARGET }, DEVELOPER));
    expect(back22.body).toMatchObject({ ok: true, version: '2.0', config_hash: configHash(v2) });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(v2['svc.toml']);

    // Rolling back 2.0 (a direct POST /v1/rollback) puts the original files back and deletes the one it created.
    expect((await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '2.3', assignments: ASSIGN, config_files: [{ path: 'svc.toml', content: manifest('Pool Test v2.3', true) }] }, ADMIN))).body.rollout.success).toBe(true);
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test v2.3');
    const back = await target.json('/v1/rollback', post({ target: TARGET }, DEVELOPER));
    expect(back.body).toMatchObject({ ok: true, version: '2.0', previous_version: '2.3', config_hash: configHash(v2) });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(v2['svc.toml']);
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test v2');
    // Once more: back to 2.3, exactly what it had installed.
    const again = await target.json('/v1/rollback', post({ target: TARGET }, DEVELOPER));
    expect(again.body).toMatchObject({ ok: true, version: '2.3' });
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test v2.3');
    // And back to 2.0: a rollback swaps the current and previous installs, configuration included.
    expect((await target.json('/v1/rollback', post({}, DEVELOPER))).body).toMatchObject({ ok: true, version: '2.0' });
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test v2');
  });

  it('a rollback past the first install restores the files the agent started with', async () => {
    const configPath = fleetProject();
    const root = path.dirname(configPath);
    const original = fs.readFileSync(configPath, 'utf8');
    const target = await otaAgent({ env: { SVC_OTA_VERIFY_KEY: SECRET }, configPath });
    agents.push(target);
    const cc = await controlCenter([{ target: TARGET, url: target.baseUrl, token: DEVELOPER }], null);
    agents.push(cc);
    const devicesBefore = fs.readFileSync(path.join(root, 'svc.devices.toml'), 'utf8');
    const gpsB = async () => (await target.json('/v1/devices/gps-b', { headers: { authorization: `Bearer ${ADMIN}` } })).body.device;
    expect(await gpsB()).toMatchObject({ trust_level: null, logical_name: null });
    // A device fragment that trusts and names gps-b.
    const devices = devicesBefore.replace('failover_priority = 2', 'failover_priority = 2\ntrust_level = "trusted"\nlogical_name = "backup-gps"');
    const files = [{ path: 'svc.toml', content: manifest('Renamed', true) }, { path: 'svc.security.toml', content: '[security]\nnote = "x"\n' }, { path: 'svc.devices.toml', content: devices }];
    const r = await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '1.0', assignments: ASSIGN, config_files: files }, ADMIN));
    expect(r.body.rollout.steps[0]).toMatchObject({ status: 'deployed' });
    expect((await target.json('/v1/instance')).body.project_name).toBe('Renamed');
    // The live device pool takes the changed configured values (and keeps them in devices.json).
    expect(await gpsB()).toMatchObject({ trust_level: 'trusted', logical_name: 'backup-gps' });
    const saved = JSON.parse(fs.readFileSync(path.join(target.stateDir, 'devices.json'), 'utf8'));
    expect(JSON.stringify(saved)).toContain('"trust_level":"trusted"');
    const back = await target.json('/v1/rollback', post({ target: TARGET }, DEVELOPER));
    expect(back.body).toMatchObject({ ok: true, version: null, previous_version: '1.0', config_hash: null });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(original);
    expect(fs.existsSync(path.join(root, 'svc.security.toml'))).toBe(false);
    expect(fs.readFileSync(path.join(root, 'svc.devices.toml'), 'utf8')).toBe(devicesBefore);
    expect(await gpsB()).toMatchObject({ trust_level: null, logical_name: null });
    expect((await target.json('/v1/instance')).body.project_name).toBe('Pool Test');
    expect((await target.json('/v1/status')).body.config_hash).toBeNull();
  });

  it('refuses bad names, tampered or invalid files, a configuration that does not resolve, and a target without --config', async () => {
    const configPath = fleetProject();
    const original = fs.readFileSync(configPath, 'utf8');
    const target = await otaAgent({ env: { SVC_OTA_VERIFY_KEY: SECRET }, configPath });
    agents.push(target);
    const cc = await controlCenter([{ target: TARGET, url: target.baseUrl, token: DEVELOPER }], null);
    agents.push(cc);
    const exec = (config_files: unknown) => cc.json('/v1/ota/execute', post({ strategy: 'all', version: '3.0', assignments: ASSIGN, config_files }, ADMIN));

    // Names: plain svc.toml / svc.<name>.toml only, checked by the schema (plan, execute and rollout).
    for (const bad of ['../x.toml', 'sub/svc.x.toml', '../svc.toml', 'svc.x.json', 'other.toml', 'svc..toml']) {
      const res = await exec([{ path: bad, content: 'a = 1\n' }]);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toMatch(/^invalid field 'config_files\.0\.path': expected a plain file name/);
    }
    const dup = await exec([{ path: 'svc.toml', content: 'a = 1\n' }, { path: 'svc.toml', content: 'a = 2\n' }]);
    expect(dup.status).toBe(400);
    expect(dup.body.error).toBe("invalid field 'config_files': a configuration file is named twice");
    const tooMany = await exec(Array.from({ length: 33 }, (_, i) => ({ path: `svc.f${i}.toml`, content: '' })));
    expect(tooMany.body.error).toBe("invalid field 'config_files': at most 32 configuration files");
    // Over 1 MiB: refused by the schema (the agent's body limit is raised here so the schema is what answers).
    const roomy = await otaAgent({ env: { SVC_API_MAX_BODY_BYTES: String(4 * 1024 * 1024) } });
    agents.push(roomy);
    const big = await roomy.json('/v1/ota/plan', post({ strategy: 'all', version: '3.0', assignments: ASSIGN, config_files: [{ path: 'svc.toml', content: 'x'.repeat(1024 * 1024 + 1) }] }, ADMIN));
    expect(big.status).toBe(400);
    expect(big.body.error).toBe("invalid field 'config_files.0.content': a configuration file is at most 1 MiB");
    const direct = await target.json('/v1/rollout', post({ target: TARGET, version: '3.0', config_files: [{ path: '../x.toml', content: '', sha256: sha('') }] }, DEVELOPER));
    expect(direct.status).toBe(400);
    // A local firmware rollout has no project to send them to.
    const local = await cc.json('/v1/ota/plan', post({ strategy: 'all', version: '3.0', firmware: { version: '1', image_base64: 'AAAA', device_type: 'imu' }, config_files: [{ path: 'svc.toml', content: '' }] }, ADMIN));
    expect(local.status).toBe(400);
    expect(local.body.error).toMatch(/^config_files go to deploy agents/);

    // Invalid TOML: the target refuses the bundle (400), the step fails, nothing changes.
    const invalid = await exec([{ path: 'svc.toml', content: '[project\nname = 1' }]);
    expect(invalid.body.rollout.steps[0]).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^rollout answered HTTP 400: rollout refused: configuration file svc\.toml is not valid TOML/) });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(original);

    // Tampering: signed {path, sha256}; a changed content (with its digest) or a renamed file fails the
    // signature, a changed content under the signed digest fails the digest check.
    const { canonicalBundle, signBundle } = await import('../../agent/ota/bundle.js');
    const good = manifest('Signed', false);
    const body = { target: TARGET, version: '3.1', assignments: ASSIGN, certifications: [], config_files: [{ path: 'svc.toml', content: good, sha256: sha(good) }] };
    const sig = signBundle(canonicalBundle(body), SECRET);
    const evil = manifest('Evil', false);
    const t1 = await target.json('/v1/rollout', post({ ...body, ...sig, config_files: [{ path: 'svc.toml', content: evil, sha256: sha(evil) }] }, DEVELOPER));
    expect(t1.status).toBe(400);
    expect(t1.body.error).toBe('rollout refused: bundle signature does not verify');
    const t2 = await target.json('/v1/rollout', post({ ...body, ...sig, config_files: [{ path: 'svc.providers.toml', content: good, sha256: sha(good) }] }, DEVELOPER));
    expect(t2.body.error).toBe('rollout refused: bundle signature does not verify');
    const t3 = await target.json('/v1/rollout', post({ ...body, ...sig, config_files: [{ path: 'svc.toml', content: evil, sha256: sha(good) }] }, DEVELOPER));
    expect(t3.status).toBe(400);
    expect(t3.body.error).toBe('rollout refused: configuration file svc.toml does not match its sha256');
    expect(fs.readFileSync(configPath, 'utf8')).toBe(original);
    // The genuine one installs.
    const ok = await target.json('/v1/rollout', post({ ...body, ...sig }, DEVELOPER));
    expect(ok.body).toMatchObject({ ok: true, version: '3.1', config_hash: configHash({ 'svc.toml': good }) });
    expect((await target.json('/v1/instance')).body.project_name).toBe('Signed');

    // Valid TOML that does not resolve (a fragment that is not there): ok:false, the old files back,
    // the live configuration unchanged, no version change.
    const broken = manifest('Broken', true);
    const res = await exec([{ path: 'svc.toml', content: broken }]);
    expect(res.body.rollout.steps[0]).toMatchObject({ status: 'failed', detail: expect.stringContaining('the project configuration does not resolve') });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(good);
    expect((await target.json('/v1/instance')).body.project_name).toBe('Signed');
    expect((await target.json('/v1/status')).body.current_version).toBe('3.1');
    expect(fs.readdirSync(path.join(target.stateDir, 'ota', 'config'))).toHaveLength(1);

    // A target started without --config has nowhere to write configuration.
    const bare = await otaAgent({ env: { SVC_OTA_VERIFY_KEY: SECRET } });
    agents.push(bare);
    const refused = await bare.json('/v1/rollout', post({ ...body, ...sig }, DEVELOPER));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('rollout refused: this agent has no --config project to write configuration into');
    expect((await bare.json('/v1/status')).body.current_version).toBeNull();
  });
});
