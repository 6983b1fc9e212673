export const CORS_HEADERS: ReadonlyArray<[string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS'],
  ['Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Correlation-ID, X-Svc-Api-Version'],
  ['Access-Control-Expose-Headers', 'X-Correlation-ID'],
];

/** Adds the CORS and correlation headers every response carries (docs/api.md § Response headers). */
export function stampHeaders(headers: Headers, correlationId: string): void {
  for (const [k, v] of CORS_HEADERS) headers.set(k, v);
  headers.set('X-Correlation-ID', correlationId);
}
