import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent-harness.js';
import { configAgent, get, post, type ConfigAgent, type ConfigProject, agentsClosedAfterEach } from './fixture.js';

/**
 * Publishing a snapshot of the demo project leaves the live configuration equal to that snapshot as
 * drift compares them (docs/operations.md § Publishing, § Drift). The regression: publishing wrote
 * the pool's implied defaults (`lifecycle_state = "active"`, `assigned_robot`) into every
 * `svc.devices.toml` declaration and appended the fleet file's compute devices to it as new
 * `[[devices]]` tables, so drift against the snapshot just published failed at once.
 */

const REPO = path.resolve(import.meta.dirname, '../..');

const { agent, stop } = agentsClosedAfterEach();

/** A copy of demo/, as test/panel/panel-harness.ts#startPanelAgent serves it. */
function demoCopy(): ConfigProject {
  const root = tempDir('svc-cc-demo-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  return { root, configPath: path.join(root, 'svc.toml'), programPath: path.join(root, 'programs', 'patrol.sd') };
}

type Finding = { dimension: string; severity: string; message: string; path: string | null };

const read = (a: ConfigAgent, file: string) => fs.readFileSync(path.join(a.project.root, file), 'utf8');

/** Save → submit (quorum 2) → approve by two supervisors: the second vote publishes. */
async function publishThroughQuorum(a: ConfigAgent, snap: string) {
  const id = (await post(a, '/v1/config/approvals', a.keys.developer, { snapshot_id: snap, required_approvals: 2 })).body.approval.id;
  const first = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor, {});
  expect(first.body).toMatchObject({ quorum: { required: 2, received: 1, met: false }, publish: null });
  const second = await post(a, `/v1/config/approvals/${id}/approve`, a.keys.supervisor2, {});
  expect(second.status).toBe(200);
  expect(second.body.quorum).toEqual({ required: 2, received: 2, met: true });
  return second.body.publish;
}

const drift = async (a: ConfigAgent, snap: string) => (await get(a, `/v1/drift?baseline_id=${snap}`, null)).body.report;

describe('publishing a snapshot of the demo project', () => {
  it('save → approve to quorum → drift against the snapshot is clean, the files are untouched; a later trust change is drift', async () => {
    const a = await agent({ project: demoCopy() });
    const files = ['svc.devices.toml', 'svc.fleet.toml'].map((f) => [f, read(a, f)] as const);
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, { label: 'panel' })).body.snapshot.id;
    expect(await drift(a, snap)).toMatchObject({ passed: true, findings: [] });

    const publish = await publishThroughQuorum(a, snap);
    // 5 field devices in svc.devices.toml, 6 compute devices in svc.fleet.toml: each found where declared.
    expect(publish).toEqual({ snapshot_id: snap, devices_persisted: 11, devices_failed: [], reloaded_from_disk: true });
    // The snapshot is what the files state: nothing to write, no fleet device copied into the devices fragment.
    for (const [f, text] of files) expect(read(a, f)).toBe(text);

    expect(await drift(a, snap)).toEqual({ passed: true, findings: [], by_dimension: {}, dimensions_checked: ['configuration', 'firmware', 'package', 'provider', 'capability', 'policy', 'safety'] });
    const scan = await post(a, '/v1/drift/scan', a.keys.operator, { baseline_id: snap });
    expect(scan.body.scan).toMatchObject({ passed: true, finding_count: 0, triggered_alert: false });

    // A real change after the publish is still drift: the lidar (no trust level in the fleet file) is vouched for.
    expect((await post(a, '/v1/devices/sentinel-lidar/trust', a.keys.supervisor, {})).status).toBe(200);
    const after = (await drift(a, snap)) as { passed: boolean; findings: Finding[] };
    expect(after.passed).toBe(false);
    expect(after.findings).toEqual([{ dimension: 'safety', severity: 'high', message: 'device \'sentinel-lidar\' trust_level: null -> "trusted"', path: 'devices.sentinel-lidar.trust_level' }]);
  });

  it('with patrol.sd loaded (the panel harness): drift is clean before and after publishing', async () => {
    const a = await agent({ project: demoCopy(), withProgram: true });
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    // Check 14 (program members against the logical map) finds every member of patrol.sd under its
    // `robot.member` logical name (test/drift/program-mapping.test.ts).
    expect(await drift(a, snap)).toMatchObject({ passed: true, findings: [] });
    await publishThroughQuorum(a, snap);
    expect(await drift(a, snap)).toMatchObject({ passed: true, findings: [] });
  });

  it('publishing restores edits made after the snapshot where they were made, keeping comments, in the fleet file too', async () => {
    const a = await agent({ project: demoCopy() });
    const devicesText = read(a, 'svc.devices.toml');
    const fleetText = read(a, 'svc.fleet.toml');
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    await stop(a);

    // Edits on disk after the snapshot: a field device distrusted, a fleet compute device renamed and taken out of service.
    fs.writeFileSync(path.join(a.project.root, 'svc.devices.toml'), devicesText.replace('serial = "IMU-7Q2-004511"\nprovider = "imu_serial"\ncapabilities = ["autonomous_navigation"]\ntrust_level = "trusted"', 'serial = "IMU-7Q2-004511"\nprovider = "imu_serial"\ncapabilities = ["autonomous_navigation"]\ntrust_level = "untrusted"'));
    expect(fleetText).toContain('logical_name = "sentinel.lidar"\n');
    fs.writeFileSync(path.join(a.project.root, 'svc.fleet.toml'), fleetText.replace('logical_name = "sentinel.lidar"\n', 'logical_name = "sentinel.front_lidar"\n').replace('mount = "front_mast"\n', 'mount = "front_mast"\nlifecycle_state = "quarantined"\n'));
    const b = await agent({ stateDir: a.stateDir, keys: a.keys, project: a.project });
    const edited = (await drift(b, snap)) as { findings: Finding[] };
    expect(edited.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ dimension: 'safety', path: 'devices.sentinel-imu.trust_level' }),
        expect.objectContaining({ dimension: 'mapping', message: "sensor mapping 'sentinel.lidar' removed" }),
        expect.objectContaining({ dimension: 'mapping', message: "sensor mapping 'sentinel.front_lidar' added" }),
      ]),
    );

    expect(await publishThroughQuorum(b, snap)).toMatchObject({ devices_persisted: 11, devices_failed: [], reloaded_from_disk: true });
    // Each file is back to the bytes the snapshot was taken from: comments and layout kept, nothing appended.
    expect(read(b, 'svc.devices.toml')).toBe(devicesText);
    expect(read(b, 'svc.fleet.toml')).toBe(fleetText);
    expect(await drift(b, snap)).toMatchObject({ passed: true, findings: [] });
    expect(((await get(b, '/v1/devices')).body.devices as Array<Record<string, unknown>>).find((d) => d['id'] === 'sentinel-lidar')).toMatchObject({ lifecycle_state: 'active' });
  });
});
