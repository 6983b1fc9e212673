/**
 * A self-healing serial link over `serialport`.
 *
 * - `open()` starts the link and resolves once the port is open; if the port is missing or fails,
 *   the link keeps retrying with exponential backoff (a USB adapter not plugged in yet, a pty peer
 *   that has not started) and `open()` resolves when it finally opens.
 * - After every open the OS buffers are flushed (on a pseudo-terminal old bytes linger) and the
 *   modem lines are set only when asked; DTR/RTS ioctls fail on ptys and that never fails the open.
 * - When the port disappears (USB unplug, pty peer died: the read fails and serialport reports a
 *   disconnect) the link goes to `backoff` and reopens the same path when it comes back; `path` is
 *   resolved again on every attempt, so a symlink that now points to another device is followed.
 * - Writes go through a bounded queue (drops of the oldest chunk are counted in `stats().dropped_out`),
 *   are written one batch at a time (the next batch starts when the previous one reached the kernel),
 *   and wait in the queue while the link is down.
 */
import { promises as fs } from 'node:fs';
import { createRequire } from 'node:module';
import type { SerialPort as SerialPortType } from 'serialport';
import type { Backoff } from '../core/backoff.js';
import { BoundedQueue } from '../core/bounded-queue.js';
import { waitForOpen, type LinkState, type LinkStats } from '../core/link.js';
import { ReconnectingLink, backoffFrom } from '../core/reconnecting-link.js';

export interface SerialLinkOptions {
  path: string;
  /** Default 115200. */
  baudRate?: number;
  dataBits?: 5 | 6 | 7 | 8;
  stopBits?: 1 | 1.5 | 2;
  parity?: 'none' | 'even' | 'odd' | 'mark' | 'space';
  rtscts?: boolean;
  /** Exclusive lock (flock) on the device, default true. */
  lock?: boolean;
  /** Set these modem lines after open (errors are reported, never fatal: a pty has no DTR/RTS). */
  signals?: { dtr?: boolean; rts?: boolean };
  /** Discard bytes that were waiting in the OS buffers or still in transit when we opened. Default true. */
  flushOnOpen?: boolean;
  /** How long after the open to wait before that flush, so in-flight bytes are caught. Default 20 ms. */
  settleMs?: number;
  /** Outbound queue capacity in chunks (writes). Default 1024. */
  queueCapacity?: number;
  /** Largest batch handed to one port write (queued chunks are coalesced up to this). Default 4096 bytes. */
  maxWriteBytes?: number;
  /** Bytes of the read pool serialport fills (and of its readable buffer). Default 4096. */
  readBufferBytes?: number;
  /** Reconnect delays. Default base 200 ms, max 5 s. */
  backoff?: Backoff | { baseMs?: number; maxMs?: number };
  /** Reconnect after the port closes unexpectedly. Default true. */
  reconnect?: boolean;
  /**
   * How often the device node is checked while open (it still exists and is the same device).
   * Needed because a hung-up tty (pty peer gone) can make serialport's reader spin on 0-byte reads
   * without ever reporting a disconnect. Default 300 ms; 0 disables.
   */
  watchMs?: number;
}

export type SerialLinkEvents = {
  state: [LinkState, LinkState];
  error: [Error];
  data: [Buffer];
  /** Emitted after each successful open (also after a reconnect), once the buffers are flushed. */
  open: [];
};

type SerialPortCtor = typeof SerialPortType;
let serialPortCtor: SerialPortCtor | null = null;
function loadSerialPort(): SerialPortCtor {
  if (!serialPortCtor) {
    const require = createRequire(import.meta.url);
    try {
      serialPortCtor = (require('serialport') as { SerialPort: SerialPortCtor }).SerialPort;
    } catch (err) {
      throw new Error(`serial ports unavailable: the 'serialport' package could not be loaded (${(err as Error).message})`);
    }
  }
  return serialPortCtor;
}

export class SerialLinkClosedError extends Error {
  override name = 'SerialLinkClosedError';
}

/** The state machine, backoff, `reconnect: false` and close are `ReconnectingLink`'s (hal/README.md). */
export class SerialLink extends ReconnectingLink<SerialLinkEvents> {
  readonly path: string;
  private readonly opts: SerialLinkOptions;
  private readonly queue: BoundedQueue<Buffer>;
  private readonly maxWrite: number;
  private port: SerialPortType | null = null;
  private watchTimer: NodeJS.Timeout | null = null;
  private writing = false;

  constructor(options: SerialLinkOptions) {
    if (!options.path) throw new TypeError('SerialLink needs a path');
    super({ backoff: backoffFrom(options.backoff), ...(options.reconnect !== undefined ? { reconnect: options.reconnect } : {}) });
    this.opts = options;
    this.path = options.path;
    this.queue = new BoundedQueue<Buffer>(options.queueCapacity ?? 1024);
    this.maxWrite = options.maxWriteBytes ?? 4096;
  }

  /**
   * Start the link (idempotent) and resolve once the port is open. With `timeoutMs`, reject with the
   * last error if it is not open by then (the link keeps retrying in the background).
   */
  open(options: { timeoutMs?: number } = {}): Promise<void> {
    this.startLink();
    return this.waitOpen(options.timeoutMs);
  }

  /** Resolve when the link is open (now or later); reject when it is closed first or the timeout passes. */
  waitOpen(timeoutMs?: number): Promise<void> {
    if (this.state !== 'open' && !this.running) return Promise.reject(new SerialLinkClosedError(`serial link ${this.path} is closed`));
    const why = () => (this.counters.last_error ? `: ${this.counters.last_error}` : '');
    return waitForOpen(
      this,
      this.state,
      timeoutMs,
      () => new SerialLinkClosedError(`serial link ${this.path} closed before it opened`),
      () => new Error(`serial port ${this.path} did not open within ${timeoutMs} ms${why()}`),
    );
  }

  /**
   * Queue bytes for writing. Returns false when the queue was full and the oldest chunk was dropped
   * to make room (counted in `stats().dropped_out`). Bytes written while the link is down wait for
   * the next open.
   */
  write(bytes: Uint8Array | string): boolean {
    if (!this.running && this.state === 'closed') throw new SerialLinkClosedError(`serial link ${this.path} is closed`);
    const chunk = typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : Buffer.from(bytes);
    if (chunk.length === 0) return true;
    const before = this.queue.dropped;
    this.queue.push(chunk);
    this.pump();
    return this.queue.dropped === before;
  }

  /** Number of chunks waiting to be written. */
  get pending(): number {
    return this.queue.length + (this.writing ? 1 : 0);
  }

  /** Resolve when everything queued so far has been written and transmitted (tcdrain). */
  async drain(): Promise<void> {
    if (this.queue.length > 0 || this.writing) await this.waitDrained();
    const port = this.port;
    if (port && this.state === 'open') {
      await new Promise<void>((resolve) => port.drain(() => resolve()));
    }
  }

  /** Drop the current port and reconnect after a backoff delay (e.g. the protocol on top stopped answering). */
  restart(reason: string): void {
    if (!this.running) return;
    this.fail(new Error(reason));
  }

  stats(): LinkStats {
    return { ...this.counters, state: this.state, dropped_out: this.counters.dropped_out + this.queue.dropped };
  }

  // ---- the medium (ReconnectingLink): close() stops reconnecting, discards queued writes, closes the port

  protected discardQueued(): void {
    this.queue.clear();
    this.writing = false;
  }

  protected async closeMedium(): Promise<void> {
    this.stopWatch();
    const port = this.port;
    this.port = null;
    if (port) await closePort(port);
  }

  protected connect(gen: number): void {
    let SerialPort: SerialPortCtor;
    try {
      SerialPort = loadSerialPort();
    } catch (err) {
      this.noteError(err as Error);
      this.scheduleReconnect(gen);
      return;
    }
    const port = new SerialPort({
      path: this.path,
      baudRate: this.opts.baudRate ?? 115200,
      dataBits: this.opts.dataBits ?? 8,
      stopBits: this.opts.stopBits ?? 1,
      parity: this.opts.parity ?? 'none',
      rtscts: this.opts.rtscts ?? false,
      lock: this.opts.lock ?? true,
      // Do not drop DTR/RTS on close: on a pty the ioctl fails; on real adapters it resets some boards.
      hupcl: false,
      autoOpen: false,
      // serialport reads into a pool of `highWaterMark` bytes per port (64 KiB by default, a fresh one
      // whenever less than 128 bytes are left). A 115 200-baud line brings at most ~11.5 KiB/s and the
      // frame decoder takes any chunking, so 4 KiB per port is plenty; with 32 ports the default
      // held 2 MiB of read pools (README.md § Benchmarks, idle RSS with 32 devices).
      highWaterMark: this.opts.readBufferBytes ?? 4096,
    });
    // serialport emits 'error' for failures without a callback; they are handled through close/open paths.
    port.on('error', (err: Error) => {
      if (gen === this.currentGeneration) this.noteError(err);
    });
    port.open((err) => {
      if (!this.isCurrent(gen)) {
        if (!err) void closePort(port);
        return;
      }
      if (err) {
        this.noteError(new Error(`cannot open serial port ${this.path}: ${err.message}`));
        this.scheduleReconnect(gen);
        return;
      }
      void this.afterOpen(port, gen);
    });
  }

  private async afterOpen(port: SerialPortType, gen: number): Promise<void> {
    const signals = this.opts.signals;
    if (signals && (signals.dtr !== undefined || signals.rts !== undefined)) {
      await new Promise<void>((resolve) =>
        port.set({ ...(signals.dtr !== undefined ? { dtr: signals.dtr } : {}), ...(signals.rts !== undefined ? { rts: signals.rts } : {}) }, (err) => {
          // ENOTTY on a pseudo-terminal: not fatal, the port works without modem lines.
          if (err) this.emit('error', new Error(`serial port ${this.path}: cannot set modem lines (${err.message}); continuing`));
          resolve();
        }),
      );
    }
    if (this.opts.flushOnOpen ?? true) {
      // serialport already flushes inside open(); bytes still in transit (a pty peer's relay, a USB
      // adapter's FIFO) land right after it. Wait a moment and flush again.
      const flush = (): Promise<void> =>
        new Promise<void>((resolve) =>
          port.flush((err) => {
            if (err) this.emit('error', new Error(`serial port ${this.path}: flush after open failed (${err.message}); continuing`));
            resolve();
          }),
        );
      const settle = this.opts.settleMs ?? 20;
      if (settle > 0) await new Promise((r) => setTimeout(r, settle));
      await flush();
    }
    const device = await statDevice(this.path);
    if (!this.isCurrent(gen)) {
      void closePort(port);
      return;
    }
    this.port = port;
    port.on('data', (chunk: Buffer) => {
      if (gen !== this.currentGeneration) return;
      this.counters.bytes_in += chunk.length;
      this.counters.frames_in++;
      this.emit('data', chunk);
    });
    port.on('close', (err: (Error & { disconnected?: boolean }) | null) => {
      if (!this.isCurrent(gen)) return;
      const why = err?.message ? `${err.message}` : 'closed';
      this.fail(new Error(`serial port ${this.path} went away (${why})`));
    });
    this.startWatch(gen, device);
    this.markOpen();
    this.emit('open');
    this.pump();
  }

  private startWatch(gen: number, opened: DeviceId | null): void {
    this.stopWatch();
    const every = this.opts.watchMs ?? 300;
    if (every <= 0 || !opened) return;
    let busy = false;
    this.watchTimer = setInterval(() => {
      if (busy) return;
      busy = true;
      void statDevice(this.path).then((now) => {
        busy = false;
        if (!this.isCurrent(gen) || this.state !== 'open') return;
        if (!now) this.fail(new Error(`serial port ${this.path} went away (device node vanished)`));
        else if (now.rdev !== opened.rdev || now.ino !== opened.ino) this.fail(new Error(`serial port ${this.path} now names another device`));
      });
    }, every);
    this.watchTimer.unref?.();
  }

  private stopWatch(): void {
    if (this.watchTimer) clearInterval(this.watchTimer);
    this.watchTimer = null;
  }

  private fail(err: Error): void {
    this.stopWatch();
    const gen = this.bumpGeneration();
    const port = this.port;
    this.port = null;
    this.writing = false;
    if (port) void closePort(port);
    this.noteError(err);
    this.scheduleReconnect(gen);
  }

  private pump(): void {
    const port = this.port;
    if (this.writing || !port || this.state !== 'open') return;
    if (this.queue.length === 0) {
      this.releaseDrainWaiters();
      return;
    }
    const parts: Buffer[] = [];
    let size = 0;
    while (this.queue.length > 0) {
      const next = this.queue.shift()!;
      parts.push(next);
      size += next.length;
      if (size >= this.maxWrite) break;
    }
    const batch = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    const gen = this.currentGeneration;
    this.writing = true;
    port.write(batch, (err) => {
      if (gen !== this.currentGeneration) return;
      this.writing = false;
      if (err) {
        // The port failed under us; the batch is lost (counted), the link reconnects.
        this.counters.dropped_out += parts.length;
        this.fail(new Error(`write to serial port ${this.path} failed: ${err.message}`));
        return;
      }
      this.counters.bytes_out += size;
      this.counters.frames_out += parts.length;
      this.pump();
    });
  }
}

interface DeviceId {
  rdev: number;
  ino: number;
}

async function statDevice(path: string): Promise<DeviceId | null> {
  try {
    const st = await fs.stat(path); // follows symlinks (socat links, /dev/serial/by-id/...)
    return { rdev: st.rdev, ino: st.ino };
  } catch {
    return null;
  }
}

function closePort(port: SerialPortType): Promise<void> {
  return new Promise((resolve) => {
    if (!port.isOpen) return resolve();
    port.close(() => resolve());
  });
}
