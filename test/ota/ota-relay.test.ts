import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { call, enroll, fleetAgent, Procs, relayKey, startAgentProc, startRelayProc, until } from '../relay-e2e/e2e-helpers.js';
import { ADMIN, bearer, otaAgent, post, SOIL_PROGRAM } from './fixture.js';

/**
 * A rollout that reaches its target through the relay (docs/relay.md): the deploy agent registry names
 * `http://RELAY/agents/<id>`, the token is a relay key; the relay forwards `/agents/<id>/v1/rollout`
 * over the agent's trunk, and the agent decides access from the relay's on-behalf-of principal.
 * Child processes of the compiled build (`npm run build` first).
 */
const procs = new Procs();
const agents: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.close()));
  await procs.cleanup();
});

describe('OTA through the relay', () => {
  it('a signed bundle reaches a relayed agent; a relay key without Deploy is refused by the agent', async () => {
    const secret = 'relay-ota-secret';
    const relay = await startRelayProc(procs);
    const token = await enroll(relay, 'acme', 'rover-7');
    await startAgentProc(procs, relay.mqttUrl, token, 'acme', { SVC_OTA_VERIFY_KEY: secret });
    const deployer = await relayKey(relay, 'developer', 'acme');
    const viewer = await relayKey(relay, 'operator', 'acme');
    await until('agent online through the relay', async () => (await fleetAgent(relay, deployer.token, 'rover-7'))?.online, 20_000);
    const stateDir = tempDir('svc-ota-relay-cc-');
    fs.writeFileSync(
      path.join(stateDir, 'deploy-agents.json'),
      JSON.stringify({ agents: [
        { target: 'SoilStation@ESP32', url: `${relay.baseUrl}/agents/rover-7`, token: deployer.token },
      ] }),
    );
    const cc = await otaAgent({ stateDir, programPath: SOIL_PROGRAM, env: { SVC_OTA_SIGNING_KEY: secret } });
    agents.push(cc);
    const t0 = Date.now();
    const r = await cc.json('/v1/ota/execute', post({ strategy: 'canary', version: '3.1', canary_percent: 100, rollback_on_readiness_fail: true }, ADMIN));
    const ms = Date.now() - t0;
    expect(r.body.rollout.steps).toEqual([expect.objectContaining({ target: 'SoilStation@ESP32', status: 'deployed', readiness: { ready: true, detail: 'mission ready' } })]);
    process.stdout.write(`[ota bench] rollout through the relay (MQTT trunk, 1 target, signed bundle, readiness): ${ms} ms\n`);
    const status = await call(relay.baseUrl, 'GET', '/agents/rover-7/v1/status', { token: viewer.token });
    expect(status.json).toMatchObject({ target: 'SoilStation@ESP32', current_version: '3.1', signature_verified: true, program: '3.1.sd' });
    expect((await cc.json('/v1/ota/status', bearer(ADMIN))).body.state.current_version).toEqual({ 'SoilStation@ESP32': '3.1' });

    // The same registry entry with a relay key whose role lacks Deploy: the agent answers 403 through the relay.
    fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: 'SoilStation@ESP32', url: `${relay.baseUrl}/agents/rover-7`, token: viewer.token }] }));
    const denied = await cc.json('/v1/ota/execute', post({ strategy: 'all', version: '3.2' }, ADMIN));
    expect(denied.body.rollout.steps[0]).toMatchObject({ status: 'failed', detail: expect.stringMatching(/^rollout answered HTTP 403/) });
    expect((await call(relay.baseUrl, 'GET', '/agents/rover-7/v1/status', { token: viewer.token })).json.current_version).toBe('3.1');
  }, 90_000);
});
