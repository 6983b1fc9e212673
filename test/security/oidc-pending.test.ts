import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PENDING } from '../../agent/security/oidc/oidc-settings.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-test-provider.js';

/**
 * Finding: any anonymous `POST /v1/auth/oidc/authorize-url` replaced the single pending sign-in, so
 * the callback of the user at the provider failed. Pending authorizations are now kept by state,
 * bounded, expiring, single use and persisted (docs/security-oidc.md §3).
 */
const ADMIN = 'admin-oidc-pending-0123456789abcdef';
const CALLBACK = '/admin/oauth/oidc/callback';

describe('several pending OIDC authorizations', () => {
  let a: RunningAgent;
  let idp: TestOidcProvider;
  const stateDir = tempDir('svc-pending-');
  const call = async (p: string, body: unknown) => {
    const res = await a.fetch(p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const pendingStates = async () => {
    await a.agent.services.oidc.flush();
    return (JSON.parse(fs.readFileSync(path.join(stateDir, 'admin-oidc.json'), 'utf8')).pending as Array<{ state: string }>).map((p) => p.state);
  };

  beforeAll(async () => {
    a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    idp = await startOidcProvider({ redirectUri: `${a.baseUrl}${CALLBACK}`, accounts: { alice: { name: 'Alice', groups: ['ops'] }, bob: { name: 'Bob', groups: ['ops'] } } });
    const res = await a.fetch('/v1/admin/oidc', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ enabled: true, issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, redirect_uri: `${a.baseUrl}${CALLBACK}`, group_role_map: { ops: 'operator' } }),
    });
    expect(res.status).toBe(200);
  });
  afterAll(async () => {
    await a?.close();
    await idp?.close();
  });

  it('a later anonymous authorize-url does not break an earlier sign-in; both complete, each once', async () => {
    const first = await call('/v1/auth/oidc/authorize-url', {});
    const second = await call('/v1/auth/oidc/authorize-url', {});
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.state).not.toBe(first.body.state);

    const back = await signInAtProvider(first.body.authorize_url, 'alice', idp.issuer);
    const done = await call('/v1/auth/oidc/callback', { code: back.searchParams.get('code'), state: back.searchParams.get('state') });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ ok: true, user_id: 'alice', role: 'operator' });
    // Single use: the same state again is refused.
    const replay = await call('/v1/auth/oidc/callback', { code: back.searchParams.get('code'), state: first.body.state });
    expect(replay.body).toEqual({ ok: false, error: 'oauth state mismatch', code: 'bad_request' });

    const back2 = await signInAtProvider(second.body.authorize_url, 'bob', idp.issuer);
    const done2 = await call('/v1/auth/oidc/callback', { code: back2.searchParams.get('code'), state: back2.searchParams.get('state') });
    expect(done2.status).toBe(200);
    expect(done2.body.user_id).toBe('bob');
    expect(await pendingStates()).not.toContain(second.body.state);
  });

  it('pending authorizations survive a restart', async () => {
    const start = await call('/v1/auth/oidc/authorize-url', {});
    await a.close();
    a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    const back = await signInAtProvider(start.body.authorize_url, 'alice', idp.issuer);
    const done = await call('/v1/auth/oidc/callback', { code: back.searchParams.get('code'), state: back.searchParams.get('state') });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
  });

  it(`keeps at most ${MAX_PENDING}, evicting the oldest`, async () => {
    const states: string[] = [];
    for (let i = 0; i < MAX_PENDING + 2; i++) states.push((await call('/v1/auth/oidc/authorize-url', {})).body.state);
    const kept = await pendingStates();
    expect(kept.length).toBe(MAX_PENDING);
    expect(kept).not.toContain(states[0]);
    expect(kept).not.toContain(states[1]);
    expect(kept.at(-1)).toBe(states.at(-1));
    const evicted = await call('/v1/auth/oidc/callback', { code: 'x', state: states[0] });
    expect(evicted.body.error).toBe('oauth state mismatch');
  });
});
