/**
 * Serial framing of the firmware bridge: a frame is
 *
 *   version u8 | type u8 | seq u16 | length u16 | payload[length] | crc16 u16
 *
 * (little-endian; CRC-16/CCITT-FALSE over everything before it), COBS-encoded and followed by one
 * 0x00 delimiter. `encodeMessage` produces that; `FrameDecoder` turns an arbitrarily chunked byte
 * stream back into messages, resynchronising on the next 0x00 after garbage and counting every
 * malformed frame by cause. Nothing here throws on input.
 */
import { cobsDecodeInto, cobsEncodeInto, cobsMaxEncodedLength } from './cobs.js';
import { crc16CcittFalse } from './crc.js';
import {
  CRC_SIZE,
  HEADER_SIZE,
  MAX_FRAME_SIZE,
  MAX_PAYLOAD,
  MessageType,
  PROTOCOL_VERSION,
  SUPPORTED_VERSIONS,
  decodePayload,
  encodePayload,
  messageTypeName,
  type ErrorCode,
  type ErrorMessage,
  type Message,
} from './messages.js';

/** The frame delimiter on the serial line. */
export const FRAME_DELIMITER = 0x00;
/** Smallest valid decoded frame: header and CRC around an empty payload. */
export const MIN_FRAME_SIZE = HEADER_SIZE + CRC_SIZE;

/**
 * Builds one raw (un-stuffed) frame: header, payload, CRC. Exposed for tests and tools; senders
 * normally call `encodeMessage`.
 */
export function buildRawFrame(typeCode: number, seq: number, payload: Uint8Array, version = PROTOCOL_VERSION): Uint8Array {
  if (payload.length > MAX_PAYLOAD) throw new RangeError(`payload of ${payload.length} bytes exceeds ${MAX_PAYLOAD}`);
  if (!Number.isInteger(seq) || seq < 0 || seq > 0xffff) throw new RangeError(`seq: ${seq} is not a u16`);
  const raw = new Uint8Array(HEADER_SIZE + payload.length + CRC_SIZE);
  const view = new DataView(raw.buffer);
  raw[0] = version;
  raw[1] = typeCode;
  view.setUint16(2, seq, true);
  view.setUint16(4, payload.length, true);
  raw.set(payload, HEADER_SIZE);
  const crcAt = HEADER_SIZE + payload.length;
  view.setUint16(crcAt, crc16CcittFalse(raw, 0, crcAt), true);
  return raw;
}

/** COBS-encodes a raw frame and appends the 0x00 delimiter. */
export function stuffFrame(raw: Uint8Array): Uint8Array {
  const out = new Uint8Array(cobsMaxEncodedLength(raw.length) + 1);
  const end = cobsEncodeInto(raw, out, 0);
  out[end] = FRAME_DELIMITER;
  return out.slice(0, end + 1);
}

/**
 * Encodes `msg` as a complete serial frame: COBS(header | payload | CRC) followed by 0x00.
 * Throws RangeError when a field is out of range (a bug in the caller, never a wire condition).
 */
export function encodeMessage(msg: Message, version = PROTOCOL_VERSION): Uint8Array {
  return stuffFrame(buildRawFrame(MessageType[msg.type], msg.seq, encodePayload(msg), version));
}

/** Why a frame was dropped. Each kind has its own counter in `DecoderStats`. */
export type MalformedKind = 'cobs' | 'oversized' | 'bad_length' | 'crc' | 'bad_version' | 'unknown_type' | 'bad_payload';

/** A dropped frame. `version`, `type` and `seq` are present only when the CRC proved the header intact. */
export interface MalformedFrame {
  kind: MalformedKind;
  detail: string;
  version?: number;
  type?: number;
  seq?: number;
}

export interface DecoderStats {
  /** Bytes pushed into the decoder. */
  bytes_in: number;
  /** Frames decoded into messages. */
  frames_ok: number;
  /** All dropped frames: the sum of the counters below. */
  malformed: number;
  /** Invalid COBS (a code byte pointing past the frame end). */
  cobs_errors: number;
  /** Frames longer than the maximum frame size (discarded up to the next delimiter). */
  oversized: number;
  /** Shorter than a header and CRC, or the length field disagrees with the frame size (truncation). */
  bad_length: number;
  /** CRC mismatch. */
  crc_errors: number;
  /** Intact frame whose version byte this decoder does not accept. */
  bad_version: number;
  /** Intact frame of a reserved or unknown message type. */
  unknown_type: number;
  /** Intact frame whose payload does not match its type's layout. */
  bad_payload: number;
}

export function emptyDecoderStats(): DecoderStats {
  return {
    bytes_in: 0, frames_ok: 0, malformed: 0, cobs_errors: 0, oversized: 0, bad_length: 0, crc_errors: 0,
    bad_version: 0, unknown_type: 0, bad_payload: 0,
  };
}

const STAT_OF: Record<MalformedKind, keyof DecoderStats> = {
  cobs: 'cobs_errors',
  oversized: 'oversized',
  bad_length: 'bad_length',
  crc: 'crc_errors',
  bad_version: 'bad_version',
  unknown_type: 'unknown_type',
  bad_payload: 'bad_payload',
};

export type FrameResult = { ok: true; message: Message; version: number } | { ok: false; malformed: MalformedFrame };

/**
 * Checks and parses one raw (already un-stuffed) frame. Order of checks: size, length field, CRC,
 * version, type, payload. Never throws.
 */
export function parseRawFrame(
  raw: Uint8Array,
  versions: readonly number[] = SUPPORTED_VERSIONS,
  maxFrameSize = MAX_FRAME_SIZE,
): FrameResult {
  const bad = (m: MalformedFrame): FrameResult => ({ ok: false, malformed: m });
  if (raw.length > maxFrameSize) return bad({ kind: 'oversized', detail: `frame of ${raw.length} bytes exceeds ${maxFrameSize}` });
  if (raw.length < MIN_FRAME_SIZE) return bad({ kind: 'bad_length', detail: `frame of ${raw.length} bytes is shorter than ${MIN_FRAME_SIZE}` });
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const length = view.getUint16(4, true);
  if (HEADER_SIZE + length + CRC_SIZE !== raw.length) {
    return bad({ kind: 'bad_length', detail: `length field says ${length} payload bytes, frame carries ${raw.length - HEADER_SIZE - CRC_SIZE}` });
  }
  const crcAt = raw.length - CRC_SIZE;
  const expected = crc16CcittFalse(raw, 0, crcAt);
  const got = view.getUint16(crcAt, true);
  if (expected !== got) {
    return bad({ kind: 'crc', detail: `CRC 0x${got.toString(16).padStart(4, '0')} != computed 0x${expected.toString(16).padStart(4, '0')}` });
  }
  const version = raw[0]!;
  const type = raw[1]!;
  const seq = view.getUint16(2, true);
  if (!versions.includes(version)) return bad({ kind: 'bad_version', detail: `protocol version ${version} not supported`, version, type, seq });
  if (messageTypeName(type) === undefined) {
    return bad({ kind: 'unknown_type', detail: `unknown message type 0x${type.toString(16).padStart(2, '0')}`, version, type, seq });
  }
  const result = decodePayload(type, seq, raw.subarray(HEADER_SIZE, crcAt));
  if (!result.ok) return bad({ kind: 'bad_payload', detail: result.reason, version, type, seq });
  return { ok: true, message: result.message, version };
}

/**
 * Decodes one complete serial frame as produced by `encodeMessage` (with or without its trailing
 * delimiter). For a stream, use `FrameDecoder`.
 */
export function decodeFrame(bytes: Uint8Array, versions: readonly number[] = SUPPORTED_VERSIONS): FrameResult {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === FRAME_DELIMITER ? bytes.length - 1 : bytes.length;
  const out = new Uint8Array(Math.max(end, 1));
  const n = cobsDecodeInto(bytes, 0, end, out);
  if (n < 0) return { ok: false, malformed: { kind: 'cobs', detail: 'invalid COBS encoding' } };
  return parseRawFrame(out.subarray(0, n), versions);
}

export interface FrameDecoderOptions {
  /** Largest decoded frame accepted (header + payload + CRC), 8..512. Default 512. */
  maxFrameSize?: number;
  /** Version bytes accepted. Default: the versions this library supports ([1]). */
  versions?: readonly number[];
  /** Called for every dropped frame, e.g. to answer with an ERROR (see `errorFor`). */
  onMalformed?: (frame: MalformedFrame) => void;
}

/**
 * Stream decoder for the serial side. Feed it whatever the port delivers; it returns the messages
 * completed by that chunk. Its buffer is fixed at the largest encoded frame, so a peer sending
 * garbage without delimiters cannot make it grow: the excess is counted once as `oversized` and
 * skipped up to the next 0x00. Consecutive delimiters (idle line, resync) are ignored.
 */
export class FrameDecoder {
  readonly stats: DecoderStats = emptyDecoderStats();
  /** The most recent dropped frame, for diagnostics. */
  lastError: MalformedFrame | null = null;

  private readonly maxFrameSize: number;
  private readonly versions: readonly number[];
  private readonly onMalformed: ((frame: MalformedFrame) => void) | undefined;
  private readonly buf: Uint8Array;
  private readonly scratch: Uint8Array;
  private len = 0;
  private discarding = false;

  constructor(options: FrameDecoderOptions = {}) {
    this.maxFrameSize = options.maxFrameSize ?? MAX_FRAME_SIZE;
    if (!Number.isInteger(this.maxFrameSize) || this.maxFrameSize < MIN_FRAME_SIZE || this.maxFrameSize > MAX_FRAME_SIZE) {
      throw new RangeError(`maxFrameSize must be ${MIN_FRAME_SIZE}..${MAX_FRAME_SIZE}`);
    }
    this.versions = options.versions ?? SUPPORTED_VERSIONS;
    this.onMalformed = options.onMalformed;
    this.buf = new Uint8Array(cobsMaxEncodedLength(this.maxFrameSize));
    this.scratch = new Uint8Array(this.buf.length);
  }

  /** Bytes of an incomplete frame currently buffered. */
  get pending(): number {
    return this.len;
  }

  /** Drops any partial frame (e.g. after the port was reopened). */
  reset(): void {
    this.len = 0;
    this.discarding = false;
  }

  /** Feeds bytes; returns the messages whose frames ended in this chunk, in order. Never throws. */
  push(chunk: Uint8Array): Message[] {
    const out: Message[] = [];
    this.stats.bytes_in += chunk.length;
    let pos = 0;
    while (pos < chunk.length) {
      const z = chunk.indexOf(FRAME_DELIMITER, pos);
      const end = z < 0 ? chunk.length : z;
      if (!this.discarding && end > pos) {
        const n = end - pos;
        if (this.len + n > this.buf.length) {
          this.discarding = true;
          this.len = 0;
          this.drop({ kind: 'oversized', detail: `no delimiter within ${this.buf.length} encoded bytes` });
        } else {
          this.buf.set(chunk.subarray(pos, end), this.len);
          this.len += n;
        }
      }
      if (z < 0) break;
      if (this.discarding) this.discarding = false;
      else if (this.len > 0) this.finish(out);
      this.len = 0;
      pos = z + 1;
    }
    return out;
  }

  private finish(out: Message[]): void {
    const n = cobsDecodeInto(this.buf, 0, this.len, this.scratch);
    if (n < 0) {
      this.drop({ kind: 'cobs', detail: 'invalid COBS encoding' });
      return;
    }
    const result = parseRawFrame(this.scratch.subarray(0, n), this.versions, this.maxFrameSize);
    if (!result.ok) {
      this.drop(result.malformed);
      return;
    }
    this.stats.frames_ok++;
    out.push(result.message);
  }

  private drop(frame: MalformedFrame): void {
    this.stats.malformed++;
    this.stats[STAT_OF[frame.kind]]++;
    this.lastError = frame;
    this.onMalformed?.(frame);
  }
}

const ERROR_CODE_OF: Record<MalformedKind, ErrorCode> = {
  cobs: 'malformed',
  oversized: 'malformed',
  bad_length: 'malformed',
  crc: 'bad_crc',
  bad_version: 'unsupported_version',
  unknown_type: 'unknown_type',
  bad_payload: 'bad_payload',
};

/**
 * The ERROR message that answers a dropped frame (the receiver decides whether to send it; see the
 * rate rule in the spec). Returns null for a frame that was itself an ERROR: errors are never
 * answered with errors.
 */
export function errorFor(frame: MalformedFrame, seq: number): ErrorMessage | null {
  if (frame.type === MessageType.error) return null;
  const trusted = frame.type !== undefined && frame.seq !== undefined;
  return {
    type: 'error',
    seq,
    code: ERROR_CODE_OF[frame.kind],
    ref_type: trusted ? frame.type! : 0,
    ref_seq: trusted ? frame.seq! : 0,
    detail: truncateUtf8(frame.detail, 64),
  };
}

function truncateUtf8(s: string, maxBytes: number): string {
  const enc = new TextEncoder();
  if (enc.encode(s).length <= maxBytes) return s;
  let out = s;
  while (enc.encode(out).length > maxBytes) out = out.slice(0, -1);
  return out;
}
