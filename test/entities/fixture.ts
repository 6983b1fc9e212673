import type { ProgramFacts } from '../../agent/entities/program-facts.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { writeProject } from '../helpers/project-fixture.js';

export const ADMIN = 'e1'.repeat(32);
export const json = { 'content-type': 'application/json' };
export const bearer = (t: string) => ({ Authorization: `Bearer ${t}`, ...json });

/**
 * A layered project: a base layer and an environment layer (which overrides and adds), and five
 * fragments (devices, facilities, providers, fleet, security).
 */
export function layeredProject(extraDevices = ''): string {
  return writeProject({
    'svc.toml': `
[project]
name = "Yard Inspection"
version = "0.3.0"
[merge]
humans = "append"
[extends]
base = "layers/base.toml"
environment = "layers/north.toml"
[config]
devices = "svc.devices.toml"
facilities = "svc.facilities.toml"
providers = "svc.providers.toml"
fleet = "svc.fleet.toml"
security = "svc.security.toml"
`,
    'layers/base.toml': `
[fleet]
id = "yard-fleet"
name = "Base fleet name"
[[humans]]
id = "ana"
name = "Ana Ruiz"
role = "operator"
team = "night-shift"
robots = ["insp-01"]
[dependencies]
gnss-driver = "2.0.0"
`,
    'layers/north.toml': `
[fleet]
name = "North yard fleet"
[[humans]]
id = "bo"
name = "Bo Lind"
role = "supervisor"
[dependencies]
gnss-driver = "2.1.0"
lidar-kit = "1.4.2"
[[entities]]
id = "wh-gateway"
kind = "gateway"
name = "Warehouse gateway"
tags = ["network"]
[[relationships]]
from_id = "yard-fleet"
to_id = "bo"
kind = "managed_by"
[[relationships]]
from_id = "insp-02"
to_id = "dock-9"
kind = "depends_on"
`,
    'svc.fleet.toml': `
[[fleet.robots]]
id = "insp-01"
hardware_profile = "RoverV2"
model = "Rover"
capabilities = ["navigation"]
zone = "north-yard:bay-1"
[fleet.robots.autonomy]
level = "conditional"
local_decision_authority = ["obstacle_avoidance"]
requires_central_approval = ["leave_geofence"]
[fleet.robots.compute]
id = "insp-01-cpu"
type = "jetson"
serial = "CPU-0001"
[[fleet.robots.compute.devices]]
id = "insp-01-lidar"
type = "lidar"
port = "/dev/ttyUSB3"
provider = "ouster"
capabilities = ["ranging"]
[[fleet.robots]]
id = "insp-02"
hardware_profile = "RoverV2"
`,
    'svc.devices.toml': `
[[devices]]
id = "gps-a"
type = "gps"
robot_id = "insp-01"
provider = "ublox"
trust_level = "trusted"
firmware_version = "1.2.0"
redundant_group = "gps"
failover_priority = 1
capabilities = ["positioning"]
labels = ["outdoor"]
tags = ["critical"]
[[devices]]
id = "gps-b"
type = "gps"
robot_id = "insp-01"
provider = "ublox"
firmware_version = "1.1.0"
redundant_group = "gps"
failover_priority = 2
capabilities = ["positioning"]
[[devices]]
id = "cam-gate"
type = "camera"
protocol = "rtsp"
ip = "10.0.0.40"
zone = "north-yard:gate"
capabilities = ["video"]
[[devices]]
id = "spare-imu"
type = "imu"
robot_id = "insp-02"
${extraDevices}
`,
    'svc.facilities.toml': `
[facilities.north-yard]
name = "North Yard"
location = "Dock road 4"
[[facilities.north-yard.zones]]
id = "north-yard:bay-1"
name = "Bay 1"
[[facilities.north-yard.zones.hazards]]
id = "hz-forklifts"
name = "Forklift lane"
severity = "high"
[[facilities.north-yard.zones]]
id = "north-yard:gate"
name = "Gate"
`,
    'svc.providers.toml': `
[providers.ublox]
package = "gnss-driver"
vendor = "u-blox"
[providers.ouster]
package = "lidar-kit"
`,
    'svc.security.toml': `
[security.devices.cam-gate]
identity = "spiffe://yard/cam-gate"
trusted = true
[security.devices.gps-a]
identity = "spiffe://yard/gps-a"
`,
  });
}

export interface EntityAgent extends RunningAgent {
  configPath: string;
}

/** What the program parser would report for the yard program (fed straight to the registry). */
export const YARD_PROGRAM: ProgramFacts = {
  file: 'yard.sd',
  robots: [
    {
      name: 'insp-01',
      sensors: [
        { name: 'front_cam', type: 'camera' },
        { name: 'bumper', type: 'contact' },
      ],
      actuators: [{ name: 'drive', type: 'motor' }],
      missions: [{ name: 'patrol' }],
    },
    { name: 'insp-02', sensors: [], actuators: [], missions: [{ name: null }] },
  ],
  missionPlans: [{ name: 'night-survey' }],
};

export async function entityAgent(
  options: { stateDir?: string; configPath?: string | null; env?: Record<string, string>; program?: ProgramFacts | null } = {},
): Promise<EntityAgent> {
  const configPath = options.configPath === undefined ? layeredProject() : options.configPath;
  const program = options.program ?? null;
  const a = await startAgent({
    stateDir: options.stateDir ?? tempDir(),
    configPath,
    env: { SVC_API_KEY: ADMIN, ...(options.env ?? {}) },
    programFacts: () => program,
  });
  return Object.assign(a, { configPath: configPath ?? '' });
}

export async function keyFor(a: RunningAgent, role: string): Promise<string> {
  const r = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ role }) });
  if (r.status !== 200) throw new Error(`key creation failed: ${JSON.stringify(r.body)}`);
  return r.body.token as string;
}

export const post = (a: RunningAgent, path: string, token: string | null, body: unknown = {}) =>
  a.json(path, { method: 'POST', headers: token ? bearer(token) : json, body: JSON.stringify(body) });

export const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id);
