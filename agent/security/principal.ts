import type { Role } from './rbac.js';

/** The authenticated caller. Anonymous requests carry no principal at all. */
export interface Principal {
  key_id: string;
  role: Role;
  tenant_id: string;
  auth_kind: 'api_key' | 'session' | 'local';
  /** Set for sessions (the identity-provider subject) and for the local CLI user. */
  user_id: string | null;
}
