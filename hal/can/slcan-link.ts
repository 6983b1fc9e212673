/**
 * A CAN link through an SLCAN (Lawicel) adapter on a serial port.
 *
 * Each time the serial link opens (first open and every reconnect) the adapter is brought into a known
 * state: `C\r` (close the channel; a BELL here is fine, it was already closed), `S<n>\r` (bitrate),
 * optionally `Z0/Z1\r` (timestamps), then `O\r` (or `L\r` for listen-only). Each command waits for
 * the adapter's `\r`; a BELL or no answer within `commandTimeoutMs` restarts the serial link with
 * backoff. Frames sent while the channel is not open wait in a bounded queue.
 *
 * The link rides on a serial link: reconnecting (backoff, `reconnect`) is the serial link's
 * (`ReconnectingLink`); this link shares only the state machine and error reporting (`StatefulLink`,
 * hal/README.md), mirroring the serial link's state and adding the open sequence.
 */
import type { Backoff } from '../core/backoff.js';
import { BoundedQueue } from '../core/bounded-queue.js';
import { waitForOpen, type LinkState, type LinkStats } from '../core/link.js';
import { StatefulLink } from '../core/reconnecting-link.js';
import { SerialLink } from '../serial/serial-link.js';
import { assertCanFrame, type CanFrame } from './can-frame.js';
import {
  SlcanParser,
  encodeSlcanFrame,
  slcanBitrateCommand,
  slcanCommands,
  slcanStatusToErrorFrame,
  type SlcanAdapterMessage,
} from './slcan.js';

export interface SlcanLinkOptions {
  /** Serial device of the adapter (ignored when `serial` is given). */
  path?: string;
  /** Serial speed of the adapter's UART (USB CDC adapters ignore it). Default 115200. */
  baudRate?: number;
  /** Use an existing serial link (not closed by `close()` unless `ownSerial`). */
  serial?: SerialLink;
  ownSerial?: boolean;
  /** CAN bitrate in bit/s (10k..1M) or an `S0`..`S8` code. Default 500000. */
  bitrate?: number | string;
  /** Open with `L` (listen only) instead of `O`. */
  listenOnly?: boolean;
  /** Send `Z1`/`Z0` before opening; leave the adapter's setting alone when undefined. */
  timestamps?: boolean;
  /** How long to wait for the adapter's answer to a command. Default 1000 ms. */
  commandTimeoutMs?: number;
  /** Frames waiting while the channel is not open. Default 1024. */
  queueCapacity?: number;
  /** Poll `F` (status flags) this often while open and report problems as error frames. 0 = off (default). */
  statusPollMs?: number;
  backoff?: Backoff | { baseMs?: number; maxMs?: number };
}

export interface SlcanLinkStats extends LinkStats {
  /** `z`/`Z` acknowledgements of transmitted frames. */
  tx_acks: number;
  /** BELLs not attributable to a command (the adapter refused a frame). */
  tx_errors: number;
  /** Completed open sequences (C, S, O). */
  open_sequences: number;
}

export type SlcanLinkEvents = {
  state: [LinkState, LinkState];
  error: [Error];
  frame: [CanFrame];
  /** Adapter status flags from `F` (nonzero only), with readable conditions. */
  status: [number, string[]];
};

type Expect = 'ok' | 'version' | 'serial' | 'status';
interface Pending {
  command: string;
  expect: Expect;
  bellOk: boolean;
  resolve: (msg: SlcanAdapterMessage) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class SlcanError extends Error {
  override name = 'SlcanError';
}

export class SlcanLink extends StatefulLink<SlcanLinkEvents> {
  readonly serial: SerialLink;
  private readonly ownSerial: boolean;
  private readonly bitrateCmd: string;
  private readonly opts: SlcanLinkOptions;
  private readonly parser = new SlcanParser();
  private readonly queue: BoundedQueue<CanFrame>;
  private pending: Pending | null = null;
  private commandChain: Promise<unknown> = Promise.resolve();
  private sequenceGen = 0;
  private pollTimer: NodeJS.Timeout | null = null;
  private readonly adapter = { tx_acks: 0, tx_errors: 0, open_sequences: 0 };
  private readonly onSerialState = (to: LinkState): void => this.handleSerialState(to);
  private readonly onSerialData = (chunk: Buffer): void => this.handleData(chunk);
  private readonly onSerialOpen = (): void => void this.runOpenSequence();
  private readonly onSerialError = (err: Error): void => this.noteError(err);

  constructor(options: SlcanLinkOptions) {
    super();
    this.opts = options;
    this.bitrateCmd = slcanBitrateCommand(options.bitrate ?? 500_000);
    if (options.serial) {
      this.serial = options.serial;
      this.ownSerial = options.ownSerial ?? false;
    } else {
      if (!options.path) throw new TypeError('SlcanLink needs a path or a serial link');
      this.serial = new SerialLink({
        path: options.path,
        baudRate: options.baudRate ?? 115200,
        ...(options.backoff ? { backoff: options.backoff } : {}),
      });
      this.ownSerial = true;
    }
    this.queue = new BoundedQueue<CanFrame>(options.queueCapacity ?? 1024);
    this.serial.on('state', this.onSerialState);
    this.serial.on('data', this.onSerialData);
    this.serial.on('open', this.onSerialOpen);
    this.serial.on('error', this.onSerialError);
  }

  /** Start the link; resolves once the adapter's channel is open (C, S, O acknowledged). */
  open(options: { timeoutMs?: number } = {}): Promise<void> {
    if (this.state === 'closed') return Promise.reject(new SlcanError(`SLCAN link ${this.serial.path} is closed`));
    const opened = this.waitOpen(options.timeoutMs);
    if (this.serial.state === 'open') {
      if (this.state === 'idle') void this.runOpenSequence();
    } else {
      void this.serial.open().catch(() => undefined);
    }
    return opened;
  }

  waitOpen(timeoutMs?: number): Promise<void> {
    const why = () => (this.counters.last_error ? `: ${this.counters.last_error}` : '');
    return waitForOpen(
      this,
      this.state,
      timeoutMs,
      () => new SlcanError(`SLCAN link ${this.serial.path} closed before it opened`),
      () => new SlcanError(`SLCAN adapter on ${this.serial.path} did not open within ${timeoutMs} ms${why()}`),
    );
  }

  /**
   * Send a data or remote frame. Throws on an invalid frame. While the channel is not open the frame
   * waits in a bounded queue; returns false when that queue dropped its oldest frame.
   */
  send(frame: CanFrame): boolean {
    assertCanFrame(frame);
    if (frame.error) throw new SlcanError('error frames cannot be transmitted');
    if (this.state === 'closed') throw new SlcanError(`SLCAN link ${this.serial.path} is closed`);
    if (this.state === 'open' && this.queue.length === 0) {
      return this.transmit(frame);
    }
    const before = this.queue.dropped;
    this.queue.push(frame);
    return this.queue.dropped === before;
  }

  /** `V`: hardware and software version of the adapter. */
  async version(): Promise<{ hardware: string; software: string; raw: string }> {
    const msg = await this.command(slcanCommands.version, 'version');
    if (msg.type !== 'version') throw new SlcanError('unexpected answer to V');
    return { hardware: msg.hardware, software: msg.software, raw: msg.raw };
  }

  /** `F`: status flags; nonzero flags are also reported as a `status` event and an error frame. */
  async status(): Promise<{ flags: number; conditions: string[] }> {
    const msg = await this.command(slcanCommands.status, 'status');
    if (msg.type !== 'status') throw new SlcanError('unexpected answer to F');
    this.reportStatus(msg.flags, msg.conditions);
    return { flags: msg.flags, conditions: msg.conditions };
  }

  /** Close the adapter channel (`C`) when possible, then the serial link if this link owns it. */
  async close(): Promise<void> {
    this.sequenceGen++;
    this.stopPolling();
    if (this.serial.state === 'open') {
      await this.command(slcanCommands.close, 'ok', { bellOk: true, timeoutMs: 300 }).catch(() => undefined);
    }
    this.failPending(new SlcanError('SLCAN link closed'));
    this.queue.clear();
    this.serial.off('state', this.onSerialState);
    this.serial.off('data', this.onSerialData);
    this.serial.off('open', this.onSerialOpen);
    this.serial.off('error', this.onSerialError);
    if (this.ownSerial) await this.serial.close();
    this.setState('closed');
  }

  stats(): SlcanLinkStats {
    const s = this.serial.stats();
    return {
      ...s,
      state: this.state,
      frames_in: this.counters.frames_in,
      frames_out: this.counters.frames_out,
      dropped_out: s.dropped_out + this.queue.dropped,
      malformed_in: this.parser.malformed,
      last_error: this.counters.last_error ?? s.last_error,
      tx_acks: this.adapter.tx_acks,
      tx_errors: this.adapter.tx_errors,
      open_sequences: this.adapter.open_sequences,
    };
  }

  // ---- internals -----------------------------------------------------------------------------------

  private handleSerialState(to: LinkState): void {
    if (to === 'open') return; // the 'open' event runs the sequence
    this.sequenceGen++;
    this.stopPolling();
    this.failPending(new SlcanError(`serial link ${this.serial.path} is ${to}`));
    this.parser.reset();
    this.setState(to);
  }

  private async runOpenSequence(): Promise<void> {
    const gen = ++this.sequenceGen;
    this.setState('connecting');
    this.parser.reset();
    try {
      // Close first so S is accepted (Lawicel refuses S while open); BELL means "already closed".
      await this.command(slcanCommands.close, 'ok', { bellOk: true });
      if (gen !== this.sequenceGen) return;
      await this.command(this.bitrateCmd, 'ok');
      if (gen !== this.sequenceGen) return;
      if (this.opts.timestamps !== undefined) {
        await this.command(slcanCommands.timestamps(this.opts.timestamps), 'ok');
        if (gen !== this.sequenceGen) return;
      }
      await this.command(this.opts.listenOnly ? slcanCommands.listenOnly : slcanCommands.open, 'ok');
      if (gen !== this.sequenceGen) return;
    } catch (err) {
      if (gen !== this.sequenceGen) return;
      const msg = `SLCAN adapter on ${this.serial.path} failed the open sequence: ${(err as Error).message}`;
      this.noteError(new SlcanError(msg));
      this.serial.restart(msg);
      return;
    }
    this.adapter.open_sequences++;
    this.setState('open');
    this.startPolling();
    while (this.state === 'open' && this.queue.length > 0) this.transmit(this.queue.shift()!);
  }

  private transmit(frame: CanFrame): boolean {
    this.counters.frames_out++;
    return this.serial.write(encodeSlcanFrame(frame));
  }

  private command(text: string, expect: Expect, options: { bellOk?: boolean; timeoutMs?: number } = {}): Promise<SlcanAdapterMessage> {
    const run = (): Promise<SlcanAdapterMessage> =>
      new Promise<SlcanAdapterMessage>((resolve, reject) => {
        if (this.serial.state !== 'open') {
          reject(new SlcanError(`serial link ${this.serial.path} is not open`));
          return;
        }
        const command = JSON.stringify(text.replace(/\r$/, ''));
        const timeoutMs = options.timeoutMs ?? this.opts.commandTimeoutMs ?? 1000;
        const timer = setTimeout(() => {
          if (this.pending?.timer === timer) this.pending = null;
          reject(new SlcanError(`no answer to ${command} within ${timeoutMs} ms`));
        }, timeoutMs);
        this.pending = { command, expect, bellOk: options.bellOk ?? false, resolve, reject, timer };
        this.serial.write(text);
      });
    const p = this.commandChain.then(run, run);
    this.commandChain = p.catch(() => undefined);
    return p;
  }

  private failPending(err: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    p.reject(err);
  }

  private handleData(chunk: Buffer): void {
    for (const msg of this.parser.push(chunk)) {
      switch (msg.type) {
        case 'frame': {
          this.counters.frames_in++;
          this.emit('frame', msg.frame);
          break;
        }
        case 'tx-ack':
          this.adapter.tx_acks++;
          break;
        case 'error': {
          const p = this.pending;
          if (p) {
            this.pending = null;
            clearTimeout(p.timer);
            if (p.bellOk) p.resolve(msg);
            else p.reject(new SlcanError(`adapter answered ${p.command} with BELL (error)`));
          } else {
            this.adapter.tx_errors++;
            this.noteError(new SlcanError(`adapter on ${this.serial.path} reported an error (BELL), e.g. a refused frame`));
          }
          break;
        }
        default: {
          const p = this.pending;
          if (p && p.expect === msg.type) {
            this.pending = null;
            clearTimeout(p.timer);
            p.resolve(msg);
          }
          // an unsolicited '\r' (e.g. a second OK) is harmless
        }
      }
    }
  }

  private startPolling(): void {
    const every = this.opts.statusPollMs ?? 0;
    if (every <= 0) return;
    this.stopPolling();
    this.pollTimer = setInterval(() => {
      if (this.state !== 'open') return;
      this.status().catch((err: Error) => this.noteError(err));
    }, every);
    this.pollTimer.unref?.();
  }

  private stopPolling(): void {
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
  }

  private reportStatus(flags: number, conditions: string[]): void {
    if (!flags) return;
    this.emit('status', flags, conditions);
    const errFrame = slcanStatusToErrorFrame(flags);
    if (errFrame) {
      this.counters.frames_in++;
      this.emit('frame', errFrame);
    }
  }
}
