import fs from 'node:fs';
import path from 'node:path';
import { registerDurable, unregisterDurable, type Committable } from './commit.js';

export interface JsonlLogOptions {
  /**
   * When appends reach the disk. `true`: fsync after every append, blocking. `'group'`: the append is
   * written at once (order kept) and fsynced by the next `commitState()` (`commit.ts`), one fsync for
   * every line appended since the last: for the audit chain, where a lost line is a lost fact but a
   * blocking fsync per record would cap the agent's mutation rate. `false` (default): never fsynced.
   */
  fsync?: boolean | 'group';
  /** Rotate when the current file passes this many bytes (`file.1`, `file.2`, ...); 0 = never. */
  maxBytes?: number;
  /** Rotated files kept beside the current one. */
  keepFiles?: number;
}

export interface JsonlReadResult<T> {
  records: T[];
  /** Lines that were not valid JSON (e.g. a line torn by a crash mid-write). Reported, never fatal. */
  skipped: Array<{ line: number; reason: string }>;
}

/**
 * Append-only JSON Lines file. Each record is written with a single `write` of one complete line, so
 * a crash can only tear the last line, which the reader skips and reports.
 */
export class JsonlLog<T = unknown> implements Committable {
  private fd: number | null = null;
  private size = 0;
  private readonly fsync: boolean | 'group';
  private readonly maxBytes: number;
  private readonly keepFiles: number;
  /** Appends made / appends known fsynced, for `'group'` logs. */
  private appended = 0;
  private synced = 0;
  private syncing: Promise<void> | null = null;

  constructor(readonly file: string, options: JsonlLogOptions = {}) {
    this.fsync = options.fsync ?? false;
    this.maxBytes = options.maxBytes ?? 0;
    this.keepFiles = options.keepFiles ?? 3;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (this.fsync === 'group') registerDurable(this);
  }

  get pending(): boolean {
    return this.synced < this.appended;
  }

  /** Resolves once every line appended before the call is fsynced (one fsync covers them all). */
  async commit(): Promise<void> {
    const target = this.appended;
    while (this.synced < target) {
      this.syncing ??= this.syncOnce().finally(() => {
        this.syncing = null;
      });
      await this.syncing;
    }
  }

  private async syncOnce(): Promise<void> {
    const upTo = this.appended;
    const fd = this.fd;
    // No open descriptor: a rotation or close already fsynced everything appended so far.
    if (fd !== null) {
      await new Promise<void>((resolve, reject) =>
        fs.fdatasync(fd, (err) => {
          // Closed meanwhile (rotation, close): closing fsynced every line appended so far, ours included.
          if (err && this.fd === fd) reject(err);
          else resolve();
        }),
      );
    }
    this.synced = Math.max(this.synced, upTo);
  }

  private open(): number {
    if (this.fd === null) {
      this.fd = fs.openSync(this.file, 'a', 0o600);
      this.size = fs.fstatSync(this.fd).size;
      // A previous crash may have left a torn line without its newline; start on a fresh line so
      // the next record stays readable.
      if (this.size > 0 && !endsWithNewline(this.file, this.size)) {
        this.size += fs.writeSync(this.fd, '\n');
      }
    }
    return this.fd;
  }

  append(record: T): void {
    this.appendLines(JSON.stringify(record) + '\n');
  }

  /** Appends several records with one write (used by batched telemetry history). */
  appendMany(records: readonly T[]): void {
    if (records.length === 0) return;
    this.appendLines(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  }

  /** Appends lines already serialised as JSON (one record each, no newlines) with one write. */
  appendSerialised(lines: readonly string[]): void {
    if (lines.length === 0) return;
    this.appendLines(lines.join('\n') + '\n');
  }

  private appendLines(text: string): void {
    const fd = this.open();
    this.size += fs.writeSync(fd, text);
    this.appended++;
    if (this.fsync === true) {
      fs.fsyncSync(fd);
      this.synced = this.appended;
    }
    if (this.maxBytes > 0 && this.size >= this.maxBytes) this.rotate();
  }

  private rotate(): void {
    this.closeFile();
    for (let i = this.keepFiles; i >= 1; i--) {
      const from = i === 1 ? this.file : `${this.file}.${i - 1}`;
      const to = `${this.file}.${i}`;
      if (fs.existsSync(from)) fs.renameSync(from, to);
    }
    const overflow = `${this.file}.${this.keepFiles + 1}`;
    if (fs.existsSync(overflow)) fs.rmSync(overflow);
  }

  /** Reads the current file (not rotated ones). */
  read(): JsonlReadResult<T> {
    return readJsonl<T>(this.file);
  }

  /** Rotated files oldest first, then the current one. */
  files(): string[] {
    const out: string[] = [];
    for (let i = this.keepFiles; i >= 1; i--) {
      const f = `${this.file}.${i}`;
      if (fs.existsSync(f)) out.push(f);
    }
    if (fs.existsSync(this.file)) out.push(this.file);
    return out;
  }

  /** Closes the file (it reopens on the next append); what was appended is fsynced first if asked for. */
  private closeFile(): void {
    if (this.fd !== null) {
      // Everything appended so far reaches the disk before the descriptor goes; a group fsync still
      // under way on it may then fail, which it takes as done (see `syncOnce`).
      if (this.fsync === 'group' && this.pending) fs.fdatasyncSync(this.fd);
      this.synced = this.appended;
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }

  close(): void {
    this.closeFile();
    unregisterDurable(this);
  }
}

function endsWithNewline(file: string, size: number): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1);
    fs.readSync(fd, buf, 0, 1, size - 1);
    return buf[0] === 0x0a;
  } finally {
    fs.closeSync(fd);
  }
}

export function readJsonl<T>(file: string): JsonlReadResult<T> {
  const result: JsonlReadResult<T> = { records: [], skipped: [] };
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return result;
    throw err;
  }
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      result.records.push(JSON.parse(line) as T);
    } catch (err) {
      result.skipped.push({ line: i + 1, reason: (err as Error).message });
    }
  });
  return result;
}
