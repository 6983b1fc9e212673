/**
 * A bounded backlog with absolute offsets: the n-th item ever appended has offset n, whether or not
 * it is still held. Stream clients resume by offset and can tell from `oldestOffset` what they missed.
 */
export class Ring<T> {
  private items: T[] = [];
  private base = 0; // offset of items[0]
  private readonly listeners = new Set<(item: T, offset: number) => void>();
  private readonly jsonCache: WeakMap<object, string> | null;

  /**
   * `immutableItems`: appended items are never changed afterwards, so `json(item)` may serialise each
   * one once and hand the same text to every reader (history writer, every stream client).
   */
  constructor(
    readonly capacity: number,
    options: { immutableItems?: boolean } = {},
  ) {
    this.jsonCache = options.immutableItems ? new WeakMap() : null;
  }

  /** `JSON.stringify(item)`, computed once per item when the ring holds immutable items. */
  json(item: T): string {
    const cache = this.jsonCache;
    if (cache === null || item === null || typeof item !== 'object') return JSON.stringify(item);
    let text = cache.get(item);
    if (text === undefined) {
      text = JSON.stringify(item);
      cache.set(item, text);
    }
    return text;
  }

  /** Restores persisted content: `firstOffset` is the offset of `items[0]`. */
  restore(items: T[], firstOffset: number): void {
    const keep = items.slice(Math.max(0, items.length - this.capacity));
    this.base = firstOffset + (items.length - keep.length);
    this.items = keep;
  }

  append(item: T): number {
    const offset = this.base + this.items.length;
    this.items.push(item);
    if (this.items.length > this.capacity) {
      // Trim in chunks so a full ring does not pay an O(n) shift on every append.
      const excess = this.items.length - this.capacity;
      const trim = Math.max(excess, Math.floor(this.capacity / 8));
      if (this.items.length - trim >= 1 && excess > 0) {
        const cut = Math.min(trim, this.items.length - 1);
        this.items.splice(0, cut);
        this.base += cut;
      }
    }
    for (const l of this.listeners) l(item, offset);
    return offset;
  }

  /** Offset the next appended item will get. */
  get headOffset(): number {
    return this.base + this.items.length;
  }

  get oldestOffset(): number {
    return this.base;
  }

  get size(): number {
    return this.items.length;
  }

  at(offset: number): T | undefined {
    return offset >= this.base ? this.items[offset - this.base] : undefined;
  }

  /** Items from `offset` (inclusive) to the head, oldest first. */
  since(offset: number): Array<{ offset: number; item: T }> {
    const start = Math.max(offset, this.base) - this.base;
    return this.items.slice(start).map((item, i) => ({ offset: this.base + start + i, item }));
  }

  /** The newest `n` items, newest last. */
  latest(n = this.items.length): T[] {
    return this.items.slice(Math.max(0, this.items.length - n));
  }

  all(): T[] {
    return this.items.slice();
  }

  onAppend(listener: (item: T, offset: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
