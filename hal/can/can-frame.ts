/**
 * One CAN frame model and codec shared by every CAN transport (SocketCAN and SLCAN adapters).
 *
 * Classic CAN only (dlc 0–8). The binary form is Linux's `struct can_frame` (16 bytes):
 *
 *   offset 0  u32  can_id   (host byte order) = id | EFF 0x80000000 | RTR 0x40000000 | ERR 0x20000000
 *   offset 4  u8   len      (dlc, 0..8)
 *   offset 5  u8   __pad
 *   offset 6  u8   __res0
 *   offset 7  u8   len8_dlc (unused for classic frames, 0)
 *   offset 8  u8   data[8]  (bytes past len are zero)
 *
 * Error frames (ERR flag) carry an error class in the id bits and details in data[0..7]
 * (linux/can/error.h); `describeCanError` turns them into a human-readable list.
 */
import { endianness } from 'node:os';

export interface CanFrame {
  /** 11-bit (standard) or 29-bit (extended) identifier; for error frames, the CAN_ERR_* class bits. */
  id: number;
  extended: boolean;
  /** Remote transmission request: carries a dlc (the requested length) but no data. */
  rtr: boolean;
  /** An error frame reported by the controller/driver (never sent on the wire by us). */
  error: boolean;
  data: Uint8Array;
  /** Data length code for remote frames (0–8). For data frames the dlc is `data.length`. */
  dlc?: number;
  /** Receive time in milliseconds since the epoch (µs resolution), when the transport provides one. */
  timestamp?: number;
}

export const CAN_EFF_FLAG = 0x80000000;
export const CAN_RTR_FLAG = 0x40000000;
export const CAN_ERR_FLAG = 0x20000000;
export const CAN_SFF_MASK = 0x000007ff;
export const CAN_EFF_MASK = 0x1fffffff;
export const CAN_ERR_MASK = 0x1fffffff;
export const CAN_MAX_DLEN = 8;
/** sizeof(struct can_frame) */
export const CAN_FRAME_SIZE = 16;

export class CanFrameError extends Error {
  override name = 'CanFrameError';
}

/** Build a frame with defaults (standard data frame). `data` may be any byte array-like. */
export function canFrame(init: {
  id: number;
  extended?: boolean;
  rtr?: boolean;
  error?: boolean;
  data?: ArrayLike<number>;
  dlc?: number;
}): CanFrame {
  const frame: CanFrame = {
    id: init.id,
    extended: init.extended ?? init.id > CAN_SFF_MASK,
    rtr: init.rtr ?? false,
    error: init.error ?? false,
    data: Uint8Array.from(init.data ?? []),
  };
  if (init.dlc !== undefined) frame.dlc = init.dlc;
  assertCanFrame(frame);
  return frame;
}

/** The frame's data length code: `dlc` for remote frames, the data length otherwise. */
export function frameDlc(frame: CanFrame): number {
  return frame.rtr ? (frame.dlc ?? 0) : frame.data.length;
}

/** Why a frame is invalid, or null when it is valid. */
export function validateCanFrame(frame: CanFrame): string | null {
  if (frame === null || typeof frame !== 'object') return 'frame must be an object';
  if (!Number.isInteger(frame.id) || frame.id < 0) return `id must be a non-negative integer (got ${String(frame.id)})`;
  if (!(frame.data instanceof Uint8Array)) return 'data must be a Uint8Array';
  if (frame.error) {
    if (frame.id > CAN_ERR_MASK) return `error class 0x${frame.id.toString(16)} exceeds 0x1FFFFFFF`;
    if (frame.data.length > CAN_MAX_DLEN) return `data has ${frame.data.length} bytes; classic CAN carries at most 8`;
    return null;
  }
  if (frame.extended) {
    if (frame.id > CAN_EFF_MASK) return `extended id 0x${frame.id.toString(16)} exceeds 0x1FFFFFFF`;
  } else if (frame.id > CAN_SFF_MASK) {
    return `standard id 0x${frame.id.toString(16)} exceeds 0x7FF (set extended for 29-bit ids)`;
  }
  if (frame.rtr) {
    if (frame.data.length !== 0) return 'remote frames carry no data (use dlc for the requested length)';
    const dlc = frame.dlc ?? 0;
    if (!Number.isInteger(dlc) || dlc < 0 || dlc > CAN_MAX_DLEN) return `dlc must be 0..8 (got ${String(frame.dlc)})`;
    return null;
  }
  if (frame.data.length > CAN_MAX_DLEN) return `data has ${frame.data.length} bytes; classic CAN carries at most 8`;
  if (frame.dlc !== undefined && frame.dlc !== frame.data.length) return `dlc ${frame.dlc} does not match ${frame.data.length} data bytes`;
  return null;
}

export function assertCanFrame(frame: CanFrame): void {
  const problem = validateCanFrame(frame);
  if (problem) throw new CanFrameError(`invalid CAN frame: ${problem}`);
}

/** The raw 32-bit can_id with flag bits, as the kernel sees it. */
export function canIdWithFlags(frame: CanFrame): number {
  if (frame.error) return (CAN_ERR_FLAG | (frame.id & CAN_ERR_MASK)) >>> 0;
  let raw = frame.extended ? (frame.id & CAN_EFF_MASK) | CAN_EFF_FLAG : frame.id & CAN_SFF_MASK;
  if (frame.rtr) raw |= CAN_RTR_FLAG;
  return raw >>> 0;
}

/** Split a raw can_id into id and flags. */
export function parseCanId(raw: number): Pick<CanFrame, 'id' | 'extended' | 'rtr' | 'error'> {
  const u = raw >>> 0;
  const error = (u & CAN_ERR_FLAG) !== 0;
  const extended = (u & CAN_EFF_FLAG) !== 0;
  const rtr = (u & CAN_RTR_FLAG) !== 0;
  const id = error ? u & CAN_ERR_MASK : extended ? u & CAN_EFF_MASK : u & CAN_SFF_MASK;
  return { id, extended: error ? false : extended, rtr: error ? false : rtr, error };
}

type Endian = 'LE' | 'BE';
const HOST_ENDIAN: Endian = endianness();

/** Encode to Linux `struct can_frame` (16 bytes, can_id in host byte order unless told otherwise). */
export function encodeCanFrame(frame: CanFrame, byteOrder: Endian = HOST_ENDIAN): Buffer {
  assertCanFrame(frame);
  const buf = Buffer.alloc(CAN_FRAME_SIZE);
  const raw = canIdWithFlags(frame);
  if (byteOrder === 'LE') buf.writeUInt32LE(raw, 0);
  else buf.writeUInt32BE(raw, 0);
  buf[4] = frameDlc(frame);
  if (!frame.rtr) buf.set(frame.data, 8);
  return buf;
}

/** Decode a Linux `struct can_frame`. Throws CanFrameError on a short buffer or a dlc above 8. */
export function decodeCanFrame(bytes: Uint8Array, byteOrder: Endian = HOST_ENDIAN): CanFrame {
  if (bytes.length < CAN_FRAME_SIZE) throw new CanFrameError(`struct can_frame needs 16 bytes, got ${bytes.length}`);
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const raw = byteOrder === 'LE' ? view.readUInt32LE(0) : view.readUInt32BE(0);
  const dlc = view[4]!;
  if (dlc > CAN_MAX_DLEN) throw new CanFrameError(`dlc ${dlc} exceeds 8`);
  const head = parseCanId(raw);
  if (head.rtr) return { ...head, data: new Uint8Array(0), dlc };
  return { ...head, data: Uint8Array.from(view.subarray(8, 8 + dlc)) };
}

// ---- error frames (linux/can/error.h) -------------------------------------------------------------

export const CAN_ERR_TX_TIMEOUT = 0x001;
export const CAN_ERR_LOSTARB = 0x002;
export const CAN_ERR_CRTL = 0x004;
export const CAN_ERR_PROT = 0x008;
export const CAN_ERR_TRX = 0x010;
export const CAN_ERR_ACK = 0x020;
export const CAN_ERR_BUSOFF = 0x040;
export const CAN_ERR_BUSERROR = 0x080;
export const CAN_ERR_RESTARTED = 0x100;
export const CAN_ERR_CNT = 0x200;
export const CAN_ERR_DLC = 8;

export const CAN_ERR_CRTL_RX_OVERFLOW = 0x01;
export const CAN_ERR_CRTL_TX_OVERFLOW = 0x02;
export const CAN_ERR_CRTL_RX_WARNING = 0x04;
export const CAN_ERR_CRTL_TX_WARNING = 0x08;
export const CAN_ERR_CRTL_RX_PASSIVE = 0x10;
export const CAN_ERR_CRTL_TX_PASSIVE = 0x20;
export const CAN_ERR_CRTL_ACTIVE = 0x40;

export const CAN_ERR_PROT_BIT = 0x01;
export const CAN_ERR_PROT_FORM = 0x02;
export const CAN_ERR_PROT_STUFF = 0x04;
export const CAN_ERR_PROT_BIT0 = 0x08;
export const CAN_ERR_PROT_BIT1 = 0x10;
export const CAN_ERR_PROT_OVERLOAD = 0x20;
export const CAN_ERR_PROT_ACTIVE = 0x40;
export const CAN_ERR_PROT_TX = 0x80;

const CLASS_NAMES: Array<[number, string]> = [
  [CAN_ERR_TX_TIMEOUT, 'tx timeout'],
  [CAN_ERR_LOSTARB, 'lost arbitration'],
  [CAN_ERR_CRTL, 'controller problem'],
  [CAN_ERR_PROT, 'protocol violation'],
  [CAN_ERR_TRX, 'transceiver problem'],
  [CAN_ERR_ACK, 'no ack on transmission'],
  [CAN_ERR_BUSOFF, 'bus off'],
  [CAN_ERR_BUSERROR, 'bus error'],
  [CAN_ERR_RESTARTED, 'controller restarted'],
  [CAN_ERR_CNT, 'error counters'],
];

const CRTL_NAMES: Array<[number, string]> = [
  [CAN_ERR_CRTL_RX_OVERFLOW, 'rx buffer overflow'],
  [CAN_ERR_CRTL_TX_OVERFLOW, 'tx buffer overflow'],
  [CAN_ERR_CRTL_RX_WARNING, 'rx error warning'],
  [CAN_ERR_CRTL_TX_WARNING, 'tx error warning'],
  [CAN_ERR_CRTL_RX_PASSIVE, 'rx error passive'],
  [CAN_ERR_CRTL_TX_PASSIVE, 'tx error passive'],
  [CAN_ERR_CRTL_ACTIVE, 'back to error active'],
];

const PROT_NAMES: Array<[number, string]> = [
  [CAN_ERR_PROT_BIT, 'single bit error'],
  [CAN_ERR_PROT_FORM, 'frame format error'],
  [CAN_ERR_PROT_STUFF, 'bit stuffing error'],
  [CAN_ERR_PROT_BIT0, 'unable to send dominant bit'],
  [CAN_ERR_PROT_BIT1, 'unable to send recessive bit'],
  [CAN_ERR_PROT_OVERLOAD, 'bus overload'],
  [CAN_ERR_PROT_ACTIVE, 'active error announcement'],
  [CAN_ERR_PROT_TX, 'error on transmission'],
];

const PROT_LOCATIONS: Record<number, string> = {
  0x03: 'start of frame',
  0x02: 'id bits 28-21',
  0x06: 'id bits 20-18',
  0x04: 'substitute rtr',
  0x05: 'id extension',
  0x07: 'id bits 17-13',
  0x0f: 'id bits 12-5',
  0x0e: 'id bits 4-0',
  0x0c: 'rtr',
  0x0d: 'reserved bit 1',
  0x09: 'reserved bit 0',
  0x0b: 'dlc',
  0x0a: 'data',
  0x08: 'crc sequence',
  0x18: 'crc delimiter',
  0x19: 'ack slot',
  0x1b: 'ack delimiter',
  0x1a: 'end of frame',
  0x12: 'intermission',
};

const TRX_NAMES: Record<number, string> = {
  0x04: 'CANH no wire',
  0x05: 'CANH short to BAT',
  0x06: 'CANH short to VCC',
  0x07: 'CANH short to GND',
  0x40: 'CANL no wire',
  0x50: 'CANL short to BAT',
  0x60: 'CANL short to VCC',
  0x70: 'CANL short to GND',
  0x80: 'CANL short to CANH',
};

export interface CanErrorInfo {
  /** The CAN_ERR_* class bits. */
  classes: number;
  /** Human-readable conditions, most general first (e.g. ["controller problem: rx error passive", "bus off"]). */
  messages: string[];
  busOff: boolean;
  /** Error counters when CAN_ERR_CNT is set (or when the driver filled data[6..7]). */
  txErrors?: number;
  rxErrors?: number;
}

/** Decode an error frame's class and detail bytes into a list of conditions. */
export function describeCanError(frame: Pick<CanFrame, 'id' | 'data'>): CanErrorInfo {
  const classes = frame.id & CAN_ERR_MASK;
  const d = (i: number): number => frame.data[i] ?? 0;
  const messages: string[] = [];
  for (const [bit, name] of CLASS_NAMES) {
    if (!(classes & bit)) continue;
    switch (bit) {
      case CAN_ERR_LOSTARB:
        messages.push(d(0) ? `${name} at bit ${d(0)}` : name);
        break;
      case CAN_ERR_CRTL: {
        const details = CRTL_NAMES.filter(([b]) => d(1) & b).map(([, n]) => n);
        messages.push(details.length ? `${name}: ${details.join(', ')}` : `${name} (unspecified)`);
        break;
      }
      case CAN_ERR_PROT: {
        const details = PROT_NAMES.filter(([b]) => d(2) & b).map(([, n]) => n);
        const loc = PROT_LOCATIONS[d(3)];
        let text = details.length ? `${name}: ${details.join(', ')}` : `${name} (unspecified)`;
        if (loc) text += ` at ${loc}`;
        messages.push(text);
        break;
      }
      case CAN_ERR_TRX: {
        const hi = TRX_NAMES[d(4) & 0xf0];
        const lo = TRX_NAMES[d(4) & 0x0f];
        const details = [lo, hi].filter((x): x is string => Boolean(x));
        messages.push(details.length ? `${name}: ${details.join(', ')}` : `${name} (unspecified)`);
        break;
      }
      case CAN_ERR_CNT:
        messages.push(`${name}: tx ${d(6)}, rx ${d(7)}`);
        break;
      default:
        messages.push(name);
    }
  }
  const unknown = classes & ~0x3ff;
  if (unknown) messages.push(`unknown error class 0x${unknown.toString(16)}`);
  const info: CanErrorInfo = { classes, messages, busOff: (classes & CAN_ERR_BUSOFF) !== 0 };
  if (classes & CAN_ERR_CNT || d(6) || d(7)) {
    info.txErrors = d(6);
    info.rxErrors = d(7);
  }
  return info;
}

/** Build an error frame (class bits + detail bytes), e.g. to surface an SLCAN adapter's status flags. */
export function canErrorFrame(classes: number, details: Partial<Record<0 | 1 | 2 | 3 | 4 | 5 | 6 | 7, number>> = {}): CanFrame {
  const data = new Uint8Array(CAN_ERR_DLC);
  for (const [k, v] of Object.entries(details)) data[Number(k)] = (v as number) & 0xff;
  return { id: classes & CAN_ERR_MASK, extended: false, rtr: false, error: true, data };
}

/** Short text form for logs: `123#DEADBEEF`, `12345678#R4`, `ERR 0x4 [controller problem: …]` (candump style). */
export function formatCanFrame(frame: CanFrame): string {
  if (frame.error) return `ERR 0x${frame.id.toString(16)} [${describeCanError(frame).messages.join('; ')}]`;
  const id = frame.extended ? frame.id.toString(16).toUpperCase().padStart(8, '0') : frame.id.toString(16).toUpperCase().padStart(3, '0');
  if (frame.rtr) return `${id}#R${frameDlc(frame)}`;
  return `${id}#${Buffer.from(frame.data).toString('hex').toUpperCase()}`;
}
