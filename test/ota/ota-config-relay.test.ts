import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { fleetProject } from '../helpers/project-fixture.js';
import { spawnServe } from '../helpers/spawn-agent.js';
import { call, enroll, fleetAgent, Procs, relayKey, startRelayProc, until } from '../relay-e2e/e2e-helpers.js';
import { ADMIN, otaAgent, post } from './fixture.js';

/**
 * Configuration files reach a relayed deploy agent (docs/operations.md § Rollouts, "Configuration in
 * a bundle"; docs/relay.md): the bundle travels over the agent's trunk like any rollout, and the agent,
 * started with `--config`, writes them into its project and reloads it. Child processes of the
 * compiled build (`npm run build` first).
 */
const procs = new Procs();
const agents: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await procs.cleanup();
});

describe('OTA configuration through the relay', () => {
  it('a signed bundle with configuration files reaches a relayed agent, which reloads its project; its rollback restores them', async () => {
    const secret = 'relay-ota-config-secret';
    const relay = await startRelayProc(procs);
    const token = await enroll(relay, 'acme', 'rover-8');
    const configPath = fleetProject();
    const original = fs.readFileSync(configPath, 'utf8');
    const agent = await spawnServe(['--relay', relay.mqttUrl, '--enroll-token', token, '--config', configPath], {
      SVC_TENANT_ID: 'acme',
      SVC_API_KEY: 'ota-config-relay-admin-0123456789abcdef',
      SVC_CONTROL_CENTER_STATE_DIR: procs.tempDir('svc-ota-cfg-relay-agent-'),
      SVC_OTA_VERIFY_KEY: secret,
    });
    procs.track(agent.child);
    const deployer = await relayKey(relay, 'developer', 'acme');
    await until('agent online through the relay', async () => (await fleetAgent(relay, deployer.token, 'rover-8'))?.online, 20_000);
    const stateDir = tempDir('svc-ota-cfg-relay-cc-');
    fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: 'SoilStation@ESP32', url: `${relay.baseUrl}/agents/rover-8`, token: deployer.token }] }));
    const cc = await otaAgent({ stateDir, env: { SVC_OTA_SIGNING_KEY: secret } });
    agents.push(cc);

    const manifest = original.replace('name = "Pool Test"', 'name = "Relayed"');
    const r = await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '4.0', assignments: [{ robot_name: 'SoilStation', hardware: 'ESP32' }], config_files: [{ path: 'svc.toml', content: manifest }] }, ADMIN));
    expect(r.body.rollout.steps[0]).toMatchObject({ status: 'deployed' });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(manifest);
    const instance = await call(relay.baseUrl, 'GET', '/agents/rover-8/v1/instance', { token: deployer.token });
    expect(instance.json.project_name).toBe('Relayed');
    const status = await call(relay.baseUrl, 'GET', '/agents/rover-8/v1/status', { token: deployer.token });
    expect(status.json).toMatchObject({ current_version: '4.0', signature_verified: true, config_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const back = await call(relay.baseUrl, 'POST', '/agents/rover-8/v1/rollback', { token: deployer.token, body: { target: 'SoilStation@ESP32' } });
    expect(back.json).toMatchObject({ ok: true, version: null, config_hash: null });
    expect(fs.readFileSync(configPath, 'utf8')).toBe(original);
    expect((await call(relay.baseUrl, 'GET', '/agents/rover-8/v1/instance', { token: deployer.token })).json.project_name).toBe('Pool Test');
  }, 90_000);
});
