import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './agent-harness.js';

/** Writes a small project (root manifest + named files) into a fresh temp dir; returns the manifest path. */
export function writeProject(files: Record<string, string>): string {
  const root = tempDir('svc-project-');
  for (const [name, content] of Object.entries(files)) {
    const full = path.join(root, name);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, content);
  }
  return path.join(root, 'svc.toml');
}

/** A two-robot fleet with configured devices, a redundant GPS pair and a few packages. */
export function fleetProject(extraToml = ''): string {
  return writeProject({
    'svc.toml': `
[project]
name = "Pool Test"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
fleet = "svc.fleet.toml"
providers = "svc.providers.toml"
`,
    'svc.fleet.toml': `
[fleet]
id = "test-fleet"
[[fleet.robots]]
id = "rover-1"
hardware_profile = "RoverV2"
[fleet.robots.compute]
id = "rover-1-cpu"
type = "compute"
[[fleet.robots.compute.devices]]
id = "rover-1-lidar"
type = "lidar"
port = "/dev/ttyUSB9"
capabilities = ["ranging"]
[[fleet.robots]]
id = "rover-2"
hardware_profile = "RoverV2"
`,
    'svc.devices.toml': `
[[devices]]
id = "gps-a"
type = "gps"
robot_id = "rover-1"
redundant_group = "gps"
failover_priority = 1
provider = "ublox"
trust_level = "trusted"
[[devices]]
id = "gps-b"
type = "gps"
robot_id = "rover-1"
redundant_group = "gps"
failover_priority = 2
provider = "ublox"
[[devices]]
id = "spare-imu"
type = "imu"
protocol = "serial"
port = "/dev/ttyUSB7"
${extraToml}
`,
    'svc.providers.toml': `
[providers.ublox]
package = "gnss-driver"
[dependencies]
gnss-driver = "2.1.0"
vision = "^1.0"
`,
  });
}
