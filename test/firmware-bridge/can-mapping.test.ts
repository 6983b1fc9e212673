import { describe, expect, it } from 'vitest';
import {
  CAN_MAX_MESSAGE,
  CanReassembler,
  FirmwareReceiver,
  FirmwareSlots,
  FirmwareUpdater,
  ManualScheduler,
  MessageDirection,
  canIdFor,
  encodeCanMessage,
  parseCanId,
  type CanAddress,
  type CanDelivery,
  type CanFrame,
  type CanMalformed,
  type CanReassemblerStats,
  type Message,
} from '../../firmware-bridge/index.js';
import { hex, prng, randomBytes, randomInt, sameBytes, sampleMessages } from './helpers.js';

const addressFor = (msg: Message, node: number): CanAddress => ({
  node,
  direction: MessageDirection[msg.type] === 'to_device' ? 'to_device' : 'from_device',
});

const big = (node: number, seq: number): Message => ({ type: 'fw_chunk', seq, transfer_id: node, offset: 0, data: randomBytes(prng(node * 31 + seq), 200) });

function malformedSum(s: CanReassemblerStats): number {
  return s.bad_pci + s.unexpected_cf + s.bad_sequence + s.interrupted + s.timeouts + s.bad_address + s.unknown_type + s.bad_payload;
}

describe('CAN identifiers', () => {
  it('put the type code in bits 10..7, the direction in bit 6 and the node in bits 5..0', () => {
    expect(canIdFor('command', { node: 5, direction: 'to_device' })).toBe(0x085);
    expect(canIdFor('command_ack', { node: 5, direction: 'from_device' })).toBe(0x145);
    expect(canIdFor('fw_chunk', { node: 63, direction: 'to_device' })).toBe(0x6bf);
    expect(canIdFor('hello', { node: 0, direction: 'to_device' })).toBe(0x280);
    expect(parseCanId(0x145, false)).toEqual({ type: 0x02, direction: 'from_device', node: 5 });
    expect(() => canIdFor('heartbeat', { node: 0, direction: 'from_device' })).toThrow(RangeError);
    expect(() => canIdFor('heartbeat', { node: 64, direction: 'to_device' })).toThrow(RangeError);
  });

  it('commands win arbitration over telemetry and firmware chunks', () => {
    const cmd = canIdFor('command', { node: 63, direction: 'to_device' });
    expect(cmd).toBeLessThan(canIdFor('telemetry', { node: 1, direction: 'from_device' }));
    expect(canIdFor('fw_chunk_ack', { node: 63, direction: 'from_device' })).toBeLessThan(canIdFor('fw_chunk', { node: 1, direction: 'to_device' }));
  });

  it('extended ids carry a base in the upper 18 bits; other bases and formats are not ours', () => {
    const opts = { extended: true, idBase: 0x1abcd };
    const id = canIdFor('heartbeat', { node: 9, direction: 'from_device' }, opts);
    expect(id).toBe(((0x1abcd << 11) | 0x249) >>> 0);
    expect(parseCanId(id, true, opts)).toEqual({ type: 0x04, direction: 'from_device', node: 9 });
    expect(parseCanId(id, true, { extended: true, idBase: 1 })).toBeNull();
    expect(parseCanId(0x249, false, opts)).toBeNull();
    expect(parseCanId(id, true)).toBeNull();
  });
});

describe('CAN segmentation', () => {
  it('a short message is one single frame: PCI 0x0L, seq, payload', () => {
    const frames = encodeCanMessage({ type: 'fw_end', seq: 0x0304, transfer_id: 0x0102 }, { node: 5, direction: 'to_device' });
    expect(frames).toEqual([{ id: 0x485, extended: false, rtr: false, error: false, data: hex('04 04 03 02 01') }]);
  });

  it('a long message is a first frame and consecutive frames whose nibble wraps 15 -> 0', () => {
    const msg: Message = { type: 'fw_chunk', seq: 1, transfer_id: 2, offset: 0, data: new Uint8Array(300).fill(0xaa) };
    const frames = encodeCanMessage(msg, { node: 1, direction: 'to_device' });
    const total = 2 + 6 + 300;
    expect(frames[0]!.data[0]).toBe(0x10 | (total >> 8));
    expect(frames[0]!.data[1]).toBe(total & 0xff);
    expect(frames).toHaveLength(1 + Math.ceil((total - 6) / 7));
    expect(frames.slice(1).map((f) => f.data[0]! & 0x0f).slice(13, 18)).toEqual([14, 15, 0, 1, 2]);
    expect(frames.slice(0, -1).every((f) => f.data.length === 8)).toBe(true);
    const r = new CanReassembler();
    const out = frames.map((f) => r.push(f));
    expect(out.slice(0, -1).every((d) => d === null)).toBe(true);
    expect(out.at(-1)).toEqual({ node: 1, direction: 'to_device', message: msg });
  });

  for (const msg of sampleMessages()) {
    it(`round-trips ${msg.type} (seq ${msg.seq})`, () => {
      const r = new CanReassembler();
      const frames = encodeCanMessage(msg, addressFor(msg, 17));
      const got = frames.map((f) => r.push(f)).filter((d): d is CanDelivery => d !== null);
      expect(got).toEqual([{ ...addressFor(msg, 17), message: msg }]);
      expect(r.stats.messages_ok).toBe(1);
      expect(r.stats.malformed).toBe(0);
      expect(r.pending).toBe(0);
    });
  }

  it('handles the largest message (506 bytes) and padded frames', () => {
    const msg: Message = { type: 'fw_chunk', seq: 1, transfer_id: 2, offset: 0, data: new Uint8Array(498).fill(7) };
    const frames = encodeCanMessage(msg, { node: 3, direction: 'to_device' }, { padding: 0xcc });
    expect(frames.every((f) => f.data.length === 8)).toBe(true);
    const r = new CanReassembler();
    expect(frames.map((f) => r.push(f)).at(-1)?.message).toEqual(msg);
    expect(CAN_MAX_MESSAGE).toBe(506);
    // Padded single frame too.
    const small = encodeCanMessage({ type: 'fw_end', seq: 1, transfer_id: 2 }, { node: 3, direction: 'to_device' }, { padding: 0x55 });
    expect(small[0]!.data).toEqual(hex('04 01 00 02 00 55 55 55'));
    expect(new CanReassembler().push(small[0]!)?.message).toEqual({ type: 'fw_end', seq: 1, transfer_id: 2 });
  });

  it('refuses to encode a message in the wrong direction', () => {
    expect(() => encodeCanMessage({ type: 'fw_end', seq: 1, transfer_id: 2 }, { node: 3, direction: 'from_device' })).toThrow(RangeError);
  });
});

describe('CanReassembler', () => {
  it('reassembles messages from many nodes interleaved frame by frame (seeded shuffle)', () => {
    const rand = prng(3);
    const queues: CanFrame[][] = [];
    const expected: CanDelivery[] = [];
    for (let node = 1; node <= 12; node++) {
      const msg: Message = node % 2 ? big(node, node) : { type: 'telemetry', seq: node, timestamp_ms: node, readings: [{ name: `m${node}`, type: 'i32', value: -node, unit: 'mm' }, { name: 'ok', type: 'bool', value: true }] };
      const address = addressFor(msg, node);
      queues.push(encodeCanMessage(msg, address));
      expected.push({ ...address, message: msg });
    }
    const r = new CanReassembler();
    const got: CanDelivery[] = [];
    // Merge the per-node queues randomly, keeping each node's frames in order (as a CAN bus does).
    while (queues.some((q) => q.length)) {
      const live = queues.filter((q) => q.length);
      const d = r.push(live[randomInt(rand, 0, live.length - 1)]!.shift()!);
      if (d) got.push(d);
    }
    const byNode = (a: CanDelivery, b: CanDelivery) => a.node - b.node;
    expect(got.sort(byNode)).toEqual(expected.sort(byNode));
    expect(r.stats.malformed).toBe(0);
  });

  it('also keeps two message types from the same node apart (a high-priority frame overtaking)', () => {
    const r = new CanReassembler();
    const chunkAck: Message = { type: 'fw_chunk_ack', seq: 9, transfer_id: 1, status: 'ok', window: 4, next_offset: 256 };
    const telemetry: Message = { type: 'telemetry', seq: 8, timestamp_ms: 5, readings: [{ name: 'voltage', type: 'f32', value: 12.5, unit: 'V' }] };
    const a = encodeCanMessage(telemetry, { node: 4, direction: 'from_device' });
    const b = encodeCanMessage(chunkAck, { node: 4, direction: 'from_device' });
    const order = [a[0]!, b[0]!, a[1]!, b[1]!, ...a.slice(2), ...b.slice(2)];
    const got = order.map((f) => r.push(f)).filter(Boolean).map((d) => d!.message);
    expect(got).toEqual(expect.arrayContaining([telemetry, chunkAck]));
    expect(got).toHaveLength(2);
  });

  it('a missing consecutive frame drops the message and counts it; the next message is fine', () => {
    const seen: CanMalformed[] = [];
    const r = new CanReassembler({ onMalformed: (m) => seen.push(m) });
    const frames = encodeCanMessage(big(2, 1), { node: 2, direction: 'to_device' });
    const withoutThird = frames.filter((_, i) => i !== 3);
    expect(withoutThird.map((f) => r.push(f)).filter(Boolean)).toEqual([]);
    expect(r.stats.bad_sequence).toBe(1);
    // The rest of the broken message's frames are then unexpected.
    expect(r.stats.unexpected_cf).toBe(frames.length - 5);
    expect(r.stats.malformed).toBe(malformedSum(r.stats));
    expect(seen[0]).toMatchObject({ kind: 'bad_sequence', id: frames[0]!.id });
    const again = big(2, 2);
    expect(encodeCanMessage(again, { node: 2, direction: 'to_device' }).map((f) => r.push(f)).at(-1)?.message).toEqual(again);
  });

  it('out-of-order consecutive frames are counted as malformed', () => {
    const r = new CanReassembler();
    const frames = encodeCanMessage(big(3, 1), { node: 3, direction: 'to_device' });
    [frames[1], frames[2]] = [frames[2]!, frames[1]!];
    expect(frames.map((f) => r.push(f)).filter(Boolean)).toEqual([]);
    expect(r.stats.bad_sequence).toBe(1);
    expect(r.stats.messages_ok).toBe(0);
  });

  it('a new first frame or single frame interrupts an incomplete message on the same id', () => {
    const r = new CanReassembler();
    const one = encodeCanMessage(big(4, 1), { node: 4, direction: 'to_device' });
    const two = encodeCanMessage(big(4, 2), { node: 4, direction: 'to_device' });
    r.push(one[0]!);
    r.push(one[1]!);
    expect(two.map((f) => r.push(f)).at(-1)?.message).toEqual(big(4, 2));
    expect(r.stats.interrupted).toBe(1);
    r.push(one[0]!);
    const heartbeatToDevice = encodeCanMessage({ type: 'fw_end', seq: 3, transfer_id: 1 }, { node: 4, direction: 'to_device' });
    expect(r.push(heartbeatToDevice[0]!)).not.toBeNull(); // a different id: no interference
    expect(r.stats.interrupted).toBe(1);
  });

  it('times out a stalled message, on the next frame or through expire()', () => {
    const clock = new ManualScheduler();
    const r = new CanReassembler({ scheduler: clock, timeoutMs: 1000 });
    const frames = encodeCanMessage(big(5, 1), { node: 5, direction: 'to_device' });
    r.push(frames[0]!);
    clock.advance(1500);
    expect(r.push(frames[1]!)).toBeNull();
    expect(r.stats.timeouts).toBe(1);
    expect(r.stats.unexpected_cf).toBe(1);
    const other = encodeCanMessage(big(6, 1), { node: 6, direction: 'to_device' });
    r.push(other[0]!);
    clock.advance(999);
    expect(r.expire()).toBe(0);
    clock.advance(2);
    expect(r.expire()).toBe(1);
    expect(r.pending).toBe(0);
    expect(r.stats.timeouts).toBe(2);
  });

  it('counts bad PCI, bad addresses and unknown types; ignores RTR and foreign ids', () => {
    const r = new CanReassembler();
    const f = (id: number, data: string, extra: Partial<CanFrame> = {}): CanFrame => ({ id, extended: false, rtr: false, data: hex(data), ...extra });
    r.push(f(0x085, '')); // empty
    r.push(f(0x085, '08 00 00 00 00 00 00 00')); // SF length 8
    r.push(f(0x085, '05 01 00')); // SF longer than the frame
    r.push(f(0x085, '10 05 00 00 00 00 00 00')); // FF announcing 5 bytes
    r.push(f(0x085, '1F FF 00 00 00 00 00 00')); // FF announcing 4095 bytes
    r.push(f(0x085, '10 10 00 00 00')); // short FF
    r.push(f(0x085, '30 00 00')); // flow control: not used
    expect(r.stats.bad_pci).toBe(7);
    r.push(f(0x045, '04 00 00 01 00')); // function 0: not a type
    r.push(f(0x705, '04 00 00 01 00')); // function 14
    expect(r.stats.unknown_type).toBe(2);
    r.push(f(0x4c5, '04 00 00 01 00')); // FW_END from a device
    r.push(f(0x240, '07 00 00 00 00 00 00 00')); // heartbeat "from" node 0 (truncated payload, but the address is checked first)
    expect(r.stats.bad_address).toBe(2);
    r.push(f(0x485, '01 00')); // seq cut short
    r.push(f(0x485, '05 00 00 01 00 09')); // trailing byte
    expect(r.stats.bad_payload).toBe(2);
    r.push(f(0x485, '04 00 00 01 00', { rtr: true }));
    r.push(f(0x485, '04 00 00 01 00', { extended: true }));
    r.push({ ...f(0x485, '04 00 00 01 00'), error: true }); // an error frame from the HAL's codec
    expect(r.stats.ignored).toBe(3);
    expect(r.stats.messages_ok).toBe(0);
    expect(r.stats.malformed).toBe(malformedSum(r.stats));
  });

  it('never throws on random frames (seeded fuzz) and keeps its counters consistent', () => {
    const rand = prng(77);
    const r = new CanReassembler();
    for (let i = 0; i < 20_000; i++) {
      r.push({ id: randomInt(rand, 0, 0x7ff), extended: rand() < 0.05, rtr: rand() < 0.02, data: randomBytes(rand, randomInt(rand, 0, 8)) });
    }
    expect(r.stats.frames_in).toBe(20_000);
    expect(r.stats.malformed).toBe(malformedSum(r.stats));
    expect(r.stats.ignored + r.stats.malformed + r.stats.messages_ok).toBeLessThanOrEqual(20_000 + r.stats.interrupted + r.stats.timeouts);
  });
});

describe('firmware update over CAN', () => {
  it('runs end to end through segmentation and reassembly on a shared bus', async () => {
    const scheduler = new ManualScheduler();
    const node = 12;
    const gatewayRx = new CanReassembler({ scheduler });
    const deviceRx = new CanReassembler({ scheduler });
    const bus: CanFrame[] = [];
    let receiver!: FirmwareReceiver;
    let updater!: FirmwareUpdater;
    const pump = () => {
      scheduler.setTimeout(() => {
        while (bus.length) {
          const frame = bus.shift()!;
          const to = parseCanId(frame.id, frame.extended)!;
          if (to.direction === 'to_device') {
            const d = deviceRx.push(frame);
            if (d && d.node === node) receiver.handle(d.message);
          } else {
            const d = gatewayRx.push(frame);
            if (d) updater.handle(d.message);
          }
        }
      }, 1);
    };
    const sendFrom = (direction: CanAddress['direction']) => (msg: Message) => {
      bus.push(...encodeCanMessage(msg, { node, direction }));
      pump();
    };
    const image = randomBytes(prng(12), 3000);
    receiver = new FirmwareReceiver({ send: sendFrom('from_device'), flash: new FirmwareSlots({ version: '0.9.0', image: new Uint8Array(10) }), scheduler });
    updater = new FirmwareUpdater({ send: sendFrom('to_device'), image, version: '1.0.0', chunkSize: 120, scheduler, transferId: 5 });
    const done = updater.start();
    scheduler.runUntilIdle();
    const outcome = await done;
    expect(outcome).toMatchObject({ result: 'activated', active_version: '1.0.0', retransmits: 0 });
    expect(sameBytes(receiver.flash.active.image, image)).toBe(true);
    expect(gatewayRx.stats.malformed + deviceRx.stats.malformed).toBe(0);
  });
});
