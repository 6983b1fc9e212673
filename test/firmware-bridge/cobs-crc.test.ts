import { describe, expect, it } from 'vitest';
import { cobsDecode, cobsEncode, cobsMaxEncodedLength, crc16CcittFalse, crc32 } from '../../firmware-bridge/index.js';
import { concat, hex, prng, randomBytes, randomInt, sameBytes } from './helpers.js';

const ascii = (s: string) => new TextEncoder().encode(s);
const range = (from: number, to: number) => Uint8Array.from({ length: to - from + 1 }, (_, i) => (from + i) & 0xff);

describe('CRC', () => {
  it('CRC-16/CCITT-FALSE check value of "123456789" is 0x29B1', () => {
    expect(crc16CcittFalse(ascii('123456789'))).toBe(0x29b1);
  });

  it('CRC-16 of the empty string is the init value, and it runs incrementally', () => {
    expect(crc16CcittFalse(new Uint8Array(0))).toBe(0xffff);
    const data = ascii('123456789');
    expect(crc16CcittFalse(data, 4, 9, crc16CcittFalse(data, 0, 4))).toBe(0x29b1);
  });

  it('matches an independent bitwise CRC-16/CCITT-FALSE on random data', () => {
    const bitwise = (data: Uint8Array) => {
      let crc = 0xffff;
      for (const b of data) {
        crc ^= b << 8;
        for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
      }
      return crc;
    };
    const rand = prng(16);
    for (let i = 0; i < 200; i++) {
      const data = randomBytes(rand, randomInt(rand, 0, 600));
      expect(crc16CcittFalse(data)).toBe(bitwise(data));
    }
  });

  it('CRC-32/ISO-HDLC check value of "123456789" is 0xCBF43926 and it continues', () => {
    expect(crc32(ascii('123456789'))).toBe(0xcbf43926);
    expect(crc32(ascii('56789'), crc32(ascii('1234')))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });
});

describe('COBS', () => {
  // Vectors from the COBS literature (Cheshire & Baker; the Wikipedia examples).
  const vectors: [string, Uint8Array, Uint8Array][] = [
    ['empty', new Uint8Array(0), hex('01')],
    ['one zero', hex('00'), hex('01 01')],
    ['two zeros', hex('00 00'), hex('01 01 01')],
    ['zero in the middle', hex('11 22 00 33'), hex('03 11 22 02 33')],
    ['no zero', hex('11 22 33 44'), hex('05 11 22 33 44')],
    ['trailing zeros', hex('11 00 00 00'), hex('02 11 01 01 01')],
    ['254 non-zero bytes', range(1, 254), concat([hex('FF'), range(1, 254)])],
    ['zero then 254 non-zero bytes', concat([hex('00'), range(1, 254)]), concat([hex('01 FF'), range(1, 254)])],
    ['255 non-zero bytes', range(1, 255), concat([hex('FF'), range(1, 254), hex('02 FF')])],
    ['254 non-zero bytes then a zero', concat([range(2, 255), hex('00')]), concat([hex('FF'), range(2, 255), hex('01 01')])],
    ['253 non-zero, zero, one', concat([range(3, 255), hex('00 01')]), concat([hex('FE'), range(3, 255), hex('02 01')])],
  ];

  for (const [name, plain, encoded] of vectors) {
    it(`encodes and decodes: ${name}`, () => {
      expect(cobsEncode(plain)).toEqual(encoded);
      expect(cobsDecode(encoded)).toEqual(plain);
      expect(encoded.includes(0)).toBe(false);
      expect(encoded.length).toBeLessThanOrEqual(cobsMaxEncodedLength(plain.length));
    });
  }

  it('round-trips runs of zeros and long non-zero runs of every length around the 254 boundary', () => {
    for (const n of [1, 2, 253, 254, 255, 256, 507, 508, 509, 512, 1000]) {
      const zeros = new Uint8Array(n);
      expect(cobsDecode(cobsEncode(zeros))).toEqual(zeros);
      expect(cobsEncode(zeros).length).toBe(n + 1);
      const ones = new Uint8Array(n).fill(0xff);
      const enc = cobsEncode(ones);
      expect(enc.length).toBe(cobsMaxEncodedLength(n));
      expect(cobsDecode(enc)).toEqual(ones);
    }
  });

  it('round-trips random data (seeded)', () => {
    const rand = prng(1);
    for (let i = 0; i < 500; i++) {
      const data = randomBytes(rand, randomInt(rand, 0, 700));
      // make zero runs and long non-zero runs likely
      if (i % 3 === 0) data.fill(0, 0, randomInt(rand, 0, data.length));
      if (i % 3 === 1) for (let k = 0; k < data.length; k++) data[k] ||= 1;
      const enc = cobsEncode(data);
      expect(enc.includes(0)).toBe(false);
      expect(sameBytes(cobsDecode(enc), data)).toBe(true);
    }
  });

  it('rejects invalid encodings instead of throwing', () => {
    expect(cobsDecode(new Uint8Array(0))).toBeNull();
    expect(cobsDecode(hex('05 11 22'))).toBeNull(); // code points past the end
    expect(cobsDecode(hex('03 11 00 22'))).toBeNull(); // zero inside
    expect(cobsDecode(hex('00'))).toBeNull();
  });
});
