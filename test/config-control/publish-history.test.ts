import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { bearer, connectGrpc } from '../helpers/grpc-client.js';
import { configAgent, get, post, type ConfigAgent, agentsClosedAfterEach } from './fixture.js';

/**
 * Publishing an approved snapshot (docs/operations.md § Publishing) and the configuration history
 * read from the snapshot directory and the mutation audit log (§ History).
 */

const { agent, stop } = agentsClosedAfterEach();

const device = async (a: ConfigAgent, id: string) => ((await get(a, '/v1/devices')).body.devices as Array<Record<string, unknown>>).find((d) => d.id === id)!;

describe('publish', () => {
  it('the quorum vote writes the snapshot devices into the fragment, reloads the configuration, and GET /v1/devices shows it (also after a restart)', async () => {
    const a = await agent();
    // The state to freeze: cam-2 vouched for, cam-1 in service.
    expect((await post(a, '/v1/devices/cam-2/trust', a.keys.supervisor, {})).status).toBe(200);
    expect(await device(a, 'cam-1')).toMatchObject({ lifecycle_state: 'active' });
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, { label: 'good' })).body.snapshot.id;

    // Then cam-1 is taken out of service.
    expect((await post(a, '/v1/devices/cam-1/quarantine', a.keys.supervisor, { reason: 'lens check', override: true })).status).toBe(200);
    expect(await device(a, 'cam-1')).toMatchObject({ lifecycle_state: 'quarantined' });

    const fragment = path.join(a.project.root, 'svc.devices.toml');
    const before = fs.readFileSync(fragment, 'utf8');
    const id = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap })).body.approval.id;
    expect(fs.readFileSync(fragment, 'utf8')).toBe(before);
    const r = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, { note: 'restore' });
    expect(r.status).toBe(200);
    expect(r.body.publish).toEqual({ snapshot_id: snap, devices_persisted: 2, devices_failed: [], reloaded_from_disk: true });

    // The fragment states the snapshot's decisions and nothing more: cam-2's trust (a decision its
    // declaration did not state); cam-1's "active" is what its robot_id already implies, so its
    // declaration stays as the snapshot held it (no lifecycle_state or assigned_robot key added).
    const doc = parse(fs.readFileSync(fragment, 'utf8')) as { devices: Array<Record<string, unknown>> };
    expect(doc.devices.find((d) => d['id'] === 'cam-1')).toEqual({ id: 'cam-1', type: 'camera', robot_id: 'Rover', logical_name: 'front_camera', firmware_version: '1.4.0', trust_level: 'verified' });
    expect(doc.devices.find((d) => d['id'] === 'cam-2')).toEqual({ id: 'cam-2', type: 'camera', trust_level: 'trusted' });
    expect(doc.devices).toHaveLength(2);
    // Edited in place: the comment and the other lines are kept, the new key sits in its table.
    const text = fs.readFileSync(fragment, 'utf8');
    expect(text.startsWith(before.slice(0, before.indexOf('[[devices]]\nid = "cam-2"')))).toBe(true);
    expect(text).toContain('[[devices]]\nid = "cam-2"\ntype = "camera"\ntrust_level = "trusted"\n');
    // The device pool took the published values at once.
    expect(await device(a, 'cam-1')).toMatchObject({ lifecycle_state: 'active', trust_level: 'verified' });
    expect(await device(a, 'cam-2')).toMatchObject({ trust_level: 'trusted' });

    await stop(a);
    const b = await agent({ stateDir: a.stateDir, keys: a.keys, project: a.project });
    expect(await device(b, 'cam-1')).toMatchObject({ lifecycle_state: 'active', trust_level: 'verified' });
    expect(await device(b, 'cam-2')).toMatchObject({ trust_level: 'trusted' });
  });

  it('a device no fragment declares is appended as [[devices]]; without device fragments nothing is persisted and the configuration is replaced in memory', async () => {
    const a = await agent();
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const fragment = path.join(a.project.root, 'svc.devices.toml');
    // An operator removed cam-2 from the file since the snapshot.
    fs.writeFileSync(fragment, fs.readFileSync(fragment, 'utf8').replace(/\[\[devices\]\]\nid = "cam-2"\ntype = "camera"\n/, ''));
    expect(fs.readFileSync(fragment, 'utf8')).not.toContain('cam-2');
    const id = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap })).body.approval.id;
    const r = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, {});
    expect(r.body.publish).toMatchObject({ devices_persisted: 2, devices_failed: [], reloaded_from_disk: true });
    const doc = parse(fs.readFileSync(fragment, 'utf8')) as { devices: Array<Record<string, unknown>> };
    // The declaration the snapshot held, not the pool's defaults ("verified" is implied without a robot_id).
    expect(doc.devices.find((d) => d['id'] === 'cam-2')).toEqual({ id: 'cam-2', type: 'camera' });

    // The device fragment disappears from disk: no file to write, the snapshot replaces the live configuration in memory.
    const snap2 = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    fs.renameSync(fragment, `${fragment}.bak`);
    const id2 = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap2 })).body.approval.id;
    const r2 = await post(a, `/v1/config/approvals/${id2}/approve`, a.keys.supervisor, {});
    expect(r2.body.publish).toEqual({
      snapshot_id: snap2,
      devices_persisted: 0,
      devices_failed: ["cam-1: invalid manifest: device 'cam-1' not found in any fragment", "cam-2: invalid manifest: device 'cam-2' not found in any fragment"],
      reloaded_from_disk: false,
    });
    expect(fs.existsSync(fragment)).toBe(false);
  });
});

describe('history', () => {
  it('selects configuration mutations by path and RPC, gives votes their snapshot id, and skips a bad line only', async () => {
    const a = await agent({ grpc: true });
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const id = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap, required_approvals: 2 })).body.approval.id;
    expect((await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, {})).status).toBe(200);
    // Not configuration: a device trust and an operator key creation are in the same log.
    expect((await post(a, '/v1/devices/cam-2/trust', a.keys.supervisor, {})).status).toBe(200);

    // A gRPC vote is audited as a gRPC mutation and still found.
    const g = connectGrpc(a.agent.grpcAddress!);
    try {
      const res = await g.client['ApproveConfigApproval']!({ approval_id: id, body_json: '{"note":"grpc"}' }, { metadata: bearer(a.keys.safety_officer) });
      expect(JSON.parse(res.json)).toMatchObject({ approval: { status: 'approved' }, quorum: { met: true } });
      const listed = JSON.parse((await g.client['ListConfigSnapshots']!({}, { metadata: bearer(a.keys.developer) })).json);
      expect(listed.snapshots[0].id).toBe(snap);
    } finally {
      g.close();
    }

    // A torn line in the log costs that line only.
    fs.appendFileSync(path.join(a.stateDir, 'control-center-mutations.jsonl'), '{"id":"audit-x", "payl\n');

    const h = (await get(a, '/v1/config/history', null)).body.history as Array<Record<string, unknown>>;
    expect(h.find((e) => e['action'] === 'snapshot')).toEqual({ id: `snapshot-${snap}`, timestamp: expect.any(Number), action: 'snapshot', snapshot_id: snap });
    const audit = h.filter((e) => e['action'] !== 'snapshot');
    expect(audit.map((e) => e['action'])).toEqual(['mutation', 'POST', 'POST', 'POST']);
    expect(audit[0]).toMatchObject({ snapshot_id: snap, actor: a.keyIds.safety_officer, id: expect.stringMatching(/^audit-/) });
    expect(audit[1]).toMatchObject({ snapshot_id: snap, actor: a.keyIds.supervisor });
    expect(audit[2]).not.toHaveProperty('snapshot_id');
    expect(audit[2]).toMatchObject({ actor: a.keyIds.developer });
    expect(JSON.stringify(h)).not.toContain('trust');
  });
});
