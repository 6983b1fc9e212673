/**
 * Error classes of the client, mapped from the HTTP status and the envelope's `code`
 * (`{ok:false, error, code}`, docs/api.md § Errors; the codes are api/errors.ts `ERROR_CODES`).
 *
 * | Class | When |
 * |---|---|
 * | `ConnectionError` | the request never got an answer (network failure, DNS, refused, aborted), or the relay/agent said the target is unreachable: 502 `upstream_error`, 503 `agent_offline`, 504 `gateway_timeout` |
 * | `PermissionError` | 401 `unauthorized`, 403 `forbidden` / `tenant_mismatch` |
 * | `ReadinessError` | 400/409/422 from a readiness operation (operation id containing `Readiness`, e.g. `runReadiness`, `evaluateProgramReadiness`) |
 * | `VerificationError` | 400/409/422 from a verification operation (id containing `verify`/`Verify`/`Assure`, e.g. `verifyProgramHardware`, `evaluateProgramAssure`) |
 * | `SecurityError` | 400/409/422 from a trust or secret operation (group `trust`, paths under `/v1/trust`, `/v1/secrets`, `/trust`) |
 * | `ValidationError` | any other 400 `bad_request`, 413 `payload_too_large`, 422 |
 * | `SvcError` | everything else (404 `not_found`, 409 `conflict`, 429 `rate_limited`, 500 …); the base of all |
 */
export class SvcError extends Error {
  /** HTTP status; 0 when no answer was received. */
  readonly status: number;
  /** The envelope's machine code (`bad_request`, `not_found`, …), or `connection_failed` without an answer. */
  readonly code: string;
  /** The parsed answer body (the envelope), or its text. */
  readonly body: unknown;
  /** The operation id of the call, when it was one of the contract's. */
  readonly operation: string | undefined;

  constructor(message: string, init: { status: number; code: string; body?: unknown; operation?: string | undefined; cause?: unknown }) {
    super(message, init.cause !== undefined ? { cause: init.cause } : undefined);
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.body = init.body;
    this.operation = init.operation;
  }
}

export class ValidationError extends SvcError {}
export class ReadinessError extends SvcError {}
export class VerificationError extends SvcError {}
export class SecurityError extends SvcError {}
export class ConnectionError extends SvcError {}
export class PermissionError extends SvcError {}

const STATUS_CODES: Record<number, string> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  429: 'rate_limited',
  500: 'internal_error',
  502: 'upstream_error',
  503: 'agent_offline',
  504: 'gateway_timeout',
};

const CONNECTION_CODES = new Set(['upstream_error', 'agent_offline', 'gateway_timeout']);

/** The error class for an answer (status, envelope code) of an operation (id, path, group). */
export function errorClassFor(
  status: number,
  code: string,
  op?: { id?: string | undefined; path?: string | undefined; group?: string | undefined },
): typeof SvcError {
  if (CONNECTION_CODES.has(code) || status === 502 || status === 503 || status === 504) return ConnectionError;
  if (status === 401 || status === 403 || code === 'unauthorized' || code === 'forbidden' || code === 'tenant_mismatch') return PermissionError;
  const id = op?.id ?? '';
  const path = op?.path ?? '';
  if (status === 400 || status === 409 || status === 422) {
    if (/Readiness/.test(id)) return ReadinessError;
    if (/^verify|Verify|Assure/.test(id)) return VerificationError;
    if (op?.group === 'trust' || /^\/v1\/(trust|secrets)(\/|$)|\/trust$/.test(path)) return SecurityError;
  }
  if (status === 400 || status === 413 || status === 422 || code === 'bad_request' || code === 'payload_too_large') return ValidationError;
  return SvcError;
}

/** Builds the error of a non-2xx answer. */
export function errorFromResponse(
  status: number,
  body: unknown,
  op?: { id?: string | undefined; path?: string | undefined; group?: string | undefined },
): SvcError {
  const envelope = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof envelope.code === 'string' ? envelope.code : (STATUS_CODES[status] ?? `http_${status}`);
  const message =
    typeof envelope.error === 'string'
      ? envelope.error
      : typeof envelope.message === 'string'
        ? envelope.message
        : typeof body === 'string' && body
          ? body.slice(0, 500)
          : `HTTP ${status}`;
  const Cls = errorClassFor(status, code, op);
  return new Cls(message, { status, code, body, operation: op?.id });
}
