import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeDevicesToFragments } from '../../agent/config-control/publish.js';
import { snapshotDevice } from '../../agent/config-control/snapshot-model.js';
import { fromConfig } from '../../agent/devices/device-registry.js';
import { normalizeDevice } from '../../agent/project/devices.js';
import { tempDir } from '../helpers/agent-harness.js';

/** The publish's write rule on its own (docs/operations.md § Publishing): only the snapshot's decisions. */
describe('writeDevicesToFragments', () => {
  const text = `# field devices
[[devices]]
id = "probe"
type = "environment_sensor"
robot_id = "R1"
health_status = "degraded"     # stated by hand
calibration_status = "due"
`;
  const declared = normalizeDevice({ id: 'probe', type: 'environment_sensor', robot_id: 'R1', health_status: 'degraded', calibration_status: 'due' }, 'devices');

  it('leaves a declaration whose values the pool only implies byte for byte, keys the pool does not keep included', () => {
    const file = path.join(tempDir('svc-publish-'), 'svc.devices.toml');
    fs.writeFileSync(file, text);
    const device = snapshotDevice(fromConfig(declared, 1));
    const r = writeDevicesToFragments({ declarations: [file], appendTargets: [file] }, [device], [declared]);
    expect(r).toEqual({ devices_persisted: 1, devices_failed: [], files_written: [] });
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('writes a decision the declaration does not imply on its own line, keeping the comments', () => {
    const file = path.join(tempDir('svc-publish-'), 'svc.devices.toml');
    fs.writeFileSync(file, text);
    const device = { ...snapshotDevice(fromConfig(declared, 1)), lifecycle_state: 'quarantined' as const, trust_level: 'untrusted' };
    const r = writeDevicesToFragments({ declarations: [file], appendTargets: [file] }, [device], [declared]);
    expect(r.files_written).toEqual([file]);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${text.trimEnd()}\nlifecycle_state = "quarantined"\ntrust_level = "untrusted"\n`);
  });
});
