import type { Settings } from '../settings/settings.js';

/** Sensitive read prefixes (api-behaviour §6): a plain prefix match, `/v1/fleet` also covers `/v1/fleets`. */
export const SENSITIVE_READ_PREFIXES = [
  '/v1/dashboard',
  '/v1/devices',
  '/v1/fleet',
  '/v1/programs/source',
  '/v1/secrets',
  '/v1/audit',
  '/v1/compliance',
  '/v1/admin',
  '/v1/entities',
  '/v1/robots',
  '/v1/config',
  '/v1/sre',
  '/v1/operator',
  '/v1/drift',
  '/v1/ota',
  '/v1/trust',
  '/v1/recovery',
  '/v1/autonomy',
  '/v1/decisions',
  '/v1/humans',
  '/v1/reports',
  '/v1/digital-thread',
  '/v1/executive',
  '/v1/rbac/me',
  '/v1/auth/session',
] as const;

/** Reads that no policy ever gates. */
export const ALWAYS_OPEN_READS = new Set(['/v1/health', '/v1/version', '/v1/instance', '/v1/tenant', '/v1/openapi.json']);

export function isSensitiveRead(path: string): boolean {
  return SENSITIVE_READ_PREFIXES.some((p) => path.startsWith(p));
}

/** Whether a read of `path` needs a principal under the configured policy. */
export function readNeedsPrincipal(path: string, settings: Pick<Settings, 'requireAuthReads' | 'requireAuthAllReads'>): boolean {
  if (ALWAYS_OPEN_READS.has(path)) return false;
  if (settings.requireAuthAllReads) return true;
  return settings.requireAuthReads && isSensitiveRead(path);
}
