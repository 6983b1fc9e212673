// The one CAN frame codec: validation, Linux struct can_frame bytes, error-frame decoding.
import { describe, expect, it } from 'vitest';
import {
  CAN_EFF_FLAG,
  CAN_ERR_ACK,
  CAN_ERR_BUSERROR,
  CAN_ERR_BUSOFF,
  CAN_ERR_CNT,
  CAN_ERR_CRTL,
  CAN_ERR_CRTL_ACTIVE,
  CAN_ERR_CRTL_RX_OVERFLOW,
  CAN_ERR_CRTL_TX_PASSIVE,
  CAN_ERR_FLAG,
  CAN_ERR_LOSTARB,
  CAN_ERR_PROT,
  CAN_ERR_PROT_FORM,
  CAN_ERR_PROT_STUFF,
  CAN_ERR_PROT_TX,
  CAN_ERR_RESTARTED,
  CAN_ERR_TRX,
  CAN_ERR_TX_TIMEOUT,
  CAN_FRAME_SIZE,
  CAN_RTR_FLAG,
  CanFrameError,
  assertCanFrame,
  canErrorFrame,
  canFrame,
  canIdWithFlags,
  decodeCanFrame,
  describeCanError,
  encodeCanFrame,
  formatCanFrame,
  frameDlc,
  parseCanId,
  validateCanFrame,
  type CanFrame,
} from '../../hal/can/can-frame.js';

const std = (id: number, data: number[] = []): CanFrame => ({ id, extended: false, rtr: false, error: false, data: Uint8Array.from(data) });

describe('validation', () => {
  it('accepts the limits of classic CAN', () => {
    expect(validateCanFrame(std(0))).toBeNull();
    expect(validateCanFrame(std(0x7ff, [1, 2, 3, 4, 5, 6, 7, 8]))).toBeNull();
    expect(validateCanFrame({ ...std(0x1fffffff), extended: true })).toBeNull();
    expect(validateCanFrame({ ...std(0x123), rtr: true, dlc: 8 })).toBeNull();
    expect(validateCanFrame({ ...std(0x123), rtr: true })).toBeNull(); // dlc 0
  });

  it('rejects ids, lengths and remote frames out of range, with a reason', () => {
    expect(validateCanFrame(std(0x800))).toMatch(/standard id 0x800 exceeds 0x7FF/);
    expect(validateCanFrame({ ...std(0x20000000), extended: true })).toMatch(/extended id 0x20000000 exceeds/);
    expect(validateCanFrame(std(-1))).toMatch(/non-negative integer/);
    expect(validateCanFrame(std(1.5))).toMatch(/non-negative integer/);
    expect(validateCanFrame(std(1, [0, 0, 0, 0, 0, 0, 0, 0, 0]))).toMatch(/at most 8/);
    expect(validateCanFrame({ ...std(1, [1]), rtr: true, dlc: 1 })).toMatch(/remote frames carry no data/);
    expect(validateCanFrame({ ...std(1), rtr: true, dlc: 9 })).toMatch(/dlc must be 0..8/);
    expect(validateCanFrame({ ...std(1, [1, 2]), dlc: 3 })).toMatch(/does not match/);
    expect(validateCanFrame({ id: 1, extended: false, rtr: false, error: false, data: [1] as unknown as Uint8Array })).toMatch(/Uint8Array/);
    expect(() => assertCanFrame(std(0x800))).toThrow(CanFrameError);
  });

  it('canFrame() fills defaults and infers extended ids above 0x7FF', () => {
    expect(canFrame({ id: 0x10, data: [1, 2] })).toEqual(std(0x10, [1, 2]));
    expect(canFrame({ id: 0x12345 }).extended).toBe(true);
    expect(canFrame({ id: 0x12, extended: true }).extended).toBe(true);
    expect(canFrame({ id: 0x321, rtr: true, dlc: 4 })).toMatchObject({ rtr: true, dlc: 4, data: new Uint8Array(0) });
    expect(() => canFrame({ id: 0x800, extended: false })).toThrow(/exceeds 0x7FF/);
    expect(frameDlc(canFrame({ id: 1, rtr: true, dlc: 6 }))).toBe(6);
    expect(frameDlc(std(1, [1, 2, 3]))).toBe(3);
  });
});

describe('struct can_frame (16 bytes)', () => {
  it('encodes a standard data frame byte for byte (little-endian can_id)', () => {
    const bytes = encodeCanFrame(std(0x123, [0xde, 0xad, 0xbe, 0xef]), 'LE');
    expect(bytes.length).toBe(CAN_FRAME_SIZE);
    expect([...bytes]).toEqual([0x23, 0x01, 0x00, 0x00, 4, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0]);
  });

  it('sets the EFF and RTR flag bits', () => {
    const ext = encodeCanFrame({ ...std(0x1abcdef0), extended: true, data: Uint8Array.from([1]) }, 'LE');
    expect(ext.readUInt32LE(0)).toBe((0x1abcdef0 | CAN_EFF_FLAG) >>> 0);
    expect([...ext.subarray(0, 9)]).toEqual([0xf0, 0xde, 0xbc, 0x9a, 1, 0, 0, 0, 1]);

    const rtr = encodeCanFrame({ ...std(0x7ff), rtr: true, dlc: 8 }, 'LE');
    expect(rtr.readUInt32LE(0)).toBe((0x7ff | CAN_RTR_FLAG) >>> 0);
    expect(rtr[4]).toBe(8);
    expect([...rtr.subarray(8)]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);

    const extRtr = encodeCanFrame({ id: 0x18feef00, extended: true, rtr: true, error: false, data: new Uint8Array(0), dlc: 3 }, 'BE');
    expect([...extRtr.subarray(0, 5)]).toEqual([0xd8, 0xfe, 0xef, 0x00, 3]);
  });

  it('round-trips every kind of frame in both byte orders', () => {
    const frames: CanFrame[] = [
      std(0),
      std(0x7ff, [1, 2, 3, 4, 5, 6, 7, 8]),
      { ...std(0x1fffffff, [9]), extended: true },
      { ...std(0x42), rtr: true, dlc: 5 },
      { id: 0x1234567, extended: true, rtr: true, error: false, data: new Uint8Array(0), dlc: 0 },
      canErrorFrame(CAN_ERR_CRTL | CAN_ERR_BUSOFF, { 1: CAN_ERR_CRTL_TX_PASSIVE }),
    ];
    for (const order of ['LE', 'BE'] as const) {
      for (const f of frames) {
        const back = decodeCanFrame(encodeCanFrame(f, order), order);
        expect(back).toEqual(f);
      }
    }
  });

  it('defaults to host byte order and decodes from an offset view', () => {
    const f = std(0x55, [7]);
    const host = encodeCanFrame(f);
    const padded = new Uint8Array(32);
    padded.set(host, 8);
    expect(decodeCanFrame(padded.subarray(8, 24))).toEqual(f);
  });

  it('rejects short buffers and dlc above 8 when decoding', () => {
    expect(() => decodeCanFrame(new Uint8Array(15))).toThrow(/needs 16 bytes/);
    const bad = Buffer.alloc(16);
    bad[4] = 9;
    expect(() => decodeCanFrame(bad)).toThrow(/dlc 9 exceeds 8/);
  });

  it('splits raw can_id values into id and flags', () => {
    expect(parseCanId(0x123)).toEqual({ id: 0x123, extended: false, rtr: false, error: false });
    expect(parseCanId((0x80000000 | 0x1abcdef) >>> 0)).toEqual({ id: 0x1abcdef, extended: true, rtr: false, error: false });
    expect(parseCanId((0x40000000 | 0xfff) >>> 0)).toEqual({ id: 0x7ff, extended: false, rtr: true, error: false }); // SFF mask applies
    expect(parseCanId((CAN_ERR_FLAG | CAN_ERR_BUSOFF) >>> 0)).toEqual({ id: CAN_ERR_BUSOFF, extended: false, rtr: false, error: true });
    expect(canIdWithFlags(canErrorFrame(CAN_ERR_ACK))).toBe((CAN_ERR_FLAG | CAN_ERR_ACK) >>> 0);
  });
});

describe('error frames', () => {
  it('decodes every class into readable conditions', () => {
    const all =
      CAN_ERR_TX_TIMEOUT | CAN_ERR_LOSTARB | CAN_ERR_CRTL | CAN_ERR_PROT | CAN_ERR_TRX | CAN_ERR_ACK | CAN_ERR_BUSOFF | CAN_ERR_BUSERROR | CAN_ERR_RESTARTED | CAN_ERR_CNT;
    const frame = canErrorFrame(all, {
      0: 5,
      1: CAN_ERR_CRTL_RX_OVERFLOW | CAN_ERR_CRTL_TX_PASSIVE,
      2: CAN_ERR_PROT_FORM | CAN_ERR_PROT_STUFF | CAN_ERR_PROT_TX,
      3: 0x19,
      4: 0x04 | 0x70,
      6: 130,
      7: 12,
    });
    const info = describeCanError(frame);
    expect(info.classes).toBe(all);
    expect(info.busOff).toBe(true);
    expect(info.txErrors).toBe(130);
    expect(info.rxErrors).toBe(12);
    expect(info.messages).toEqual([
      'tx timeout',
      'lost arbitration at bit 5',
      'controller problem: rx buffer overflow, tx error passive',
      'protocol violation: frame format error, bit stuffing error, error on transmission at ack slot',
      'transceiver problem: CANH no wire, CANL short to GND',
      'no ack on transmission',
      'bus off',
      'bus error',
      'controller restarted',
      'error counters: tx 130, rx 12',
    ]);
  });

  it('handles unspecified details and unknown class bits', () => {
    expect(describeCanError(canErrorFrame(CAN_ERR_CRTL)).messages).toEqual(['controller problem (unspecified)']);
    expect(describeCanError(canErrorFrame(CAN_ERR_PROT)).messages).toEqual(['protocol violation (unspecified)']);
    expect(describeCanError(canErrorFrame(CAN_ERR_LOSTARB)).messages).toEqual(['lost arbitration']);
    expect(describeCanError(canErrorFrame(CAN_ERR_CRTL, { 1: CAN_ERR_CRTL_ACTIVE })).messages).toEqual(['controller problem: back to error active']);
    expect(describeCanError({ id: 0x4000, data: new Uint8Array(8) }).messages).toEqual(['unknown error class 0x4000']);
    const short = describeCanError({ id: CAN_ERR_BUSOFF, data: new Uint8Array(0) });
    expect(short).toEqual({ classes: CAN_ERR_BUSOFF, messages: ['bus off'], busOff: true });
  });

  it('formats frames candump-style for logs', () => {
    expect(formatCanFrame(std(0x12, [0xab, 0x01]))).toBe('012#AB01');
    expect(formatCanFrame({ ...std(0x1abcdef), extended: true })).toBe('01ABCDEF#');
    expect(formatCanFrame({ ...std(0x7ff), rtr: true, dlc: 4 })).toBe('7FF#R4');
    expect(formatCanFrame(canErrorFrame(CAN_ERR_BUSOFF))).toBe('ERR 0x40 [bus off]');
  });
});
