const MAX_CORRELATION_ID = 128;

function hex4(): string {
  // A correlation id only has to be unlikely to repeat within a millisecond, not unguessable:
  // Math.random is enough and costs a fraction of a CSPRNG call on every request.
  return ((Math.random() * 0x10000) | 0x10000).toString(16).slice(1);
}

/** `X-Correlation-ID` from the caller (bounded, printable), else `svc-<epoch ms>-<4 hex>`. */
export function correlationIdOf(headerValue: string | undefined | null): string {
  if (headerValue && headerValue.length <= MAX_CORRELATION_ID && /^[\x21-\x7e]+$/.test(headerValue)) return headerValue;
  return `svc-${Date.now()}-${hex4()}`;
}
