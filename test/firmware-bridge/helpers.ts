import {
  CommandId,
  FrameDecoder,
  MessageDirection,
  capabilityBits,
  encodeMessage,
  type Message,
  type Scheduler,
} from '../../firmware-bridge/index.js';

/** mulberry32: a small seeded PRNG, so every fuzz run is reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

export function randomBytes(rand: () => number, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rand() * 256);
  return out;
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export function hex(s: string): Uint8Array {
  const clean = s.replace(/[^0-9a-fA-F]/g, '');
  return Uint8Array.from(clean.match(/../g) ?? [], (h) => parseInt(h, 16));
}

/** One message of every type, with values that survive f32 rounding. */
export function sampleMessages(): Message[] {
  return [
    { type: 'hello', seq: 1, version_min: 1, version_max: 3, nonce: 0xdeadbeef },
    {
      type: 'identity', seq: 2, protocol_version: 1, nonce: 0xdeadbeef, max_payload: 256,
      capabilities: capabilityBits(['telemetry', 'commands', 'fw_update', 'fw_sha256']),
      device_id: 'wheel-left.01', device_type: 'motor:bldc', firmware_version: '2.10.3-rc.1+build.7',
      hardware_revision: 'rev C', serial_number: 'SN-0042-ÄÖ', features: ['encoder', 'temp_sensor'],
    },
    {
      type: 'telemetry', seq: 3, timestamp_ms: 0xfffffff0,
      readings: [
        { name: 'temp_c', type: 'f32', value: 36.75, unit: '°C' },
        { name: 'rpm', type: 'i32', value: -1200 },
        { name: 'ticks', type: 'u32', value: 4_000_000_000, unit: 'tick' },
        { name: 'estop', type: 'bool', value: false },
      ],
    },
    { type: 'command', seq: 4, command_id: CommandId.identify, args: [{ type: 'u32', value: 5 }, { type: 'f32', value: -0.5 }, { type: 'bool', value: true }, { type: 'i32', value: -2147483648 }] },
    { type: 'command', seq: 5, command_id: 0x8001, args: [] },
    { type: 'command_ack', seq: 6, ref_seq: 4, status: 'bad_args', detail: 'arg 1 out of range' },
    { type: 'heartbeat', seq: 7, uptime_ms: 123456, status: 'fault', faults: 0x80000201 },
    { type: 'error', seq: 8, code: 'unknown_type', ref_type: 0x0e, ref_seq: 77, detail: 'type 0x0e' },
    {
      type: 'fw_begin', seq: 9, transfer_id: 0xbeef, image_size: 100_000, chunk_size: 240, digest_alg: 'sha256',
      digest: Uint8Array.from({ length: 32 }, (_, i) => i * 7 + 1), version: '3.0.0',
    },
    { type: 'fw_begin', seq: 10, transfer_id: 1, image_size: 1, chunk_size: 1, digest_alg: 'crc32', digest: Uint8Array.of(1, 2, 3, 4), version: '0.0.1' },
    { type: 'fw_chunk', seq: 11, transfer_id: 0xbeef, offset: 480, data: Uint8Array.from({ length: 240 }, (_, i) => i % 3 === 0 ? 0 : i) },
    { type: 'fw_chunk_ack', seq: 12, transfer_id: 0xbeef, status: 'out_of_order', window: 4, next_offset: 480 },
    { type: 'fw_end', seq: 13, transfer_id: 0xbeef },
    { type: 'fw_abort', seq: 14, transfer_id: 0xbeef, detail: 'operator cancelled' },
    { type: 'fw_result', seq: 0xffff, transfer_id: 0xbeef, result: 'rolled_back', active_version: '2.10.3-rc.1+build.7', detail: 'sha256 mismatch' },
  ];
}

export type Side = 'gateway' | 'device';

export interface LinkHooks {
  /** Return null to drop the message, or a (possibly modified) message to send. `n` counts messages of that type sent that way. */
  toDevice?: (msg: Message, n: number) => Message | null;
  toGateway?: (msg: Message, n: number) => Message | null;
}

/**
 * A simulated serial line: every message is encoded to real COBS frames, delayed by `latencyMs` on
 * the scheduler, pushed through a `FrameDecoder` on the other side and handed to that side's handler.
 */
export class SerialLink {
  readonly gatewayDecoder = new FrameDecoder();
  readonly deviceDecoder = new FrameDecoder();
  onDevice: (msg: Message) => void = () => {};
  onGateway: (msg: Message) => void = () => {};
  hooks: LinkHooks = {};
  cut = false;
  readonly sent = { toDevice: [] as Message[], toGateway: [] as Message[] };
  private readonly counts = new Map<string, number>();

  constructor(private readonly scheduler: Scheduler, private readonly latencyMs = 2) {}

  toDevice = (msg: Message): void => this.transmit(msg, 'device');
  toGateway = (msg: Message): void => this.transmit(msg, 'gateway');

  private transmit(original: Message, to: Side): void {
    const dir = MessageDirection[original.type];
    if (dir !== 'both' && dir !== (to === 'device' ? 'to_device' : 'from_device')) throw new Error(`${original.type} sent the wrong way`);
    const key = `${to}:${original.type}`;
    const n = this.counts.get(key) ?? 0;
    this.counts.set(key, n + 1);
    const hook = to === 'device' ? this.hooks.toDevice : this.hooks.toGateway;
    const msg = hook ? hook(original, n) : original;
    (to === 'device' ? this.sent.toDevice : this.sent.toGateway).push(original);
    if (!msg || this.cut) return;
    const bytes = encodeMessage(msg);
    this.scheduler.setTimeout(() => {
      const decoder = to === 'device' ? this.deviceDecoder : this.gatewayDecoder;
      for (const m of decoder.push(bytes)) (to === 'device' ? this.onDevice : this.onGateway)(m);
    }, this.latencyMs);
  }
}

/** Fast byte equality (vitest's deep equality is slow on many large arrays). */
export function sameBytes(a: Uint8Array | null | undefined, b: Uint8Array | null | undefined): boolean {
  if (!a || !b) return a === b;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}
