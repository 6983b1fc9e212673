import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { ROLES } from '../../agent/security/rbac.js';
import { SessionTokens } from '../../agent/security/sessions.js';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

const SECRET = 'session-secret-for-tests';
let running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.map((a) => a.close()));
  running = [];
});
/** Sessions follow the directory (docs/security.md §3): the users these tests sign for exist in it. */
const DIRECTORY: Array<[string, string]> = [
  ...ROLES.filter((r) => r !== 'guest').map((r): [string, string] => [`user-${r}`, r]),
  ['sam', 'safety_officer'],
  ['late', 'operator'],
  ['bob', 'supervisor'],
];
async function agent(env: Record<string, string> = {}) {
  const a = await startAgent({ env: { SVC_SESSION_JWT_SECRET: SECRET, ...env } });
  running.push(a);
  for (const [user_id, role] of DIRECTORY) a.agent.services.users.create({ user_id, display_name: user_id, role });
  return a;
}
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });
const sign = (claims: Record<string, unknown>, secret = SECRET, alg = 'HS256') =>
  new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
const now = () => Math.floor(Date.now() / 1000);

describe('session tokens', () => {
  it('every role round-trips through a session, safety_officer included (docs/wire-decisions.md D8)', async () => {
    const a = await agent();
    // guest cannot be a directory user, so no live session carries it.
    for (const role of ROLES.filter((r) => r !== 'guest')) {
      const { session_token } = await a.agent.services.credentials.sessions.issue(`user-${role}`, role);
      const me = await a.json('/v1/rbac/me', { headers: bearer(session_token) });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ role, auth_kind: 'session', user_id: `user-${role}`, key_id: `session-user-${role}`, tenant_id: 'default' });
      const session = await a.json('/v1/auth/session', { headers: bearer(session_token) });
      expect(session.body).toMatchObject({ role, auth_kind: 'session', user_id: `user-${role}` });
    }
  });

  it('issues the spec claims with the configured issuer and lifetime', async () => {
    const a = await agent({ SVC_SESSION_JWT_ISSUER: 'acme-cc', SVC_SESSION_TTL_SECS: '120', SVC_TENANT_ID: 'acme' });
    const { session_token, expires_in_secs } = await a.agent.services.credentials.sessions.issue('alice', 'operator');
    expect(expires_in_secs).toBe(120);
    const [h, p] = session_token.split('.').slice(0, 2).map((x) => JSON.parse(Buffer.from(x!, 'base64url').toString()));
    expect(h).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(p).toMatchObject({ sub: 'alice', key_id: 'session-alice', role: 'operator', tenant_id: 'acme', iss: 'acme-cc' });
    expect(p.exp - p.iat).toBe(120);
  });

  it('accepts the legacy safetyofficer spelling in a claim', async () => {
    const a = await agent();
    const t = await sign({ sub: 'sam', role: 'SafetyOfficer', tenant_id: 'default', iss: 'svc-control-center', iat: now(), exp: now() + 60 });
    expect((await a.json('/v1/rbac/me', { headers: bearer(t) })).body.role).toBe('safety_officer');
  });

  it('rejects forged tokens: alg none, wrong secret, HS/RS confusion, tampered claims, wrong issuer, expired', async () => {
    const a = await agent();
    // mallory exists (as administrator), so every refusal below is the token's, not the directory's.
    a.agent.services.users.create({ user_id: 'mallory', display_name: 'M', role: 'administrator' });
    const claims = { sub: 'mallory', role: 'administrator', tenant_id: 'default', iss: 'svc-control-center', iat: now(), exp: now() + 600 };
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const good = await sign(claims);
    const [gh, , gs] = good.split('.');
    const forged = [
      `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`,
      `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.${gs}`,
      await sign(claims, 'wrong-secret'),
      await sign(claims, SECRET, 'HS512'),
      `${enc({ alg: 'RS256', typ: 'JWT' })}.${enc(claims)}.${gs}`,
      `${gh}.${enc({ ...claims, role: 'administrator', sub: 'root' })}.${gs}`,
      await sign({ ...claims, iss: 'someone-else' }),
      await sign({ ...claims, iat: now() - 4000, exp: now() - 3000 }),
      await sign({ role: 'administrator', tenant_id: 'default', iss: 'svc-control-center', iat: now(), exp: now() + 60 }),
    ];
    for (const t of forged) {
      const r = await a.json('/v1/rbac/me', { headers: bearer(t) });
      expect(r.status, t).toBe(401);
      expect((await a.json('/v1/admin/api-keys', { headers: bearer(t) })).status).toBe(401);
    }
    expect((await a.json('/v1/rbac/me', { headers: bearer(good) })).status).toBe(200);
  });

  it('accepts exp within the 60 s leeway', async () => {
    const a = await agent();
    const t = await sign({ sub: 'late', role: 'operator', tenant_id: 'default', iss: 'svc-control-center', iat: now() - 100, exp: now() - 30 });
    expect((await a.json('/v1/rbac/me', { headers: bearer(t) })).status).toBe(200);
  });

  it('refresh: valid and recently expired tokens are re-issued; after the window or forged they are refused', async () => {
    const a = await agent({ SVC_SESSION_REFRESH_WINDOW_SECS: '3600' });
    const base = { sub: 'bob', key_id: 'session-bob', role: 'supervisor', tenant_id: 'default', iss: 'svc-control-center' };
    for (const t of [await sign({ ...base, iat: now(), exp: now() + 600 }), await sign({ ...base, iat: now() - 3000, exp: now() - 1800 })]) {
      const r = await a.json('/v1/auth/session/refresh', { method: 'POST', body: JSON.stringify({ token: t }) });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ version: 'v1', ok: true, expires_in_secs: 900 });
      const me = await a.json('/v1/rbac/me', { headers: bearer(r.body.session_token) });
      expect(me.body).toMatchObject({ user_id: 'bob', role: 'supervisor' });
    }
    const stale = await a.json('/v1/auth/session/refresh', { method: 'POST', body: JSON.stringify({ token: await sign({ ...base, iat: now() - 9000, exp: now() - 7200 }) }) });
    expect(stale.status).toBe(400);
    expect(stale.body.error).toBe('refresh window elapsed');
    const wrong = await a.json('/v1/auth/session/refresh', { method: 'POST', body: JSON.stringify({ token: await sign({ ...base, iat: now(), exp: now() + 60 }, 'nope') }) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatch(/^invalid session token/);
    const none = await a.json('/v1/auth/session/refresh', { method: 'POST', body: '{}' });
    expect(none.body.error).toBe('token required');
    expect((await a.json('/v1/auth/session/refresh', { method: 'POST', body: '{"token":' })).body.code).toBe('bad_request');
  });

  it('a session of another tenant is refused with 403 tenant_mismatch', async () => {
    const a = await agent({ SVC_TENANT_ID: 'acme' });
    const other = new SessionTokens({ secret: SECRET, issuer: 'svc-control-center', ttlSecs: 60, refreshWindowSecs: 60, tenantId: 'globex' });
    const { session_token } = await other.issue('eve', 'administrator');
    const r = await a.json('/v1/dashboard', { headers: bearer(session_token) });
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('tenant_mismatch');
  });

  it('/v1/auth/config reports lifetimes and read-auth flags; rbac/me and auth/session need a principal', async () => {
    const a = await agent({ SVC_SESSION_TTL_SECS: '300', SVC_API_REQUIRE_AUTH_READS: '1' });
    const cfg = await a.json('/v1/auth/config');
    expect(cfg.body).toMatchObject({ version: 'v1', oidc_login_enabled: false, issuer: null, session_ttl_secs: 300, read_auth: { require_sensitive_reads: true, require_all_reads: false } });
    expect((await a.json('/v1/rbac/me')).status).toBe(401);
    expect((await a.json('/v1/auth/session')).status).toBe(401);
    const matrix = await a.json('/v1/rbac/matrix');
    expect(matrix.body.matrix).toEqual({
      Administrator: ['Deploy', 'Operate', 'Approve', 'Override', 'Shutdown', 'Recover', 'Delete', 'Provision'],
      Developer: ['Deploy', 'Operate'],
      Operator: ['Operate', 'Shutdown', 'Recover'],
      Supervisor: ['Deploy', 'Operate', 'Approve', 'Override', 'Shutdown', 'Recover', 'Provision'],
      SafetyOfficer: ['Operate', 'Approve', 'Shutdown'],
      Auditor: [],
      Guest: [],
    });
    const all = await agent({ SVC_API_REQUIRE_AUTH_ALL_READS: '1' });
    expect((await all.json('/v1/auth/config')).status).toBe(401);
  });
});
