import { JsonStore } from '../state/json-store.js';

/** One reflex firing (docs/autonomy.md § Reflex traces). */
export interface ReflexTrace {
  reflex_id: string;
  entity_id: string;
  trigger: string;
  /** The action the reflex prescribes; the agent records it, the device's own firmware (or the simulated robot) enforces it. */
  action_taken: string;
  timestamp: string;
  priority: number;
  /** `telemetry`: a device reading crossed a limit; `simulation`: a program run of this agent fired a kill switch or a reflex-layer tree. */
  source: 'telemetry' | 'simulation';
  device_id?: string;
  metric?: string;
  value?: number | boolean;
  limit?: number | null;
  /** Simulation traces: the trace file (relative to the project) and the simulated time of the frame. */
  trace_path?: string;
  sim_time_ms?: number;
}

/** One indexed artefact of an entity's past (docs/autonomy.md § Memory). */
export interface EpisodicEntry {
  id: string;
  entity_id: string;
  category: 'episodic';
  artifact_kind: 'replay' | 'incident' | 'recovery';
  /** The trace file, relative to the project root, for `replay` entries. */
  replay_path?: string;
  trace_id?: string;
  incident_id?: string;
  recovery_id?: string;
  summary?: string;
  timestamp: string;
}

export interface MaintenanceWindow {
  id: string;
  start: string;
  end: string;
  activities: string[];
}

export const REFLEX_TRACE_RING = 256;
export const EPISODIC_RING = 512;

function arrayOf<T>(what: string, check: (x: Record<string, unknown>) => boolean) {
  return (raw: unknown): T[] => {
    if (!Array.isArray(raw)) throw new Error(`expected an array of ${what}`);
    return raw.filter((x): x is T => !!x && typeof x === 'object' && check(x as Record<string, unknown>));
  };
}

/** A JSON array kept as a ring: the oldest entries are dropped past `capacity`. */
export class RingFile<T> {
  private constructor(
    private readonly store: JsonStore<T[]>,
    readonly capacity: number,
  ) {}

  static async open<T>(file: string, capacity: number, what: string, check: (x: Record<string, unknown>) => boolean, warn?: (m: string) => void): Promise<RingFile<T>> {
    const store = await JsonStore.open<T[]>(file, {
      defaults: () => [],
      revive: (raw) => arrayOf<T>(what, check)(raw).slice(-capacity),
      // Observability rings: a crash may lose the last write, like the request-trace ring.
      durable: false,
      ...(warn ? { onWarning: warn } : {}),
    });
    return new RingFile(store, capacity);
  }

  append(item: T): void {
    this.store.change((d) => {
      d.push(item);
      if (d.length > this.capacity) d.splice(0, d.length - this.capacity);
    });
  }

  all(): readonly T[] {
    return this.store.data;
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}

/** Maintenance windows: unbounded, upsert by id, store order kept (docs/autonomy.md § Maintenance windows). */
export class WindowStore {
  private constructor(private readonly store: JsonStore<MaintenanceWindow[]>) {}

  static async open(file: string, warn?: (m: string) => void): Promise<WindowStore> {
    const store = await JsonStore.open<MaintenanceWindow[]>(file, {
      defaults: () => [],
      revive: arrayOf<MaintenanceWindow>('maintenance windows', (x) => typeof x['id'] === 'string' && typeof x['start'] === 'string' && typeof x['end'] === 'string'),
      ...(warn ? { onWarning: warn } : {}),
    });
    return new WindowStore(store);
  }

  list(): MaintenanceWindow[] {
    return this.store.data.map((w) => ({ ...w, activities: Array.isArray(w.activities) ? [...w.activities] : [] }));
  }

  upsert(w: MaintenanceWindow): MaintenanceWindow {
    this.store.change((d) => {
      const i = d.findIndex((x) => x.id === w.id);
      if (i >= 0) d[i] = w;
      else d.push(w);
    });
    return w;
  }

  flush(): Promise<void> {
    return this.store.flush();
  }
}
