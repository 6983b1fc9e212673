/**
 * The Lawicel / SLCAN ASCII protocol spoken by common USB-CAN adapters (CANUSB, CANable, USBtin, ...).
 *
 * Every message ends with CR (`\r`). Frames:
 *   tIIIL<data>      standard data frame: 3 hex id, 1 digit dlc, 2 hex per byte
 *   TIIIIIIIIL<data> extended data frame: 8 hex id
 *   rIIIL / RIIIIIIIIL  remote frames (dlc, no data)
 *   an optional 4-hex timestamp (ms, 0..0xEA5F) follows when the adapter has timestamps on (`Z1`).
 * Host commands: `S0`..`S8` bitrate, `O` open, `L` open listen-only, `C` close, `V` version,
 *   `N` serial number, `F` status flags, `Z0`/`Z1` timestamps off/on.
 * Adapter replies: `\r` = OK, `\x07` (BELL) = error; `z\r` / `Z\r` after a transmitted t/r or T/R
 *   frame; `Vhhss\r`, `Nxxxx\r`, `Fxx\r` answers.
 *
 * `SlcanParser` turns a byte stream (arbitrary chunking, line noise) into messages and counts
 * malformed lines instead of throwing. It has two roles: `host` parses what an adapter sends; `adapter`
 * parses what a host sends (used by device emulators and tests that play the adapter).
 */
import {
  CAN_EFF_MASK,
  CAN_ERR_CRTL,
  CAN_ERR_CRTL_RX_OVERFLOW,
  CAN_ERR_CRTL_RX_PASSIVE,
  CAN_ERR_CRTL_RX_WARNING,
  CAN_ERR_CRTL_TX_OVERFLOW,
  CAN_ERR_CRTL_TX_PASSIVE,
  CAN_ERR_CRTL_TX_WARNING,
  CAN_ERR_LOSTARB,
  CAN_ERR_PROT,
  CAN_ERR_BUSERROR,
  CAN_SFF_MASK,
  assertCanFrame,
  canErrorFrame,
  frameDlc,
  type CanFrame,
} from './can-frame.js';

export const SLCAN_OK = '\r';
export const SLCAN_BELL = '\x07';

/** `S<n>` bitrate codes of the Lawicel protocol. */
export const SLCAN_BITRATES: Readonly<Record<number, number>> = {
  10_000: 0,
  20_000: 1,
  50_000: 2,
  100_000: 3,
  125_000: 4,
  250_000: 5,
  500_000: 6,
  800_000: 7,
  1_000_000: 8,
};

/** The `S<n>` command for a bitrate in bit/s (or a code 0..8 given as `'S6'`). Throws on unsupported rates. */
export function slcanBitrateCommand(bitrate: number | string): string {
  if (typeof bitrate === 'string') {
    if (/^S[0-8]$/.test(bitrate)) return `${bitrate}\r`;
    throw new RangeError(`unsupported SLCAN bitrate command ${JSON.stringify(bitrate)} (S0..S8)`);
  }
  const code = SLCAN_BITRATES[bitrate];
  if (code === undefined) {
    throw new RangeError(`unsupported SLCAN bitrate ${bitrate} (one of ${Object.keys(SLCAN_BITRATES).join(', ')})`);
  }
  return `S${code}\r`;
}

export const slcanCommands = {
  open: 'O\r',
  listenOnly: 'L\r',
  close: 'C\r',
  version: 'V\r',
  serial: 'N\r',
  status: 'F\r',
  timestamps: (on: boolean) => (on ? 'Z1\r' : 'Z0\r'),
  bitrate: slcanBitrateCommand,
} as const;

const hex = (n: number, width: number): string => n.toString(16).toUpperCase().padStart(width, '0');

/** Encode a data or remote frame as an SLCAN line (with the trailing CR). Error frames cannot be sent. */
export function encodeSlcanFrame(frame: CanFrame, timestamp?: number): string {
  assertCanFrame(frame);
  if (frame.error) throw new RangeError('error frames cannot be transmitted over SLCAN');
  const dlc = frameDlc(frame);
  let line: string;
  if (frame.extended) line = `${frame.rtr ? 'R' : 'T'}${hex(frame.id & CAN_EFF_MASK, 8)}${dlc}`;
  else line = `${frame.rtr ? 'r' : 't'}${hex(frame.id & CAN_SFF_MASK, 3)}${dlc}`;
  if (!frame.rtr) for (const b of frame.data) line += hex(b, 2);
  if (timestamp !== undefined) line += hex(timestamp & 0xffff, 4);
  return `${line}\r`;
}

export interface SlcanFrameLine {
  frame: CanFrame;
  /** Adapter timestamp in ms within the minute (0..59999), when present. */
  timestamp?: number;
}

const HEX_RE = /^[0-9A-Fa-f]*$/;

/**
 * Decode one SLCAN frame line (without the CR). Returns null when the line is not a valid frame:
 * wrong length, non-hex characters, dlc above 8, id out of range.
 */
export function decodeSlcanFrame(line: string): SlcanFrameLine | null {
  const kind = line[0];
  if (kind !== 't' && kind !== 'T' && kind !== 'r' && kind !== 'R') return null;
  const extended = kind === 'T' || kind === 'R';
  const rtr = kind === 'r' || kind === 'R';
  const idLen = extended ? 8 : 3;
  if (line.length < 1 + idLen + 1 || !HEX_RE.test(line.slice(1))) return null;
  const id = parseInt(line.slice(1, 1 + idLen), 16);
  if (id > (extended ? CAN_EFF_MASK : CAN_SFF_MASK)) return null;
  const dlcChar = line[1 + idLen]!;
  if (dlcChar < '0' || dlcChar > '8') return null;
  const dlc = dlcChar.charCodeAt(0) - 48;
  const dataLen = rtr ? 0 : dlc * 2;
  const rest = line.length - (2 + idLen) - dataLen;
  if (rest !== 0 && rest !== 4) return null;
  const data = new Uint8Array(rtr ? 0 : dlc);
  for (let i = 0; i < data.length; i++) data[i] = parseInt(line.substr(2 + idLen + 2 * i, 2), 16);
  const frame: CanFrame = { id, extended, rtr, error: false, data };
  if (rtr) frame.dlc = dlc;
  const out: SlcanFrameLine = { frame };
  if (rest === 4) out.timestamp = parseInt(line.slice(line.length - 4), 16);
  return out;
}

// ---- status flags (`F` command) --------------------------------------------------------------------

export const SLCAN_STATUS_RX_FIFO_FULL = 0x01;
export const SLCAN_STATUS_TX_FIFO_FULL = 0x02;
export const SLCAN_STATUS_ERROR_WARNING = 0x04;
export const SLCAN_STATUS_DATA_OVERRUN = 0x08;
export const SLCAN_STATUS_ERROR_PASSIVE = 0x20;
export const SLCAN_STATUS_ARBITRATION_LOST = 0x40;
export const SLCAN_STATUS_BUS_ERROR = 0x80;

const STATUS_NAMES: Array<[number, string]> = [
  [SLCAN_STATUS_RX_FIFO_FULL, 'rx fifo full'],
  [SLCAN_STATUS_TX_FIFO_FULL, 'tx fifo full'],
  [SLCAN_STATUS_ERROR_WARNING, 'error warning'],
  [SLCAN_STATUS_DATA_OVERRUN, 'data overrun'],
  [SLCAN_STATUS_ERROR_PASSIVE, 'error passive'],
  [SLCAN_STATUS_ARBITRATION_LOST, 'arbitration lost'],
  [SLCAN_STATUS_BUS_ERROR, 'bus error'],
];

/** Human-readable conditions for the `F` status byte. */
export function describeSlcanStatus(flags: number): string[] {
  return STATUS_NAMES.filter(([bit]) => flags & bit).map(([, name]) => name);
}

/**
 * Map the `F` status byte onto a SocketCAN-style error frame so both transports report bus trouble
 * the same way (null when no flag is set).
 */
export function slcanStatusToErrorFrame(flags: number): CanFrame | null {
  if (!(flags & 0xff)) return null;
  let classes = 0;
  let ctrl = 0;
  if (flags & SLCAN_STATUS_RX_FIFO_FULL || flags & SLCAN_STATUS_DATA_OVERRUN) ctrl |= CAN_ERR_CRTL_RX_OVERFLOW;
  if (flags & SLCAN_STATUS_TX_FIFO_FULL) ctrl |= CAN_ERR_CRTL_TX_OVERFLOW;
  if (flags & SLCAN_STATUS_ERROR_WARNING) ctrl |= CAN_ERR_CRTL_RX_WARNING | CAN_ERR_CRTL_TX_WARNING;
  if (flags & SLCAN_STATUS_ERROR_PASSIVE) ctrl |= CAN_ERR_CRTL_RX_PASSIVE | CAN_ERR_CRTL_TX_PASSIVE;
  if (ctrl) classes |= CAN_ERR_CRTL;
  if (flags & SLCAN_STATUS_ARBITRATION_LOST) classes |= CAN_ERR_LOSTARB;
  if (flags & SLCAN_STATUS_BUS_ERROR) classes |= CAN_ERR_PROT | CAN_ERR_BUSERROR;
  return canErrorFrame(classes, { 1: ctrl });
}

// ---- stream parser ---------------------------------------------------------------------------------

/** What an adapter sends to the host. */
export type SlcanAdapterMessage =
  | { type: 'frame'; frame: CanFrame; timestamp?: number }
  | { type: 'ok' }
  | { type: 'error' }
  | { type: 'tx-ack'; extended: boolean }
  | { type: 'version'; hardware: string; software: string; raw: string }
  | { type: 'serial'; serial: string }
  | { type: 'status'; flags: number; conditions: string[] };

/** What a host sends to an adapter. */
export type SlcanHostMessage =
  | { type: 'frame'; frame: CanFrame }
  | { type: 'bitrate'; code: number; bitrate: number }
  | { type: 'btr'; value: string }
  | { type: 'open'; listenOnly: boolean }
  | { type: 'close' }
  | { type: 'version' }
  | { type: 'serial' }
  | { type: 'status' }
  | { type: 'timestamps'; on: boolean }
  | { type: 'empty' }
  | { type: 'command'; command: string };

export interface SlcanParserOptions {
  /** Longest accepted line; longer runs without CR are discarded as malformed. Default 64. */
  maxLineLength?: number;
}

const CODE_TO_BITRATE = Object.fromEntries(Object.entries(SLCAN_BITRATES).map(([rate, code]) => [code, Number(rate)]));

abstract class SlcanStream<M> {
  /** Lines (or BELL-less garbage runs) that did not parse. */
  malformed = 0;
  /** The last malformed line, for diagnostics. */
  lastMalformed: string | null = null;
  private buf = '';
  private overflow = false;
  private readonly maxLine: number;

  constructor(options: SlcanParserOptions = {}) {
    this.maxLine = options.maxLineLength ?? 64;
  }

  /** Feed bytes; returns every complete message they finish. Never throws on bad input. */
  push(chunk: Uint8Array | string): M[] {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length).toString('latin1');
    const out: M[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\r') {
        this.endLine(out, false);
      } else if (c === '\x07') {
        this.endLine(out, true);
      } else if (c === '\n' || c === '\0') {
        // tolerate CRLF adapters and line noise between messages
      } else if (this.overflow) {
        // skipping the rest of an over-long line
      } else if (this.buf.length >= this.maxLine) {
        this.bad(this.buf.slice(0, 32) + '…');
        this.buf = '';
        this.overflow = true;
      } else {
        this.buf += c;
      }
    }
    return out;
  }

  /** Discard a partial line (after a reconnect). */
  reset(): void {
    this.buf = '';
    this.overflow = false;
  }

  private endLine(out: M[], bell: boolean): void {
    let line = this.buf;
    const wasOverflow = this.overflow;
    this.buf = '';
    this.overflow = false;
    if (bell) {
      // BELL terminates whatever came before it: a partial line there is noise, the BELL still counts.
      if (line !== '' && !wasOverflow) this.bad(line);
      line = '';
    } else if (wasOverflow) {
      return;
    }
    const msg = this.parse(line, bell);
    if (msg === null) this.bad(bell ? '\\x07' : line);
    else out.push(msg);
  }

  private bad(line: string): void {
    this.malformed++;
    this.lastMalformed = line;
  }

  protected abstract parse(line: string, bell: boolean): M | null;
}

/** Parses adapter output (the host side of the conversation). */
export class SlcanParser extends SlcanStream<SlcanAdapterMessage> {
  protected parse(line: string, bell: boolean): SlcanAdapterMessage | null {
    if (bell) return line === '' ? { type: 'error' } : null;
    if (line === '') return { type: 'ok' };
    const c = line[0];
    if (c === 't' || c === 'T' || c === 'r' || c === 'R') {
      const decoded = decodeSlcanFrame(line);
      if (!decoded) return null;
      return decoded.timestamp === undefined
        ? { type: 'frame', frame: decoded.frame }
        : { type: 'frame', frame: decoded.frame, timestamp: decoded.timestamp };
    }
    if (line === 'z') return { type: 'tx-ack', extended: false };
    if (line === 'Z') return { type: 'tx-ack', extended: true };
    if ((c === 'V' || c === 'v') && line.length >= 5 && HEX_RE.test(line.slice(1, 5))) {
      return { type: 'version', hardware: line.slice(1, 3), software: line.slice(3, 5), raw: line.slice(1) };
    }
    if (c === 'N' && line.length === 5) return { type: 'serial', serial: line.slice(1) };
    if (c === 'F' && line.length === 3 && HEX_RE.test(line.slice(1))) {
      const flags = parseInt(line.slice(1), 16);
      return { type: 'status', flags, conditions: describeSlcanStatus(flags) };
    }
    return null;
  }
}

/** Parses host output (the adapter side): commands and frames to transmit. */
export class SlcanCommandParser extends SlcanStream<SlcanHostMessage> {
  protected parse(line: string, bell: boolean): SlcanHostMessage | null {
    if (bell) return null;
    if (line === '') return { type: 'empty' };
    const c = line[0];
    if (c === 't' || c === 'T' || c === 'r' || c === 'R') {
      const decoded = decodeSlcanFrame(line);
      return decoded ? { type: 'frame', frame: decoded.frame } : null;
    }
    if (/^S[0-8]$/.test(line)) {
      const code = Number(line[1]);
      return { type: 'bitrate', code, bitrate: CODE_TO_BITRATE[code]! };
    }
    if (c === 'S') return null; // S with anything but 0..8
    if (/^s[0-9A-Fa-f]{4}$/.test(line)) return { type: 'btr', value: line.slice(1) };
    if (line === 'O') return { type: 'open', listenOnly: false };
    if (line === 'L') return { type: 'open', listenOnly: true };
    if (line === 'C') return { type: 'close' };
    if (line === 'V' || line === 'v') return { type: 'version' };
    if (line === 'N') return { type: 'serial' };
    if (line === 'F') return { type: 'status' };
    if (line === 'Z0' || line === 'Z1') return { type: 'timestamps', on: line === 'Z1' };
    if (/^[A-Za-z][0-9A-Fa-f]*$/.test(line)) return { type: 'command', command: line };
    return null;
  }
}
