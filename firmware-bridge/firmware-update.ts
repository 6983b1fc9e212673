/**
 * Firmware update over the bridge: the gateway's `FirmwareUpdater` and the device's
 * `FirmwareReceiver`, both I/O-free state machines (they call `send(msg)`, are fed received messages
 * through `handle(msg)`, and take their time from a `Scheduler`).
 *
 *   gateway                                    device
 *   FW_BEGIN(transfer, size, chunk, digest) -->  erase staging slot
 *                                           <--  FW_CHUNK_ACK(ok, next_offset=0, window)
 *   FW_CHUNK(offset 0), FW_CHUNK(offset c)... -> write in order (go-back-N)
 *                                           <--  FW_CHUNK_ACK(ok, next_offset, window)
 *   FW_END                                  -->  verify digest; activate or keep/roll back
 *                                           <--  FW_RESULT(activated | rolled_back | aborted | rejected)
 *
 * The device accepts chunks strictly in order and keeps no out-of-order data (no reassembly memory
 * on the MCU); a gap is reported once with status `out_of_order`, and the gateway goes back to the
 * device's `next_offset`. See docs/firmware-bridge.md §7 for the rules.
 */
import { createHash } from 'node:crypto';
// The one HAL module the protocol uses: a typed EventEmitter (no I/O). The HAL never imports the
// firmware bridge (test/architecture/hal-boundaries.test.ts).
import { TypedEmitter } from '../hal/core/link.js';
import { crc32 } from './crc.js';
import {
  MAX_PAYLOAD,
  isSemver,
  type DigestAlg,
  type FwBegin,
  type FwChunkAck,
  type FwResult,
  type FwResultCode,
  type Message,
} from './messages.js';
import { SeqCounter } from './session.js';
import { systemScheduler, type Scheduler, type TimerHandle } from './timers.js';

/** Bytes of FW_CHUNK payload that are not image data (transfer_id u16 + offset u32). */
export const CHUNK_OVERHEAD = 6;
/** Largest chunk a v1 frame can carry. */
export const MAX_CHUNK_SIZE = MAX_PAYLOAD - CHUNK_OVERHEAD;

/** Digest of a firmware image as carried in FW_BEGIN: CRC-32 as 4 bytes little-endian, or SHA-256. */
export function imageDigest(image: Uint8Array, alg: DigestAlg): Uint8Array {
  if (alg === 'sha256') return new Uint8Array(createHash('sha256').update(image).digest());
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, crc32(image), true);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// =============================================================================================
// Gateway side

export type UpdatePhase = 'idle' | 'begin' | 'transfer' | 'end' | 'aborting' | 'done';

export interface UpdateProgress {
  phase: UpdatePhase;
  /** Bytes the device has acknowledged (its `next_offset`). */
  acked_bytes: number;
  total_bytes: number;
  chunks_sent: number;
  retransmits: number;
}

export interface FirmwareUpdateOutcome {
  transfer_id: number;
  /** The device's FW_RESULT, or `aborted` when the gateway gave up (`source: 'gateway'`). */
  result: FwResultCode;
  source: 'device' | 'gateway';
  /** The version running on the device per its FW_RESULT; null when the device never answered. */
  active_version: string | null;
  detail: string;
  total_bytes: number;
  acked_bytes: number;
  chunks_sent: number;
  retransmits: number;
  duration_ms: number;
}

export interface FirmwareUpdaterOptions {
  send: (msg: Message) => void;
  image: Uint8Array;
  /** Semantic version of `image`. */
  version: string;
  /** u16 identifying this transfer; default random. Reuse it to resume an interrupted transfer. */
  transferId?: number;
  /** Image bytes per FW_CHUNK (<= device max_payload - 6). Default 256. */
  chunkSize?: number;
  /** Most chunks in flight; the device's advertised window lowers it. Default 8. */
  window?: number;
  digestAlg?: DigestAlg;
  scheduler?: Scheduler;
  nextSeq?: () => number;
  /** Wait for the answer to FW_BEGIN (the device may be erasing flash). Default 5000 ms. */
  beginTimeoutMs?: number;
  beginRetries?: number;
  /** Time without acknowledged progress before going back to the last acked offset. Default 1000 ms. */
  chunkTimeoutMs?: number;
  /** Consecutive timeouts without progress before giving up. Default 5. */
  chunkRetries?: number;
  /** Wait for FW_RESULT after FW_END (verification, activation, possibly a reboot). Default 30000 ms. */
  endTimeoutMs?: number;
  endRetries?: number;
  /** Wait for the device's FW_RESULT after FW_ABORT. Default 1000 ms. */
  abortTimeoutMs?: number;
}

export interface FirmwareUpdaterEvents extends Record<string, unknown[]> {
  progress: [UpdateProgress];
  phase: [UpdatePhase, UpdatePhase];
}

/**
 * Drives one transfer: FW_BEGIN, windowed FW_CHUNKs with cumulative acks and go-back-N
 * retransmission, FW_END, and returns the device's FW_RESULT. `abort()` cancels it.
 */
export class FirmwareUpdater extends TypedEmitter<FirmwareUpdaterEvents> {
  readonly transferId: number;
  private readonly send: (msg: Message) => void;
  private readonly image: Uint8Array;
  private readonly version: string;
  private readonly chunkSize: number;
  private readonly maxWindow: number;
  private readonly digestAlg: DigestAlg;
  private readonly digest: Uint8Array;
  private readonly scheduler: Scheduler;
  private readonly nextSeq: () => number;
  private readonly t: Required<
    Pick<FirmwareUpdaterOptions, 'beginTimeoutMs' | 'beginRetries' | 'chunkTimeoutMs' | 'chunkRetries' | 'endTimeoutMs' | 'endRetries' | 'abortTimeoutMs'>
  >;

  private phaseValue: UpdatePhase = 'idle';
  private timer: TimerHandle | null = null;
  private attempts = 0;
  private restarts = 0;
  private base = 0;
  private nextOffset = 0;
  private highestSent = 0;
  private window = 1;
  private rewoundAt = -1;
  private chunksSent = 0;
  private retransmits = 0;
  private startedAt = 0;
  private abortDetail = '';
  private resolveOutcome: ((o: FirmwareUpdateOutcome) => void) | null = null;
  /** Set synchronously when the transfer ends (the promise resolves on a later microtask). */
  outcome: FirmwareUpdateOutcome | null = null;

  constructor(options: FirmwareUpdaterOptions) {
    super();
    const { image, version } = options;
    if (!(image instanceof Uint8Array) || image.length < 1 || image.length > 0xffffffff) throw new RangeError('image must be 1 byte .. 4 GiB');
    if (!isSemver(version)) throw new RangeError(`version "${version}" is not a semantic version`);
    this.chunkSize = options.chunkSize ?? 256;
    if (!Number.isInteger(this.chunkSize) || this.chunkSize < 1 || this.chunkSize > MAX_CHUNK_SIZE) {
      throw new RangeError(`chunkSize must be 1..${MAX_CHUNK_SIZE}`);
    }
    this.maxWindow = options.window ?? 8;
    if (!Number.isInteger(this.maxWindow) || this.maxWindow < 1 || this.maxWindow > 255) throw new RangeError('window must be 1..255');
    this.transferId = options.transferId ?? Math.floor(Math.random() * 0x10000);
    if (!Number.isInteger(this.transferId) || this.transferId < 0 || this.transferId > 0xffff) throw new RangeError('transferId must be a u16');
    this.send = options.send;
    this.image = image;
    this.version = version;
    this.digestAlg = options.digestAlg ?? 'sha256';
    this.digest = imageDigest(image, this.digestAlg);
    this.scheduler = options.scheduler ?? systemScheduler;
    const counter = new SeqCounter();
    this.nextSeq = options.nextSeq ?? (() => counter.next());
    this.t = {
      beginTimeoutMs: options.beginTimeoutMs ?? 5000,
      beginRetries: options.beginRetries ?? 3,
      chunkTimeoutMs: options.chunkTimeoutMs ?? 1000,
      chunkRetries: options.chunkRetries ?? 5,
      endTimeoutMs: options.endTimeoutMs ?? 30_000,
      endRetries: options.endRetries ?? 2,
      abortTimeoutMs: options.abortTimeoutMs ?? 1000,
    };
  }

  get phase(): UpdatePhase {
    return this.phaseValue;
  }

  get progress(): UpdateProgress {
    return {
      phase: this.phaseValue,
      acked_bytes: this.base,
      total_bytes: this.image.length,
      chunks_sent: this.chunksSent,
      retransmits: this.retransmits,
    };
  }

  /** Starts the transfer; resolves with the outcome (never rejects). */
  start(): Promise<FirmwareUpdateOutcome> {
    if (this.phaseValue !== 'idle') throw new Error('a FirmwareUpdater runs once');
    this.startedAt = this.scheduler.now();
    const done = new Promise<FirmwareUpdateOutcome>((resolve) => {
      this.resolveOutcome = resolve;
    });
    this.enterBegin();
    return done;
  }

  /** Cancels the transfer: sends FW_ABORT and resolves with the device's answer (or locally after a timeout). */
  abort(detail = 'aborted by gateway'): void {
    if (this.phaseValue === 'idle' || this.phaseValue === 'done' || this.phaseValue === 'aborting') return;
    this.enterAborting(detail);
  }

  /** Feeds a received message; returns true when it belonged to this transfer. */
  handle(msg: Message): boolean {
    if (msg.type !== 'fw_chunk_ack' && msg.type !== 'fw_result') return false;
    if (msg.transfer_id !== this.transferId) return false;
    if (this.phaseValue === 'idle' || this.phaseValue === 'done') return false;
    if (msg.type === 'fw_result') {
      this.finish({ result: msg.result, source: 'device', active_version: msg.active_version, detail: msg.detail });
      return true;
    }
    this.onAck(msg);
    return true;
  }

  // --- phases ---------------------------------------------------------------------------------

  private setPhase(next: UpdatePhase): void {
    const prev = this.phaseValue;
    if (prev === next) return;
    this.phaseValue = next;
    this.emit('phase', next, prev);
  }

  private enterBegin(): void {
    this.setPhase('begin');
    this.attempts = 0;
    this.sendBegin();
  }

  private sendBegin(): void {
    this.attempts++;
    const msg: FwBegin = {
      type: 'fw_begin',
      seq: this.nextSeq(),
      transfer_id: this.transferId,
      image_size: this.image.length,
      chunk_size: this.chunkSize,
      digest_alg: this.digestAlg,
      digest: this.digest,
      version: this.version,
    };
    this.send(msg);
    this.arm(this.t.beginTimeoutMs, () => {
      if (this.attempts > this.t.beginRetries) this.enterAborting(`no answer to FW_BEGIN after ${this.attempts} attempts`);
      else this.sendBegin();
    });
  }

  private onAck(ack: FwChunkAck): void {
    const size = this.image.length;
    const offsetValid = ack.next_offset <= size && (ack.next_offset === size || ack.next_offset % this.chunkSize === 0);
    if (this.phaseValue === 'begin') {
      // Only an `ok` answers FW_BEGIN; anything else is a late answer to a chunk sent before it.
      if (ack.status !== 'ok') return;
      if (!offsetValid) {
        this.enterAborting(`device answered FW_BEGIN with next_offset ${ack.next_offset}`);
        return;
      }
      this.setPhase('transfer');
      this.base = ack.next_offset;
      this.nextOffset = ack.next_offset;
      this.highestSent = ack.next_offset;
      this.window = Math.min(this.maxWindow, ack.window);
      this.attempts = 0;
      this.disarm();
      this.emit('progress', this.progress);
      this.afterProgress();
      return;
    }
    if (this.phaseValue !== 'transfer') return; // late acks after FW_END or during abort
    if (ack.status === 'unknown_transfer') {
      // The device lost the transfer (reboot?): FW_BEGIN again with the same id resumes or restarts it.
      if (++this.restarts > this.t.beginRetries) this.enterAborting('device keeps losing the transfer');
      else this.enterBegin();
      return;
    }
    if (ack.status === 'bad_chunk') {
      this.enterAborting(`device rejected the chunk before offset ${ack.next_offset}`);
      return;
    }
    if (!offsetValid || ack.next_offset < this.base) return; // stale or bogus: ignore
    this.window = Math.min(this.maxWindow, ack.window);
    if (ack.next_offset > this.base) {
      this.base = ack.next_offset;
      if (this.nextOffset < this.base) this.nextOffset = this.base;
      this.attempts = 0;
      this.rewoundAt = -1;
      this.disarm();
      this.emit('progress', this.progress);
      this.afterProgress();
      return;
    }
    if (ack.status === 'out_of_order' && this.rewoundAt !== this.base) {
      // The chunk at `base` was lost and later ones were discarded: go back once per hole.
      this.rewoundAt = this.base;
      this.nextOffset = this.base;
      this.pump();
    }
  }

  private afterProgress(): void {
    if (this.base >= this.image.length) {
      this.enterEnd();
      return;
    }
    this.pump();
  }

  private pump(): void {
    const size = this.image.length;
    while (this.nextOffset < size && this.nextOffset < this.base + this.window * this.chunkSize) {
      const end = Math.min(this.nextOffset + this.chunkSize, size);
      if (this.nextOffset < this.highestSent) this.retransmits++;
      this.chunksSent++;
      this.send({
        type: 'fw_chunk',
        seq: this.nextSeq(),
        transfer_id: this.transferId,
        offset: this.nextOffset,
        data: this.image.subarray(this.nextOffset, end),
      });
      this.nextOffset = end;
      if (end > this.highestSent) this.highestSent = end;
    }
    if (!this.timer) this.arm(this.t.chunkTimeoutMs, () => this.onChunkTimeout());
  }

  private onChunkTimeout(): void {
    if (++this.attempts > this.t.chunkRetries) {
      this.enterAborting(`no acknowledgement past offset ${this.base} after ${this.attempts} timeouts`);
      return;
    }
    this.nextOffset = this.base;
    this.rewoundAt = this.base;
    this.pump();
  }

  private enterEnd(): void {
    this.setPhase('end');
    this.attempts = 0;
    this.sendEnd();
  }

  private sendEnd(): void {
    this.attempts++;
    this.send({ type: 'fw_end', seq: this.nextSeq(), transfer_id: this.transferId });
    this.arm(this.t.endTimeoutMs, () => {
      if (this.attempts > this.t.endRetries) this.enterAborting(`no FW_RESULT after ${this.attempts} FW_END`);
      else this.sendEnd();
    });
  }

  private enterAborting(detail: string): void {
    this.setPhase('aborting');
    this.abortDetail = detail;
    this.send({ type: 'fw_abort', seq: this.nextSeq(), transfer_id: this.transferId, detail: clip(detail) });
    this.arm(this.t.abortTimeoutMs, () => this.finish({ result: 'aborted', source: 'gateway', active_version: null, detail: this.abortDetail }));
  }

  private finish(r: Pick<FirmwareUpdateOutcome, 'result' | 'source' | 'active_version' | 'detail'>): void {
    this.disarm();
    // A device answer to our FW_ABORT says "aborted" without our reason; keep the reason.
    const detail = this.phaseValue === 'aborting' && r.source === 'device' && r.result === 'aborted' ? this.abortDetail : r.detail;
    this.setPhase('done');
    this.outcome = {
      transfer_id: this.transferId,
      ...r,
      detail,
      total_bytes: this.image.length,
      acked_bytes: this.base,
      chunks_sent: this.chunksSent,
      retransmits: this.retransmits,
      duration_ms: this.scheduler.now() - this.startedAt,
    };
    this.resolveOutcome?.(this.outcome);
    this.resolveOutcome = null;
  }

  private arm(ms: number, fn: () => void): void {
    this.disarm();
    this.timer = this.scheduler.setTimeout(() => {
      this.timer = null;
      fn();
    }, ms);
  }

  private disarm(): void {
    if (this.timer) this.scheduler.clearTimeout(this.timer);
    this.timer = null;
  }
}

function clip(s: string, maxBytes = 64): string {
  const enc = new TextEncoder();
  let out = s;
  while (enc.encode(out).length > maxBytes) out = out.slice(0, -1);
  return out;
}

// =============================================================================================
// Device side

export interface FirmwareImage {
  version: string;
  image: Uint8Array;
}

interface Slot {
  version: string;
  image: Uint8Array;
  valid: boolean;
}

/**
 * An in-memory A/B flash: two slots, one active. A transfer is staged into the inactive slot (which
 * erases whatever it held); activation flips the active slot, so the image that was running stays
 * in the other slot and `rollback()` can return to it until the next transfer erases it.
 */
export class FirmwareSlots {
  private readonly slots: [Slot, Slot];
  private activeIndex: 0 | 1 = 0;
  private stagingSize = 0;
  activations = 0;
  rollbacks = 0;

  constructor(initial: FirmwareImage, readonly capacity = 1 << 20) {
    if (!isSemver(initial.version)) throw new RangeError(`version "${initial.version}" is not a semantic version`);
    if (initial.image.length > capacity) throw new RangeError('initial image exceeds the slot capacity');
    this.slots = [
      { version: initial.version, image: initial.image.slice(), valid: true },
      { version: '', image: new Uint8Array(0), valid: false },
    ];
  }

  /** The running firmware. */
  get active(): FirmwareImage {
    const s = this.slots[this.activeIndex];
    return { version: s.version, image: s.image };
  }

  /** The image in the other slot, when it holds a complete one that can be rolled back to. */
  get previous(): FirmwareImage | null {
    const s = this.slots[1 - this.activeIndex]!;
    return s.valid ? { version: s.version, image: s.image } : null;
  }

  /** Erases the inactive slot and prepares it for an image of `size` bytes. */
  eraseStaging(size: number): void {
    if (size > this.capacity) throw new RangeError(`image of ${size} bytes exceeds the slot capacity ${this.capacity}`);
    const s = this.slots[1 - this.activeIndex]!;
    s.valid = false;
    s.version = '';
    s.image = new Uint8Array(size).fill(0xff);
    this.stagingSize = size;
  }

  writeStaging(offset: number, data: Uint8Array): void {
    const s = this.slots[1 - this.activeIndex]!;
    if (offset + data.length > this.stagingSize) throw new RangeError('write past the staged image');
    s.image.set(data, offset);
  }

  /** The staged bytes (as written so far). */
  stagedImage(): Uint8Array {
    return this.slots[1 - this.activeIndex]!.image.subarray(0, this.stagingSize);
  }

  /** Marks the staged image valid and makes it the active one. */
  activate(version: string): void {
    const s = this.slots[1 - this.activeIndex]!;
    s.valid = true;
    s.version = version;
    this.activeIndex = (1 - this.activeIndex) as 0 | 1;
    this.stagingSize = 0;
    this.activations++;
  }

  /** Returns to the other slot's image when it is valid; the image rolled away from is invalidated. */
  rollback(): boolean {
    const other = this.slots[1 - this.activeIndex]!;
    if (!other.valid) return false;
    this.slots[this.activeIndex].valid = false;
    this.activeIndex = (1 - this.activeIndex) as 0 | 1;
    this.rollbacks++;
    return true;
  }

  /** Throws away a partially staged image. */
  discardStaging(): void {
    const s = this.slots[1 - this.activeIndex]!;
    s.valid = false;
    s.version = '';
    s.image = new Uint8Array(0);
    this.stagingSize = 0;
  }
}

export interface FirmwareReceiverOptions {
  send: (msg: Message) => void;
  flash: FirmwareSlots;
  nextSeq?: () => number;
  scheduler?: Scheduler;
  /** Chunks the gateway may have in flight, advertised in every FW_CHUNK_ACK. Default 4. */
  window?: number;
  /** Largest image accepted. Default: the flash slot capacity. */
  maxImageSize?: number;
  /** Largest chunk accepted (device max_payload - 6). Default 498. */
  maxChunkSize?: number;
  /** Digest algorithms implemented. Default both. */
  digestAlgs?: readonly DigestAlg[];
  /** A transfer with no traffic for this long is discarded (FW_RESULT aborted). Default 60000 ms. */
  idleTimeoutMs?: number;
  /**
   * Runs after activation (the new image "boots"). Return true to confirm it; false or a reason
   * string rolls back to the previous image.
   */
  selfTest?: (image: FirmwareImage) => boolean | string;
}

export interface FirmwareReceiverEvents extends Record<string, unknown[]> {
  /** A transfer ended (the FW_RESULT that was sent). */
  result: [FwResult];
  /** An in-order chunk was written. */
  progress: [{ transfer_id: number; next_offset: number; image_size: number }];
}

interface Transfer {
  begin: FwBegin;
  nextOffset: number;
  gapReportedAt: number;
}

/** Device side of the firmware update, with an in-memory A/B flash. */
export class FirmwareReceiver extends TypedEmitter<FirmwareReceiverEvents> {
  readonly flash: FirmwareSlots;
  private readonly send: (msg: Message) => void;
  private readonly nextSeq: () => number;
  private readonly scheduler: Scheduler;
  private readonly window: number;
  private readonly maxImageSize: number;
  private readonly maxChunkSize: number;
  private readonly digestAlgs: readonly DigestAlg[];
  private readonly idleTimeoutMs: number;
  private readonly selfTest: ((image: FirmwareImage) => boolean | string) | undefined;
  private transfer: Transfer | null = null;
  private lastResult: Omit<FwResult, 'seq'> | null = null;
  private idleTimer: TimerHandle | null = null;

  constructor(options: FirmwareReceiverOptions) {
    super();
    this.flash = options.flash;
    this.send = options.send;
    const counter = new SeqCounter(0);
    this.nextSeq = options.nextSeq ?? (() => counter.next());
    this.scheduler = options.scheduler ?? systemScheduler;
    this.window = options.window ?? 4;
    if (!Number.isInteger(this.window) || this.window < 1 || this.window > 255) throw new RangeError('window must be 1..255');
    this.maxImageSize = Math.min(options.maxImageSize ?? this.flash.capacity, this.flash.capacity);
    this.maxChunkSize = options.maxChunkSize ?? MAX_CHUNK_SIZE;
    this.digestAlgs = options.digestAlgs ?? ['crc32', 'sha256'];
    this.idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.selfTest = options.selfTest;
  }

  /** The running firmware version (what IDENTITY reports). */
  get activeVersion(): string {
    return this.flash.active.version;
  }

  /** True while a transfer is staged (HEARTBEAT status `updating`). */
  get updating(): boolean {
    return this.transfer !== null;
  }

  /** Feeds a received message; returns true when it was a firmware message. */
  handle(msg: Message): boolean {
    switch (msg.type) {
      case 'fw_begin':
        this.onBegin(msg);
        return true;
      case 'fw_chunk':
        this.onChunk(msg.transfer_id, msg.offset, msg.data);
        return true;
      case 'fw_end':
        this.onEnd(msg.transfer_id);
        return true;
      case 'fw_abort':
        this.onAbort(msg.transfer_id, msg.detail);
        return true;
      default:
        return false;
    }
  }

  private onBegin(begin: FwBegin): void {
    const cur = this.transfer;
    if (cur && cur.begin.transfer_id === begin.transfer_id && sameBegin(cur.begin, begin)) {
      // Retransmitted (or resuming) FW_BEGIN: keep what was written.
      this.touch();
      this.ack(begin.transfer_id, 'ok', cur.nextOffset);
      return;
    }
    const refuse = this.refusal(begin);
    if (refuse) {
      this.conclude(begin.transfer_id, 'rejected', refuse, false);
      return;
    }
    if (cur) this.flash.discardStaging();
    this.flash.eraseStaging(begin.image_size);
    this.transfer = { begin, nextOffset: 0, gapReportedAt: -1 };
    this.touch();
    this.ack(begin.transfer_id, 'ok', 0);
  }

  private refusal(begin: FwBegin): string | null {
    if (!this.digestAlgs.includes(begin.digest_alg)) return `digest ${begin.digest_alg} not supported`;
    if (begin.image_size > this.maxImageSize) return `image of ${begin.image_size} bytes exceeds ${this.maxImageSize}`;
    if (begin.chunk_size > this.maxChunkSize) return `chunk_size ${begin.chunk_size} exceeds ${this.maxChunkSize}`;
    return null;
  }

  private onChunk(transferId: number, offset: number, data: Uint8Array): void {
    const t = this.transfer;
    if (!t || t.begin.transfer_id !== transferId) {
      this.ack(transferId, 'unknown_transfer', 0);
      return;
    }
    this.touch();
    const { chunk_size: chunk, image_size: size } = t.begin;
    const end = offset + data.length;
    if (offset % chunk !== 0 || end > size || (data.length !== chunk && end !== size)) {
      this.ack(transferId, 'bad_chunk', t.nextOffset);
      return;
    }
    if (offset < t.nextOffset) {
      this.ack(transferId, 'ok', t.nextOffset); // duplicate: already written
      return;
    }
    if (offset > t.nextOffset) {
      // A chunk before this one was lost. Discard, and say so once per hole.
      if (t.gapReportedAt !== t.nextOffset) {
        t.gapReportedAt = t.nextOffset;
        this.ack(transferId, 'out_of_order', t.nextOffset);
      }
      return;
    }
    this.flash.writeStaging(offset, data);
    t.nextOffset = end;
    t.gapReportedAt = -1;
    this.ack(transferId, 'ok', t.nextOffset);
    this.emit('progress', { transfer_id: transferId, next_offset: t.nextOffset, image_size: size });
  }

  private onEnd(transferId: number): void {
    const t = this.transfer;
    if (!t || t.begin.transfer_id !== transferId) {
      this.replayOr(transferId, 'unknown transfer');
      return;
    }
    const { image_size: size, digest_alg, digest, version } = t.begin;
    if (t.nextOffset !== size) {
      this.flash.discardStaging();
      this.conclude(transferId, 'rolled_back', `image incomplete (${t.nextOffset} of ${size} bytes); kept ${this.activeVersion}`, true);
      return;
    }
    const staged = this.flash.stagedImage();
    if (!sameBytes(imageDigest(staged, digest_alg), digest)) {
      this.flash.discardStaging();
      this.conclude(transferId, 'rolled_back', `${digest_alg} mismatch; kept ${this.activeVersion}`, true);
      return;
    }
    const previous = this.activeVersion;
    this.flash.activate(version);
    const verdict = this.selfTest ? this.selfTest(this.flash.active) : true;
    if (verdict !== true) {
      this.flash.rollback();
      const why = typeof verdict === 'string' ? verdict : 'self-test failed';
      this.conclude(transferId, 'rolled_back', `${version} ${why}; back to ${previous}`, true);
      return;
    }
    this.conclude(transferId, 'activated', `${previous} -> ${version}`, true);
  }

  private onAbort(transferId: number, detail: string): void {
    const t = this.transfer;
    if (!t || t.begin.transfer_id !== transferId) {
      this.replayOr(transferId, 'unknown transfer');
      return;
    }
    this.flash.discardStaging();
    this.conclude(transferId, 'aborted', detail || 'aborted by gateway', true);
  }

  /** A repeated FW_END/FW_ABORT for a finished transfer gets the same FW_RESULT again. */
  private replayOr(transferId: number, detail: string): void {
    if (this.lastResult && this.lastResult.transfer_id === transferId) {
      this.send({ ...this.lastResult, seq: this.nextSeq() });
      return;
    }
    this.send({ type: 'fw_result', seq: this.nextSeq(), transfer_id: transferId, result: 'aborted', active_version: this.activeVersion, detail });
  }

  private conclude(transferId: number, result: FwResultCode, detail: string, endsTransfer: boolean): void {
    if (endsTransfer) {
      this.transfer = null;
      if (this.idleTimer) this.scheduler.clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    const msg: FwResult = { type: 'fw_result', seq: this.nextSeq(), transfer_id: transferId, result, active_version: this.activeVersion, detail: clip(detail) };
    const { seq: _seq, ...cached } = msg;
    this.lastResult = cached;
    this.send(msg);
    this.emit('result', msg);
  }

  private ack(transferId: number, status: FwChunkAck['status'], nextOffset: number): void {
    this.send({ type: 'fw_chunk_ack', seq: this.nextSeq(), transfer_id: transferId, status, window: this.window, next_offset: nextOffset });
  }

  private touch(): void {
    if (this.idleTimer) this.scheduler.clearTimeout(this.idleTimer);
    this.idleTimer = this.scheduler.setTimeout(() => {
      this.idleTimer = null;
      const t = this.transfer;
      if (!t) return;
      this.flash.discardStaging();
      this.conclude(t.begin.transfer_id, 'aborted', `no traffic for ${this.idleTimeoutMs} ms; kept ${this.activeVersion}`, true);
    }, this.idleTimeoutMs);
  }
}

function sameBegin(a: FwBegin, b: FwBegin): boolean {
  return (
    a.image_size === b.image_size &&
    a.chunk_size === b.chunk_size &&
    a.digest_alg === b.digest_alg &&
    a.version === b.version &&
    sameBytes(a.digest, b.digest)
  );
}

