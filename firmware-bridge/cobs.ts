/**
 * Consistent Overhead Byte Stuffing (Cheshire & Baker, 1999), the serial framing of the firmware
 * bridge. An encoded frame contains no 0x00 byte, so 0x00 delimits frames on the wire.
 *
 * The encoding is the standard one: each block starts with a code byte n (1..255) followed by n-1
 * non-zero data bytes; a code below 0xFF stands for "these bytes, then a zero", except for the last
 * block, whose zero is implied by the end of the frame and dropped; 0xFF stands for 254 data bytes
 * with no zero. No extra code byte is emitted after a final 0xFF block.
 */

/** Largest COBS encoding of `n` bytes (without the 0x00 delimiter). */
export function cobsMaxEncodedLength(n: number): number {
  return n === 0 ? 1 : n + Math.ceil(n / 254);
}

/** COBS-encodes `data` (no delimiter appended). */
export function cobsEncode(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(cobsMaxEncodedLength(data.length));
  const written = cobsEncodeInto(data, out, 0);
  return out.subarray(0, written);
}

/**
 * COBS-encodes `data` into `out` starting at `at`; returns the index after the last byte written.
 * `out` must have room for `cobsMaxEncodedLength(data.length)` bytes.
 */
export function cobsEncodeInto(data: Uint8Array, out: Uint8Array, at: number): number {
  let codeAt = at;
  let w = at + 1;
  let code = 1;
  for (let i = 0; i < data.length; i++) {
    const b = data[i]!;
    if (b === 0) {
      out[codeAt] = code;
      codeAt = w++;
      code = 1;
      continue;
    }
    out[w++] = b;
    code++;
    if (code === 0xff) {
      out[codeAt] = code;
      code = 1;
      // A full block at the very end needs no further code byte.
      if (i === data.length - 1) return w;
      codeAt = w++;
    }
  }
  out[codeAt] = code;
  return w;
}

/**
 * Decodes one COBS frame (delimiter already removed). Returns the decoded bytes, or null when the
 * input is not valid COBS (a 0x00 inside it, or a code byte that points past the end). Never throws.
 */
export function cobsDecode(encoded: Uint8Array): Uint8Array | null {
  const out = new Uint8Array(encoded.length);
  const n = cobsDecodeInto(encoded, 0, encoded.length, out);
  return n < 0 ? null : out.subarray(0, n);
}

/**
 * Decodes `src[start, end)` into `out` (which needs at least `end - start` bytes). Returns the decoded
 * length, or -1 for invalid COBS.
 */
export function cobsDecodeInto(src: Uint8Array, start: number, end: number, out: Uint8Array): number {
  if (end <= start) return -1;
  let r = start;
  let w = 0;
  while (r < end) {
    const code = src[r++]!;
    if (code === 0) return -1;
    const blockEnd = r + code - 1;
    if (blockEnd > end) return -1;
    while (r < blockEnd) {
      const b = src[r++]!;
      if (b === 0) return -1;
      out[w++] = b;
    }
    if (code !== 0xff && r < end) out[w++] = 0;
  }
  return w;
}
