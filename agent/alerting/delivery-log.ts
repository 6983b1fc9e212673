import path from 'node:path';
import { JsonStore } from '../state/json-store.js';

/** One attempt to deliver one alert to one channel (`channel` in the redacted `delivered_via` form). */
export interface DeliveryEntry {
  alert_id: string;
  channel: string;
  attempt: number;
  at_ms: number;
  ok: boolean;
  /** HTTP status, or the SMTP server's reply. */
  status?: number | string;
  error?: string;
  /** Not sent on purpose (e-mail dry run): neither a delivery nor a failure to retry. */
  skipped?: boolean;
}

interface DeliveryFile {
  max_entries: number;
  entries: DeliveryEntry[];
}

export const DELIVERY_LOG_FILE = 'alert-deliveries.json';

/**
 * The delivery log (`<state dir>/alert-deliveries.json`): a ring of the newest attempts. It is an
 * observability record like the trace ring, written in the background (a crash may lose its last
 * fraction of a second), never holding up the request that raised the alert.
 */
export class DeliveryLog {
  private constructor(private readonly store: JsonStore<DeliveryFile>) {}

  static async open(stateDir: string, capacity: number): Promise<DeliveryLog> {
    const store = await JsonStore.open<DeliveryFile>(path.join(stateDir, DELIVERY_LOG_FILE), {
      defaults: () => ({ max_entries: capacity, entries: [] }),
      coalesceMs: 200,
      durable: false,
      revive: (raw) => {
        const r = raw as Partial<DeliveryFile>;
        if (!r || !Array.isArray(r.entries)) throw new Error('expected {max_entries, entries[]}');
        return { max_entries: capacity, entries: r.entries.slice(-capacity) };
      },
    });
    return new DeliveryLog(store);
  }

  append(entry: DeliveryEntry): void {
    this.store.change((d) => {
      d.entries.push(entry);
      if (d.entries.length > d.max_entries) d.entries.splice(0, d.entries.length - d.max_entries);
    });
  }

  forAlert(alertId: string): DeliveryEntry[] {
    return this.store.data.entries.filter((e) => e.alert_id === alertId);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
