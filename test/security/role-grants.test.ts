import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessOf, type Access, type OperationSpec as Operation } from '../../api/spec.js';
import { ApiError } from '../../agent/core/errors.js';
import { SPECS } from '../../api/index.js';
import { ACTIONS, canGrant, permissionsOf, ROLES, roleAllows, type Role } from '../../agent/security/rbac.js';
import { startAgent, tempDir, type RunningAgent } from '../helpers/agent-harness.js';
import { signInAtProvider, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-test-provider.js';

/**
 * Finding: a developer key could `PUT /v1/admin/oidc` with `group_role_map {"x":"administrator"}`
 * pointing at a provider it controls, then sign in as administrator; `POST /v1/admin/oidc/sync`
 * created administrators. Rule now (docs/security.md §5 "No escalation"): no principal can grant a
 * role above its own, and every operation that writes a role is marked `grantsRole` in the
 * operation table. This file derives its cases from that table.
 */

/** Body fields that carry a role, directly or as entries that do (directory import). */
const ROLE_FIELDS = new Set(['role', 'roles', 'group_role_map', 'directory', 'users']);

/** Field names anywhere in a zod (v4) schema, following lazy, optional, arrays, unions and records. */
function fieldNames(schema: unknown, seen = new Set<unknown>()): Set<string> {
  const out = new Set<string>();
  const walk = (s: any) => {
    if (!s || seen.has(s)) return;
    seen.add(s);
    const def = s._zod?.def ?? s.def;
    if (!def) return;
    switch (def.type) {
      case 'lazy':
        return walk(def.getter());
      case 'object':
        for (const [k, v] of Object.entries(def.shape as Record<string, unknown>)) {
          out.add(k);
          walk(v);
        }
        return;
      case 'array':
        return walk(def.element);
      case 'optional':
      case 'nullable':
      case 'default':
      case 'readonly':
      case 'nonoptional':
        return walk(def.innerType);
      case 'union':
        return (def.options as unknown[]).forEach(walk);
      case 'record':
        return walk(def.valueType);
      case 'pipe':
        walk(def.in);
        return walk(def.out);
    }
  };
  walk(schema);
  return out;
}

/** The least-privileged role that may call an operation at all (administrator for admin routes). */
function lowestCaller(access: Access): Role | null {
  if (access.kind === 'admin') return 'administrator';
  if (access.kind === 'action') {
    const able = ROLES.filter((r) => roleAllows(r, access.action));
    return able.sort((a, b) => permissionsOf(a).length - permissionsOf(b).length)[0] ?? null;
  }
  return 'guest';
}

const marked = SPECS.filter((o) => o.grantsRole);

describe('canGrant: a role may grant only roles whose actions are a subset of its own', () => {
  it('follows the matrix', () => {
    for (const g of ROLES) expect(canGrant(g, 'auditor')).toBe(true);
    for (const g of ROLES) expect(canGrant(g, 'administrator')).toBe(g === 'administrator');
    expect(canGrant('supervisor', 'developer')).toBe(true);
    expect(canGrant('supervisor', 'supervisor')).toBe(true);
    expect(canGrant('developer', 'supervisor')).toBe(false);
    expect(canGrant('developer', 'operator')).toBe(false); // Shutdown and Recover are not the developer's
    expect(canGrant('operator', 'safety_officer')).toBe(false); // Approve
    for (const g of ROLES) for (const r of ROLES) expect(canGrant(g, r)).toBe(permissionsOf(r).every((a) => permissionsOf(g).includes(a)));
    expect(ACTIONS.length).toBe(8);
  });
});

describe('every operation that writes a role is marked grantsRole', () => {
  it('an operation whose body has a role-carrying field is marked', () => {
    const unmarked = SPECS.filter((o) => o.body && [...fieldNames(o.body)].some((f) => ROLE_FIELDS.has(f)) && !o.grantsRole).map((o) => o.id);
    expect(unmarked).toEqual([]);
    // The walker sees through z.lazy: sanity-check it on known operations.
    const byId = (id: string) => SPECS.find((o) => o.id === id)!;
    expect(fieldNames(byId('createAdminApiKey').body).has('role')).toBe(true);
    expect(fieldNames(byId('putAdminOidc').body).has('group_role_map')).toBe(true);
    expect(fieldNames(byId('syncAdminOidcDirectory').body).has('directory')).toBe(true);
  });

  it('the marked set is the one we reviewed, and each is administrator-only', () => {
    expect(marked.map((o) => o.id).sort()).toEqual(
      ['completeAdminOidcCallback', 'createAdminApiKey', 'createAdminUser', 'patchAdminApiKey', 'patchAdminUser', 'putAdminOidc', 'syncAdminOidcDirectory'].sort(),
    );
  });

  it('each marked handler itself refuses a grant above its caller (defence in depth behind the route rule)', async () => {
    const a = await startAgent({ env: { SVC_API_KEY: 'x'.repeat(40) } });
    try {
      a.agent.services.users.create({ user_id: 'target', display_name: 'T', role: 'auditor' });
      const { record } = a.agent.services.credentials.keys.create({ role: 'auditor' });
      const supervisor = { key_id: 'k', role: 'supervisor' as const, tenant_id: 'default', auth_kind: 'api_key' as const, user_id: null };
      const bodies: Record<string, { body: unknown; params?: Record<string, string> }> = {
        createAdminApiKey: { body: { role: 'administrator' } },
        patchAdminApiKey: { body: { role: 'admin' }, params: { id: record.key_id } },
        createAdminUser: { body: { user_id: 'new', display_name: 'N', role: 'Administrator' } },
        patchAdminUser: { body: { role: 'administrator' }, params: { id: 'target' } },
        putAdminOidc: { body: { group_role_map: { x: 'administrator' } } },
        syncAdminOidcDirectory: { body: { directory: [{ user_id: 'mallory', role: 'administrator' }] } },
      };
      for (const op of marked) {
        if (op.id === 'completeAdminOidcCallback') continue; // needs a provider round trip: covered over HTTP below
        const c = bodies[op.id];
        expect(c, `add an escalation case for ${op.id}`).toBeDefined();
        let err: unknown = null;
        try {
          // The bound handler directly, past the kernel's access rule, to reach the handler's own check.
          const bound = a.agent.services.operations.find((o) => o.id === op.id)!;
          await bound.handler({ body: c!.body, query: {}, params: c!.params ?? {} }, { principal: supervisor, correlationId: 't', transport: 'rest' });
        } catch (e) {
          err = e;
        }
        expect(err, op.id).toBeInstanceOf(ApiError);
        expect((err as ApiError).status).toBe(403);
        expect((err as ApiError).toEnvelope()).toEqual({ ok: false, code: 'forbidden', error: "a supervisor caller cannot grant the administrator role (its actions exceed the caller's)" });
      }
      expect(a.agent.services.users.get('new')).toBeUndefined();
      expect(a.agent.services.users.get('mallory')).toBeUndefined();
      expect(a.agent.services.users.get('target')!.role).toBe('auditor');
      expect(a.agent.services.credentials.keys.list().find((k) => k.key_id === record.key_id)!.role).toBe('auditor');
      expect(a.agent.services.oidc.groupRoleMap).toEqual({});
    } finally {
      await a.close();
    }
  });
});

describe('escalation over HTTP through every marked operation', () => {
  const ADMIN = 'admin-role-grants-0123456789abcdef';
  const CALLBACK = '/admin/oauth/oidc/callback';
  let a: RunningAgent;
  let idp: TestOidcProvider;
  let stateDir: string;
  const tokens: Partial<Record<Role, string>> = {};
  const call = async (method: string, p: string, token: string | undefined, body?: unknown) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token) headers['authorization'] = `Bearer ${token}`;
    const res = await a.fetch(p, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    stateDir = tempDir('svc-grants-');
    a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    idp = await startOidcProvider({ redirectUri: `${a.baseUrl}${CALLBACK}`, accounts: { boss: { name: 'Boss', groups: ['root-group'] } } });
    for (const role of ROLES.filter((r) => r !== 'guest' && r !== 'administrator')) {
      const r = await call('POST', '/v1/admin/api-keys', ADMIN, { role });
      tokens[role] = r.body.token;
    }
    tokens.administrator = ADMIN;
    expect((await call('POST', '/v1/admin/users', ADMIN, { user_id: 'target', display_name: 'T', role: 'auditor' })).status).toBe(200);
  });
  afterAll(async () => {
    await a?.close();
    await idp?.close();
  });

  /** An attempt to make an administrator through `op`, as the holder of `token`. */
  async function attempt(op: Operation, token: string | undefined, n: number) {
    switch (op.id) {
      case 'createAdminApiKey':
        return call('POST', '/v1/admin/api-keys', token, { role: 'administrator' });
      case 'patchAdminApiKey': {
        const victim = await call('POST', '/v1/admin/api-keys', ADMIN, { role: 'auditor' });
        return call('PATCH', `/v1/admin/api-keys/${victim.body.key_id}`, token, { role: 'administrator' });
      }
      case 'createAdminUser':
        return call('POST', '/v1/admin/users', token, { user_id: `made-${n}`, display_name: 'M', role: 'administrator' });
      case 'patchAdminUser':
        return call('PATCH', '/v1/admin/users/target', token, { role: 'administrator' });
      case 'putAdminOidc':
        return call('PUT', '/v1/admin/oidc', token, {
          enabled: true,
          issuer: idp.issuer,
          client_id: idp.clientId,
          client_secret: idp.clientSecret,
          redirect_uri: `${a.baseUrl}${CALLBACK}`,
          group_role_map: { 'root-group': 'administrator' },
        });
      case 'syncAdminOidcDirectory':
        return call('POST', '/v1/admin/oidc/sync', token, { directory: [{ user_id: `synced-${n}`, role: 'administrator' }] });
      case 'completeAdminOidcCallback': {
        // The map must already send root-group to administrator (set by the administrator's PUT).
        const start = await call('POST', '/v1/admin/oidc/authorize-url', ADMIN, {});
        expect(start.status).toBe(200);
        const back = await signInAtProvider(start.body.authorize_url, 'boss', idp.issuer);
        return call('POST', '/v1/admin/oidc/oauth/callback', token, { code: back.searchParams.get('code'), state: back.searchParams.get('state') });
      }
      default:
        throw new Error(`no escalation case for ${op.id}: add one`);
    }
  }

  it('every non-administrator caller gets 403 forbidden and changes nothing; an administrator succeeds', async () => {
    // putAdminOidc first, so that the callback case has the administrator mapping in place.
    const ordered = [...marked].sort((x, y) => (x.id === 'putAdminOidc' ? -1 : y.id === 'putAdminOidc' ? 1 : 0));
    let n = 0;
    for (const op of ordered) {
      const lowest = lowestCaller(accessOf(op))!;
      const callers = ROLES.filter((r) => r !== 'guest' && !canGrant(r, 'administrator'));
      // The lowest caller, and every other role below administrator.
      for (const role of new Set<Role>([...(canGrant(lowest, 'administrator') ? [] : [lowest]), ...callers])) {
        const r = await attempt(op, tokens[role], ++n);
        expect(r.status, `${op.id} as ${role}`).toBe(403);
        expect(r.body).toMatchObject({ ok: false, code: 'forbidden' });
      }
      expect((await attempt(op, undefined, ++n)).status, `${op.id} anonymous`).toBe(401);
      const ok = await attempt(op, ADMIN, ++n);
      expect(ok.status, `${op.id} as administrator: ${JSON.stringify(ok.body)}`).toBe(200);
      if (op.id === 'completeAdminOidcCallback') expect(ok.body.session_role).toBe('administrator');
    }
    // Persisted: only the administrator's writes made administrators.
    await a.close();
    a = await startAgent({ stateDir, env: { SVC_API_KEY: ADMIN } });
    const users = JSON.parse(fs.readFileSync(path.join(stateDir, 'admin-users.json'), 'utf8')) as Array<{ user_id: string; role: string }>;
    const admins = users.filter((u) => u.role === 'administrator').map((u) => u.user_id);
    // One created, one patched, one synced, one signed in: each by the administrator's own call.
    expect(admins.length).toBe(4);
    const keys = JSON.parse(fs.readFileSync(path.join(stateDir, 'api-keys.json'), 'utf8')) as Array<{ role: string }>;
    expect(keys.filter((k) => k.role === 'administrator').length).toBe(2);
  });
});
