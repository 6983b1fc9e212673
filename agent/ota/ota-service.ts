import fs from 'node:fs';
import path from 'node:path';
import type { OtaBody } from '../../api/domains/ota.js';
import { API_VERSION } from '../../api/versions.js';
import { badRequest, conflict } from '../core/errors.js';
import type { DeviceHub } from '../devices/device-hub.js';
import type { DevicePool } from '../devices/device-pool.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import { sha256Hex } from '../devices/firmware-flash.js';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { AlertService } from '../observability/alerts.js';
import { DeployAgentRegistry } from '../operator/deploy-agents.js';
import type { OutboundHttp } from '../outbound/outbound-http.js';
import { parseSource } from '../programs/program-files.js';
import type { Program } from '../programs/language/ast.js';
import type { JsonStore } from '../state/json-store.js';
import type { OtaSettings } from '../settings/settings.js';
import { canonicalBundle, signBundle } from './bundle.js';
import { HISTORY_LIMIT, type ActiveRollout, type DeployState, type RolloutResult, type RolloutStep } from './ota-store.js';
import { assignmentsOf, certificationProof, certificationsOf, normalizeStrategy, schedule, type CertificationProof, type Schedule, type Strategy } from './plan.js';
import { FirmwareDeviceTarget, firmwareDevices, RemoteAgentTarget, unknownDevices, type RolloutTarget } from './targets.js';

export const OTA_EVENT_SOURCE = 'svc-ota';

export interface OtaDeps {
  settings: { stateDir: string; deployAgentsFile: string; ota: OtaSettings };
  /** The served program's path now (a rollout received by this agent may have switched it). */
  programPath: () => string | null;
  devices: DeviceRegistry;
  devicePool: DevicePool;
  deviceHub: DeviceHub;
  alerts: AlertService;
  bus: EventBus;
  outbound: OutboundHttp;
  deployState: JsonStore<DeployState>;
  rolloutStore: JsonStore<{ rollout: ActiveRollout | null }>;
}

/** The internal deploy plan (never returned as such). */
interface DeployPlan {
  program: string;
  source: string | null;
  version: string;
  program_hash: string | null;
  assignments: { robot_name: string; hardware: string }[];
  certifications: string[];
  certification_proof: CertificationProof | null;
}

const GATE_MISSING = 'Deploy plan missing certification proof summary';

type Body = OtaBody & { strategy: string; version: string };

/** The two required fields, with the reference's decoder wording when one is absent. */
function required(body: OtaBody): Body {
  for (const field of ['strategy', 'version'] as const) {
    if (body[field] === undefined) throw badRequest(`missing field \`${field}\``);
  }
  if (body.version === '') throw badRequest("invalid field 'version': must not be empty");
  return body as Body;
}

/** The body's configuration files with the digest the bundle signs (undefined when there are none). */
function configFilesOf(body: OtaBody): { path: string; sha256: string; content: string }[] | undefined {
  const files = body.config_files ?? [];
  return files.length > 0 ? files.map((f) => ({ path: f.path, sha256: sha256Hex(f.content), content: f.content })) : undefined;
}

/**
 * OTA rollouts as the control center runs them (docs/operations.md § Rollouts): plans with their
 * certification gate, and executions batch by batch with readiness gates, halting and rollback,
 * persisted after every step. The deploy-target side (`/v1/rollout` …) is `target-service.ts`.
 */
export class OtaService {
  private running = false;

  constructor(private readonly deps: OtaDeps) {
    // A rollout still marked running was cut short by a restart of this agent: report, never resume.
    const r = deps.rolloutStore.data.rollout;
    if (r && r.status === 'running') {
      deps.rolloutStore.change((d) => {
        const x = d.rollout!;
        x.status = 'interrupted';
        x.finished_at_ms = null;
        x.halted = true;
        x.halt_reason = 'the agent restarted while the rollout was running';
        for (const s of x.rollout.steps) if (s.status === 'pending' || s.status === 'in_progress') s.status = 'interrupted';
        x.rollout.success = false;
      });
    }
  }

  status() {
    const s = this.deps.deployState.data;
    return { version: API_VERSION, state: { current_version: s.current_version, previous_version: s.previous_version, history: s.history }, rollout: this.deps.rolloutStore.data.rollout };
  }

  private requireCertify(body: Body): boolean {
    const o = this.deps.settings.ota;
    return body.require_certify === true || o.requireCertify || o.productionPolicy;
  }

  /** §4.2: program label, source and hash, assignments and certifications from the program, the proof and the gate. */
  private buildPlan(body: Body): DeployPlan {
    const plan: DeployPlan = { program: 'control-center', source: null, version: body.version, program_hash: null, assignments: [...(body.assignments ?? [])], certifications: [], certification_proof: null };
    const file = this.deps.programPath();
    if (file) {
      let source: string;
      try {
        source = fs.readFileSync(file, 'utf8');
      } catch (err) {
        throw badRequest(`read ${path.basename(file)} failed: ${(err as Error).message}`);
      }
      const program: Program = parseSource(source, file);
      plan.program = path.basename(file);
      plan.source = source;
      plan.program_hash = sha256Hex(source);
      if (plan.assignments.length === 0) plan.assignments = assignmentsOf(program);
      plan.certifications = certificationsOf(program);
      plan.certification_proof = certificationProof(program);
    }
    if (this.requireCertify(body)) {
      if (!plan.certification_proof) throw badRequest(GATE_MISSING);
      if (!plan.certification_proof.passed_strict) throw badRequest(`Deploy blocked — strict certification proof failed: ${plan.certification_proof.summary}`);
    }
    return plan;
  }

  private proofSummary(plan: DeployPlan) {
    const p = plan.certification_proof;
    return p ? { passed: p.passed, passed_strict: p.passed_strict, summary: p.summary, error_count: p.error_count, warning_count: p.warning_count } : null;
  }

  private firmwareImage(body: Body): Uint8Array | null {
    if (!body.firmware) return null;
    const image = Buffer.from(body.firmware.image_base64, 'base64');
    if (image.length === 0) throw badRequest('firmware.image_base64 decodes to an empty image');
    return new Uint8Array(image);
  }

  /** Local firmware rollout: a `firmware` body without explicit assignments targets this agent's devices. */
  private isLocalFirmware(body: Body): boolean {
    return body.firmware !== undefined && (body.assignments ?? []).length === 0;
  }

  /** Configuration files travel to deploy agents only: a local firmware rollout has no project to write them into. */
  private checkConfigFiles(body: Body): void {
    if ((body.config_files ?? []).length > 0 && this.isLocalFirmware(body)) {
      throw badRequest('config_files go to deploy agents; a firmware rollout to this agent\'s devices takes none (add assignments)');
    }
  }

  private selection(body: Body): NonNullable<OtaBody['firmware']> {
    const fw = body.firmware!;
    if (!fw.device_type && !(fw.device_ids && fw.device_ids.length > 0)) throw badRequest('firmware needs device_type or device_ids to choose the devices');
    const unknown = unknownDevices(this.deps.devices, fw);
    if (unknown.length > 0) throw badRequest(`firmware.device_ids: unknown device '${unknown[0]}'`);
    return fw;
  }

  private targetsOf(body: Body, plan: DeployPlan, image: Uint8Array | null): RolloutTarget[] {
    const d = this.deps;
    if (this.isLocalFirmware(body)) {
      const fw = this.selection(body);
      const fdeps = { deviceHub: d.deviceHub, devices: d.devices, devicePool: d.devicePool, alerts: d.alerts, stateDir: d.settings.stateDir };
      return firmwareDevices(d.devices, fw).map((dev) => new FirmwareDeviceTarget(dev, fdeps, image ?? new Uint8Array(), fw.version));
    }
    const registry = new DeployAgentRegistry(d.settings.deployAgentsFile);
    const bundle = this.bundleFor(plan, body, image);
    const q = [body.readiness_runtime ? 'runtime=true' : '', body.readiness_inject_faults ? 'inject_health_faults=true' : ''].filter(Boolean).join('&');
    return plan.assignments.map((a) => new RemoteAgentTarget(a.robot_name, a.hardware, registry.find(`${a.robot_name}@${a.hardware}`), d.outbound, bundle, q ? `?${q}` : ''));
  }

  /** The body sent to deploy agents: the signed canonical bundle (source text, not a path) plus unsigned extras. */
  private bundleFor(plan: DeployPlan, body: Body, image: Uint8Array | null): Record<string, unknown> {
    const firmware = body.firmware && image
      ? [{ version: body.firmware.version, image_sha256: sha256Hex(image), ...(body.firmware.device_type ? { device_type: body.firmware.device_type } : {}), ...(body.firmware.device_ids ? { device_ids: body.firmware.device_ids } : {}) }]
      : undefined;
    const configFiles = configFilesOf(body);
    const canonical = canonicalBundle({ version: plan.version, program: plan.source, program_hash: plan.program_hash, assignments: plan.assignments, certifications: plan.certifications, firmware, config_files: configFiles });
    const key = this.deps.settings.ota.signingKey;
    let sig: { artifact_signature: string | null; artifact_public_key: string | null } = { artifact_signature: null, artifact_public_key: null };
    if (key) {
      try {
        sig = signBundle(canonical, key);
      } catch (err) {
        throw badRequest((err as Error).message);
      }
    }
    return {
      ...canonical,
      ...(canonical.firmware ? { firmware: canonical.firmware.map((f) => ({ ...f, image_base64: Buffer.from(image!).toString('base64') })) } : {}),
      ...(canonical.config_files ? { config_files: configFiles } : {}),
      program_label: plan.program,
      certification_proof: this.proofSummary(plan),
      ...sig,
      packages: [],
    };
  }

  private stepsFor(targets: { robot_name: string; hardware: string; key: string; device_id?: string }[], sched: Schedule, version: string, pendingOnly: boolean): RolloutStep[] {
    return targets.map((t, i) => {
      const s = sched.steps[i]!;
      const step: RolloutStep = {
        robot_name: t.robot_name,
        hardware: t.hardware,
        status: pendingOnly ? (s.inSubset ? 'pending' : 'skipped') : s.batch !== null ? 'pending' : 'skipped',
        version,
        phase_percent: s.phase_percent,
        batch: s.batch,
        target: t.key,
      };
      if (t.device_id) step.device_id = t.device_id;
      return step;
    });
  }

  private rolloutShell(strategy: Strategy, body: Body, steps: RolloutStep[], sched: Schedule): RolloutResult {
    return {
      strategy,
      version: body.version,
      dry_run: body.dry_run === true,
      steps,
      success: !steps.some((s) => s.status === 'failed'),
      // Additive: the schedule a client can show.
      phases: sched.phases,
      batches: sched.batches.map((b) => ({ index: b.index, phase_percent: b.phase_percent, targets: b.steps.length, ...(b.condition ? { condition: b.condition } : {}) })),
      // Additive (docs/operations.md § Strategies): the batch gate and the disruption bound the execution applies.
      success_threshold: body.success_threshold ?? 1,
      disruption_budget: body.disruption_budget ?? null,
    };
  }

  private emit(plan: DeployPlan, name: 'OtaRolloutStarted' | 'OtaRolloutCompleted', payload: Record<string, unknown>): void {
    const fleet = `ota/${plan.program}`;
    this.deps.bus.publish(platformEvent(name, OTA_EVENT_SOURCE, { fleet_id: fleet, ...payload }, fleet));
  }

  private emitCompleted(plan: DeployPlan, r: RolloutResult): void {
    this.emit(plan, 'OtaRolloutCompleted', {
      artifact: r.version,
      status: r.success ? 'success' : 'failed',
      deployed_targets: r.steps.filter((s) => s.status === 'deployed' || s.status === 'pending').length,
      step_count: r.steps.length,
      dry_run: r.dry_run,
    });
  }

  /** Plan targets without touching any: agents of the plan, or the local devices of a firmware rollout. */
  private planTargets(body: Body, plan: DeployPlan) {
    if (this.isLocalFirmware(body)) {
      const fw = this.selection(body);
      return firmwareDevices(this.deps.devices, fw).map((d) => ({ robot_name: d.assigned_robot ?? d.robot_id ?? d.id, hardware: d.device_type ?? 'device', key: `device:${d.id}`, device_id: d.id }));
    }
    return plan.assignments.map((a) => ({ ...a, key: `${a.robot_name}@${a.hardware}` }));
  }

  /** `POST /v1/ota/plan` (and execute's dry run): §4.2–§4.3, steps `pending`, events Started + Completed. */
  plan(raw: OtaBody) {
    const body = required(raw);
    const strategy = normalizeStrategy(body.strategy);
    const plan = this.buildPlan(body);
    this.firmwareImage(body);
    this.checkConfigFiles(body);
    const targets = this.planTargets(body, plan);
    const sched = schedule(targets.length, strategy, { canaryPercent: body.canary_percent, phases: body.phases, promote: body.canary_promote });
    const version = body.firmware && this.isLocalFirmware(body) ? body.firmware.version : body.version;
    const rollout = this.rolloutShell(strategy, body, this.stepsFor(targets, sched, version, true), sched);
    this.emit(plan, 'OtaRolloutStarted', { artifact: body.version, targets: targets.length, strategy, dry_run: rollout.dry_run });
    this.emitCompleted(plan, rollout);
    const configFiles = configFilesOf(body)?.map((f) => ({ path: f.path, sha256: f.sha256 }));
    return { version: API_VERSION, rollout, require_certify: this.requireCertify(body), certification_proof: this.proofSummary(plan), program: plan.program, program_hash: plan.program_hash, ...(configFiles ? { config_files: configFiles } : {}) };
  }

  /** `POST /v1/ota/execute`. */
  async execute(raw: OtaBody) {
    const body = required(raw);
    if (body.dry_run === true) {
      const planned = this.plan(body);
      return { version: API_VERSION, dry_run: true, rollout: planned.rollout };
    }
    if (this.running) throw conflict('an OTA rollout is already running on this agent');
    const strategy = normalizeStrategy(body.strategy);
    const plan = this.buildPlan(body);
    const image = this.firmwareImage(body);
    this.checkConfigFiles(body);
    const targets = this.targetsOf(body, plan, image);
    const sched = schedule(targets.length, strategy, { canaryPercent: body.canary_percent, phases: body.phases, promote: body.canary_promote });
    const version = body.firmware && this.isLocalFirmware(body) ? body.firmware.version : body.version;
    const rollout = this.rolloutShell(strategy, body, this.stepsFor(targets, sched, version, false), sched);
    this.running = true;
    const started = Date.now();
    const active: ActiveRollout = {
      id: `ota-${started}`,
      status: 'running',
      kind: this.isLocalFirmware(body) ? 'firmware' : 'agents',
      program: plan.program,
      started_at_ms: started,
      finished_at_ms: null,
      halted: false,
      halt_reason: null,
      completed_steps: 0,
      rollout,
    };
    try {
      await this.save(active);
      this.emit(plan, 'OtaRolloutStarted', { artifact: body.version, targets: targets.length, strategy, dry_run: false });
      try {
        await this.runBatches(active, targets, sched, body, strategy);
      } catch (err) {
        // Unexpected (a target's code threw): the rollout stops here, recorded as halted, never left "running".
        active.halted = true;
        active.halt_reason = `rollout stopped by an error: ${(err as Error).message}`;
        for (const s of rollout.steps) if (s.status === 'pending' || s.status === 'in_progress') Object.assign(s, { status: 'failed', detail: active.halt_reason });
      }
      // Every processed step ended deployed; skipped steps do not count against it.
      rollout.success = rollout.steps.every((s) => s.status === 'deployed' || s.status === 'skipped');
      active.status = rollout.success ? 'succeeded' : 'failed';
      active.finished_at_ms = Date.now();
      if (rollout.success) this.applyDeployState(rollout);
      if (active.halted) {
        // A halted rollout reaches the alert pipeline (and its channels): someone should look at the fleet.
        const back = rollout.steps.filter((s) => s.status === 'rolled_back').length;
        this.deps.alerts.raise({
          alert_type: 'readiness_failed',
          severity: 'warning',
          source: OTA_EVENT_SOURCE,
          message: `OTA rollout ${active.id} (${rollout.version}, ${strategy}) halted: ${active.halt_reason}; ${back} target(s) rolled back`,
        });
      }
      await this.save(active);
      if (rollout.success) {
        try {
          await this.deps.deployState.commit();
        } catch (err) {
          throw badRequest((err as Error).message);
        }
      }
      this.emitCompleted(plan, rollout);
      return { version: API_VERSION, executed: true, rollout, rollout_id: active.id, duration_ms: active.finished_at_ms - started, halted: active.halted, halt_reason: active.halt_reason };
    } finally {
      this.running = false;
    }
  }

  private async save(active: ActiveRollout): Promise<void> {
    active.completed_steps = active.rollout.steps.filter((s) => !['pending', 'in_progress', 'skipped'].includes(s.status)).length;
    this.deps.rolloutStore.replace({ rollout: structuredClone(active) });
    await this.deps.rolloutStore.commit();
  }

  private async runBatches(active: ActiveRollout, targets: RolloutTarget[], sched: Schedule, body: Body, strategy: Strategy): Promise<void> {
    const steps = active.rollout.steps;
    const threshold = body.success_threshold ?? 1;
    const budget = body.disruption_budget ?? null;
    const rollbackOnFail = body.rollback_on_readiness_fail === true || this.deps.settings.ota.rollbackOnReadinessFail;
    const updated = new Set<number>();
    let failures = 0;
    const halt = async (reason: string, from: number) => {
      active.halted = true;
      active.halt_reason = reason;
      for (const b of sched.batches.slice(from)) for (const i of b.steps) if (steps[i]!.status === 'pending') Object.assign(steps[i]!, { status: 'skipped', detail: 'rollout halted' });
      await this.save(active);
      if (!rollbackOnFail) return;
      // Roll back every target this rollout updated (earlier batches included), newest first.
      for (const i of [...updated].reverse()) {
        const r = await targets[i]!.rollback();
        Object.assign(steps[i]!, r.ok ? { status: 'rolled_back', detail: r.detail } : { status: 'failed', detail: `rollback failed: ${r.detail}` });
        await this.save(active);
      }
    };
    for (let bi = 0; bi < sched.batches.length; bi++) {
      const batch = sched.batches[bi]!;
      // Phase 1: update, at most `budget` targets down at once.
      const queue = [...batch.steps];
      let stopByBudget = false;
      const worker = async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const step = steps[i]!;
          if (stopByBudget) {
            Object.assign(step, { status: 'skipped', detail: 'disruption budget exhausted' });
            continue;
          }
          step.status = 'in_progress';
          await this.save(active);
          const t0 = Date.now();
          const r = await targets[i]!.update();
          step.duration_ms = Date.now() - t0;
          if (r.ok) {
            updated.add(i);
            // Took the update; its readiness is measured once the whole batch is through.
            step.status = 'updated';
            step.detail = r.detail;
          } else {
            failures += 1;
            Object.assign(step, { status: 'failed', detail: r.detail });
            if (r.version) step.version = r.version;
            if (budget !== null && failures >= budget) stopByBudget = true;
          }
          await this.save(active);
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(batch.steps.length, budget ?? batch.steps.length)) }, worker));
      // Phase 2: readiness re-measured for every target of the batch that took the update.
      for (const i of batch.steps) {
        const step = steps[i]!;
        if (step.status !== 'updated') continue;
        const readiness = await targets[i]!.readiness();
        step.readiness = readiness;
        if (readiness.ready) step.status = 'deployed';
        else {
          failures += 1;
          Object.assign(step, { status: 'failed', detail: `not ready after the update: ${readiness.detail}${rollbackOnFail ? '' : ' (left updated)'}` });
        }
        await this.save(active);
      }
      const deployed = batch.steps.filter((i) => steps[i]!.status === 'deployed').length;
      const ratio = batch.steps.length === 0 ? 1 : deployed / batch.steps.length;
      if (stopByBudget) {
        await halt(`disruption budget of ${budget} failed target(s) reached in batch ${batch.index}`, bi + 1);
        return;
      }
      if (ratio < threshold) {
        await halt(`batch ${batch.index}: ${deployed}/${batch.steps.length} targets deployed, below the success threshold ${threshold}`, bi + 1);
        return;
      }
    }
    if (strategy === 'blue_green' && steps.some((s) => s.status === 'deployed')) active.rollout.switched = true;
  }

  /** Only a rollout that succeeded moves versions: previous ← current, current ← the rollout's. */
  private applyDeployState(r: RolloutResult): void {
    this.deps.deployState.change((s) => {
      for (const step of r.steps) {
        if (step.status !== 'deployed' || !step.target) continue;
        const old = s.current_version[step.target];
        if (old !== undefined) s.previous_version[step.target] = old;
        s.current_version[step.target] = step.version;
      }
      s.history.push(r);
      if (s.history.length > HISTORY_LIMIT) s.history.splice(0, s.history.length - HISTORY_LIMIT);
    });
  }
}

