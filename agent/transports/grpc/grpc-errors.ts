import { Metadata, ServerError, Status } from 'nice-grpc';
import { ApiError, type ErrorCode } from '../../core/errors.js';
import { SUPPORTED_API_VERSIONS } from '../../../api/versions.js';

/** REST error code → gRPC status (docs/wire-decisions.md D16; table in docs/grpc.md § Status codes). */
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
  agent_offline: Status.UNAVAILABLE,
  gateway_timeout: Status.DEADLINE_EXCEEDED,
};

export function grpcStatusOf(err: ApiError): Status {
  return STATUS_BY_CODE[err.code] ?? (err.status >= 500 ? Status.INTERNAL : Status.UNKNOWN);
}

/** Longest quoted value (an echoed id, path or name) kept whole in an error message. */
export const MAX_ECHOED_CHARS = 128;
/** Longest status message / `error` text sent in a trailer. */
export const MAX_MESSAGE_CHARS = 1024;
/** Longest `svc-error-json` trailer; a larger envelope is cut down to `{ok, error, code}`. */
export const MAX_ERROR_JSON_BYTES = 4096;

/** Cuts `text` to `max` characters ending in `…`, never between the halves of a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Bounds an error message: a quoted value longer than `MAX_ECHOED_CHARS` (how handlers echo ids:
 * `entity '<id>' not found`) keeps its head and an ellipsis, so the rest of the sentence survives; then
 * the whole message is capped. Why: the message and the envelope travel as HTTP/2 trailers, and a
 * 64 KiB id echoed twice exceeded the header-list limit, leaving the call without a status and the
 * connection stalled (docs/grpc.md, "Errors").
 */
export function boundMessage(message: string): string {
  const quoted = message.replace(/'([^']*)'/g, (whole, inner: string) => (inner.length > MAX_ECHOED_CHARS ? `'${truncate(inner, MAX_ECHOED_CHARS + 1)}'` : whole));
  return truncate(quoted, MAX_MESSAGE_CHARS);
}

/**
 * JSON whose text is printable ASCII: every character outside U+0020–U+007E is written as a `\uXXXX`
 * escape (JSON.stringify already escapes controls below U+0020). Any JSON parser reads back the same
 * value. Why: gRPC metadata values that are not `-bin` must be printable ASCII; a raw `ä` made the
 * trailer invalid and turned the status into UNKNOWN.
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The REST envelope for the `svc-error-json` trailer: ASCII-safe, strings bounded, total bounded. */
export function errorJsonTrailer(err: ApiError): string {
  const envelope = err.toEnvelope();
  const bounded: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(envelope)) bounded[k] = typeof v === 'string' ? (k === 'error' ? boundMessage(v) : truncate(v, MAX_ECHOED_CHARS * 2)) : v;
  const text = asciiJson(bounded);
  if (text.length <= MAX_ERROR_JSON_BYTES) return text;
  return asciiJson({ ok: false, error: truncate(boundMessage(err.message), 512), code: err.code });
}

/** The status message: the REST message, except the two worded for gRPC (docs/grpc.md, "Authentication and metadata" and "Status codes"). */
export function grpcMessageOf(err: ApiError): string {
  if (err.code === 'unsupported_api_version') {
    return boundMessage(`unsupported api version '${String(err.extra['requested'] ?? '')}'; supported: ${SUPPORTED_API_VERSIONS.join(', ')}`);
  }
  if (err.code === 'rate_limited') return `rate limit exceeded; retry after ${String(err.extra['retry_after_secs'])}s`;
  // grpc-js percent-encodes the status message, so any character is safe there; only its size is bounded.
  return boundMessage(err.message);
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
  trailer.set('svc-error-json', errorJsonTrailer(api));
  const retry = api.extra['retry_after_secs'];
  if (typeof retry === 'number') trailer.set('retry-after', String(retry));
  return new ServerError(grpcStatusOf(api), grpcMessageOf(api));
}
