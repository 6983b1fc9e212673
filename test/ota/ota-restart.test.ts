import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { spawnServe, waitForExit } from '../helpers/spawn-agent.js';
import { eventually } from '../helpers/stream-client.js';
import { ADMIN, bearer, keysFile, otaAgent, post } from './fixture.js';

/**
 * A stand-in relay (`/agents/<id>/v1/...`, the URL form a relay forwards to its agents): agent `a1`
 * installs at once, `a2` never answers its rollout (the control center is killed meanwhile).
 */
async function fakeRelay() {
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    calls.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url === '/agents/a1/v1/rollout') {
        const b = JSON.parse(body);
        res.end(JSON.stringify({ ok: true, target: b.target, version: b.version, previous_version: null }));
      } else if (req.url?.startsWith('/agents/a1/v1/readiness')) {
        res.end(JSON.stringify({ ok: true, mission_ready: true }));
      } else if (req.url === '/agents/a2/v1/rollout') {
        /* hang: the answer never comes */
      } else {
        res.statusCode = 404;
        res.end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

describe('OTA rollout state across an agent restart', () => {
  const agents: RunningAgent[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
    for (const c of cleanups.splice(0)) await c();
  });

  it('a control center killed mid-rollout reports the rollout interrupted after restart, with the steps that completed; deploy state unchanged', async () => {
    const relay = await fakeRelay();
    cleanups.push(relay.close);
    const stateDir = tempDir('svc-ota-restart-');
    fs.writeFileSync(
      path.join(stateDir, 'deploy-agents.json'),
      JSON.stringify({ agents: [
        { target: 'r1@Pi', url: `${relay.url}/agents/a1`, token: 'tok-a1' },
        { target: 'r2@Pi', url: `${relay.url}/agents/a2`, token: 'tok-a2' },
        { target: 'r3@Pi', url: `${relay.url}/agents/a3` },
      ] }),
    );
    const child = await spawnServe([], { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_API_KEY: ADMIN, SVC_API_KEYS_FILE: keysFile() });
    cleanups.push(async () => void child.child.kill('SIGKILL'));
    const assignments = ['r1', 'r2', 'r3'].map((robot_name) => ({ robot_name, hardware: 'Pi' }));
    // Sequential (budget 1), so r2 is in flight while r3 waits.
    const pending = fetch(`${child.baseUrl}/v1/ota/execute`, post({ strategy: 'all', version: '7.0', assignments, disruption_budget: 1 }, ADMIN)).catch(() => null);
    await eventually(() => relay.calls.some((c) => c.startsWith('POST /agents/a2/v1/rollout')), (v) => v, 15_000);
    // The rollout file on disk already shows r1 done and r2 in progress.
    const onDisk = JSON.parse(fs.readFileSync(path.join(stateDir, 'ota', 'rollout.json'), 'utf8'));
    expect(onDisk.rollout.status).toBe('running');
    expect(onDisk.rollout.rollout.steps.map((s: any) => s.status)).toEqual(['updated', 'in_progress', 'pending']);
    child.child.kill('SIGKILL');
    await waitForExit(child.child);
    await pending;
    // Bearer tokens of the registry went to the relay URLs.
    expect(relay.calls).toContain('POST /agents/a1/v1/rollout Bearer tok-a1');
    // Readiness is measured once the whole batch is through, so a1 was never asked.
    expect(relay.calls.some((c) => c.includes('/readiness'))).toBe(false);

    const a = await otaAgent({ stateDir });
    agents.push(a);
    const status = await a.json('/v1/ota/status', bearer(ADMIN));
    expect(status.status).toBe(200);
    expect(status.body.state).toEqual({ current_version: {}, previous_version: {}, history: [] });
    expect(status.body.rollout).toMatchObject({ status: 'interrupted', halted: true, halt_reason: 'the agent restarted while the rollout was running', completed_steps: 1 });
    expect(status.body.rollout.rollout.steps.map((s: any) => [s.robot_name, s.status])).toEqual([['r1', 'updated'], ['r2', 'interrupted'], ['r3', 'interrupted']]);
    expect(status.body.rollout.rollout.success).toBe(false);
    // Not resumed: nothing more reached the relay after the restart.
    const before = relay.calls.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(relay.calls.length).toBe(before);
    // And the report stays the same across a second restart.
    await a.close();
    agents.pop();
    const b = await otaAgent({ stateDir });
    agents.push(b);
    expect((await b.json('/v1/ota/status', bearer(ADMIN))).body.rollout.status).toBe('interrupted');
  }, 60_000);

  it('a second execute while one runs is refused with 409', async () => {
    const relay = await fakeRelay();
    cleanups.push(relay.close);
    const stateDir = tempDir('svc-ota-busy-');
    fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents: [{ target: 'r2@Pi', url: `${relay.url}/agents/a2` }] }));
    const a = await otaAgent({ stateDir });
    agents.push(a);
    const first = a.json('/v1/ota/execute', post({ strategy: 'all', version: '1', assignments: [{ robot_name: 'r2', hardware: 'Pi' }] }, ADMIN));
    await eventually(() => relay.calls.length > 0, (v) => v, 10_000);
    const second = await a.json('/v1/ota/execute', post({ strategy: 'all', version: '2', assignments: [{ robot_name: 'r2', hardware: 'Pi' }] }, ADMIN));
    expect(second.status).toBe(409);
    expect(second.body).toMatchObject({ code: 'conflict', error: 'an OTA rollout is already running on this agent' });
    // Let the hung call end: closing the relay drops the connection, the step fails.
    await relay.close();
    const done = await first;
    expect(done.body.rollout.steps[0].status).toBe('failed');
  }, 30_000);
});
