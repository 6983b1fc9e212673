import * as z from 'zod';
import { badRequest, forbidden } from '../core/errors.js';
import { defineOperation, type Operation } from './legacy-operation.js';
import { API_VERSION } from '../../api/versions.js';
import { assertCanGrant, publishAuthFailed } from '../security/access.js';
import { parseRole } from '../security/rbac.js';
import { entryRole } from '../security/users.js';
import { directoryEntrySchema, readDirectoryFile, toDirectoryEntry } from '../security/oidc/directory-entries.js';
import { completeSignIn } from '../security/oidc/sign-in.js';

/**
 * OIDC sign-in (authorization code + PKCE S256; api-behaviour §8.6, D7) and the directory import.
 * Every admin route here is administrator-only, reads and writes alike: the settings name the
 * identity provider and the group→role map, so whoever writes them decides who signs in with which
 * role, and the import creates users. The reference lets Deploy write them, which let a developer
 * make itself administrator (docs/security-oidc.md "Who may configure OIDC"). The login POSTs are
 * public by design (§1.1) and protected by the server-side state and PKCE verifier instead.
 */

const settingsBody = z.lazy(() => z.object({
  enabled: z.boolean().optional(),
  issuer: z.string().max(2048).optional(),
  client_id: z.string().max(1024).optional(),
  client_secret: z.string().max(4096).optional(),
  group_role_map: z.record(z.string(), z.string()).optional(),
  redirect_uri: z.string().max(2048).optional(),
}));

const authorizeBody = z.lazy(() => z.object({
  redirect_uri: z.string().max(2048).optional(),
}));

const callbackBody = z.lazy(() => z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  iss: z.string().max(2048).optional(),
}));

const syncBody = z.lazy(() => z.object({
  directory: z.array(directoryEntrySchema).optional(),
}));

const settingsResponse = z.lazy(() => z.object({
  version: z.literal('v1'),
  enabled: z.boolean(),
  issuer: z.string(),
  client_id: z.string(),
  client_secret_set: z.boolean(),
  group_role_map: z.record(z.string(), z.string()),
  last_sync_at: z.string().nullable(),
  redirect_uri: z.string(),
  oauth_ready: z.boolean(),
  persist_path: z.string(),
}));

const authorizeResponse = z.lazy(() => z.object({
  version: z.literal('v1'),
  authorize_url: z.string(),
  state: z.string(),
  redirect_uri: z.string(),
  pkce: z.literal(true),
}));

export const oidcOperations: Operation[] = [
  defineOperation({
    id: 'getAdminOidc',
    group: 'admin',
    summary: 'OIDC sign-in settings (the client secret and the pending authorization are never shown)',
    method: 'GET',
    path: '/v1/admin/oidc',
    access: { kind: 'admin' },
    cli: ['admin', 'oidc', 'show'],
    response: settingsResponse,
    handler: (_input, ctx) => ({ version: API_VERSION, ...ctx.services.oidc.view() }),
  }),
  defineOperation<z.infer<typeof settingsBody>>({
    id: 'putAdminOidc',
    group: 'admin',
    summary: 'Configure OIDC sign-in (issuer https://, or http:// on loopback; an empty secret keeps the stored one)',
    method: 'PUT',
    path: '/v1/admin/oidc',
    access: { kind: 'admin' },
    cli: ['admin', 'oidc', 'set'],
    body: settingsBody,
    grantsRole: true,
    response: z.lazy(() => settingsResponse.unwrap().extend({ ok: z.literal(true) })),
    handler: ({ body }, ctx) => {
      if (body.group_role_map) assertCanGrant(ctx.principal, Object.values(body.group_role_map).map((r) => parseRole(r)), ctx.services);
      return { version: API_VERSION, ok: true, ...ctx.services.oidc.configure(body) };
    },
  }),
  defineOperation<z.infer<typeof authorizeBody>>({
    id: 'createOidcAuthorizeUrl',
    group: 'auth',
    summary: 'Start OIDC sign-in: authorization URL with state and PKCE S256 challenge (requires OIDC enabled)',
    method: 'POST',
    path: '/v1/auth/oidc/authorize-url',
    access: { kind: 'public' },
    cli: ['auth', 'oidc', 'authorize-url'],
    body: authorizeBody,
    response: authorizeResponse,
    handler: async ({ body }, ctx) => ({
      version: API_VERSION,
      ...(await ctx.services.oidc.authorize({ redirectUri: body.redirect_uri, requireEnabled: true })),
      pkce: true,
    }),
  }),
  defineOperation<z.infer<typeof callbackBody>>({
    id: 'completeOidcSignIn',
    group: 'auth',
    summary: 'Finish OIDC sign-in: exchange code (with the PKCE verifier), import the user, issue a session',
    method: 'POST',
    path: '/v1/auth/oidc/callback',
    access: { kind: 'public' },
    cli: ['auth', 'oidc', 'callback'],
    body: callbackBody,
    handler: async ({ body }, ctx) => {
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
    },
  }),
  defineOperation<z.infer<typeof authorizeBody>>({
    id: 'createAdminOidcAuthorizeUrl',
    group: 'admin',
    summary: 'Start an OIDC authorization for a directory import (OIDC need not be enabled)',
    method: 'POST',
    path: '/v1/admin/oidc/authorize-url',
    access: { kind: 'admin' },
    cli: ['admin', 'oidc', 'authorize-url'],
    body: authorizeBody,
    response: authorizeResponse,
    handler: async ({ body }, ctx) => ({
      version: API_VERSION,
      ...(await ctx.services.oidc.authorize({ redirectUri: body.redirect_uri, requireEnabled: false })),
      pkce: true,
    }),
  }),
  defineOperation<z.infer<typeof callbackBody>>({
    id: 'completeAdminOidcCallback',
    group: 'admin',
    summary: 'Finish an OIDC authorization: directory import of the user, and a session when the user may sign in',
    method: 'POST',
    path: '/v1/admin/oidc/oauth/callback',
    access: { kind: 'admin' },
    cli: ['admin', 'oidc', 'callback'],
    body: callbackBody,
    grantsRole: true,
    handler: async ({ body }, ctx) => {
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
    },
  }),
  defineOperation<z.infer<typeof syncBody>>({
    id: 'syncAdminOidcDirectory',
    group: 'admin',
    summary: 'Directory import from body.directory, or from the file named by SVC_OIDC_DIRECTORY_JSON',
    method: 'POST',
    path: '/v1/admin/oidc/sync',
    access: { kind: 'admin' },
    cli: ['admin', 'oidc', 'sync'],
    body: syncBody,
    grantsRole: true,
    handler: ({ body }, ctx) => {
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
    },
  }),
];
