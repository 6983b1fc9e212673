import type { ErrorCode } from '../../api/errors.js';

export type { ErrorCode } from '../../api/errors.js';

/**
 * The one error type that crosses from domain code to transports. Each transport maps `status` and
 * `code` onto its own wire form (HTTP status + envelope, gRPC status + trailer, CLI exit code).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Extra fields merged into the error envelope (e.g. `retry_after_secs`). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toEnvelope(): Record<string, unknown> {
    return { ok: false, error: this.message, ...this.extra, code: this.code };
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) =>
  new ApiError(400, 'bad_request', message, extra);
export const notFound = (message = 'not found') => new ApiError(404, 'not_found', message);
export const conflict = (message: string) => new ApiError(409, 'conflict', message);
export const unauthorized = () => new ApiError(401, 'unauthorized', 'unauthorized');
export const forbidden = (message = 'forbidden') => new ApiError(403, 'forbidden', message);
export const tenantMismatch = () => new ApiError(403, 'tenant_mismatch', 'tenant mismatch');
export const payloadTooLarge = () => new ApiError(413, 'payload_too_large', 'payload too large');
/** 429 with the seconds to wait (docs/security.md §8); every transport draws on the same buckets. */
export const rateLimited = (retryAfterSecs: number) =>
  new ApiError(429, 'rate_limited', 'rate limit exceeded', { retry_after_secs: retryAfterSecs });
