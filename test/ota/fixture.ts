import fs from 'node:fs';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

export const ADMIN = 'a1'.repeat(32);
export const OPERATOR = 'b2'.repeat(32);
export const DEVELOPER = 'c3'.repeat(32);

/** A program that deploys without any certify block (examples/orchard-rovers, expected READY). */
export const SOIL_PROGRAM = path.resolve(__dirname, '../../examples/orchard-rovers/programs/soil_station.sd');

/** Keys: operator (no Deploy) and developer (Deploy); `SVC_API_KEY` is the administrator. */
export function keysFile(): string {
  const dir = tempDir('svc-ota-keys-');
  const file = path.join(dir, 'keys.json');
  fs.writeFileSync(file, JSON.stringify([
    { key_id: 'op', token: OPERATOR, role: 'operator' },
    { key_id: 'dev', token: DEVELOPER, role: 'developer' },
  ]));
  return file;
}

export function post(body: unknown, key?: string): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

export const bearer = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });

export async function otaAgent(opts: { env?: Record<string, string>; programPath?: string | null; configPath?: string | null; stateDir?: string; grpc?: boolean } = {}): Promise<RunningAgent> {
  return startAgent({
    env: { SVC_API_KEY: ADMIN, SVC_API_KEYS_FILE: keysFile(), ...(opts.env ?? {}) },
    programPath: opts.programPath ?? null,
    configPath: opts.configPath ?? null,
    ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
    ...(opts.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
  });
}
