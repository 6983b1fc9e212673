import * as z from 'zod';
import { badRequest, unauthorized } from '../core/errors.js';
import type { OperationContext } from './legacy-operation.js';
import type { Principal } from '../security/principal.js';
import { publishAuthFailed } from '../security/access.js';
import { defineOperation, type Operation } from './legacy-operation.js';
import { API_VERSION } from '../../api/versions.js';
import { permissionsOf, rbacMatrix } from '../security/rbac.js';

/** Sessions, the caller's own identity and the RBAC matrix (api-behaviour §5.4, §8.5, §10.1). */
export const authOperations: Operation[] = [
  defineOperation({
    id: 'getAuthConfig',
    group: 'auth',
    summary: 'Sign-in options, session lifetime and the read-auth flags',
    method: 'GET',
    path: '/v1/auth/config',
    access: { kind: 'read' },
    cli: ['auth', 'config'],
    handler: (_input, ctx) => {
      const s = ctx.services;
      return {
        version: API_VERSION,
        oidc_login_enabled: s.oidc?.loginEnabled() ?? false,
        issuer: s.oidc?.issuer() ?? null,
        session_ttl_secs: s.settings.session.ttlSecs,
        session_refresh_window_secs: s.settings.session.refreshWindowSecs,
        read_auth: { require_sensitive_reads: s.settings.requireAuthReads, require_all_reads: s.settings.requireAuthAllReads },
      };
    },
  }),
  defineOperation({
    id: 'getAuthSession',
    group: 'auth',
    summary: 'The calling principal',
    method: 'GET',
    path: '/v1/auth/session',
    // Who am I: meaningless without a principal, so anonymous is 401 whatever the read policy.
    access: { kind: 'sensitive-read' },
    cli: ['auth', 'session'],
    handler: (_input, ctx) => {
      const p = requirePrincipal(ctx);
      return { version: API_VERSION, key_id: p.key_id, role: p.role, tenant_id: p.tenant_id, auth_kind: p.auth_kind, user_id: p.user_id };
    },
  }),
  defineOperation<{ token?: string | undefined }>({
    id: 'refreshSession',
    group: 'auth',
    summary: 'Exchange a session token (valid, or expired within the refresh window) for a new one',
    method: 'POST',
    path: '/v1/auth/session/refresh',
    access: { kind: 'public' },
    cli: ['auth', 'refresh'],
    body: z.lazy(() => z.object({ token: z.string().max(8192).optional() })),
    handler: async ({ body }, ctx) => {
      if (!body.token) throw badRequest('token required');
      const s = ctx.services;
      // The refresh re-reads the directory (or the key store): a removed or disabled user is 401, and
      // the new token carries the current role (docs/security.md §3).
      const refreshed = await s.credentials.sessions.refresh(body.token);
      return { version: API_VERSION, ok: true, session_token: refreshed.session_token, expires_in_secs: refreshed.expires_in_secs };
    },
  }),
  defineOperation({
    id: 'getRbacMe',
    group: 'rbac',
    summary: 'The calling principal and the actions its role grants',
    method: 'GET',
    path: '/v1/rbac/me',
    access: { kind: 'sensitive-read' },
    cli: ['rbac', 'me'],
    handler: (_input, ctx) => {
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
    },
  }),
  defineOperation({
    id: 'getRbacMatrix',
    group: 'rbac',
    summary: 'Roles and the actions each grants',
    method: 'GET',
    path: '/v1/rbac/matrix',
    access: { kind: 'read' },
    rpc: { name: 'GetRbacMatrix', request: 'Empty' },
    cli: ['rbac', 'matrix'],
    handler: () => ({ version: API_VERSION, matrix: rbacMatrix() }),
  }),
];

/** The caller of a who-am-I route; anonymous is 401 with its AuthFailed event, as `enforceAccess` does. */
function requirePrincipal(ctx: OperationContext): Principal {
  if (ctx.principal) return ctx.principal;
  publishAuthFailed(ctx.services.bus, 'missing_or_invalid_token', null, { operation: 'whoami' });
  throw unauthorized();
}
