/**
 * Time for the I/O-free state machines. Production passes `systemScheduler`; tests pass a
 * `ManualScheduler` and move time explicitly, so retransmission and timeout paths are deterministic.
 */

/** Opaque timer handle. */
export type TimerHandle = object;

export interface Scheduler {
  /** Monotonic milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Real time: `performance.now()` and the global timers (unref'd so they never hold a process open). */
export const systemScheduler: Scheduler = {
  now: () => performance.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

interface ManualTimer {
  id: number;
  due: number;
  fn: () => void;
}

/**
 * A deterministic scheduler: time only moves when `advance` or `runUntilIdle` is called; timers that
 * are due at the same instant run in the order they were set.
 */
export class ManualScheduler implements Scheduler {
  private time: number;
  private nextId = 1;
  private timers: ManualTimer[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { id: this.nextId++, due: this.time + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    const i = this.timers.indexOf(handle as ManualTimer);
    if (i >= 0) this.timers.splice(i, 1);
  }

  /** Timers not yet run. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way (including ones they set). */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const next = this.earliest();
      if (!next || next.due > target) break;
      this.runTimer(next);
    }
    this.time = target;
  }

  /**
   * Runs timers in due order until none is left or the next one is more than `limitMs` after the
   * start. Returns the simulated time that elapsed.
   */
  runUntilIdle(limitMs = 3_600_000): number {
    const start = this.time;
    for (;;) {
      const next = this.earliest();
      if (!next || next.due > start + limitMs) break;
      this.runTimer(next);
    }
    return this.time - start;
  }

  private earliest(): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.timers) if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    return best;
  }

  private runTimer(timer: ManualTimer): void {
    this.timers.splice(this.timers.indexOf(timer), 1);
    this.time = Math.max(this.time, timer.due);
    timer.fn();
  }
}
