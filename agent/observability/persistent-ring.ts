import { JsonStore } from '../state/json-store.js';
import { Ring } from './ring.js';

interface RingFile<T> {
  first_offset: number;
  items: T[];
}

/** A ring whose content lives in one state file, rewritten (atomically) only after it changed. */
export class PersistentRing<T> extends Ring<T> {
  private constructor(capacity: number, private readonly store: JsonStore<RingFile<T>>) {
    super(capacity);
  }

  /** `coalesceMs` and `durable` as for `JsonStore` (a ring of acknowledged facts, such as alerts, is durable). */
  static async open<T>(file: string, capacity: number, options: { coalesceMs?: number; durable?: boolean } = {}): Promise<PersistentRing<T>> {
    const store = await JsonStore.open<RingFile<T>>(file, {
      defaults: () => ({ first_offset: 0, items: [] }),
      coalesceMs: options.coalesceMs ?? 0,
      durable: options.durable ?? true,
      revive: (raw) => {
        // Older files (and the reference) hold a bare array.
        if (Array.isArray(raw)) return { first_offset: 0, items: raw as T[] };
        const r = raw as Partial<RingFile<T>>;
        if (!r || !Array.isArray(r.items)) throw new Error('expected {first_offset, items[]}');
        return { first_offset: Number(r.first_offset) || 0, items: r.items };
      },
    });
    const ring = new PersistentRing<T>(capacity, store);
    ring.restore(store.data.items, store.data.first_offset);
    store.beforeWrite = () => ring.sync();
    ring.onAppend(() => store.markDirty());
    return ring;
  }

  /** An item already in the ring was changed in place: schedule a write of the new content. */
  touched(): void {
    this.store.markDirty();
  }

  async flush(): Promise<void> {
    await this.store.flush();
  }

  /** Copies the live ring into the document; runs at write time, so a coalesced write holds the newest content. */
  private sync(): void {
    this.store.data.first_offset = this.oldestOffset;
    this.store.data.items = this.all();
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}
