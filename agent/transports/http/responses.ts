import { ApiError } from '../../core/errors.js';
import { CORS_HEADERS } from './pipeline/cors.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
const CORS_OBJECT: Record<string, string> = Object.fromEntries(CORS_HEADERS);

/**
 * Marks responses built with every standard header already in place; the pipeline leaves those
 * alone. A symbol property rather than a WeakSet: this runs on every request, and it is cheaper.
 */
const COMPLETE = Symbol('svc.completeHeaders');

export function isComplete(res: Response): boolean {
  return (res as unknown as Record<symbol, boolean>)[COMPLETE] === true;
}

/**
 * The headers every response of a request carries, as a plain object: handing node-server a plain
 * object lets it write them without building a `Headers` instance (a measurable share of a request).
 */
export function responseHeaders(correlationId: string, contentType = JSON_TYPE): Record<string, string> {
  return { 'content-type': contentType, ...CORS_OBJECT, 'x-correlation-id': correlationId };
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = { 'content-type': JSON_TYPE }): Response {
  const res = new Response(JSON.stringify(body), { status, headers });
  if (headers['x-correlation-id'] !== undefined) (res as unknown as Record<symbol, boolean>)[COMPLETE] = true;
  return res;
}

export function errorResponse(err: ApiError, headers?: Record<string, string>): Response {
  const retry = err.extra['retry_after_secs'];
  let h = typeof retry === 'number' ? { ...(headers ?? { 'content-type': JSON_TYPE }), 'retry-after': String(retry) } : headers;
  // The unread rest of an oversized body makes the connection unusable: say so instead of
  // leaving a keep-alive client to find out on its next request.
  if (err.status === 413) h = { ...(h ?? { 'content-type': JSON_TYPE }), connection: 'close' };
  return jsonResponse(err.toEnvelope(), err.status, h);
}

export function toApiError(err: unknown, log: (message: string) => void): ApiError {
  if (err instanceof ApiError) return err;
  // Unexpected: log the detail for the operator, answer with a generic message (no internals on the wire).
  log(`internal error: ${(err as Error)?.stack ?? String(err)}`);
  return new ApiError(500, 'internal_error', 'internal error');
}
