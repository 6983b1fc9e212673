import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-test-provider.js';

/**
 * OIDC sign-in (docs/security-oidc.md §3, docs/wire-decisions.md D7) end to end: a real OpenID
 * provider (`oidc-provider` v9) on loopback, its login and consent forms driven over HTTP, the agent's
 * REST routes, and our own session token used afterwards.
 */

const ADMIN_KEY = 'a'.repeat(64);
const OPERATOR_KEY = 'o'.repeat(64);
const DEVELOPER_KEY = 'd'.repeat(64);
const CALLBACK_PATH = '/admin/oauth/oidc/callback';

const GROUP_ROLE_MAP = { 'ops-leads': 'supervisor', safety: 'safety_officer', visitors: 'guest' };
const ACCOUNTS = {
  alice: { name: 'Alice Lead', email: 'alice@example.test', groups: ['staff', 'ops-leads'] },
  bob: { name: 'Bob Safety', groups: ['safety'] },
  carol: { groups: ['visitors'] },
  dave: { groups: [] },
  erin: { groups: ['ops-leads'] },
};

/** A state dir holding a keys file with an operator and a developer key (legacy plaintext, migrated on load). */
function stateDirWithKeys(): string {
  const dir = tempDir('svc-oidc-');
  fs.writeFileSync(
    path.join(dir, 'api-keys.json'),
    JSON.stringify([
      { key_id: 'ops-key', token: OPERATOR_KEY, role: 'operator' },
      { key_id: 'dev-key', token: DEVELOPER_KEY, role: 'developer' },
    ]),
  );
  return dir;
}

async function call(a: RunningAgent, method: string, pathname: string, opts: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await a.fetch(pathname, { method, headers, ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}) });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* keep the text */
  }
  return { status: res.status, body, text, headers: res.headers };
}

function s256(verifier: string): string {
  return crypto.createHash('sha256').update(verifier).digest('base64url');
}

/**
 * Who a Bearer token is to the agent: `GET /v1/rbac/me` when that route exists, otherwise the
 * credential resolver directly.
 */
async function whoIs(a: RunningAgent, token: string): Promise<{ status: number; role?: string; user_id?: string | null; auth_kind?: string }> {
  const me = await call(a, 'GET', '/v1/rbac/me', { token });
  if (me.status !== 404) return { status: me.status, ...(me.status === 200 ? me.body : {}) };
  const p = await a.agent.services.credentials.authenticate(token);
  return p ? { status: 200, role: p.role, user_id: p.user_id, auth_kind: p.auth_kind } : { status: 401 };
}

describe('OIDC sign-in against a real OpenID provider', () => {
  let agent: RunningAgent;
  let idp: TestOidcProvider;
  let redirectUri: string;

  beforeAll(async () => {
    agent = await startAgent({ env: { SVC_API_KEY: ADMIN_KEY }, stateDir: stateDirWithKeys() });
    redirectUri = `${agent.baseUrl}${CALLBACK_PATH}`;
    idp = await startOidcProvider({ redirectUri, accounts: ACCOUNTS });
    const put = await call(agent, 'PUT', '/v1/admin/oidc', {
      token: ADMIN_KEY,
      body: {
        enabled: true,
        issuer: idp.issuer,
        client_id: idp.clientId,
        client_secret: idp.clientSecret,
        group_role_map: GROUP_ROLE_MAP,
        redirect_uri: redirectUri,
      },
    });
    expect(put.status, put.text).toBe(200);
  });

  afterAll(async () => {
    await agent?.close();
    await idp?.close();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  /** authorize-url → provider login + consent → the redirect back carrying code and state. */
  async function authorizeAndSignIn(login: string, route = '/v1/auth/oidc/authorize-url', token?: string) {
    const start = await call(agent, 'POST', route, { body: {}, ...(token ? { token } : {}) });
    expect(start.status, start.text).toBe(200);
    const back = await signInAtProvider(start.body.authorize_url, login, idp.issuer);
    return { start: start.body, back, code: back.searchParams.get('code')!, state: back.searchParams.get('state')! };
  }

  it('runs authorization code + PKCE S256 end to end and issues our session with the group-mapped role', async () => {
    const start = await call(agent, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(start.status, start.text).toBe(200);
    expect(start.body).toMatchObject({ version: 'v1', pkce: true, redirect_uri: redirectUri });
    expect(start.body.state).toMatch(/^svc-[0-9a-f]{32}$/);
    const url = new URL(start.body.authorize_url);
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('client_id')).toBe(idp.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(url.searchParams.get('scope')).toBe('openid profile email');
    expect(url.searchParams.get('state')).toBe(start.body.state);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const challenge = url.searchParams.get('code_challenge')!;
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // The verifier is kept server-side, in admin-oidc.json, and is the challenge's preimage (docs/wire-decisions.md D7)...
    await agent.agent.services.oidc.flush();
    const doc = JSON.parse(fs.readFileSync(path.join(agent.stateDir, 'admin-oidc.json'), 'utf8'));
    // Several authorizations may be pending, keyed by state (docs/security-oidc.md §3).
    const stored = { pending: doc.pending.find((p: { state: string }) => p.state === start.body.state) };
    expect(stored.pending.state).toBe(start.body.state);
    expect(stored.pending.verifier).toMatch(/^svc-pkce-[A-Za-z0-9_-]{43}$/);
    expect(s256(stored.pending.verifier)).toBe(challenge);
    // ...and never shown by a read.
    const view = await call(agent, 'GET', '/v1/admin/oidc', { token: ADMIN_KEY });
    expect(view.status).toBe(200);
    expect(view.text).not.toContain(stored.pending.verifier);
    expect(view.text).not.toContain(start.body.state);
    expect(view.text).not.toContain(idp.clientSecret);
    expect(view.body).not.toHaveProperty('pending');
    expect(view.body).not.toHaveProperty('client_secret');

    // The browser part: login and consent at the provider, then back to our landing page.
    const back = await signInAtProvider(start.body.authorize_url, 'alice', idp.issuer);
    expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
    const code = back.searchParams.get('code')!;
    expect(code).toBeTruthy();
    expect(back.searchParams.get('state')).toBe(start.body.state);
    const page = await agent.fetch(`${back.pathname}${back.search}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('window.opener.postMessage');
    expect(html).toContain(code);

    // The app part: what the landing page posts to its opener, sent to the callback.
    const done = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state: start.body.state } });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({
      version: 'v1',
      ok: true,
      auth_kind: 'session',
      user_id: 'alice',
      role: 'supervisor',
      users_created: 1,
      users_updated: 0,
    });
    expect(done.body.expires_in_secs).toBe(900);
    expect(done.body.session_token.split('.')).toHaveLength(3);

    // docs/wire-decisions.md D7: the token request carried the stored verifier, and its S256 is the challenge we sent.
    const grant = idp.grants.at(-1)!;
    expect(grant.client_id).toBe(idp.clientId);
    expect(grant.code_verifier).toBe(stored.pending.verifier);
    expect(s256(grant.code_verifier!)).toBe(challenge);

    // Our session works as a Bearer credential, with the role mapped from the provider's groups.
    const me = await whoIs(agent, done.body.session_token);
    expect(me).toMatchObject({ status: 200, role: 'supervisor', user_id: 'alice', auth_kind: 'session' });
    const user = agent.agent.services.users.get('alice');
    expect(user).toMatchObject({ display_name: 'Alice Lead', email: 'alice@example.test', role: 'supervisor', source: 'oidc', enabled: true });
    const synced = await call(agent, 'GET', '/v1/admin/oidc', { token: ADMIN_KEY });
    expect(synced.body.last_sync_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);

    // The pending authorization was single use: replaying the same state and code is refused.
    const replay = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state: start.body.state } });
    expect(replay.status).toBe(400);
    expect(replay.body).toEqual({ ok: false, error: 'oauth state mismatch', code: 'bad_request' });
    await agent.agent.services.oidc.flush();
    const left = JSON.parse(fs.readFileSync(path.join(agent.stateDir, 'admin-oidc.json'), 'utf8')).pending as Array<{ state: string }>;
    expect(left.some((p) => p.state === start.body.state)).toBe(false);
  });

  it('never accepts the identity provider’s tokens as API credentials', async () => {
    const { code, state } = await authorizeAndSignIn('erin');
    const done = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state } });
    expect(done.status, done.text).toBe(200);
    const grant = idp.grants.at(-1)!;
    expect(grant.access_token).toBeTruthy();
    expect(grant.id_token).toBeTruthy();
    // The access token is genuine and live at the provider...
    const userinfo = await fetch(`${idp.issuer}/me`, { headers: { authorization: `Bearer ${grant.access_token}` } });
    expect(userinfo.status).toBe(200);
    expect(((await userinfo.json()) as { sub: string }).sub).toBe('erin');
    // ...but it is not a credential of ours, and neither is the (RS256-signed) ID token.
    for (const foreign of [grant.access_token!, grant.id_token!]) {
      expect((await call(agent, 'GET', '/v1/rbac/me', { token: foreign })).status).toBe(401);
      expect((await call(agent, 'GET', '/v1/auth/session', { token: foreign })).status).toBe(401);
      expect((await call(agent, 'POST', '/v1/admin/oidc/sync', { token: foreign, body: { directory: [] } })).status).toBe(401);
      expect(await agent.agent.services.credentials.authenticate(foreign)).toBeNull();
    }
    // Our own session for the same person is accepted.
    expect((await whoIs(agent, done.body.session_token)).status).toBe(200);

    // No token and no code reaches a state file (traces, audit, directory, settings).
    await agent.agent.services.traces.flush();
    await agent.agent.services.users.flush();
    await agent.agent.services.oidc.flush();
    const files = fs.readdirSync(agent.stateDir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const text = fs.readFileSync(path.join(f.parentPath, f.name), 'utf8');
      for (const secret of [grant.access_token!, grant.id_token!, done.body.session_token as string, code, idp.clientSecret]) {
        if (f.name === 'admin-oidc.json' && secret === idp.clientSecret) continue; // the one place the secret must live
        expect(text.includes(secret), `${f.name} holds a credential`).toBe(false);
      }
    }
  });

  it('round-trips safety_officer from a group, and updates a user who signs in again', async () => {
    const first = await authorizeAndSignIn('bob');
    const bob = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code: first.code, state: first.state } });
    expect(bob.status, bob.text).toBe(200);
    expect(bob.body).toMatchObject({ user_id: 'bob', role: 'safety_officer', users_created: 1, users_updated: 0 });
    expect(await whoIs(agent, bob.body.session_token)).toMatchObject({ status: 200, role: 'safety_officer', user_id: 'bob' });
    const again = await authorizeAndSignIn('bob');
    const bob2 = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code: again.code, state: again.state } });
    expect(bob2.status, bob2.text).toBe(200);
    expect(bob2.body).toMatchObject({ role: 'safety_officer', users_created: 0, users_updated: 1 });
  });

  it('refuses a session (403) to a user who maps to guest or is disabled in the directory', async () => {
    const carol = await authorizeAndSignIn('carol');
    const refused = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code: carol.code, state: carol.state } });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ ok: false, error: 'forbidden', code: 'forbidden' });
    expect(agent.agent.services.users.get('carol')).toBeUndefined();

    const created = await call(agent, 'POST', '/v1/admin/users', { token: ADMIN_KEY, body: { user_id: 'dave', display_name: 'Dave', role: 'operator' } });
    expect(created.status, created.text).toBe(200);
    const disabled = await call(agent, 'PATCH', '/v1/admin/users/dave', { token: ADMIN_KEY, body: { enabled: false } });
    expect(disabled.status, disabled.text).toBe(200);
    const dave = await authorizeAndSignIn('dave');
    const refusedDave = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code: dave.code, state: dave.state } });
    expect(refusedDave.status).toBe(403);
    expect(agent.agent.services.users.get('dave')?.enabled).toBe(false);
  });

  it('checks the state before anything else, and requires the code', async () => {
    const { code, state } = await authorizeAndSignIn('alice');
    const wrong = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state: 'svc-0123456789abcdef0123456789abcdef' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe('oauth state mismatch');
    const missingState = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code } });
    expect(missingState.body.error).toBe('oauth state mismatch');
    const noCode = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { state } });
    expect(noCode.status).toBe(400);
    expect(noCode.body.error).toBe('code required');
    // None of those consumed the pending authorization: the real callback still completes.
    const ok = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.user_id).toBe('alice');
    expect(ok.body.users_updated).toBe(1);
  });

  it('keeps several pending authorizations: a later authorize-url does not break an earlier sign-in; the provider refuses a swapped verifier', async () => {
    const first = await authorizeAndSignIn('alice');
    // Anyone may call authorize-url; that must not replace the authorization alice is completing.
    const second = await call(agent, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(second.status).toBe(200);
    expect(second.body.state).not.toBe(first.state);
    // The first code with the second state: our state check passes, but that state's verifier is not
    // the preimage of the challenge the first code was issued for, and the provider says so.
    const errorsBefore = idp.grantErrors.length;
    const mixed = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code: first.code, state: second.body.state } });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatch(/^oidc token exchange failed: invalid_grant/);
    expect(idp.grantErrors.slice(errorsBefore).join('\n')).toMatch(/code_verifier does not match code_challenge/);
    // A failed exchange after a state match still consumes that pending authorization.
    const after = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code: first.code, state: second.body.state } });
    expect(after.body.error).toBe('oauth state mismatch');
  });

  it('lets a pending authorization expire after 10 minutes', async () => {
    const { code, state } = await authorizeAndSignIn('alice');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10 * 60 * 1000 + 1000 });
    const late = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state } });
    vi.useRealTimers();
    expect(late.status).toBe(400);
    expect(late.body.error).toBe('oauth state mismatch');
    // Expired means gone: not usable afterwards either.
    const retry = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state } });
    expect(retry.body.error).toBe('oauth state mismatch');
  });

  it('serves the admin variants to administrators only, and they work while sign-in is disabled', async () => {
    expect((await call(agent, 'POST', '/v1/admin/oidc/authorize-url', { body: {} })).status).toBe(401);
    expect((await call(agent, 'POST', '/v1/admin/oidc/authorize-url', { token: OPERATOR_KEY, body: {} })).status).toBe(403);
    // Deploy is not enough any more: the import writes users with roles (docs/security-oidc.md).
    expect((await call(agent, 'POST', '/v1/admin/oidc/authorize-url', { token: DEVELOPER_KEY, body: {} })).status).toBe(403);
    expect((await call(agent, 'POST', '/v1/admin/oidc/oauth/callback', { token: DEVELOPER_KEY, body: {} })).status).toBe(403);
    expect((await call(agent, 'POST', '/v1/admin/oidc/oauth/callback', { body: {} })).status).toBe(401);

    expect((await call(agent, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { enabled: false } })).status).toBe(200);
    try {
      const disabled = await call(agent, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
      expect(disabled.status).toBe(400);
      expect(disabled.body.error).toMatch(/not enabled/);

      const { code, state, start } = await authorizeAndSignIn('alice', '/v1/admin/oidc/authorize-url', ADMIN_KEY);
      expect(start.pkce).toBe(true);
      // The public callback is closed while sign-in is disabled...
      const closed = await call(agent, 'POST', '/v1/auth/oidc/callback', { body: { code, state } });
      expect(closed.status).toBe(400);
      // ...the admin one is not.
      const done = await call(agent, 'POST', '/v1/admin/oidc/oauth/callback', { token: ADMIN_KEY, body: { code, state } });
      expect(done.status, done.text).toBe(200);
      expect(done.body).toMatchObject({
        version: 'v1',
        ok: true,
        session_role: 'supervisor',
        session_user_id: 'alice',
        expires_in_secs: 900,
        users_created: 0,
        users_updated: 1,
      });
      expect(done.body.userinfo).toMatchObject({ sub: 'alice', groups: ['staff', 'ops-leads'], email: 'alice@example.test' });
      expect(done.body.last_sync_at).toMatch(/^\d{4}-/);
      expect((await whoIs(agent, done.body.session_token)).role).toBe('supervisor');
      expect(idp.grants.at(-1)!.code_verifier).toMatch(/^svc-pkce-/);
    } finally {
      expect((await call(agent, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { enabled: true } })).status).toBe(200);
    }
  });

  it('answers the redirect URI from the body first, then the stored one', async () => {
    const other = `http://localhost:9${CALLBACK_PATH}`;
    const explicit = await call(agent, 'POST', '/v1/auth/oidc/authorize-url', { body: { redirect_uri: other } });
    expect(explicit.status).toBe(200);
    expect(explicit.body.redirect_uri).toBe(other);
    expect(new URL(explicit.body.authorize_url).searchParams.get('redirect_uri')).toBe(other);
    const stored = await call(agent, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(stored.body.redirect_uri).toBe(redirectUri);
    const bad = await call(agent, 'POST', '/v1/auth/oidc/authorize-url', { body: { redirect_uri: 'javascript:alert(1)' } });
    expect(bad.status).toBe(400);
  });
});

describe('OIDC settings and admin routes', () => {
  let running: RunningAgent[] = [];
  async function agentWith(env: Record<string, string> = {}, stateDir?: string) {
    const a = await startAgent({ env: { SVC_API_KEY: ADMIN_KEY, ...env }, stateDir: stateDir ?? stateDirWithKeys() });
    running.push(a);
    return a;
  }
  afterEach(async () => {
    await Promise.all(running.map((a) => a.close()));
    running = [];
  });

  it('PUT and GET need an administrator (401 anonymous, 403 insufficient role, Deploy included)', async () => {
    const a = await agentWith();
    const body = { enabled: false, client_id: 'c' };
    expect((await call(a, 'PUT', '/v1/admin/oidc', { body })).status).toBe(401);
    const op = await call(a, 'PUT', '/v1/admin/oidc', { token: OPERATOR_KEY, body });
    expect(op.status).toBe(403);
    expect(op.body).toEqual({ ok: false, error: 'forbidden', code: 'forbidden' });
    expect((await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body })).status).toBe(200);
    expect((await call(a, 'PUT', '/v1/admin/oidc', { token: DEVELOPER_KEY, body })).status).toBe(403);
    expect((await call(a, 'GET', '/v1/admin/oidc')).status).toBe(401);
    expect((await call(a, 'GET', '/v1/admin/oidc', { token: OPERATOR_KEY })).status).toBe(403);
    expect((await call(a, 'GET', '/v1/admin/oidc', { token: DEVELOPER_KEY })).status).toBe(403);
    expect((await call(a, 'GET', '/v1/admin/oidc', { token: ADMIN_KEY })).status).toBe(200);
    expect((await call(a, 'POST', '/v1/admin/oidc/sync', { token: OPERATOR_KEY, body: { directory: [] } })).status).toBe(403);
    expect((await call(a, 'POST', '/v1/admin/oidc/sync', { token: DEVELOPER_KEY, body: { directory: [] } })).status).toBe(403);
  });

  it('keeps the secret write-only, validates the issuer, and persists across a restart', async () => {
    const stateDir = stateDirWithKeys();
    const a = await agentWith({}, stateDir);
    const fresh = await call(a, 'GET', '/v1/admin/oidc', { token: ADMIN_KEY });
    expect(fresh.body).toEqual({
      version: 'v1',
      enabled: false,
      issuer: '',
      client_id: '',
      client_secret_set: false,
      group_role_map: {},
      last_sync_at: null,
      redirect_uri: 'http://127.0.0.1:8080/admin/oauth/oidc/callback',
      oauth_ready: false,
      persist_path: path.join(stateDir, 'admin-oidc.json'),
    });

    for (const issuer of ['http://idp.example.com', 'ftp://idp.example.com', 'http://127.0.0.2:8080', 'not a url', 'https://u:p@idp.example.com']) {
      const res = await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { issuer } });
      expect(res.status, issuer).toBe(400);
    }
    const https = await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { issuer: 'http://idp.example.com' } });
    expect(https.body.error).toMatch(/https:\/\//);
    for (const issuer of ['http://127.0.0.1:9999', 'http://localhost:9999/realms/x', 'http://[::1]:9999']) {
      expect((await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { issuer } })).status, issuer).toBe(200);
    }
    const badRole = await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { group_role_map: { x: 'emperor' } } });
    expect(badRole.status).toBe(400);
    const badType = await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { enabled: 'yes' } });
    expect(badType.status).toBe(400);

    const secret = 'super-secret-value-1234';
    const put = await call(a, 'PUT', '/v1/admin/oidc', {
      token: ADMIN_KEY,
      body: {
        enabled: true,
        issuer: 'https://idp.example.com/realms/robots',
        client_id: 'svc',
        client_secret: secret,
        group_role_map: { Ops: 'Supervisor', safety: 'safety', devs: 'dev' },
        redirect_uri: 'https://cc.example.com/admin/oauth/oidc/callback',
      },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.text).not.toContain(secret);
    expect(put.body).toMatchObject({ ok: true, client_secret_set: true, oauth_ready: true, group_role_map: { Ops: 'supervisor', safety: 'safety_officer', devs: 'developer' } });
    // An empty secret keeps the stored one.
    const keep = await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { client_secret: '', enabled: true } });
    expect(keep.body.client_secret_set).toBe(true);
    const view = await call(a, 'GET', '/v1/admin/oidc', { token: ADMIN_KEY });
    expect(view.text).not.toContain(secret);
    expect(view.body).toMatchObject({
      enabled: true,
      issuer: 'https://idp.example.com/realms/robots',
      client_id: 'svc',
      client_secret_set: true,
      redirect_uri: 'https://cc.example.com/admin/oauth/oidc/callback',
      oauth_ready: true,
    });
    expect(Object.keys(view.body).sort()).toEqual(
      ['version', 'enabled', 'issuer', 'client_id', 'client_secret_set', 'group_role_map', 'last_sync_at', 'redirect_uri', 'oauth_ready', 'persist_path'].sort(),
    );
    // Never in a trace record or the mutation audit either.
    await a.close();
    running = [];
    for (const f of fs.readdirSync(stateDir).filter((n) => !n.includes('admin-oidc.json'))) {
      const p = path.join(stateDir, f);
      if (fs.statSync(p).isFile()) expect(fs.readFileSync(p, 'utf8'), f).not.toContain(secret);
    }

    // Same state dir, new process: everything is back, the secret still hidden but set.
    const b = await agentWith({}, stateDir);
    const reloaded = await call(b, 'GET', '/v1/admin/oidc', { token: ADMIN_KEY });
    expect(reloaded.body).toEqual({ ...view.body });
    expect(JSON.parse(fs.readFileSync(path.join(stateDir, 'admin-oidc.json'), 'utf8')).client_secret).toBe(secret);
  });

  it('names what is missing before talking to any provider, and reports a failed discovery', async () => {
    const a = await agentWith();
    const put = (body: Record<string, unknown>) => call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body });
    await put({ enabled: true, client_id: 'svc', client_secret: 's3cret' });
    const noIssuer = await call(a, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(noIssuer.status).toBe(400);
    expect(noIssuer.body.error).toMatch(/issuer/);
    await put({ issuer: 'http://127.0.0.1:1', client_id: '' });
    const noClient = await call(a, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(noClient.status).toBe(400);
    expect(noClient.body.error).toMatch(/client_id/);
    await put({ client_id: 'svc' });
    // Nothing listens on port 1: discovery fails.
    const unreachable = await call(a, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.error).toBe('failed to fetch discovery document');
    const noSecretAgent = await agentWith();
    await call(noSecretAgent, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { enabled: true, issuer: 'https://idp.example.com', client_id: 'svc' } });
    const noSecret = await call(noSecretAgent, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.error).toMatch(/client_secret/);
    // Disabled is named too (and checked first on the public route).
    await call(noSecretAgent, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { enabled: false } });
    const off = await call(noSecretAgent, 'POST', '/v1/auth/oidc/authorize-url', { body: {} });
    expect(off.status).toBe(400);
    expect(off.body.error).toMatch(/not enabled/);
    // No authorization was ever started.
    const callback = await call(noSecretAgent, 'POST', '/v1/admin/oidc/oauth/callback', { token: ADMIN_KEY, body: { code: 'x', state: 'svc-x' } });
    expect(callback.body.error).toBe('oauth state mismatch');
  });

  it('resolves the redirect URI from SVC_OIDC_REDIRECT_URI when nothing is stored', async () => {
    const a = await agentWith({ SVC_OIDC_REDIRECT_URI: 'https://cc.example.com/admin/oauth/oidc/callback' });
    expect((await call(a, 'GET', '/v1/admin/oidc', { token: ADMIN_KEY })).body.redirect_uri).toBe('https://cc.example.com/admin/oauth/oidc/callback');
  });

  it('imports a directory from the body or from SVC_OIDC_DIRECTORY_JSON', async () => {
    const dir = tempDir('svc-oidc-dir-');
    const file = path.join(dir, 'directory.json');
    fs.writeFileSync(file, JSON.stringify({ directory: [{ sub: 'fay', name: 'Fay', groups: ['safety'] }, { user_id: 'gus', role: 'auditor' }] }));
    const a = await agentWith({ SVC_OIDC_DIRECTORY_JSON: file });
    await call(a, 'PUT', '/v1/admin/oidc', { token: ADMIN_KEY, body: { group_role_map: GROUP_ROLE_MAP } });
    expect((await call(a, 'POST', '/v1/admin/oidc/sync', { body: {} })).status).toBe(401);

    expect((await call(a, 'POST', '/v1/admin/oidc/sync', { token: DEVELOPER_KEY, body: { directory: [] } })).status).toBe(403);
    const fromBody = await call(a, 'POST', '/v1/admin/oidc/sync', {
      token: ADMIN_KEY,
      body: {
        directory: [
          { sub: 'hal', preferred_username: 'hal9000', email: 'hal@example.test', groups: ['ops-leads'] },
          { user_id: 'ivy', groups: ['visitors'] },
          { name: 'no id at all' },
          { user_id: 'jo' },
        ],
      },
    });
    expect(fromBody.status, fromBody.text).toBe(200);
    expect(fromBody.body).toMatchObject({ version: 'v1', ok: true, users_created: 2, users_updated: 0, users_skipped: 2 });
    expect(fromBody.body.last_sync_at).toMatch(/^\d{4}-/);
    expect(a.agent.services.users.get('hal')).toMatchObject({ role: 'supervisor', display_name: 'hal9000', email: 'hal@example.test' });
    expect(a.agent.services.users.get('jo')?.role).toBe('operator');
    expect(a.agent.services.users.get('ivy')).toBeUndefined();

    const fromFile = await call(a, 'POST', '/v1/admin/oidc/sync', { token: ADMIN_KEY });
    expect(fromFile.status, fromFile.text).toBe(200);
    expect(fromFile.body).toMatchObject({ users_created: 2, users_updated: 0, users_skipped: 0 });
    expect(a.agent.services.users.get('fay')?.role).toBe('safety_officer');
    expect(a.agent.services.users.get('gus')?.role).toBe('auditor');

    const invalid = await call(a, 'POST', '/v1/admin/oidc/sync', { token: ADMIN_KEY, body: { directory: 'nope' } });
    expect(invalid.status).toBe(400);
    const none = await agentWith();
    const missing = await call(none, 'POST', '/v1/admin/oidc/sync', { token: ADMIN_KEY, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/directory/);
  });
});

describe('OIDC landing page', () => {
  let a: RunningAgent;
  beforeAll(async () => {
    a = await startAgent({ env: { SVC_API_REQUIRE_AUTH_ALL_READS: '1' } });
  });
  afterAll(async () => {
    await a.close();
  });

  it('is public static HTML that posts code and state to the opener, with the usual headers', async () => {
    const res = await a.fetch(`${CALLBACK_PATH}?code=abc-123&state=svc-00ff&iss=http%3A%2F%2F127.0.0.1`, { headers: { 'X-Correlation-ID': 'corr-oidc' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-correlation-id')).toBe('corr-oidc');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    const html = await res.text();
    expect(html).toContain("window.opener.postMessage(message, '*')");
    expect(html).toContain("type: 'svc-oidc-oauth'");
    expect(html).toContain('<code id="svc-oidc-code">abc-123</code>');
    expect(html).toContain('<code id="svc-oidc-state">svc-00ff</code>');
    expect(html).toContain('"code":"abc-123","state":"svc-00ff"');
    // The page is traced like any request.
    expect(a.agent.services.traces.all().some((t) => t.path === CALLBACK_PATH && t.status === 200)).toBe(true);
  });

  it('escapes hostile query values everywhere they appear', async () => {
    const hostile = `</script><script>alert(1)</script><img src=x onerror=alert(2)>"'&`;
    const res = await a.fetch(`${CALLBACK_PATH}?code=${encodeURIComponent(hostile)}&state=${encodeURIComponent('"><svg onload=alert(3)>')}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<svg onload');
    expect(html).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;&amp;');
    expect(html).toContain('\\u003c/script\\u003e\\u003cscript\\u003ealert(1)');
    // Exactly the two script elements of the template.
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
  });

  it('shows a provider error instead of a code, and is GET only', async () => {
    const res = await a.fetch(`${CALLBACK_PATH}?error=access_denied&error_description=${encodeURIComponent('<b>no</b>')}`);
    const html = await res.text();
    expect(html).toContain('access_denied');
    expect(html).toContain('&lt;b&gt;no&lt;/b&gt;');
    expect((await a.fetch(CALLBACK_PATH, { method: 'POST' })).status).toBe(404);
  });
});
