import type { Principal } from '../../security/principal.js';

/** Per-request values the pipeline hands to route handlers. */
export interface HttpEnv {
  Variables: {
    correlationId: string;
    principal: Principal | null;
  };
}
