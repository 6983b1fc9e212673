/**
 * Messages of the firmware bridge protocol, version 1: the typed `Message` union, the numeric codes
 * of every enumeration, and the payload codec (payload bytes only; framing lives in `frame.ts` for
 * serial and `can-mapping.ts` for CAN). The byte layouts are specified in docs/firmware-bridge.md §5.
 *
 * All multi-byte integers are little-endian. Strings are `str8`: one length byte, then that many
 * UTF-8 bytes, no terminator; every string field has a documented maximum so firmware can use fixed
 * buffers. Encoding validates and throws `RangeError` (a bug in the caller); decoding never throws
 * and returns a reason instead.
 */

/** The protocol version this library speaks. */
export const PROTOCOL_VERSION = 1;
/** Versions this library can decode and negotiate. */
export const SUPPORTED_VERSIONS: readonly number[] = [1];

/** Frame header: version u8, type u8, seq u16, payload length u16. */
export const HEADER_SIZE = 6;
/** Frame trailer: CRC-16/CCITT-FALSE, little-endian. */
export const CRC_SIZE = 2;
/** Largest decoded frame (header + payload + CRC) a v1 receiver must accept. */
export const MAX_FRAME_SIZE = 512;
/** Largest payload: `MAX_FRAME_SIZE - HEADER_SIZE - CRC_SIZE`. */
export const MAX_PAYLOAD = MAX_FRAME_SIZE - HEADER_SIZE - CRC_SIZE;
/**
 * The smallest `max_payload` a device may announce: every message to a device except FW_CHUNK fits
 * in it (the largest is FW_BEGIN with a 32-byte version: 74 bytes).
 */
export const MIN_DEVICE_PAYLOAD = 80;

/**
 * Message type codes. They are also the CAN function codes (4 bits), so they are ordered by CAN
 * priority: a lower code wins arbitration. 0x00 and 0x0E-0x0F are reserved in v1.
 */
export const MessageType = {
  command: 0x01,
  command_ack: 0x02,
  error: 0x03,
  heartbeat: 0x04,
  hello: 0x05,
  identity: 0x06,
  telemetry: 0x07,
  fw_begin: 0x08,
  fw_end: 0x09,
  fw_abort: 0x0a,
  fw_result: 0x0b,
  fw_chunk_ack: 0x0c,
  fw_chunk: 0x0d,
} as const;
export type MessageTypeName = keyof typeof MessageType;

const TYPE_NAMES = new Map<number, MessageTypeName>(
  (Object.entries(MessageType) as [MessageTypeName, number][]).map(([name, code]) => [code, name]),
);

/** The name of a v1 type code, or undefined for a reserved/unknown code. */
export function messageTypeName(code: number): MessageTypeName | undefined {
  return TYPE_NAMES.get(code);
}

/** Who may send each message type. */
export const MessageDirection: Record<MessageTypeName, 'to_device' | 'from_device' | 'both'> = {
  command: 'to_device',
  command_ack: 'from_device',
  error: 'both',
  heartbeat: 'both',
  hello: 'to_device',
  identity: 'from_device',
  telemetry: 'from_device',
  fw_begin: 'to_device',
  fw_end: 'to_device',
  fw_abort: 'to_device',
  fw_result: 'from_device',
  fw_chunk_ack: 'from_device',
  fw_chunk: 'to_device',
};

// ---------------------------------------------------------------------------------------------
// Enumerations (name <-> wire code)

function codeTable<const T extends string>(names: readonly (T | null)[]) {
  const toCode = new Map<string, number>();
  const toName = new Map<number, T>();
  names.forEach((name, code) => {
    if (name === null) return;
    toCode.set(name, code);
    toName.set(code, name);
  });
  return { names: names.filter((n): n is T => n !== null), toCode, toName };
}

/** Value types of telemetry readings and command arguments; every value is 4 bytes on the wire. */
export type ValueType = 'f32' | 'i32' | 'u32' | 'bool';
export const VALUE_TYPES = codeTable<ValueType>([null, 'f32', 'i32', 'u32', 'bool']);

export type Value =
  | { type: 'f32'; value: number }
  | { type: 'i32'; value: number }
  | { type: 'u32'; value: number }
  | { type: 'bool'; value: boolean };

/** One telemetry reading: a short metric name, a typed value and an optional unit. */
export type Reading = Value & { name: string; unit?: string };

export type CommandStatus = 'ok' | 'error' | 'unknown_command' | 'bad_args' | 'busy';
export const COMMAND_STATUSES = codeTable<CommandStatus>(['ok', 'error', 'unknown_command', 'bad_args', 'busy']);

export type DeviceStatus = 'ok' | 'degraded' | 'fault' | 'updating' | 'booting';
export const DEVICE_STATUSES = codeTable<DeviceStatus>(['ok', 'degraded', 'fault', 'updating', 'booting']);

export type ErrorCode = 'malformed' | 'bad_crc' | 'unsupported_version' | 'unknown_type' | 'bad_payload' | 'unexpected' | 'busy';
export const ERROR_CODES = codeTable<ErrorCode>([
  null,
  'malformed',
  'bad_crc',
  'unsupported_version',
  'unknown_type',
  'bad_payload',
  'unexpected',
  'busy',
]);

export type DigestAlg = 'crc32' | 'sha256';
export const DIGEST_ALGS = codeTable<DigestAlg>([null, 'crc32', 'sha256']);
/** Length in bytes of each digest as carried in `FwBegin.digest`. */
export const DIGEST_LENGTH: Record<DigestAlg, number> = { crc32: 4, sha256: 32 };
/** The digest field of FW_BEGIN is always 32 bytes; a CRC-32 fills the first 4 (LE) and zeros the rest. */
export const DIGEST_FIELD_SIZE = 32;

export type ChunkStatus = 'ok' | 'out_of_order' | 'unknown_transfer' | 'bad_chunk';
export const CHUNK_STATUSES = codeTable<ChunkStatus>(['ok', 'out_of_order', 'unknown_transfer', 'bad_chunk']);

export type FwResultCode = 'activated' | 'rolled_back' | 'aborted' | 'rejected';
export const FW_RESULTS = codeTable<FwResultCode>(['activated', 'rolled_back', 'aborted', 'rejected']);

/** Capability bits of IDENTITY (bit index -> name). Bits 9-31 are reserved in v1 and ignored. */
export const CAPABILITY_BITS = [
  'telemetry',
  'commands',
  'heartbeat',
  'fw_update',
  'fw_sha256',
  'fw_crc32',
  'fw_rollback',
  'fw_resume',
  'can',
] as const;
export type CapabilityName = (typeof CAPABILITY_BITS)[number];

/** Names of the set capability bits; unknown bits come out as `bit_<n>`. */
export function capabilityNames(bits: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 32; i++) if ((bits >>> i) & 1) out.push(CAPABILITY_BITS[i] ?? `bit_${i}`);
  return out;
}

/** The capability bit set for a list of names. */
export function capabilityBits(names: readonly CapabilityName[]): number {
  let bits = 0;
  for (const name of names) {
    const i = CAPABILITY_BITS.indexOf(name);
    if (i < 0) throw new RangeError(`unknown capability "${name}"`);
    bits |= 1 << i;
  }
  return bits >>> 0;
}

/** Fault bits of HEARTBEAT (bit index -> name). Bits 10-15 are reserved; 16-31 are device-specific. */
export const FAULT_BITS = [
  'overtemperature',
  'undervoltage',
  'overcurrent',
  'comms',
  'sensor',
  'actuator',
  'watchdog_reset',
  'brownout_reset',
  'config',
  'flash',
] as const;
export type FaultName = (typeof FAULT_BITS)[number];

/** Names of the set fault bits; other bits come out as `fault_<n>`. */
export function faultNames(bits: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 32; i++) if ((bits >>> i) & 1) out.push(FAULT_BITS[i] ?? `fault_${i}`);
  return out;
}

/** The fault bit set for a list of names. */
export function faultBits(names: readonly FaultName[]): number {
  let bits = 0;
  for (const name of names) {
    const i = FAULT_BITS.indexOf(name);
    if (i < 0) throw new RangeError(`unknown fault "${name}"`);
    bits |= 1 << i;
  }
  return bits >>> 0;
}

/** Well-known command ids. 0x0000 is reserved; 0x0100-0x7FFF are reserved for future standard commands; 0x8000-0xFFFF are device-specific. */
export const CommandId = {
  /** Reboot the device after acknowledging. No arguments. */
  reboot: 0x0001,
  /** Make the device identify itself physically (blink an LED) for `u32` seconds. */
  identify: 0x0002,
  /** Set the telemetry period to `u32` milliseconds (0 = stop sending telemetry). */
  set_telemetry_period: 0x0003,
  /** Clear latched fault bits. No arguments. */
  clear_faults: 0x0004,
  /** Send one TELEMETRY message now. No arguments. */
  read_telemetry: 0x0005,
} as const;

// ---------------------------------------------------------------------------------------------
// Messages

interface Base {
  /** Sender's sequence number, u16. Set by the sender; see docs/firmware-bridge.md §6 for the rules. */
  seq: number;
}

/** Gateway -> device: opens a session and negotiates the version. */
export interface Hello extends Base {
  type: 'hello';
  version_min: number;
  version_max: number;
  /** Random u32; the device echoes it in IDENTITY so the gateway can match the answer. */
  nonce: number;
}

/** Device -> gateway: who the device is. Answer to HELLO (nonce echoed), or unsolicited at boot (nonce 0). */
export interface Identity extends Base {
  type: 'identity';
  /** The version the device selected from the HELLO range (its highest when none fits). */
  protocol_version: number;
  nonce: number;
  /** Largest payload the device accepts (80..504); bounds the gateway's chunk size (max_payload - 6). */
  max_payload: number;
  /** Capability bit set (see CAPABILITY_BITS). */
  capabilities: number;
  device_id: string;
  device_type: string;
  /** Semantic version of the running firmware. */
  firmware_version: string;
  hardware_revision: string;
  serial_number: string;
  /** Up to 8 device-specific feature names ("imu", "gripper"). */
  features: string[];
}

/** Device -> gateway: one or more readings taken at `timestamp_ms` (device uptime, wraps at 2^32). */
export interface Telemetry extends Base {
  type: 'telemetry';
  timestamp_ms: number;
  readings: Reading[];
}

/** Gateway -> device: run command `command_id` with up to 8 typed arguments. */
export interface Command extends Base {
  type: 'command';
  command_id: number;
  args: Value[];
}

/** Device -> gateway: outcome of the COMMAND whose seq is `ref_seq`. */
export interface CommandAck extends Base {
  type: 'command_ack';
  ref_seq: number;
  status: CommandStatus;
  detail: string;
}

/** Both ways: liveness, device state and fault bits. */
export interface Heartbeat extends Base {
  type: 'heartbeat';
  uptime_ms: number;
  status: DeviceStatus;
  faults: number;
}

/** Both ways: a received frame was malformed or unexpected. Never answered with another ERROR. */
export interface ErrorMessage extends Base {
  type: 'error';
  code: ErrorCode;
  /** Type code of the offending frame, or 0 when its header could not be trusted. */
  ref_type: number;
  /** Its seq (meaningful only when `ref_type` is not 0). */
  ref_seq: number;
  detail: string;
}

/** Gateway -> device: start (or resume) firmware transfer `transfer_id`. */
export interface FwBegin extends Base {
  type: 'fw_begin';
  transfer_id: number;
  image_size: number;
  chunk_size: number;
  digest_alg: DigestAlg;
  /** 4 bytes (CRC-32, little-endian) or 32 bytes (SHA-256). */
  digest: Uint8Array;
  /** Semantic version of the new image. */
  version: string;
}

/** Gateway -> device: image bytes at `offset` (a multiple of chunk_size; all but the last chunk are full). */
export interface FwChunk extends Base {
  type: 'fw_chunk';
  transfer_id: number;
  offset: number;
  data: Uint8Array;
}

/** Device -> gateway: cumulative acknowledgement (answer to FW_BEGIN and FW_CHUNK). */
export interface FwChunkAck extends Base {
  type: 'fw_chunk_ack';
  transfer_id: number;
  status: ChunkStatus;
  /** How many chunks past `next_offset` the gateway may have in flight (>= 1). */
  window: number;
  /** Every byte below this offset is written; the next chunk the device wants. */
  next_offset: number;
}

/** Gateway -> device: all bytes sent and acknowledged; verify and activate. */
export interface FwEnd extends Base {
  type: 'fw_end';
  transfer_id: number;
}

/** Gateway -> device: abandon the transfer; keep the running image. */
export interface FwAbort extends Base {
  type: 'fw_abort';
  transfer_id: number;
  detail: string;
}

/** Device -> gateway: final outcome of a transfer, and which version is running now. */
export interface FwResult extends Base {
  type: 'fw_result';
  transfer_id: number;
  result: FwResultCode;
  active_version: string;
  detail: string;
}

export type Message =
  | Hello
  | Identity
  | Telemetry
  | Command
  | CommandAck
  | Heartbeat
  | ErrorMessage
  | FwBegin
  | FwChunk
  | FwChunkAck
  | FwEnd
  | FwAbort
  | FwResult;

/** The member of the union with a given `type`. */
export type MessageOf<T extends MessageTypeName> = Extract<Message, { type: T }>;

// ---------------------------------------------------------------------------------------------
// Field limits and validation

/** Maximum byte lengths of the string fields (UTF-8 bytes). */
export const LIMITS = {
  device_id: 32,
  device_type: 32,
  version: 32,
  hardware_revision: 16,
  serial_number: 32,
  feature: 16,
  features: 8,
  metric_name: 16,
  unit: 8,
  readings: 32,
  detail: 64,
  args: 8,
} as const;

const IDENT_RE = /^[A-Za-z0-9._:-]+$/;
const SEMVER_RE =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f]/;

/** True for a semantic version (semver 2.0: MAJOR.MINOR.PATCH[-pre][+build]). */
export function isSemver(s: string): boolean {
  return SEMVER_RE.test(s);
}

type StrKind = 'ident' | 'semver' | 'text';

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

function checkString(field: string, s: string, bytes: number, min: number, max: number, kind: StrKind): string | null {
  if (bytes < min || bytes > max) return `${field}: ${bytes} bytes, must be ${min}..${max}`;
  if (kind === 'ident' && s.length > 0 && !IDENT_RE.test(s)) return `${field}: only A-Z a-z 0-9 . _ : - allowed`;
  if (kind === 'semver' && !SEMVER_RE.test(s)) return `${field}: "${s}" is not a semantic version`;
  if (kind === 'text' && CONTROL_RE.test(s)) return `${field}: control characters are not allowed`;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Payload writer / reader

class Writer {
  private readonly buf = new Uint8Array(MAX_PAYLOAD);
  private readonly view = new DataView(this.buf.buffer);
  private n = 0;

  private room(k: number, field: string): void {
    if (this.n + k > MAX_PAYLOAD) throw new RangeError(`payload exceeds ${MAX_PAYLOAD} bytes at ${field}`);
  }
  private int(field: string, v: number, lo: number, hi: number): void {
    if (!Number.isInteger(v) || v < lo || v > hi) throw new RangeError(`${field}: ${v} is not an integer in ${lo}..${hi}`);
  }
  u8(field: string, v: number, lo = 0, hi = 0xff): void {
    this.int(field, v, lo, hi);
    this.room(1, field);
    this.buf[this.n++] = v;
  }
  u16(field: string, v: number, lo = 0, hi = 0xffff): void {
    this.int(field, v, lo, hi);
    this.room(2, field);
    this.view.setUint16(this.n, v, true);
    this.n += 2;
  }
  u32(field: string, v: number, lo = 0, hi = 0xffffffff): void {
    this.int(field, v, lo, hi);
    this.room(4, field);
    this.view.setUint32(this.n, v, true);
    this.n += 4;
  }
  bytes(field: string, b: Uint8Array): void {
    this.room(b.length, field);
    this.buf.set(b, this.n);
    this.n += b.length;
  }
  str(field: string, s: unknown, min: number, max: number, kind: StrKind): void {
    if (typeof s !== 'string') throw new RangeError(`${field}: expected a string`);
    const b = utf8Encoder.encode(s);
    const bad = checkString(field, s, b.length, min, max, kind);
    if (bad) throw new RangeError(bad);
    this.u8(field, b.length);
    this.bytes(field, b);
  }
  value(field: string, v: Value): void {
    const code = VALUE_TYPES.toCode.get(v?.type);
    if (code === undefined) throw new RangeError(`${field}: unknown value type "${String(v?.type)}"`);
    this.u8(field, code);
    this.room(4, field);
    switch (v.type) {
      case 'f32':
        if (typeof v.value !== 'number') throw new RangeError(`${field}: f32 needs a number`);
        this.view.setFloat32(this.n, v.value, true);
        break;
      case 'i32':
        this.int(field, v.value, -0x80000000, 0x7fffffff);
        this.view.setInt32(this.n, v.value, true);
        break;
      case 'u32':
        this.int(field, v.value, 0, 0xffffffff);
        this.view.setUint32(this.n, v.value, true);
        break;
      case 'bool':
        if (typeof v.value !== 'boolean') throw new RangeError(`${field}: bool needs true or false`);
        this.view.setUint32(this.n, v.value ? 1 : 0, true);
        break;
    }
    this.n += 4;
  }
  code<T extends string>(field: string, table: { toCode: Map<string, number> }, name: T): void {
    const code = table.toCode.get(name);
    if (code === undefined) throw new RangeError(`${field}: unknown value "${String(name)}"`);
    this.u8(field, code);
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.n);
  }
}

/** Thrown inside the reader only; `decodePayload` turns it into a result. */
class Bad {
  constructor(readonly reason: string) {}
}

class Reader {
  private readonly view: DataView;
  private n = 0;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  private need(k: number, field: string): void {
    if (this.n + k > this.buf.length) throw new Bad(`payload too short at ${field}`);
  }
  u8(field: string): number {
    this.need(1, field);
    return this.buf[this.n++]!;
  }
  u16(field: string): number {
    this.need(2, field);
    const v = this.view.getUint16(this.n, true);
    this.n += 2;
    return v;
  }
  u32(field: string): number {
    this.need(4, field);
    const v = this.view.getUint32(this.n, true);
    this.n += 4;
    return v;
  }
  bytes(field: string, k: number): Uint8Array {
    this.need(k, field);
    const b = this.buf.slice(this.n, this.n + k);
    this.n += k;
    return b;
  }
  rest(): Uint8Array {
    const b = this.buf.slice(this.n);
    this.n = this.buf.length;
    return b;
  }
  str(field: string, min: number, max: number, kind: StrKind): string {
    const len = this.u8(field);
    this.need(len, field);
    let s: string;
    try {
      s = utf8Decoder.decode(this.buf.subarray(this.n, this.n + len));
    } catch {
      throw new Bad(`${field}: invalid UTF-8`);
    }
    this.n += len;
    const bad = checkString(field, s, len, min, max, kind);
    if (bad) throw new Bad(bad);
    return s;
  }
  value(field: string): Value {
    const type = VALUE_TYPES.toName.get(this.u8(field));
    if (type === undefined) throw new Bad(`${field}: unknown value type`);
    this.need(4, field);
    let v: Value;
    switch (type) {
      case 'f32':
        v = { type, value: this.view.getFloat32(this.n, true) };
        break;
      case 'i32':
        v = { type, value: this.view.getInt32(this.n, true) };
        break;
      case 'u32':
        v = { type, value: this.view.getUint32(this.n, true) };
        break;
      case 'bool': {
        const raw = this.view.getUint32(this.n, true);
        if (raw > 1) throw new Bad(`${field}: bool must be 0 or 1`);
        v = { type, value: raw === 1 };
        break;
      }
    }
    this.n += 4;
    return v;
  }
  code<T extends string>(field: string, table: { toName: Map<number, T> }): T {
    const name = table.toName.get(this.u8(field));
    if (name === undefined) throw new Bad(`${field}: unknown code`);
    return name;
  }
  end(): void {
    if (this.n !== this.buf.length) throw new Bad(`${this.buf.length - this.n} unexpected trailing byte(s)`);
  }
}

// ---------------------------------------------------------------------------------------------
// Payload codec

/** Encodes the payload of `msg` (without header or CRC). Throws RangeError when a field is invalid. */
export function encodePayload(msg: Message): Uint8Array {
  const w = new Writer();
  switch (msg.type) {
    case 'hello':
      w.u8('version_min', msg.version_min, 1);
      w.u8('version_max', msg.version_max, msg.version_min);
      w.u32('nonce', msg.nonce);
      break;
    case 'identity':
      w.u8('protocol_version', msg.protocol_version, 1);
      w.u32('nonce', msg.nonce);
      w.u16('max_payload', msg.max_payload, MIN_DEVICE_PAYLOAD, MAX_PAYLOAD);
      w.u32('capabilities', msg.capabilities);
      w.str('device_id', msg.device_id, 1, LIMITS.device_id, 'ident');
      w.str('device_type', msg.device_type, 1, LIMITS.device_type, 'ident');
      w.str('firmware_version', msg.firmware_version, 5, LIMITS.version, 'semver');
      w.str('hardware_revision', msg.hardware_revision, 0, LIMITS.hardware_revision, 'text');
      w.str('serial_number', msg.serial_number, 0, LIMITS.serial_number, 'text');
      w.u8('features.length', msg.features.length, 0, LIMITS.features);
      msg.features.forEach((f, i) => w.str(`features[${i}]`, f, 1, LIMITS.feature, 'ident'));
      break;
    case 'telemetry':
      w.u32('timestamp_ms', msg.timestamp_ms);
      w.u8('readings.length', msg.readings.length, 1, LIMITS.readings);
      msg.readings.forEach((r, i) => {
        w.str(`readings[${i}].name`, r.name, 1, LIMITS.metric_name, 'ident');
        w.value(`readings[${i}]`, r);
        w.str(`readings[${i}].unit`, r.unit ?? '', 0, LIMITS.unit, 'text');
      });
      break;
    case 'command':
      w.u16('command_id', msg.command_id, 1);
      w.u8('args.length', msg.args.length, 0, LIMITS.args);
      msg.args.forEach((a, i) => w.value(`args[${i}]`, a));
      break;
    case 'command_ack':
      w.u16('ref_seq', msg.ref_seq);
      w.code('status', COMMAND_STATUSES, msg.status);
      w.str('detail', msg.detail, 0, LIMITS.detail, 'text');
      break;
    case 'heartbeat':
      w.u32('uptime_ms', msg.uptime_ms);
      w.code('status', DEVICE_STATUSES, msg.status);
      w.u32('faults', msg.faults);
      break;
    case 'error':
      w.code('code', ERROR_CODES, msg.code);
      w.u8('ref_type', msg.ref_type);
      w.u16('ref_seq', msg.ref_seq);
      w.str('detail', msg.detail, 0, LIMITS.detail, 'text');
      break;
    case 'fw_begin': {
      w.u16('transfer_id', msg.transfer_id);
      w.u32('image_size', msg.image_size, 1);
      w.u16('chunk_size', msg.chunk_size, 1, MAX_PAYLOAD - 6);
      w.code('digest_alg', DIGEST_ALGS, msg.digest_alg);
      if (!(msg.digest instanceof Uint8Array) || msg.digest.length !== DIGEST_LENGTH[msg.digest_alg]) {
        throw new RangeError(`digest: ${msg.digest_alg} needs ${DIGEST_LENGTH[msg.digest_alg]} bytes`);
      }
      const field = new Uint8Array(DIGEST_FIELD_SIZE);
      field.set(msg.digest);
      w.bytes('digest', field);
      w.str('version', msg.version, 5, LIMITS.version, 'semver');
      break;
    }
    case 'fw_chunk':
      w.u16('transfer_id', msg.transfer_id);
      w.u32('offset', msg.offset);
      if (!(msg.data instanceof Uint8Array) || msg.data.length < 1) throw new RangeError('data: at least one byte');
      w.bytes('data', msg.data);
      break;
    case 'fw_chunk_ack':
      w.u16('transfer_id', msg.transfer_id);
      w.code('status', CHUNK_STATUSES, msg.status);
      w.u8('window', msg.window, 1);
      w.u32('next_offset', msg.next_offset);
      break;
    case 'fw_end':
      w.u16('transfer_id', msg.transfer_id);
      break;
    case 'fw_abort':
      w.u16('transfer_id', msg.transfer_id);
      w.str('detail', msg.detail, 0, LIMITS.detail, 'text');
      break;
    case 'fw_result':
      w.u16('transfer_id', msg.transfer_id);
      w.code('result', FW_RESULTS, msg.result);
      w.str('active_version', msg.active_version, 5, LIMITS.version, 'semver');
      w.str('detail', msg.detail, 0, LIMITS.detail, 'text');
      break;
    default:
      throw new RangeError(`unknown message type "${String((msg as { type?: unknown }).type)}"`);
  }
  return w.result();
}

export type PayloadResult = { ok: true; message: Message } | { ok: false; reason: string };

/**
 * Decodes a payload of type `typeCode`. Never throws: an unknown type or a payload that does not
 * match the layout exactly (short, trailing bytes, bad code, string out of bounds, invalid UTF-8)
 * comes back as `{ ok: false, reason }`.
 */
export function decodePayload(typeCode: number, seq: number, payload: Uint8Array): PayloadResult {
  const type = messageTypeName(typeCode);
  if (type === undefined) return { ok: false, reason: `unknown message type 0x${typeCode.toString(16).padStart(2, '0')}` };
  const r = new Reader(payload);
  try {
    let message: Message;
    switch (type) {
      case 'hello': {
        const version_min = r.u8('version_min');
        const version_max = r.u8('version_max');
        const nonce = r.u32('nonce');
        if (version_min < 1 || version_max < version_min) throw new Bad('version range is empty');
        message = { type, seq, version_min, version_max, nonce };
        break;
      }
      case 'identity': {
        const protocol_version = r.u8('protocol_version');
        if (protocol_version < 1) throw new Bad('protocol_version must be >= 1');
        const nonce = r.u32('nonce');
        const max_payload = r.u16('max_payload');
        if (max_payload < MIN_DEVICE_PAYLOAD || max_payload > MAX_PAYLOAD) throw new Bad(`max_payload ${max_payload} out of ${MIN_DEVICE_PAYLOAD}..${MAX_PAYLOAD}`);
        const capabilities = r.u32('capabilities');
        const device_id = r.str('device_id', 1, LIMITS.device_id, 'ident');
        const device_type = r.str('device_type', 1, LIMITS.device_type, 'ident');
        const firmware_version = r.str('firmware_version', 5, LIMITS.version, 'semver');
        const hardware_revision = r.str('hardware_revision', 0, LIMITS.hardware_revision, 'text');
        const serial_number = r.str('serial_number', 0, LIMITS.serial_number, 'text');
        const count = r.u8('features.length');
        if (count > LIMITS.features) throw new Bad(`${count} features, at most ${LIMITS.features}`);
        const features: string[] = [];
        for (let i = 0; i < count; i++) features.push(r.str(`features[${i}]`, 1, LIMITS.feature, 'ident'));
        message = {
          type, seq, protocol_version, nonce, max_payload, capabilities, device_id, device_type,
          firmware_version, hardware_revision, serial_number, features,
        };
        break;
      }
      case 'telemetry': {
        const timestamp_ms = r.u32('timestamp_ms');
        const count = r.u8('readings.length');
        if (count < 1 || count > LIMITS.readings) throw new Bad(`${count} readings, must be 1..${LIMITS.readings}`);
        const readings: Reading[] = [];
        for (let i = 0; i < count; i++) {
          const name = r.str(`readings[${i}].name`, 1, LIMITS.metric_name, 'ident');
          const value = r.value(`readings[${i}]`);
          const unit = r.str(`readings[${i}].unit`, 0, LIMITS.unit, 'text');
          readings.push(unit ? { name, ...value, unit } : { name, ...value });
        }
        message = { type, seq, timestamp_ms, readings };
        break;
      }
      case 'command': {
        const command_id = r.u16('command_id');
        if (command_id === 0) throw new Bad('command_id 0 is reserved');
        const count = r.u8('args.length');
        if (count > LIMITS.args) throw new Bad(`${count} args, at most ${LIMITS.args}`);
        const args: Value[] = [];
        for (let i = 0; i < count; i++) args.push(r.value(`args[${i}]`));
        message = { type, seq, command_id, args };
        break;
      }
      case 'command_ack':
        message = {
          type, seq, ref_seq: r.u16('ref_seq'), status: r.code('status', COMMAND_STATUSES),
          detail: r.str('detail', 0, LIMITS.detail, 'text'),
        };
        break;
      case 'heartbeat':
        message = { type, seq, uptime_ms: r.u32('uptime_ms'), status: r.code('status', DEVICE_STATUSES), faults: r.u32('faults') };
        break;
      case 'error':
        message = {
          type, seq, code: r.code('code', ERROR_CODES), ref_type: r.u8('ref_type'), ref_seq: r.u16('ref_seq'),
          detail: r.str('detail', 0, LIMITS.detail, 'text'),
        };
        break;
      case 'fw_begin': {
        const transfer_id = r.u16('transfer_id');
        const image_size = r.u32('image_size');
        if (image_size < 1) throw new Bad('image_size must be >= 1');
        const chunk_size = r.u16('chunk_size');
        if (chunk_size < 1 || chunk_size > MAX_PAYLOAD - 6) throw new Bad(`chunk_size ${chunk_size} out of 1..${MAX_PAYLOAD - 6}`);
        const digest_alg = r.code('digest_alg', DIGEST_ALGS);
        const field = r.bytes('digest', DIGEST_FIELD_SIZE);
        const len = DIGEST_LENGTH[digest_alg];
        if (field.subarray(len).some((b) => b !== 0)) throw new Bad('digest: unused bytes must be zero');
        const version = r.str('version', 5, LIMITS.version, 'semver');
        message = { type, seq, transfer_id, image_size, chunk_size, digest_alg, digest: field.slice(0, len), version };
        break;
      }
      case 'fw_chunk': {
        const transfer_id = r.u16('transfer_id');
        const offset = r.u32('offset');
        const data = r.rest();
        if (data.length < 1) throw new Bad('fw_chunk without data');
        message = { type, seq, transfer_id, offset, data };
        break;
      }
      case 'fw_chunk_ack': {
        const transfer_id = r.u16('transfer_id');
        const status = r.code('status', CHUNK_STATUSES);
        const window = r.u8('window');
        if (window < 1) throw new Bad('window must be >= 1');
        message = { type, seq, transfer_id, status, window, next_offset: r.u32('next_offset') };
        break;
      }
      case 'fw_end':
        message = { type, seq, transfer_id: r.u16('transfer_id') };
        break;
      case 'fw_abort':
        message = { type, seq, transfer_id: r.u16('transfer_id'), detail: r.str('detail', 0, LIMITS.detail, 'text') };
        break;
      case 'fw_result':
        message = {
          type, seq, transfer_id: r.u16('transfer_id'), result: r.code('result', FW_RESULTS),
          active_version: r.str('active_version', 5, LIMITS.version, 'semver'), detail: r.str('detail', 0, LIMITS.detail, 'text'),
        };
        break;
    }
    r.end();
    return { ok: true, message };
  } catch (e) {
    if (e instanceof Bad) return { ok: false, reason: `${type}: ${e.reason}` };
    return { ok: false, reason: `${type}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * Version negotiation (device side): the highest version in `supported` that lies in the HELLO's
 * range, or null when none does (the device then answers with its own highest version and the
 * gateway treats it as incompatible).
 */
export function chooseVersion(hello: Pick<Hello, 'version_min' | 'version_max'>, supported: readonly number[] = SUPPORTED_VERSIONS): number | null {
  let best: number | null = null;
  for (const v of supported) if (v >= hello.version_min && v <= hello.version_max && (best === null || v > best)) best = v;
  return best;
}
