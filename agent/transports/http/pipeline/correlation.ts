import crypto from 'node:crypto';

const MAX_CORRELATION_ID = 128;

/** `X-Correlation-ID` from the caller (bounded, printable), else `svc-<epoch ms>-<4 hex>`. */
export function correlationIdOf(headerValue: string | undefined | null): string {
  if (headerValue && headerValue.length <= MAX_CORRELATION_ID && /^[\x21-\x7e]+$/.test(headerValue)) return headerValue;
  return `svc-${Date.now()}-${crypto.randomBytes(2).toString('hex')}`;
}
