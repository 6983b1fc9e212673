/**
 * What the CLI-only flags of the program commands add to a REST body or its text
 * (docs/programs.md, "The CLI"; docs/program-language.md §29): the readiness verdict for automation
 * (`--agent-json`) and under `--strict`, strict certification, the health and minimum-capability
 * parts of `svc verify --capabilities`, the scheduler of `svc sim`, the trace views of `svc replay`,
 * and the Markdown trust report. Pure functions of bodies and trace frames.
 */
import type { TraceFrame } from '../programs/runtime/trace-file.js';

type Body = Record<string, any>;

const yesNo = (b: unknown) => (b ? 'YES' : 'NO');
const WARNING_SEVERITIES = new Set(['Medium', 'Low']);
const BLOCKING_SEVERITIES = new Set(['Critical', 'High']);

// ----------------------------------------------------------------------------------------------
// readiness

/** `--strict`: a readiness passes only when it is `Ready`: mission ready with no warning (Medium or Low issue). */
export function strictPassed(report: Body): boolean {
  return report.mission_ready === true && !report.issues.some((i: Body) => WARNING_SEVERITIES.has(i.severity));
}

export function strictLine(report: Body): string {
  const warnings = report.issues.filter((i: Body) => WARNING_SEVERITIES.has(i.severity)).length;
  if (strictPassed(report)) return 'Strict: PASS';
  return `Strict: FAIL (${report.mission_ready ? `${warnings} warning(s)` : 'not mission ready'})`;
}

/**
 * `--agent-json`: the verdict for an automated caller (a CI job, a coding agent): flat fields, the
 * issues split into what blocks and what warns, the distinct suggested actions in order, and the
 * exit code the command returns.
 */
export function readinessAgentJson(body: Body, strict: boolean): Body {
  const report = body.report;
  const issue = (i: Body) => ({ factor: i.factor, severity: i.severity, message: i.message, action: i.suggested_action });
  const ready = strict ? strictPassed(report) : report.mission_ready === true;
  return {
    version: body.version,
    command: 'readiness',
    file: body.file,
    ready,
    strict,
    status: report.status,
    score: report.score.total,
    minimum_score: report.policy.minimum_score,
    target: report.target,
    robots: report.robots,
    blocking: report.issues.filter((i: Body) => BLOCKING_SEVERITIES.has(i.severity)).map(issue),
    warnings: report.issues.filter((i: Body) => WARNING_SEVERITIES.has(i.severity)).map(issue),
    next_actions: [...new Set(report.issues.map((i: Body) => i.suggested_action).filter((a: unknown) => typeof a === 'string' && a !== ''))],
    exit_code: ready ? 0 : 1,
  };
}

// ----------------------------------------------------------------------------------------------
// verify

/**
 * `svc verify --strict-certify`: certification warnings (a deploy without `certify`,
 * docs/program-language.md §13) count as errors, so the deployment is not compatible.
 */
export function strictCertify(body: Body): Body {
  const items = body.report.items.map((i: Body) => (i.category === 'certification' && i.severity === 'warning' ? { ...i, severity: 'error' } : i));
  return { ...body, report: { ...body.report, items, compatible: body.report.compatible && !items.some((i: Body) => i.severity === 'error') } };
}

const UNHEALTHY = new Set(['Critical', 'Failed', 'Unsafe']);

/** `--health`: each static health check (docs/program-language.md §9.9, §14). */
export function healthCheckLines(health: Body): string[] {
  return [
    `Health checks: ${health.checks.length}, overall ${health.overall}`,
    ...health.checks.map((c: Body) => `  [${c.status}] ${c.name}: ${c.message}`),
    ...healthPolicyLines(health),
  ];
}

/** One line per `health_policy` of the static health report. */
export function healthPolicyLines(health: Body): string[] {
  return health.policies.map((p: Body) => `  policy ${p.name}: ${(p.handlers ?? []).map((h: Body) => `on ${h.status} → ${h.actions.join(', ')}`).join('; ')}`);
}

export function healthPassed(health: Body): boolean {
  return !UNHEALTHY.has(health.overall);
}

/** `--minimum-capabilities`: the check of docs/program-language.md §9.8. */
export function minimumCapabilityLines(minimum: Body): string[] {
  return [
    `Minimum capabilities: ${minimum.compatible ? 'PASS' : 'FAIL'}`,
    ...minimum.items.filter((i: Body) => i.severity === 'pass').map((i: Body) => `  [pass] ${i.message}`),
    ...minimum.errors.map((e: string) => `  [error] ${e}`),
  ];
}

// ----------------------------------------------------------------------------------------------
// sim

/**
 * `svc sim --trace-scheduler`: the multiplexed task scheduler of the run (docs/program-language.md
 * §24.2). Wall-clock figures (task durations, jitter) are left out: they differ between runs (§28).
 */
export function schedulerLines(metrics: Body | null | undefined): string[] {
  const s = metrics?.scheduler;
  if (!s || s.multiplexed_tasks === 0) return ['Scheduler: not used (no multiplexed tasks; the entry ran alone)'];
  const lines = [`Scheduler: ${s.multiplexed_tasks} multiplexed task(s), base tick ${s.base_tick_ms} ms, ${s.scheduler_ticks} tick(s), ${s.emergency_stops} emergency stop(s)`];
  for (const [name, t] of Object.entries<Body>(metrics.tasks ?? {})) {
    const limits = [t.deadline_ms !== null ? `deadline ${t.deadline_ms} ms` : null, t.priority !== null ? `priority ${t.priority}` : null].filter(Boolean);
    lines.push(
      `  task ${name}: every ${t.interval_ms} ms${limits.length ? ` (${limits.join(', ')})` : ''}; ${t.runs} run(s), ${t.skipped} skipped, ` +
        `${t.deadline_misses} deadline miss(es), ${t.budget_violations} budget violation(s), ${t.jitter_violations} jitter violation(s)`,
    );
  }
  return lines;
}

// ----------------------------------------------------------------------------------------------
// replay

/** Frame events that record a fault, a safety intervention or a recovery (docs/program-language.md §26). */
export function isFaultFrame(frame: TraceFrame): boolean {
  const e = frame.event;
  const payload = frame.payload as Body | null;
  return (
    /fault|fail|kill_switch|emergency|safety|watchdog_timeout|deadline_miss|recover|tamper|health_status/.test(e) ||
    (e === 'provider_call' && payload?.['failed'] === true)
  );
}

function detail(payload: unknown): string {
  const text = JSON.stringify(payload ?? {});
  return text === '{}' ? '' : ` ${text}`;
}

export function frameLine(frame: TraceFrame, index: number): string {
  return `  #${index} ${frame.sim_time_ms} ms ${frame.event}${detail(frame.payload)}`;
}

export interface AtView {
  requested_ms: number;
  /** The last frame at or before the time; null when the trace had not started. */
  frame: { index: number; sim_time_ms: number; event: string } | null;
  /** The robot state recorded last at or before the time (frames without a state are skipped). */
  state: Body | null;
  first_frame_ms: number | null;
}

/** `svc replay --at T`: where the recorded run was at simulated time T. */
export function atView(frames: readonly TraceFrame[], atMs: number): AtView {
  let index = -1;
  let stateIndex = -1;
  frames.forEach((f, i) => {
    if (f.sim_time_ms > atMs) return;
    index = i;
    if (f.state !== null && f.state !== undefined) stateIndex = i;
  });
  const frame = index >= 0 ? { index, sim_time_ms: frames[index]!.sim_time_ms, event: frames[index]!.event } : null;
  return { requested_ms: atMs, frame, state: stateIndex >= 0 ? (frames[stateIndex]!.state as unknown as Body) : null, first_frame_ms: frames[0]?.sim_time_ms ?? null };
}

export function atLines(view: AtView): string[] {
  if (!view.frame) return [`At ${view.requested_ms} ms: the trace has not started (${view.first_frame_ms === null ? 'it has no frames' : `first frame at ${view.first_frame_ms} ms`})`];
  const lines = [`At ${view.requested_ms} ms: frame #${view.frame.index} ${view.frame.event} at ${view.frame.sim_time_ms} ms`];
  const s = view.state;
  if (s) {
    lines.push(
      `  pose: x=${s.pose.x} y=${s.pose.y} theta=${s.pose.theta}`,
      `  velocity: linear=${s.velocity.linear} angular=${s.velocity.angular}`,
      `  emergency stop: ${s.emergency_stop}; mode: ${s.active_mode ?? '-'}`,
    );
  } else lines.push('  no robot state recorded yet');
  return lines;
}

// ----------------------------------------------------------------------------------------------
// trust

/** `svc trust --format markdown`: the composite trust report (docs/program-language.md §19) as Markdown. */
export function trustMarkdown(body: Body): string[] {
  const r = body.report;
  const label = String(body.file).split(/[\\/]/).pop();
  const lines = [
    `# Trust: ${label}`,
    '',
    `**Score ${r.score}/100 — ${r.tier} — integrity ${r.integrity_status} — passed: ${yesNo(r.passed)}**`,
    '',
    '| Category | Score | Weight | Weighted |',
    '|---|---:|---:|---:|',
    ...(r.categories ?? []).map((c: Body) => `| ${c.name} | ${c.score} | ${c.weight} | ${c.weighted} |`),
    '',
    '## Recommendations',
    '',
  ];
  const recs: string[] = r.recommendations ?? [];
  lines.push(...(recs.length ? recs.map((x) => `- ${x}`) : ['None.']));
  return lines;
}
