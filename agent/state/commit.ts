/**
 * The durability barrier (docs/security.md §10, "Durability"): a mutation is answered 2xx only after
 * every state change it made has reached the disk. Stores that hold acknowledged state register here;
 * `commitState()` waits until all of them have written and fsynced what was pending at the call.
 *
 * Concurrent callers share writes (group commit): while one write of a store is under way, every
 * change made meanwhile is collected and written by the next single write, so throughput under a
 * storm of mutations is bounded by how often a file can be rewritten, not by the number of requests.
 *
 * The registry is per process: one agent process owns its state directory (one writer per file, see
 * docs/architecture.md), so "every durable store of this process" is the right unit. Several agents
 * in one process (tests) only commit each other's pending changes as well.
 */
export interface Committable {
  /** Whether there are changes not yet on disk. */
  readonly pending: boolean;
  /** Resolves once everything changed before the call is on disk; rejects if the write failed. */
  commit(): Promise<void>;
}

const durable = new Set<Committable>();

export function registerDurable(store: Committable): void {
  durable.add(store);
}

export function unregisterDurable(store: Committable): void {
  durable.delete(store);
}

/** Waits until every change made so far to acknowledged state is durable. Cheap when nothing is pending. */
export async function commitState(): Promise<void> {
  let waits: Promise<void>[] | null = null;
  for (const store of durable) {
    if (store.pending) (waits ??= []).push(store.commit());
  }
  if (waits) await Promise.all(waits);
}

/**
 * The bookkeeping of one store's group commit: changes are counted, at most one `persist()` runs at a
 * time, and a commit waits until a persist that started after its change has finished. A persist
 * covers every change counted before it started (the store snapshots or syncs everything then).
 */
export class GroupCommit {
  private changed = 0;
  private persisted = 0;
  private inflight: Promise<void> | null = null;

  constructor(private readonly persist: () => Promise<void>) {}

  /** Counts one change. */
  touch(): void {
    this.changed++;
  }

  /** Everything counted so far reached the disk by another path (a blocking fsync, a close). */
  settled(): void {
    this.persisted = this.changed;
  }

  get pending(): boolean {
    return this.persisted < this.changed;
  }

  /** Resolves once every change counted before the call is persisted; rejects if the persist failed. */
  async commit(): Promise<void> {
    const target = this.changed;
    while (this.persisted < target) {
      this.inflight ??= this.persistOnce().finally(() => {
        this.inflight = null;
      });
      await this.inflight;
    }
  }

  private async persistOnce(): Promise<void> {
    const upTo = this.changed;
    await this.persist();
    this.persisted = Math.max(this.persisted, upTo);
  }
}
