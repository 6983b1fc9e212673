import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../agent/runtime/agent.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';

/**
 * Finding: with SVC_API_KEY_PEPPER and SVC_SESSION_JWT_SECRET unset, the session secret was the
 * state directory's path (or `.svc-control-center`), so anyone could sign an administrator session.
 * The agent now generates three separate random secrets into an owner-only secrets.json
 * (docs/security.md §2), migrates keys files hashed with the old default pepper, and program routes
 * no longer answer with the absolute state directory.
 */
const REPO = path.resolve(__dirname, '../..');
const ADMIN = 'admin-token-default-secrets-0123456789';
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const jsonPost = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
const now = () => Math.floor(Date.now() / 1000);
const hmac = (key: string, msg: string) => crypto.createHmac('sha256', key).update(msg, 'utf8').digest('hex');

let running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const a of running.reverse()) await a.close();
  running = [];
});

async function harness(env: Record<string, string>, stateDir: string): Promise<RunningAgent> {
  const a = await startAgent({ env, stateDir });
  running.push(a);
  return a;
}

/** An agent in the default layout: cwd = project root, state dir `<root>/.svc-control-center`, no state-dir variable. */
async function defaultLayout(root: string, env: Record<string, string> = {}) {
  const logs: string[] = [];
  const agent = await Agent.create({ cwd: root, configPath: path.join(root, 'svc.toml'), programPath: path.join(root, 'programs', 'patrol.sd'), env: { SVC_API_KEY: ADMIN, ...env }, bind: '127.0.0.1:0', log: (l) => logs.push(l) });
  const base = `http://${await agent.listen()}`;
  const handle = { close: () => agent.close() };
  running.push(handle);
  const json = async (p: string, init?: RequestInit) => {
    const res = await fetch(base + p, init);
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as any };
  };
  return { agent, json, logs, stateDir: agent.stateDir, close: async () => { running = running.filter((r) => r !== handle); await agent.close(); } };
}

function copyDemo(): string {
  const root = tempDir('svc-secrets-project-');
  fs.cpSync(path.join(REPO, 'demo'), root, { recursive: true });
  return root;
}

function readSecrets(stateDir: string) {
  const file = path.join(stateDir, 'secrets.json');
  return { file, mode: fs.statSync(file).mode & 0o777, body: JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string> };
}

async function forge(secret: string): Promise<string> {
  return new SignJWT({ key_id: 'session-root', role: 'administrator', tenant_id: 'default' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('root')
    .setIssuer('svc-control-center')
    .setIssuedAt(now())
    .setExpirationTime(now() + 600)
    .sign(new TextEncoder().encode(secret));
}

describe('generated secrets when none are configured', () => {
  it('writes three distinct random 256-bit secrets, owner-only, and a session signed with the state path is refused', async () => {
    const stateDir = tempDir('svc-state-');
    const a = await harness({ SVC_API_KEY: ADMIN }, stateDir);
    const s = readSecrets(stateDir);
    expect(s.mode).toBe(0o600);
    const values = [s.body['api_key_pepper'], s.body['session_jwt_secret'], s.body['audit_signing_key']];
    for (const v of values) {
      expect(v).toMatch(/^[0-9a-f]{64}$/);
      expect(v).not.toBe(stateDir);
      expect(v).not.toBe('.svc-control-center');
      expect(v).not.toBe(hmac(stateDir, 'svc audit chain signing key v1'));
      expect(v).not.toBe(crypto.createHash('sha256').update(stateDir).digest('hex'));
    }
    expect(new Set(values).size).toBe(3);
    // No temp files left beside it.
    expect(fs.readdirSync(stateDir).filter((f) => f.includes('secrets') && f !== 'secrets.json')).toEqual([]);

    // Another fresh state directory gets other secrets: nothing is derived from a constant.
    const other = tempDir('svc-state-');
    await harness({ SVC_API_KEY: ADMIN }, other);
    expect(readSecrets(other).body['session_jwt_secret']).not.toBe(s.body['session_jwt_secret']);

    // The attack: an HS256 administrator session signed with the state directory's value.
    for (const guess of [stateDir, '.svc-control-center']) {
      const forged = await forge(guess);
      const r = await a.json('/v1/admin/api-keys', { headers: bearer(forged) });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ ok: false, code: 'unauthorized' });
    }

    // The audit chain signs with its own key, not one derived from the session secret.
    expect((await a.json('/v1/alerts/test', jsonPost({}, bearer(ADMIN)))).status).toBe(200);
    const audit = await a.json('/v1/audit/mutations', { headers: bearer(ADMIN) });
    const signer = audit.body.audit.records.at(-1).signer_id as string;
    const fingerprint = (secret: string) =>
      'svc-control-center/' + crypto.createHash('sha256').update(crypto.createHmac('sha256', secret).update('svc audit chain signing key v1').digest()).digest('hex').slice(0, 16);
    expect(signer).toBe(fingerprint(s.body['audit_signing_key']!));
    expect(signer).not.toBe(fingerprint(s.body['session_jwt_secret']!));
    expect(signer).not.toBe(fingerprint(stateDir));
    // A non-administrator reader of the audit gets the file name, not the absolute state path.
    const dev = await a.json('/v1/admin/api-keys', jsonPost({ role: 'developer' }, bearer(ADMIN)));
    const devAudit = await a.json('/v1/audit/mutations', { headers: bearer(dev.body.token) });
    expect(devAudit.status).toBe(200);
    expect(devAudit.body.persist_path).toBe('control-center-audit-chain.jsonl');
    expect(JSON.stringify(devAudit.body)).not.toContain(stateDir);
    expect(audit.body.persist_path).toBe(path.join(stateDir, 'control-center-audit-chain.jsonl'));
  });

  it('the default layout refuses a session signed with the literal .svc-control-center', async () => {
    const root = copyDemo();
    const a = await defaultLayout(root);
    expect(a.stateDir).toBe(path.join(root, '.svc-control-center'));
    const r = await a.json('/v1/admin/api-keys', { headers: bearer(await forge('.svc-control-center')) });
    expect(r.status).toBe(401);
    expect(a.logs.join('\n')).not.toMatch(/guessable default/);
  });

  it('a restart reuses the secrets: an earlier session and a created key keep working', async () => {
    const stateDir = tempDir('svc-state-');
    const a = await harness({ SVC_API_KEY: ADMIN }, stateDir);
    const before = readSecrets(stateDir).body;
    const created = await a.json('/v1/admin/api-keys', jsonPost({ role: 'operator', label: 'kept' }, bearer(ADMIN)));
    expect(created.status).toBe(200);
    expect((await a.json('/v1/admin/users', jsonPost({ user_id: 'ada', display_name: 'Ada', role: 'supervisor' }, bearer(ADMIN)))).status).toBe(200);
    const { session_token } = await a.agent.services.credentials.sessions.issue('ada', 'supervisor');
    await a.close();
    running = running.filter((r) => r !== a);

    const b = await harness({ SVC_API_KEY: ADMIN }, stateDir);
    expect(readSecrets(stateDir).body).toEqual(before);
    const me = await b.json('/v1/rbac/me', { headers: bearer(session_token) });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user_id: 'ada', role: 'supervisor', auth_kind: 'session' });
    const key = await b.json('/v1/rbac/me', { headers: bearer(created.body.token) });
    expect(key.status).toBe(200);
    expect(key.body).toMatchObject({ key_id: created.body.key_id, role: 'operator' });
  });

  it('configured values win; the audit key is never the session secret', async () => {
    const stateDir = tempDir('svc-state-');
    const pepper = 'p'.repeat(48);
    const secret = 's'.repeat(48);
    const a = await harness({ SVC_API_KEY: ADMIN, SVC_API_KEY_PEPPER: pepper, SVC_SESSION_JWT_SECRET: secret }, stateDir);
    // The configured session secret signs sessions…
    expect((await a.json('/v1/admin/users', jsonPost({ user_id: 'root', display_name: 'Root', role: 'administrator' }, bearer(ADMIN)))).status).toBe(200);
    expect((await a.json('/v1/admin/api-keys', { headers: bearer(await forge(secret)) })).status).toBe(200);
    // …but the audit chain still gets its own generated key.
    const s = readSecrets(stateDir).body;
    expect(s['audit_signing_key']).toMatch(/^[0-9a-f]{64}$/);
    expect((await a.json('/v1/alerts/test', jsonPost({}, bearer(ADMIN)))).status).toBe(200);
    const created = await a.json('/v1/admin/api-keys', jsonPost({ role: 'auditor' }, bearer(ADMIN)));
    await a.agent.services.credentials.keys.flush();
    const stored = JSON.parse(fs.readFileSync(path.join(stateDir, 'api-keys.json'), 'utf8')) as Array<{ key_id: string; token_hash: string }>;
    expect(stored.find((r) => r.key_id === created.body.key_id)!.token_hash).toBe(hmac(pepper, created.body.token));
  });

  it('an unusable secrets file stops the start with a clear message instead of silently replacing the secrets', async () => {
    const stateDir = tempDir('svc-state-');
    fs.writeFileSync(path.join(stateDir, 'secrets.json'), '{"api_key_pepper": "short"}', { mode: 0o600 });
    await expect(startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } })).rejects.toThrow(/api_key_pepper must be 64/);
  });
});

describe('keys file migration from the old default pepper', () => {
  it('a record hashed with the state-dir value still authenticates once, is re-hashed and persisted, and survives a restart', async () => {
    const stateDir = tempDir('svc-state-');
    const token = 'legacy-operator-token-0123456789abcdef';
    const legacyHash = hmac(stateDir, token); // the specification's fallback: the value of SVC_CONTROL_CENTER_STATE_DIR
    const keysFile = path.join(stateDir, 'api-keys.json');
    fs.writeFileSync(keysFile, JSON.stringify([{ key_id: 'key-legacy', token_hash: legacyHash, role: 'operator', label: 'old', tenant_id: 'default' }]));

    const a = await harness({ SVC_API_KEY: ADMIN }, stateDir);
    const me = await a.json('/v1/rbac/me', { headers: bearer(token) });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ key_id: 'key-legacy', role: 'operator' });
    await a.close();
    running = running.filter((r) => r !== a);

    const pepper = readSecrets(stateDir).body['api_key_pepper']!;
    const rewritten = JSON.parse(fs.readFileSync(keysFile, 'utf8')) as Array<Record<string, string>>;
    expect(rewritten).toHaveLength(1);
    expect(rewritten[0]!['token_hash']).toBe(hmac(pepper, token));
    expect(rewritten[0]!['token_hash']).not.toBe(legacyHash);
    expect(rewritten[0]!['pepper_id']).toMatch(/^[0-9a-f]{16}$/);

    const b = await harness({ SVC_API_KEY: ADMIN }, stateDir);
    expect((await b.json('/v1/rbac/me', { headers: bearer(token) })).status).toBe(200);
  });

  it('the legacy pepper is tried only for unmarked records: a marked record with a legacy hash never verifies', async () => {
    const stateDir = tempDir('svc-state-');
    const token = 'planted-token-0123456789abcdef0123';
    const keysFile = path.join(stateDir, 'api-keys.json');
    // Someone who knows the guessable pepper plants a record that claims to be current.
    fs.writeFileSync(keysFile, JSON.stringify([{ key_id: 'key-planted', token_hash: hmac(stateDir, token), role: 'administrator', label: '', tenant_id: 'default', pepper_id: '0123456789abcdef' }]));
    const a = await harness({ SVC_API_KEY: ADMIN }, stateDir);
    expect((await a.json('/v1/admin/api-keys', { headers: bearer(token) })).status).toBe(401);
  });

  it('the default layout migrates records hashed with the literal .svc-control-center', async () => {
    const root = copyDemo();
    const token = 'legacy-default-layout-token-0123456789';
    fs.mkdirSync(path.join(root, '.svc-control-center'), { recursive: true });
    fs.writeFileSync(path.join(root, '.svc-control-center', 'api-keys.json'), JSON.stringify([{ key_id: 'key-old', token_hash: hmac('.svc-control-center', token), role: 'auditor', label: '', tenant_id: 'default' }]));
    const a = await defaultLayout(root);
    expect(a.logs.some((l) => l.includes('hashed with the old default pepper'))).toBe(true);
    const me = await a.json('/v1/rbac/me', { headers: bearer(token) });
    expect(me.status).toBe(200);
    expect(me.body.key_id).toBe('key-old');
  });
});

describe('program routes do not disclose the state directory', () => {
  it('assure, heal, trust and explain answer without the absolute state directory', async () => {
    const root = copyDemo();
    const a = await defaultLayout(root);
    const state = a.stateDir;
    const calls: Array<[string, RequestInit | undefined]> = [
      ['/v1/programs/assure', jsonPost({ file: 'programs/patrol.sd' })],
      ['/v1/programs/recovery/heal', jsonPost({ file: 'programs/patrol.sd' })],
      ['/v1/programs/explain', jsonPost({ file: 'programs/patrol.sd' })],
      ['/v1/trust/program?file=programs/patrol.sd', undefined],
      ['/v1/programs/readiness', jsonPost({})],
    ];
    for (const [p, init] of calls) {
      const r = await a.json(p, init);
      expect(r.status, p).toBe(200);
      expect(r.text, p).not.toContain(state);
    }
    // The knowledge store is still named, relative to the project root.
    const heal = await a.json('/v1/programs/recovery/heal', jsonPost({ file: 'programs/patrol.sd' }));
    expect(heal.text).toContain('.svc-control-center/recovery_knowledge.json');
  });
});
