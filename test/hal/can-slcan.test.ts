// SLCAN (Lawicel) ASCII codec and stream parsers.
import { describe, expect, it } from 'vitest';
import { CAN_ERR_BUSERROR, CAN_ERR_CRTL, CAN_ERR_CRTL_RX_OVERFLOW, CAN_ERR_LOSTARB, CAN_ERR_PROT, describeCanError, type CanFrame } from '../../hal/can/can-frame.js';
import {
  SlcanCommandParser,
  SlcanParser,
  decodeSlcanFrame,
  describeSlcanStatus,
  encodeSlcanFrame,
  slcanBitrateCommand,
  slcanCommands,
  slcanStatusToErrorFrame,
} from '../../hal/can/slcan.js';

const f = (id: number, data: number[], extended = false): CanFrame => ({ id, extended, rtr: false, error: false, data: Uint8Array.from(data) });
const remote = (id: number, dlc: number, extended = false): CanFrame => ({ id, extended, rtr: true, error: false, data: new Uint8Array(0), dlc });

describe('SLCAN frame lines', () => {
  it('encodes standard, extended and remote frames', () => {
    expect(encodeSlcanFrame(f(0x123, [0xde, 0xad, 0xbe, 0xef]))).toBe('t1234DEADBEEF\r');
    expect(encodeSlcanFrame(f(0x7ff, []))).toBe('t7FF0\r');
    expect(encodeSlcanFrame(f(0x1abcdef, [1, 2, 3], true))).toBe('T01ABCDEF3010203\r');
    expect(encodeSlcanFrame(remote(0x321, 4))).toBe('r3214\r');
    expect(encodeSlcanFrame(remote(0x18feef00, 8, true))).toBe('R18FEEF008\r');
    expect(encodeSlcanFrame(f(0x1, [0xff]), 0x1234)).toBe('t0011FF1234\r');
  });

  it('refuses invalid and error frames', () => {
    expect(() => encodeSlcanFrame(f(0x800, []))).toThrow(/exceeds 0x7FF/);
    expect(() => encodeSlcanFrame({ id: 4, extended: false, rtr: false, error: true, data: new Uint8Array(8) })).toThrow(/error frames/);
  });

  it('decodes what it encodes, with and without a timestamp', () => {
    for (const frame of [f(0x123, [1, 2, 3, 4, 5, 6, 7, 8]), f(0, []), f(0x1fffffff, [0xaa], true), remote(0x10, 0), remote(0x1234567, 7, true)]) {
      const line = encodeSlcanFrame(frame).slice(0, -1);
      expect(decodeSlcanFrame(line)).toEqual({ frame });
      expect(decodeSlcanFrame(`${line}EA5F`)).toEqual({ frame, timestamp: 0xea5f });
    }
    expect(decodeSlcanFrame('t1232abcd')?.frame.data).toEqual(Uint8Array.from([0xab, 0xcd])); // lowercase hex
  });

  it('rejects malformed lines', () => {
    for (const bad of ['', 'x', 't12', 't1239', 't123', 't1232AB', 't1232ABC', 't1232ABCDE', 't12G1AA', 'T2000000000', 'T3FFFFFFF0', 'r12', 'r1234AA', 't1232ABCD12', 'T123']) {
      expect(decodeSlcanFrame(bad), bad).toBeNull();
    }
  });
});

describe('SLCAN commands', () => {
  it('maps bitrates to S0..S8', () => {
    expect(slcanBitrateCommand(10_000)).toBe('S0\r');
    expect(slcanBitrateCommand(125_000)).toBe('S4\r');
    expect(slcanBitrateCommand(500_000)).toBe('S6\r');
    expect(slcanBitrateCommand(1_000_000)).toBe('S8\r');
    expect(slcanBitrateCommand('S3')).toBe('S3\r');
    expect(() => slcanBitrateCommand(333_333)).toThrow(/unsupported SLCAN bitrate 333333/);
    expect(() => slcanBitrateCommand('S9')).toThrow(/S0..S8/);
    expect(slcanCommands).toMatchObject({ open: 'O\r', listenOnly: 'L\r', close: 'C\r', version: 'V\r', status: 'F\r' });
    expect(slcanCommands.timestamps(true)).toBe('Z1\r');
  });

  it('maps F status flags to conditions and to an error frame', () => {
    expect(describeSlcanStatus(0)).toEqual([]);
    expect(describeSlcanStatus(0xff & ~0x10)).toEqual(['rx fifo full', 'tx fifo full', 'error warning', 'data overrun', 'error passive', 'arbitration lost', 'bus error']);
    expect(slcanStatusToErrorFrame(0)).toBeNull();
    const e = slcanStatusToErrorFrame(0x08 | 0x40 | 0x80)!;
    expect(e.error).toBe(true);
    expect(e.id).toBe(CAN_ERR_CRTL | CAN_ERR_LOSTARB | CAN_ERR_PROT | CAN_ERR_BUSERROR);
    expect(e.data[1]).toBe(CAN_ERR_CRTL_RX_OVERFLOW);
    expect(describeCanError(e).messages).toEqual(['lost arbitration', 'controller problem: rx buffer overflow', 'protocol violation (unspecified)', 'bus error']);
    const passive = describeCanError(slcanStatusToErrorFrame(0x24)!).messages;
    expect(passive).toEqual(['controller problem: rx error warning, tx error warning, rx error passive, tx error passive']);
  });
});

describe('SlcanParser (adapter → host)', () => {
  it('parses answers and frames across arbitrary chunk boundaries', () => {
    const stream = '\r\x07t1232ABCD\rz\rT01ABCDEF1FF\rZ\rV1013\rNA1B2\rF24\rr7FF8\rt0010EA5F\r';
    const expected = [
      { type: 'ok' },
      { type: 'error' },
      { type: 'frame', frame: f(0x123, [0xab, 0xcd]) },
      { type: 'tx-ack', extended: false },
      { type: 'frame', frame: f(0x1abcdef, [0xff], true) },
      { type: 'tx-ack', extended: true },
      { type: 'version', hardware: '10', software: '13', raw: '1013' },
      { type: 'serial', serial: 'A1B2' },
      { type: 'status', flags: 0x24, conditions: ['error warning', 'error passive'] },
      { type: 'frame', frame: remote(0x7ff, 8) },
      { type: 'frame', frame: f(0x001, []), timestamp: 0xea5f },
    ];
    for (const size of [1, 2, 3, 7, 1000]) {
      const p = new SlcanParser();
      const out = [];
      for (let i = 0; i < stream.length; i += size) out.push(...p.push(Buffer.from(stream.slice(i, i + size), 'latin1')));
      expect(out, `chunk size ${size}`).toEqual(expected);
      expect(p.malformed).toBe(0);
    }
  });

  it('counts garbage instead of throwing and resynchronises on the next CR', () => {
    const p = new SlcanParser({ maxLineLength: 40 });
    const junk = ['hello\r', 't12\r', 'tXYZ1AA\r', '\n\n', 'F2\r', 'V1\r', `${'x'.repeat(100)}\r`, '\0', 'ab\x07', 't1231AA\r\n'];
    const out = junk.flatMap((j) => p.push(j));
    expect(out).toEqual([{ type: 'error' }, { type: 'frame', frame: f(0x123, [0xaa]) }]);
    // hello, t12, tXYZ1AA, F2, V1, the over-long line, "ab" before the BELL
    expect(p.malformed).toBe(7);
    expect(p.lastMalformed).toBe('ab');
    expect(() => p.push(Buffer.from([0xff, 0xfe, 0x0d]))).not.toThrow();
    expect(p.malformed).toBe(8);
  });

  it('reset() drops a partial line', () => {
    const p = new SlcanParser();
    p.push('t123');
    p.reset();
    expect(p.push('t0010\r')).toEqual([{ type: 'frame', frame: f(1, []) }]);
    expect(p.malformed).toBe(0);
  });
});

describe('SlcanCommandParser (host → adapter)', () => {
  it('parses the command set and frames to transmit', () => {
    const p = new SlcanCommandParser();
    const out = p.push('C\rS6\rs031C\rZ1\rO\rL\rV\rN\rF\r\rt1230\rR000000017\rX12\r');
    expect(out).toEqual([
      { type: 'close' },
      { type: 'bitrate', code: 6, bitrate: 500_000 },
      { type: 'btr', value: '031C' },
      { type: 'timestamps', on: true },
      { type: 'open', listenOnly: false },
      { type: 'open', listenOnly: true },
      { type: 'version' },
      { type: 'serial' },
      { type: 'status' },
      { type: 'empty' },
      { type: 'frame', frame: f(0x123, []) },
      { type: 'frame', frame: remote(1, 7, true) },
      { type: 'command', command: 'X12' },
    ]);
    expect(p.push('S9\r!!\r\x07')).toEqual([]);
    expect(p.malformed).toBe(3);
  });
});
