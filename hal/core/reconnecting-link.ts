import { Backoff } from './backoff.js';
import { TypedEmitter, emptyLinkStats, type LinkEvents, type LinkState, type LinkStats } from './link.js';

/**
 * The lifecycle every HAL link shares (hal/README.md, "Links"). Two layers:
 *
 * - `StatefulLink`: the state machine and its events. `setState` emits `state(to, from)` only on a
 *   real transition and mirrors the state into the stats; `noteError` records `last_error` and emits
 *   a non-fatal `error`. Drain waiters are released in one place. Used directly by links that ride on
 *   another link (SLCAN on a serial link) and so reconnect through it.
 * - `ReconnectingLink`: a link that owns its medium and heals it, in the manner of the mqtt.js and
 *   nats.js clients' explicit reconnect loops:
 *   - every connection attempt gets a new generation number; callbacks of an older attempt check
 *     `isCurrent(gen)` and do nothing, so a late event of a dead port or socket cannot disturb the new one;
 *   - `idle → connecting → open`; on a loss `→ backoff`, then a new attempt after a jittered
 *     exponential delay (`Backoff`, full jitter: a fleet that lost the same bus does not retry in
 *     lockstep), reset on every successful open;
 *   - `reconnect: false` gives up instead: the link goes to `closed` and discards what it queued;
 *   - `close()` cancels the pending reconnect, discards queued output, releases `drain()` waiters,
 *     closes the medium and ends in `closed`. `startLink()` may start a closed link again (serial and
 *     SocketCAN `open()` do; `MqttLink.start()` starts only an idle link).
 *
 * A transport supplies only its medium: `connect(gen)` (open it; call `markOpen()` when it is up, or
 * `scheduleReconnect(gen)` after a failure), `closeMedium()` and `discardQueued()`; writing stays with
 * the transport because each one paces it differently (serial batches, SocketCAN bursts, MQTT
 * back-pressure on the socket).
 */

/** Every link's event map: its own events plus `state` and `error` (core/link.ts). */
type BaseEvents = Record<string, unknown[]> & { [K in keyof LinkEvents]: LinkEvents[K] };
type CoreEmitter = TypedEmitter<{ [K in keyof LinkEvents]: LinkEvents[K] }>;

export class StatefulLink<Events extends BaseEvents> extends TypedEmitter<Events> {
  /** Counters shared by every link; transports add their own next to them. */
  protected readonly counters: LinkStats = emptyLinkStats();
  private drainWaiters: Array<() => void> = [];

  get state(): LinkState {
    return this.counters.state;
  }

  get isOpen(): boolean {
    return this.counters.state === 'open';
  }

  protected setState(to: LinkState): void {
    const from = this.counters.state;
    if (from === to) return;
    this.counters.state = to;
    (this as unknown as CoreEmitter).emit('state', to, from);
  }

  protected noteError(err: Error): void {
    this.counters.last_error = err.message;
    (this as unknown as CoreEmitter).emit('error', err);
  }

  /** A promise that resolves on the next `releaseDrainWaiters()` (queue empty, or the link closed). */
  protected waitDrained(): Promise<void> {
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  protected releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}

export interface ReconnectPolicy {
  backoff: Backoff;
  /** Reconnect after a loss (default true); false: go to `closed` instead. */
  reconnect?: boolean;
  /**
   * What `stats().reconnects` counts: `reopens` (default) each open after the first; `attempts` each
   * connection attempt after the first, successful or not (the MQTT link's meaning).
   */
  countReconnects?: 'reopens' | 'attempts';
}

/** `backoff` option of the links: a ready `Backoff`, or its bounds (defaults base 200 ms, max 5 s). */
export function backoffFrom(option: Backoff | { baseMs?: number; maxMs?: number } | undefined, defaultMaxMs = 5000): Backoff {
  return option instanceof Backoff ? option : new Backoff(option?.baseMs ?? 200, option?.maxMs ?? defaultMaxMs);
}

export abstract class ReconnectingLink<Events extends BaseEvents> extends StatefulLink<Events> {
  protected readonly backoff: Backoff;
  /** Started and not closed: losses are healed. */
  protected running = false;
  private generation = 0;
  private attempts = 0;
  private everOpened = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private readonly policy: ReconnectPolicy;

  constructor(policy: ReconnectPolicy) {
    super();
    this.policy = policy;
    this.backoff = policy.backoff;
  }

  /** Open the medium for attempt `gen`. Report the outcome with `markOpen()` or `scheduleReconnect(gen)`. */
  protected abstract connect(gen: number): void;
  /** Release the medium (close()). Queued output is already discarded when this runs. */
  protected abstract closeMedium(): Promise<void> | void;
  /** Drop queued output (close(), or giving up with `reconnect: false`). */
  protected abstract discardQueued(): void;

  /** Start connecting unless already running; true when this call started it. */
  protected startLink(): boolean {
    if (this.running) return false;
    this.running = true;
    this.attempt();
    return true;
  }

  /** Whether `gen` is still the live attempt of a running link. */
  protected isCurrent(gen: number): boolean {
    return this.running && gen === this.generation;
  }

  /** The live attempt's number (for links that tell attempts apart by their client object). */
  protected get currentGeneration(): number {
    return this.generation;
  }

  /** Invalidate the current attempt (its late callbacks become no-ops) and return the new number. */
  protected bumpGeneration(): number {
    return ++this.generation;
  }

  /** The medium is up: count a reconnect, reset the backoff, go `open`. */
  protected markOpen(): void {
    if (this.everOpened && (this.policy.countReconnects ?? 'reopens') === 'reopens') this.counters.reconnects++;
    this.everOpened = true;
    this.backoff.reset();
    this.setState('open');
  }

  /** After a failed attempt or a loss of attempt `gen`: wait a jittered delay and try again, or give up. */
  protected scheduleReconnect(gen: number): void {
    if (!this.isCurrent(gen)) return;
    if (this.policy.reconnect === false) {
      this.giveUp();
      return;
    }
    this.setState('backoff');
    this.cancelReconnect();
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (gen === this.generation) this.attempt();
    }, this.backoff.next());
  }

  /** Stop for good without a `close()` call (no retry policy, or nothing that could ever succeed). */
  protected giveUp(): void {
    this.running = false;
    this.cancelReconnect();
    this.discardQueued();
    this.releaseDrainWaiters();
    this.setState('closed');
  }

  protected cancelReconnect(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
  }

  /** Stop reconnecting and invalidate the live attempt; the transport then tears its medium down. */
  protected stopLink(): void {
    this.running = false;
    this.generation++;
    this.cancelReconnect();
  }

  /** Stop the link: cancel reconnects, discard queued output, release drain waiters, close the medium. */
  async close(): Promise<void> {
    this.stopLink();
    this.discardQueued();
    this.releaseDrainWaiters();
    await this.closeMedium();
    this.setState('closed');
  }

  private attempt(): void {
    if (!this.running) return;
    if (this.attempts++ > 0 && this.policy.countReconnects === 'attempts') this.counters.reconnects++;
    const gen = ++this.generation;
    this.setState('connecting');
    this.connect(gen);
  }
}
