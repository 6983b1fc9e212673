import fs from 'node:fs';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { writeProject } from '../helpers/project-fixture.js';

export const ADMIN = 'o1'.repeat(32);
export const json = { 'content-type': 'application/json' };
export const auth = (t: string) => ({ Authorization: `Bearer ${t}`, ...json });

/**
 * A project with robot `Rover` (program: mission `patrol`), two cameras (`cam-1` serves Rover and is
 * active, `cam-2` is unassigned and verified) and two approval seeds in a configuration fragment:
 * `survey` awaiting approval and `inspect` already approved.
 */
export function operatorProject(): { configPath: string; programPath: string } {
  const configPath = writeProject({
    'svc.toml': `
[project]
name = "Operator Test"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
mission = "svc.mission.toml"
`,
    'svc.devices.toml': `
[[devices]]
id = "cam-1"
type = "camera"
robot_id = "Rover"
[[devices]]
id = "cam-2"
type = "camera"
`,
    'svc.mission.toml': `
[[mission_approvals]]
id = "appr-survey"
mission_id = "survey"
requested_by = "planner"
requires_capability = "gps_navigation"
[[mission_approvals]]
id = "appr-inspect"
mission_id = "inspect"
status = "approved"
`,
    'programs/rover.sd': `
robot Rover {
    sensor lidar: Lidar;
    actuator wheels: DifferentialDrive;
    mission patrol {
        duration: 1 h;
        leave_dock; sweep; return_to_dock;
    }
}
`,
  });
  return { configPath, programPath: path.join(path.dirname(configPath), 'programs', 'rover.sd') };
}

export interface OperatorAgent extends RunningAgent {
  keys: { operator: string; developer: string; supervisor: string; auditor: string };
  keyIds: { operator: string; developer: string; supervisor: string; auditor: string };
  project: { configPath: string; programPath: string };
}

/** A real agent on the project; `stateDir` reuses a state directory (a restart). */
export async function operatorAgent(project = operatorProject(), stateDir = tempDir('svc-op-state-'), grpc = false): Promise<OperatorAgent> {
  const a = await startAgent({ stateDir, configPath: project.configPath, programPath: project.programPath, env: { SVC_API_KEY: ADMIN }, ...(grpc ? { grpcBind: '127.0.0.1:0' } : {}) });
  const keys: Record<string, string> = {};
  const keyIds: Record<string, string> = {};
  for (const role of ['operator', 'developer', 'supervisor', 'auditor']) {
    const r = await a.json('/v1/admin/api-keys', { method: 'POST', headers: auth(ADMIN), body: JSON.stringify({ role, label: role }) });
    if (r.status !== 200) throw new Error(`key creation failed: ${JSON.stringify(r.body)}`);
    keys[role] = r.body.token as string;
    keyIds[role] = r.body.key_id as string;
  }
  return Object.assign(a, { keys: keys as OperatorAgent['keys'], keyIds: keyIds as OperatorAgent['keyIds'], project });
}

export const post = (a: RunningAgent, p: string, token: string | null, body: unknown = {}) =>
  a.json(p, { method: 'POST', headers: token ? auth(token) : json, body: typeof body === 'string' ? body : JSON.stringify(body) });

export const get = (a: RunningAgent, p: string, token: string = ADMIN) => a.json(p, { headers: auth(token) });

/** Audit chain records of one event type, payload parsed. */
export function audited(a: RunningAgent, type: string): Array<Record<string, any>> {
  return [...a.agent.services.audit.chain.records()].filter((r) => r.event_type === type).map((r) => JSON.parse(r.payload));
}

export function writeFleetAgents(stateDir: string, agents: unknown[]): void {
  fs.writeFileSync(path.join(stateDir, 'fleet-agents.json'), JSON.stringify({ agents }));
}
