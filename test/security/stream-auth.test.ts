import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';
import { openStream } from '../helpers/stream-client.js';

/**
 * Findings: a WebSocket upgrade with an invalid credential was served as an anonymous stream (it must
 * be 401, as on REST mutations; a foreign tenant's 403), and the CEF audit export printed
 * `anonymous` for platform events that name their actor (docs/security.md §6, §10).
 */
const ADMIN = 'admin-stream-auth-0123456789abcdef';
const bearer = (t: string) => ({ Authorization: `Bearer ${t}` });

/** The answer to an upgrade: 101 (then closed), or the refusal's status and body. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve({ status: 101, body: null });
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    ws.once('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}

describe('WebSocket upgrade refuses presented but invalid or foreign credentials', () => {
  let a: RunningAgent;
  let stream: string;
  const keys: Record<string, { token: string; key_id: string }> = {};

  beforeAll(async () => {
    a = await startAgent({ env: { SVC_API_KEY: ADMIN } });
    stream = `${a.wsUrl}/v1/stream/telemetry`;
    for (const [name, body] of [['dev', { role: 'developer' }], ['foreign', { role: 'operator', tenant_id: 'other' }], ['revoked', { role: 'operator' }]] as const) {
      const r = await a.json('/v1/admin/api-keys', { method: 'POST', headers: { ...bearer(ADMIN), 'content-type': 'application/json' }, body: JSON.stringify(body) });
      keys[name] = { token: r.body.token, key_id: r.body.key_id };
    }
    expect((await a.json(`/v1/admin/api-keys/${keys['revoked']!.key_id}`, { method: 'DELETE', headers: bearer(ADMIN) })).status).toBe(200);
  });
  afterAll(async () => {
    await a?.close();
  });

  it('valid credentials and no credential at all still open the stream (reads are open by default)', async () => {
    expect((await upgrade(stream)).status).toBe(101);
    expect((await upgrade(stream, bearer(keys['dev']!.token))).status).toBe(101);
    expect((await upgrade(`${stream}?access_token=${keys['dev']!.token}`)).status).toBe(101);
  });

  it('an unknown, revoked, forged or malformed credential is 401, by header or by access_token', async () => {
    const forged = await new SignJWT({ role: 'administrator', tenant_id: 'default' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject('root')
      .setIssuer('svc-control-center')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode('.svc-control-center'));
    const cases: Array<[string, Record<string, string>, string]> = [
      ['unknown header', bearer('f'.repeat(64)), ''],
      ['revoked header', bearer(keys['revoked']!.token), ''],
      ['forged session header', bearer(forged), ''],
      ['not a bearer value', { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, ''],
      ['unknown access_token', {}, `?access_token=${'f'.repeat(64)}`],
      ['revoked access_token', {}, `?access_token=${keys['revoked']!.token}`],
      ['forged access_token', {}, `?access_token=${forged}`],
    ];
    for (const [name, headers, query] of cases) {
      const r = await upgrade(stream + query, headers);
      // Status only: the node adapter answers a refused upgrade without a body.
      expect(r.status, name).toBe(401);
    }
  });

  it("a foreign tenant's key is 403 tenant_mismatch, by header or by access_token", async () => {
    for (const r of [await upgrade(stream, bearer(keys['foreign']!.token)), await upgrade(`${stream}?access_token=${keys['foreign']!.token}`)]) {
      expect(r.status).toBe(403);
    }
  });

  it('refusals are AuthFailed events on the stream, without the token', async () => {
    const watcher = await openStream(a.wsUrl, bearer(keys['dev']!.token));
    try {
      const bad = 'e'.repeat(64);
      expect((await upgrade(stream, bearer(bad))).status).toBe(401);
      const f = await watcher.waitFor((x) => JSON.stringify(x).includes('missing_or_invalid_token') && JSON.stringify(x).includes('/v1/stream/telemetry'));
      expect(JSON.stringify(f)).not.toContain(bad);
      expect((await upgrade(stream, bearer(keys['foreign']!.token))).status).toBe(403);
      await watcher.waitFor((x) => JSON.stringify(x).includes('tenant_mismatch'));
    } finally {
      watcher.close();
    }
  });

  it('the CEF export names the actor of platform events, not anonymous', async () => {
    const prov = await a.json('/v1/admin/api-keys', { method: 'POST', headers: { ...bearer(ADMIN), 'content-type': 'application/json' }, body: JSON.stringify({ role: 'supervisor' }) });
    const reg = await a.json('/v1/entities/register', {
      method: 'POST',
      headers: { ...bearer(prov.body.token), 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'forklift-9', entity_type: { custom: 'forklift' }, display_name: 'Forklift 9' }),
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(200);
    const exp = await a.json('/v1/audit/mutations/export?format=cef', { headers: bearer(ADMIN) });
    expect(exp.status).toBe(200);
    const lines = (exp.body.content as string).split('\n').filter(Boolean);
    const created = lines.find((l) => l.includes('|EntityCreated|'));
    expect(created).toBeDefined();
    expect(created).toContain(`suser=${prov.body.key_id}`);
    expect(created).not.toContain('suser=anonymous');
    // The API mutation of the same request names the same key.
    expect(lines.find((l) => l.includes('request=/v1/entities/register'))).toContain(`suser=${prov.body.key_id}`);
  });
});
