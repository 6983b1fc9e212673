import fs from 'node:fs';
import path from 'node:path';
import type { AgentEventFrame } from '../../../api/relay-protocol.js';

export const OUTBOX_FILE = 'relay-outbox.jsonl';
export const OUTBOX_STATE_FILE = 'relay-outbox-state.json';

interface OutboxState {
  next_seq: number;
  dropped_pending: number;
}

/**
 * The relay trunk's event outbox (docs/relay.md, "The agent side"): frames produced while the relay
 * is unreachable, in seq order, bounded, on disk (`<state dir>/relay-outbox.jsonl`, one frame a line,
 * appended as they come; rewritten whole after a drain). The sequence counter and the count of
 * dropped frames not yet announced live in `relay-outbox-state.json`, so seq never goes back and a
 * drop is never forgotten across a restart. A full outbox drops the *new* frame: its seq is consumed
 * (the relay sees the gap) and the next frame stamped carries `dropped_before`.
 */
export class RelayOutbox {
  private frames: AgentEventFrame[] = [];
  private nextSeqValue = 1;
  private droppedPending = 0;
  droppedTotal = 0;
  /** Set when the current run of overflow has been logged; cleared when a frame fits again. */
  private overflowing = false;
  private stateDirty = false;
  private stateTimer: NodeJS.Timeout | null = null;
  private readonly file: string;
  private readonly stateFile: string;

  constructor(
    stateDir: string,
    readonly capacity: number,
    private readonly agentId: string,
    private readonly log: (line: string) => void,
  ) {
    this.file = path.join(stateDir, OUTBOX_FILE);
    this.stateFile = path.join(stateDir, OUTBOX_STATE_FILE);
    this.load();
  }

  private load(): void {
    try {
      const s = JSON.parse(fs.readFileSync(this.stateFile, 'utf8')) as Partial<OutboxState>;
      if (Number.isSafeInteger(s.next_seq) && s.next_seq! > 0) this.nextSeqValue = s.next_seq!;
      if (Number.isSafeInteger(s.dropped_pending) && s.dropped_pending! >= 0) this.droppedPending = s.dropped_pending!;
    } catch {
      /* first start, or unreadable: seq is recovered from the frames below */
    }
    let text = '';
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch {
      return;
    }
    let torn = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const f = JSON.parse(line) as AgentEventFrame;
        if (f && f.kind === 'event' && Number.isSafeInteger(f.seq)) this.frames.push(f);
        else torn++;
      } catch {
        torn++;
      }
    }
    if (torn > 0) this.log(`warning: relay outbox: ${torn} unreadable line(s) skipped in ${this.file}`);
    this.frames.sort((a, b) => a.seq - b.seq);
    const last = this.frames.at(-1);
    if (last && last.seq >= this.nextSeqValue) this.nextSeqValue = last.seq + 1;
    if (this.frames.length > this.capacity) {
      const extra = this.frames.length - this.capacity;
      this.frames.splice(this.capacity);
      this.log(`warning: relay outbox: ${extra} frame(s) beyond the capacity of ${this.capacity} dropped at start`);
    }
  }

  get depth(): number {
    return this.frames.length;
  }

  get nextSeq(): number {
    return this.nextSeqValue;
  }

  get pendingDrops(): number {
    return this.droppedPending;
  }

  /** Gives `frame` the next seq and the count of frames dropped before it. */
  stamp(frame: Record<string, unknown>): AgentEventFrame {
    const stamped: AgentEventFrame = { kind: 'event', agent_id: this.agentId, seq: this.nextSeqValue++, dropped_before: this.droppedPending, frame };
    this.droppedPending = 0;
    this.overflowing = false;
    this.markDirty();
    return stamped;
  }

  /** Keeps `frame` for later (stamped now); a full outbox drops it, counted. */
  push(frame: Record<string, unknown>): void {
    if (this.frames.length >= this.capacity) {
      this.nextSeqValue++;
      this.droppedPending++;
      this.droppedTotal++;
      this.markDirty();
      if (!this.overflowing) {
        this.overflowing = true;
        this.log(`warning: relay outbox full (${this.capacity} frames): new event frames are dropped and counted until the relay is reachable`);
      }
      return;
    }
    const stamped = this.stamp(frame);
    this.frames.push(stamped);
    fs.appendFileSync(this.file, `${JSON.stringify(stamped)}\n`);
  }

  /** Puts frames that were sent but never acknowledged back in front (their seq is older than any kept one). */
  requeue(frames: readonly AgentEventFrame[]): void {
    if (frames.length === 0) return;
    this.frames = [...frames, ...this.frames].sort((a, b) => a.seq - b.seq);
    this.persist();
  }

  peek(n: number): AgentEventFrame[] {
    return this.frames.slice(0, n);
  }

  /** Forgets the first `n` frames (delivered); the file is rewritten by `persist()`. */
  shift(n: number): void {
    this.frames.splice(0, n);
  }

  /** Rewrites the frames file with what is left (temp file + rename), and the state file. */
  persist(): void {
    if (this.frames.length === 0) {
      fs.rmSync(this.file, { force: true });
    } else {
      const tmp = `${this.file}.tmp`;
      fs.writeFileSync(tmp, this.frames.map((f) => JSON.stringify(f)).join('\n') + '\n');
      fs.renameSync(tmp, this.file);
    }
    this.writeState();
  }

  private markDirty(): void {
    this.stateDirty = true;
    if (this.stateTimer) return;
    this.stateTimer = setTimeout(() => {
      this.stateTimer = null;
      this.writeState();
    }, 1000);
    this.stateTimer.unref();
  }

  private writeState(): void {
    if (this.stateTimer) {
      clearTimeout(this.stateTimer);
      this.stateTimer = null;
    }
    this.stateDirty = false;
    const state: OutboxState = { next_seq: this.nextSeqValue, dropped_pending: this.droppedPending };
    const tmp = `${this.stateFile}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(state));
    fs.renameSync(tmp, this.stateFile);
  }

  close(): void {
    if (this.stateDirty || this.stateTimer) this.writeState();
  }
}
