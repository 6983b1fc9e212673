import fs from 'node:fs';
import path from 'node:path';
import { writeProject } from '../helpers/project-fixture.js';

export const OPERATOR_KEY = 'sre-op-key-0123456789abcdef';
export const GUEST_KEY = 'sre-guest-key-0123456789abc';

/** A project with three devices on robot rover-1: `lidar-1` is failed, the others in service; a program `rover.sd`; an operator and a guest key. */
export function sreProject(options: { failed?: boolean } = {}): { config: string; program: string; keys: string; root: string } {
  const config = writeProject({
    'svc.toml': `
[project]
name = "SRE Test"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
fleet = "svc.fleet.toml"
`,
    'svc.fleet.toml': `
[fleet]
id = "sre-fleet"
[[fleet.robots]]
id = "rover-1"
hardware_profile = "RoverV2"
`,
    'svc.devices.toml': `
[[devices]]
id = "gps-1"
type = "gps"
robot_id = "rover-1"
[[devices]]
id = "imu-1"
type = "imu"
robot_id = "rover-1"
[[devices]]
id = "lidar-1"
type = "lidar"
robot_id = "rover-1"
${options.failed === false ? '' : 'lifecycle_state = "failed"'}
`,
    'programs/rover.sd': `robot Rover {
    sensor gps: GPS;
    sensor lidar: Lidar;
    mission patrol {
        repeat 2 {
            scan lidar;
        }
    }
}
`,
  });
  const root = path.dirname(config);
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
      { key_id: 'guest', token: GUEST_KEY, role: 'guest' },
    ]),
  );
  return { config, program: path.join(root, 'programs', 'rover.sd'), keys, root };
}

export const bearer = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });
export const post = (key?: string, body: unknown = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  body: JSON.stringify(body),
});
