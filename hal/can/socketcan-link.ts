/**
 * A CAN link over Linux SocketCAN (CAN_RAW) through the `socketcan` native addon.
 *
 * - The addon is loaded lazily (createRequire), so the agent runs on machines without it; a missing
 *   addon, a non-Linux system, a kernel without CAN, a missing or non-CAN interface each give a
 *   clear error.
 * - Sends are paced: frames go through a bounded queue and are handed to the kernel at most `burst`
 *   per event-loop turn (and at most `rateHz` per second when set). A synchronous burst of 2000
 *   sends overflows a reader's socket receive buffer (≈212 KB default rmem ≈ 278 frames were
 *   delivered of 2000 in our measurement); yielding between small bursts lets readers keep up. Sends
 *   are non-blocking; when the kernel refuses a frame (tx queue full: ENOBUFS/EAGAIN) the frame is kept
 *   and retried after a short delay instead of blocking the event loop.
 * - Error frames are enabled (`errorMask`, default all classes) and surface as `frame` events with
 *   `error: true` plus a decoded `canError` event.
 * - The interface is watched (sysfs flags): down → `backoff` (the socket stays bound and resumes when
 *   the interface is up again); removed → the channel stops and the link recreates it with backoff.
 */
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Backoff } from '../core/backoff.js';
import { BoundedQueue } from '../core/bounded-queue.js';
import { waitForOpen, type LinkState, type LinkStats } from '../core/link.js';
import { ReconnectingLink, backoffFrom } from '../core/reconnecting-link.js';
import { CAN_ERR_MASK, assertCanFrame, describeCanError, frameDlc, type CanErrorInfo, type CanFrame } from './can-frame.js';

/** The parts of the `socketcan` addon this link uses. */
export interface SocketCanMessage {
  id: number;
  ext?: boolean;
  rtr?: boolean;
  err?: boolean;
  data: Buffer;
  ts_sec?: number;
  ts_usec?: number;
}
export interface SocketCanRawChannel {
  addListener(event: 'onMessage', cb: (msg: SocketCanMessage) => void): unknown;
  addListener(event: 'onStopped', cb: () => void): unknown;
  start(): unknown;
  stop(): unknown;
  send(msg: SocketCanMessage): number | undefined;
  setErrorFilters?(mask: number): unknown;
  setRxFilters?(filters: Array<{ id: number; mask: number; invert?: boolean }>): unknown;
  disableLoopback?(): unknown;
}
export interface SocketCanAddon {
  createRawChannel(iface: string, timestamps?: boolean, protocol?: number): SocketCanRawChannel;
  createRawChannelWithOptions?(iface: string, options: { timestamps?: boolean; non_block_send?: boolean }): SocketCanRawChannel;
}

export class SocketCanUnavailableError extends Error {
  override name = 'SocketCanUnavailableError';
}

let addonCache: SocketCanAddon | Error | null = null;

/** Load the `socketcan` addon once; throws SocketCanUnavailableError with the reason when it cannot be used. */
export function loadSocketCan(): SocketCanAddon {
  if (addonCache === null) {
    if (process.platform !== 'linux') {
      addonCache = new SocketCanUnavailableError(`SocketCAN needs Linux (this is ${process.platform}); use an SLCAN adapter instead`);
    } else {
      try {
        const require = createRequire(import.meta.url);
        addonCache = require('socketcan') as SocketCanAddon;
      } catch (err) {
        addonCache = new SocketCanUnavailableError(
          `SocketCAN unavailable: the 'socketcan' native addon could not be loaded (${(err as Error).message.split('\n')[0]}). ` +
            'It compiles with node-gyp at install time (needs python3, make and a C++ compiler); reinstall it, or use an SLCAN adapter.',
        );
      }
    }
  }
  if (addonCache instanceof Error) throw addonCache;
  return addonCache;
}

/** Whether SocketCAN can be used here, and why not. */
export function socketCanAvailability(): { available: true } | { available: false; reason: string } {
  try {
    loadSocketCan();
    return { available: true };
  } catch (err) {
    return { available: false, reason: (err as Error).message };
  }
}

const ARPHRD_CAN = 280;
const IFF_UP = 0x1;

export type CanInterfaceStatus =
  | { ok: true; up: true }
  | { ok: false; up: boolean; exists: boolean; reason: string };

/** Check a network interface through sysfs: exists, is CAN (ARPHRD_CAN), is up. */
export function canInterfaceStatus(iface: string, sysfs = '/sys/class/net'): CanInterfaceStatus {
  if (!/^[A-Za-z0-9_.:-]{1,15}$/.test(iface)) {
    return { ok: false, up: false, exists: false, reason: `invalid interface name ${JSON.stringify(iface)}` };
  }
  const dir = `${sysfs}/${iface}`;
  if (!existsSync(dir)) {
    const kernel = existsSync('/proc/net/can') ? '' : ' (and this kernel has no CAN support loaded: modprobe can-raw / vcan)';
    return { ok: false, up: false, exists: false, reason: `CAN interface ${iface} does not exist${kernel}` };
  }
  try {
    const type = Number(readFileSync(`${dir}/type`, 'utf8').trim());
    if (type !== ARPHRD_CAN) return { ok: false, up: false, exists: true, reason: `${iface} is not a CAN interface (link type ${type})` };
    const flags = Number(readFileSync(`${dir}/flags`, 'utf8').trim());
    if (!(flags & IFF_UP)) return { ok: false, up: false, exists: true, reason: `CAN interface ${iface} is down (ip link set ${iface} up)` };
  } catch (err) {
    return { ok: false, up: false, exists: existsSync(dir), reason: `cannot read ${dir}: ${(err as Error).message}` };
  }
  return { ok: true, up: true };
}

export interface SocketCanLinkOptions {
  /** Interface name, e.g. `can0`, `vcan0`. */
  interface: string;
  /** Kernel receive timestamps on frames (`frame.timestamp`). Default true. */
  timestamps?: boolean;
  /** CAN_RAW_ERR_FILTER mask: which error classes to receive. Default all (CAN_ERR_MASK); 0 = none. */
  errorMask?: number;
  /** CAN_RAW_FILTER list (id & mask); default: receive everything. */
  filters?: Array<{ id: number; mask: number; invert?: boolean }>;
  /** Receive our own frames on other sockets of this host (kernel loopback). Default true. */
  loopback?: boolean;
  /** Outbound queue capacity in frames (oldest dropped and counted when full). Default 4096. */
  queueCapacity?: number;
  /** Frames handed to the kernel per event-loop turn before yielding. Default 32. */
  burst?: number;
  /** Sustained send rate in frames per second (token bucket of `burst`). 0 = only yield between bursts. Default 0. */
  rateHz?: number;
  /** First retry delay when the kernel refuses a frame (tx queue full); doubles up to 100 ms. Default 2 ms. */
  retryDelayMs?: number;
  /** How often the interface state is checked (sysfs). Default 500 ms. */
  watchMs?: number;
  backoff?: Backoff | { baseMs?: number; maxMs?: number };
  /** Recreate the socket after the interface went away. Default true; false: the link closes instead. */
  reconnect?: boolean;
  /** Inject the addon (tests, alternative builds). Default: `require('socketcan')`, loaded lazily. */
  addon?: SocketCanAddon;
  /** Where interfaces are looked up. Default /sys/class/net. */
  sysfs?: string;
}

export interface SocketCanLinkStats extends LinkStats {
  error_frames: number;
  /** Sends the kernel refused (tx queue full) and that were retried. */
  tx_retries: number;
  /** Frames still waiting in the outbound queue. */
  queued: number;
}

export type SocketCanLinkEvents = {
  state: [LinkState, LinkState];
  error: [Error];
  frame: [CanFrame];
  /** Every received error frame, decoded. */
  canError: [CanErrorInfo, CanFrame];
};

/** The state machine, backoff, `reconnect: false` and close are `ReconnectingLink`'s (hal/README.md). */
export class SocketCanLink extends ReconnectingLink<SocketCanLinkEvents> {
  readonly iface: string;
  private readonly opts: SocketCanLinkOptions;
  private readonly queue: BoundedQueue<CanFrame>;
  private readonly burst: number;
  private readonly rateHz: number;
  private channel: SocketCanRawChannel | null = null;
  private watchTimer: NodeJS.Timeout | null = null;
  private pumpTimer: NodeJS.Timeout | null = null;
  private pumpImmediate: NodeJS.Immediate | null = null;
  private retryFrame: CanFrame | null = null;
  private retryDelay: number;
  private tokens: number;
  private lastRefill = 0;
  private errorFrames = 0;
  private txRetries = 0;

  constructor(options: SocketCanLinkOptions) {
    if (!options.interface) throw new TypeError('SocketCanLink needs an interface name');
    super({ backoff: backoffFrom(options.backoff), ...(options.reconnect !== undefined ? { reconnect: options.reconnect } : {}) });
    this.opts = options;
    this.iface = options.interface;
    this.queue = new BoundedQueue<CanFrame>(options.queueCapacity ?? 4096);
    this.burst = Math.max(1, Math.floor(options.burst ?? 32));
    this.rateHz = Math.max(0, options.rateHz ?? 0);
    this.retryDelay = options.retryDelayMs ?? 2;
    this.tokens = this.burst;
  }

  /**
   * Start the link and resolve once the socket is bound and the interface is up. Rejects at once
   * with SocketCanUnavailableError when the addon cannot be loaded; with `timeoutMs`, rejects with the
   * last problem (missing/down interface) while the link keeps retrying in the background.
   */
  open(options: { timeoutMs?: number } = {}): Promise<void> {
    this.startLink();
    return this.waitOpen(options.timeoutMs);
  }

  waitOpen(timeoutMs?: number): Promise<void> {
    if (this.state !== 'open' && !this.running) {
      return Promise.reject(new SocketCanUnavailableError(this.counters.last_error ?? `SocketCAN link ${this.iface} is closed`));
    }
    const why = () => (this.counters.last_error ? `: ${this.counters.last_error}` : '');
    return waitForOpen(
      this,
      this.state,
      timeoutMs,
      () => new SocketCanUnavailableError(this.counters.last_error ?? `SocketCAN link ${this.iface} closed before it opened`),
      () => new Error(`SocketCAN interface ${this.iface} did not open within ${timeoutMs} ms${why()}`),
    );
  }

  /**
   * Queue a data or remote frame for a paced send. Throws on an invalid frame or an error frame.
   * Returns false when the queue was full and its oldest frame was dropped (counted).
   */
  send(frame: CanFrame): boolean {
    assertCanFrame(frame);
    if (frame.error) throw new RangeError('error frames cannot be sent');
    if (!this.running && this.state === 'closed') throw new SocketCanUnavailableError(`SocketCAN link ${this.iface} is closed`);
    const before = this.queue.dropped;
    this.queue.push(frame);
    this.schedulePump();
    return this.queue.dropped === before;
  }

  /** Resolve when every queued frame has been handed to the kernel (or the link was closed). */
  drain(): Promise<void> {
    if (this.queue.length === 0 && !this.retryFrame) return Promise.resolve();
    return this.waitDrained();
  }


  stats(): SocketCanLinkStats {
    return {
      ...this.counters,
      state: this.state,
      dropped_out: this.counters.dropped_out + this.queue.dropped,
      error_frames: this.errorFrames,
      tx_retries: this.txRetries,
      queued: this.queue.length + (this.retryFrame ? 1 : 0),
    };
  }

  // ---- the medium (ReconnectingLink): close() stops reconnecting, drops queued frames, stops the socket

  protected discardQueued(): void {
    this.queue.clear();
    this.retryFrame = null;
  }

  protected closeMedium(): void {
    this.clearTimers();
    this.stopChannel();
  }

  protected connect(gen: number): void {
    let addon: SocketCanAddon;
    try {
      addon = this.opts.addon ?? loadSocketCan();
    } catch (err) {
      // Nothing to retry: the addon will not appear by itself.
      this.noteError(err as Error);
      this.stopLink();
      this.clearTimers();
      this.setState('closed');
      return;
    }
    const status = canInterfaceStatus(this.iface, this.opts.sysfs);
    if (!status.ok) {
      this.noteError(new Error(status.reason));
      this.scheduleReconnect(gen);
      return;
    }
    let channel: SocketCanRawChannel;
    try {
      channel = addon.createRawChannelWithOptions
        ? addon.createRawChannelWithOptions(this.iface, { timestamps: this.opts.timestamps ?? true, non_block_send: true })
        : addon.createRawChannel(this.iface, this.opts.timestamps ?? true);
      channel.setErrorFilters?.(this.opts.errorMask ?? CAN_ERR_MASK);
      if (this.opts.filters?.length) channel.setRxFilters?.(this.opts.filters);
      if (this.opts.loopback === false) channel.disableLoopback?.();
      channel.addListener('onMessage', (msg: SocketCanMessage) => {
        if (gen === this.currentGeneration) this.receive(msg);
      });
      channel.addListener('onStopped', () => {
        if (!this.isCurrent(gen)) return;
        this.channel = null; // the addon already released it
        this.fail(new Error(`CAN interface ${this.iface} went away`), true);
      });
      channel.start();
    } catch (err) {
      const kernel = existsSync('/proc/net/can') ? '' : '; this kernel has no CAN_RAW support loaded (modprobe can-raw)';
      this.noteError(new Error(`cannot open a CAN_RAW socket on ${this.iface}: ${(err as Error).message}${kernel}`));
      this.scheduleReconnect(gen);
      return;
    }
    this.channel = channel;
    this.markUp();
    this.startWatch(gen);
  }

  private markUp(): void {
    this.retryDelay = this.opts.retryDelayMs ?? 2;
    this.markOpen();
    this.schedulePump();
  }

  /** Watch the interface: down → backoff with the socket kept; gone → recreate. */
  private startWatch(gen: number): void {
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.watchTimer = setInterval(() => {
      if (!this.isCurrent(gen)) return;
      const status = canInterfaceStatus(this.iface, this.opts.sysfs);
      if (status.ok) {
        if (this.state === 'backoff' && this.channel) this.markUp();
        return;
      }
      if (!status.exists) {
        this.fail(new Error(status.reason), false);
      } else if (this.state === 'open') {
        this.noteError(new Error(status.reason));
        this.setState('backoff');
      }
    }, this.opts.watchMs ?? 500);
    this.watchTimer.unref?.();
  }

  private fail(err: Error, stopped: boolean): void {
    const gen = this.bumpGeneration();
    if (!stopped) this.stopChannel();
    this.channel = null;
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.watchTimer = null;
    this.noteError(err);
    this.scheduleReconnect(gen);
  }

  private stopChannel(): void {
    const ch = this.channel;
    this.channel = null;
    if (!ch) return;
    try {
      ch.stop();
    } catch {
      // "Channel not started": already stopped by the addon
    }
  }

  /** The watch and pump timers; the reconnect timer is the base's. */
  private clearTimers(): void {
    if (this.watchTimer) clearInterval(this.watchTimer);
    if (this.pumpTimer) clearTimeout(this.pumpTimer);
    if (this.pumpImmediate) clearImmediate(this.pumpImmediate);
    this.watchTimer = this.pumpTimer = null;
    this.pumpImmediate = null;
  }

  // ---- receive -------------------------------------------------------------------------------------

  private receive(msg: SocketCanMessage): void {
    const data = msg.data ?? Buffer.alloc(0);
    let frame: CanFrame;
    if (msg.err) {
      frame = { id: msg.id, extended: false, rtr: false, error: true, data: new Uint8Array(data) };
    } else if (msg.rtr) {
      frame = { id: msg.id, extended: Boolean(msg.ext), rtr: true, error: false, data: new Uint8Array(0), dlc: data.length };
    } else {
      frame = { id: msg.id, extended: Boolean(msg.ext), rtr: false, error: false, data: new Uint8Array(data) };
    }
    if (msg.ts_sec !== undefined) frame.timestamp = msg.ts_sec * 1000 + (msg.ts_usec ?? 0) / 1000;
    this.counters.frames_in++;
    this.counters.bytes_in += frame.data.length;
    if (frame.error) {
      this.errorFrames++;
      this.emit('frame', frame);
      this.emit('canError', describeCanError(frame), frame);
      return;
    }
    this.emit('frame', frame);
  }

  // ---- paced send ----------------------------------------------------------------------------------

  private schedulePump(delayMs = 0): void {
    if (this.pumpTimer || this.pumpImmediate) return;
    if (delayMs > 0) {
      this.pumpTimer = setTimeout(() => {
        this.pumpTimer = null;
        this.pumpTurn();
      }, delayMs);
    } else {
      this.pumpImmediate = setImmediate(() => {
        this.pumpImmediate = null;
        this.pumpTurn();
      });
    }
  }

  private refill(): void {
    if (this.rateHz <= 0) {
      this.tokens = this.burst;
      return;
    }
    const now = performance.now();
    if (this.lastRefill === 0) this.lastRefill = now;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.lastRefill) * this.rateHz) / 1000);
    this.lastRefill = now;
  }

  private pumpTurn(): void {
    const ch = this.channel;
    if (!ch || this.state !== 'open') return; // resumes from markOpen()
    this.refill();
    while (this.tokens >= 1) {
      const frame = this.retryFrame ?? this.queue.shift();
      if (!frame) break;
      this.retryFrame = null;
      let rc: number | undefined;
      try {
        rc = ch.send(toAddonMessage(frame));
      } catch (err) {
        // Rejected by the addon itself (should not happen after validation): drop and count.
        this.counters.dropped_out++;
        this.noteError(new Error(`SocketCAN send on ${this.iface} failed: ${(err as Error).message}`));
        continue;
      }
      if (typeof rc === 'number' && rc < 0) {
        // ENOBUFS/EAGAIN (tx queue full) or ENETDOWN: keep the frame; the watch notices a down interface.
        this.retryFrame = frame;
        this.txRetries++;
        const delay = this.retryDelay;
        this.retryDelay = Math.min(100, this.retryDelay * 2);
        this.schedulePump(delay);
        return;
      }
      this.retryDelay = this.opts.retryDelayMs ?? 2;
      this.tokens -= 1;
      this.counters.frames_out++;
      this.counters.bytes_out += frame.data.length;
    }
    if (this.queue.length > 0 || this.retryFrame) {
      // Yield so readers (in this process: the addon's receive callbacks) drain their socket buffers.
      // Rate-limited: sleep until a whole batch is allowed (fewer, coarser timers than one per frame).
      let wait = 0;
      if (this.rateHz > 0 && this.tokens < 1) {
        const want = Math.min(this.burst, this.queue.length + (this.retryFrame ? 1 : 0));
        wait = Math.max(1, Math.ceil(((want - this.tokens) * 1000) / this.rateHz));
      }
      this.schedulePump(wait);
    } else {
      this.releaseDrainWaiters();
    }
  }
}

function toAddonMessage(frame: CanFrame): SocketCanMessage {
  // The addon derives the dlc from data.length; a remote frame carries its dlc as a zeroed buffer.
  const data = frame.rtr ? Buffer.alloc(frameDlc(frame)) : Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.length);
  const msg: SocketCanMessage = { id: frame.id, data };
  if (frame.extended) msg.ext = true;
  if (frame.rtr) msg.rtr = true;
  return msg;
}
