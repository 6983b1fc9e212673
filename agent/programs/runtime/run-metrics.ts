/**
 * Metrics collected during a run (docs/program-language.md §16 `result.metrics`). Maps are keyed by declared names and
 * emitted with sorted keys (§1); the top-level order is the one the specification lists.
 */

export interface TaskMetrics {
  interval_ms: number;
  deadline_ms: number | null;
  jitter_limit_ms: number | null;
  priority: string | null;
  runs: number;
  skipped: number;
  deadline_misses: number;
  jitter_violations: number;
  budget_violations: number;
  max_jitter_ms: number;
  last_run_ms: number | null;
  /** Wall-clock based (floor 5 ms): excluded from expected-output comparisons (docs/program-language.md §28). */
  last_duration_ms: number;
  max_duration_ms: number;
}

export interface SchedulerMetrics {
  multiplexed_tasks: number;
  scheduler_ticks: number;
  base_tick_ms: number;
  emergency_stops: number;
}

export class RunMetrics {
  readonly tasks = new Map<string, TaskMetrics>();
  readonly triggers = new Map<string, { fired: number }>();
  readonly pipelines = new Map<string, { runs: number; budget_ms: number | null }>();
  readonly watchdogs = new Map<string, { timeout_ms: number; timeouts: number }>();
  readonly topics = new Map<string, { channel: string; type: string; published: number; deadline_misses: number }>();
  readonly providers = new Map<string, { calls: number; failures: number }>();
  readonly scheduler: SchedulerMetrics = { multiplexed_tasks: 0, scheduler_ticks: 0, base_tick_ms: 0, emergency_stops: 0 };
  readonly execution = {
    robots: 0,
    behaviors_run: 0,
    tasks_run: 0,
    loop_iterations: 0,
    triggers_fired: 0,
    decisions: 0,
    sim_time_ms: 0,
    max_loop_iterations: 0,
  };

  task(name: string, init: () => TaskMetrics): TaskMetrics {
    let entry = this.tasks.get(name);
    if (!entry) {
      entry = init();
      this.tasks.set(name, entry);
    }
    return entry;
  }

  fireTrigger(key: string): void {
    const entry = this.triggers.get(key) ?? { fired: 0 };
    entry.fired += 1;
    this.triggers.set(key, entry);
    this.execution.triggers_fired += 1;
  }

  toJson(replayFrames: number): Record<string, unknown> {
    return {
      tasks: sortedObject(this.tasks, (m) => sortedKeys(m as unknown as Record<string, unknown>)),
      triggers: sortedObject(this.triggers),
      pipelines: sortedObject(this.pipelines, (m) => sortedKeys(m)),
      watchdogs: sortedObject(this.watchdogs, (m) => sortedKeys(m)),
      topics: sortedObject(this.topics, (m) => sortedKeys(m)),
      providers: sortedObject(this.providers, (m) => sortedKeys(m)),
      scheduler: { ...this.scheduler },
      execution: sortedKeys(this.execution),
      replay_frames: replayFrames,
    };
  }
}

export function sortedKeys<T extends object>(record: T): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort()) out[key] = (record as Record<string, unknown>)[key];
  return out;
}

function sortedObject<T>(map: Map<string, T>, project: (value: T) => unknown = (v) => ({ ...(v as object) })): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of [...map.keys()].sort()) out[key] = project(map.get(key)!);
  return out;
}
