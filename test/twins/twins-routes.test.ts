import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { ACME_OPERATOR, AUDITOR, bearer, FOREIGN_OPERATOR, OPERATOR, post, startTwinAgent, twinProject } from './fixture.js';

/**
 * Mission twins over real HTTP (docs/twins.md): snapshots from the loaded program, from a trace a
 * simulation recorded, and pushed by a remote site; the history ring and usage counters; the tenant
 * rules (another tenant's twin is never shown nor overwritten); persistence across a restart.
 */
let a: RunningAgent | null = null;
afterEach(async () => {
  await a?.close();
  a = null;
});

const snapshotBody = (extra: Record<string, unknown> = {}) => ({
  program: 'remote/site-b.sd',
  mission_twin: { program: 'site-b.sd', risks: { mission_ready: true, readiness_score: 91, open_issues: 0 }, state: { robots: ['B1'] } },
  ...extra,
});

describe('mission twins', () => {
  it('sync twice → two snapshots oldest first; usage counts syncs and history reads (F14); list summarises the latest', async () => {
    const p = twinProject();
    a = await startTwinAgent(p);
    const first = await a.json('/v1/twins/sync', post(OPERATOR));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ version: 'v1', twin_id: 'patrol' });
    const snap = first.body.snapshot;
    expect(snap).toMatchObject({ version: 'v1', twin_id: 'patrol', tenant_id: 'default', program: 'patrol.sd', captured_at_ms: first.body.captured_at_ms });
    // The report is the program's own analysis: robots and readiness agree with the program routes.
    const readiness = await a.json('/v1/programs/readiness', post(undefined, {}));
    expect(snap.mission_twin.readiness.score.total).toBe(readiness.body.report.score.total);
    expect(snap.mission_twin.risks).toMatchObject({ readiness_score: readiness.body.report.score.total, mission_ready: readiness.body.report.mission_ready });
    expect(snap.mission_twin.state.robots).toEqual(readiness.body.report.robots);
    expect(snap.mission_twin.state.mission_names.length).toBeGreaterThan(0);
    expect(snap.mission_twin.forecast.predictions.map((x: any) => x.horizon_days)).toEqual([7, 14]);
    expect(snap.mission_twin.replay).toBeUndefined();

    const second = await a.json('/v1/twins/sync', post(OPERATOR));
    expect(second.status).toBe(200);
    const history = await a.json('/v1/twins/patrol/history');
    expect(history.status).toBe(200);
    expect(history.body.twin_id).toBe('patrol');
    expect(history.body.snapshots).toHaveLength(2);
    expect(history.body.snapshots[0].captured_at_ms).toBe(first.body.captured_at_ms);
    expect(history.body.snapshots[1].captured_at_ms).toBe(second.body.captured_at_ms);

    const usage = await a.json('/v1/twins/usage');
    expect(usage.body).toEqual({ version: 'v1', tenant_id: 'default', twin_count: 1, snapshot_count: 2, push_count: 0, sync_count: 2, history_count: 1 });

    const got = await a.json('/v1/twins/patrol');
    expect(got.status).toBe(200);
    expect(got.body).toEqual(second.body.snapshot);

    // ?twin_id= names another twin; the list is sorted by id.
    expect((await a.json('/v1/twins/sync?twin_id=alpha', post(OPERATOR))).body.twin_id).toBe('alpha');
    const list = await a.json('/v1/twins');
    expect(list.body.twins.map((t: any) => t.twin_id)).toEqual(['alpha', 'patrol']);
    expect(list.body.twins[1]).toEqual({
      twin_id: 'patrol',
      tenant_id: 'default',
      program: 'patrol.sd',
      captured_at_ms: second.body.captured_at_ms,
      mission_ready: snap.mission_twin.risks.mission_ready,
      readiness_score: snap.mission_twin.risks.readiness_score,
      history_count: 2,
    });
  });

  it('unknown twin → 404; fixed paths dispatch before {id}: GET /v1/twins/sync is a lookup of a twin named sync', async () => {
    a = await startTwinAgent(twinProject());
    const nope = await a.json('/v1/twins/nope');
    expect(nope.status).toBe(404);
    expect(nope.body).toMatchObject({ error: "twin 'nope' not found", code: 'not_found' });
    expect((await a.json('/v1/twins/nope/history')).status).toBe(404);
    expect((await a.json('/v1/twins/sync')).body.error).toBe("twin 'sync' not found");
    expect((await a.json('/v1/twins/import-replay')).status).toBe(404);
    expect((await a.json('/v1/twins/usage')).status).toBe(200);
    // Wrong method on a fixed path.
    expect((await a.json('/v1/twins/usage', post(OPERATOR))).status).toBe(404);
    // A failed history read is not counted.
    expect((await a.json('/v1/twins/usage')).body.history_count).toBe(0);
  });

  it('writes need Operate: none → 401, auditor → 403, another tenant’s key → 403 tenant_mismatch; bad JSON → 400', async () => {
    a = await startTwinAgent(twinProject());
    for (const [url, body] of [
      ['/v1/twins/sync', {}],
      ['/v1/twins/x/snapshots', snapshotBody()],
      ['/v1/twins/import-replay', { program: 'programs/patrol.sd' }],
    ] as const) {
      expect((await a.json(url, post(undefined, body))).status).toBe(401);
      expect((await a.json(url, post(AUDITOR, body))).status).toBe(403);
      const foreign = await a.json(url, post(FOREIGN_OPERATOR, body));
      expect(foreign.status).toBe(403);
      expect(foreign.body.code).toBe('tenant_mismatch');
      const bad = await a.json(url, post(OPERATOR, '{"program":'));
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/^invalid JSON body: /);
    }
    expect((await a.json('/v1/twins')).body.twins).toEqual([]);
  });

  it('push: twin_id must match the path (F15), required fields are named, the tenant is always the instance’s', async () => {
    a = await startTwinAgent(twinProject());
    const mismatch = await a.json('/v1/twins/x/snapshots', post(OPERATOR, snapshotBody({ twin_id: 'y' })));
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toBe('snapshot twin_id must match path');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ mission_twin: snapshotBody().mission_twin }, 'program'],
      [{ program: 'a.sd' }, 'mission_twin'],
      [{ program: 'a.sd', mission_twin: { risks: { readiness_score: 1 } } }, 'mission_twin.risks.mission_ready'],
      [{ program: 'a.sd', mission_twin: { risks: { mission_ready: true, readiness_score: 1.5 } } }, 'mission_twin.risks.readiness_score'],
      [snapshotBody({ captured_at_ms: 'yesterday' }), 'captured_at_ms'],
    ];
    for (const [body, field] of cases) {
      const r = await a.json('/v1/twins/x/snapshots', post(OPERATOR, body));
      expect(r.status).toBe(400);
      expect(r.body.error).toBe(`invalid snapshot JSON: ${field}`);
    }
    const ok = await a.json('/v1/twins/site-b/snapshots', post(OPERATOR, snapshotBody({ tenant_id: 'somebody-else', twin_id: 'site-b', captured_at_ms: 1700000000000 })));
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ version: 'v1', twin_id: 'site-b', captured_at_ms: 1700000000000 });
    expect(ok.body.snapshot).toMatchObject({ tenant_id: 'default', program: 'remote/site-b.sd', mission_twin: { state: { robots: ['B1'] } } });
    expect((await a.json('/v1/twins/usage')).body).toMatchObject({ push_count: 1, sync_count: 0, twin_count: 1, snapshot_count: 1 });
    expect((await a.json('/v1/twins')).body.twins[0]).toMatchObject({ twin_id: 'site-b', mission_ready: true, readiness_score: 91, history_count: 1 });
  });

  it('the history ring keeps the newest 50; Object.prototype names are ordinary twin ids', async () => {
    a = await startTwinAgent(twinProject());
    for (let i = 0; i < 52; i++) {
      const r = await a.json('/v1/twins/ring/snapshots', post(OPERATOR, snapshotBody({ captured_at_ms: 1000 + i })));
      expect(r.status).toBe(200);
    }
    const h = (await a.json('/v1/twins/ring/history')).body.snapshots;
    expect(h).toHaveLength(50);
    expect(h[0].captured_at_ms).toBe(1002);
    expect(h[49].captured_at_ms).toBe(1051);
    expect((await a.json('/v1/twins/usage')).body).toMatchObject({ twin_count: 1, snapshot_count: 50, push_count: 52 });
    expect((await a.json('/v1/twins/a%2Fb/snapshots', post(OPERATOR, snapshotBody()))).status).toBe(404);
    expect((await a.json('/v1/twins/a%2Fb')).status).toBe(404);
    for (const id of ['constructor', '__proto__', 'toString']) {
      expect((await a.json(`/v1/twins/${id}`)).status, id).toBe(404);
      expect((await a.json(`/v1/twins/${id}/history`)).status, id).toBe(404);
      const w = await a.json(`/v1/twins/${id}/snapshots`, post(OPERATOR, snapshotBody()));
      expect(w.status, id).toBe(200);
      expect((await a.json(`/v1/twins/${id}/history`)).body.snapshots, id).toHaveLength(1);
    }
    expect((await a.json('/v1/twins')).body.twins.map((t: any) => t.twin_id)).toEqual(['__proto__', 'constructor', 'ring', 'toString']);
  });

  it('import-replay reads a trace a simulation recorded inside the project; paths outside it → 400', async () => {
    const p = twinProject();
    a = await startTwinAgent(p);
    const sim = await a.json('/v1/programs/simulation', post(OPERATOR, { execute: true, record_trace: true }));
    expect(sim.status).toBe(200);
    const tracePath = path.join(p.root, 'programs', 'patrol.trace');
    const trace = JSON.parse(fs.readFileSync(tracePath, 'utf8'));
    expect(trace.frames.length).toBeGreaterThan(0);

    const r = await a.json('/v1/twins/import-replay', post(OPERATOR, { program: 'programs/patrol.trace', twin_id: 'patrol-run' }));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, legacy: 'SVC_CLOUD_UPLOAD_URL', twin_id: 'patrol-run' });
    expect(r.body.version).toBeUndefined();
    const replay = r.body.snapshot.mission_twin.replay;
    const byEvent: Record<string, number> = {};
    for (const f of trace.frames) byEvent[f.event] = (byEvent[f.event] ?? 0) + 1;
    expect(replay).toMatchObject({
      trace: 'programs/patrol.trace',
      frame_count: trace.frames.length,
      duration_ms: trace.frames[trace.frames.length - 1].sim_time_ms,
      deterministic: trace.deterministic,
      events: byEvent,
    });
    // The trace's program is the snapshot's program, shown relative to the project.
    expect(r.body.snapshot.program).toBe('programs/patrol.sd');
    expect(JSON.stringify(r.body)).not.toContain(p.root);

    // A program path, default twin id = its stem; a trace added explicitly.
    const named = await a.json('/v1/twins/import-replay', post(OPERATOR, { source: 'programs/patrol.sd', trace: 'programs/patrol.trace' }));
    expect(named.status).toBe(200);
    expect(named.body.twin_id).toBe('patrol');
    expect(named.body.snapshot.program).toBe('programs/patrol.sd');
    expect(named.body.snapshot.mission_twin.replay.frame_count).toBe(trace.frames.length);
    expect((await a.json('/v1/twins/usage')).body).toMatchObject({ push_count: 2, sync_count: 0 });
    // An absolute path inside the project is accepted and shown relative to it.
    const abs = await a.json('/v1/twins/import-replay', post(OPERATOR, { program: p.program, twin_id: 'abs' }));
    expect(abs.status).toBe(200);
    expect(abs.body.snapshot.program).toBe('programs/patrol.sd');
    expect(JSON.stringify(abs.body)).not.toContain(p.root);

    const outside = tempDir('svc-outside-');
    fs.writeFileSync(path.join(outside, 'evil.sd'), fs.readFileSync(p.program));
    const failures: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /^replay JSON must include program or source path$/],
      [{ program: '../../etc/passwd' }, /^read program failed: outside project root$/],
      [{ program: path.join(outside, 'evil.sd') }, /^read program failed: outside project root$/],
      [{ program: 'programs/patrol.sd', trace: path.join(outside, 'x.trace') }, /^read trace failed: outside project root$/],
      [{ program: 'programs/missing.sd' }, /^read program failed: programs\/missing.sd: no such file$/],
      [{ program: 'svc.toml' }, /^parse failed|^tokenize failed/],
      [{ program: 'programs/patrol.sd', trace: 'programs/dock.sd' }, /^read trace failed: not a \.trace file/],
    ];
    for (const [body, message] of failures) {
      const res = await a.json('/v1/twins/import-replay', post(OPERATOR, body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    // A trace whose source leaves the project is refused too.
    fs.writeFileSync(path.join(p.root, 'programs', 'escape.trace'), JSON.stringify({ version: 1, source: path.join(outside, 'evil.sd'), deterministic: true, frames: [] }));
    const esc = await a.json('/v1/twins/import-replay', post(OPERATOR, { program: 'programs/escape.trace' }));
    expect(esc.status).toBe(400);
    expect(esc.body.error).toBe('read program failed: outside project root');
    // The sync route folds a trace in the same way.
    const synced = await a.json('/v1/twins/sync?trace=programs/patrol.trace', post(OPERATOR));
    expect(synced.body.snapshot.mission_twin.replay.frame_count).toBe(trace.frames.length);
    expect((await a.json('/v1/twins/sync?trace=../x.trace', post(OPERATOR))).status).toBe(400);
  });

  it('sync without a loaded program → 400 with the reference message', async () => {
    const p = twinProject();
    const { startAgent } = await import('../helpers/agent-harness.js');
    a = await startAgent({ configPath: p.config, env: { SVC_API_KEYS_FILE: p.keys } });
    const r = await a.json('/v1/twins/sync', post(OPERATOR));
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('no program loaded; use control-center serve --program <file.sd>');
  });

  it('survives a restart (counters reset); under another tenant the twins are hidden (403) and never overwritten (D9)', async () => {
    const p = twinProject();
    const stateDir = tempDir('svc-twin-state-');
    a = await startTwinAgent(p, { stateDir });
    await a.json('/v1/twins/sync', post(OPERATOR));
    await a.json('/v1/twins/sync', post(OPERATOR));
    const before = (await a.json('/v1/twins/patrol')).body;
    await a.close();

    a = await startTwinAgent(p, { stateDir });
    expect((await a.json('/v1/twins/patrol')).body).toEqual(before);
    expect((await a.json('/v1/twins/patrol/history')).body.snapshots).toHaveLength(2);
    expect((await a.json('/v1/twins/usage')).body).toMatchObject({ twin_count: 1, snapshot_count: 2, sync_count: 0, push_count: 0, history_count: 1 });
    await a.close();

    const file = path.join(stateDir, 'control-center-twins.json');
    const onDisk = fs.readFileSync(file, 'utf8');
    expect(JSON.parse(onDisk).history.patrol).toHaveLength(2);

    // The same state directory served as tenant acme: default's twin is another tenant's.
    a = await startTwinAgent(p, { stateDir, tenant: 'acme' });
    expect((await a.json('/v1/twins')).body.twins).toEqual([]);
    expect((await a.json('/v1/twins/usage')).body).toMatchObject({ tenant_id: 'acme', twin_count: 0, snapshot_count: 0 });
    for (const init of [undefined, bearer(ACME_OPERATOR)]) {
      const get = await a.json('/v1/twins/patrol', init);
      expect(get.status).toBe(403);
      expect(get.body).toMatchObject({ error: 'tenant mismatch', code: 'tenant_mismatch' });
      expect((await a.json('/v1/twins/patrol/history', init)).status).toBe(403);
    }
    expect((await a.json('/v1/twins/usage')).body.history_count).toBe(0);
    for (const [url, body] of [
      ['/v1/twins/sync', {}],
      ['/v1/twins/patrol/snapshots', snapshotBody()],
      ['/v1/twins/import-replay', { program: 'programs/patrol.sd' }],
    ] as const) {
      const w = await a.json(url, post(ACME_OPERATOR, body));
      expect(w.status, url).toBe(403);
      expect(w.body.code).toBe('tenant_mismatch');
    }
    expect(fs.readFileSync(file, 'utf8')).toBe(onDisk);
    // A new twin id is this tenant's own.
    const own = await a.json('/v1/twins/sync?twin_id=acme-patrol', post(ACME_OPERATOR));
    expect(own.status).toBe(200);
    expect(own.body.snapshot.tenant_id).toBe('acme');
    expect((await a.json('/v1/twins')).body.twins.map((t: any) => t.twin_id)).toEqual(['acme-patrol']);
    // The default tenant's key is now the foreign one.
    expect((await a.json('/v1/twins', bearer(OPERATOR))).body.code).toBe('tenant_mismatch');
  });
});
