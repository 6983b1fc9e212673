/**
 * Machine codes of the error envelope `{ok:false, error, code}` (docs/api.md § Errors). Clients map
 * them onto their error classes; the agent's `ApiError` carries one.
 */
export const ERROR_CODES = [
  'bad_request',
  'conflict',
  'unsupported_api_version',
  'unauthorized',
  'forbidden',
  'tenant_mismatch',
  'not_found',
  'payload_too_large',
  'rate_limited',
  'internal_error',
  'upstream_error',
  /** The relay: the addressed agent is known but its presence says offline (503). */
  'agent_offline',
  /** The relay: the agent did not answer before the deadline (504). */
  'gateway_timeout',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];
