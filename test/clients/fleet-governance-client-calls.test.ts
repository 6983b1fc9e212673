import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * The calls the official clients make to the fleet-operation, governance, analytics, twin and
 * smart-space routes, as they make them: same method, path, query and body shape, and a credential
 * only where the client sends one (docs/operations.md, docs/governance.md, docs/analytics.md,
 * docs/twins.md, docs/spaces.md). Each must succeed against a live agent serving the demo project
 * with a facility added; mutations carry a key of the role the route needs.
 */
const REPO = path.resolve(__dirname, '../..');
const KEYS = { admin: 'c1'.repeat(32), deployer: 'c2'.repeat(32), operator: 'c3'.repeat(32) };
let a: RunningAgent;

beforeAll(async () => {
  const root = tempDir('svc-clients-fleet-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  // The demo project plus one facility, so the smart-space calls have something to name.
  const manifest = path.join(root, 'svc.toml');
  fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replace('[config]\n', '[config]\nfacilities = "svc.facilities.toml"\n'));
  fs.writeFileSync(
    path.join(root, 'svc.facilities.toml'),
    [
      '[[facilities]]',
      'id = "depot"',
      'name = "Depot"',
      'type = "warehouse"',
      '[[facilities.zones]]',
      'id = "dock-a"',
      'name = "Dock A"',
      '[[facilities.energy_systems]]',
      'id = "battery-1"',
      'type = "BatteryStorage"',
      '',
    ].join('\n'),
  );
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'admin', token: KEYS.admin, role: 'administrator' },
      { key_id: 'developer', token: KEYS.deployer, role: 'developer' },
      { key_id: 'ops', token: KEYS.operator, role: 'operator' },
    ]),
  );
  a = await startAgent({ configPath: manifest, programPath: path.join(root, 'programs', 'patrol.sd'), env: { SVC_API_KEYS_FILE: keys } });
});
afterAll(async () => a?.close());

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const get = (p: string, key?: string) => a.json(p, key ? { headers: auth(key) } : {});
const send = (method: string, p: string, body: unknown, key: string) =>
  a.json(p, { method, headers: { 'content-type': 'application/json', ...auth(key) }, body: JSON.stringify(body) });

async function ok(p: string, key?: string) {
  const r = await get(p, key);
  expect(r.status, `${p}: ${JSON.stringify(r.body).slice(0, 200)}`).toBe(200);
  return r.body;
}

describe('official client calls: fleet operations (TypeScript SDK and both Python clients)', () => {
  it('admin integrations and alert channels (with the key the SDK sends), deployment profiles (anonymous)', async () => {
    expect(await ok('/v1/admin/integrations', KEYS.admin)).toHaveProperty('observability');
    expect((await ok('/v1/admin/alert-channels', KEYS.admin)).channels).toBeInstanceOf(Array);
    const put = await send('PUT', '/v1/admin/alert-channels', { channels: ['log'] }, KEYS.admin);
    expect(put).toMatchObject({ status: 200, body: { ok: true, channel_count: 1 } });
    expect((await ok('/v1/deployment-profiles')).profiles).toHaveLength(19);
    expect((await ok(`/v1/deployment-profiles?name=${encodeURIComponent('Search & Rescue')}`)).profile).toBeDefined();
    expect((await ok('/v1/deployment-profiles?name=sar')).profile.kind).toBe('search_rescue');
  });

  it('the second Python client: snapshots, approvals, drift, OTA plan/execute (dry run), status, SRE, scorecard, thread, reports', async () => {
    const snap = await send('POST', '/v1/config/snapshots', { label: 'client' }, KEYS.deployer);
    expect(snap.status).toBe(200);
    const id = snap.body.snapshot.id as string;
    expect((await ok('/v1/config/snapshots')).snapshots[0].id).toBe(id);
    const approval = await send('POST', '/v1/config/approvals', { snapshot_id: id }, KEYS.deployer);
    expect(approval.status).toBe(200);
    expect((await ok('/v1/config/approvals')).approvals).toHaveLength(1);
    const reject = await send('POST', `/v1/config/approvals/${approval.body.approval.id}/reject`, { note: 'not now' }, KEYS.admin);
    expect(reject).toMatchObject({ status: 200, body: { approval: { status: 'rejected', note: 'not now' }, publish: null } });
    expect((await ok(`/v1/drift?baseline_id=${id}`)).report).toHaveProperty('passed');
    expect((await ok('/v1/drift/scans')).scans).toEqual([]);
    const plan = { strategy: 'canary', version: '2.0', canary_percent: 10, dry_run: true, assignments: [] };
    expect(await send('POST', '/v1/ota/plan', plan, KEYS.deployer)).toMatchObject({ status: 200 });
    expect(await send('POST', '/v1/ota/execute', plan, KEYS.deployer)).toMatchObject({ status: 200, body: { dry_run: true } });
    expect((await ok('/v1/ota/status')).state).toHaveProperty('history');
    expect(await ok('/v1/sre/summary')).toHaveProperty('slo');
    expect((await ok('/v1/executive/scorecard')).scorecard.categories).toHaveLength(7);
    expect((await ok('/v1/digital-thread/query?capability=navigation')).digital_thread).toHaveProperty('chain_summary');
    const report = await ok('/v1/reports/export?format=markdown&profile=defense', KEYS.deployer);
    expect(report).toMatchObject({ format: 'markdown', profile: 'defense' });
    // The client sends no credential on the scan: refused, as documented (docs/operations.md § Drift).
    expect((await a.json('/v1/drift/scan', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
  });
});

describe('official client calls: governance, analytics, twins, smart spaces', () => {
  it('smart spaces (no credential), with the facility, zone and energy system of the project', async () => {
    expect((await ok('/v1/smart-spaces/summary'))).toHaveProperty('version');
    expect((await ok('/v1/facilities')).facilities.map((f: { id: string }) => f.id)).toEqual(['depot']);
    for (const p of ['readiness', 'health', 'security', 'floor-map']) await ok(`/v1/facilities/depot/${p}`);
    await ok('/v1/zones/dock-a/occupancy');
    await ok('/v1/zones/dock-a/environment');
    expect((await ok('/v1/energy/systems')).systems.map((e: { id: string }) => e.id)).toEqual(['battery-1']);
    await ok('/v1/energy/systems/battery-1');
    expect((await ok('/v1/emergency/status')).status).toBe('normal');
    await ok('/v1/smart-spaces/devices?facility_id=depot');
  });

  it('analytics (no credential), with the query strings the clients build', async () => {
    for (const p of [
      '/v1/analytics/readiness?forecast_days=7',
      '/v1/analytics/what-if?scenario=gps_failure&all=1',
      '/v1/analytics/mission-risk',
      '/v1/analytics/readiness-forecast?horizon=7d&all=1',
      '/v1/analytics/trust-graph?format=mermaid',
      '/v1/analytics/mission-twin',
      '/v1/analytics/certification-pack?strict=1',
      '/v1/analytics/human-teaming',
    ]) {
      await ok(p);
    }
  });

  it('twins: anonymous reads, writes with an Operate key (sync with ?twin_id= and body {}, push, import-replay)', async () => {
    const sync = await send('POST', '/v1/twins/sync?twin_id=patrol', {}, KEYS.operator);
    expect(sync.status).toBe(200);
    expect((await ok('/v1/twins')).twins.length).toBeGreaterThan(0);
    await ok('/v1/twins/usage');
    await ok('/v1/twins/patrol');
    await ok('/v1/twins/patrol/history');
    expect((await send('POST', '/v1/twins/patrol/snapshots', sync.body.snapshot, KEYS.operator)).status).toBe(200);
    expect((await send('POST', '/v1/twins/import-replay', { program: 'programs/patrol.sd', twin_id: 'patrol' }, KEYS.operator)).status).toBe(200);
  });

  it('governance: the summary anonymously, the rest with the key the clients send', async () => {
    await ok('/v1/governance');
    expect((await send('POST', '/v1/governance/validate', {}, KEYS.operator)).status).toBe(200);
    await ok('/v1/compliance', KEYS.operator);
    expect((await send('POST', '/v1/compliance/check', {}, KEYS.operator)).status).toBe(200);
    await ok('/v1/certifications', KEYS.operator);
    await ok('/v1/risk', KEYS.operator);
  });
});
