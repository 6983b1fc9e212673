import * as z from 'zod';
import { defineSpec } from '../spec.js';

/** Sessions, the caller's own identity and the RBAC matrix (docs/security.md §3, §5). */
export const getAuthConfig = defineSpec({
  id: 'getAuthConfig',
  group: 'auth',
  summary: 'Sign-in options, session lifetime and the read-auth flags',
  method: 'GET',
  path: '/v1/auth/config',
  access: { kind: 'read' },
  cli: ['auth', 'config'],
});

export const getAuthSession = defineSpec({
  id: 'getAuthSession',
  group: 'auth',
  summary: 'The calling principal',
  method: 'GET',
  path: '/v1/auth/session',
  // Who am I: meaningless without a principal, so anonymous is 401 whatever the read policy.
  access: { kind: 'sensitive-read' },
  cli: ['auth', 'session'],
});

export const refreshSession = defineSpec<{ token?: string | undefined }>({
  id: 'refreshSession',
  group: 'auth',
  summary: 'Exchange a session token (valid, or expired within the refresh window) for a new one',
  method: 'POST',
  path: '/v1/auth/session/refresh',
  access: { kind: 'public' },
  cli: ['auth', 'refresh'],
  body: z.lazy(() => z.object({ token: z.string().max(8192).optional() })),
});

export const getRbacMe = defineSpec({
  id: 'getRbacMe',
  group: 'rbac',
  summary: 'The calling principal and the actions its role grants',
  method: 'GET',
  path: '/v1/rbac/me',
  access: { kind: 'sensitive-read' },
  cli: ['rbac', 'me'],
});

export const getRbacMatrix = defineSpec({
  id: 'getRbacMatrix',
  group: 'rbac',
  summary: 'Roles and the actions each grants',
  method: 'GET',
  path: '/v1/rbac/matrix',
  access: { kind: 'read' },
  rpc: { name: 'GetRbacMatrix', request: 'Empty' },
  cli: ['rbac', 'matrix'],
});

export const authSpecs = [getAuthConfig, getAuthSession, refreshSession, getRbacMe, getRbacMatrix];
