import { assertCanGrant } from '../access.js';
import type { Principal } from '../principal.js';
import type { IssuedSession, SessionTokens } from '../sessions.js';
import { entryRole, type DirectoryUser, type UserDirectory } from '../users.js';
import { toDirectoryEntry } from './directory-entries.js';
import type { CallbackInput, OidcService } from './oidc-service.js';

export interface SignInOutcome {
  userinfo: Record<string, unknown>;
  users_created: number;
  users_updated: number;
  users_skipped: number;
  last_sync_at: string;
  /** The directory user signed in; null when the entry maps to guest (skipped). */
  user: DirectoryUser | null;
  /** Our own session for that user; null when the user is guest-mapped or disabled. */
  session: IssuedSession | null;
  refused: 'guest' | 'disabled' | null;
}

/**
 * Callback → directory → session (docs/security-oidc.md §3 steps 3–5): exchange the code (PKCE, docs/wire-decisions.md D7), map the
 * userinfo to a directory entry, import it with the group→role map, and issue our session for the
 * imported user with its directory role (snake_case, docs/wire-decisions.md D8). Guest-mapped and disabled users get no
 * session; the caller decides how to answer.
 */
export async function completeSignIn(
  deps: { oidc: OidcService; users: UserDirectory; sessions: SessionTokens },
  input: CallbackInput,
  options: { requireEnabled: boolean; /** An administrator's directory import: the role written must be one it can grant. */ granter?: Principal | null },
): Promise<SignInOutcome> {
  const userinfo = await deps.oidc.exchange(input, options);
  const entry = toDirectoryEntry(userinfo);
  if (options.granter !== undefined) assertCanGrant(options.granter, [entryRole(entry, deps.oidc.groupRoleMap)]);
  const imported = deps.oidc.importDirectory(deps.users, [entry]);
  const user = imported.users[0] ?? null;
  const refused = user === null ? 'guest' : !user.enabled ? 'disabled' : null;
  const session = user && refused === null ? await deps.sessions.issue(user.user_id, user.role) : null;
  return {
    userinfo,
    users_created: imported.created,
    users_updated: imported.updated,
    users_skipped: imported.skipped,
    last_sync_at: imported.last_sync_at,
    user,
    session,
    refused,
  };
}
