import type { TextForm } from './text-form.js';

type Strategy = string | { custom: string };
const strategyName = (s: Strategy) => (typeof s === 'string' ? s : s.custom);
const yes = (b: boolean) => (b ? 'yes' : 'no');

interface Decision {
  can_recover: boolean;
  is_safe: boolean;
  is_authorized: boolean;
  automatic: boolean;
  recommended_strategy: Strategy;
  recommended_level: string;
  estimated_downtime_secs: number;
  backup_entity_id: string | null;
  explanations: string[];
}

interface Plan {
  plan_id: string;
  entity_id: string;
  classification: string;
  strategies: Strategy[];
  escalation_level: string;
  risk: string;
  playbook: string | null;
  decision: Decision;
}

interface Evidence {
  evidence_id: string;
  entity_id?: string;
  status: string;
  strategy: Strategy;
  duration_secs: number;
  executed?: boolean;
  effects?: Array<{ kind: string; action?: string; target?: string; ok: boolean; detail: string; duration_ms: number }>;
}

interface Report {
  plans: Plan[];
  evidence: Evidence[];
  simulation_mode: string;
  passed: boolean;
  governance_notes?: string[];
}

function decisionLine(d: Decision): string {
  const backup = d.backup_entity_id ? `; backup ${d.backup_entity_id}` : '';
  return `can recover ${yes(d.can_recover)}, safe ${yes(d.is_safe)}, authorized ${yes(d.is_authorized)}, automatic ${yes(d.automatic)}; downtime ~${d.estimated_downtime_secs} s${backup}`;
}

/** `svc recovery plan|simulate|validate|execute FILE`: each plan, its decision, and the evidence recorded. */
export const recoveryReport: TextForm<{ file: string; report: Report }> = {
  text: ({ report }) => {
    const lines = [`Recovery ${report.simulation_mode}: ${report.plans.length} plan(s), passed: ${yes(report.passed)}`];
    for (const p of report.plans) {
      const playbook = p.playbook ? `, playbook ${p.playbook}` : '';
      lines.push(`  ${p.plan_id}: ${p.classification}, ${p.escalation_level}, risk ${p.risk}${playbook}`);
      lines.push(`    strategies: ${p.strategies.map(strategyName).join(' → ')}`);
      lines.push(`    decision: ${decisionLine(p.decision)}`);
    }
    if (report.evidence.length > 0) {
      lines.push(`Evidence (${report.evidence.length}):`);
      for (const e of report.evidence) {
        lines.push(`  ${e.evidence_id}: ${e.status}, ${strategyName(e.strategy)}, ${e.duration_secs} s${e.executed ? ', executed' : ''}`);
        for (const x of e.effects ?? []) lines.push(`    ${x.ok ? 'ok' : 'FAILED'} ${x.action ?? x.kind}${x.target ? ` ${x.target}` : ''} (${x.duration_ms} ms): ${x.detail}`);
      }
    }
    for (const n of report.governance_notes ?? []) lines.push(`  governance: ${n}`);
    return lines.join('\n');
  },
  passed: ({ report }) => report.passed === true,
};

/** `svc recovery explain FILE --entity ID --failure KIND`: the decision and its reasons. */
export const recoveryExplanation: TextForm<{ entity_id: string; failure: string; decision: Decision | null }> = {
  text: ({ entity_id, failure, decision }) => {
    if (!decision) return `Recovery decision for ${entity_id} on '${failure}': unknown entity`;
    return [
      `Recovery decision for ${entity_id} on '${failure}': ${strategyName(decision.recommended_strategy)} (${decision.recommended_level})`,
      `  ${decisionLine(decision)}`,
      ...decision.explanations.map((e) => `  * ${e}`),
    ].join('\n');
  },
  passed: ({ decision }) => decision !== null && decision.can_recover && decision.is_safe,
};
