/**
 * Exponential backoff with full jitter for reconnect loops: attempt n waits a random time in
 * [0, min(maxMs, baseMs * 2^n)], so many devices that lost the same bus do not retry in lockstep.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly baseMs = 200,
    private readonly maxMs = 10_000,
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const ceiling = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.max(this.baseMs / 4, Math.round(this.random() * ceiling));
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
