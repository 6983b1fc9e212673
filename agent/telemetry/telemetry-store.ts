import path from 'node:path';
import { JsonlLog } from '../state/jsonl-log.js';
import { Ring } from '../observability/ring.js';
import type { TelemetryEvent } from './telemetry-events.js';

export const TELEMETRY_HISTORY_FILE = 'telemetry-history.jsonl';

interface HistoryLine {
  offset: number;
  event: TelemetryEvent;
}

export interface TelemetryStoreOptions {
  capacity: number;
  historyMaxBytes: number;
  historyFiles: number;
  /** How long appended events may wait before they are written to history in one batch. */
  flushIntervalMs?: number;
  /**
   * A batch this large is written at the next turn of the event loop instead of waiting for the
   * interval: the write runs on the event loop, so a bounded batch bounds the stall it causes.
   */
  flushLines?: number;
}

/**
 * Live telemetry: a bounded in-memory ring (what the stream replays) plus a rotated JSONL history on
 * disk. History writes are batched so ingest stays cheap; a crash loses at most one batch window.
 */
export class TelemetryStore {
  readonly ring: Ring<TelemetryEvent>;
  private readonly history: JsonlLog<HistoryLine>;
  /** History lines not yet written, already serialised (`{"offset":N,"event":…}`). */
  private pending: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private readonly flushIntervalMs: number;
  private readonly flushLines: number;
  private skippedOnLoad = 0;

  constructor(stateDir: string, options: TelemetryStoreOptions) {
    this.ring = new Ring<TelemetryEvent>(options.capacity, { immutableItems: true });
    this.flushIntervalMs = options.flushIntervalMs ?? 200;
    this.flushLines = options.flushLines ?? 256;
    this.history = new JsonlLog<HistoryLine>(path.join(stateDir, TELEMETRY_HISTORY_FILE), {
      maxBytes: options.historyMaxBytes,
      keepFiles: options.historyFiles,
    });
    this.rehydrate();
  }

  /** Restores the ring (and its offsets) from the newest history lines. */
  private rehydrate(): void {
    const lines: HistoryLine[] = [];
    for (const file of this.history.files()) {
      const { records, skipped } = new JsonlLog<HistoryLine>(file).read();
      this.skippedOnLoad += skipped.length;
      lines.push(...records.filter((r) => typeof r?.offset === 'number' && r.event));
    }
    const tail = lines.slice(Math.max(0, lines.length - this.ring.capacity));
    if (tail.length > 0) this.ring.restore(tail.map((l) => l.event), tail[0]!.offset);
  }

  append(event: TelemetryEvent): number {
    const offset = this.ring.append(event);
    // Serialised once here (spread over the appends instead of a burst at flush time); the stream
    // reuses the same text through `ring.json`.
    this.pending.push(`{"offset":${offset},"event":${this.ring.json(event)}}`);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.flushIntervalMs);
      this.timer.unref();
    }
    if (this.pending.length >= this.flushLines && !this.immediate) {
      this.immediate = setImmediate(() => this.flush());
      this.immediate.unref();
    }
    return offset;
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.immediate) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    const batch = this.pending;
    this.pending = [];
    this.history.appendSerialised(batch);
  }

  /** Torn or unreadable history lines found at start (reported by /v1/instance-level diagnostics). */
  get unreadableHistoryLines(): number {
    return this.skippedOnLoad;
  }

  close(): void {
    this.flush();
    this.history.close();
  }
}
