import fs from 'node:fs';
import path from 'node:path';
import { GroupCommit, registerDurable, unregisterDurable, type Committable } from './commit.js';
import { fsyncDir, writeNewFileSync } from './durable-file.js';

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
  /** Appends not yet known fsynced, for `'group'` logs. */
  private readonly group = new GroupCommit(() => this.syncOnce());
  private syncScheduled = false;

  constructor(readonly file: string, options: JsonlLogOptions = {}) {
    this.fsync = options.fsync ?? false;
    this.maxBytes = options.maxBytes ?? 0;
    this.keepFiles = options.keepFiles ?? 3;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (this.fsync === 'group') registerDurable(this);
  }

  get pending(): boolean {
    return this.group.pending;
  }

  /** Resolves once every line appended before the call is fsynced (one fsync covers them all). */
  commit(): Promise<void> {
    return this.group.commit();
  }

  private async syncOnce(): Promise<void> {
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
    if (this.fsync !== false) this.group.touch();
    if (this.fsync === true) {
      fs.fsyncSync(fd);
      this.group.settled();
    } else if (this.fsync === 'group' && !this.syncScheduled) {
      // Lines nobody commits (events recorded outside a request) still reach the disk promptly:
      // one background fsync after this turn, shared with every append made in it.
      this.syncScheduled = true;
      setImmediate(() => {
        this.syncScheduled = false;
        this.commit().catch(() => undefined);
      }).unref();
    }
    if (this.maxBytes > 0 && this.size >= this.maxBytes) this.rotate();
  }

  private rotate(): void {
    this.release();
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
  release(): void {
    if (this.fd !== null) {
      // Everything appended so far reaches the disk before the descriptor goes; a group fsync still
      // under way on it may then fail, which it takes as done (see `syncOnce`).
      if (this.fsync === 'group' && this.pending) fs.fdatasyncSync(this.fd);
      this.group.settled();
      fs.closeSync(this.fd);
      this.fd = null;
    }
  }

  close(): void {
    this.release();
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

/** Byte offset just past the last newline of an open file (0 when it holds none). */
function endOfLastLine(fd: number, size: number): number {
  const buf = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - buf.length);
    const n = fs.readSync(fd, buf, 0, end - start, start);
    for (let i = n - 1; i >= 0; i--) if (buf[i] === 0x0a) return start + i + 1;
    end = start;
  }
  return 0;
}

/**
 * Moves an unterminated last line out of `file`: its bytes go to `<file>.torn-<ms>` (kept for
 * forensics), the file is truncated to its last complete line, and both are fsynced. Returns the
 * side file, or null when the file ends with a newline (or does not exist).
 *
 * Why: an append that a crash cut short was never acknowledged, so it never happened. Keeping it in
 * place and appending after it (what `JsonlLog.open` does for plain logs) would leave it in the
 * middle of the file once more records follow, where the audit chain can only call it a break
 * (docs/security.md §10, "Verification at start").
 */
export function setAsideTornTail(file: string, now = Date.now()): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return null;
    const cut = endOfLastLine(fd, size);
    if (cut === size) return null;
    const torn = Buffer.alloc(size - cut);
    fs.readSync(fd, torn, 0, torn.length, cut);
    let aside = `${file}.torn-${now}`;
    for (let n = 1; fs.existsSync(aside); n++) aside = `${file}.torn-${now}-${n}`;
    writeNewFileSync(aside, torn);
    fs.ftruncateSync(fd, cut);
    fs.fsyncSync(fd);
    fsyncDir(path.dirname(file));
    return aside;
  } finally {
    fs.closeSync(fd);
  }
}

export interface FileLine {
  text: string;
  /** 1-based line number. */
  number: number;
  /** Whether a newline ended the line (false only for an unterminated last line). */
  terminated: boolean;
}

/**
 * Reads a file line by line with a fixed-size buffer: memory holds one chunk and the current line,
 * whatever the size of the file. A missing file yields nothing.
 */
export function* readLines(file: string, chunkBytes = 64 * 1024): Generator<FileLine> {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const buf = Buffer.alloc(chunkBytes);
    let pending: Buffer[] = [];
    let number = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      let start = 0;
      for (let i = buf.indexOf(0x0a, 0); i !== -1 && i < n; i = buf.indexOf(0x0a, start)) {
        pending.push(buf.subarray(start, i));
        number++;
        yield { text: Buffer.concat(pending).toString('utf8'), number, terminated: true };
        pending = [];
        start = i + 1;
      }
      // Copy: `buf` is reused by the next read.
      if (start < n) pending.push(Buffer.from(buf.subarray(start, n)));
    }
    if (pending.length > 0) yield { text: Buffer.concat(pending).toString('utf8'), number: number + 1, terminated: false };
  } finally {
    fs.closeSync(fd);
  }
}
