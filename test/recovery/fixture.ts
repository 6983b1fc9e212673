import fs from 'node:fs';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

export const OPERATOR_KEY = 'op-key-0123456789abcdef';
export const DEVELOPER_KEY = 'dev-key-0123456789abcdef';

/** A small project: fleet robots robot-1 and robot-2, a configured GPS `yard-gps` (no live link), a `[recovery]` fragment, and a program with robot Rover and mission patrol. */
export function recoveryProject(options: { recoveryToml?: string; withProgram?: boolean } = {}): { root: string; config: string; program: string; keys: string } {
  const root = tempDir('svc-recovery-');
  const files: Record<string, string> = {
    'svc.toml': `
[project]
name = "Recovery Test"
version = "1.0.0"
[config]
fleet = "svc.fleet.toml"
devices = "svc.devices.toml"
recovery = "svc.recovery.toml"
`,
    'svc.fleet.toml': `
[fleet]
id = "yard"
[[fleet.robots]]
id = "robot-1"
hardware_profile = "RoverV2"
[[fleet.robots]]
id = "robot-2"
hardware_profile = "RoverV2"
`,
    'svc.devices.toml': `
[[devices]]
id = "yard-gps"
type = "gps"
robot_id = "robot-1"
port = "/dev/ttyRECOVERY0"
`,
    'svc.recovery.toml': options.recoveryToml ?? '[recovery]\n',
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
  };
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), content);
  }
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
      { key_id: 'dev', token: DEVELOPER_KEY, role: 'developer' },
    ]),
  );
  return { root, config: path.join(root, 'svc.toml'), program: path.join(root, 'programs', 'rover.sd'), keys };
}

export async function startRecoveryAgent(p: ReturnType<typeof recoveryProject>, extra: { stateDir?: string; program?: boolean; grpc?: boolean } = {}): Promise<RunningAgent> {
  return startAgent({
    configPath: p.config,
    programPath: extra.program === false ? null : p.program,
    env: { SVC_API_KEYS_FILE: p.keys },
    ...(extra.stateDir ? { stateDir: extra.stateDir } : {}),
    ...(extra.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
  });
}

export const post = (body: unknown, key?: string): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
