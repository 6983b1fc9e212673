import fs from 'node:fs';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { writeProject } from '../helpers/project-fixture.js';

export const ADMIN = 'd1'.repeat(32);
export const json = { 'content-type': 'application/json' };
export const auth = (t: string) => ({ Authorization: `Bearer ${t}`, ...json });

export const PROGRAM = `
robot Rover {
    sensor lidar: Lidar;
    actuator wheels: DifferentialDrive;
    secret api_token from env("API_TOKEN");
    secret cert_key from file "keys/robot.key";
    secret inline_pw from "hunter2-literal-value";
    secret outside_key from file "../outside.key";
}
`;

export interface GateProjectOptions {
  /** `[governance]` body; null writes no svc.governance.toml. */
  governance?: string | null;
  /** Extra keys of the Rover robot table (e.g. `governance = {…}`, `capabilities = […]`). */
  robot?: string;
  /** Devices body; default: two devices that block (expired calibration, firmware below the floor). */
  devices?: string;
  program?: string | null;
  files?: Record<string, string>;
}

export const BLOCKED_DEVICES = `
[[devices]]
id = "lidar-1"
type = "lidar"
robot_id = "Rover"
trust_level = "trusted"
calibration_status = "expired"
[[devices]]
id = "imu-1"
type = "imu"
robot_id = "Rover"
trust_level = "verified"
firmware_version = "1.2.0"
min_firmware_version = "1.10"
[[devices]]
id = "gps-1"
type = "gps"
robot_id = "Rover"
trust_level = "trusted"
firmware_version = "2.0"
min_firmware_version = "1.9.9"
calibration_status = "valid"
`;

/** A one-robot project (robot `Rover`, fleet `gate-fleet`) with devices, packages and, optionally, governance. */
export function gateProject(o: GateProjectOptions = {}): { configPath: string; programPath: string | null } {
  const files: Record<string, string> = {
    'svc.toml': `
[project]
name = "Gate Test"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
fleet = "svc.fleet.toml"
providers = "svc.providers.toml"
`,
    'svc.fleet.toml': `
[fleet]
id = "gate-fleet"
[[fleet.robots]]
id = "Rover"
hardware_profile = "RoverV2"
${o.robot ?? ''}
`,
    'svc.devices.toml': o.devices ?? BLOCKED_DEVICES,
    'svc.providers.toml': `
[providers.ublox]
package = "gnss-driver"
[dependencies]
gnss-driver = "2.1.0"
vision = "^1.0"
`,
    ...(o.files ?? {}),
  };
  if (o.governance !== null && o.governance !== undefined) files['svc.governance.toml'] = `[governance]\n${o.governance}\n`;
  if (o.program !== null) files['programs/rover.sd'] = o.program ?? PROGRAM;
  const configPath = writeProject(files);
  return { configPath, programPath: o.program === null ? null : path.join(path.dirname(configPath), 'programs', 'rover.sd') };
}

export interface GateAgent extends RunningAgent {
  keys: { operator: string; developer: string; auditor: string };
}

/** A real agent; `project: null` runs without configuration and program. */
export async function gateAgent(
  project: { configPath: string; programPath: string | null } | null,
  opts: { stateDir?: string; env?: Record<string, string>; grpc?: boolean } = {},
): Promise<GateAgent> {
  const a = await startAgent({
    stateDir: opts.stateDir ?? tempDir('svc-gate-state-'),
    ...(project ? { configPath: project.configPath, ...(project.programPath ? { programPath: project.programPath } : {}) } : {}),
    env: { SVC_API_KEY: ADMIN, ...(opts.env ?? {}) },
    ...(opts.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
  });
  const keys: Record<string, string> = {};
  for (const role of ['operator', 'developer', 'auditor']) {
    const r = await a.json('/v1/admin/api-keys', { method: 'POST', headers: auth(ADMIN), body: JSON.stringify({ role, label: role }) });
    if (r.status !== 200) throw new Error(`key creation failed: ${JSON.stringify(r.body)}`);
    keys[role] = r.body.token as string;
  }
  return Object.assign(a, { keys: keys as GateAgent['keys'] });
}

export const post = (a: RunningAgent, p: string, token: string | null, body: unknown = {}) =>
  a.json(p, { method: 'POST', headers: token ? auth(token) : json, body: typeof body === 'string' ? body : JSON.stringify(body) });

export const get = (a: RunningAgent, p: string, token: string | null = null) => a.json(p, token ? { headers: auth(token) } : {});

export function writeFleetAgents(stateDir: string, agents: unknown[]): void {
  fs.writeFileSync(path.join(stateDir, 'fleet-agents.json'), JSON.stringify({ agents }));
}
