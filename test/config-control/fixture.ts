import fs from 'node:fs';
import { afterEach } from 'vitest';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { writeProject } from '../helpers/project-fixture.js';

export const ADMIN = 'c9'.repeat(32);
export const json = { 'content-type': 'application/json' };
export const auth = (t: string) => ({ Authorization: `Bearer ${t}`, ...json });

export interface ConfigProject {
  configPath: string;
  programPath: string;
  root: string;
}

/**
 * A project with robot `Rover` (fleet `orchard`, hardware `RoverV2`), two cameras in the `devices`
 * fragment (`cam-1` serves Rover, `cam-2` is unassigned and has no trust level), packages and an
 * assurance policy. The program deploys Rover to RoverV2.
 */
export function configProject(): ConfigProject {
  const configPath = writeProject({
    'svc.toml': `
[project]
name = "Config Control Test"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
fleet = "svc.fleet.toml"
assurance = "svc.assurance.toml"
`,
    'svc.fleet.toml': `
[fleet]
id = "orchard"
[[fleet.robots]]
id = "Rover"
hardware_profile = "RoverV2"
[dependencies]
nav-stack = "1.2.0"
[mapping.actuators.wheels]
device = "drive-ctl"
emergency_stop = true
`,
    'svc.devices.toml': `# Cameras of the orchard rover.
[[devices]]
id = "cam-1"
type = "camera"
robot_id = "Rover"
logical_name = "front_camera"
firmware_version = "1.4.0"
trust_level = "verified"

[[devices]]
id = "cam-2"
type = "camera"
`,
    'svc.assurance.toml': `
[assurance]
minimum_score = 70
`,
    'programs/rover.sd': `
robot Rover {
    sensor front_camera: Camera;
    actuator wheels: DifferentialDrive;
    mission patrol {
        duration: 1 h;
        leave_dock; sweep; return_to_dock;
    }
}
deploy Rover to RoverV2;
`,
  });
  const root = path.dirname(configPath);
  return { configPath, programPath: path.join(root, 'programs', 'rover.sd'), root };
}

export type Role = 'developer' | 'supervisor' | 'safety_officer' | 'operator' | 'auditor';

export interface ConfigAgent extends RunningAgent {
  keys: Record<Role | 'supervisor2', string>;
  keyIds: Record<Role | 'supervisor2', string>;
  project: ConfigProject;
}

/** A real agent on the project (`withProgram` adds `--program`); `stateDir` reuses a state directory (a restart). */
export async function configAgent(
  options: { project?: ConfigProject | null; withProgram?: boolean; stateDir?: string; env?: Record<string, string>; grpc?: boolean; keys?: ConfigAgent['keys'] } = {},
): Promise<ConfigAgent> {
  const project = options.project === undefined ? configProject() : options.project;
  const stateDir = options.stateDir ?? tempDir('svc-cc-state-');
  const a = await startAgent({
    stateDir,
    ...(project ? { configPath: project.configPath } : {}),
    ...(project && options.withProgram ? { programPath: project.programPath } : {}),
    env: { SVC_API_KEY: ADMIN, ...(options.env ?? {}) },
    ...(options.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
  });
  let keys = options.keys;
  let keyIds: Record<string, string> = {};
  if (!keys) {
    const k: Record<string, string> = {};
    for (const [name, role] of [
      ['developer', 'developer'],
      ['supervisor', 'supervisor'],
      ['supervisor2', 'supervisor'],
      ['safety_officer', 'safety_officer'],
      ['operator', 'operator'],
      ['auditor', 'auditor'],
    ] as const) {
      const r = await a.json('/v1/admin/api-keys', { method: 'POST', headers: auth(ADMIN), body: JSON.stringify({ role, label: name }) });
      if (r.status !== 200) throw new Error(`key creation failed: ${JSON.stringify(r.body)}`);
      k[name] = r.body.token as string;
      keyIds[name] = r.body.key_id as string;
    }
    keys = k as ConfigAgent['keys'];
  } else {
    const r = await a.json('/v1/admin/api-keys', { headers: auth(ADMIN) });
    keyIds = Object.fromEntries((r.body.keys as Array<{ label: string; key_id: string }>).map((x) => [x.label, x.key_id]));
  }
  return Object.assign(a, { keys, keyIds: keyIds as ConfigAgent['keyIds'], project: project as ConfigProject });
}

export const post = (a: RunningAgent, p: string, token: string | null, body: unknown = {}) =>
  a.json(p, { method: 'POST', headers: token ? auth(token) : json, body: typeof body === 'string' ? body : JSON.stringify(body) });

export const get = (a: RunningAgent, p: string, token: string | null = ADMIN) => a.json(p, token ? { headers: auth(token) } : {});

export function snapshotFiles(a: RunningAgent): string[] {
  const dir = path.join(a.stateDir, 'config-snapshots');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/**
 * The agents a test file starts with `agent(…)`, all closed after each test; `stop(a)` closes one
 * early (before a restart on the same state directory).
 */
export function agentsClosedAfterEach() {
  let running: ConfigAgent[] = [];
  afterEach(async () => {
    await Promise.all(running.map((a) => a.close()));
    running = [];
  });
  return {
    async agent(...args: Parameters<typeof configAgent>): Promise<ConfigAgent> {
      const a = await configAgent(...args);
      running.push(a);
      return a;
    },
    async stop(a: ConfigAgent): Promise<void> {
      running = running.filter((x) => x !== a);
      await a.close();
    },
  };
}
