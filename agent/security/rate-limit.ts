/**
 * Token bucket per caller (docs/security.md §8): capacity = limit, refill = limit/60 per second, one
 * token a request. Shared by every transport so a caller cannot double its budget by switching.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly refillPerMs: number;

  constructor(readonly perMinute: number) {
    this.refillPerMs = perMinute / 60_000;
  }

  get enabled(): boolean {
    return this.perMinute > 0;
  }

  /** Takes one token; returns null when allowed, else the seconds to wait. */
  take(key: string, now = Date.now()): number | null {
    if (!this.enabled) return null;
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.perMinute, at: now };
      this.buckets.set(key, b);
      if (this.buckets.size > 10_000) this.evictFull(now);
    }
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * this.refillPerMs);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return null;
    }
    const deficit = 1 - b.tokens;
    return Math.max(1, Math.ceil(deficit / (this.refillPerMs * 1000)));
  }

  /** Forgets buckets that have refilled completely; they behave exactly like new ones. */
  private evictFull(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.tokens + (now - b.at) * this.refillPerMs >= this.perMinute) this.buckets.delete(key);
    }
  }
}
