/**
 * Text forms and exit codes of the program commands (program-language §9.11, §10, §11, §15, §29).
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
  evaluateProgramReadiness: {
    text: ({ report }) => {
      const lines = [`Mission Ready: ${yesNo(report.mission_ready)}`, `Score: ${report.score.total}/100`, `Status: ${report.status}`];
      if (report.issues.length > 0) lines.push('', 'Issues:', ...report.issues.map((i: Body) => `* ${i.message}`));
      return lines;
    },
    passed: ({ report }) => report.mission_ready === true,
  },
  evaluateProgramAssure: {
    // §10: the text shows the evidence flag, the exit code follows the overall verdict.
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
    text: ({ report }) => [
      'Recovery Report',
      `Passed: ${report.passed}`,
      ...(report.results ?? []).map((r: Body) => `* ${r.plan ?? r.name ?? ''} ${r.status ?? ''}`.trim()),
    ],
    passed: ({ report }) => report.passed === true,
  },
  verifyProgramHardware: {
    text: ({ report }) => [
      `Hardware compatible: ${yesNo(report.compatible)}${report.target ? ` (target ${report.target})` : ''}`,
      ...report.items.map((i: Body) => `[${i.severity}] ${i.category}: ${i.message}`),
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
};

export function presentProgramResult(id: string, body: unknown, options: { json: boolean }): { stdout: string; exitCode: number } {
  const presenter = PRESENTERS[id];
  if (!presenter) throw new Error(`no CLI presentation for ${id}`);
  const b = body as Body;
  const stdout = options.json ? JSON.stringify(b, null, 2) : presenter.text(b).join('\n');
  return { stdout: `${stdout}\n`, exitCode: presenter.passed(b) ? 0 : 1 };
}
