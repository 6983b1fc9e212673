/**
 * Recovery planning (docs/program-language.md §12, first stages): policies from `recovery_policy` and
 * `mitigation`, one context per trigger condition, and one plan per context whose actions come
 * from the matching policy triggers, else the best knowledge-store entry, else the defaults of
 * the failure's classification.
 */
import type { Program } from '../language/ast.js';
import {
  classifyFailure,
  defaultActions,
  diagnoseFailure,
  maxRisk,
  recoveryAction,
  type FailureClassification,
  type RecoveryAction,
  type RecoveryMode,
  type RiskLevel,
} from './recovery-actions.js';
import { bestKnowledgeEntry, conditionMatches, type KnowledgeEntry } from './recovery-knowledge.js';

export const AUTOMATIC_LEVEL = 'Level2AutomaticLowRisk';
/** Numeric rank of the autonomy level (Level0 … Level4); the readiness gate relaxes at ≤ 1. */
export const AUTOMATIC_LEVEL_RANK = 2;

export interface RecoveryPolicy {
  name: string;
  /** `[condition, [actions]]` pairs. */
  triggers: [string, string[]][];
}

export interface RecoveryContext {
  issue: string;
  classification: FailureClassification;
  diagnosis: string;
  level: string;
}

export type ActionSource = 'policy' | 'knowledge' | 'default';

export interface RecoveryPlan {
  name: string;
  failure: string;
  classification: FailureClassification;
  diagnosis: string;
  actions: RecoveryAction[];
  target_mode: RecoveryMode | null;
  level: string;
  risk: RiskLevel;
}

/** Plan plus where its actions came from (kept out of the plan JSON, used by assurance and audit). */
export interface PlannedRecovery {
  plan: RecoveryPlan;
  source: ActionSource;
  /** Policies whose triggers supplied actions. */
  policies: string[];
}

/** A registry device as the heal operation sees it (config devices or the live device pool). */
export interface RegistryDevice {
  id: string;
  logical_name?: string | null;
  type?: string | null;
  device_type?: string | null;
}

export function recoveryPolicies(program: Program): RecoveryPolicy[] {
  return [
    ...program.recoveryPolicies.map((p) => ({ name: p.name, triggers: p.triggers.map((t): [string, string[]] => [t.condition, [...t.actions]]) })),
    ...program.mitigations.map((m) => ({ name: m.name, triggers: m.rules.map((r): [string, string[]] => [r.condition, [...r.actions]]) })),
  ];
}

/** The context used when a program declares no recovery policy or mitigation at all. */
export const DEFAULT_CONTEXT: RecoveryContext = {
  issue: 'gps.failed',
  classification: 'SensorFailure',
  diagnosis: 'Satellite lock lost',
  level: AUTOMATIC_LEVEL,
};

export function recoveryContexts(policies: readonly RecoveryPolicy[]): RecoveryContext[] {
  if (policies.length === 0) return [{ ...DEFAULT_CONTEXT }];
  const seen = new Set<string>();
  const contexts: RecoveryContext[] = [];
  for (const policy of policies) {
    for (const [condition] of policy.triggers) {
      if (seen.has(condition)) continue;
      seen.add(condition);
      const classification = classifyFailure(condition);
      contexts.push({ issue: condition, classification, diagnosis: diagnoseFailure(condition, classification), level: AUTOMATIC_LEVEL });
    }
  }
  return contexts;
}

const planName = (issue: string): string => `recovery_${issue.replace(/[. ]/g, '_')}`;

function deviceType(device: RegistryDevice): string | null {
  return device.device_type ?? device.type ?? null;
}

/** The registry device an issue names (by id or logical name, case-insensitive), if any. */
function mentionedDevice(issue: string, devices: readonly RegistryDevice[]): RegistryDevice | null {
  const text = issue.toLowerCase();
  return (
    devices.find((d) => d.id !== '' && text.includes(d.id.toLowerCase())) ??
    devices.find((d) => d.logical_name && text.includes(d.logical_name.toLowerCase())) ??
    null
  );
}

/**
 * Failover enrichment: when the issue names a registry device and another device of the same type
 * exists, switching to that backup becomes the first action (unless a policy already switches to it).
 */
function failoverAction(issue: string, devices: readonly RegistryDevice[], actions: readonly string[]): string | null {
  const failed = mentionedDevice(issue, devices);
  if (!failed) return null;
  const type = deviceType(failed);
  const backup = devices.find((d) => d !== failed && d.id !== failed.id && type !== null && deviceType(d) === type);
  if (!backup) return null;
  const action = `switch_to ${backup.id}`;
  return actions.includes(action) ? null : action;
}

export function planRecovery(
  context: RecoveryContext,
  policies: readonly RecoveryPolicy[],
  knowledge: readonly KnowledgeEntry[],
  devices: readonly RegistryDevice[],
): PlannedRecovery {
  let texts: string[] = [];
  const supplying: string[] = [];
  for (const policy of policies) {
    for (const [condition, actions] of policy.triggers) {
      if (!conditionMatches(condition, context.issue) || actions.length === 0) continue;
      texts.push(...actions);
      if (!supplying.includes(policy.name)) supplying.push(policy.name);
    }
  }
  let source: ActionSource = 'policy';
  if (texts.length === 0) {
    const entry = bestKnowledgeEntry(knowledge, context.issue, context.classification);
    if (entry) {
      texts = [...entry.actions];
      source = 'knowledge';
    } else {
      texts = defaultActions(context.issue, context.classification);
      source = 'default';
    }
  }
  const failover = failoverAction(context.issue, devices, texts);
  if (failover) texts = [failover, ...texts];

  const actions = texts.map((text, index) => recoveryAction(text, index + 1));
  const firstMode = actions.map((a) => a.correction).find((c): c is { enter_mode: { mode: RecoveryMode } } => typeof c === 'object' && 'enter_mode' in c);
  return {
    plan: {
      name: planName(context.issue),
      failure: context.issue,
      classification: context.classification,
      diagnosis: context.diagnosis,
      actions,
      target_mode: firstMode?.enter_mode.mode ?? null,
      level: context.level,
      risk: maxRisk(actions.map((a) => a.risk)),
    },
    source,
    policies: supplying,
  };
}
