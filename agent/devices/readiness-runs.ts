import path from 'node:path';
import { JsonStore } from '../state/json-store.js';
import type { ReadinessImpact } from './device-pool.js';

export const READINESS_RUN_FILE = 'control-center-readiness-run.json';

/** One `POST /v1/readiness/run` as it was answered. */
export interface ReadinessRun {
  ran_at: string;
  ran_at_ms: number;
  /** Who asked (key id, or `anonymous`: the route is a read). */
  requested_by: string;
  result: ReadinessImpact;
}

interface ReadinessRunDocument {
  version: 1;
  last: ReadinessRun | null;
  /** Runs since the file was created, so a panel can tell a fresh answer from a repeated one. */
  run_count: number;
}

function revive(raw: unknown): ReadinessRunDocument {
  if (!raw || typeof raw !== 'object') throw new Error('expected an object');
  const doc = raw as Partial<ReadinessRunDocument>;
  const last = doc.last ?? null;
  if (last !== null && (typeof last !== 'object' || typeof last.ran_at_ms !== 'number' || !last.result || typeof last.result !== 'object')) {
    throw new Error('last run is malformed');
  }
  return { version: 1, last, run_count: typeof doc.run_count === 'number' ? doc.run_count : last ? 1 : 0 };
}

/**
 * The last device-pool readiness run (docs/devices.md § Readiness impact), kept in
 * `<state dir>/control-center-readiness-run.json` so `GET /v1/readiness/impact` answers the same after
 * a restart. The file is opened on first use: an agent nobody asks about readiness never reads it.
 */
export class ReadinessRuns {
  private store: Promise<JsonStore<ReadinessRunDocument>> | null = null;

  constructor(
    private readonly stateDir: string,
    private readonly onWarning?: (message: string) => void,
  ) {}

  private open(): Promise<JsonStore<ReadinessRunDocument>> {
    this.store ??= JsonStore.open<ReadinessRunDocument>(path.join(this.stateDir, READINESS_RUN_FILE), {
      defaults: () => ({ version: 1, last: null, run_count: 0 }),
      revive,
      ...(this.onWarning ? { onWarning: this.onWarning } : {}),
    }).catch((err: unknown) => {
      this.store = null;
      throw err;
    });
    return this.store;
  }

  /**
   * Records a run and waits until it is on disk. The route is a read (anyone may run it), so this is
   * not audited: it keeps the answer, like a cache that survives a restart, and changes no decision.
   */
  async record(result: ReadinessImpact, requestedBy: string, nowMs = Date.now()): Promise<ReadinessRun> {
    const store = await this.open();
    const run: ReadinessRun = { ran_at: new Date(nowMs).toISOString(), ran_at_ms: nowMs, requested_by: requestedBy, result };
    store.change((d) => {
      d.last = run;
      d.run_count += 1;
    });
    await store.commit();
    return run;
  }

  async last(): Promise<{ run: ReadinessRun | null; run_count: number }> {
    const store = await this.open();
    return { run: store.data.last, run_count: store.data.run_count };
  }

  async close(): Promise<void> {
    if (this.store) await (await this.store.catch(() => null))?.close();
  }
}
