import type { Role } from './rbac.js';

/** The authenticated caller. Anonymous requests carry no principal at all. */
export interface Principal {
  key_id: string;
  role: Role;
  tenant_id: string;
  auth_kind: 'api_key' | 'session' | 'local' | 'relay';
  /**
   * Set for sessions (the identity-provider subject), for the local CLI user, and for a relay caller
   * when the relay named one (its on-behalf-of token's `user_id`).
   */
  user_id: string | null;
}
