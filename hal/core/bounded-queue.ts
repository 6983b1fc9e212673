/**
 * A FIFO with a hard capacity. When full, `push` drops the oldest item and counts it: a link that
 * cannot keep up loses old data visibly instead of growing without bound.
 */
export class BoundedQueue<T> {
  private items: T[] = [];
  private head = 0;
  dropped = 0;

  constructor(readonly capacity: number) {
    if (capacity < 1) throw new RangeError('capacity must be at least 1');
  }

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    if (this.length >= this.capacity) {
      this.head++;
      this.dropped++;
    }
    this.items.push(item);
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head++] = undefined as unknown as T;
    return item;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
