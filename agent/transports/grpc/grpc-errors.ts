import { Metadata, ServerError, Status } from 'nice-grpc';
import { ApiError, type ErrorCode } from '../../core/errors.js';
import { SUPPORTED_API_VERSIONS } from '../../runtime/versions.js';

/** REST error code → gRPC status (D16, api-behaviour §13.3). */
const STATUS_BY_CODE: Record<ErrorCode, Status> = {
  bad_request: Status.INVALID_ARGUMENT,
  unsupported_api_version: Status.INVALID_ARGUMENT,
  unauthorized: Status.UNAUTHENTICATED,
  forbidden: Status.PERMISSION_DENIED,
  tenant_mismatch: Status.PERMISSION_DENIED,
  not_found: Status.NOT_FOUND,
  conflict: Status.FAILED_PRECONDITION,
  payload_too_large: Status.RESOURCE_EXHAUSTED,
  rate_limited: Status.RESOURCE_EXHAUSTED,
  internal_error: Status.INTERNAL,
  upstream_error: Status.UNAVAILABLE,
};

export function grpcStatusOf(err: ApiError): Status {
  return STATUS_BY_CODE[err.code] ?? (err.status >= 500 ? Status.INTERNAL : Status.UNKNOWN);
}

/** The status message: the REST message, except the two the reference words for gRPC (§4.4, §13.3). */
export function grpcMessageOf(err: ApiError): string {
  if (err.code === 'unsupported_api_version') {
    return `unsupported api version '${String(err.extra['requested'] ?? '')}'; supported: ${SUPPORTED_API_VERSIONS.join(', ')}`;
  }
  if (err.code === 'rate_limited') return `rate limit exceeded; retry after ${String(err.extra['retry_after_secs'])}s`;
  return err.message;
}

/**
 * Any failure of a call → a real gRPC status (never OK with an error payload). The REST code travels
 * in the `svc-error-code` trailer and the REST error envelope in `svc-error-json`, so a client can
 * show exactly what REST would have said; a rate limit adds `retry-after` (seconds).
 */
export function toServerError(err: unknown, trailer: Metadata, log: (line: string) => void): ServerError {
  if (err instanceof ServerError) return err;
  let api: ApiError;
  if (err instanceof ApiError) api = err;
  else {
    log(`internal error in gRPC call: ${(err as Error)?.stack ?? String(err)}`);
    api = new ApiError(500, 'internal_error', 'internal error');
  }
  trailer.set('svc-error-code', api.code);
  trailer.set('svc-error-json', JSON.stringify(api.toEnvelope()));
  const retry = api.extra['retry_after_secs'];
  if (typeof retry === 'number') trailer.set('retry-after', String(retry));
  return new ServerError(grpcStatusOf(api), grpcMessageOf(api));
}
