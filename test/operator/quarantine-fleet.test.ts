import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir } from '../helpers/agent-harness.js';
import { ADMIN, auth, get, operatorAgent, post, writeFleetAgents, type OperatorAgent } from './fixture.js';

let running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(...args: Parameters<typeof operatorAgent>): Promise<OperatorAgent> {
  const a = await operatorAgent(...args);
  running.push(a);
  return a;
}

describe('POST /v1/operator/quarantine', () => {
  it('check 23: an active device cannot be quarantined: 400 lifecycle transition …, device unchanged', async () => {
    const a = await agent();
    const r = await post(a, '/v1/operator/quarantine', a.keys.operator, { device_id: 'cam-1' });
    expect(r).toMatchObject({ status: 400, body: { code: 'bad_request', error: "lifecycle transition Active -> Quarantined not allowed for 'cam-1'" } });
    expect((await get(a, '/v1/devices/cam-1')).body.device.lifecycle_state).toBe('active');
  });

  it('F20: a verified device is quarantined through the device registry and stays so after a restart', async () => {
    const a = await agent();
    expect((await get(a, '/v1/devices/cam-2')).body.device.lifecycle_state).toBe('verified');
    const r = await post(a, '/v1/operator/quarantine', a.keys.operator, { device_id: 'cam-2', reason: 'odd frames' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', ok: true, device_id: 'cam-2', lifecycle_state: 'quarantined', previous_state: 'verified', reason: 'odd frames' });
    expect((await get(a, '/v1/entities/cam-2')).body.entity.metadata).toMatchObject({ quarantine_reason: 'odd frames' });
    // Quarantining again is no transition; it keeps the state.
    expect((await post(a, '/v1/operator/quarantine', a.keys.operator, { device_id: 'cam-2' })).status).toBe(200);
    await a.close();
    running = [];

    const b = await agent(a.project, a.stateDir);
    expect((await get(b, '/v1/devices/cam-2')).body.device).toMatchObject({ lifecycle_state: 'quarantined' });
    const mutations = [...b.agent.services.audit.chain.records()].map((x) => JSON.parse(x.payload)).filter((p) => p.path === '/v1/operator/quarantine');
    expect(mutations.length).toBeGreaterThanOrEqual(2);
  });

  it('unknown device: 400 not_found; missing device_id, bad JSON: 400; anonymous 401, auditor 403', async () => {
    const a = await agent();
    expect(await post(a, '/v1/operator/quarantine', a.keys.operator, { device_id: 'cam-9' })).toMatchObject({ status: 400, body: { code: 'not_found', error: "device 'cam-9' not found" } });
    expect(await post(a, '/v1/operator/quarantine', a.keys.operator, {})).toMatchObject({ status: 400, body: { code: 'bad_request' } });
    const bad = await post(a, '/v1/operator/quarantine', a.keys.operator, '{');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^invalid JSON body: /);
    expect((await post(a, '/v1/operator/quarantine', null, { device_id: 'cam-2' })).status).toBe(401);
    expect((await post(a, '/v1/operator/quarantine', a.keys.auditor, { device_id: 'cam-2' })).status).toBe(403);
    expect((await get(a, '/v1/devices/cam-2')).body.device.lifecycle_state).toBe('verified');
  });
});

describe('GET /v1/fleet/agents', () => {
  it('check 24 / F24: agents from fleet-agents.json, sorted, never a token (token_set instead)', async () => {
    const stateDir = tempDir('svc-fleet-agents-');
    const a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    running.push(a);
    expect((await a.json('/v1/fleet/agents', { headers: auth(ADMIN) })).body).toEqual({ version: 'v1', agents: [], count: 0 });

    writeFleetAgents(stateDir, [
      { robot_name: 'tug-2', url: 'http://10.0.0.12:7070', token: 'very-secret-bearer' },
      { robot_name: 'tug-1', url: 'http://10.0.0.11:7070' },
      { robot_name: 42, url: 'broken entry' },
    ]);
    const r = await a.json('/v1/fleet/agents', { headers: auth(ADMIN) });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      version: 'v1',
      agents: [
        { robot_name: 'tug-1', url: 'http://10.0.0.11:7070', token_set: false },
        { robot_name: 'tug-2', url: 'http://10.0.0.12:7070', token_set: true },
      ],
      count: 2,
    });
    expect(JSON.stringify(r.body)).not.toContain('very-secret-bearer');
    expect(JSON.stringify(r.body)).not.toContain('"token"');

    fs.writeFileSync(`${stateDir}/fleet-agents.json`, '{not json');
    expect((await a.json('/v1/fleet/agents', { headers: auth(ADMIN) })).body.agents).toEqual([]);
  });
});
