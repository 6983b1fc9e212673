import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { ADMIN, bearer, otaAgent, post } from './fixture.js';

type Behaviour = 'ok' | 'refuse' | 'not_ready';

/** Deploy agents behind one HTTP server (`/agents/<id>/v1/...`), each with a behaviour; every call is recorded. */
async function fakeAgents(behaviour: Record<string, Behaviour>) {
  const calls: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const m = /^\/agents\/([^/]+)\/v1\/(rollout|readiness|rollback)/.exec(req.url ?? '');
      if (!m) {
        res.statusCode = 404;
        return res.end('{}');
      }
      const [, id, op] = m as unknown as [string, string, string];
      calls.push(`${op} ${id}`);
      const b = behaviour[id!] ?? 'ok';
      if (op === 'rollout') {
        const parsed = JSON.parse(body);
        return res.end(JSON.stringify(b === 'refuse' ? { ok: false, target: parsed.target, version: '0.9', error: 'disk full' } : { ok: true, target: parsed.target, version: parsed.version }));
      }
      if (op === 'readiness') return res.end(JSON.stringify({ readiness: { mission_ready: b !== 'not_ready' } }));
      return res.end(JSON.stringify({ ok: true, version: 'previous' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('OTA execution batches: thresholds, disruption budget, blue/green', () => {
  const agents: RunningAgent[] = [];
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.close()));
    for (const c of closers.splice(0)) await c();
  });

  async function setup(behaviour: Record<string, Behaviour>, n = 4) {
    const fake = await fakeAgents(behaviour);
    closers.push(fake.close);
    const stateDir = tempDir('svc-ota-batches-');
    const ids = Array.from({ length: n }, (_, i) => `a${i + 1}`);
    fs.writeFileSync(path.join(stateDir, 'deploy-agents.json'), JSON.stringify({ agents: ids.map((id) => ({ target: `${id}@Pi`, url: `${fake.url}/agents/${id}` })) }));
    const a = await otaAgent({ stateDir });
    agents.push(a);
    return { a, fake, assignments: ids.map((robot_name) => ({ robot_name, hardware: 'Pi' })) };
  }

  it('staged [25, 50, 100]: batch by batch, readiness after each batch; a failing batch halts and rolls back every updated target', async () => {
    const { a, fake, assignments } = await setup({ a3: 'refuse' });
    const r = await a.json('/v1/ota/execute', post({ strategy: 'staged', version: '4.0', assignments, phases: [25, 50, 100], rollback_on_readiness_fail: true }, ADMIN));
    expect(r.body.rollout.batches.map((b: any) => b.targets)).toEqual([1, 1, 2]);
    expect(r.body.rollout.steps.map((s: any) => [s.robot_name, s.batch, s.status])).toEqual([
      ['a1', 1, 'rolled_back'],
      ['a2', 2, 'rolled_back'],
      ['a3', 3, 'failed'],
      ['a4', 3, 'rolled_back'],
    ]);
    expect(r.body.rollout.steps[2]).toMatchObject({ version: '0.9', detail: 'disk full' });
    expect(r.body).toMatchObject({ halted: true, halt_reason: 'batch 3: 1/2 targets deployed, below the success threshold 1' });
    // Update, then readiness, one batch after the other; rollback newest first.
    expect(fake.calls.slice(0, 4)).toEqual(['rollout a1', 'readiness a1', 'rollout a2', 'readiness a2']);
    expect(fake.calls.slice(4, 7).sort()).toEqual(['readiness a4', 'rollout a3', 'rollout a4']);
    expect(fake.calls.slice(7)).toEqual(['rollback a4', 'rollback a2', 'rollback a1']);
    const alerts = (await a.json('/v1/alerts', bearer(ADMIN))).body.alerts;
    expect(alerts).toContainEqual(expect.objectContaining({ source: 'svc-ota', alert_type: 'readiness_failed', severity: 'warning', message: expect.stringMatching(/halted: batch 3: .*; 3 target\(s\) rolled back$/) }));
    expect((await a.json('/v1/ota/status', bearer(ADMIN))).body.state.current_version).toEqual({});
  });

  it('success_threshold 0.5 lets a batch with one failure pass: the rollout runs to the end but is not a success', async () => {
    const { a, fake, assignments } = await setup({ a3: 'not_ready' });
    const r = await a.json('/v1/ota/execute', post({ strategy: 'staged', version: '4.1', assignments, phases: [50, 100], success_threshold: 0.5 }, ADMIN));
    expect(r.body.rollout.steps.map((s: any) => s.status)).toEqual(['deployed', 'deployed', 'failed', 'deployed']);
    // The gate and the bound travel with the rollout (and its status), for clients that show them.
    expect(r.body.rollout).toMatchObject({ success_threshold: 0.5, disruption_budget: null });
    expect((await a.json('/v1/ota/status', bearer(ADMIN))).body.rollout.rollout).toMatchObject({ success_threshold: 0.5, disruption_budget: null });
    expect(r.body.rollout.steps[2].detail).toBe('not ready after the update: agent reports not mission ready (left updated)');
    expect(r.body).toMatchObject({ halted: false, rollout: { success: false } });
    expect(fake.calls.filter((c) => c.startsWith('rollback'))).toEqual([]);
  });

  it('disruption_budget 1: one target down at a time, and the first failure stops the rest of the batch', async () => {
    const { a, fake, assignments } = await setup({ a1: 'refuse' });
    const r = await a.json('/v1/ota/execute', post({ strategy: 'all', version: '5', assignments, disruption_budget: 1 }, ADMIN));
    expect(r.body.rollout.steps.map((s: any) => [s.status, s.detail])).toEqual([
      ['failed', 'disk full'],
      ['skipped', 'disruption budget exhausted'],
      ['skipped', 'disruption budget exhausted'],
      ['skipped', 'disruption budget exhausted'],
    ]);
    expect(r.body.halt_reason).toBe('disruption budget of 1 failed target(s) reached in batch 1');
    expect(r.body.rollout).toMatchObject({ success_threshold: 1, disruption_budget: 1 });
    expect(fake.calls).toEqual(['rollout a1']);
  });

  it('blue_green updates and verifies the green half, then switches; the blue half stays on the previous version', async () => {
    const { a, fake, assignments } = await setup({});
    const r = await a.json('/v1/ota/execute', post({ strategy: 'blue_green', version: '6', assignments }, ADMIN));
    expect(r.body.rollout).toMatchObject({ success: true, switched: true });
    expect(r.body.rollout.steps.map((s: any) => [s.status, s.phase_percent])).toEqual([['deployed', 50], ['deployed', 50], ['skipped', 0], ['skipped', 0]]);
    expect(fake.calls.filter((c) => c.startsWith('rollout')).sort()).toEqual(['rollout a1', 'rollout a2']);
    const st = (await a.json('/v1/ota/status', bearer(ADMIN))).body;
    expect(st.state.current_version).toEqual({ 'a1@Pi': '6', 'a2@Pi': '6' });
    expect(st.state.history).toHaveLength(1);
    expect(st.rollout).toMatchObject({ status: 'succeeded', completed_steps: 2 });
    // A canary that does not promote stops after its batch (the reference's canary).
    const c = await a.json('/v1/ota/execute', post({ strategy: 'canary', version: '7', assignments, canary_percent: 50, canary_promote: false }, ADMIN));
    expect(c.body.rollout.steps.map((s: any) => s.status)).toEqual(['deployed', 'deployed', 'skipped', 'skipped']);
    const after = (await a.json('/v1/ota/status', bearer(ADMIN))).body.state;
    expect(after).toMatchObject({ current_version: { 'a1@Pi': '7', 'a2@Pi': '7' }, previous_version: { 'a1@Pi': '6', 'a2@Pi': '6' } });
  });
});
