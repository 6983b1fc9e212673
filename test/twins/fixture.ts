import fs from 'node:fs';
import path from 'node:path';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

const REPO = path.resolve(__dirname, '../..');

export const OPERATOR = 'twin-op-key-0123456789abcdef';
export const AUDITOR = 'twin-aud-key-0123456789abcdef';
export const SUPERVISOR = 'twin-sup-key-0123456789abcdef';
/** An operator key of tenant `acme`: every route answers it 403 `tenant_mismatch` on a `default` instance. */
export const FOREIGN_OPERATOR = 'twin-acme-op-key-0123456789ab';
/** An operator of tenant `acme`, for an agent started as tenant `acme`. */
export const ACME_OPERATOR = 'twin-acme-op2-key-0123456789a';

/**
 * The bundled demo project (robot Sentinel, program `programs/patrol.sd`) in a temp dir, plus an HRI
 * fragment (`[[spatial_sessions]]`, hazard zones, a field technician with a location) and a keys file
 * with keys of two tenants.
 */
export function twinProject(): { root: string; config: string; program: string; keys: string } {
  const root = tempDir('svc-twins-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  fs.appendFileSync(
    path.join(root, 'svc.mission.toml'),
    `
[[spatial_sessions]]
id = "cfg-1"
type = "remote_expert"
field_human_id = "field-ana"
expert_human_id = "op-priya"
robot_id = "Sentinel"
ar_device_id = "ar-1"
camera_device_id = "cam-9"
capabilities = ["annotate", "video"]

[[hazard_zones]]
id = "dock-edge"
type = "drop"
severity = "high"
center = { x = 4.0, y = 2.5 }
radius_m = 1.5
linked_robots = ["Sentinel"]
alert_on_entry = true
description = "loading dock edge"

[[humans]]
id = "field-ana"
name = "Ana Field"
role = "technician"
availability = "on_shift"
location = "building-c/dock"
[humans.assignments]
robot_id = "Sentinel"
mission_id = "Patrol"
`,
  );
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'op', token: OPERATOR, role: 'operator' },
      { key_id: 'aud', token: AUDITOR, role: 'auditor' },
      { key_id: 'sup', token: SUPERVISOR, role: 'supervisor' },
      { key_id: 'acme-op', token: FOREIGN_OPERATOR, role: 'operator', tenant_id: 'acme' },
      { key_id: 'acme-op2', token: ACME_OPERATOR, role: 'operator', tenant_id: 'acme' },
    ]),
  );
  return { root, config: path.join(root, 'svc.toml'), program: path.join(root, 'programs', 'patrol.sd'), keys };
}

export function startTwinAgent(
  p: ReturnType<typeof twinProject>,
  options: { stateDir?: string; tenant?: string; grpc?: boolean; noConfig?: boolean } = {},
): Promise<RunningAgent> {
  return startAgent({
    ...(options.noConfig ? {} : { configPath: p.config }),
    programPath: p.program,
    ...(options.stateDir ? { stateDir: options.stateDir } : {}),
    ...(options.grpc ? { grpcBind: '127.0.0.1:0' } : {}),
    env: {
      SVC_API_KEYS_FILE: p.keys,
      SVC_SRE_SAMPLE_INTERVAL_SECS: '0',
      ...(options.tenant ? { SVC_TENANT_ID: options.tenant } : {}),
    },
  });
}

export const bearer = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });
export const post = (key?: string, body: unknown = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
