import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../helpers/agent-harness.js';

const ADMIN = 'j'.repeat(64);
const OPERATOR = 'operator-token-for-jsonrpc';
const FOREIGN = 'foreign-tenant-token';
const M = (rpc: string) => `svc.v1.ControlCenter/${rpc}`;

let a: RunningAgent;
beforeAll(async () => {
  a = await startAgent({ env: { SVC_API_KEY: ADMIN } });
  a.agent.services.credentials.addVerifier((t) => {
    if (t === OPERATOR) return { key_id: 'op-key', role: 'operator', tenant_id: 'default', auth_kind: 'api_key', user_id: null };
    if (t === FOREIGN) return { key_id: 'far-key', role: 'administrator', tenant_id: 'elsewhere', auth_kind: 'api_key', user_id: null };
    return null;
  });
});
afterAll(() => a.close());

function rpc(body: unknown, token?: string, headers: Record<string, string> = {}) {
  return a.json('/v1/rpc', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('POST /v1/rpc (docs/grpc.md, docs/wire-decisions.md D5)', () => {
  it('ListAdminApiKeys: 401 without a credential, 403 for an operator, 200 with result.keys for an administrator', async () => {
    const anon = await rpc({ method: M('ListAdminApiKeys') });
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ ok: false, error: 'unauthorized', code: 'unauthorized', method: M('ListAdminApiKeys') });
    const op = await rpc({ method: M('ListAdminApiKeys') }, OPERATOR);
    expect(op.status).toBe(403);
    expect(op.body).toMatchObject({ ok: false, error: 'forbidden', code: 'forbidden' });
    const admin = await rpc({ method: M('ListAdminApiKeys'), params: { body_json: '{}', query: '', entity_id: '' } }, ADMIN);
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({ version: 'v1', method: M('ListAdminApiKeys') });
    expect(admin.body.result.keys).toEqual([expect.objectContaining({ key_id: 'env-default', role: 'administrator' })]);
  });

  it('unknown, unexposed and missing methods are 400', async () => {
    for (const method of [M('NoSuchRpc'), 'svc.v1.Other/ListAdminApiKeys', M('Health'), M('StreamEvents'), M('GetTenant')]) {
      const r = await rpc({ method }, ADMIN);
      expect(r.status, method).toBe(400);
      expect(r.body).toMatchObject({ ok: false, error: `unknown rpc method: ${method}`, code: 'bad_request' });
    }
    expect(await rpc({ params: {} }, ADMIN)).toMatchObject({ status: 400, body: { error: 'missing method', code: 'bad_request' } });
    expect(await rpc('{"method":', ADMIN)).toMatchObject({ status: 400, body: { code: 'bad_request', error: expect.stringMatching(/^invalid JSON body: /) } });
  });

  it('params: body_json must be a JSON object in a string; unknown params are refused, empty extras ignored', async () => {
    const malformed = await rpc({ method: M('CreateAdminUser'), params: { body_json: '{"user_id": ' } }, ADMIN);
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toMatch(/^invalid JSON body: /);
    const notString = await rpc({ method: M('CreateAdminUser'), params: { body_json: { user_id: 'x' } } }, ADMIN);
    expect(notString.body).toMatchObject({ error: "invalid params: 'body_json' must be a string holding the JSON request body", code: 'bad_request' });
    const extra = await rpc({ method: M('ListAdminUsers'), params: { device_id: 'x' } }, ADMIN);
    expect(extra.body.error).toBe("invalid params: ListAdminUsers takes no params; unexpected 'device_id'");
    const invalid = await rpc({ method: M('CreateAdminUser'), params: { body_json: '{"display_name":"No Id","role":"operator"}' } }, ADMIN);
    expect(invalid.body).toMatchObject({ error: 'missing user_id', code: 'bad_request' });
  });

  it('admin RPCs that address one record read its id from body_json', async () => {
    const created = await rpc({ method: M('CreateAdminUser'), params: { body_json: JSON.stringify({ user_id: 'amy', display_name: 'Amy', role: 'operator' }) } }, ADMIN);
    expect(created.body.result.user).toMatchObject({ user_id: 'amy', role: 'operator' });
    const patched = await rpc({ method: M('PatchAdminUser'), params: { body_json: JSON.stringify({ user_id: 'amy', role: 'auditor' }) } }, ADMIN);
    expect(patched.body.result.user).toMatchObject({ user_id: 'amy', role: 'auditor' });
    const noId = await rpc({ method: M('DeleteAdminUser'), params: { body_json: '{}' } }, ADMIN);
    expect(noId).toMatchObject({ status: 400, body: { error: 'user_id required in body_json' } });
    const removed = await rpc({ method: M('DeleteAdminUser'), params: { body_json: '{"user_id":"amy"}' } }, ADMIN);
    expect(removed.body.result).toEqual({ version: 'v1', ok: true, removed: 'amy' });
    const again = await rpc({ method: M('DeleteAdminUser'), params: { body_json: '{"user_id":"amy"}' } }, ADMIN);
    expect(again).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('echoes jsonrpc and id for JSON-RPC 2.0 clients, on success and on error', async () => {
    const ok = await rpc({ jsonrpc: '2.0', id: 7, method: M('ListAdminUsers') }, ADMIN);
    expect(ok.body).toMatchObject({ jsonrpc: '2.0', id: 7, version: 'v1', method: M('ListAdminUsers'), result: { count: expect.any(Number) } });
    const err = await rpc({ jsonrpc: '2.0', id: 'abc', method: M('Nope') }, ADMIN);
    expect(err.body).toMatchObject({ jsonrpc: '2.0', id: 'abc', ok: false, code: 'bad_request' });
  });

  it('audits inner mutations as POST /v1/rpc naming the method and its parity route', async () => {
    await rpc({ method: M('CreateAdminApiKey'), params: { body_json: '{"role":"operator","label":"via rpc"}' } }, ADMIN);
    await rpc({ method: M('ListAdminApiKeys') }, ADMIN);
    const audit = await a.json('/v1/audit/mutations', { headers: { authorization: `Bearer ${ADMIN}` } });
    const viaRpc = audit.body.audit.records.map((r: any) => JSON.parse(r.payload)).filter((p: any) => p.path === '/v1/rpc');
    expect(viaRpc.some((p: any) => p.rpc === M('CreateAdminApiKey') && p.parity_method === 'POST' && p.parity_path === '/v1/admin/api-keys' && p.status === 200)).toBe(true);
    expect(viaRpc.some((p: any) => p.rpc === M('ListAdminApiKeys'))).toBe(false);
  });

  it('the outer pipeline still applies: tenant, version header', async () => {
    expect(await rpc({ method: M('ListAdminUsers') }, FOREIGN)).toMatchObject({ status: 403, body: { code: 'tenant_mismatch' } });
    expect(await rpc({ method: M('ListAdminUsers') }, ADMIN, { 'x-svc-api-version': 'v9' })).toMatchObject({ status: 400, body: { code: 'unsupported_api_version' } });
  });
});
