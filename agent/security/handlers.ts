import {
  createAdminApiKey,
  createAdminUser,
  deleteAdminApiKey,
  deleteAdminUser,
  listAdminApiKeys,
  listAdminUsers,
  patchAdminApiKey,
  patchAdminUser,
} from '../../api/domains/admin.js';
import { getAuthConfig, getAuthSession, getRbacMatrix, getRbacMe, refreshSession } from '../../api/domains/auth.js';
import { API_VERSION } from '../../api/versions.js';
import { badRequest, unauthorized } from '../core/errors.js';
import { handlersFor } from '../core/handlers.js';
import type { HandlerContext } from '../core/operation.js';
import type { Services } from '../runtime/services.js';
import { assertCanGrant, publishAuthFailed } from './access.js';
import { assignableRole } from './api-keys.js';
import type { Principal } from './principal.js';
import { permissionsOf, rbacMatrix } from './rbac.js';

/** Sessions, the caller's own identity and the RBAC matrix (docs/security.md §3, §5). */
const onAuth = handlersFor(['settings', 'oidc', 'credentials', 'bus']);

/** The caller of a who-am-I route; anonymous is 401 with its AuthFailed event, as `enforceAccess` does. */
function requirePrincipal(ctx: HandlerContext<Pick<Services, 'bus'>>): Principal {
  if (ctx.principal) return ctx.principal;
  publishAuthFailed(ctx.services.bus, 'missing_or_invalid_token', null, { operation: 'whoami' });
  throw unauthorized();
}

export const authHandlers = [
  onAuth(getAuthConfig, (_input, ctx) => {
    const s = ctx.services;
    return {
      version: API_VERSION,
      oidc_login_enabled: s.oidc?.loginEnabled() ?? false,
      issuer: s.oidc?.issuer() ?? null,
      session_ttl_secs: s.settings.session.ttlSecs,
      session_refresh_window_secs: s.settings.session.refreshWindowSecs,
      read_auth: { require_sensitive_reads: s.settings.requireAuthReads, require_all_reads: s.settings.requireAuthAllReads },
    };
  }),
  onAuth(getAuthSession, (_input, ctx) => {
    const p = requirePrincipal(ctx);
    return { version: API_VERSION, key_id: p.key_id, role: p.role, tenant_id: p.tenant_id, auth_kind: p.auth_kind, user_id: p.user_id };
  }),
  onAuth(refreshSession, async ({ body }, ctx) => {
    if (!body.token) throw badRequest('token required');
    // The refresh re-reads the directory (or the key store): a removed or disabled user is 401, and
    // the new token carries the current role (docs/security.md §3).
    const refreshed = await ctx.services.credentials.sessions.refresh(body.token);
    return { version: API_VERSION, ok: true, session_token: refreshed.session_token, expires_in_secs: refreshed.expires_in_secs };
  }),
  onAuth(getRbacMe, (_input, ctx) => {
    const p = requirePrincipal(ctx);
    return {
      version: API_VERSION,
      key_id: p.key_id,
      role: p.role,
      tenant_id: p.tenant_id,
      auth_kind: p.auth_kind,
      user_id: p.user_id,
      permissions: permissionsOf(p.role),
    };
  }),
  onAuth(getRbacMatrix, () => ({ version: API_VERSION, matrix: rbacMatrix() })),
];

/**
 * Administrator-only management of API keys and the operator directory (docs/security.md §2). The
 * role-writing handlers refuse a role the caller could not grant (docs/security.md §5 "No escalation");
 * `bus` carries the AuthFailed event of a refused grant.
 */
const onAdmin = handlersFor(['credentials', 'users', 'bus']);

export const adminHandlers = [
  onAdmin(listAdminApiKeys, (_i, ctx) => {
    const keys = ctx.services.credentials.keys;
    const list = keys.list();
    return { version: API_VERSION, keys: list, count: list.length, persist_path: keys.file };
  }),
  onAdmin(createAdminApiKey, ({ body }, ctx) => {
    assertCanGrant(ctx.principal, [assignableRole(body.role)], ctx.services);
    const { record, token } = ctx.services.credentials.keys.create(body);
    return {
      version: API_VERSION,
      ok: true,
      key_id: record.key_id,
      token,
      role: record.role,
      label: record.label,
      tenant_id: record.tenant_id,
      note: 'Store the token now — it cannot be retrieved again.',
    };
  }),
  onAdmin(patchAdminApiKey, ({ body, params }, ctx) => {
    if (body.role !== undefined) assertCanGrant(ctx.principal, [assignableRole(body.role)], ctx.services);
    const r = ctx.services.credentials.keys.update(params['id']!, body);
    return { version: API_VERSION, ok: true, key_id: r.key_id, role: r.role, label: r.label };
  }),
  onAdmin(deleteAdminApiKey, ({ params }, ctx) => {
    ctx.services.credentials.keys.revoke(params['id']!);
    return { version: API_VERSION, ok: true, revoked: params['id'] };
  }),
  onAdmin(listAdminUsers, (_i, ctx) => {
    const users = ctx.services.users.list();
    return { version: API_VERSION, users, count: users.length, persist_path: ctx.services.users.file };
  }),
  onAdmin(createAdminUser, ({ body }, ctx) => {
    assertCanGrant(ctx.principal, [assignableRole(body.role)], ctx.services);
    return { version: API_VERSION, ok: true, user: ctx.services.users.create(body) };
  }),
  onAdmin(patchAdminUser, ({ body, params }, ctx) => {
    if (body.role !== undefined) assertCanGrant(ctx.principal, [assignableRole(body.role)], ctx.services);
    return { version: API_VERSION, ok: true, user: ctx.services.users.update(params['id']!, body) };
  }),
  onAdmin(deleteAdminUser, ({ params }, ctx) => {
    ctx.services.users.remove(params['id']!);
    return { version: API_VERSION, ok: true, removed: params['id'] };
  }),
];
