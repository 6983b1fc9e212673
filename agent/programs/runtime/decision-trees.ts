/**
 * Decision trees at run time (docs/program-language.md §25). Each poll evaluates every `when` rule of every
 * `decision_tree` against live signals from the simulated robot; matching rules compete by layer
 * precedence, the winner is recorded as a version-3 `decision_tree_eval` frame and the losers are
 * listed as rejected alternatives. A `tree:condition` pair is emitted at most once per run, which
 * keeps a deterministic re-run emitting exactly the same frames.
 */
import { createHash, createHmac } from 'node:crypto';

import type { DecisionTreeDecl, Expr, Program } from '../language/ast.js';
import { conditionSignals, parseCondition } from './condition-parser.js';
import { escalationNeed, type EscalationPort, type EscalationRecord, type RobotAuthority } from './escalations.js';

export const DECISION_EVENT = 'decision_tree_eval';
export const POLICY_VERSION = '1.0.0';

/** Layers from the most to the least authoritative for a conflict (reflexes win). */
export const LAYER_PRECEDENCE = ['reflex', 'local_entity', 'group_fleet', 'control_center'] as const;
export type DecisionLayer = (typeof LAYER_PRECEDENCE)[number];

/** The layer a tree's layer word names; no word → a local (entity) decision. */
export function decisionLayer(word: string | null): DecisionLayer {
  switch ((word ?? '').toLowerCase()) {
    case 'reflex':
      return 'reflex';
    case 'group':
    case 'fleet':
    case 'swarm':
    case 'group_fleet':
      return 'group_fleet';
    case 'central':
    case 'control_center':
    case 'cloud':
      return 'control_center';
    default:
      return 'local_entity';
  }
}

function authorityScope(layer: DecisionLayer): string {
  if (layer === 'control_center') return 'central';
  if (layer === 'group_fleet') return 'fleet';
  return 'local';
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Canonical text of one tree: what `tree_hash` fingerprints. */
export function canonicalTreeText(tree: DecisionTreeDecl): string {
  const lines = [`decision_tree ${tree.name} ${decisionLayer(tree.layer)}`, `version ${tree.version ?? POLICY_VERSION}`];
  for (const rule of tree.rules) lines.push(`when ${rule.condition} { ${rule.actions.join('; ')} }`);
  return lines.join('\n');
}

/** Canonical text of the whole decision policy (all trees, in program order). */
export function canonicalPolicyText(trees: readonly DecisionTreeDecl[]): string {
  return trees.map(canonicalTreeText).join('\n\n');
}

/** Sorted-key JSON, so signing payloads do not depend on construction order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function sortedRecord<T>(record: Record<string, T>): Record<string, T> {
  const out: Record<string, T> = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key]!;
  return out;
}

export interface DecisionContext {
  simTimeMs: number;
  robot: string;
  mission: string;
  /** Readable safety rules of the robot (`max_speed = 1.2m/s`, `stop_if …`). */
  safetyRules: string[];
  /** Evaluate a parsed condition against the robot; throws when a signal is not available. */
  evaluate: (expr: Expr) => unknown;
  /** Signing key (`Settings.decisions.policySigningKey`), or null for unsigned envelopes. */
  signingKey: string | null;
  /** The robot's declared authority: which actions need approval (docs/decisions.md § Escalations). */
  authority?: RobotAuthority;
  /** The escalation store as the run may see it; absent: nothing is granted and nothing is kept. */
  escalations?: EscalationPort | null;
}

interface CompiledRule {
  tree: DecisionTreeDecl;
  layer: DecisionLayer;
  condition: string;
  actions: string[];
  expr: Expr | null;
  treeHash: string;
}

interface Candidate {
  rule: CompiledRule;
  signals: Record<string, unknown>;
}

export class DecisionEngine {
  private readonly rules: CompiledRule[];
  private readonly policyHash: string;
  private readonly emitted = new Set<string>();
  private sequence = 0;
  /** Escalations met by this run's decisions, in order (pending and already granted). */
  readonly escalations: EscalationRecord[] = [];

  constructor(program: Program) {
    this.policyHash = sha256(canonicalPolicyText(program.decisionTrees));
    this.rules = program.decisionTrees.flatMap((tree) => {
      const treeHash = sha256(canonicalTreeText(tree));
      return tree.rules.map((rule) => {
        let expr: Expr | null = null;
        try {
          expr = parseCondition(rule.condition, rule.loc);
        } catch {
          expr = null; // a condition we cannot read never matches
        }
        return { tree, layer: decisionLayer(tree.layer), condition: rule.condition, actions: rule.actions, expr, treeHash };
      });
    });
  }

  get hasRules(): boolean {
    return this.rules.length > 0;
  }

  /** Evaluate the rules now; returns the payload of the winning decision, or null. */
  poll(context: DecisionContext): Record<string, unknown> | null {
    const candidates: Candidate[] = [];
    for (const rule of this.rules) {
      const key = `${rule.tree.name}:${rule.condition}`;
      if (rule.expr === null || this.emitted.has(key)) continue;
      let matched = false;
      try {
        matched = context.evaluate(rule.expr) === true;
      } catch {
        matched = false; // a signal the simulator does not provide
      }
      if (!matched) continue;
      const signals: Record<string, unknown> = {};
      for (const name of conditionSignals(rule.expr)) {
        try {
          signals[name] = context.evaluate(parseCondition(name));
        } catch {
          signals[name] = null;
        }
      }
      candidates.push({ rule, signals: sortedRecord(signals) });
    }
    if (candidates.length === 0) return null;
    // Stable sort: the most authoritative layer first, program order within a layer.
    const ranked = [...candidates].sort((a, b) => LAYER_PRECEDENCE.indexOf(a.rule.layer) - LAYER_PRECEDENCE.indexOf(b.rule.layer));
    for (const candidate of ranked) this.emitted.add(`${candidate.rule.tree.name}:${candidate.rule.condition}`);
    return this.payload(ranked[0]!, ranked.slice(1), context);
  }

  private payload(winner: Candidate, losers: Candidate[], context: DecisionContext): Record<string, unknown> {
    this.sequence += 1;
    const { rule } = winner;
    const ms = context.simTimeMs;
    const decisionId = `d-${ms}-${DECISION_EVENT}`;
    const decision = rule.actions[0] ?? rule.tree.name;
    const matched = `decision_tree ${rule.tree.name} matched ${rule.condition}`;
    const scope = authorityScope(rule.layer);
    const nonce = `n-${ms}-${this.sequence}`;
    const auditRecordId = `a-${ms}-${this.sequence}`;
    const alternative = (c: Candidate): Record<string, unknown> => ({
      tree: c.rule.tree.name,
      condition: c.rule.condition,
      decision: c.rule.actions[0] ?? c.rule.tree.name,
      layer: c.rule.layer,
    });
    const rejected = losers.map((c) => ({ ...alternative(c), reason: `lower precedence than ${rule.layer}` }));
    // An action the robot may not take on its own waits for its escalation to be granted (one id per
    // kind: esc-<robot>-1, esc-<robot>-local); the decision is carried out only when all are granted.
    const needs = new Map<string, { escalation_id: string; entity_id: string; action: string; reason: string }>();
    if (context.authority) {
      for (const action of rule.actions) {
        const need = escalationNeed(context.authority, action, rule.layer);
        if (need && !needs.has(need.escalation_id)) needs.set(need.escalation_id, need);
      }
    }
    const met: EscalationRecord[] = [...needs.values()].map((need) => ({
      ...need,
      layer: rule.layer,
      tree: rule.tree.name,
      condition: rule.condition,
      decision_id: decisionId,
      sim_time_ms: ms,
      status: context.escalations?.isGranted(need.escalation_id) === true ? 'granted' : 'pending',
    }));
    for (const record of met) {
      this.escalations.push(record);
      if (record.status === 'pending') context.escalations?.registerPending(record);
    }
    const escalationPath: unknown[] =
      met.length === 0
        ? LAYER_PRECEDENCE.slice(LAYER_PRECEDENCE.indexOf(rule.layer))
        : met.map((e) => ({
            from_layer: rule.layer,
            to_layer: 'control_center',
            escalation_id: e.escalation_id,
            action: e.action,
            reason: e.reason,
            pending_approval: e.status === 'pending',
            granted: e.status === 'granted',
          }));
    const result = met.some((e) => e.status === 'pending') ? 'pending_approval' : 'executed';
    // The reason says it too, so decision audits and explanations (`svc audit decisions`) show it.
    const waiting = met.filter((e) => e.status === 'pending').map((e) => e.escalation_id);
    const granted = met.filter((e) => e.status === 'granted').map((e) => e.escalation_id);
    const reason = [
      matched,
      ...(waiting.length > 0 ? [`waiting for approval of ${waiting.join(', ')}`] : []),
      ...(granted.length > 0 ? [`approved by ${granted.join(', ')}`] : []),
    ].join('; ');

    const signingFields = {
      decision_id: decisionId,
      decision,
      entity_id: context.robot,
      authority_scope: scope,
      policy_version: POLICY_VERSION,
      policy_hash: this.policyHash,
      tree_hash: rule.treeHash,
      timestamp_ms: ms,
      nonce,
    };
    const signingPayload = canonicalJson(signingFields);
    const envelope: Record<string, unknown> = {
      entity_id: context.robot,
      authority_scope: scope,
      policy_version: POLICY_VERSION,
      policy_hash: this.policyHash,
      tree_hash: rule.treeHash,
      timestamp_ms: ms,
      nonce,
      audit_record_id: auditRecordId,
      safety_validation_passed: true,
      trust_validation_passed: true,
      signing_payload: signingPayload,
    };
    if (context.signingKey) envelope['signature'] = createHmac('sha256', context.signingKey).update(signingPayload).digest('hex');

    return {
      version: 3,
      decision_id: decisionId,
      mission: context.mission,
      decision,
      reason,
      action: rule.actions.join('; '),
      layer: rule.layer,
      entity_id: context.robot,
      authority_scope: scope,
      evidence: {
        tree: rule.tree.name,
        condition: rule.condition,
        actions: [...rule.actions],
        tree_hash: rule.treeHash,
        policy_version: POLICY_VERSION,
        signals: winner.signals,
        central_connected: true,
        offline_minutes: 0,
        rejected_alternatives: rejected,
      },
      input_signals: Object.keys(winner.signals),
      policy_version: POLICY_VERSION,
      policy_hash: this.policyHash,
      tree_hash: rule.treeHash,
      alternatives_considered: [alternative(winner), ...losers.map(alternative)],
      rejected_alternatives: rejected,
      escalation_path: escalationPath,
      capability_validation: { passed: true },
      result,
      security_envelope: envelope,
      safety_validation: { passed: true, rules: [...context.safetyRules] },
      trust_validation: { passed: true },
      safety_checks: [{ rule: 'distributed_decision', passed: true }],
      audit_record: {
        id: auditRecordId,
        decision_id: decisionId,
        timestamp_ms: ms,
        entity_id: context.robot,
        mission: context.mission,
        decision,
        layer: rule.layer,
        tree: rule.tree.name,
        condition: rule.condition,
        result,
      },
    };
  }
}
