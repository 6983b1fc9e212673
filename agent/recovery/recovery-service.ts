/**
 * The recovery orchestrator (docs/recovery.md): composes the program's heal analysis
 * (docs/program-language.md §12, through the program service) with the live entity registry,
 * `[recovery]` policies, playbooks, the telemetry store and the persisted evidence history. Forced
 * executions apply the effects this agent controls (device actions, recorded mission and fleet-agent
 * commands), time-stamp each phase as it happens and append the evidence to the history.
 */
import type { RecoveryBody } from '../../api/domains/recovery.js';
import { API_VERSION } from '../../api/versions.js';
import { ApiError } from '../core/errors.js';
import type { DeviceActionOutcome, DeviceActions } from '../devices/device-actions.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { EntityService } from '../entities/entity-service.js';
import type { EventBus } from '../events/event-bus.js';
import type { OperatorService } from '../operator/operator-service.js';
import { platformEvent } from '../events/platform-events.js';
import type { AlertService } from '../observability/alerts.js';
import type { HealReport } from '../programs/assurance/heal.js';
import { GATE_CAPABILITY, GATE_HARDWARE, GATE_SAFETY } from '../programs/assurance/heal.js';
import { classifyFailure, type FailureClassification } from '../programs/assurance/recovery-actions.js';
import type { ProgramService } from '../programs/program-service.js';
import type { JsonStore } from '../state/json-store.js';
import type { TelemetryStore } from '../telemetry/telemetry-store.js';
import {
  decide,
  failurePolicyKey,
  impactOf,
  keywordEntity,
  playbooks,
  recoverableKind,
  recoveryGraph,
  recoveryPolicies,
  registryIndicators,
  selectPlaybook,
  shouldTriggerPreventative,
  sortIndicators,
  strategyName,
  telemetryIndicators,
  type Indicator,
  type RecoveryDecision,
  type RecoveryGraph,
  type RecoveryPolicy,
  type Strategy,
} from './recovery-rules.js';
import { HISTORY_RING, type Evidence, type RecoveryEffect, type RecoveryFile, type TimelinePhase } from './recovery-store.js';

export const RECOVERY_EVENT_SOURCE = 'svc-recovery';
export const RECOVERY_ALERT_SOURCE = 'recovery-orchestrator';
/** How long a device reset or reconnect may take before the step counts as failed. */
const DEVICE_ACTION_TIMEOUT_MS = 10_000;
const HISTORY_SHOWN = 100;

export interface RecoveryServiceDeps {
  store: JsonStore<RecoveryFile>;
  entities: EntityService;
  programs: ProgramService;
  telemetry: TelemetryStore;
  devices: DeviceRegistry;
  alerts: AlertService;
  bus: EventBus;
  /** The devices domain's actions (reset, reconnect, failover, quarantine): device strategies act through them. */
  deviceActions: DeviceActions;
  /** The operator console's mission lifecycle: mission strategies pause the missions concerned through it. */
  operator: OperatorService;
  /** The merged configuration tree (`[recovery]` lives there), or null without a configuration. */
  configTree: () => Record<string, unknown> | null;
}

type Mode = 'plan' | 'simulate' | 'dry_run' | 'validate';

interface RegistryEntry {
  id: string;
  kind: string;
  name?: string | undefined;
  display_name?: string | undefined;
  parent_id?: string | undefined;
  health: string;
  trust: string;
  metadata: Record<string, string>;
  governance: Record<string, unknown> | null;
}

interface Registry {
  entries: RegistryEntry[];
  byId: Map<string, RegistryEntry>;
  relationships: Array<{ from_id: string; to_id: string; kind: string }>;
}

export interface PlanRecord {
  plan_id: string;
  entity_id: string;
  entity_kind: string;
  failure: string;
  classification: FailureClassification;
  diagnosis: string;
  strategies: Strategy[];
  escalation_level: string;
  decision: RecoveryDecision;
  legacy_plan: HealReport['plans'][number] | null;
  playbook: string | null;
  upstream_impact: string[];
  downstream_impact: string[];
  estimated_duration_secs: number;
  /** `history`: mean measured duration of the first strategy's recorded recoveries; `table`: heal actions × 30 s. */
  estimate_source: 'history' | 'table';
  risk: string;
}

/** Phase clock: each mark is stamped when it is taken; durations are the time since the previous mark. */
class PhaseClock {
  private last: number;
  readonly phases: TimelinePhase[] = [];
  constructor(readonly startedAt: number) {
    this.last = startedAt;
  }
  /** A clock that starts with the phases already taken and measures its next phase from now. */
  static continuing(startedAt: number, phases: readonly TimelinePhase[]): PhaseClock {
    const c = new PhaseClock(startedAt);
    c.phases.push(...phases.map((p) => ({ ...p })));
    c.last = Date.now();
    return c;
  }
  mark(phase: string, description: string): void {
    const now = Date.now();
    this.phases.push({ phase, description, timestamp: new Date(now).toISOString(), duration_ms: now - this.last });
    this.last = now;
  }
}

const byIdOrder = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const round2 = (x: number) => Math.round(x * 100) / 100;

export class RecoveryService {
  private seq = 0;

  constructor(private readonly deps: RecoveryServiceDeps) {}

  // -------------------------------------------------------------------------------------------
  // Inputs

  private async registry(): Promise<Registry> {
    await this.deps.programs.prepareFacts();
    const view = this.deps.entities.view();
    const entries = view.graph.list().map((e): RegistryEntry => {
      const s = view.status.status(e.id);
      return {
        id: e.id,
        kind: e.kind,
        name: e.name,
        display_name: e.display_name,
        parent_id: e.parent_id,
        health: s.health_status,
        trust: s.trust_status,
        metadata: e.metadata,
        governance: e.governance ?? null,
      };
    });
    entries.sort(byIdOrder);
    return { entries, byId: new Map(entries.map((e) => [e.id, e])), relationships: view.graph.relationships.map((r) => ({ from_id: r.from_id, to_id: r.to_id, kind: r.kind })) };
  }

  private policies(reg: Registry): RecoveryPolicy[] {
    return recoveryPolicies(this.deps.configTree(), reg.entries);
  }

  private get evidence(): readonly Evidence[] {
    return this.deps.store.data.history.evidence;
  }

  /** Mean measured duration (s) of the executed recoveries whose strategy is `strategy`, or null when none is recorded. */
  private measuredDuration(strategy: string): number | null {
    const runs = this.evidence.filter((e) => e.executed && e.strategy === strategy);
    if (runs.length === 0) return null;
    return round2(runs.reduce((s, e) => s + e.duration_secs, 0) / runs.length);
  }

  // -------------------------------------------------------------------------------------------
  // Reads

  history() {
    const history = this.evidence.slice(-HISTORY_SHOWN).reverse();
    return { version: API_VERSION, history, count: history.length };
  }

  async playbooks() {
    return { version: API_VERSION, playbooks: playbooks(this.deps.configTree()) };
  }

  async policiesView() {
    return { version: API_VERSION, policies: this.policies(await this.registry()) };
  }

  async graph(root: string | undefined) {
    const reg = await this.registry();
    return { version: API_VERSION, graph: this.graphOf(reg, root ?? null) };
  }

  private graphOf(reg: Registry, root: string | null): RecoveryGraph {
    return recoveryGraph({ entities: reg.entries, relationships: reg.relationships }, root);
  }

  async recoverableEntities() {
    const reg = await this.registry();
    const entities = reg.entries.filter((e) => recoverableKind(e.kind)).map((e) => ({ id: e.id, kind: e.kind, display_name: e.display_name ?? e.name ?? e.id }));
    return { version: API_VERSION, entities, count: entities.length };
  }

  /** Metrics from the recorded history only; knowledge-base entries are listed apart as priors (with a program). */
  async metrics() {
    let file: string | null = null;
    let knowledge: HealReport['knowledge']['entries'] = [];
    try {
      const analysis = await this.deps.programs.run('recoveryAnalysis', {});
      file = analysis.file;
      knowledge = analysis.legacy.knowledge.entries;
    } catch {
      // No (or an unreadable) server program: history metrics without priors and without `file`.
    }
    const metrics = this.metricsOf(knowledge);
    return file === null ? { version: API_VERSION, metrics } : { version: API_VERSION, file, metrics };
  }

  private metricsOf(knowledge: HealReport['knowledge']['entries']) {
    const history = this.evidence;
    const total = history.length;
    const successful = history.filter((e) => e.status === 'Success').length;
    const failed = history.filter((e) => e.status === 'Failed').length;
    const success_rate = total === 0 ? 0 : round2(successful / total);
    const groups = new Map<string, Evidence[]>();
    for (const e of history) groups.set(e.strategy, [...(groups.get(e.strategy) ?? []), e]);
    const most_effective_strategies = [...groups.entries()]
      .map(([strategy, runs]) => ({
        strategy,
        success_rate: round2(runs.filter((r) => r.status === 'Success').length / runs.length),
        average_duration_secs: round2(runs.reduce((s, r) => s + r.duration_secs, 0) / runs.length),
        usage_count: runs.length,
      }))
      .sort((a, b) => b.success_rate - a.success_rate || b.usage_count - a.usage_count || (a.strategy < b.strategy ? -1 : 1))
      .slice(0, 10);
    const pairs = new Map<string, { failure_pattern: string; entity_id: string; occurrence_count: number; last_seen: string }>();
    for (const e of history) {
      for (const id of e.entities_involved) {
        const key = `${e.root_cause}\u0000${id}`;
        const p = pairs.get(key);
        if (p) {
          p.occurrence_count += 1;
          if (e.timestamp > p.last_seen) p.last_seen = e.timestamp;
        } else pairs.set(key, { failure_pattern: e.root_cause, entity_id: id, occurrence_count: 1, last_seen: e.timestamp });
      }
    }
    const repeated_failures = [...pairs.values()].filter((p) => p.occurrence_count >= 2).sort((a, b) => b.occurrence_count - a.occurrence_count || a.entity_id.localeCompare(b.entity_id));
    const recovery_confidence = total === 0 ? 0 : round2(success_rate * 0.7 + (repeated_failures.length === 0 ? 0.3 : 0.1));
    const knowledge_priors = knowledge.map((k) => ({
      failure_pattern: k.failure,
      recovery_pattern: k.actions.join(' -> '),
      success_rate: k.success_rate,
      source: k.source,
    }));
    return {
      total_recoveries: total,
      successful_recoveries: successful,
      failed_recoveries: failed,
      success_rate,
      average_duration_secs: total === 0 ? 0 : round2(history.reduce((s, e) => s + e.duration_secs, 0) / total),
      most_effective_strategies,
      repeated_failures,
      recovery_confidence,
      knowledge_priors,
    };
  }

  // -------------------------------------------------------------------------------------------
  // Predictive

  async predictive(telemetry: Record<string, unknown> | undefined) {
    const reg = await this.registry();
    let indicators: Indicator[];
    if (telemetry !== undefined) {
      indicators = telemetryIndicators(telemetry, 'request', keywordEntity);
    } else {
      indicators = telemetryIndicators(this.storeTelemetry(), 'telemetry_store', (segments) => segments[0] ?? 'unknown');
    }
    indicators.push(...registryIndicators(reg.entries));
    sortIndicators(indicators);
    return { version: API_VERSION, indicators, should_trigger_preventative: shouldTriggerPreventative(indicators) };
  }

  /** `{<device_id>: {<metric>: latest value}}` from the device samples the telemetry store holds. */
  private storeTelemetry(): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const e of this.deps.telemetry.ring.all()) {
      if (e.kind !== 'device') continue;
      (out[e.device_id] ??= {})[e.metric] = e.value;
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Explain, recommend

  async explain(body: RecoveryBody) {
    const reg = await this.registry();
    const entityId = body.entity_id ?? reg.entries[0]?.id ?? 'system';
    const failure = body.failure ?? 'degraded';
    const entity = reg.byId.get(entityId);
    const policy = this.policies(reg).find((p) => p.entity_id === entityId) ?? null;
    const decision = entity ? decide(entity, failure, classifyFailure(failure), policy, reg.entries, (s) => this.measuredDuration(s)) : null;
    return { version: API_VERSION, entity_id: entityId, failure, decision };
  }

  /**
   * The knowledge entry for a failure (patterns containing one another), ranked by the success rate
   * learned from the recorded recoveries of that pattern; the entry's own rate is only a prior.
   */
  async recommend(body: RecoveryBody) {
    const failure = body.failure ?? 'degraded';
    const analysis = await this.deps.programs.run('recoveryAnalysis', body.file !== undefined ? { file: body.file } : {});
    const f = failure.toLowerCase();
    const contains = (a: string, b: string) => a.includes(b) || b.includes(a);
    const candidates = analysis.legacy.knowledge.entries
      .filter((k) => contains(k.failure.toLowerCase(), f))
      .map((k) => {
        const p = k.failure.toLowerCase();
        const runs = this.evidence.filter((e) => e.executed && (contains(e.root_cause.toLowerCase(), p) || contains(failurePolicyKey(e.root_cause), p)));
        const learned = runs.length > 0 ? round2(runs.filter((e) => e.status === 'Success').length / runs.length) : null;
        return {
          failure_pattern: k.failure,
          recovery_pattern: k.actions.join(' -> '),
          success_rate: learned ?? k.success_rate,
          rate_source: learned !== null ? ('history' as const) : k.success_rate !== null ? ('prior' as const) : ('none' as const),
          samples: runs.length,
          prior_success_rate: k.success_rate,
          recommendation: `For '${failure}': ${k.actions.join(', then ')}`,
        };
      })
      .sort((a, b) => (b.success_rate ?? -1) - (a.success_rate ?? -1));
    return { version: API_VERSION, file: analysis.file, failure, recommendation: candidates[0] ?? null };
  }

  // -------------------------------------------------------------------------------------------
  // Planning

  private targets(body: RecoveryBody, reg: Registry): Array<{ entity: RegistryEntry; failure: string }> {
    let pairs: Array<[string, string]>;
    if (body.failure !== undefined && body.entity_id !== undefined) pairs = [[body.entity_id, body.failure]];
    else if (body.failure !== undefined) {
      const recoverable = reg.entries.filter((e) => recoverableKind(e.kind));
      pairs = (recoverable.length > 0 ? recoverable : reg.entries).slice(0, 5).map((e) => [e.id, body.failure!]);
    } else if (body.entity_id !== undefined) pairs = [[body.entity_id, `${body.entity_id}_degraded`]];
    else pairs = reg.entries.slice(0, 5).map((e) => [e.id, `${e.id}_health_check`]);
    return pairs.flatMap(([id, failure]) => {
      const entity = reg.byId.get(id);
      return entity ? [{ entity, failure }] : [];
    });
  }

  private async planning(body: RecoveryBody, mode: Mode, clock: PhaseClock) {
    const reg = await this.registry();
    const targets = this.targets(body, reg);
    const request = { ...(body.file !== undefined ? { file: body.file } : {}), recovery_issues: targets.map((t) => t.failure), legacy_issue: body.failure !== undefined ? failurePolicyKey(body.failure) : null };
    const analysis = await this.deps.programs.run('recoveryAnalysis', request);
    clock.mark('diagnose', targets.length > 0 ? analysis.plans!.plans.map((p) => p.diagnosis).join('; ') : 'No known target');
    const policies = this.policies(reg);
    const allPlaybooks = playbooks(this.deps.configTree());
    const graph = this.graphOf(reg, body.entity_id ?? null);
    const plans = targets.map(({ entity, failure }, i): PlanRecord => {
      const heal = analysis.plans!.plans[i]!;
      const classification = classifyFailure(failure);
      const policy = policies.find((p) => p.entity_id === entity.id) ?? null;
      const decision = decide(entity, failure, classification, policy, reg.entries, (s) => this.measuredDuration(s));
      const playbook = selectPlaybook(allPlaybooks, failure, body.playbook);
      const strategies = playbook ? playbook.steps.map((s) => s.strategy) : [decision.recommended_strategy];
      const impact = impactOf(graph, entity.id);
      const measured = strategies.length > 0 ? this.measuredDuration(strategyName(strategies[0]!)) : null;
      return {
        plan_id: `plan-${entity.id}-${failure.replace(/ /g, '_')}`,
        entity_id: entity.id,
        entity_kind: entity.kind,
        failure,
        classification,
        diagnosis: heal.diagnosis,
        strategies,
        escalation_level: decision.recommended_level,
        decision,
        legacy_plan: heal,
        playbook: playbook?.name ?? null,
        upstream_impact: impact.upstream,
        downstream_impact: impact.downstream,
        estimated_duration_secs: measured ?? heal.actions.length * 30,
        estimate_source: measured === null ? 'table' : 'history',
        risk: heal.risk,
      };
    });
    clock.mark('plan', `${plans.length} plan(s): ${plans.map((p) => `${p.plan_id} with ${p.strategies.length} strategies`).join('; ') || 'none'}`);
    const predictive_indicators = sortIndicators(registryIndicators(plans.map((p) => reg.byId.get(p.entity_id)!)));
    const governance_notes = this.governanceNotes(plans, reg);
    return { reg, analysis, plans, predictive_indicators, governance_notes, mode };
  }

  private governanceNotes(plans: readonly PlanRecord[], reg: Registry): string[] {
    const notes = new Set<string>();
    for (const p of plans) {
      const g = reg.byId.get(p.entity_id)?.governance ?? null;
      const risk = typeof g?.['risk_level'] === 'string' ? (g['risk_level'] as string) : null;
      if (!risk || !['high', 'critical', 'life_critical', 'mission_critical'].includes(risk.toLowerCase())) continue;
      notes.add(`${p.entity_id}: Risk '${risk}' requires escalation contacts during recovery`);
      if (typeof g?.['escalation_contact'] === 'string') notes.add(`${p.entity_id}: escalate to ${g['escalation_contact'] as string}`);
      else if (typeof g?.['responsible_person'] === 'string') notes.add(`${p.entity_id}: escalate to responsible person ${g['responsible_person'] as string}`);
    }
    return [...notes].sort();
  }

  /** Validation gates of one plan (docs/recovery.md, "Validation gates"), from its heal result and the entity. */
  private gates(plan: PlanRecord, heal: HealReport, index: number, reg: Registry, policy: RecoveryPolicy | null) {
    const result = heal.results[index]!;
    const actions = result.actions;
    const gatePassed = (name: string) => actions.every((a) => a.gates.find((g) => g.gate === name)?.passed !== false);
    const rules = policy?.validation_rules ?? [];
    const trust = reg.byId.get(plan.entity_id)?.trust ?? 'unknown';
    const recoveryReady = result.status !== 'Unsafe' && result.status !== 'Failed' && heal.mode_issues.length === 0;
    return [
      { gate: 'health_verification', passed: rules.length === 0 || (rules.includes('health') && gatePassed(GATE_HARDWARE)) },
      { gate: 'capability_verification', passed: actions.length === 0 || gatePassed(GATE_CAPABILITY) },
      { gate: 'hardware_verification', passed: actions.length === 0 || gatePassed(GATE_HARDWARE) },
      { gate: 'readiness_verification', passed: recoveryReady },
      { gate: 'trust_verification', passed: trust !== 'untrusted' && trust !== 'compromised' },
      { gate: 'security_verification', passed: gatePassed(GATE_SAFETY) },
      { gate: 'mission_validation', passed: plan.classification !== 'MissionFailure' || actions.some((a) => a.executed) },
    ];
  }

  private evidenceOf(
    plan: PlanRecord,
    gates: Array<{ gate: string; passed: boolean }>,
    clock: PhaseClock,
    outcome: { executed: boolean; status: Evidence['status']; effects: RecoveryEffect[] },
  ): Evidence {
    const d = plan.decision;
    const finished = Date.now();
    this.seq += 1;
    return {
      evidence_id: `rcv-${finished}-${this.seq}`,
      plan_id: plan.plan_id,
      entity_id: plan.entity_id,
      root_cause: plan.failure,
      strategy: plan.strategies.length > 0 ? strategyName(plan.strategies[0]!) : strategyName(d.recommended_strategy),
      timeline: clock.phases.map((p) => ({ ...p })),
      entities_involved: [...new Set([plan.entity_id, ...plan.upstream_impact, ...plan.downstream_impact])].sort(),
      safety_validation: gates.find((g) => g.gate === 'security_verification')?.passed ? 'PASS' : 'FAIL',
      readiness_result: gates.find((g) => g.gate === 'readiness_verification')?.passed ? 'recovery_ready' : 'not_ready',
      trust_result: gates.find((g) => g.gate === 'trust_verification')?.passed ? 'PASS' : 'FAIL',
      operator_actions: d.is_authorized && !d.automatic ? ['Operator approval recorded'] : [],
      automatic_decisions: [...d.explanations, ...(d.automatic ? ['Automatic recovery authorized'] : [])],
      mission_impact: `disruption_score=${d.mission_disruption_score} upstream=${plan.upstream_impact.length} downstream=${plan.downstream_impact.length}`,
      validation_gates: gates,
      effects: outcome.effects,
      executed: outcome.executed,
      // Executed: the measured time from the request to the end of the last effect. Otherwise the plan estimate.
      duration_secs: outcome.executed ? (finished - clock.startedAt) / 1000 : plan.estimated_duration_secs,
      status: outcome.status,
      timestamp: new Date(finished).toISOString(),
    };
  }

  private report(
    planned: Awaited<ReturnType<RecoveryService['planning']>>,
    evidence: Evidence[],
    mode: Mode,
    extraPassed = true,
  ) {
    const { plans, analysis, predictive_indicators, governance_notes } = planned;
    const passed = plans.length > 0 && plans.every((p) => p.decision.can_recover && p.decision.is_safe) && !evidence.some((e) => e.status === 'Failed') && extraPassed;
    return {
      plans,
      evidence,
      metrics: this.metricsOf(analysis.legacy.knowledge.entries),
      predictive_indicators,
      legacy_report: analysis.legacy,
      simulation_mode: mode,
      passed,
      ...(governance_notes.length > 0 ? { governance_notes } : {}),
    };
  }

  /** plan / simulate / validate (dry run): nothing is executed, nothing is stored. */
  async evaluate(body: RecoveryBody, mode: 'plan' | 'simulate' | 'dry_run') {
    const clock = new PhaseClock(Date.now());
    clock.mark('detect', `Detected failure: ${body.failure ?? 'health check'}`);
    const planned = await this.planning(body, mode, clock);
    let evidence: Evidence[] = [];
    if (mode !== 'plan') {
      const policies = this.policies(planned.reg);
      const perPlan = planned.plans.map((plan, i) => this.gates(plan, planned.analysis.plans!, i, planned.reg, policies.find((p) => p.entity_id === plan.entity_id) ?? null));
      clock.mark('validate', 'Validation gates executed');
      clock.mark('complete', 'Evaluation completed (nothing executed)');
      evidence = planned.plans.map((plan, i) =>
        this.evidenceOf(plan, perPlan[i]!, clock, { executed: false, status: perPlan[i]!.every((g) => g.passed) ? 'Success' : 'Failed', effects: [] }),
      );
    }
    return { version: API_VERSION, file: planned.analysis.file, report: this.report(planned, evidence, mode) };
  }

  async listPlans() {
    const r = await this.evaluate({}, 'plan');
    return { version: API_VERSION, file: r.file, plans: r.report.plans, passed: r.report.passed };
  }

  // -------------------------------------------------------------------------------------------
  // Execute

  async execute(body: RecoveryBody) {
    if (body.force_execute !== true) return this.evaluate(body, 'plan');
    // An action names what it acts on: an unknown entity is refused, not silently skipped (docs/recovery.md).
    if (body.entity_id !== undefined && !(await this.registry()).byId.has(body.entity_id)) {
      throw new ApiError(400, 'not_found', `entity '${body.entity_id}' not found`);
    }
    const started = Date.now();
    const clock = new PhaseClock(started);
    clock.mark('detect', `Detected failure: ${body.failure ?? 'health check'}`);
    const planned = await this.planning(body, 'validate', clock);
    const policies = this.policies(planned.reg);
    const heal = planned.analysis.plans;
    const created: Evidence[] = [];
    for (const [i, plan] of planned.plans.entries()) {
      if (!plan.decision.should_recover || !heal) continue;
      // Each plan gets its own timeline from here, continuing the request's shared phases.
      const own = PhaseClock.continuing(started, clock.phases);
      this.deps.bus.publish(platformEvent('RecoveryTriggered', RECOVERY_EVENT_SOURCE, { plan_id: plan.plan_id, failure: plan.failure, strategy: strategyName(plan.strategies[0] ?? plan.decision.recommended_strategy) }, plan.entity_id));
      const gates = this.gates(plan, heal, i, planned.reg, policies.find((p) => p.entity_id === plan.entity_id) ?? null);
      own.mark('validate', `Validation gates executed: ${gates.filter((g) => g.passed).length}/${gates.length} passed`);
      const healStatus = heal.results[i]!.status;
      const { effects, status } = await this.applyEffects(plan, healStatus, planned.reg);
      own.mark('execute', effects.length === 0 ? `Nothing applied (heal gates: ${healStatus})` : effects.map((e) => `${e.action} ${e.target}: ${e.ok ? 'ok' : 'failed'}`).join('; '));
      own.mark('complete', `Recovery ${status === 'Success' ? 'completed' : 'ended'} — status ${status}, risk ${plan.risk}`);
      const evidence = this.evidenceOf(plan, gates, own, { executed: true, status, effects });
      created.push(evidence);
      this.deps.store.change((d) => {
        d.history.evidence.push(evidence);
        if (d.history.evidence.length > HISTORY_RING) d.history.evidence.splice(0, d.history.evidence.length - HISTORY_RING);
      });
      const ok = evidence.status === 'Success';
      this.deps.bus.publish(platformEvent(ok ? 'RecoveryCompleted' : 'RecoveryFailed', RECOVERY_EVENT_SOURCE, { evidence_id: evidence.evidence_id, status: evidence.status }, plan.entity_id));
      if (!ok) {
        this.deps.alerts.raise({
          alert_type: 'recovery_failed',
          severity: evidence.status === 'Unsafe' ? 'critical' : 'warning',
          message: `Recovery ${evidence.evidence_id} of '${plan.entity_id}' for '${plan.failure}' ended ${evidence.status}`,
          source: RECOVERY_ALERT_SOURCE,
        });
      }
    }
    return { version: API_VERSION, file: planned.analysis.file, report: this.report(planned, created, 'validate') };
  }

  /**
   * The effects of one plan. Heal gates blocked everything (Failed): nothing is applied. Unsafe: a
   * device target is quarantined. Otherwise the plan's strategies are tried in order until one
   * effect succeeds: device strategies through the device actions, mission strategies as a pause of
   * the missions concerned through the operator service, anything else as a command record for the
   * robot's fleet agent.
   */
  private async applyEffects(plan: PlanRecord, healStatus: Evidence['status'], reg: Registry) {
    const effects: RecoveryEffect[] = [];
    const device = this.deps.devices.get(plan.entity_id);
    if (healStatus === 'Failed') return { effects, status: 'Failed' as const };
    if (healStatus === 'Unsafe') {
      if (device) effects.push(await this.deviceEffect('quarantine', 'quarantine', device.id, `unsafe recovery for '${plan.failure}'`));
      return { effects, status: 'Unsafe' as const };
    }
    for (const strategy of plan.strategies.map(strategyName)) {
      const effect = device ? await this.deviceStrategy(strategy, device.id, plan) : await this.recordedCommand(strategy, plan, reg);
      if (!effect) continue;
      effects.push(effect);
      if (effect.ok) break;
    }
    if (effects.length === 0) effects.push(this.fleetAgentCommand(strategyName(plan.decision.recommended_strategy), plan, reg, device?.assigned_robot ?? device?.robot_id ?? null));
    const anyOk = effects.some((e) => e.ok);
    return { effects, status: anyOk ? healStatus : ('Failed' as const) };
  }

  private async deviceStrategy(strategy: string, deviceId: string, plan: PlanRecord): Promise<RecoveryEffect | null> {
    const reason = `recovery ${plan.plan_id}`;
    switch (strategy) {
      case 'retry':
      case 'reconnect':
        return this.deviceEffect(strategy, 'reconnect', deviceId, reason);
      case 'reinitialize':
      case 'restart_device':
        return this.deviceEffect(strategy, 'reset', deviceId, reason);
      case 'switch_sensor':
      case 'switch_hardware':
        return this.deviceEffect(strategy, 'failover', deviceId, reason);
      default:
        return null;
    }
  }

  private async deviceEffect(strategy: string, action: DeviceActionOutcome['action'], deviceId: string, reason: string): Promise<RecoveryEffect> {
    const started = Date.now();
    const actions = this.deps.deviceActions;
    try {
      const out =
        action === 'reset' ? await actions.reset(deviceId, DEVICE_ACTION_TIMEOUT_MS)
        : action === 'reconnect' ? await actions.reconnect(deviceId, DEVICE_ACTION_TIMEOUT_MS)
        : action === 'failover' ? await actions.failover(deviceId, reason)
        : await actions.quarantine(deviceId, reason);
      return {
        strategy,
        kind: 'device_action',
        action,
        target: deviceId,
        ok: out.ok,
        detail: out.detail,
        started_at: new Date(out.started_at_ms).toISOString(),
        duration_ms: out.duration_ms,
        ...(out.backup_id !== undefined ? { backup_id: out.backup_id } : {}),
      };
    } catch (error) {
      return { strategy, kind: 'device_action', action, target: deviceId, ok: false, detail: (error as Error).message, started_at: new Date(started).toISOString(), duration_ms: Date.now() - started };
    }
  }

  /**
   * Mission strategies pause the missions concerned (the mission itself, or those the entity
   * `participates_in`) through the operator service, as recovery (actor `recovery`): the entity
   * lifecycle and the `MissionPaused` event are the operator service's. The effect is ok when every
   * mission was paused; a refusal (a mission whose state allows no pause, 409) is the detail.
   * Anything else is a command record for the robot's fleet agent.
   */
  private async recordedCommand(strategy: string, plan: PlanRecord, reg: Registry): Promise<RecoveryEffect> {
    if (strategy === 'transfer_mission' || strategy === 'delegate_mission' || strategy === 'takeover_mission') {
      const started = Date.now();
      const missions = plan.entity_kind === 'mission' ? [plan.entity_id] : reg.relationships.filter((r) => r.from_id === plan.entity_id && r.kind === 'participates_in').map((r) => r.to_id).sort();
      const backup = plan.decision.backup_entity_id;
      const outcomes: Array<{ id: string; ok: boolean; text: string }> = [];
      for (const id of missions) {
        try {
          const r = await this.deps.operator.pauseMission(id, 'recovery', `recovery ${plan.plan_id}: ${strategy} for '${plan.failure}'`);
          outcomes.push({ id, ok: true, text: `${id} paused (${r.mission_state})` });
        } catch (error) {
          const status = error instanceof ApiError ? ` (${error.status})` : '';
          outcomes.push({ id, ok: false, text: `${id} not paused${status}: ${(error as Error).message}` });
        }
      }
      const ok = outcomes.length > 0 && outcomes.every((o) => o.ok);
      return {
        strategy,
        kind: 'mission_command',
        action: 'pause',
        target: missions.join(',') || plan.entity_id,
        ok,
        detail:
          outcomes.length > 0
            ? `${outcomes.map((o) => o.text).join('; ')}; ${backup ? `backup ${backup}` : 'no backup available'}`
            : `no mission linked to '${plan.entity_id}'`,
        started_at: new Date(started).toISOString(),
        duration_ms: Date.now() - started,
        backup_id: backup,
      };
    }
    const e = reg.byId.get(plan.entity_id);
    const robot = plan.entity_kind === 'robot' ? plan.entity_id : (e?.metadata['robot'] ?? e?.parent_id ?? null);
    return this.fleetAgentCommand(strategy, plan, reg, robot);
  }

  private fleetAgentCommand(strategy: string, plan: PlanRecord, _reg: Registry, robot: string | null): RecoveryEffect {
    const started = Date.now();
    return {
      strategy,
      kind: 'fleet_agent_command',
      action: strategy,
      target: robot ?? plan.entity_id,
      ok: true,
      detail: `command '${strategy}' for '${plan.entity_id}' recorded for the fleet agent of ${robot ? `robot '${robot}'` : `'${plan.entity_id}'`}; delivery is the fleet agent's`,
      started_at: new Date(started).toISOString(),
      duration_ms: Date.now() - started,
    };
  }

  flush(): Promise<void> {
    return this.deps.store.flush();
  }

  close(): Promise<void> {
    return this.deps.store.close();
  }
}
