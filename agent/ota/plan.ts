import type { Program } from '../programs/language/ast.js';

/**
 * Rollout plans (docs/operations.md § Rollouts): the certification proof over the program, the
 * strategy's deploy subset and its batches. Pure functions: the service feeds them the parsed program
 * and the targets, so plan, dry run and execute share one schedule.
 */

export type Strategy = 'all' | 'canary' | 'staged' | 'blue_green';

/** `canary`; `staged`/`phased`; `blue_green`/`bluegreen`; anything else is `all` (any case). */
export function normalizeStrategy(raw: string): Strategy {
  const s = raw.trim().toLowerCase();
  if (s === 'canary') return 'canary';
  if (s === 'staged' || s === 'phased') return 'staged';
  if (s === 'blue_green' || s === 'bluegreen') return 'blue_green';
  return 'all';
}

export interface ProofItem {
  category: 'certify';
  message: string;
  severity: 'pass' | 'warning' | 'error';
  line: number | null;
  column: number | null;
}

export interface CertificationProof {
  passed: boolean;
  passed_strict: boolean;
  summary: string;
  error_count: number;
  warning_count: number;
  checklist: ProofItem[];
  strict_checklist: ProofItem[];
}

const ADVICE = 'add certify ISO13849 (or IEC61508 / ISO26262)';
const normStd = (s: string) => s.toUpperCase().replace(/[\s_-]/g, '');

function checklist(program: Program, strict: boolean): ProofItem[] {
  const items: ProofItem[] = [];
  const at = (severity: ProofItem['severity'], message: string, loc: { line: number; column: number } | null = null) =>
    items.push({ category: 'certify', message, severity, line: loc?.line ?? null, column: loc?.column ?? null });
  const deploys = program.deploys;
  const certs = program.certifications;
  if (deploys.length > 0 && certs.length === 0) {
    at(strict ? 'error' : 'warning', strict ? `Deploy targets require certification metadata — ${ADVICE}` : `Deploy targets declared without certification metadata — ${ADVICE}`, deploys[0]!.loc);
  }
  if (certs.length > 0 && deploys.length === 0) at('pass', `Certification declared (${certs.map((c) => c.standard).join(', ')}) with no deploy targets`, certs[0]!.loc);
  if (strict) {
    for (const c of certs) {
      const std = normStd(c.standard);
      if (std.startsWith('ISO13849') && !c.level) at('error', `certify ${c.standard} should declare a performance level (e.g. level PLd)`, c.loc);
      if (std.startsWith('ISO26262') && !c.level) at('warning', `certify ${c.standard} should declare an ASIL level (e.g. level ASIL_B)`, c.loc);
    }
  }
  const robots = new Map(program.robots.map((r) => [r.name, r]));
  const seen = new Set<string>();
  for (const d of deploys) {
    const robot = robots.get(d.robot);
    if (!robot) {
      if (strict) at('error', `Deploy robot '${d.robot}' not found for certification proof`, d.loc);
    } else if (!seen.has(d.robot)) {
      seen.add(d.robot);
      if (robot.missions.length === 0) at(strict ? 'error' : 'warning', `Deployed robot '${d.robot}' declares no mission`, robot.loc);
      if (robot.safety.length === 0) at(strict ? 'error' : 'warning', `Deployed robot '${d.robot}' declares no safety block`, robot.loc);
    }
    for (const hw of d.targets) at('pass', `Deploy target ${d.robot}@${hw} covered by certification proof checklist`, d.loc);
  }
  if (strict && deploys.length > 0 && program.safetyZones.length === 0) at('warning', 'No program-level safety_zone declared for the deployed robots', deploys[0]!.loc);
  if (certs.length > 0 && deploys.length > 0) at('pass', `Certification metadata present for deploy targets (${certs.map((c) => (c.level ? `${c.standard}:${c.level}` : c.standard)).join(', ')})`, certs[0]!.loc);
  return items;
}

/** Normal and strict certification proof over a parsed program (docs/operations.md § Rollouts, "Certification gate"). */
export function certificationProof(program: Program): CertificationProof {
  const normal = checklist(program, false);
  const strict = checklist(program, true);
  const count = (items: ProofItem[], s: ProofItem['severity']) => items.filter((i) => i.severity === s).length;
  const passed = count(normal, 'error') === 0;
  const passedStrict = count(strict, 'error') === 0;
  const errors = count(strict, 'error');
  const warnings = count(strict, 'warning');
  const targets = program.deploys.reduce((n, d) => n + d.targets.length, 0);
  const source = passedStrict ? normal : strict;
  const ok = source === normal ? passed : passedStrict;
  const summary = ok
    ? `Certification proof passed (${targets} deploy targets, ${program.certifications.length} certify blocks)`
    : `Certification proof failed with ${count(source, 'error')} error(s) and ${count(source, 'warning')} warning(s)`;
  return { passed, passed_strict: passedStrict, summary, error_count: errors, warning_count: warnings, checklist: normal, strict_checklist: strict };
}

/** One assignment per deploy robot × hardware target, sorted by robot then hardware. */
export function assignmentsOf(program: Program): { robot_name: string; hardware: string }[] {
  const out = program.deploys.flatMap((d) => d.targets.map((hardware) => ({ robot_name: d.robot, hardware })));
  const unique = new Map(out.map((a) => [`${a.robot_name}@${a.hardware}`, a]));
  return [...unique.values()].sort((a, b) => (a.robot_name === b.robot_name ? a.hardware.localeCompare(b.hardware) : a.robot_name.localeCompare(b.robot_name)));
}

export function certificationsOf(program: Program): string[] {
  return program.certifications.map((c) => (c.level ? `${c.standard}:${c.level}` : c.standard));
}

/** A batch of the execution schedule: step indexes updated together, then gated on readiness. */
export interface Batch {
  index: number;
  phase_percent: number;
  steps: number[];
  /** Set on batches that run only after the previous one passed (canary promotion). */
  condition?: string;
}

export interface Schedule {
  /** Per step: in the plan's deploy subset, its `phase_percent`, its batch (1-based, null when skipped). */
  steps: { inSubset: boolean; phase_percent: number; batch: number | null }[];
  batches: Batch[];
  /** Cumulative percent of the targets after each batch: the staged phases, or what the strategy implies. */
  phases: number[];
}

export const DEFAULT_PHASES = [10, 50, 100];

/**
 * The strategy's schedule over `n` targets (in plan order). The deploy subset is the reference's:
 * all; canary = first max(1, ceil(n·p/100)); staged = every batch of the phases; blue_green = the
 * green half, first max(1, floor(n/2)). Canary adds a promotion batch of the rest (phase 100) that
 * execute runs only when the canary batch passed and `canary_promote` is not false.
 */
export function schedule(n: number, strategy: Strategy, opts: { canaryPercent?: number | undefined; phases?: number[] | undefined; promote?: boolean | undefined }): Schedule {
  const steps: Schedule['steps'] = Array.from({ length: n }, () => ({ inSubset: false, phase_percent: 0, batch: null }));
  const batches: Batch[] = [];
  const p = Math.min(100, Math.max(1, Math.trunc(opts.canaryPercent ?? 10)));
  // The cumulative schedule every rollout echoes: the staged phases, or what the strategy implies.
  const phases =
    strategy === 'staged' ? normalizePhases(opts.phases) : strategy === 'canary' ? (opts.promote === false || p === 100 ? [p] : [p, 100]) : strategy === 'blue_green' ? [50] : [100];
  if (n === 0) return { steps, batches, phases };
  const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
  const take = (idx: number[], phase: number, condition?: string) => {
    if (idx.length === 0) return;
    const batch: Batch = { index: batches.length + 1, phase_percent: phase, steps: idx, ...(condition ? { condition } : {}) };
    batches.push(batch);
  };
  if (strategy === 'all') {
    take(range(0, n), 100);
  } else if (strategy === 'canary') {
    const k = Math.min(n, Math.max(1, Math.ceil((n * p) / 100)));
    take(range(0, k), p);
    if (opts.promote !== false && k < n) take(range(k, n), 100, 'after the canary batch passes (execute only)');
  } else if (strategy === 'staged') {
    let from = 0;
    for (const ph of phases) {
      const to = Math.min(n, Math.max(1, Math.ceil((n * ph) / 100)));
      take(range(from, to), ph);
      from = Math.max(from, to);
    }
    return finish(steps, batches, phases, strategy);
  } else {
    take(range(0, Math.max(1, Math.floor(n / 2))), 50);
  }
  return finish(steps, batches, phases, strategy);
}

function finish(steps: Schedule['steps'], batches: Batch[], phases: number[], strategy: Strategy): Schedule {
  for (const b of batches) {
    for (const i of b.steps) {
      const promotion = b.condition !== undefined;
      // The plan's deploy subset: a canary promotion batch is not part of it (digest F11: skipped, phase 0).
      steps[i] = { inSubset: !promotion, phase_percent: promotion ? 0 : strategy === 'staged' ? 100 : b.phase_percent, batch: b.index };
    }
  }
  return { steps, batches, phases };
}

function normalizePhases(phases: number[] | undefined): number[] {
  const list = [...new Set((phases && phases.length > 0 ? phases : DEFAULT_PHASES).map((p) => Math.min(100, Math.max(1, Math.trunc(p)))))];
  return list.sort((a, b) => a - b);
}
