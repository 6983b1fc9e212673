import type { Principal } from '../../security/principal.js';

/** Per-request values the pipeline hands to route handlers. */
export interface HttpEnv {
  Variables: {
    correlationId: string;
    /** The standard headers of this request's response (content type, CORS, correlation id). */
    responseHeaders: Record<string, string>;
    principal: Principal | null;
  };
}
