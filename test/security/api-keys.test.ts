import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken } from '../../agent/security/token-hash.js';
import { pepperId } from '../../agent/security/api-keys.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { REPO_ROOT, SVC_BIN } from '../helpers/spawn-agent.js';

const ADMIN = 'a1'.repeat(32);
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
async function agent(env: Record<string, string>, stateDir?: string) {
  const a = await startAgent({ env, ...(stateDir ? { stateDir } : {}) });
  running.push(a);
  return a;
}

describe('API keys', () => {
  it('admin create returns the token once, stores only its HMAC, and the key survives a restart (docs/wire-decisions.md D11)', async () => {
    const stateDir = tempDir();
    const env = { SVC_API_KEY: ADMIN, SVC_API_KEY_PEPPER: 'pepper-1' };
    const a = await agent(env, stateDir);
    const created = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ role: 'operator', label: 'line 3' }) });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ ok: true, role: 'operator', label: 'line 3', tenant_id: 'default' });
    expect(created.body.token).toMatch(/^[0-9a-f]{64}$/);
    expect(created.body.key_id).toMatch(/^key-\d+/);
    const token: string = created.body.token;
    await a.agent.services.credentials.keys.flush();

    const file = fs.readFileSync(path.join(stateDir, 'api-keys.json'), 'utf8');
    expect(file).not.toContain(token);
    expect(JSON.parse(file)).toEqual([
      // pepper_id names the pepper the hash was made with (docs/security.md §2), never the pepper itself.
      { key_id: created.body.key_id, token_hash: hashToken('pepper-1', token), role: 'operator', label: 'line 3', tenant_id: 'default', pepper_id: pepperId('pepper-1') },
    ]);
    const listed = await a.json('/v1/admin/api-keys', { headers: bearer(ADMIN) });
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(listed.body.keys.map((k: { key_id: string; source: string }) => [k.key_id, k.source])).toEqual([
      ['env-default', 'env'],
      [created.body.key_id, 'file'],
    ]);
    await a.close();
    running = [];

    const b = await agent(env, stateDir);
    const me = await b.json('/v1/rbac/me', { headers: bearer(token) });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ key_id: created.body.key_id, role: 'operator', auth_kind: 'api_key', user_id: null, permissions: ['Operate', 'Shutdown', 'Recover'] });
    expect((await b.json('/v1/instance')).body.api_keys_loaded).toBe(2);
  });

  it('patch changes the role; delete revokes; the env key cannot be changed; unknown ids are 404', async () => {
    const a = await agent({ SVC_API_KEY: ADMIN });
    const { body } = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: '{"role":"auditor"}' });
    expect((await a.json('/v1/alerts/test', { method: 'POST', headers: bearer(body.token) })).status).toBe(403);
    const patched = await a.json(`/v1/admin/api-keys/${body.key_id}`, { method: 'PATCH', headers: bearer(ADMIN), body: '{"role":"operator"}' });
    expect(patched.body).toMatchObject({ ok: true, key_id: body.key_id, role: 'operator' });
    expect((await a.json('/v1/alerts/test', { method: 'POST', headers: bearer(body.token) })).status).toBe(200);
    expect((await a.json(`/v1/admin/api-keys/${body.key_id}`, { method: 'PATCH', headers: bearer(ADMIN), body: '{"role":"guest"}' })).status).toBe(400);
    const revoked = await a.json(`/v1/admin/api-keys/${body.key_id}`, { method: 'DELETE', headers: bearer(ADMIN) });
    expect(revoked.body).toEqual({ version: 'v1', ok: true, revoked: body.key_id });
    expect((await a.json('/v1/rbac/me', { headers: bearer(body.token) })).status).toBe(401);
    expect((await a.json('/v1/admin/api-keys/env-default', { method: 'DELETE', headers: bearer(ADMIN) })).status).toBe(400);
    const unknown = await a.json('/v1/admin/api-keys/key-404', { method: 'DELETE', headers: bearer(ADMIN) });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
  });

  it('refuses guest or unknown roles at creation with the reference message', async () => {
    const a = await agent({ SVC_API_KEY: ADMIN });
    for (const role of ['guest', 'wizard', '']) {
      const r = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: JSON.stringify({ role }) });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('role must be administrator, supervisor, developer, operator, safety_officer, or auditor');
    }
  });

  it('admin routes: 401 anonymous, 403 for any non-administrator (docs/wire-decisions.md D1)', async () => {
    const a = await agent({ SVC_API_KEY: ADMIN });
    const { body } = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: '{"role":"supervisor"}' });
    expect((await a.json('/v1/admin/api-keys')).status).toBe(401);
    const r = await a.json('/v1/admin/api-keys', { headers: bearer(body.token) });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ ok: false, error: 'forbidden', code: 'forbidden' });
    expect((await a.json('/v1/admin/users', { headers: bearer(body.token) })).status).toBe(403);
  });

  it('migrates a legacy plaintext keys file on load and rewrites it hash-only', async () => {
    const stateDir = tempDir();
    const keysFile = path.join(stateDir, 'legacy-keys.json');
    fs.writeFileSync(keysFile, JSON.stringify([{ key_id: 'legacy-1', token: 'plain-secret-token', role: 'Operator', label: 'old' }]));
    const a = await agent({ SVC_API_KEYS_FILE: keysFile, SVC_API_KEY: ADMIN }, stateDir);
    const rewritten = fs.readFileSync(keysFile, 'utf8');
    expect(rewritten).not.toContain('plain-secret-token');
    // Hashed with the pepper generated into secrets.json, not with the state directory's value.
    const pepper = JSON.parse(fs.readFileSync(path.join(stateDir, 'secrets.json'), 'utf8')).api_key_pepper as string;
    expect(JSON.parse(rewritten)[0]).toMatchObject({ key_id: 'legacy-1', token_hash: hashToken(pepper, 'plain-secret-token'), role: 'operator', pepper_id: pepperId(pepper) });
    const me = await a.json('/v1/rbac/me', { headers: bearer('plain-secret-token') });
    expect(me.body).toMatchObject({ key_id: 'legacy-1', role: 'operator' });
    // env key + file key (docs/security.md §2)
    expect((await a.json('/v1/instance')).body.api_keys_loaded).toBe(2);
  });

  it('changing the pepper invalidates stored hashes', async () => {
    const stateDir = tempDir();
    const a = await agent({ SVC_API_KEY: ADMIN, SVC_API_KEY_PEPPER: 'one' }, stateDir);
    const { body } = await a.json('/v1/admin/api-keys', { method: 'POST', headers: bearer(ADMIN), body: '{"role":"operator"}' });
    await a.close();
    running = [];
    const b = await agent({ SVC_API_KEY_PEPPER: 'two' }, stateDir);
    expect((await b.json('/v1/rbac/me', { headers: bearer(body.token) })).status).toBe(401);
  });

  it('svc control-center api-key generate prints a 64-hex key, or one export line', () => {
    const plain = spawnSync(process.execPath, [SVC_BIN, 'control-center', 'api-key', 'generate'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(plain.status).toBe(0);
    expect(plain.stdout.split('\n')[0]).toMatch(/^[0-9a-f]{64}$/);
    const exp = spawnSync(process.execPath, [SVC_BIN, 'control-center', 'api-key', 'generate', '--export'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(exp.stdout).toMatch(/^export SVC_API_KEY=[0-9a-f]{64}\n$/);
    const again = spawnSync(process.execPath, [SVC_BIN, 'control-center', 'api-key', 'generate', '--export'], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(again.stdout).not.toBe(exp.stdout);
  });

  it('warns at start when no key is configured', async () => {
    const lines: string[] = [];
    const { Agent } = await import('../../agent/runtime/agent.js');
    const a = await Agent.create({ env: { SVC_CONTROL_CENTER_STATE_DIR: tempDir() }, bind: '127.0.0.1:0', log: (l) => lines.push(l) });
    await a.listen();
    await a.close();
    expect(lines.some((l) => l.includes('no API key is configured'))).toBe(true);
  });
});
