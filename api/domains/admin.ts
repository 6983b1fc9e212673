import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Administrator-only management of API keys and the operator directory (docs/security.md §2
 * "Managing keys", §3 "Sessions follow the directory"). Every operation that writes a role is
 * `grantsRole`: its handler refuses a role the caller could not grant (docs/security.md §5 "No escalation").
 */

const keyBody = z.lazy(() => z.object({
  role: z.string().max(64),
  label: z.string().max(200).optional(),
  tenant_id: z.string().max(200).optional(),
}));
const keyPatch = z.lazy(() => z.object({ role: z.string().max(64).optional(), label: z.string().max(200).optional() }));
const userBody = z.lazy(() => z.object({
  user_id: z.string().min(1, 'missing user_id').max(200),
  display_name: z.string().min(1).max(200),
  email: z.string().max(320).nullable().optional(),
  role: z.string().max(64),
  api_key_id: z.string().max(200).nullable().optional(),
  enabled: z.boolean().optional(),
}));
const userPatch = z.lazy(() => z.object({
  display_name: z.string().min(1).max(200).optional(),
  email: z.string().max(320).nullable().optional(),
  role: z.string().max(64).optional(),
  api_key_id: z.string().max(200).nullable().optional(),
  enabled: z.boolean().optional(),
}));

export const listAdminApiKeys = defineSpec({
  id: 'listAdminApiKeys',
  group: 'admin',
  summary: 'API keys (never their tokens)',
  method: 'GET',
  path: '/v1/admin/api-keys',
  access: { kind: 'admin' },
  rpc: { name: 'ListAdminApiKeys', request: 'Empty' },
  jsonRpc: true,
  cli: ['admin', 'api-keys', 'list'],
});

export const createAdminApiKey = defineSpec<z.infer<typeof keyBody>>({
  id: 'createAdminApiKey',
  group: 'admin',
  summary: 'Create an API key; the token is returned once',
  method: 'POST',
  path: '/v1/admin/api-keys',
  access: { kind: 'admin' },
  rpc: { name: 'CreateAdminApiKey', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['admin', 'api-keys', 'create'],
  body: keyBody,
  grantsRole: true,
});

export const patchAdminApiKey = defineSpec<z.infer<typeof keyPatch>>({
  id: 'patchAdminApiKey',
  group: 'admin',
  summary: "Change a key's role or label",
  method: 'PATCH',
  path: '/v1/admin/api-keys/{id}',
  access: { kind: 'admin' },
  rpc: { name: 'PatchAdminApiKey', request: 'JsonBodyRequest', bodyParams: { id: 'key_id' } },
  jsonRpc: true,
  cli: ['admin', 'api-keys', 'update'],
  body: keyPatch,
  grantsRole: true,
});

export const deleteAdminApiKey = defineSpec({
  id: 'deleteAdminApiKey',
  group: 'admin',
  summary: 'Revoke an API key',
  method: 'DELETE',
  path: '/v1/admin/api-keys/{id}',
  access: { kind: 'admin' },
  rpc: { name: 'DeleteAdminApiKey', request: 'JsonBodyRequest', bodyParams: { id: 'key_id' } },
  jsonRpc: true,
  cli: ['admin', 'api-keys', 'revoke'],
});

export const listAdminUsers = defineSpec({
  id: 'listAdminUsers',
  group: 'admin',
  summary: 'The operator directory',
  method: 'GET',
  path: '/v1/admin/users',
  access: { kind: 'admin' },
  rpc: { name: 'ListAdminUsers', request: 'Empty' },
  jsonRpc: true,
  cli: ['admin', 'users', 'list'],
});

export const createAdminUser = defineSpec<z.infer<typeof userBody>>({
  id: 'createAdminUser',
  group: 'admin',
  summary: 'Add an operator to the directory',
  method: 'POST',
  path: '/v1/admin/users',
  access: { kind: 'admin' },
  rpc: { name: 'CreateAdminUser', request: 'JsonBodyRequest' },
  jsonRpc: true,
  cli: ['admin', 'users', 'create'],
  body: userBody,
  grantsRole: true,
});

export const patchAdminUser = defineSpec<z.infer<typeof userPatch>>({
  id: 'patchAdminUser',
  group: 'admin',
  summary: "Change an operator's role, name, email or enabled flag",
  method: 'PATCH',
  path: '/v1/admin/users/{id}',
  access: { kind: 'admin' },
  rpc: { name: 'PatchAdminUser', request: 'JsonBodyRequest', bodyParams: { id: 'user_id' } },
  jsonRpc: true,
  cli: ['admin', 'users', 'update'],
  body: userPatch,
  grantsRole: true,
});

export const deleteAdminUser = defineSpec({
  id: 'deleteAdminUser',
  group: 'admin',
  summary: 'Remove an operator from the directory',
  method: 'DELETE',
  path: '/v1/admin/users/{id}',
  access: { kind: 'admin' },
  rpc: { name: 'DeleteAdminUser', request: 'JsonBodyRequest', bodyParams: { id: 'user_id' } },
  jsonRpc: true,
  cli: ['admin', 'users', 'remove'],
});

export const adminSpecs = [
  listAdminApiKeys,
  createAdminApiKey,
  patchAdminApiKey,
  deleteAdminApiKey,
  listAdminUsers,
  createAdminUser,
  patchAdminUser,
  deleteAdminUser,
];
