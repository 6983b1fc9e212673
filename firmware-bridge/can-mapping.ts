/**
 * The firmware bridge over classic CAN (8-byte frames). See docs/firmware-bridge.md §8.
 *
 * Identifier (11-bit, or the low 11 bits of a 29-bit id under a configurable base):
 *
 *   bit 10..7  function = the message type code (0x1..0xD; lower = higher priority)
 *   bit 6      direction: 0 = gateway -> device, 1 = device -> gateway
 *   bit 5..0   node id of the device (1..63; 0 = broadcast, gateway -> device only)
 *
 * Data: the message is `seq u16 | payload` (the serial payload layout unchanged; no version byte and
 * no CRC, the CAN controller checks each frame), segmented ISO-TP style: a single frame
 * (PCI 0x0L, L = 1..7) when it fits in 7 bytes, else a first frame (PCI 0x1H LL, 12-bit total length,
 * 6 data bytes) and consecutive frames (PCI 0x2N, N = 1, 2, ... 15, 0, 1 ..., 7 data bytes, the last
 * may be shorter). There are no flow-control frames.
 */
import { MAX_PAYLOAD, MessageDirection, MessageType, decodePayload, encodePayload, messageTypeName, type Message } from './messages.js';
import { systemScheduler, type Scheduler } from './timers.js';

/** A CAN frame, field-compatible with the HAL's CAN codec (`hal/can/`). */
export interface CanFrame {
  /** 11-bit (standard) or 29-bit (extended) identifier. */
  id: number;
  extended: boolean;
  /** Remote transmission request; the bridge never sends one and ignores received ones. */
  rtr: boolean;
  /** 0..8 bytes. */
  data: Uint8Array;
  /** An error frame reported by the controller (the HAL sets it); never part of the bridge's traffic. */
  error?: boolean;
}

/** A frame the bridge produces: a plain data frame, directly sendable by the HAL's CAN links. */
export type CanDataFrame = CanFrame & { rtr: false; error: false };

export type CanDirection = 'to_device' | 'from_device';

/** Node id 0 addresses every device (gateway -> device only). */
export const CAN_BROADCAST_NODE = 0;
export const CAN_MAX_NODE = 63;
/** Largest segmented message: seq (2) + the largest payload. */
export const CAN_MAX_MESSAGE = 2 + MAX_PAYLOAD;

export interface CanMappingOptions {
  /** Use 29-bit identifiers: `idBase << 11 | 11-bit id`. Default false (11-bit). */
  extended?: boolean;
  /** Upper 18 bits of the extended identifier (0..0x3FFFF). Default 0. */
  idBase?: number;
}

export interface CanAddress {
  node: number;
  direction: CanDirection;
}

export interface ParsedCanId extends CanAddress {
  /** Message type code (the CAN function code). */
  type: number;
}

/** The CAN identifier of a message of type `type` (name or code) between the gateway and `node`. */
export function canIdFor(type: Message['type'] | number, address: CanAddress, options: CanMappingOptions = {}): number {
  const code = typeof type === 'number' ? type : MessageType[type];
  if (!Number.isInteger(code) || code < 1 || code > 0x0f) throw new RangeError(`type code ${code} does not fit the 4-bit CAN function`);
  const { node, direction } = address;
  if (!Number.isInteger(node) || node < 0 || node > CAN_MAX_NODE) throw new RangeError(`node ${node} is not 0..${CAN_MAX_NODE}`);
  if (node === CAN_BROADCAST_NODE && direction === 'from_device') throw new RangeError('node 0 is broadcast: gateway -> device only');
  const std = (code << 7) | ((direction === 'from_device' ? 1 : 0) << 6) | node;
  if (!options.extended) return std;
  const base = options.idBase ?? 0;
  if (!Number.isInteger(base) || base < 0 || base > 0x3ffff) throw new RangeError('idBase must be 0..0x3FFFF');
  return ((base << 11) | std) >>> 0;
}

/**
 * Splits an identifier into type code, direction and node; null when the frame is not in this
 * mapping's id space (wrong id format, or another extended base). The type code may be unknown.
 */
export function parseCanId(id: number, extended: boolean, options: CanMappingOptions = {}): ParsedCanId | null {
  if (extended !== (options.extended ?? false)) return null;
  if (extended) {
    if (id >>> 11 !== (options.idBase ?? 0) || id > 0x1fffffff) return null;
  } else if (id > 0x7ff) {
    return null;
  }
  const std = id & 0x7ff;
  return { type: std >>> 7, direction: (std >>> 6) & 1 ? 'from_device' : 'to_device', node: std & 0x3f };
}

export interface CanEncodeOptions extends CanMappingOptions {
  /** Pad every frame to 8 bytes with this byte (for controllers that need DLC 8). Default: no padding. */
  padding?: number;
}

/** Segments `msg` into CAN frames for the link between the gateway and `address.node`. Throws on invalid messages. */
export function encodeCanMessage(msg: Message, address: CanAddress, options: CanEncodeOptions = {}): CanDataFrame[] {
  const id = canIdFor(msg.type, address, options);
  const allowed = MessageDirection[msg.type];
  if (allowed !== 'both' && allowed !== address.direction) throw new RangeError(`${msg.type} is only sent ${allowed.replace('_', ' ')}`);
  if (!Number.isInteger(msg.seq) || msg.seq < 0 || msg.seq > 0xffff) throw new RangeError(`seq: ${msg.seq} is not a u16`);
  const payload = encodePayload(msg);
  const body = new Uint8Array(2 + payload.length);
  body[0] = msg.seq & 0xff;
  body[1] = msg.seq >>> 8;
  body.set(payload, 2);
  const extended = options.extended ?? false;
  const pad = options.padding;
  const frame = (bytes: number[] | Uint8Array, pci: number[]): CanDataFrame => {
    const data = new Uint8Array(pad === undefined ? pci.length + bytes.length : 8);
    if (pad !== undefined) data.fill(pad);
    data.set(pci, 0);
    data.set(bytes, pci.length);
    return { id, extended, rtr: false, error: false, data };
  };
  if (body.length <= 7) return [frame(body, [body.length])];
  const frames: CanDataFrame[] = [frame(body.subarray(0, 6), [0x10 | (body.length >>> 8), body.length & 0xff])];
  let sn = 1;
  for (let at = 6; at < body.length; at += 7) {
    frames.push(frame(body.subarray(at, Math.min(at + 7, body.length)), [0x20 | sn]));
    sn = (sn + 1) & 0x0f;
  }
  return frames;
}

export interface CanDelivery extends CanAddress {
  message: Message;
}

/** Why a CAN frame or message was dropped. */
export type CanMalformedKind = 'bad_pci' | 'unexpected_cf' | 'bad_sequence' | 'interrupted' | 'timeout' | 'bad_address' | 'unknown_type' | 'bad_payload';

export interface CanMalformed {
  kind: CanMalformedKind;
  detail: string;
  id: number;
}

export interface CanReassemblerStats {
  frames_in: number;
  /** RTR frames, error frames and ids outside this mapping (not counted as malformed). */
  ignored: number;
  messages_ok: number;
  /** Sum of the counters below. */
  malformed: number;
  /** Unknown PCI, bad single-frame length, first frame too short/long, short consecutive frame. */
  bad_pci: number;
  /** A consecutive frame with no message in progress on its id. */
  unexpected_cf: number;
  /** A consecutive frame with the wrong sequence nibble (missing or reordered frame): message dropped. */
  bad_sequence: number;
  /** A new single/first frame while a message was in progress on the same id: the old one dropped. */
  interrupted: number;
  /** A message left incomplete for longer than the timeout. */
  timeouts: number;
  /** Direction not allowed for the type, or device -> gateway from node 0. */
  bad_address: number;
  unknown_type: number;
  bad_payload: number;
}

export interface CanReassemblerOptions extends CanMappingOptions {
  /** Drop a segmented message when its next frame is later than this. Default 1000 ms (ISO-TP N_Cr). */
  timeoutMs?: number;
  scheduler?: Pick<Scheduler, 'now'>;
  onMalformed?: (m: CanMalformed) => void;
}

interface Slot {
  buf: Uint8Array;
  filled: number;
  nextSn: number;
  last: number;
}

const STAT_OF: Record<CanMalformedKind, keyof CanReassemblerStats> = {
  bad_pci: 'bad_pci',
  unexpected_cf: 'unexpected_cf',
  bad_sequence: 'bad_sequence',
  interrupted: 'interrupted',
  timeout: 'timeouts',
  bad_address: 'bad_address',
  unknown_type: 'unknown_type',
  bad_payload: 'bad_payload',
};

/**
 * Reassembles messages from received CAN frames. One reassembly slot per identifier, so messages
 * from different nodes (and of different types) may interleave freely; frames of one identifier
 * must arrive in order. Never throws on input.
 */
export class CanReassembler {
  readonly stats: CanReassemblerStats = {
    frames_in: 0, ignored: 0, messages_ok: 0, malformed: 0, bad_pci: 0, unexpected_cf: 0, bad_sequence: 0,
    interrupted: 0, timeouts: 0, bad_address: 0, unknown_type: 0, bad_payload: 0,
  };
  private readonly slots = new Map<number, Slot>();
  private readonly timeoutMs: number;
  private readonly clock: Pick<Scheduler, 'now'>;
  private readonly options: CanMappingOptions;
  private readonly onMalformed: ((m: CanMalformed) => void) | undefined;

  constructor(options: CanReassemblerOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.clock = options.scheduler ?? systemScheduler;
    this.options = { extended: options.extended ?? false, idBase: options.idBase ?? 0 };
    this.onMalformed = options.onMalformed;
  }

  /** Segmented messages in progress. */
  get pending(): number {
    return this.slots.size;
  }

  /**
   * Feeds one received frame; returns the message it completed, if any. Accepts the HAL's frames
   * as they are: RTR frames and error frames (`error: true`, reported by the controller) are ignored.
   */
  push(frame: CanFrame): CanDelivery | null {
    this.stats.frames_in++;
    const parsed = frame.rtr || frame.error ? null : parseCanId(frame.id, frame.extended, this.options);
    if (!parsed) {
      this.stats.ignored++;
      return null;
    }
    const now = this.clock.now();
    const id = frame.id;
    let slot = this.slots.get(id);
    if (slot && now - slot.last > this.timeoutMs) {
      this.slots.delete(id);
      slot = undefined;
      this.drop('timeout', id, 'segmented message timed out');
    }
    const data = frame.data;
    if (data.length < 1 || data.length > 8) return this.drop('bad_pci', id, `data length ${data.length}`);
    const pci = data[0]! >>> 4;
    switch (pci) {
      case 0x0: {
        const len = data[0]! & 0x0f;
        if (len < 1 || len > 7 || len > data.length - 1) return this.drop('bad_pci', id, `single frame length ${len} with ${data.length} data bytes`);
        if (slot) {
          this.slots.delete(id);
          this.drop('interrupted', id, 'single frame during a segmented message');
        }
        return this.deliver(parsed, id, data.subarray(1, 1 + len));
      }
      case 0x1: {
        if (data.length !== 8) return this.drop('bad_pci', id, 'first frame must carry 8 bytes');
        const total = ((data[0]! & 0x0f) << 8) | data[1]!;
        if (total <= 7 || total > CAN_MAX_MESSAGE) return this.drop('bad_pci', id, `first frame length ${total} not in 8..${CAN_MAX_MESSAGE}`);
        if (slot) this.drop('interrupted', id, 'first frame during a segmented message');
        const buf = new Uint8Array(total);
        buf.set(data.subarray(2, 8), 0);
        this.slots.set(id, { buf, filled: 6, nextSn: 1, last: now });
        return null;
      }
      case 0x2: {
        if (!slot) return this.drop('unexpected_cf', id, 'consecutive frame without a first frame');
        const sn = data[0]! & 0x0f;
        if (sn !== slot.nextSn) {
          this.slots.delete(id);
          return this.drop('bad_sequence', id, `sequence ${sn}, expected ${slot.nextSn}`);
        }
        const remaining = slot.buf.length - slot.filled;
        const take = Math.min(7, remaining);
        if (data.length - 1 < take) {
          this.slots.delete(id);
          return this.drop('bad_pci', id, `consecutive frame with ${data.length - 1} bytes, expected ${take}`);
        }
        slot.buf.set(data.subarray(1, 1 + take), slot.filled);
        slot.filled += take;
        slot.nextSn = (slot.nextSn + 1) & 0x0f;
        slot.last = now;
        if (slot.filled < slot.buf.length) return null;
        this.slots.delete(id);
        return this.deliver(parsed, id, slot.buf);
      }
      default:
        return this.drop('bad_pci', id, `PCI type ${pci} not used by the bridge`);
    }
  }

  /** Drops segmented messages older than the timeout; returns how many. Call it periodically. */
  expire(): number {
    const now = this.clock.now();
    let n = 0;
    for (const [id, slot] of this.slots) {
      if (now - slot.last > this.timeoutMs) {
        this.slots.delete(id);
        this.drop('timeout', id, 'segmented message timed out');
        n++;
      }
    }
    return n;
  }

  /** Forgets every message in progress (bus reopened). */
  reset(): void {
    this.slots.clear();
  }

  private deliver(parsed: ParsedCanId, id: number, body: Uint8Array): CanDelivery | null {
    const name = messageTypeName(parsed.type);
    if (name === undefined) return this.drop('unknown_type', id, `function code ${parsed.type} is not a message type`);
    const allowed = MessageDirection[name];
    if ((allowed !== 'both' && allowed !== parsed.direction) || (parsed.node === CAN_BROADCAST_NODE && parsed.direction === 'from_device')) {
      return this.drop('bad_address', id, `${name} not allowed ${parsed.direction.replace('_', ' ')} node ${parsed.node}`);
    }
    if (body.length < 2) return this.drop('bad_payload', id, 'message shorter than its seq');
    const seq = body[0]! | (body[1]! << 8);
    const result = decodePayload(parsed.type, seq, body.subarray(2));
    if (!result.ok) return this.drop('bad_payload', id, result.reason);
    this.stats.messages_ok++;
    return { node: parsed.node, direction: parsed.direction, message: result.message };
  }

  private drop(kind: CanMalformedKind, id: number, detail: string): null {
    this.stats.malformed++;
    this.stats[STAT_OF[kind]]++;
    this.onMalformed?.({ kind, detail, id });
    return null;
  }
}
