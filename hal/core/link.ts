import { EventEmitter } from 'node:events';

/** Lifecycle of a connection to a device or bus. */
export type LinkState = 'idle' | 'connecting' | 'open' | 'backoff' | 'closed';

export interface LinkStats {
  state: LinkState;
  reconnects: number;
  bytes_in: number;
  bytes_out: number;
  frames_in: number;
  frames_out: number;
  /** Outbound items dropped because the send buffer was full. */
  dropped_out: number;
  /** Malformed inbound frames (bad framing, CRC, parse). Counted, never fatal. */
  malformed_in: number;
  last_error: string | null;
}

/** Events every link emits: `state` on each transition, `error` (non-fatal, already handled), plus its own data events. */
export interface LinkEvents {
  state: [LinkState, LinkState];
  error: [Error];
}

/** A typed EventEmitter: `on('state', (to, from) => …)` is checked against the event map. */
export class TypedEmitter<Events extends Record<string, unknown[]>> extends EventEmitter {
  override on<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }
  override once<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    return super.once(event, listener as (...args: unknown[]) => void);
  }
  override off<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    return super.off(event, listener as (...args: unknown[]) => void);
  }
  override emit<K extends keyof Events & string>(event: K, ...args: Events[K]): boolean {
    // An 'error' without listeners would throw in EventEmitter; a link's errors are informational.
    if (event === 'error' && this.listenerCount('error') === 0) return false;
    return super.emit(event, ...args);
  }
}

export function emptyLinkStats(): LinkStats {
  return { state: 'idle', reconnects: 0, bytes_in: 0, bytes_out: 0, frames_in: 0, frames_out: 0, dropped_out: 0, malformed_in: 0, last_error: null };
}

/**
 * Resolves when a link reaches `open`; rejects with `onClosed()` if it closes first, or with
 * `onTimeout()` after `timeoutMs`. Shared by every link's `waitOpen`.
 */
export function waitForOpen(
  link: TypedEmitter<{ state: [LinkState, LinkState] }>,
  current: LinkState,
  timeoutMs: number | undefined,
  onClosed: () => Error,
  onTimeout: () => Error,
): Promise<void> {
  if (current === 'open') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | null = null;
    const onState = (to: LinkState): void => {
      if (to === 'open') finish();
      else if (to === 'closed') finish(onClosed());
    };
    const finish = (err?: Error): void => {
      link.off('state', onState);
      if (timer) clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    link.on('state', onState);
    if (timeoutMs !== undefined) timer = setTimeout(() => finish(onTimeout()), timeoutMs);
  });
}
