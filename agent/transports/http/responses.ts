import { ApiError } from '../../core/errors.js';

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: JSON_HEADERS });
}

export function errorResponse(err: ApiError): Response {
  const res = jsonResponse(err.toEnvelope(), err.status);
  const retry = err.extra['retry_after_secs'];
  if (typeof retry === 'number') res.headers.set('Retry-After', String(retry));
  return res;
}

export function toApiError(err: unknown, log: (message: string) => void): ApiError {
  if (err instanceof ApiError) return err;
  // Unexpected: log the detail for the operator, answer with a generic message (no internals on the wire).
  log(`internal error: ${(err as Error)?.stack ?? String(err)}`);
  return new ApiError(500, 'internal_error', 'internal error');
}
