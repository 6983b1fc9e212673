import * as z from 'zod';
import { defineOperation, type Operation } from './legacy-operation.js';
import { API_VERSION } from '../../api/versions.js';
import { assertCanGrant } from '../security/access.js';
import { assignableRole } from '../security/api-keys.js';

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

/** Administrator-only management of API keys and the operator directory (api-behaviour §10.12). */
export const adminOperations: Operation[] = [
  defineOperation({
    id: 'listAdminApiKeys',
    group: 'admin',
    summary: 'API keys (never their tokens)',
    method: 'GET',
    path: '/v1/admin/api-keys',
    access: { kind: 'admin' },
    rpc: { name: 'ListAdminApiKeys', request: 'Empty' },
    jsonRpc: true,
    cli: ['admin', 'api-keys', 'list'],
    handler: (_i, ctx) => {
      const keys = ctx.services.credentials.keys;
      const list = keys.list();
      return { version: API_VERSION, keys: list, count: list.length, persist_path: keys.file };
    },
  }),
  defineOperation<z.infer<typeof keyBody>>({
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
    handler: ({ body }, ctx) => {
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
    },
  }),
  defineOperation<z.infer<typeof keyPatch>>({
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
    handler: ({ body, params }, ctx) => {
      if (body.role !== undefined) assertCanGrant(ctx.principal, [assignableRole(body.role)], ctx.services);
      const r = ctx.services.credentials.keys.update(params['id']!, body);
      return { version: API_VERSION, ok: true, key_id: r.key_id, role: r.role, label: r.label };
    },
  }),
  defineOperation({
    id: 'deleteAdminApiKey',
    group: 'admin',
    summary: 'Revoke an API key',
    method: 'DELETE',
    path: '/v1/admin/api-keys/{id}',
    access: { kind: 'admin' },
    rpc: { name: 'DeleteAdminApiKey', request: 'JsonBodyRequest', bodyParams: { id: 'key_id' } },
    jsonRpc: true,
    cli: ['admin', 'api-keys', 'revoke'],
    handler: ({ params }, ctx) => {
      ctx.services.credentials.keys.revoke(params['id']!);
      return { version: API_VERSION, ok: true, revoked: params['id'] };
    },
  }),
  defineOperation({
    id: 'listAdminUsers',
    group: 'admin',
    summary: 'The operator directory',
    method: 'GET',
    path: '/v1/admin/users',
    access: { kind: 'admin' },
    rpc: { name: 'ListAdminUsers', request: 'Empty' },
    jsonRpc: true,
    cli: ['admin', 'users', 'list'],
    handler: (_i, ctx) => {
      const users = ctx.services.users.list();
      return { version: API_VERSION, users, count: users.length, persist_path: ctx.services.users.file };
    },
  }),
  defineOperation<z.infer<typeof userBody>>({
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
    handler: ({ body }, ctx) => {
      assertCanGrant(ctx.principal, [assignableRole(body.role)], ctx.services);
      return { version: API_VERSION, ok: true, user: ctx.services.users.create(body) };
    },
  }),
  defineOperation<z.infer<typeof userPatch>>({
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
    handler: ({ body, params }, ctx) => {
      if (body.role !== undefined) assertCanGrant(ctx.principal, [assignableRole(body.role)], ctx.services);
      return { version: API_VERSION, ok: true, user: ctx.services.users.update(params['id']!, body) };
    },
  }),
  defineOperation({
    id: 'deleteAdminUser',
    group: 'admin',
    summary: 'Remove an operator from the directory',
    method: 'DELETE',
    path: '/v1/admin/users/{id}',
    access: { kind: 'admin' },
    rpc: { name: 'DeleteAdminUser', request: 'JsonBodyRequest', bodyParams: { id: 'user_id' } },
    jsonRpc: true,
    cli: ['admin', 'users', 'remove'],
    handler: ({ params }, ctx) => {
      ctx.services.users.remove(params['id']!);
      return { version: API_VERSION, ok: true, removed: params['id'] };
    },
  }),
];
