import type { PlatformEvent, PlatformEventName } from './platform-events.js';

export type EventListener = (event: PlatformEvent) => void;

/**
 * The in-process spine (docs/architecture.md, rule 4): domains publish, sinks (telemetry store, audit, stream, alerts)
 * subscribe. A failing listener is reported and isolated; it never stops delivery to the others nor
 * fails the publisher.
 */
export class EventBus {
  private readonly listeners = new Set<EventListener>();
  private readonly counts = new Map<PlatformEventName, number>();

  constructor(private readonly onListenerError: (err: unknown) => void = (err) => {
    process.stderr.write(`event listener failed: ${(err as Error)?.stack ?? String(err)}\n`);
  }) {}

  publish(event: PlatformEvent): void {
    this.counts.set(event.type, (this.counts.get(event.type) ?? 0) + 1);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events published per name since start. */
  publishedCounts(): Record<string, number> {
    return Object.fromEntries([...this.counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
}
