import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { fleetProject } from '../helpers/project-fixture.js';

/**
 * `GET /v1/readiness/impact` (docs/devices.md § Readiness impact): the last device-pool readiness
 * impact `POST /v1/readiness/run` computed, kept in the state directory across restarts; before any
 * run it is computed on the spot and says so.
 */
const ADMIN = 'e1'.repeat(32);
const bearer = (t: string) => ({ Authorization: `Bearer ${t}`, 'content-type': 'application/json' });
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});

async function agent(stateDir: string, configPath: string, env: Record<string, string> = {}) {
  const a = await startAgent({ stateDir, configPath, env: { SVC_API_KEY: ADMIN, ...env } });
  running.push(a);
  return a;
}

const READY = { mission_ready: true, impact: { total_devices: 4, blocked_count: 0, blocked_devices: [] } };
const GPS_A_BLOCKED = {
  mission_ready: false,
  impact: {
    total_devices: 4,
    blocked_count: 1,
    blocked_devices: [{ device_id: 'gps-a', lifecycle_state: 'quarantined', health_status: 'unknown', assigned_robot: 'rover-1', reason: 'device is quarantined' }],
  },
};

describe('readiness impact', () => {
  it('before any run: computed now, marked as such, and nothing written', async () => {
    const stateDir = tempDir();
    const a = await agent(stateDir, fleetProject());
    const r = await a.json('/v1/readiness/impact');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', source: 'computed_now', ran_at: null, requested_by: null, run_count: 0, changed_since_run: false, ...READY });
    expect(r.body.note).toMatch(/no readiness run recorded yet/);
    expect(fs.existsSync(path.join(stateDir, 'control-center-readiness-run.json'))).toBe(false);
  });

  it('answers the last run, tells when the pool changed since, and keeps it across a restart', async () => {
    const stateDir = tempDir();
    const configPath = fleetProject();
    const a = await agent(stateDir, configPath);
    // Quarantine gps-a, then run: the run sees one blocked device.
    expect((await a.json('/v1/devices/gps-a/quarantine', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ reason: 'test', override: true }) })).status).toBe(200);
    const run = await a.json('/v1/readiness/run', { method: 'POST', headers: bearer(ADMIN) });
    expect(run.status).toBe(200);
    expect(run.body).toEqual({ version: 'v1', ...GPS_A_BLOCKED });

    const last = await a.json('/v1/readiness/impact');
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({ source: 'last_run', run_count: 1, requested_by: 'env-default', changed_since_run: false, ...GPS_A_BLOCKED });
    expect(Date.parse(last.body.ran_at)).toBeGreaterThan(Date.now() - 60_000);
    // On disk before the answer (the run waits for its write).
    const file = JSON.parse(fs.readFileSync(path.join(stateDir, 'control-center-readiness-run.json'), 'utf8'));
    expect(file.last.result).toEqual(GPS_A_BLOCKED);

    // The pool changes: the impact still shows the last run and says it is out of date.
    expect((await a.json('/v1/devices/gps-a', { method: 'PATCH', headers: bearer(ADMIN), body: JSON.stringify({ lifecycle_state: 'active', override: true }) })).status).toBe(200);
    const stale = await a.json('/v1/readiness/impact');
    expect(stale.body).toMatchObject({ source: 'last_run', changed_since_run: true, ...GPS_A_BLOCKED });

    // Restart: the same answer from the state directory.
    const ranAt = last.body.ran_at;
    await a.close();
    running = running.filter((x) => x !== a);
    const b = await agent(stateDir, configPath);
    const after = await b.json('/v1/readiness/impact');
    expect(after.body).toMatchObject({ source: 'last_run', ran_at: ranAt, run_count: 1, ...GPS_A_BLOCKED, changed_since_run: true });

    // An anonymous run (the route is a read) replaces it.
    const again = await b.json('/v1/readiness/run', { method: 'POST' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ version: 'v1', ...READY });
    expect((await b.json('/v1/readiness/impact')).body).toMatchObject({ source: 'last_run', run_count: 2, requested_by: 'anonymous', changed_since_run: false, ...READY });
  });

  it('is a read: open by default, 401 without a credential when every read needs one; gRPC name in the contract', async () => {
    const a = await agent(tempDir(), fleetProject(), { SVC_API_REQUIRE_AUTH_ALL_READS: '1' });
    const anon = await a.json('/v1/readiness/impact');
    expect(anon.status).toBe(401);
    const ok = await a.json('/v1/readiness/impact', { headers: bearer(ADMIN) });
    expect(ok.status).toBe(200);
    expect(ok.body.source).toBe('computed_now');
    // Wrong method on the path is a 404 like any unknown route.
    expect((await a.json('/v1/readiness/impact', { method: 'POST', headers: bearer(ADMIN) })).status).toBe(404);
    const viaRpc = await a.json('/v1/rpc', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ method: 'svc.v1.ControlCenter/GetReadinessImpact' }) });
    // Not a JSON-RPC gateway method: only gRPC carries it.
    expect(viaRpc.status).toBe(400);
  });

  it('an unreadable state file is kept aside and the impact is computed now', async () => {
    const stateDir = tempDir();
    fs.writeFileSync(path.join(stateDir, 'control-center-readiness-run.json'), '{"last": 42');
    const a = await agent(stateDir, fleetProject());
    const r = await a.json('/v1/readiness/impact');
    expect(r.status).toBe(200);
    expect(r.body.source).toBe('computed_now');
    expect(fs.readdirSync(stateDir).some((f) => f.startsWith('control-center-readiness-run.json.corrupt-'))).toBe(true);
  });
});
