import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-test-provider.js';

/**
 * Finding: a session refresh re-issued the role written in the old token, and a live session of a
 * removed, disabled or demoted user kept its old role until `exp`. Sessions now follow the directory
 * (and the key store) on every request and every refresh (docs/security.md §3).
 */
const ADMIN = 'admin-session-revocation-0123456789ab';
const CALLBACK = '/admin/oauth/oidc/callback';
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const claims = (t: string) => JSON.parse(Buffer.from(t.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe('sessions follow the directory', () => {
  let a: RunningAgent;
  let idp: TestOidcProvider;
  const stateDir = tempDir('svc-revoke-');
  const call = async (method: string, p: string, opts: { token?: string; body?: unknown } = {}) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.token ? bearer(opts.token) : {}) };
    const res = await a.fetch(p, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const refresh = (token: string) => call('POST', '/v1/auth/session/refresh', { body: { token } });

  /** A real sign-in at the provider: our session for `login`. */
  async function signIn(login: string): Promise<string> {
    const start = await call('POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(start.status).toBe(200);
    const back = await signInAtProvider(start.body.authorize_url, login, idp.issuer);
    const done = await call('POST', '/v1/auth/oidc/callback', { body: { code: back.searchParams.get('code'), state: back.searchParams.get('state') } });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    return done.body.session_token as string;
  }

  beforeAll(async () => {
    a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    idp = await startOidcProvider({ redirectUri: `${a.baseUrl}${CALLBACK}`, accounts: { alice: { name: 'Alice', groups: ['admins'] }, bob: { name: 'Bob', groups: ['admins'] } } });
    const put = await call('PUT', '/v1/admin/oidc', {
      token: ADMIN,
      body: { enabled: true, issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, redirect_uri: `${a.baseUrl}${CALLBACK}`, group_role_map: { admins: 'administrator' } },
    });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await a?.close();
    await idp?.close();
  });

  it('a demoted user: the live session and its refresh take the directory role at once', async () => {
    const token = await signIn('alice');
    expect((await call('GET', '/v1/admin/api-keys', { token })).status).toBe(200);
    expect((await call('PATCH', '/v1/admin/users/alice', { token: ADMIN, body: { role: 'auditor' } })).status).toBe(200);

    const me = await call('GET', '/v1/rbac/me', { token });
    expect(me.body).toMatchObject({ user_id: 'alice', role: 'auditor', auth_kind: 'session' });
    const admin = await call('GET', '/v1/admin/api-keys', { token });
    expect(admin.status).toBe(403);
    expect(admin.body).toMatchObject({ ok: false, code: 'forbidden' });

    const r = await refresh(token);
    expect(r.status).toBe(200);
    expect(claims(r.body.session_token)['role']).toBe('auditor');
    expect((await call('GET', '/v1/rbac/me', { token: r.body.session_token })).body.role).toBe('auditor');
  });

  it('a disabled user: the live session is 401 at once and cannot be refreshed; re-enabled, it works again', async () => {
    const token = await signIn('bob');
    expect((await call('GET', '/v1/rbac/me', { token })).status).toBe(200);
    expect((await call('PATCH', '/v1/admin/users/bob', { token: ADMIN, body: { enabled: false } })).status).toBe(200);

    const me = await call('GET', '/v1/rbac/me', { token });
    expect(me.status).toBe(401);
    expect(me.body).toEqual({ ok: false, error: 'unauthorized', code: 'unauthorized' });
    expect((await call('GET', '/v1/admin/api-keys', { token })).status).toBe(401);
    const r = await refresh(token);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ ok: false, code: 'unauthorized', error: 'session refused: the user was removed or disabled, or the key revoked' });

    expect((await call('PATCH', '/v1/admin/users/bob', { token: ADMIN, body: { enabled: true } })).status).toBe(200);
    expect((await call('GET', '/v1/rbac/me', { token })).status).toBe(200);
  });

  it('a removed user: session and refresh refused, and still refused after a restart', async () => {
    const token = await signIn('bob');
    expect((await call('DELETE', '/v1/admin/users/bob', { token: ADMIN })).status).toBe(200);
    expect((await call('GET', '/v1/rbac/me', { token })).status).toBe(401);
    expect((await refresh(token)).status).toBe(401);

    await a.close();
    a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    expect((await call('GET', '/v1/rbac/me', { token })).status).toBe(401);
    expect((await refresh(token)).status).toBe(401);
    // alice (demoted above) is still an auditor after the restart.
    expect((await call('GET', '/v1/admin/users', { token: ADMIN })).body.users.find((u: any) => u.user_id === 'alice').role).toBe('auditor');
  });

  it('a session naming an API key follows the key: demoted → new role, revoked → 401 and no refresh', async () => {
    // No route issues key-bound sessions today; the rule still holds for any token naming a key.
    const key = await call('POST', '/v1/admin/api-keys', { token: ADMIN, body: { role: 'supervisor' } });
    const { session_token: token } = await a.agent.services.credentials.sessions.issue('svc-ui', 'supervisor', undefined, key.body.key_id);
    expect((await call('GET', '/v1/rbac/me', { token })).body).toMatchObject({ key_id: key.body.key_id, role: 'supervisor' });
    expect((await call('PATCH', `/v1/admin/api-keys/${key.body.key_id}`, { token: ADMIN, body: { role: 'operator' } })).status).toBe(200);
    expect((await call('GET', '/v1/rbac/me', { token })).body.role).toBe('operator');
    const r = await refresh(token);
    expect(r.status).toBe(200);
    expect(claims(r.body.session_token)).toMatchObject({ role: 'operator', key_id: key.body.key_id });
    expect((await call('DELETE', `/v1/admin/api-keys/${key.body.key_id}`, { token: ADMIN })).status).toBe(200);
    expect((await call('GET', '/v1/rbac/me', { token })).status).toBe(401);
    expect((await refresh(token)).status).toBe(401);
    expect((await refresh(r.body.session_token)).status).toBe(401);
    // A session for a key id that never existed, signed with the real secret, is refused too.
    const ghost = await a.agent.services.credentials.sessions.issue('x', 'administrator', undefined, 'key-never-existed');
    expect((await call('GET', '/v1/admin/api-keys', { token: ghost.session_token })).status).toBe(401);
  });
});
