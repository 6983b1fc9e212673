import {
  completeAdminOidcCallback,
  completeOidcSignIn,
  createAdminOidcAuthorizeUrl,
  createOidcAuthorizeUrl,
  getAdminOidc,
  putAdminOidc,
  syncAdminOidcDirectory,
} from '../../../api/domains/oidc.js';
import { API_VERSION } from '../../../api/versions.js';
import { badRequest, forbidden } from '../../core/errors.js';
import { handlersFor } from '../../core/handlers.js';
import { assertCanGrant, publishAuthFailed } from '../access.js';
import { parseRole } from '../rbac.js';
import { entryRole } from '../users.js';
import { readDirectoryFile, toDirectoryEntry } from './directory-entries.js';
import { completeSignIn } from './sign-in.js';

/**
 * OIDC settings, sign-in and the directory import (docs/security-oidc.md). The admin routes are
 * administrator-only and the role-writing ones refuse a role the caller could not grant
 * (docs/security.md §5 "No escalation"); the login POSTs are public, protected by the server-side
 * state and PKCE verifier (docs/wire-decisions.md D7).
 */
const on = handlersFor(['oidc', 'users', 'credentials', 'settings', 'bus']);

export const oidcHandlers = [
  on(getAdminOidc, (_input, ctx) => ({ version: API_VERSION, ...ctx.services.oidc.view() })),
  on(putAdminOidc, ({ body }, ctx) => {
    if (body.group_role_map) assertCanGrant(ctx.principal, Object.values(body.group_role_map).map((r) => parseRole(r)), ctx.services);
    return { version: API_VERSION, ok: true, ...ctx.services.oidc.configure(body) };
  }),
  on(createOidcAuthorizeUrl, async ({ body }, ctx) => ({
    version: API_VERSION,
    ...(await ctx.services.oidc.authorize({ redirectUri: body.redirect_uri, requireEnabled: true })),
    pkce: true,
  })),
  on(completeOidcSignIn, async ({ body }, ctx) => {
    const s = ctx.services;
    const out = await completeSignIn({ oidc: s.oidc, users: s.users, sessions: s.credentials.sessions }, body, { requireEnabled: true });
    if (!out.session || !out.user) {
      publishAuthFailed(s.bus, 'insufficient_role', null, {
        operation: 'completeOidcSignIn',
        user_id: out.user?.user_id ?? toDirectoryEntry(out.userinfo).user_id,
        detail: out.refused === 'disabled' ? 'user disabled in the directory' : 'user maps to guest',
      });
      throw forbidden();
    }
    return {
      version: API_VERSION,
      ok: true,
      session_token: out.session.session_token,
      expires_in_secs: out.session.expires_in_secs,
      auth_kind: 'session',
      user_id: out.user.user_id,
      role: out.user.role,
      users_created: out.users_created,
      users_updated: out.users_updated,
    };
  }),
  on(createAdminOidcAuthorizeUrl, async ({ body }, ctx) => ({
    version: API_VERSION,
    ...(await ctx.services.oidc.authorize({ redirectUri: body.redirect_uri, requireEnabled: false })),
    pkce: true,
  })),
  on(completeAdminOidcCallback, async ({ body }, ctx) => {
    const s = ctx.services;
    const out = await completeSignIn({ oidc: s.oidc, users: s.users, sessions: s.credentials.sessions }, body, { requireEnabled: false, granter: ctx.principal });
    return {
      version: API_VERSION,
      ok: true,
      userinfo: out.userinfo,
      session_token: out.session?.session_token ?? null,
      session_role: out.session ? out.user!.role : null,
      session_user_id: out.session ? out.user!.user_id : null,
      expires_in_secs: out.session?.expires_in_secs ?? null,
      last_sync_at: out.last_sync_at,
      users_created: out.users_created,
      users_updated: out.users_updated,
      users_skipped: out.users_skipped,
    };
  }),
  on(syncAdminOidcDirectory, ({ body }, ctx) => {
    const s = ctx.services;
    let entries;
    if (body.directory !== undefined) entries = body.directory.map((e) => toDirectoryEntry(e));
    else if (s.settings.oidc.directoryJson) entries = readDirectoryFile(s.settings.oidc.directoryJson);
    else throw badRequest('directory required: send {"directory":[…]} or set SVC_OIDC_DIRECTORY_JSON');
    // Every role the import would write, checked before anything is written.
    const map = s.oidc.groupRoleMap;
    assertCanGrant(ctx.principal, entries.map((e) => entryRole(e, map)).filter((r) => r !== 'guest'), s);
    const result = s.oidc.importDirectory(s.users, entries);
    return {
      version: API_VERSION,
      ok: true,
      users_created: result.created,
      users_updated: result.updated,
      users_skipped: result.skipped,
      last_sync_at: result.last_sync_at,
    };
  }),
];
