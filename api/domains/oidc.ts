import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * OIDC sign-in (authorization code + PKCE S256; docs/security-oidc.md §3, docs/wire-decisions.md D7)
 * and the directory import. Every admin route here is administrator-only, reads and writes alike: the
 * settings name the identity provider and the group→role map, so whoever writes them decides who signs
 * in with which role, and the import creates users. The reference lets Deploy write them, which let a
 * developer make itself administrator (docs/security-oidc.md "Who may configure OIDC"). The login POSTs
 * are public by design (docs/security.md §5, "Access rules") and protected by the server-side state and
 * PKCE verifier instead (docs/security-oidc.md §6).
 */

/**
 * One directory entry as an identity provider's userinfo or a directory file spells it
 * (docs/security-oidc.md §3 step 4): `sub` or `user_id`, `name` or `preferred_username` (or
 * `display_name`), `email`, `groups[]`, optional `role`. Unknown fields are ignored.
 */
export const directoryEntrySchema = z.lazy(() => z.object({
  user_id: z.string().optional(),
  sub: z.string().optional(),
  display_name: z.string().optional(),
  name: z.string().optional(),
  preferred_username: z.string().optional(),
  email: z.string().nullable().optional(),
  groups: z.union([z.array(z.string()), z.string()]).nullable().optional(),
  role: z.string().nullable().optional(),
}));
export type RawDirectoryEntry = z.infer<typeof directoryEntrySchema>;

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

export const getAdminOidc = defineSpec({
  id: 'getAdminOidc',
  group: 'admin',
  summary: 'OIDC sign-in settings (the client secret and the pending authorization are never shown)',
  method: 'GET',
  path: '/v1/admin/oidc',
  access: { kind: 'admin' },
  cli: ['admin', 'oidc', 'show'],
  response: settingsResponse,
});

export const putAdminOidc = defineSpec<z.infer<typeof settingsBody>>({
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
});

export const createOidcAuthorizeUrl = defineSpec<z.infer<typeof authorizeBody>>({
  id: 'createOidcAuthorizeUrl',
  group: 'auth',
  summary: 'Start OIDC sign-in: authorization URL with state and PKCE S256 challenge (requires OIDC enabled)',
  method: 'POST',
  path: '/v1/auth/oidc/authorize-url',
  access: { kind: 'public' },
  cli: ['auth', 'oidc', 'authorize-url'],
  body: authorizeBody,
  response: authorizeResponse,
});

export const completeOidcSignIn = defineSpec<z.infer<typeof callbackBody>>({
  id: 'completeOidcSignIn',
  group: 'auth',
  summary: 'Finish OIDC sign-in: exchange code (with the PKCE verifier), import the user, issue a session',
  method: 'POST',
  path: '/v1/auth/oidc/callback',
  access: { kind: 'public' },
  cli: ['auth', 'oidc', 'callback'],
  body: callbackBody,
});

export const createAdminOidcAuthorizeUrl = defineSpec<z.infer<typeof authorizeBody>>({
  id: 'createAdminOidcAuthorizeUrl',
  group: 'admin',
  summary: 'Start an OIDC authorization for a directory import (OIDC need not be enabled)',
  method: 'POST',
  path: '/v1/admin/oidc/authorize-url',
  access: { kind: 'admin' },
  cli: ['admin', 'oidc', 'authorize-url'],
  body: authorizeBody,
  response: authorizeResponse,
});

export const completeAdminOidcCallback = defineSpec<z.infer<typeof callbackBody>>({
  id: 'completeAdminOidcCallback',
  group: 'admin',
  summary: 'Finish an OIDC authorization: directory import of the user, and a session when the user may sign in',
  method: 'POST',
  path: '/v1/admin/oidc/oauth/callback',
  access: { kind: 'admin' },
  cli: ['admin', 'oidc', 'callback'],
  body: callbackBody,
  grantsRole: true,
});

export const syncAdminOidcDirectory = defineSpec<z.infer<typeof syncBody>>({
  id: 'syncAdminOidcDirectory',
  group: 'admin',
  summary: 'Directory import from body.directory, or from the file named by SVC_OIDC_DIRECTORY_JSON',
  method: 'POST',
  path: '/v1/admin/oidc/sync',
  access: { kind: 'admin' },
  cli: ['admin', 'oidc', 'sync'],
  body: syncBody,
  grantsRole: true,
});

export const oidcSpecs = [
  getAdminOidc,
  putAdminOidc,
  createOidcAuthorizeUrl,
  completeOidcSignIn,
  createAdminOidcAuthorizeUrl,
  completeAdminOidcCallback,
  syncAdminOidcDirectory,
];
