/**
 * The two checksums of the firmware bridge.
 *
 * - CRC-16/CCITT-FALSE protects every frame (serial framing; see docs/firmware-bridge.md §3):
 *   width 16, poly 0x1021, init 0xFFFF, no reflection, xorout 0x0000, check("123456789") = 0x29B1.
 * - CRC-32/ISO-HDLC (the zlib/Ethernet CRC) is the lightweight firmware image digest:
 *   width 32, poly 0x04C11DB7 (reflected 0xEDB88320), init 0xFFFFFFFF, reflected in and out,
 *   xorout 0xFFFFFFFF, check("123456789") = 0xCBF43926.
 *
 * Both are table-driven here; a microcontroller can use the bitwise loops given in the spec.
 */

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

const CRC32_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
    table[i] = crc >>> 0;
  }
  return table;
})();

/** CRC-16/CCITT-FALSE of `data[start, end)`. Pass a previous result as `crc` to continue a running CRC. */
export function crc16CcittFalse(data: Uint8Array, start = 0, end = data.length, crc = 0xffff): number {
  for (let i = start; i < end; i++) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >>> 8) ^ data[i]!) & 0xff]!;
  return crc;
}

/** CRC-32/ISO-HDLC of `data`. To continue a running CRC, pass the previous (final) result as `crc`. */
export function crc32(data: Uint8Array, crc = 0): number {
  let c = ~crc >>> 0;
  for (let i = 0; i < data.length; i++) c = CRC32_TABLE[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
