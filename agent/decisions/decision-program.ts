/**
 * What the decision routes read from a parsed program (docs/decisions.md): authorities, decision trees
 * and offline policies, and the decision simulation over them. Loaded on first use (it pulls in the
 * program language), like the program engine.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import type { DecisionTreeDecl, OfflinePolicyDecl, Program } from '../programs/language/ast.js';
import { canonicalTreeText, decisionLayer, POLICY_VERSION } from '../programs/runtime/decision-trees.js';
import { centralEscalationId, isSafetyBoundary, localEscalationId, SAFETY_BOUNDARIES } from '../programs/runtime/escalations.js';

export { loadProgram, loadTrace, resolveRequestFile } from '../programs/program-files.js';

export interface Authority {
  entity_id: string;
  local_actions: string[];
  requires_central_approval: string[];
  layer: 'local_entity';
}

export interface TreeRecord {
  name: string;
  scope: string | null;
  layer: string;
  version: string;
  branches: { condition: string; actions: string[]; nested: never[]; span: { start: { line: number; column: number } } }[];
  signature: string | null;
  tree_hash: string;
}

export interface OfflinePolicyRecord {
  name: string;
  max_duration_minutes: number | null;
  allowed_actions: string[];
  forbidden_actions: string[];
  policy_version: string;
  signature: string | null;
  expires_at_ms: number | null;
}

/** Signatures the signed policy cache holds for trees and policies, by name. */
export interface CacheSignatures {
  trees: Record<string, string>;
  policies: Record<string, string>;
}

/** Safety boundaries that always need control-center approval (shared with the interpreter). */
export { SAFETY_BOUNDARIES };

const REFLEX_WORDS = ['emergency_stop', 'stop_motor', 'kill_switch', 'estop', 'e_stop', 'cut_power', 'safe_stop', 'halt'];

/** The tree hash the interpreter writes into decision frames (docs/program-language.md §25). */
export function treeHash(tree: DecisionTreeDecl): string {
  return createHash('sha256').update(canonicalTreeText(tree)).digest('hex');
}

export function hmacHex(key: string, text: string): string {
  return createHmac('sha256', key).update(text).digest('hex');
}

export function signatureMatches(key: string | null, text: string, signature: string | null | undefined): boolean {
  if (!key || !signature) return false;
  const want = Buffer.from(hmacHex(key, text), 'utf8');
  const got = Buffer.from(signature, 'utf8');
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Canonical text of an offline policy, what a cache signature covers. */
export function canonicalPolicyText(p: Pick<OfflinePolicyRecord, 'name' | 'max_duration_minutes' | 'allowed_actions' | 'forbidden_actions' | 'policy_version'>): string {
  return JSON.stringify([p.name, p.max_duration_minutes, p.allowed_actions, p.forbidden_actions, p.policy_version]);
}

function minutes(decl: OfflinePolicyDecl): number | null {
  const q = decl.maxDuration;
  if (!q) return null;
  const unit = (q.unit ?? 'min').toLowerCase();
  if (unit === 'h' || unit === 'hr' || unit === 'hours' || unit === 'hour') return q.value * 60;
  if (unit === 's' || unit === 'sec') return q.value / 60;
  if (unit === 'ms') return q.value / 60000;
  return q.value;
}

export function authorities(program: Program): Authority[] {
  return program.robots
    .filter((r) => r.localDecisionAuthority.length > 0 || r.requiresCentralApproval.length > 0)
    .map((r) => ({ entity_id: r.name, local_actions: [...r.localDecisionAuthority], requires_central_approval: [...r.requiresCentralApproval], layer: 'local_entity' as const }));
}

export function trees(program: Program, signatures: CacheSignatures): TreeRecord[] {
  return program.decisionTrees.map((t) => ({
    name: t.name,
    scope: t.layer,
    layer: decisionLayer(t.layer),
    version: t.version ?? '1',
    branches: t.rules.map((r) => ({ condition: r.condition, actions: [...r.actions], nested: [], span: { start: { line: r.loc.line, column: r.loc.column } } })),
    signature: signatures.trees[t.name] ?? null,
    tree_hash: treeHash(t),
  }));
}

export function offlinePolicies(program: Program, signatures: CacheSignatures): OfflinePolicyRecord[] {
  return program.offlinePolicies.map((p) => ({
    name: p.name,
    max_duration_minutes: minutes(p),
    allowed_actions: [...p.allowedActions],
    forbidden_actions: [...p.forbiddenActions],
    policy_version: POLICY_VERSION,
    signature: signatures.policies[p.name] ?? null,
    expires_at_ms: null,
  }));
}

export interface SimulateInput {
  entity_id?: string | undefined;
  mission?: string | undefined;
  offline?: boolean | undefined;
  offline_minutes?: number | undefined;
  network_partition?: boolean | undefined;
  fleet_coordinator_failure?: boolean | undefined;
  signals?: Record<string, boolean> | undefined;
}

export interface SimulateContext {
  nowMs: number;
  trustKey: string | null;
  requireSignedTrees: boolean;
  signatures: CacheSignatures;
  /** The registry's view of an entity: trust status and governance metadata, or null when unknown. */
  entity: (id: string) => { trust_status: string | null; metadata: Record<string, string> } | null;
}

const ACTION = 'continue_mission';

/** Decision simulation (docs/decisions.md § Simulate). */
export function simulate(program: Program, input: SimulateInput, ctx: SimulateContext) {
  const auths = authorities(program);
  const treeList = trees(program, ctx.signatures);
  const policies = offlinePolicies(program, ctx.signatures);
  const entityId = input.entity_id ?? program.robots[0]?.name ?? null;
  if (!entityId) return null;
  const robot = program.robots.find((r) => r.name === entityId);
  const mission = input.mission ?? robot?.missions[0]?.name ?? null;
  const notes: string[] = [];
  const signals: Record<string, boolean> = { ...(input.signals ?? {}) };
  const offline = input.offline === true;
  const offlineMinutes = offline ? (input.offline_minutes ?? 15) : 0;
  if (offline) notes.push(`Simulating offline operation (${offlineMinutes} min since last sync)`);
  if (input.network_partition) {
    signals['network.partitioned'] = true;
    notes.push('Simulating network partition (network.partitioned = true)');
  }
  if (input.fleet_coordinator_failure) {
    signals['fleet.coordinator.failed'] = true;
    notes.push('Simulating fleet coordinator failure (fleet.coordinator.failed = true)');
  }
  const scenario = offline ? 'offline' : input.network_partition ? 'network_partition' : input.fleet_coordinator_failure ? 'fleet_coordinator_failure' : 'nominal';

  const killSwitchActions = new Set<string>([...program.killSwitches, ...(robot?.killSwitches ?? [])].flatMap((k) => [k.name, ...k.actions]));
  const registry = ctx.entity(entityId);
  const trustStatus = registry?.trust_status ?? null;
  const trustPassed = trustStatus === null || !['untrusted', 'compromised'].includes(trustStatus.toLowerCase());
  const safetyCheck = (action: string) => {
    const parts = action.split(/,\s*/);
    const boundary = parts.find((a) => (SAFETY_BOUNDARIES as readonly string[]).includes(a.split(/\s+/)[0]!));
    const killSwitch = parts.find((a) => /disable|override|bypass/.test(a) && [...killSwitchActions].some((k) => a.includes(k)));
    if (boundary) return { passed: false, reason: `'${boundary}' is a safety boundary that needs control-center approval` };
    if (killSwitch) return { passed: false, reason: `'${killSwitch}' would defeat a kill switch of the program` };
    return { passed: true, reason: null };
  };

  const messages: string[] = [];
  const decisions: Record<string, unknown>[] = [];
  let passed = true;
  const record = (type: 'recovery' | 'policy', action: string, hash: string | null, escalation: unknown[]) => {
    const nonce = randomBytes(8).toString('hex');
    const safety = safetyCheck(action);
    return {
      decision_id: `dd-${entityId}-${action.replace(/\s/g, '_')}`,
      layer: 'local_entity',
      decision_type: type,
      entity_id: entityId,
      mission,
      timestamp_ms: ctx.nowMs,
      inputs: { ...signals },
      policy_version: POLICY_VERSION,
      local_context: { offline_minutes: offlineMinutes },
      selected_action: action,
      rejected_alternatives: [],
      safety_validation: safety.reason ? { passed: safety.passed, reason: safety.reason } : { passed: safety.passed },
      trust_validation: { passed: trustPassed, trust_status: trustStatus },
      escalation_path: escalation,
      outcome: null,
      security: {
        entity_id: entityId,
        authority_scope: 'LocalEntity',
        policy_version: POLICY_VERSION,
        decision_tree_hash: hash,
        timestamp_ms: ctx.nowMs,
        nonce,
        signature: null,
        safety_validation_passed: safety.passed,
        trust_validation_passed: trustPassed,
        audit_record_id: null,
      },
    };
  };
  const chain = () => [
    { from_layer: 'local_entity', to_layer: 'group_fleet', pending_approval: false, escalation_id: `esc-${entityId}-0` },
    { from_layer: 'group_fleet', to_layer: 'control_center', pending_approval: true, escalation_id: `esc-${entityId}-1`, reason: 'HumanApprovalRequired' },
  ];

  // 1. Decision trees against the signals (condition text compared without whitespace: the program
  // keeps a re-spaced form, `lidar . nearest_distance < 0.5m`).
  const compact = (text: string) => text.replace(/\s+/g, '');
  const truth = new Set(Object.entries(signals).filter(([, v]) => v === true).map(([k]) => compact(k)));
  program.decisionTrees.forEach((tree, i) => {
    const rec = treeList[i]!;
    const mustVerify = rec.signature !== null || ctx.requireSignedTrees;
    if (mustVerify && !signatureMatches(ctx.trustKey, canonicalTreeText(tree), rec.signature)) {
      messages.push(`tree '${tree.name}' skipped: signature cannot be verified`);
      return;
    }
    const rule = tree.rules.find((r) => truth.has(compact(r.condition)) && r.actions.length > 0);
    if (!rule) return;
    const action = rule.actions.join(', ');
    const d = record('recovery', action, rec.tree_hash, []);
    decisions.push(d);
    messages.push(`tree '${tree.name}' matched condition '${rule.condition}' → [${rule.actions.join(', ')}]`);
    if (!(d.safety_validation as { passed: boolean }).passed) {
      passed = false;
      messages.push(`safety validation failed for '${action}': ${(d.safety_validation as { reason: string }).reason}`);
    }
  });

  // 2. Authority.
  const auth = auths.find((a) => a.entity_id === entityId);
  if (auth && (auth.requires_central_approval.includes(ACTION) || !auth.local_actions.includes(ACTION))) {
    passed = false;
    messages.push(`action '${ACTION}' requires central approval for entity '${entityId}'`);
    decisions.push(record('policy', ACTION, null, chain()));
  }

  // 3. Governance from the live registry (entities that carry governance metadata).
  const meta = registry?.metadata ?? {};
  if (Object.keys(meta).some((k) => k.startsWith('governance.'))) {
    const autonomy = (meta['governance.autonomy_level'] ?? 'manual').toLowerCase();
    const risk = (meta['governance.risk_level'] ?? 'negligible').toLowerCase();
    const reflex = REFLEX_WORDS.some((w) => ACTION.includes(w));
    const needsHuman = !reflex && (['high', 'critical', 'life_critical', 'mission_critical'].includes(risk) || ['manual', 'assisted'].includes(autonomy));
    if (needsHuman) {
      passed = false;
      messages.push(`Autonomy '${autonomy}' / risk '${risk}' requires human approval for autonomous actions`);
      decisions.push(record('policy', ACTION, null, chain()));
    }
  }
  if (!trustPassed) {
    passed = false;
    messages.push(`entity '${entityId}' is ${trustStatus}: trust validation failed`);
  }

  // 4. Offline policies.
  if (offlineMinutes > 0) {
    for (const p of policies) {
      if (p.max_duration_minutes !== null && offlineMinutes > p.max_duration_minutes) {
        passed = false;
        messages.push(`offline duration ${offlineMinutes}m exceeds max ${p.max_duration_minutes}m for policy '${p.name}'`);
      }
      if (p.forbidden_actions.includes(ACTION)) {
        passed = false;
        messages.push(`action '${ACTION}' forbidden while offline`);
      }
      if (p.allowed_actions.length > 0 && !p.allowed_actions.includes(ACTION)) {
        passed = false;
        messages.push(`action '${ACTION}' not in offline allowed list`);
      }
    }
  }
  // 5. The `default` offline policy is also the decision policy.
  const dflt = policies.find((p) => p.name === 'default');
  if (dflt && (dflt.forbidden_actions.includes(ACTION) || (dflt.allowed_actions.length > 0 && !dflt.allowed_actions.includes(ACTION)))) {
    passed = false;
    messages.push(`action '${ACTION}' not permitted by decision policy 'default'`);
  }
  if (!passed) notes.push('Simulation detected policy or authority violations');

  const policyCache = {
    entity_id: entityId,
    safety_rules: [...SAFETY_BOUNDARIES],
    recovery_playbooks: [],
    mission_constraints: [],
    trust_policy_version: '',
    capability_requirements: [],
    approval_rules: [],
    policies: Object.fromEntries(
      policies.map((p) => [p.name, { name: p.name, version: p.policy_version, layer: 'local_entity', allowed_actions: p.allowed_actions, forbidden_actions: p.forbidden_actions, signature: p.signature, expires_at_ms: p.expires_at_ms }]),
    ),
    last_sync_ms: 0,
    signature: null,
  };
  return {
    scenario,
    options: {
      offline,
      offline_minutes: offlineMinutes,
      network_partition: input.network_partition === true,
      fleet_coordinator_failure: input.fleet_coordinator_failure === true,
      entity_id: entityId,
      mission,
      signals,
    },
    report: {
      entity_id: entityId,
      mission,
      authorities: auths,
      trees: treeList,
      offline_policies: policies,
      decisions,
      policy_cache: policyCache,
      safety_boundaries: SAFETY_BOUNDARIES.map((action) => ({ action, max_layer: 'control_center', requires_approval: true, reason: 'safety boundary' })),
      passed,
      messages,
    },
    notes,
  };
}

/**
 * Escalation ids the program can raise (docs/decisions.md § Escalations): `esc-<robot>-1` for a robot
 * with actions that need central approval (or a tree action on a safety boundary), `esc-<robot>-local`
 * for a robot with a local decision authority.
 */
export function raisableEscalations(program: Program): Map<string, { entity_id: string; action: string; reason: string }> {
  const out = new Map<string, { entity_id: string; action: string; reason: string }>();
  const boundaryTree = program.decisionTrees.flatMap((t) => t.rules.flatMap((r) => r.actions)).find(isSafetyBoundary);
  for (const r of program.robots) {
    if (r.requiresCentralApproval.length > 0 || boundaryTree) {
      const action = r.requiresCentralApproval[0] ?? boundaryTree!;
      out.set(centralEscalationId(r.name), { entity_id: r.name, action, reason: `requires_central_approval [${r.requiresCentralApproval.join(', ')}]` });
    }
    if (r.localDecisionAuthority.length > 0) {
      out.set(localEscalationId(r.name), { entity_id: r.name, action: 'outside local authority', reason: `outside local_decision_authority [${r.localDecisionAuthority.join(', ')}]` });
    }
  }
  return out;
}
