import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADMIN, configAgent, get, post, snapshotFiles, type ConfigAgent, agentsClosedAfterEach } from './fixture.js';

/**
 * Configuration snapshots and approvals (docs/operations.md § Configuration snapshots and
 * approvals), acceptance checks F1–F7 and the failure paths, on a real agent over HTTP.
 */

const { agent, stop } = agentsClosedAfterEach();

describe('config snapshots', () => {
  it('F1: a Deploy key saves a snapshot; it is listed first and appears in the history', async () => {
    const a = await agent();
    const first = await post(a, '/v1/config/snapshots', a.keys.developer, { label: 'first' });
    expect(first.status).toBe(200);
    const r = await post(a, '/v1/config/snapshots', a.keys.developer, { label: 'base' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ version: 'v1', ok: true, snapshot: { label: 'base', project_name: 'Config Control Test', device_count: 2, encrypted: false } });
    const id = r.body.snapshot.id as string;
    expect(id).toMatch(/^cfg-\d+$/);
    expect(id).not.toBe(first.body.snapshot.id);

    const list = await get(a, '/v1/config/snapshots', null);
    expect(list.status).toBe(200);
    expect(list.body.snapshots.map((s: { id: string }) => s.id)).toEqual([id, first.body.snapshot.id]);

    // On disk: pretty JSON {meta, resolved} with the device pool.
    const file = path.join(a.stateDir, 'config-snapshots', `${id}.json`);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(doc.meta.id).toBe(id);
    expect(doc.resolved.device_pool.map((d: { id: string }) => d.id)).toEqual(['cam-1', 'cam-2']);
    expect(doc.resolved.config.fleetId).toBe('orchard');

    const history = await get(a, '/v1/config/history', null);
    expect(history.status).toBe(200);
    expect(history.body.history).toEqual(expect.arrayContaining([{ id: `snapshot-${id}`, timestamp: r.body.snapshot.created_at_ms, action: 'snapshot', snapshot_id: id }]));
    // The snapshot POST itself is an audited configuration change.
    expect(history.body.history.filter((h: { action: string }) => h.action === 'POST').length).toBe(2);
    const ts = history.body.history.map((h: { timestamp: number }) => h.timestamp);
    expect([...ts].sort((x, y) => y - x)).toEqual(ts);
  });

  it('F2: encrypt without SVC_CONFIG_SNAPSHOT_KEY is a 400 naming the variable, and nothing is written', async () => {
    const a = await agent();
    const r = await post(a, '/v1/config/snapshots', a.keys.developer, { encrypt: true });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('SVC_CONFIG_SNAPSHOT_KEY');
    expect(r.body.error).toBe('config snapshot encryption error: SVC_CONFIG_SNAPSHOT_KEY is required when encryption is enabled');
    expect(snapshotFiles(a)).toEqual([]);
    // SVC_CONFIG_SNAPSHOT_ENCRYPT turns it on when the request does not say.
    const b = await agent({ env: { SVC_CONFIG_SNAPSHOT_ENCRYPT: 'yes' } });
    expect((await post(b, '/v1/config/snapshots', b.keys.developer, {})).status).toBe(400);
    expect((await post(b, '/v1/config/snapshots', b.keys.developer, { encrypt: false })).status).toBe(200);
  });

  it('encrypted snapshots hold no plaintext, list and load with the key, and are skipped without it', async () => {
    const key = 'correct horse battery staple';
    const a = await agent({ env: { SVC_CONFIG_SNAPSHOT_KEY: key } });
    const r = await post(a, '/v1/config/snapshots', a.keys.developer, { label: 'sealed', encrypt: true });
    expect(r.status).toBe(200);
    expect(r.body.snapshot.encrypted).toBe(true);
    const id = r.body.snapshot.id as string;
    expect(snapshotFiles(a)).toEqual([`${id}.snap.enc`]);
    const bytes = fs.readFileSync(path.join(a.stateDir, 'config-snapshots', `${id}.snap.enc`));
    for (const plain of ['Config Control Test', 'cam-1', 'orchard', 'front_camera', 'sealed']) expect(bytes.includes(Buffer.from(plain))).toBe(false);
    const envelope = JSON.parse(bytes.toString('utf8'));
    expect(envelope).toEqual({ format: 'svc-config-snapshot-v1', cipher: 'AES-256-GCM', ciphertext: expect.stringMatching(/^[0-9a-f]+$/) });
    // No temporary or plain copy was left beside it.
    expect(fs.readdirSync(path.join(a.stateDir, 'config-snapshots'))).toEqual([`${id}.snap.enc`]);

    expect((await get(a, '/v1/config/snapshots')).body.snapshots).toEqual([r.body.snapshot]);
    // It loads (approval submission reads it).
    expect((await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: id })).status).toBe(200);
    await stop(a);

    // Same state, no key: skipped in the list, unreadable for an approval.
    const b = await agent({ stateDir: a.stateDir, keys: a.keys });
    expect((await get(b, '/v1/config/snapshots')).body.snapshots).toEqual([]);
    const denied = await post(b, '/v1/config/approvals', b.keys.developer, { snapshot_id: id });
    expect(denied.status).toBe(400);
    expect(denied.body.error).toContain('SVC_CONFIG_SNAPSHOT_KEY');
    await stop(b);

    // A wrong key does not decrypt either.
    const c = await agent({ stateDir: a.stateDir, keys: a.keys, env: { SVC_CONFIG_SNAPSHOT_KEY: 'wrong' } });
    expect((await get(c, '/v1/config/snapshots')).body.snapshots).toEqual([]);
  });

  it('without a configuration a snapshot is a 400; bad JSON is a 400; lax label/encrypt types are ignored', async () => {
    const none = await agent({ project: null });
    const r = await post(none, '/v1/config/snapshots', none.keys.developer, {});
    expect(r).toMatchObject({ status: 400, body: { error: 'no resolved configuration loaded; use --config' } });
    expect((await get(none, '/v1/config/snapshots')).body).toEqual({ version: 'v1', snapshots: [] });

    const a = await agent();
    expect((await post(a, '/v1/config/snapshots', a.keys.developer, '{not json')).status).toBe(400);
    const lax = await post(a, '/v1/config/snapshots', a.keys.developer, { label: 7, encrypt: 'yes' });
    expect(lax.status).toBe(200);
    expect(lax.body.snapshot).not.toHaveProperty('label');
    expect(lax.body.snapshot.encrypted).toBe(false);
  });

  it('401 without a credential, 403 for a viewer on every mutation', async () => {
    const a = await agent();
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const approval = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap })).body.approval.id;
    const mutations: Array<[string, unknown]> = [
      ['/v1/config/snapshots', {}],
      ['/v1/config/approvals', { snapshot_id: snap }],
      [`/v1/config/approvals/${approval}/approve`, {}],
      [`/v1/config/approvals/${approval}/reject`, {}],
      ['/v1/drift/scan', {}],
    ];
    for (const [p, body] of mutations) {
      expect((await post(a, p, null, body)).status, p).toBe(401);
      expect((await post(a, p, a.keys.auditor, body)).status, p).toBe(403);
    }
    // Approve is not the developer's action; Deploy is not the safety officer's.
    expect((await post(a, `/v1/config/approvals/${approval}/approve`, a.keys.developer, {})).status).toBe(403);
    expect((await post(a, '/v1/config/approvals', a.keys.safety_officer, { snapshot_id: snap })).status).toBe(403);
    // Nothing changed.
    expect((await get(a, '/v1/config/approvals')).body.approvals[0].status).toBe('pending');
  });
});

describe('config approvals', () => {
  async function setup(env: Record<string, string> = {}) {
    const a = await agent({ env });
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, { label: 'base' })).body.snapshot.id as string;
    return { a, snap };
  }

  it('F3–F5: quorum of distinct approvers; requester may not approve a multi-approver request; 409 on a repeat vote and on a resolved request', async () => {
    const { a, snap } = await setup();
    // Key A (supervisor, has Deploy and Approve) submits a request needing two approvals.
    const sub = await post(a, '/v1/config/approvals', a.keys.supervisor, { snapshot_id: snap, required_approvals: 2, note: 'restore base' });
    expect(sub.status).toBe(200);
    expect(sub.body.approval).toMatchObject({ snapshot_id: snap, requester: a.keyIds.supervisor, status: 'pending', required_approvals: 2, approvals: [], note: 'restore base' });
    const id = sub.body.approval.id as string;
    expect(id).toMatch(/^approval-\d+$/);

    const own = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, {});
    expect(own).toMatchObject({ status: 400, body: { error: 'config approval error: requester cannot approve their own multi-approver request' } });

    const b1 = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor2, { note: 'ok by me' });
    expect(b1.status).toBe(200);
    expect(b1.body).toMatchObject({ ok: true, quorum: { required: 2, received: 1, met: false }, publish: null, approval: { status: 'pending' } });
    expect(b1.body.approval.approvals).toEqual([{ approver: a.keyIds.supervisor2, approved_at_ms: expect.any(Number), note: 'ok by me' }]);

    const b2 = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor2, {});
    expect(b2).toMatchObject({ status: 409, body: { code: 'conflict', error: `config approval error: approver '${a.keyIds.supervisor2}' already voted on '${id}'` } });

    const c = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.safety_officer, {});
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ quorum: { required: 2, received: 2, met: true }, approval: { status: 'approved', resolver: a.keyIds.safety_officer } });
    expect(c.body.publish).toMatchObject({ snapshot_id: snap, devices_failed: [] });

    const again = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, {});
    expect(again).toMatchObject({ status: 409, body: { code: 'conflict', error: `config approval error: approval request '${id}' is not pending` } });
    const rejectLate = await post(a, `/v1/config/approvals/${id}/reject`, a.keys.supervisor, {});
    expect(rejectLate.status).toBe(409);
  });

  it('F6: an unknown id is a 400 with code not_found; the bare id path is 404; an unknown snapshot is a 400 not_found', async () => {
    const { a } = await setup();
    const r = await post(a, '/v1/config/approvals/approval-404/approve', a.keys.supervisor, {});
    expect(r).toMatchObject({ status: 400, body: { code: 'not_found', error: "config approval error: approval request 'approval-404' not found" } });
    expect((await post(a, '/v1/config/approvals/approval-404/reject', a.keys.supervisor, {})).body.code).toBe('not_found');
    expect((await post(a, '/v1/config/approvals/approval-404', a.keys.supervisor, {})).status).toBe(404);
    const missing = await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: 'cfg-1' });
    expect(missing).toMatchObject({ status: 400, body: { code: 'not_found' } });
    expect((await post(a, '/v1/config/approvals', a.keys.developer, {})).body.error).toBe('missing snapshot_id');
    expect((await post(a, '/v1/config/approvals', a.keys.developer, '[1]')).status).toBe(400);
  });

  it('F7: reject with a note; the requester may reject their own request', async () => {
    const { a, snap } = await setup();
    const id = (await post(a, '/v1/config/approvals', a.keys.supervisor, { snapshot_id: snap, note: 'old' })).body.approval.id;
    const r = await post(a, `/v1/config/approvals/${id}/reject`, a.keys.supervisor, { note: 'x' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ok: true, publish: null, approval: { status: 'rejected', note: 'x', resolver: a.keyIds.supervisor }, quorum: { required: 1, received: 0, met: false } });
    expect(r.body.approval.resolved_at_ms).toBeGreaterThan(0);
  });

  it('SVC_CONFIG_APPROVALS_REQUIRED sets the default quorum; an explicit value wins', async () => {
    const { a, snap } = await setup({ SVC_CONFIG_APPROVALS_REQUIRED: '3' });
    expect((await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap })).body.approval.required_approvals).toBe(3);
    expect((await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap, required_approvals: 1 })).body.approval.required_approvals).toBe(1);
    expect((await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap, required_approvals: 0 })).body.approval.required_approvals).toBe(3);
  });

  it('the queue persists across a restart; a corrupt queue answers 500 and is never overwritten', async () => {
    const { a, snap } = await setup();
    const id = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap, required_approvals: 2 })).body.approval.id;
    expect((await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, {})).status).toBe(200);
    await stop(a);

    const b = await agent({ stateDir: a.stateDir, keys: a.keys });
    const list = await get(b, '/v1/config/approvals', null);
    expect(list.status).toBe(200);
    expect(list.body.approvals).toEqual([expect.objectContaining({ id, status: 'pending', approvals: [expect.objectContaining({ approver: expect.any(String) })] })]);
    // The vote survived: the same approver still cannot vote twice after the restart.
    expect((await post(b, `/v1/config/approvals/${id}/approve`, b.keys.supervisor, {})).status).toBe(409);
    expect((await post(b, `/v1/config/approvals/${id}/approve`, b.keys.safety_officer, {})).body.approval.status).toBe('approved');

    const file = path.join(b.stateDir, 'config-approvals.json');
    fs.writeFileSync(file, '{"requests": [ torn');
    const broken = await get(b, '/v1/config/approvals');
    expect(broken).toMatchObject({ status: 500, body: { code: 'internal_error' } });
    expect((await post(b, '/v1/config/approvals', b.keys.developer, { snapshot_id: snap })).status).toBe(500);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"requests": [ torn');
  });

  it('a publish that cannot load its snapshot leaves the request pending and the vote unrecorded', async () => {
    const { a, snap } = await setup();
    const id = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap })).body.approval.id;
    fs.rmSync(path.join(a.stateDir, 'config-snapshots', `${snap}.json`));
    const r = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, {});
    expect(r).toMatchObject({ status: 400, body: { code: 'not_found' } });
    expect((await get(a, '/v1/config/approvals')).body.approvals[0]).toMatchObject({ status: 'pending', approvals: [] });
  });

  it('GET /v1/config/approvals is readable without a credential (public, sensitive prefix)', async () => {
    const { a } = await setup();
    expect((await get(a, '/v1/config/approvals', null)).body).toEqual({ version: 'v1', approvals: [] });
    expect(ADMIN).toHaveLength(64);
  });
});
