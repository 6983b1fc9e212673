/**
 * Sequence numbers and command reliability (docs/firmware-bridge.md §6).
 *
 * - `SeqCounter`: each sender numbers its frames with its own u16 counter, wrapping 0xFFFF -> 0.
 * - `CommandTracker` (gateway): sends COMMAND, retransmits it with the *same* seq until a
 *   COMMAND_ACK with that `ref_seq` arrives or the retries run out.
 * - `CommandReplayCache` (device): remembers the acknowledgements of the last few commands, so a
 *   retransmitted COMMAND is answered again without being executed twice.
 */
import type { CommandAck, CommandStatus, Message, Value } from './messages.js';
import { systemScheduler, type Scheduler, type TimerHandle } from './timers.js';

/** A sender's u16 sequence counter. Start it at a random value so a restarted gateway does not reuse recent seqs. */
export class SeqCounter {
  private value: number;

  constructor(start = Math.floor(Math.random() * 0x10000)) {
    this.value = start & 0xffff;
  }

  /** Returns the next seq and advances (wrapping after 0xFFFF). */
  next(): number {
    const v = this.value;
    this.value = (this.value + 1) & 0xffff;
    return v;
  }

  /** The seq the next call to `next` will return. */
  peek(): number {
    return this.value;
  }
}

export interface CommandResult {
  /** The device's status, or `timeout` when no ACK came after all attempts, or `cancelled`. */
  status: CommandStatus | 'timeout' | 'cancelled';
  detail: string;
  /** The seq the command was sent with (every attempt used it). */
  seq: number;
  attempts: number;
  /** Time from the first transmission to the ACK (null without an ACK). */
  rtt_ms: number | null;
}

export interface CommandTrackerOptions {
  send: (msg: Message) => void;
  nextSeq?: () => number;
  scheduler?: Scheduler;
  /** Wait for COMMAND_ACK before retransmitting. Default 500 ms. */
  timeoutMs?: number;
  /** Retransmissions after the first attempt. Default 3 (4 attempts in all). */
  retries?: number;
}

interface PendingCommand {
  msg: Message & { type: 'command' };
  attempts: number;
  retries: number;
  timeoutMs: number;
  startedAt: number;
  timer: TimerHandle | null;
  resolve: (r: CommandResult) => void;
}

/** Gateway side of the command exchange; I/O-free: feed it every received message through `handle`. */
export class CommandTracker {
  private readonly send: (msg: Message) => void;
  private readonly nextSeq: () => number;
  private readonly scheduler: Scheduler;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly pending = new Map<number, PendingCommand>();

  constructor(options: CommandTrackerOptions) {
    this.send = options.send;
    const counter = new SeqCounter();
    this.nextSeq = options.nextSeq ?? (() => counter.next());
    this.scheduler = options.scheduler ?? systemScheduler;
    this.timeoutMs = options.timeoutMs ?? 500;
    this.retries = options.retries ?? 3;
  }

  /** Commands awaiting an acknowledgement. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends a command; resolves (never rejects) with the device's answer or `timeout`. */
  execute(commandId: number, args: Value[] = [], options: { timeoutMs?: number; retries?: number } = {}): Promise<CommandResult> {
    const msg = { type: 'command' as const, seq: this.nextSeq(), command_id: commandId, args };
    return new Promise<CommandResult>((resolve) => {
      const entry: PendingCommand = {
        msg,
        attempts: 0,
        retries: options.retries ?? this.retries,
        timeoutMs: options.timeoutMs ?? this.timeoutMs,
        startedAt: this.scheduler.now(),
        timer: null,
        resolve,
      };
      const previous = this.pending.get(msg.seq);
      if (previous) this.settle(previous, { status: 'cancelled', detail: 'seq reused', rtt_ms: null });
      this.pending.set(msg.seq, entry);
      this.transmit(entry);
    });
  }

  /** Consumes a COMMAND_ACK that answers a pending command; returns whether it did. */
  handle(msg: Message): boolean {
    if (msg.type !== 'command_ack') return false;
    const entry = this.pending.get(msg.ref_seq);
    if (!entry) return false;
    this.settle(entry, { status: msg.status, detail: msg.detail, rtt_ms: this.scheduler.now() - entry.startedAt });
    return true;
  }

  /** Resolves every pending command with `cancelled` (link closed). */
  cancelAll(detail = 'cancelled'): void {
    for (const entry of [...this.pending.values()]) this.settle(entry, { status: 'cancelled', detail, rtt_ms: null });
  }

  private transmit(entry: PendingCommand): void {
    entry.attempts++;
    this.send(entry.msg);
    entry.timer = this.scheduler.setTimeout(() => {
      entry.timer = null;
      if (entry.attempts > entry.retries) {
        this.settle(entry, { status: 'timeout', detail: `no COMMAND_ACK after ${entry.attempts} attempts`, rtt_ms: null });
      } else {
        this.transmit(entry);
      }
    }, entry.timeoutMs);
  }

  private settle(entry: PendingCommand, r: Pick<CommandResult, 'status' | 'detail' | 'rtt_ms'>): void {
    if (entry.timer) this.scheduler.clearTimeout(entry.timer);
    entry.timer = null;
    if (this.pending.get(entry.msg.seq) === entry) this.pending.delete(entry.msg.seq);
    entry.resolve({ ...r, seq: entry.msg.seq, attempts: entry.attempts });
  }
}

/** What a device remembers about an executed command. */
export type CachedAck = Pick<CommandAck, 'status' | 'detail'>;

/**
 * Device side duplicate suppression: the acks of the last `capacity` commands by seq (a fixed ring,
 * the same structure firmware would use). Clear it when a HELLO starts a new session.
 */
export class CommandReplayCache {
  private readonly seqs: Int32Array;
  private readonly acks: (CachedAck | null)[];
  private next = 0;

  constructor(readonly capacity = 4) {
    if (capacity < 1) throw new RangeError('capacity must be at least 1');
    this.seqs = new Int32Array(capacity).fill(-1);
    this.acks = new Array<CachedAck | null>(capacity).fill(null);
  }

  /** The ack sent for command `seq`, if it was executed recently. */
  get(seq: number): CachedAck | undefined {
    for (let i = 0; i < this.capacity; i++) if (this.seqs[i] === seq) return this.acks[i] ?? undefined;
    return undefined;
  }

  remember(seq: number, ack: CachedAck): void {
    this.seqs[this.next] = seq;
    this.acks[this.next] = { status: ack.status, detail: ack.detail };
    this.next = (this.next + 1) % this.capacity;
  }

  clear(): void {
    this.seqs.fill(-1);
    this.acks.fill(null);
    this.next = 0;
  }
}
