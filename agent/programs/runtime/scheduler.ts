/**
 * Task scheduling (docs/program-language.md §24.2). `multiplexed`: several tasks share one base tick (the smallest task
 * interval); `single`: a robot's only task runs as its entry loop; `triggers`: a robot with
 * neither behaviors nor tasks runs its `every` / `when` triggers.
 *
 * Each tick advances simulated time, ticks the robot, fires timer and condition triggers, runs
 * the due tasks in priority order, checks watchdogs and topic deadlines, polls decision trees,
 * records the tick frame and runs `verify` rules. Task timing is modelled, not measured: every
 * run costs MODELLED_RUN_MS of simulated time, so a task's jitter is the cost of the tasks that ran
 * before it in the same tick — deterministic, and it makes priority order visible in the metrics.
 */
import { performance } from 'node:perf_hooks';

import type { Expr, TaskDecl, TriggerDecl } from '../language/ast.js';
import { exprText } from './expressions.js';
import type { Interpreter } from './interpreter.js';
import type { TaskMetrics } from './run-metrics.js';
import { toMilliseconds } from './si-units.js';
import { evaluate } from './expressions.js';
import { truthy } from './values.js';

export type SchedulerMode = 'multiplexed' | 'single' | 'triggers';

/** Simulated cost of one task run (also the per-run cost the timing analysis assumes, docs/program-language.md §9.2). */
export const MODELLED_RUN_MS = 5;
/** Base tick of a trigger-only robot without `every` triggers. */
export const DEFAULT_TRIGGER_TICK_MS = 100;
/** Floor of the wall-clock duration metrics (docs/program-language.md §28). */
const MIN_DURATION_MS = 5;

const PRIORITY_WORDS: Record<string, number> = { critical: 0, high: 1, medium: 2, normal: 2, low: 3, background: 4 };

/** Sort rank of a task priority: words critical…low, numbers larger-first; unset counts as normal. */
export function priorityRank(priority: string | null): number {
  if (priority === null) return PRIORITY_WORDS['normal']!;
  const word = PRIORITY_WORDS[priority.toLowerCase()];
  if (word !== undefined) return word;
  const number = Number(priority);
  return Number.isFinite(number) ? -number : PRIORITY_WORDS['normal']!;
}

function isMultiple(timeMs: number, intervalMs: number): boolean {
  if (intervalMs <= 0) return false;
  const ratio = timeMs / intervalMs;
  return Math.abs(ratio - Math.round(ratio)) < 1e-9;
}

function cpuBudgetPercent(task: TaskDecl): number | null {
  const entry = task.budget.find((b) => b.resource === 'cpu' && (b.limit.unit === '%' || b.limit.unit === null));
  return entry ? entry.limit.value : null;
}

export function runScheduler(interp: Interpreter, mode: SchedulerMode): void {
  const robot = interp.current;
  const decl = robot.decl;
  const metrics = interp.metrics;
  // On-demand tasks (no `every`) run only when called or spawned, never on the scheduler's clock.
  const periodic = decl.tasks.filter((task) => task.every !== null);
  const tasks = mode === 'triggers' ? [] : mode === 'single' ? periodic.slice(0, 1) : periodic;
  const ordered = tasks
    .map((task, index) => ({ task, index, intervalMs: toMilliseconds(task.every!.value, task.every!.unit) }))
    .sort((a, b) => priorityRank(a.task.priority) - priorityRank(b.task.priority) || a.index - b.index);

  const everyTriggers = decl.triggers.filter((t): t is Extract<TriggerDecl, { kind: 'every' }> => t.kind === 'every');
  const whenTriggers = decl.triggers.filter((t): t is Extract<TriggerDecl, { kind: 'when' }> => t.kind === 'when');
  const runsTriggers = mode !== 'single';

  const intervals = ordered.map((o) => o.intervalMs);
  if (mode === 'triggers') intervals.push(...everyTriggers.map((t) => toMilliseconds(t.interval.value, t.interval.unit)));
  const baseTick = intervals.length > 0 ? Math.min(...intervals) : DEFAULT_TRIGGER_TICK_MS;

  if (mode === 'multiplexed') {
    metrics.scheduler.multiplexed_tasks = ordered.length;
    metrics.scheduler.base_tick_ms = baseTick;
  }
  for (const { task, intervalMs } of ordered) {
    metrics.task(task.name, () => newTaskMetrics(task, intervalMs));
  }
  for (const watchdog of decl.watchdogs) {
    metrics.watchdogs.set(watchdog.name, { timeout_ms: toMilliseconds(watchdog.timeout.value, watchdog.timeout.unit), timeouts: 0 });
  }

  const whenWasTrue = new Map<Expr, boolean>();
  const watchdogFedAt = new Map<string, number>(decl.watchdogs.map((w) => [w.name, 0]));

  for (let tick = 1; tick <= interp.maxLoopIterations; tick += 1) {
    const cap = robot.monitor.speedCapAt(interp.sim.pose);
    if (cap !== null) interp.sim.clampFollowSpeed(cap);
    interp.pace?.(baseTick);
    interp.sim.tick(baseTick / 1000);
    interp.simTimeMs = tick * baseTick;
    const now = interp.simTimeMs;
    let activity = false;

    if (runsTriggers) {
      for (const trigger of everyTriggers) {
        const intervalMs = toMilliseconds(trigger.interval.value, trigger.interval.unit);
        if (!isMultiple(now, intervalMs)) continue;
        metrics.fireTrigger(`every:${trigger.interval.text}`);
        interp.runBody(trigger.body, robot.env.child());
        activity = true;
      }
      for (const trigger of whenTriggers) {
        const holds = truthy(evaluate(trigger.condition, robot.env, interp));
        // Condition triggers fire on the rising edge, not on every tick the condition holds.
        if (holds && !whenWasTrue.get(trigger.condition)) {
          metrics.fireTrigger(`when:${exprText(trigger.condition)}`);
          interp.runBody(trigger.body, robot.env.child());
          activity = true;
        }
        whenWasTrue.set(trigger.condition, holds);
      }
    }

    const ran: string[] = [];
    let offsetMs = 0;
    for (const { task, intervalMs } of ordered) {
      if (!isMultiple(now, intervalMs)) continue;
      const taskMetrics = metrics.task(task.name, () => newTaskMetrics(task, intervalMs));
      const started = performance.now();
      const executed = interp.runTask(task);
      const elapsed = performance.now() - started;
      if (!executed) {
        taskMetrics.skipped += 1;
        continue;
      }
      recordTaskRun(taskMetrics, task, intervalMs, offsetMs, now, elapsed);
      offsetMs += MODELLED_RUN_MS;
      ran.push(task.name);
      activity = true;
      if (interp.sim.emergencyStop) break;
    }

    for (const watchdog of decl.watchdogs) {
      if (activity) watchdogFedAt.set(watchdog.name, now);
      const timeoutMs = toMilliseconds(watchdog.timeout.value, watchdog.timeout.unit);
      if (now - watchdogFedAt.get(watchdog.name)! > timeoutMs) {
        metrics.watchdogs.get(watchdog.name)!.timeouts += 1;
        interp.record('watchdog_timeout', { watchdog: watchdog.name, timeout_ms: timeoutMs });
        interp.logs.push(`watchdog ${watchdog.name} timed out after ${timeoutMs} ms`);
        watchdogFedAt.set(watchdog.name, now);
        interp.runBody(watchdog.body, robot.env.child());
        interp.fireEvent(watchdog.name);
      }
    }

    checkTopicDeadlines(interp, now);
    interp.pollDecisions();
    if (mode === 'single') {
      interp.metrics.execution.loop_iterations += 1;
    } else {
      metrics.scheduler.scheduler_ticks += 1;
      interp.record('scheduler_tick', { sim_time_ms: now, tick, base_tick_ms: baseTick, tasks_run: ran });
      interp.runVerify();
    }
    if (interp.sim.emergencyStop) break;
  }
}

function newTaskMetrics(task: TaskDecl, intervalMs: number): TaskMetrics {
  return {
    interval_ms: intervalMs,
    deadline_ms: task.deadline ? toMilliseconds(task.deadline.value, task.deadline.unit) : null,
    jitter_limit_ms: task.jitter ? toMilliseconds(task.jitter.value, task.jitter.unit) : null,
    priority: task.priority,
    runs: 0,
    skipped: 0,
    deadline_misses: 0,
    jitter_violations: 0,
    budget_violations: 0,
    max_jitter_ms: 0,
    last_run_ms: null,
    last_duration_ms: 0,
    max_duration_ms: 0,
  };
}

function recordTaskRun(m: TaskMetrics, task: TaskDecl, intervalMs: number, offsetMs: number, now: number, elapsedMs: number): void {
  m.runs += 1;
  m.last_run_ms = now;
  m.max_jitter_ms = Math.max(m.max_jitter_ms, offsetMs);
  if (m.jitter_limit_ms !== null && offsetMs > m.jitter_limit_ms) m.jitter_violations += 1;
  if (m.deadline_ms !== null && offsetMs + MODELLED_RUN_MS > m.deadline_ms) m.deadline_misses += 1;
  const cpuLimit = cpuBudgetPercent(task);
  if (cpuLimit !== null && (MODELLED_RUN_MS / intervalMs) * 100 > cpuLimit) m.budget_violations += 1;
  const duration = Math.max(MIN_DURATION_MS, Math.round(elapsedMs));
  m.last_duration_ms = duration;
  m.max_duration_ms = Math.max(m.max_duration_ms, duration);
}

/** Topics with a QoS `deadline`: a miss once per deadline period without a publish. */
function checkTopicDeadlines(interp: Interpreter, now: number): void {
  const robot = interp.current;
  for (const topic of robot.decl.topics) {
    const deadline = topic.qos['deadline'];
    if (!deadline || typeof deadline === 'string' || topic.direction === 'subscribe') continue;
    const deadlineMs = toMilliseconds(deadline.value, deadline.unit);
    const last = robot.topicLastPublished.get(topic.name) ?? 0;
    if (now - last > deadlineMs) {
      const entry = interp.metrics.topics.get(topic.name);
      if (entry) entry.deadline_misses += 1;
      interp.record('topic_deadline_miss', { topic: topic.name, deadline_ms: deadlineMs });
      robot.topicLastPublished.set(topic.name, now);
    }
  }
}
