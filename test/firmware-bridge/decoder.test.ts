import { describe, expect, it } from 'vitest';
import {
  FrameDecoder,
  MAX_FRAME_SIZE,
  MessageType,
  buildRawFrame,
  cobsMaxEncodedLength,
  decodeFrame,
  encodeMessage,
  encodePayload,
  errorFor,
  stuffFrame,
  type DecoderStats,
  type MalformedFrame,
  type Message,
} from '../../firmware-bridge/index.js';
import { concat, hex, prng, randomBytes, randomInt, sampleMessages } from './helpers.js';

const hello: Message = { type: 'hello', seq: 0x1234, version_min: 1, version_max: 1, nonce: 0x12345678 };

function malformedSum(s: DecoderStats): number {
  return s.cobs_errors + s.oversized + s.bad_length + s.crc_errors + s.bad_version + s.unknown_type + s.bad_payload;
}

/** Splits `bytes` into chunks of random size (including empty ones). */
function chunked(bytes: Uint8Array, rand: () => number, max = 40): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const n = randomInt(rand, 0, max);
    out.push(bytes.subarray(at, Math.min(bytes.length, at + n)));
    at += n;
  }
  return out;
}

describe('serial frames', () => {
  it('HELLO encodes to the documented bytes', () => {
    expect(encodeMessage({ ...hello, seq: 0 })).toEqual(hex('03 01 05 01 02 06 09 01 01 78 56 34 12 42 B1 00'));
  });

  for (const msg of sampleMessages()) {
    it(`round-trips ${msg.type} through encodeMessage / decodeFrame / FrameDecoder`, () => {
      const bytes = encodeMessage(msg);
      expect(bytes[bytes.length - 1]).toBe(0);
      expect(bytes.subarray(0, -1).includes(0)).toBe(false);
      const one = decodeFrame(bytes);
      expect(one.ok && one.message).toEqual(msg);
      const decoder = new FrameDecoder();
      expect(decoder.push(bytes)).toEqual([msg]);
      expect(decoder.stats.frames_ok).toBe(1);
      expect(decoder.stats.malformed).toBe(0);
    });
  }

  it('a largest-payload frame (512 bytes) passes and fits the encoded buffer', () => {
    const msg: Message = { type: 'fw_chunk', seq: 1, transfer_id: 2, offset: 0, data: new Uint8Array(498).fill(0x55) };
    const bytes = encodeMessage(msg);
    expect(bytes.length - 1).toBeLessThanOrEqual(cobsMaxEncodedLength(MAX_FRAME_SIZE));
    expect(new FrameDecoder().push(bytes)).toEqual([msg]);
  });
});

describe('FrameDecoder', () => {
  it('decodes a stream split at random points identically (seeded fuzz, 20 seeds)', () => {
    const base = sampleMessages();
    for (let seed = 1; seed <= 20; seed++) {
      const rand = prng(seed);
      const msgs: Message[] = Array.from({ length: 150 }, () => base[randomInt(rand, 0, base.length - 1)]!);
      const stream = concat(msgs.map((m) => encodeMessage(m)));
      const decoder = new FrameDecoder();
      const got: Message[] = [];
      for (const c of chunked(stream, rand, seed % 2 ? 7 : 300)) got.push(...decoder.push(c));
      expect(got).toEqual(msgs);
      expect(decoder.stats.frames_ok).toBe(msgs.length);
      expect(decoder.stats.malformed).toBe(0);
      expect(decoder.stats.bytes_in).toBe(stream.length);
      expect(decoder.pending).toBe(0);
    }
  });

  it('decodes byte by byte', () => {
    const bytes = concat(sampleMessages().map((m) => encodeMessage(m)));
    const decoder = new FrameDecoder();
    const got: Message[] = [];
    for (const b of bytes) got.push(...decoder.push(Uint8Array.of(b)));
    expect(got).toEqual(sampleMessages());
  });

  it('ignores idle delimiters between frames', () => {
    const decoder = new FrameDecoder();
    expect(decoder.push(concat([hex('00 00 00'), encodeMessage(hello), hex('00 00')]))).toEqual([hello]);
    expect(decoder.stats.malformed).toBe(0);
  });

  it('resynchronises after garbage: the garbage is one malformed frame, the next frame decodes', () => {
    const decoder = new FrameDecoder();
    const garbage = hex('13 37 C0 FF EE 42');
    const got = decoder.push(concat([garbage, encodeMessage(hello), garbage, hex('00'), encodeMessage(hello)]));
    // The first garbage run is glued to the front of the first frame, so that frame is lost too.
    expect(got).toEqual([hello]);
    expect(decoder.stats.frames_ok).toBe(1);
    expect(decoder.stats.malformed).toBe(2);
    expect(malformedSum(decoder.stats)).toBe(2);
  });

  it('a sender prefixing a delimiter loses nothing after line noise', () => {
    const decoder = new FrameDecoder();
    const got = decoder.push(concat([hex('13 37 C0'), hex('00'), encodeMessage(hello)]));
    expect(got).toEqual([hello]);
    expect(decoder.stats.malformed).toBe(1);
  });

  it('counts a corrupted CRC and reports it, then carries on', () => {
    const seen: MalformedFrame[] = [];
    const decoder = new FrameDecoder({ onMalformed: (m) => seen.push(m) });
    const raw = buildRawFrame(MessageType.hello, 7, encodePayload(hello));
    raw[raw.length - 1]! ^= 0x01;
    expect(decoder.push(concat([stuffFrame(raw), encodeMessage(hello)]))).toEqual([hello]);
    expect(decoder.stats.crc_errors).toBe(1);
    expect(decoder.stats.malformed).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.kind).toBe('crc');
    expect(seen[0]!.type).toBeUndefined(); // an untrusted header is not reported
    expect(errorFor(seen[0]!, 9)).toEqual({ type: 'error', seq: 9, code: 'bad_crc', ref_type: 0, ref_seq: 0, detail: seen[0]!.detail });
  });

  it('detects every single-bit flip of an encoded frame (seeded)', () => {
    const rand = prng(99);
    const msgs = sampleMessages();
    for (let i = 0; i < 2000; i++) {
      const msg = msgs[randomInt(rand, 0, msgs.length - 1)]!;
      const bytes = encodeMessage(msg);
      const pos = randomInt(rand, 0, bytes.length - 2);
      bytes[pos]! ^= 1 << randomInt(rand, 0, 7);
      const decoder = new FrameDecoder();
      expect(decoder.push(bytes)).toEqual([]);
      expect(decoder.stats.malformed).toBeGreaterThanOrEqual(1);
    }
  });

  it('counts truncated frames as bad_length', () => {
    const decoder = new FrameDecoder();
    const raw = buildRawFrame(MessageType.hello, 7, encodePayload(hello));
    decoder.push(stuffFrame(raw.subarray(0, raw.length - 3))); // cut inside the payload
    decoder.push(stuffFrame(raw.subarray(0, 5))); // shorter than a header
    expect(decoder.stats.bad_length).toBe(2);
    expect(decoder.stats.malformed).toBe(2);
    expect(decoder.lastError?.kind).toBe('bad_length');
  });

  it('counts invalid COBS', () => {
    const decoder = new FrameDecoder();
    expect(decoder.push(hex('09 01 02 03 00'))).toEqual([]);
    expect(decoder.stats.cobs_errors).toBe(1);
  });

  it('discards a frame with no delimiter in sight as one oversized frame, with a fixed buffer', () => {
    const decoder = new FrameDecoder();
    const rand = prng(5);
    const noise = randomBytes(rand, 5000).map((b) => b || 1);
    for (const c of chunked(noise, rand, 100)) expect(decoder.push(c)).toEqual([]);
    expect(decoder.pending).toBeLessThanOrEqual(cobsMaxEncodedLength(MAX_FRAME_SIZE));
    expect(decoder.push(concat([hex('00'), encodeMessage(hello)]))).toEqual([hello]);
    expect(decoder.stats.oversized).toBe(1);
    expect(decoder.stats.malformed).toBe(1);
  });

  it('rejects a well-formed frame longer than the maximum', () => {
    // 513 bytes, built by hand (the encoder refuses it).
    const raw = new Uint8Array(513);
    raw.set([1, MessageType.fw_chunk, 0, 0, 505 & 0xff, 505 >> 8]);
    const decoder = new FrameDecoder();
    decoder.push(stuffFrame(raw));
    expect(decoder.stats.oversized).toBe(1);
  });

  it('honours a smaller maxFrameSize (a device with small buffers)', () => {
    const decoder = new FrameDecoder({ maxFrameSize: 64 });
    const big: Message = { type: 'fw_chunk', seq: 1, transfer_id: 2, offset: 0, data: new Uint8Array(100).fill(1) };
    expect(decoder.push(concat([encodeMessage(big), encodeMessage(hello)]))).toEqual([hello]);
    expect(decoder.stats.oversized).toBe(1);
    expect(() => new FrameDecoder({ maxFrameSize: 7 })).toThrow(RangeError);
  });

  it('counts an unknown type and a foreign version with a trusted header, and answers them', () => {
    const seen: MalformedFrame[] = [];
    const decoder = new FrameDecoder({ onMalformed: (m) => seen.push(m) });
    decoder.push(stuffFrame(buildRawFrame(0x0e, 42, new Uint8Array(0))));
    decoder.push(stuffFrame(buildRawFrame(MessageType.hello, 43, encodePayload(hello), 2)));
    expect(decoder.stats.unknown_type).toBe(1);
    expect(decoder.stats.bad_version).toBe(1);
    expect(errorFor(seen[0]!, 1)).toMatchObject({ code: 'unknown_type', ref_type: 0x0e, ref_seq: 42 });
    expect(errorFor(seen[1]!, 2)).toMatchObject({ code: 'unsupported_version', ref_type: MessageType.hello, ref_seq: 43 });
    // A decoder configured for v2 as well accepts the frame's header (payload layout is v1's here).
    expect(new FrameDecoder({ versions: [1, 2] }).push(stuffFrame(buildRawFrame(MessageType.hello, 43, encodePayload(hello), 2)))).toHaveLength(1);
  });

  it('counts a payload that does not match its type, and never answers an ERROR with an ERROR', () => {
    const seen: MalformedFrame[] = [];
    const decoder = new FrameDecoder({ onMalformed: (m) => seen.push(m) });
    decoder.push(stuffFrame(buildRawFrame(MessageType.hello, 1, Uint8Array.of(1, 1, 0))));
    decoder.push(stuffFrame(buildRawFrame(MessageType.error, 2, Uint8Array.of(99, 0, 0, 0, 0))));
    expect(decoder.stats.bad_payload).toBe(2);
    expect(errorFor(seen[0]!, 5)).toMatchObject({ code: 'bad_payload', ref_type: MessageType.hello, ref_seq: 1 });
    expect(errorFor(seen[1]!, 6)).toBeNull();
  });

  it('survives pure noise: never throws, counters add up (seeded)', () => {
    for (let seed = 1; seed <= 5; seed++) {
      const rand = prng(seed * 1000);
      const decoder = new FrameDecoder();
      // Mostly noise, with zero bytes often enough to produce many short "frames".
      const noise = randomBytes(rand, 50_000).map((b) => (b < 12 ? 0 : b));
      for (const c of chunked(noise, rand, 600)) decoder.push(c);
      expect(decoder.stats.frames_ok).toBe(0);
      expect(decoder.stats.malformed).toBeGreaterThan(100);
      expect(malformedSum(decoder.stats)).toBe(decoder.stats.malformed);
    }
  });

  it('recovers every intact frame from a stream with random corruption (seeded)', () => {
    const rand = prng(2024);
    const base = sampleMessages();
    const parts: Uint8Array[] = [];
    const intact: Message[] = [];
    let corrupted = 0;
    for (let i = 0; i < 400; i++) {
      const msg = base[randomInt(rand, 0, base.length - 1)]!;
      const bytes = encodeMessage(msg);
      const roll = rand();
      if (roll < 0.1) {
        bytes[randomInt(rand, 0, bytes.length - 2)]! ^= 0x10; // flipped bit
        corrupted++;
      } else if (roll < 0.15) {
        parts.push(randomBytes(rand, randomInt(rand, 1, 30)).map((b) => b || 7)); // noise glued in front
        corrupted++;
      } else if (roll < 0.2) {
        parts.push(bytes.subarray(0, randomInt(rand, 1, bytes.length - 2)), hex('00')); // truncated + delimiter
        corrupted++;
        continue;
      } else {
        intact.push(msg);
      }
      parts.push(bytes);
    }
    const decoder = new FrameDecoder();
    const got: Message[] = [];
    for (const c of chunked(concat(parts), rand, 64)) got.push(...decoder.push(c));
    expect(got).toEqual(intact);
    expect(decoder.stats.frames_ok).toBe(intact.length);
    // A flipped bit can turn a byte into a delimiter and split one bad frame in two.
    expect(decoder.stats.malformed).toBeGreaterThanOrEqual(corrupted);
  });
});
