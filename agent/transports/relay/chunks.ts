import { MAX_ENVELOPE_BYTES, type EnvelopeChunk } from '../../../api/relay-protocol.js';

/** Room left in each chunk for the `{chunk:{…}, part}` wrapper around the part's text. */
const WRAPPER_BYTES = 1024;

/**
 * The MQTT payloads of one envelope (api/relay-protocol.ts `EnvelopeChunk`): the envelope itself when
 * its JSON fits in MAX_ENVELOPE_BYTES, else its JSON cut into parts. `maxBytes` is for tests.
 */
export function envelopePayloads(envelope: object, chunkId: string, maxBytes = MAX_ENVELOPE_BYTES): string[] {
  const json = JSON.stringify(envelope);
  if (Buffer.byteLength(json) <= maxBytes) return [json];
  // Envelope JSON is base64 plus header text (ASCII in practice); a part of `size` characters is at
  // most 3 bytes a character only for non-ASCII headers, so budget for that conservatively when present.
  const ascii = Buffer.byteLength(json) === json.length;
  const size = Math.max(1, Math.floor((maxBytes - WRAPPER_BYTES) / (ascii ? 1 : 3)));
  const total = Math.ceil(json.length / size);
  const out: string[] = [];
  for (let seq = 0; seq < total; seq++) {
    const chunk: EnvelopeChunk = { chunk: { id: chunkId, seq, total }, part: json.slice(seq * size, (seq + 1) * size) };
    out.push(JSON.stringify(chunk));
  }
  return out;
}

export function isChunk(value: unknown): value is EnvelopeChunk {
  if (!value || typeof value !== 'object') return false;
  const c = (value as EnvelopeChunk).chunk;
  return (
    !!c &&
    typeof c === 'object' &&
    typeof c.id === 'string' &&
    Number.isSafeInteger(c.seq) &&
    Number.isSafeInteger(c.total) &&
    typeof (value as EnvelopeChunk).part === 'string'
  );
}

interface Partial {
  parts: (string | undefined)[];
  received: number;
  chars: number;
  startedMs: number;
}

/**
 * Reassembles chunked envelopes by chunk id. Bounded: at most `maxOpen` envelopes in progress, each
 * at most `maxChars` characters; an envelope not complete within `timeoutMs` is forgotten.
 */
export class ChunkAssembler {
  private readonly open = new Map<string, Partial>();

  constructor(
    private readonly maxChars: number,
    private readonly maxOpen = 32,
    private readonly timeoutMs = 60_000,
  ) {}

  /** The whole envelope's JSON once its last chunk arrived; null while incomplete or when refused. */
  add(c: EnvelopeChunk, now = Date.now()): { json: string } | { error: string } | null {
    this.expire(now);
    const { id, seq, total } = c.chunk;
    const maxParts = Math.ceil(this.maxChars / 1024) + 1;
    if (total < 1 || total > maxParts || seq < 0 || seq >= total) return { error: `chunk ${seq}/${total} of ${id} out of range` };
    let p = this.open.get(id);
    if (!p) {
      if (this.open.size >= this.maxOpen) return { error: `too many chunked envelopes in progress (${this.maxOpen})` };
      p = { parts: new Array<string | undefined>(total), received: 0, chars: 0, startedMs: now };
      this.open.set(id, p);
    }
    if (p.parts.length !== total) {
      this.open.delete(id);
      return { error: `chunk total of ${id} changed` };
    }
    if (p.parts[seq] !== undefined) return null;
    p.chars += c.part.length;
    if (p.chars > this.maxChars) {
      this.open.delete(id);
      return { error: `chunked envelope ${id} larger than ${this.maxChars} characters` };
    }
    p.parts[seq] = c.part;
    p.received++;
    if (p.received < total) return null;
    this.open.delete(id);
    return { json: p.parts.join('') };
  }

  private expire(now: number): void {
    for (const [id, p] of this.open) if (now - p.startedMs > this.timeoutMs) this.open.delete(id);
  }

  get inProgress(): number {
    return this.open.size;
  }
}
