import fs from 'node:fs';
import path from 'node:path';
import { Low } from 'lowdb';
import { DataFile } from 'lowdb/node';

export interface JsonStoreOptions<T> {
  /** Fresh content when the file does not exist (or could not be read). */
  defaults: () => T;
  /**
   * Checks and normalises what was read from disk. Throwing marks the file as unreadable: it is kept
   * aside as `<file>.corrupt-<ms>` and the store starts from defaults, so a damaged file never stops
   * the agent and is never silently overwritten.
   */
  revive?: (raw: unknown) => T;
  /**
   * Minimum spacing between two writes. 0 writes once per event-loop turn (changes made by one request
   * land in one write); high-churn stores such as the trace ring use ~1000 ms (D10).
   */
  coalesceMs?: number;
  onWarning?: (message: string) => void;
  /** Called just before each write: lets a store whose live form is not its document (a ring) fill it in. */
  beforeWrite?: () => void;
}

/**
 * One JSON document persisted in the state directory. Reads are from memory; `change()` mutates and
 * schedules a write. Writes go through lowdb (temp file + rename), so a crash at any moment leaves
 * either the previous or the new complete file, never a torn one. Only changed stores are written.
 */
export class JsonStore<T> {
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private lastWriteAt = 0;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  beforeWrite: (() => void) | null = null;

  private constructor(
    readonly file: string,
    private readonly db: Low<T>,
    private readonly coalesceMs: number,
    private readonly onWarning: (message: string) => void,
  ) {}

  static async open<T>(file: string, options: JsonStoreOptions<T>): Promise<JsonStore<T>> {
    const warn = options.onWarning ?? ((m: string) => process.stderr.write(`warning: ${m}\n`));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const adapter = new DataFile<T>(file, { parse: JSON.parse, stringify: (d) => JSON.stringify(d, null, 2) + '\n' });
    const db = new Low<T>(adapter, options.defaults());
    try {
      await db.read();
      db.data = db.data === null || db.data === undefined ? options.defaults() : (options.revive ? options.revive(db.data) : db.data);
    } catch (err) {
      const aside = `${file}.corrupt-${Date.now()}`;
      try {
        fs.renameSync(file, aside);
      } catch {
        /* the file vanished meanwhile: nothing to keep aside */
      }
      warn(`state file ${file} was unreadable (${(err as Error).message}); kept as ${aside}, starting empty`);
      db.data = options.defaults();
    }
    const store = new JsonStore(file, db, options.coalesceMs ?? 0, warn);
    store.beforeWrite = options.beforeWrite ?? null;
    return store;
  }

  get data(): T {
    return this.db.data;
  }

  /** Applies a change and schedules the write. */
  change<R>(mutate: (data: T) => R): R {
    const result = mutate(this.db.data);
    this.markDirty();
    return result;
  }

  /** Replaces the whole document. */
  replace(next: T): void {
    this.db.data = next;
    this.markDirty();
  }

  markDirty(): void {
    if (this.closed) return;
    this.dirty = true;
    if (this.timer) return;
    const wait = Math.max(0, this.lastWriteAt + this.coalesceMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.writeNow();
    }, wait);
    // A pending write must not keep a finished CLI command alive; close() flushes explicitly.
    this.timer.unref();
  }

  private writeNow(): Promise<void> {
    if (!this.dirty) return this.writing;
    this.dirty = false;
    this.lastWriteAt = Date.now();
    this.beforeWrite?.();
    this.writing = this.writing
      .then(() => this.db.write())
      .catch((err: Error) => {
        this.onWarning(`could not write ${this.file}: ${err.message}`);
        this.dirty = true;
      });
    return this.writing;
  }

  /** Writes pending changes now and waits for them to reach the file. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    await this.writeNow();
    await this.writing;
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }
}
