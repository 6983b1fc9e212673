import type { Access } from '../core/operation.js';
import type { Settings } from '../settings/settings.js';

/**
 * Whether a read needs a principal under the configured read-auth policy (docs/security.md §6). The
 * sensitivity is a property of each operation (`access` in the operation table), not of its path, so
 * a new route is as closed as its declaration says, and one that says nothing is a sensitive read.
 */
export function readNeedsPrincipal(access: Access, settings: Pick<Settings, 'requireAuthReads' | 'requireAuthAllReads'>): boolean {
  switch (access.kind) {
    case 'public':
      return false;
    case 'read':
      return settings.requireAuthAllReads;
    default:
      // Sensitive reads, and anything stricter (whose own check then refuses with 401 or 403).
      return settings.requireAuthReads || settings.requireAuthAllReads;
  }
}
