/**
 * The link lifecycle shared by every HAL link (hal/README.md "Links", hal/core/reconnecting-link.ts),
 * driven through a minimal in-memory medium: the serial, SocketCAN and MQTT tests cover the same rules
 * over real ptys, a fake addon and a real broker; this one pins the rules themselves.
 */
import { describe, expect, it } from 'vitest';
import { Backoff, ReconnectingLink, type LinkState, type ReconnectPolicy } from '../../hal/index.js';

type Events = { state: [LinkState, LinkState]; error: [Error] };

/** A medium whose attempts succeed or fail as the test scripts them, asynchronously like a port open. */
class ScriptedLink extends ReconnectingLink<Events> {
  readonly states: string[] = [];
  tries: number[] = [];
  queued = 0;
  closedMedium = 0;
  outcomes: Array<'ok' | 'fail'>;

  constructor(outcomes: Array<'ok' | 'fail'>, policy: Partial<ReconnectPolicy> = {}) {
    // random() = 1: delays are exactly baseMs * 2^n, so the test can wait for them.
    super({ backoff: new Backoff(4, 64, () => 1), ...policy });
    this.outcomes = outcomes;
    this.on('state', (to) => this.states.push(to));
  }

  start(): void {
    this.startLink();
  }

  /** The medium went away (a read failed, the socket closed). */
  lose(): void {
    const gen = this.bumpGeneration();
    this.noteError(new Error('medium lost'));
    this.scheduleReconnect(gen);
  }

  get backoffAttempts(): number {
    return this.backoff.attempts;
  }

  get reconnects(): number {
    return this.counters.reconnects;
  }

  get lastError(): string | null {
    return this.counters.last_error;
  }

  drain(): Promise<void> {
    return this.queued === 0 ? Promise.resolve() : this.waitDrained();
  }

  /** A late callback of attempt `gen`: does it still count? */
  current(gen: number): boolean {
    return this.isCurrent(gen);
  }

  protected connect(gen: number): void {
    this.tries.push(gen);
    const outcome = this.outcomes.shift() ?? 'fail';
    setImmediate(() => {
      if (!this.isCurrent(gen)) return;
      if (outcome === 'ok') this.markOpen();
      else {
        this.noteError(new Error(`attempt ${gen} failed`));
        this.scheduleReconnect(gen);
      }
    });
  }

  protected closeMedium(): void {
    this.closedMedium++;
  }

  protected discardQueued(): void {
    this.queued = 0;
  }
}

const until = async (cond: () => boolean, ms = 2000): Promise<void> => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
};

describe('ReconnectingLink', () => {
  it('retries failed attempts with backoff, opens, and resets the backoff on open', async () => {
    const link = new ScriptedLink(['fail', 'fail', 'ok']);
    link.start();
    await until(() => link.state === 'open');
    expect(link.states).toEqual(['connecting', 'backoff', 'connecting', 'backoff', 'connecting', 'open']);
    expect(link.tries).toHaveLength(3);
    expect(link.backoffAttempts).toBe(0);
    expect(link.reconnects).toBe(0); // a first open is not a reconnect
    expect(link.lastError).toBe(`attempt ${link.tries[1]} failed`);
  });

  it('heals a loss and counts the reopen; with countReconnects: attempts it counts every retry', async () => {
    const link = new ScriptedLink(['ok', 'fail', 'ok']);
    link.start();
    await until(() => link.state === 'open');
    link.lose();
    expect(link.state).toBe('backoff');
    await until(() => link.state === 'open');
    expect(link.reconnects).toBe(1);

    const counting = new ScriptedLink(['ok', 'fail', 'ok'], { countReconnects: 'attempts' });
    counting.start();
    await until(() => counting.state === 'open');
    counting.lose();
    await until(() => counting.state === 'open');
    expect(counting.reconnects).toBe(2);
  });

  it('reconnect: false closes on the first loss, discards queued output and releases drain waiters', async () => {
    const link = new ScriptedLink(['ok'], { reconnect: false });
    link.start();
    await until(() => link.state === 'open');
    link.queued = 3;
    const drained = link.drain();
    link.lose();
    await drained;
    expect(link.state).toBe('closed');
    expect(link.queued).toBe(0);
    expect(link.tries).toHaveLength(1);
  });

  it('close() cancels a pending reconnect, ignores late callbacks and can be started again', async () => {
    // A 30 ms delay: long enough to see `backoff` before the next attempt would start.
    const link = new ScriptedLink(['fail', 'ok', 'ok'], { backoff: new Backoff(30, 60, () => 1) });
    link.start();
    await until(() => link.state === 'backoff');
    const stale = link.tries[0]!;
    link.queued = 2;
    const drained = link.drain();
    await link.close();
    await drained;
    expect(link.state).toBe('closed');
    expect(link.closedMedium).toBe(1);
    expect(link.current(stale)).toBe(false);
    await new Promise((r) => setTimeout(r, 80)); // longer than the cancelled delay
    expect(link.tries).toHaveLength(1);

    link.start();
    await until(() => link.state === 'open');
    expect(link.tries).toHaveLength(2);
  });

  it('reports errors without requiring an error listener', () => {
    const link = new ScriptedLink([]);
    expect(() => link.lose()).not.toThrow(); // not running: recorded, nothing scheduled
    expect(link.lastError).toBe('medium lost');
    expect(link.state).toBe('idle');
  });
});
