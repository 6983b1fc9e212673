/**
 * Audit decisions (docs/program-language.md §23): turn a trace into decision records. Version-3
 * `decision_*` frames carry their own record; safety, recovery, continuity, takeover, provider,
 * kill-switch and approval events are synthesised into version-1 records; all else is skipped.
 */
import type { TraceFile, TraceFrame } from '../runtime/trace-file.js';

export interface DecisionRecord {
  version: number;
  decision_id: string;
  mission: string | null;
  timestamp_ms: number;
  decision: string;
  reason: string;
  /** Flattened evidence: nested objects become dotted keys, sorted (docs/program-language.md §1). */
  evidence: Record<string, unknown>;
  alternatives_considered: unknown[];
  safety_checks: unknown[];
  action: string | null;
  source_event: string;
}

export interface DecisionAuditReport {
  source: string;
  decision_count: number;
  timeline: { source: string; decisions: DecisionRecord[] };
  chains: { mission: string | null; records: DecisionRecord[] }[];
}

export interface DecisionAuditResult {
  report: DecisionAuditReport;
  decision_count: number;
  explanation: string | null;
}

export interface AuditOptions {
  /** The trace path, reported as `source`. */
  source: string;
  explain?: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `{a:{b:1}, c:[…]}` → `{"a.b":1, "c":[…]}`; arrays and scalars are kept as they are; keys sorted. */
export function flattenEvidence(value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const walk = (node: unknown, prefix: string): void => {
    if (isObject(node) && (prefix === '' || Object.keys(node).length > 0)) {
      for (const [key, child] of Object.entries(node)) walk(child, prefix === '' ? key : `${prefix}.${key}`);
      return;
    }
    if (prefix !== '') out[prefix] = node;
  };
  walk(value, '');
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The decision a synthesised record stands for, by event-name family. */
function synthesisedDecision(event: string): string | null {
  if (event.includes('safety')) return 'safety_gate';
  if (event.includes('recovery')) return 'recovery_action';
  if (event.includes('continuity') || event.includes('takeover')) return 'continuity_handoff';
  if (event.includes('provider_call')) return 'provider_dispatch';
  if (event.includes('kill_switch')) return 'emergency_stop';
  if (event.includes('approval')) return 'operational_decision';
  return null;
}

/**
 * The chosen action of a v3 record: an explicit `action`, else the decision tree's actions
 * (`evidence.actions`, joined with "; "), else the `result` text.
 */
function chosenAction(payload: Record<string, unknown>): string | null {
  const explicit = text(payload['action']);
  if (explicit) return explicit;
  const evidence = payload['evidence'];
  if (isObject(evidence) && Array.isArray(evidence['actions'])) {
    const actions = evidence['actions'].filter((item): item is string => typeof item === 'string');
    if (actions.length > 0) return actions.join('; ');
  }
  return text(payload['result']);
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? [...value] : [];
}

/** One frame → its decision record, or null when the frame is not a decision. */
export function decisionRecord(frame: TraceFrame): DecisionRecord | null {
  const payload = frame.payload ?? {};
  const id = text(payload['decision_id']);
  const decision = text(payload['decision']);
  if (id !== null && decision !== null) {
    const version = payload['version'];
    return {
      version: typeof version === 'number' ? version : 3,
      decision_id: id,
      mission: text(payload['mission']),
      timestamp_ms: frame.sim_time_ms,
      decision,
      reason: text(payload['reason']) ?? 'trace_payload',
      evidence: flattenEvidence(payload['evidence'] ?? {}),
      alternatives_considered: list(payload['alternatives_considered']),
      safety_checks: list(payload['safety_checks']),
      action: chosenAction(payload),
      source_event: frame.event,
    };
  }
  const synthesised = synthesisedDecision(frame.event);
  if (synthesised === null) return null;
  return {
    version: 1,
    decision_id: `d-${frame.sim_time_ms}-${frame.event}`,
    mission: text(payload['mission']),
    timestamp_ms: frame.sim_time_ms,
    decision: synthesised,
    reason: `synthesized_from_event:${frame.event}`,
    evidence: { ...payload },
    alternatives_considered: [],
    safety_checks: [],
    action: null,
    source_event: frame.event,
  };
}

export function decisionRecords(trace: Pick<TraceFile, 'frames'>): DecisionRecord[] {
  const records: DecisionRecord[] = [];
  for (const frame of trace.frames) {
    const record = decisionRecord(frame);
    if (record) records.push(record);
  }
  return records;
}

/** One explanation line per decision (also used by explain's decision mode). */
export function explanationLine(record: DecisionRecord): string {
  return `At T+${record.timestamp_ms}ms the system decided to '${record.decision}' because ${record.reason} (event: ${record.source_event}).`;
}

export function auditDecisions(trace: Pick<TraceFile, 'frames' | 'source'>, options: AuditOptions): DecisionAuditResult {
  const decisions = decisionRecords(trace);
  const mission = decisions.find((record) => record.mission !== null)?.mission ?? null;
  const report: DecisionAuditReport = {
    source: options.source,
    decision_count: decisions.length,
    timeline: { source: trace.source, decisions },
    chains: decisions.length > 0 ? [{ mission, records: decisions }] : [],
  };
  const explanation = options.explain
    ? [`Decision explanations for ${options.source}`, ...decisions.map(explanationLine)].join('\n')
    : null;
  return { report, decision_count: decisions.length, explanation };
}
