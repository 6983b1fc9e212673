import fs from 'node:fs';
import path from 'node:path';
import { Low } from 'lowdb';
import { GroupCommit, registerDurable, unregisterDurable, type Committable } from './commit.js';
import { DurableJsonFile } from './durable-file.js';

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
   * Minimum spacing between two background writes. 0 writes once per event-loop turn (changes made by
   * one request land in one write); high-churn stores such as the trace ring use ~1000 ms
   * (docs/api.md, request traces). A commit (`commitState()`) does not wait for this spacing.
   */
  coalesceMs?: number;
  /**
   * Whether the store holds acknowledged state, which a mutation's 2xx promises is on disk
   * (`agent/state/commit.ts`). Default true; observability rings that may lose their last second on
   * a crash (the trace ring) say false.
   */
  durable?: boolean;
  onWarning?: (message: string) => void;
  /** Called just before each write: lets a store whose live form is not its document (a ring) fill it in. */
  beforeWrite?: () => void;
}

/**
 * One JSON document persisted in the state directory. Reads are from memory; `change()` mutates and
 * schedules a write. Every write replaces the file atomically and fsyncs it (`durable-file.ts`), so a
 * crash at any moment leaves either the previous or the new complete file, never a torn one. Only
 * changed stores are written, and at most one write per store is under way: changes made during a
 * write are collected into the next one (group commit, `commit.ts`).
 */
export class JsonStore<T> implements Committable {
  private readonly group = new GroupCommit(() => this.writeOnce());
  private timer: NodeJS.Timeout | null = null;
  private lastWriteAt = 0;
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
    const db = new Low<T>(new DurableJsonFile<T>(file), options.defaults());
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
    if (options.durable ?? true) registerDurable(store);
    return store;
  }

  get data(): T {
    return this.db.data;
  }

  /** Whether changes are waiting to be written. */
  get pending(): boolean {
    return this.group.pending;
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
    this.group.touch();
    if (this.timer) return;
    const wait = Math.max(0, this.lastWriteAt + this.coalesceMs - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      // A background write has no caller to tell: a failure is a warning and the next write retries.
      this.group.commit().catch(() => undefined);
    }, wait);
    // A pending write must not keep a finished CLI command alive; close() flushes explicitly.
    this.timer.unref();
  }

  /** Resolves once every change made before the call is on disk; rejects when the write failed. */
  commit(): Promise<void> {
    return this.group.commit();
  }

  private async writeOnce(): Promise<void> {
    this.lastWriteAt = Date.now();
    this.beforeWrite?.();
    try {
      // The adapter serialises synchronously, so the bytes hold every change made before this call.
      await this.db.write();
    } catch (err) {
      this.onWarning(`could not write ${this.file}: ${(err as Error).message}`);
      throw err;
    }
  }

  /** Writes pending changes now and waits for them to reach the file. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    await this.group.commit().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    unregisterDurable(this);
  }
}
