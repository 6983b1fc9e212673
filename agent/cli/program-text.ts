/**
 * Text forms and exit codes of the program commands (docs/program-language.md §9.11, §10, §11, §15, §29).
 * The JSON bodies are the REST ones; this module only decides how a terminal shows them and
 * whether the command "passed" (exit 0) or not (exit 1).
 */
type Body = Record<string, any>;

interface Presenter {
  text(body: Body): string[];
  passed(body: Body): boolean;
}

const yesNo = (b: unknown) => (b ? 'YES' : 'NO');

const PRESENTERS: Record<string, Presenter> = {
  evaluateProgramContinuity: {
    // docs/program-language.md §30: exit 0 when a continuity policy answers the trigger.
    text: ({ report }) => {
      const lines = [`Continuity of ${report.robot} at ${report.progress_pct}% (trigger ${report.trigger}): ${report.verdict}`];
      for (const p of report.policies) lines.push(`  policy ${p.policy}: on ${p.trigger} → ${p.actions.join(', ') || '(no action)'}`);
      for (const p of report.recovery_fallback) lines.push(`  recovery ${p.policy}: on ${p.trigger} → ${p.actions.join(', ') || '(no action)'}`);
      if (report.takeover) {
        const missions = report.missions.length ? ` of ${report.missions.join(', ')}` : '';
        lines.push(`  takeover: ${report.takeover.robot} takes the remaining ${report.remaining_pct}%${missions}`);
      }
      for (const e of report.explanation) lines.push(`  * ${e}`);
      return lines;
    },
    passed: ({ report }) => report.covered === true,
  },
  evaluateProgramReadiness: {
    text: ({ report }) => {
      const lines = [`Mission Ready: ${yesNo(report.mission_ready)}`, `Score: ${report.score.total}/100`, `Status: ${report.status}`];
      if (report.issues.length > 0) lines.push('', 'Issues:', ...report.issues.map((i: Body) => `* ${i.message}`));
      return lines;
    },
    passed: ({ report }) => report.mission_ready === true,
  },
  evaluateProgramAssure: {
    // docs/program-language.md §10: the text shows the evidence flag, the exit code follows the overall verdict.
    text: ({ report }) => ['Assurance Report', `Passed: ${report.assurance.passed}`, `Cases: ${report.assurance.cases.length}`],
    passed: ({ report }) => report.passed === true,
  },
  evaluateProgramDiagnose: {
    text: ({ report }) => {
      const lines = ['Diagnosis Report', `Passed: ${report.passed}`];
      if (report.trace_diagnosis) lines.push(`Root cause: ${report.trace_diagnosis.root_cause}`);
      for (const d of report.static_diagnoses ?? []) lines.push(`* ${d.subject}: ${d.root_causes.map((c: Body) => c.description).join('; ')}`);
      return lines;
    },
    passed: ({ report }) => report.passed === true,
  },
  evaluateProgramHeal: {
    text: ({ report }) => healLines(report),
    passed: ({ report }) => report.passed === true,
  },
  verifyProgramHardware: {
    text: ({ report }) => [
      `Hardware compatible: ${yesNo(report.compatible)}${report.target ? ` (target ${report.target})` : ''}`,
      ...report.items.map((i: Body) => `[${i.severity}] ${i.category}: ${i.message}`),
      deploymentLine(report),
    ],
    passed: ({ report }) => report.compatible === true,
  },
  verifyProgramCapabilities: {
    text: (b) => {
      const lines: string[] = [];
      for (const robot of b.capabilities) {
        lines.push(`Robot ${robot.robot}`);
        for (const row of robot.rows) lines.push(`  ${row.status.padEnd(7)} ${row.capability} (${row.source})`);
      }
      lines.push(`Health: ${b.health.overall}`);
      if (b.traceability) {
        for (const w of b.traceability.warnings) lines.push(`warning: ${w}`);
        for (const e of b.traceability.errors) lines.push(`error: ${e}`);
      }
      return lines;
    },
    passed: (b) => !b.traceability || b.traceability.errors.length === 0,
  },
  verifyProgramMission: {
    text: ({ report }) =>
      report.flatMap((m: Body) => [
        `Mission ${m.mission_name ?? '-'} on ${m.robot ?? '-'}: ${m.achievable ? 'ACHIEVABLE' : 'BLOCKED'}`,
        ...m.issues.map((i: string) => `  - ${i}`),
      ]),
    passed: ({ report }) => report.every((m: Body) => m.achievable === true),
  },
  runProgramSimulation: {
    text: ({ simulation }) => {
      const r = simulation.result;
      const lines = [
        `Simulation ${simulation.status}: ${simulation.event_count} event(s), ${simulation.log_count} log line(s)`,
        ...(r?.events ?? []).map((e: string) => `  ${e}`),
      ];
      if (r) {
        const p = r.state.pose;
        lines.push(`Final pose: x=${p.x} y=${p.y} theta=${p.theta}; emergency stop: ${r.state.emergency_stop}`);
      }
      if (r?.health) lines.push(...healthLines(r.health));
      if (simulation.trace_path) lines.push(`Trace written to ${simulation.trace_path}`);
      return lines;
    },
    passed: () => true,
  },
  replayProgram: {
    text: ({ replay }) => {
      if (replay.mode === 'deterministic') {
        const v = replay.verification;
        return [
          `Deterministic replay of ${replay.source}: ${v.ok ? 'MATCH' : 'MISMATCH'} (${v.matched}/${replay.frame_count} frames matched)`,
          ...v.mismatches.map((m: unknown) => `  - ${typeof m === 'string' ? m : JSON.stringify(m)}`),
        ];
      }
      if (replay.mode === 'playback') {
        const p = replay.final_pose;
        return [`Playback: ${replay.frames_applied} frame(s), ${replay.states_applied} state(s) applied`, `Final pose: x=${p.x} y=${p.y} theta=${p.theta}`];
      }
      return [`Trace of ${replay.source}: ${replay.frame_count} frame(s), deterministic: ${replay.deterministic}`];
    },
    passed: ({ replay }) => replay.mode !== 'deterministic' || replay.verification.ok === true,
  },
  getTrustProgram: {
    text: ({ report }) => [
      `Trust: ${report.score}/100 (${report.tier}), integrity ${report.integrity_status}`,
      ...(report.categories ?? []).map((c: Body) => `  ${c.name}: ${c.score} × ${c.weight}% = ${c.weighted}`),
      ...(report.recommendations ?? []).map((r: string) => `* ${r}`),
    ],
    passed: ({ report }) => report.passed === true,
  },
  getProgramSource: { text: (b) => [b.source.replace(/\n$/, '')], passed: () => true },
  verifyProgramContract: {
    text: (b) => [
      `Contract verification ${b.passed ? 'passed' : 'failed'}`,
      ...b.report.checks.map((c: Body) => `  [${c.passed ? 'pass' : 'FAIL'}] ${c.name}: ${c.detail}`),
      ...b.report.issues.map((i: string) => `* ${i}`),
    ],
    passed: (b) => b.passed === true,
  },
  explainProgram: {
    text: ({ report }) =>
      report.sections.flatMap((s: Body) => [`## ${s.topic}`, s.summary, ...s.details.map((d: string) => `  - ${d}`), '']).slice(0, -1),
    passed: () => true,
  },
  auditProgramDecisions: {
    text: (b) => [
      `${b.decision_count} decision(s) in ${b.file}`,
      ...b.report.timeline.decisions.map((d: Body) => `  ${d.decision_id} @ ${d.timestamp_ms}ms: ${d.decision} (${d.reason})`),
      ...(b.explanation ? ['', b.explanation.replace(/\n$/, '')] : []),
    ],
    passed: () => true,
  },
  listProgramTraces: {
    text: (b) => [`${b.count} trace(s) under ${b.root}`, ...b.traces.map((t: Body) => `  ${t.path} (${t.size_bytes} bytes)`)],
    passed: () => true,
  },
  listProgramFiles: {
    text: (b) => [`${b.count} program(s) under ${b.root}`, ...b.files.map((f: Body) => `  ${f.path} (${f.size_bytes} bytes)${f.served ? ' [served]' : ''}`)],
    passed: () => true,
  },
};

/**
 * The heal report for people (docs/program-language.md §12): per failure its diagnosis, the recovery
 * actions, the plan's risk, whether every action passed the safety gate, and the outcome; then
 * whether recovery is ready and the share of planned actions that would execute.
 */
export function healLines(report: Body): string[] {
  const lines = ['Recovery Report', `Passed: ${report.passed}`];
  const plans = new Map<string, Body>((report.plans ?? []).map((p: Body) => [p.name, p]));
  for (const result of report.results ?? []) {
    const plan = plans.get(result.plan) ?? {};
    const safe = result.actions.every((a: Body) => a.gates.every((g: Body) => g.gate !== 'Safety Validation' || g.passed));
    const executed = result.actions.filter((a: Body) => a.executed).length;
    lines.push('', `Failure: ${result.failure}`, `  Diagnosis: ${plan.diagnosis ?? '-'} (${plan.classification ?? 'Unknown'})`);
    for (const a of result.actions) {
      const blocked = a.gates.filter((g: Body) => !g.passed).map((g: Body) => g.gate);
      lines.push(`  Recovery Action ${a.order}: ${a.description}${a.executed ? '' : ` (blocked by ${blocked.join(', ')})`}`);
    }
    lines.push(
      `  Risk: ${plan.risk ?? '-'}`,
      `  Safety Validation: ${safe ? 'PASS' : 'FAIL'}`,
      `  Outcome: ${result.status} (${executed}/${result.actions.length} action(s) executed)`,
    );
  }
  for (const issue of report.mode_issues ?? []) lines.push(`* ${issue}`);
  lines.push(
    '',
    `Recovery Ready: ${yesNo(report.readiness?.recovery_ready)}`,
    `Success Rate: ${Math.round((report.assurance?.success_rate ?? 0) * 100)}%`,
  );
  return lines;
}

/** The last line of `svc verify` (docs/program-language.md §13): the verdict, or the errors that deny it. */
function deploymentLine(report: Body): string {
  if (report.compatible) return 'Deployment compatible';
  const errors = report.items.filter((i: Body) => i.severity === 'error').map((i: Body) => `${i.category}: ${i.message}`);
  const incompatible = (report.matrix?.cells ?? []).filter((c: Body) => !c.compatible).map((c: Body) => `${c.robot} on ${c.target}`);
  if (errors.length === 0) return `Deployment not compatible: ${incompatible.length ? `incompatible ${incompatible.join(', ')}` : 'hardware verification failed'}`;
  return `Deployment not compatible: ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more error(s))` : ''}`;
}

/** What an injected run did (only shown when faults were injected). */
function healthLines(health: Body): string[] {
  const lines = [`Health: ${health.status}`];
  for (const f of health.injected) lines.push(`  injected ${f.fault} on ${f.robot} (${f.status}, ${f.effect})`);
  for (const a of health.policy_actions) lines.push(`  ${a.policy} on ${a.status}: ${a.action}${a.executed ? '' : ' (recorded)'}`);
  for (const k of health.kill_switches) lines.push(`  kill switch ${k.name} fired on ${k.robot} (${k.fault})`);
  for (const a of health.recovery) lines.push(`  recovery ${a.policy} on ${a.condition}: ${a.action}${a.executed ? '' : ' (recorded)'}`);
  return lines;
}

export interface PresentOptions {
  json: boolean;
  /** Readiness: a Markdown report (docs/program-language.md §9.11, §29). */
  markdown?: boolean;
  /** Readiness: a standalone HTML report. */
  html?: boolean;
  /** Simulation: only `result.metrics`, pretty-printed. */
  metricsJson?: boolean;
}

export function presentProgramResult(id: string, body: unknown, options: PresentOptions): { stdout: string; exitCode: number } {
  const presenter = PRESENTERS[id];
  if (!presenter) throw new Error(`no CLI presentation for ${id}`);
  const b = body as Body;
  let stdout: string;
  if (options.json) stdout = JSON.stringify(b, null, 2);
  else if (options.metricsJson && id === 'runProgramSimulation') stdout = JSON.stringify(b.simulation.result?.metrics ?? null, null, 2);
  else if (options.markdown && id === 'evaluateProgramReadiness') stdout = readinessMarkdown(b).join('\n');
  else if (options.html && id === 'evaluateProgramReadiness') stdout = readinessHtml(b).join('\n');
  else stdout = presenter.text(b).join('\n');
  return { stdout: `${stdout}\n`, exitCode: presenter.passed(b) ? 0 : 1 };
}

// -----------------------------------------------------------------------------------------------
// Readiness reports for people: Markdown and HTML (verdict, score table, issues, runtime health)

function fileLabel(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

function verdictLine(report: Body): string {
  return `Mission ready: ${yesNo(report.mission_ready)} — status ${report.status} — score ${report.score.total}/${report.score.maximum} (minimum ${report.policy.minimum_score})`;
}

function runtimeLine(runtime: Body): string {
  if (!runtime.executed) return `Runtime: simulation failed (${runtime.error}) — health Failed`;
  const faults = runtime.injected.map((f: Body) => `${f.fault} on ${f.robot} (${f.status})`).join(', ');
  return `Runtime: simulated, health ${runtime.status}${faults ? `; injected ${faults}` : '; no faults injected'}; emergency stop: ${runtime.emergency_stop}`;
}

/** A Markdown table cell: pipes escaped, newlines flattened. */
function mdCell(value: unknown): string {
  return String(value ?? '').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

export function readinessMarkdown({ file, report }: Body): string[] {
  const lines = [`# Readiness: ${fileLabel(file)}`, '', `**${verdictLine(report)}**`, ''];
  lines.push(`- Target: ${report.target ?? 'none'}`, `- Robots: ${report.robots.length ? report.robots.join(', ') : 'none'}`);
  if (report.runtime) lines.push(`- ${runtimeLine(report.runtime)}`);
  lines.push('', '## Score', '', '| Factor | Score | Weight | Weighted |', '|---|---:|---:|---:|');
  for (const f of report.score.factors) lines.push(`| ${mdCell(f.factor)} | ${f.score} | ${f.weight} | ${f.weighted} |`);
  lines.push(`| **Total** | **${report.score.total}** | | |`, '', '## Issues', '');
  if (report.issues.length === 0) lines.push('No issues.');
  else {
    lines.push('| Severity | Factor | Issue | Suggested action |', '|---|---|---|---|');
    for (const i of report.issues) lines.push(`| ${i.severity} | ${mdCell(i.factor)} | ${mdCell(i.message)} | ${mdCell(i.suggested_action ?? '')} |`);
  }
  return lines;
}

function esc(value: unknown): string {
  return String(value ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

export function readinessHtml({ file, report }: Body): string[] {
  const verdictClass = report.mission_ready ? 'ready' : 'not-ready';
  const lines = [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>Readiness: ${esc(fileLabel(file))}</title>`,
    '<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}td.num{text-align:right}.ready{color:#176f2c}.not-ready{color:#a11}</style>',
    '</head>',
    '<body>',
    `<h1>Readiness: ${esc(fileLabel(file))}</h1>`,
    `<p class="verdict ${verdictClass}"><strong>${esc(verdictLine(report))}</strong></p>`,
    '<ul>',
    `<li>Target: ${esc(report.target ?? 'none')}</li>`,
    `<li>Robots: ${esc(report.robots.length ? report.robots.join(', ') : 'none')}</li>`,
  ];
  if (report.runtime) lines.push(`<li>${esc(runtimeLine(report.runtime))}</li>`);
  lines.push('</ul>', '<h2>Score</h2>', '<table>', '<tr><th>Factor</th><th>Score</th><th>Weight</th><th>Weighted</th></tr>');
  for (const f of report.score.factors) {
    lines.push(`<tr><td>${esc(f.factor)}</td><td class="num">${f.score}</td><td class="num">${f.weight}</td><td class="num">${f.weighted}</td></tr>`);
  }
  lines.push(`<tr><th>Total</th><th class="num">${report.score.total}</th><th></th><th></th></tr>`, '</table>', '<h2>Issues</h2>');
  if (report.issues.length === 0) lines.push('<p>No issues.</p>');
  else {
    lines.push('<table>', '<tr><th>Severity</th><th>Factor</th><th>Issue</th><th>Suggested action</th></tr>');
    for (const i of report.issues) {
      lines.push(`<tr><td>${esc(i.severity)}</td><td>${esc(i.factor)}</td><td>${esc(i.message)}</td><td>${esc(i.suggested_action ?? '')}</td></tr>`);
    }
    lines.push('</table>');
  }
  lines.push('</body>', '</html>');
  return lines;
}
