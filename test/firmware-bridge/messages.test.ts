import { describe, expect, it } from 'vitest';
import {
  CAPABILITY_BITS,
  MAX_PAYLOAD,
  MessageType,
  capabilityBits,
  capabilityNames,
  chooseVersion,
  decodePayload,
  encodePayload,
  faultBits,
  faultNames,
  isSemver,
  messageTypeName,
  type Message,
} from '../../firmware-bridge/index.js';
import { prng, randomBytes, randomInt, sampleMessages } from './helpers.js';

function roundTrip(msg: Message): Message {
  const result = decodePayload(MessageType[msg.type], msg.seq, encodePayload(msg));
  if (!result.ok) throw new Error(result.reason);
  return result.message;
}

describe('message payloads', () => {
  it('cover all 13 v1 types with distinct 4-bit codes', () => {
    const codes = Object.values(MessageType);
    expect(codes).toHaveLength(13);
    expect(new Set(codes).size).toBe(13);
    for (const c of codes) expect(c).toBeGreaterThanOrEqual(1), expect(c).toBeLessThanOrEqual(0x0f);
    expect(new Set(sampleMessages().map((m) => m.type)).size).toBe(13);
    expect(messageTypeName(0)).toBeUndefined();
    expect(messageTypeName(0x0e)).toBeUndefined();
  });

  for (const msg of sampleMessages()) {
    it(`round-trips ${msg.type} (seq ${msg.seq})`, () => {
      expect(roundTrip(msg)).toEqual(msg);
    });
  }

  it('rounds f32 values to single precision and keeps special values', () => {
    const msg: Message = {
      type: 'telemetry', seq: 0, timestamp_ms: 0,
      readings: [
        { name: 'a', type: 'f32', value: 0.1 },
        { name: 'b', type: 'f32', value: Number.POSITIVE_INFINITY },
        { name: 'c', type: 'f32', value: Number.NaN },
      ],
    };
    const back = roundTrip(msg) as Extract<Message, { type: 'telemetry' }>;
    expect(back.readings[0]!.value).toBe(Math.fround(0.1));
    expect(back.readings[1]!.value).toBe(Number.POSITIVE_INFINITY);
    expect(Number.isNaN(back.readings[2]!.value)).toBe(true);
  });

  it('lays out HEARTBEAT exactly as specified (little-endian, fixed 9 bytes)', () => {
    const p = encodePayload({ type: 'heartbeat', seq: 0, uptime_ms: 0x01020304, status: 'degraded', faults: 0x80000001 });
    expect(Array.from(p)).toEqual([0x04, 0x03, 0x02, 0x01, 0x01, 0x01, 0x00, 0x00, 0x80]);
  });

  it('pads a CRC-32 digest to the fixed 32-byte field in FW_BEGIN', () => {
    const p = encodePayload({ type: 'fw_begin', seq: 0, transfer_id: 1, image_size: 10, chunk_size: 8, digest_alg: 'crc32', digest: Uint8Array.of(0xaa, 0xbb, 0xcc, 0xdd), version: '1.0.0' });
    expect(p.length).toBe(2 + 4 + 2 + 1 + 32 + 1 + 5);
    expect(Array.from(p.subarray(9, 13))).toEqual([0xaa, 0xbb, 0xcc, 0xdd]);
    expect(p.subarray(13, 41).every((b) => b === 0)).toBe(true);
  });

  describe('encoding refuses invalid fields', () => {
    const base = sampleMessages();
    const identity = base.find((m) => m.type === 'identity')!;
    const cases: [string, Message][] = [
      ['non-semver firmware version', { ...identity, firmware_version: 'v1.2' } as Message],
      ['device id too long', { ...identity, device_id: 'x'.repeat(33) } as Message],
      ['device id with a space', { ...identity, device_id: 'a b' } as Message],
      ['too many features', { ...identity, features: Array(9).fill('f') } as Message],
      ['max_payload below 80', { ...identity, max_payload: 79 } as Message],
      ['i32 out of range', { type: 'command', seq: 0, command_id: 1, args: [{ type: 'i32', value: 2 ** 31 }] }],
      ['u32 negative', { type: 'command', seq: 0, command_id: 1, args: [{ type: 'u32', value: -1 }] }],
      ['non-integer u32', { type: 'command', seq: 0, command_id: 1, args: [{ type: 'u32', value: 1.5 }] }],
      ['nine args', { type: 'command', seq: 0, command_id: 1, args: Array(9).fill({ type: 'bool', value: true }) }],
      ['command id 0', { type: 'command', seq: 0, command_id: 0, args: [] }],
      ['no readings', { type: 'telemetry', seq: 0, timestamp_ms: 0, readings: [] }],
      ['metric name too long', { type: 'telemetry', seq: 0, timestamp_ms: 0, readings: [{ name: 'x'.repeat(17), type: 'u32', value: 1 }] }],
      ['unit too long', { type: 'telemetry', seq: 0, timestamp_ms: 0, readings: [{ name: 'x', type: 'u32', value: 1, unit: 'furlongs/fortnight' }] }],
      [
        'payload beyond 504 bytes',
        { type: 'telemetry', seq: 0, timestamp_ms: 0, readings: Array.from({ length: 32 }, (_, i) => ({ name: `metric_name_${String(i).padStart(4, '0')}`, type: 'u32' as const, value: i, unit: 'units' })) },
      ],
      ['detail with a newline', { type: 'command_ack', seq: 0, ref_seq: 0, status: 'ok', detail: 'a\nb' }],
      ['detail over 64 bytes', { type: 'command_ack', seq: 0, ref_seq: 0, status: 'ok', detail: 'é'.repeat(33) }],
      ['unknown status', { type: 'command_ack', seq: 0, ref_seq: 0, status: 'great' as 'ok', detail: '' }],
      ['sha256 digest of 4 bytes', { type: 'fw_begin', seq: 0, transfer_id: 0, image_size: 1, chunk_size: 1, digest_alg: 'sha256', digest: new Uint8Array(4), version: '1.0.0' }],
      ['chunk_size above 498', { type: 'fw_begin', seq: 0, transfer_id: 0, image_size: 1, chunk_size: 499, digest_alg: 'crc32', digest: new Uint8Array(4), version: '1.0.0' }],
      ['empty chunk', { type: 'fw_chunk', seq: 0, transfer_id: 0, offset: 0, data: new Uint8Array(0) }],
      ['window 0', { type: 'fw_chunk_ack', seq: 0, transfer_id: 0, status: 'ok', window: 0, next_offset: 0 }],
      ['empty HELLO range', { type: 'hello', seq: 0, version_min: 2, version_max: 1, nonce: 0 }],
    ];
    for (const [name, msg] of cases) {
      it(name, () => {
        expect(() => encodePayload(msg)).toThrow(RangeError);
      });
    }
  });

  describe('decoding reports bad payloads without throwing', () => {
    const hello = encodePayload({ type: 'hello', seq: 0, version_min: 1, version_max: 1, nonce: 1 });
    const cases: [string, number, Uint8Array][] = [
      ['truncated', MessageType.hello, hello.subarray(0, 5)],
      ['trailing byte', MessageType.hello, Uint8Array.of(...hello, 0)],
      ['unknown type', 0x0e, hello],
      ['bool value 2', MessageType.command, Uint8Array.of(1, 0, 1, 4, 2, 0, 0, 0)],
      ['unknown value type', MessageType.command, Uint8Array.of(1, 0, 1, 9, 0, 0, 0, 0)],
      ['invalid UTF-8 detail', MessageType.command_ack, Uint8Array.of(0, 0, 0, 2, 0xc3, 0x28)],
      ['unknown status code', MessageType.command_ack, Uint8Array.of(0, 0, 9, 0)],
      ['crc32 digest with non-zero padding', MessageType.fw_begin, (() => {
        const p = encodePayload({ type: 'fw_begin', seq: 0, transfer_id: 0, image_size: 1, chunk_size: 1, digest_alg: 'crc32', digest: new Uint8Array(4), version: '1.0.0' });
        p[20] = 1;
        return p;
      })()],
      ['empty chunk', MessageType.fw_chunk, Uint8Array.of(0, 0, 0, 0, 0, 0)],
      ['zero readings', MessageType.telemetry, Uint8Array.of(0, 0, 0, 0, 0)],
    ];
    for (const [name, type, payload] of cases) {
      it(name, () => {
        const r = decodePayload(type, 0, payload);
        expect(r.ok).toBe(false);
        if (!r.ok) expect(r.reason).toBeTruthy();
      });
    }

    it('never throws on random payloads of any type (seeded fuzz)', () => {
      const rand = prng(7);
      let accepted = 0;
      for (let i = 0; i < 20_000; i++) {
        const type = randomInt(rand, 0, 16);
        const r = decodePayload(type, 0, randomBytes(rand, randomInt(rand, 0, 64)));
        if (r.ok) accepted++;
      }
      expect(accepted).toBeLessThan(20_000);
    });
  });
});

describe('helpers', () => {
  it('capabilities and faults map between names and bits', () => {
    expect(capabilityBits(['telemetry', 'fw_update'])).toBe(0b1001);
    expect(capabilityNames(0b1001 | (1 << 20))).toEqual(['telemetry', 'fw_update', 'bit_20']);
    expect(capabilityNames(capabilityBits([...CAPABILITY_BITS]))).toEqual([...CAPABILITY_BITS]);
    expect(faultBits(['overtemperature', 'flash'])).toBe(0x201);
    expect(faultNames(0x80000201)).toEqual(['overtemperature', 'flash', 'fault_31']);
    expect(() => capabilityBits(['warp' as 'can'])).toThrow(RangeError);
  });

  it('chooses the highest common version', () => {
    expect(chooseVersion({ version_min: 1, version_max: 1 })).toBe(1);
    expect(chooseVersion({ version_min: 1, version_max: 5 }, [1, 2, 3])).toBe(3);
    expect(chooseVersion({ version_min: 2, version_max: 5 }, [1])).toBeNull();
  });

  it('recognises semantic versions', () => {
    for (const v of ['0.0.1', '1.2.3', '10.20.30-rc.1', '1.0.0+build.5', '1.0.0-alpha-1+x']) expect(isSemver(v)).toBe(true);
    for (const v of ['1.2', 'v1.2.3', '01.2.3', '1.2.3.4', '1.2.3-', '']) expect(isSemver(v)).toBe(false);
  });

  it('MAX_PAYLOAD leaves room for header and CRC in a 512-byte frame', () => {
    expect(MAX_PAYLOAD).toBe(504);
  });
});
