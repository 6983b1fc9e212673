import { badRequest, payloadTooLarge } from '../../core/errors.js';

/** Body parsing (docs/wire-decisions.md D3) lives in core (every transport that carries a JSON body uses it). */
export { MAX_JSON_DEPTH, parseJsonObject } from '../../core/json-body.js';


/** Reads a request body, refusing (413) as soon as it passes `maxBytes`, declared length or not. */
export async function readBodyText(request: Request, maxBytes: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw payloadTooLarge();
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // The client closed the connection mid-body: a bad request, not an internal error.
      throw badRequest('request body incomplete: the connection closed mid-body');
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw payloadTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
