import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentsClosedAfterEach, get, post, type ConfigAgent, type ConfigProject } from '../config-control/fixture.js';
import { tempDir } from '../helpers/agent-harness.js';

/**
 * Drift check 14 (docs/operations.md § Drift: the program's sensors and actuators against the
 * configuration's logical map) on the bundled demo. The demo names its devices in the `robot.member`
 * form (`logical_name = "sentinel.imu"` for sensor `imu` of robot `Sentinel`, demo/README.md), the
 * form traceability matches program members by. The regression: check 14 looked the bare member
 * name (`imu`) up in the map, so the demo was never drift-clean with patrol.sd loaded, not even
 * against a snapshot saved a moment before.
 */

const REPO = path.resolve(import.meta.dirname, '../..');

const { agent, stop } = agentsClosedAfterEach();

/** A fresh copy of demo/ (as test/panel/panel-harness.ts serves it), edited by `edit` before the agent starts. */
function demoCopy(edit: (root: string) => void = () => undefined): ConfigProject {
  const root = tempDir('svc-drift-demo-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  edit(root);
  return { root, configPath: path.join(root, 'svc.toml'), programPath: path.join(root, 'programs', 'patrol.sd') };
}

/** Replaces `from` by `to` in one file of the copy, failing when `from` is not there (the demo changed). */
function replaceIn(root: string, file: string, from: string, to: string): void {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  expect(text).toContain(from);
  fs.writeFileSync(path.join(root, file), text.replace(from, to));
}

const demoAgent = (project: ConfigProject): Promise<ConfigAgent> => agent({ project, withProgram: true });

const DIMENSIONS = ['configuration', 'firmware', 'package', 'provider', 'capability', 'policy', 'safety'];

describe('drift check 14 on the demo (program members against robot.member logical names)', () => {
  it('a fresh copy of demo/ with patrol.sd is drift-clean against a just-saved snapshot: GET /v1/drift and a scan', async () => {
    const a = await demoAgent(demoCopy());
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;

    const r = await get(a, `/v1/drift?baseline_id=${snap}`, null);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: 'v1', report: { passed: true, findings: [], by_dimension: {}, dimensions_checked: DIMENSIONS }, agent_findings: 0 });

    const scan = await post(a, '/v1/drift/scan', a.keys.operator, { baseline_id: snap });
    expect(scan.status).toBe(200);
    expect(scan.body.scan).toMatchObject({ passed: true, finding_count: 0, triggered_alert: false });
    expect((await get(a, '/v1/alerts')).body.alerts.filter((x: { alert_type: string }) => x.alert_type === 'config_drift')).toEqual([]);
  });

  it('every member of patrol.sd is served by a device logical_name of its own robot (check 14 has something to check)', async () => {
    // The same names traceability resolves: each hardware row of Sentinel finds its provider by name.
    const a = await demoAgent(demoCopy());
    const devices = (await get(a, '/v1/devices')).body.devices as Array<{ id: string; logical_name: string | null }>;
    const names = Object.fromEntries(devices.filter((d) => d.logical_name !== null).map((d) => [d.logical_name, d.id]));
    expect(names).toEqual({
      'sentinel.lidar': 'sentinel-lidar',
      'sentinel.imu': 'sentinel-imu',
      'sentinel.gps': 'sentinel-gps',
      'sentinel.dock_cam': 'sentinel-aisle-cam',
      'sentinel.air': 'sentinel-air-probe',
      'sentinel.wheels': 'sentinel-drive-ctrl',
    });
  });

  it('a logical name of another robot, or of a member the program does not have, is still a program/high finding naming what was expected', async () => {
    const a = await demoAgent(
      demoCopy((root) => {
        // The IMU named for robot Dockhand: it must not serve Sentinel's imu, although the member matches.
        replaceIn(root, 'svc.devices.toml', 'logical_name = "sentinel.imu"', 'logical_name = "dockhand.imu"');
        // The drive controller named for a member patrol.sd does not declare.
        replaceIn(root, 'svc.devices.toml', 'logical_name = "sentinel.wheels"', 'logical_name = "sentinel.drive"');
      }),
    );
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const r = await get(a, `/v1/drift?baseline_id=${snap}`, null);
    // Snapshot and live configuration are equal, so only check 14 speaks: it compares the program with
    // the live configuration.
    expect(r.body.report).toEqual({
      passed: false,
      findings: [
        {
          dimension: 'program',
          severity: 'high',
          message: `robot 'Sentinel' sensor 'imu' has no logical mapping in the configuration: expected a device with logical_name "Sentinel.imu" or a [mapping.sensors.imu] table; "dockhand.imu" names another robot`,
          path: null,
        },
        {
          dimension: 'program',
          severity: 'high',
          message: `robot 'Sentinel' actuator 'wheels' has no logical mapping in the configuration: expected a device with logical_name "Sentinel.wheels" or a [mapping.actuators.wheels] table`,
          path: null,
        },
      ],
      by_dimension: { capability: 2 },
      dimensions_checked: DIMENSIONS,
    });
  });

  it('a sensor whose device is mapped as an actuator is a finding that says so', async () => {
    // An emergency_stop capability makes a logical device an actuator (docs/operations.md § Drift).
    const a = await demoAgent(
      demoCopy((root) => replaceIn(root, 'svc.devices.toml', 'capabilities = ["gps_navigation"]', 'capabilities = ["gps_navigation", "emergency_stop"]')),
    );
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    const findings = (await get(a, `/v1/drift?baseline_id=${snap}`, null)).body.report.findings;
    expect(findings).toEqual([
      {
        dimension: 'program',
        severity: 'high',
        message: `robot 'Sentinel' sensor 'gps' has no logical mapping in the configuration: expected a device with logical_name "Sentinel.gps" or a [mapping.sensors.gps] table; "sentinel.gps" is mapped as an actuator`,
        path: null,
      },
    ]);
  });

  it('a logical name changed after the snapshot is mapping drift and, when the program needs it, program drift', async () => {
    const project = demoCopy();
    const a = await demoAgent(project);
    const snap = (await post(a, '/v1/config/snapshots', a.keys.developer, {})).body.snapshot.id;
    await stop(a);
    replaceIn(project.root, 'svc.fleet.toml', 'logical_name = "sentinel.lidar"', 'logical_name = "dockhand.lidar"');
    const b = await agent({ project, withProgram: true, stateDir: a.stateDir, keys: a.keys });
    const findings = (await get(b, `/v1/drift?baseline_id=${snap}`, null)).body.report.findings as Array<{ dimension: string; severity: string; message: string }>;
    expect(findings.map((f) => [f.dimension, f.severity, f.message])).toEqual([
      // Arrays compare whole (check 1): the fleet's robots, lidar included.
      ['configuration', 'medium', expect.stringMatching(/^~ fleet\.robots: .*"logical_name":"sentinel\.lidar".* -> .*"logical_name":"dockhand\.lidar"/)],
      ['mapping', 'high', "sensor mapping 'sentinel.lidar' removed"],
      ['mapping', 'medium', "sensor mapping 'dockhand.lidar' added"],
      ['program', 'high', `robot 'Sentinel' sensor 'lidar' has no logical mapping in the configuration: expected a device with logical_name "Sentinel.lidar" or a [mapping.sensors.lidar] table; "dockhand.lidar" names another robot`],
    ]);
  });
});
