import path from 'node:path';
import { ApiError, conflict } from '../core/errors.js';
import type { DeviceActions } from '../devices/device-actions.js';
import type { DeviceRegistry } from '../devices/device-registry.js';
import type { EventBus } from '../events/event-bus.js';
import { JsonStore } from '../state/json-store.js';

export const EXPERIMENTS_FILE = 'chaos-experiments.json';
export const EXPERIMENT_RING = 100;
export const DEFAULT_RECOVERY_TIMEOUT_SECS = 30;

export type ChaosFault = 'link_loss' | 'noise';
export type ExperimentStatus = 'running' | 'recovered' | 'not_detected' | 'not_recovered' | 'failed' | 'interrupted';

export interface HealthTransition {
  at_ms: number;
  /** Milliseconds since the fault was injected. */
  offset_ms: number;
  from: string;
  to: string;
  reason: string;
}

/** One live experiment and what was observed (docs/mesh.md § Live experiments). */
export interface ExperimentReport {
  id: string;
  device_id: string;
  fault: ChaosFault;
  share: number | null;
  duration_ms: number;
  recovery_timeout_ms: number;
  status: ExperimentStatus;
  requested_by: string | null;
  started_at: string;
  fault_started_at_ms: number;
  fault_ended_at_ms: number | null;
  /** First health transition away from healthy after the injection. */
  detected_at_ms: number | null;
  detected_health: string | null;
  /** Injection → detection. */
  time_to_detect_ms: number | null;
  /** First transition back to healthy after detection. */
  recovered_at_ms: number | null;
  /** End of the fault → healthy again. */
  time_to_recover_ms: number | null;
  /** Injection → healthy again. */
  total_outage_ms: number | null;
  health_before: string;
  transitions: HealthTransition[];
  error: string | null;
  finished_at: string | null;
}

export interface ExperimentDeps {
  bus: EventBus;
  devices: DeviceRegistry;
  /** The devices domain's actions: the only way an experiment touches a device. */
  actions: DeviceActions;
  now?: () => number;
}

export interface ExperimentRequest {
  device_id: string;
  fault: ChaosFault;
  duration_secs: number;
  share?: number | undefined;
  recovery_timeout_secs?: number | undefined;
}

/**
 * Live chaos experiments: a fault is injected into one device of the pool through `DeviceActions`
 * (the only way this domain touches a device), and the health monitor's `HealthChanged` events for
 * that device are observed to time detection and recovery. Experiments run in the background; their
 * reports are persisted (ring of 100) and listed newest last.
 */
export class ChaosExperiments {
  private lastId = 0;
  private readonly running = new Map<string, { stop: () => void }>();
  private closed = false;

  private constructor(
    private readonly store: JsonStore<ExperimentReport[]>,
    private readonly deps: ExperimentDeps,
  ) {}

  static async open(stateDir: string, deps: ExperimentDeps): Promise<ChaosExperiments> {
    const store = await JsonStore.open<ExperimentReport[]>(path.join(stateDir, EXPERIMENTS_FILE), {
      defaults: () => [],
      revive: (raw) => {
        if (!Array.isArray(raw)) throw new Error('expected an array of experiment reports');
        return raw as ExperimentReport[];
      },
    });
    const x = new ChaosExperiments(store, deps);
    // An experiment that was running when the agent stopped has no outcome: say so.
    if (store.data.some((r) => r.status === 'running'))
      store.change((d) => {
        for (const r of d) if (r.status === 'running') Object.assign(r, { status: 'interrupted', error: 'the agent stopped during the experiment' });
      });
    return x;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  list(): ExperimentReport[] {
    return this.store.data.slice();
  }

  get(id: string): ExperimentReport | undefined {
    return this.store.data.find((r) => r.id === id);
  }

  /** Validates, records the experiment as running and starts it; the answer is the running report. */
  start(req: ExperimentRequest, actor: string | null): ExperimentReport {
    const device = this.deps.devices.get(req.device_id);
    if (!device) throw new ApiError(400, 'not_found', `device '${req.device_id}' not found`);
    if ([...this.running.keys()].some((id) => this.get(id)?.device_id === req.device_id)) throw conflict(`an experiment is already running on device '${req.device_id}'`);
    const now = this.now();
    const id = Math.max(now, this.lastId + 1);
    this.lastId = id;
    const report: ExperimentReport = {
      id: `chaos-${id}`,
      device_id: req.device_id,
      fault: req.fault,
      share: req.fault === 'noise' ? (req.share ?? 0.5) : null,
      duration_ms: Math.round(req.duration_secs * 1000),
      recovery_timeout_ms: Math.round((req.recovery_timeout_secs ?? DEFAULT_RECOVERY_TIMEOUT_SECS) * 1000),
      status: 'running',
      requested_by: actor,
      started_at: new Date(now).toISOString(),
      fault_started_at_ms: now,
      fault_ended_at_ms: null,
      detected_at_ms: null,
      detected_health: null,
      time_to_detect_ms: null,
      recovered_at_ms: null,
      time_to_recover_ms: null,
      total_outage_ms: null,
      health_before: device.health_status,
      transitions: [],
      error: null,
      finished_at: null,
    };
    this.store.change((d) => {
      d.push(report);
      if (d.length > EXPERIMENT_RING) d.splice(0, d.length - EXPERIMENT_RING);
    });
    void this.run(report.id, this.deps.actions);
    return { ...report, transitions: [] };
  }

  private update(id: string, fn: (r: ExperimentReport) => void): void {
    const r = this.get(id);
    if (r) this.store.change(() => fn(r));
  }

  private async run(id: string, actions: DeviceActions): Promise<void> {
    const r = this.get(id)!;
    const deviceId = r.device_id;
    let settle: (() => void) | null = null;
    const recovered = new Promise<void>((resolve) => (settle = resolve));
    const unsubscribe = this.deps.bus.subscribe((e) => {
      // The health monitor's verdicts only (source svc-hal), not the entity registry's re-evaluations of the same id.
      if (e.type !== 'HealthChanged' || e.entity_id !== deviceId || e.source !== 'svc-hal') return;
      const at = Date.parse(e.timestamp) || this.now();
      const to = String(e.payload['to'] ?? 'unknown');
      this.update(id, (x) => {
        x.transitions.push({ at_ms: at, offset_ms: at - x.fault_started_at_ms, from: String(e.payload['from'] ?? 'unknown'), to, reason: String(e.payload['reason'] ?? '') });
        if (x.detected_at_ms === null && to !== 'healthy') {
          x.detected_at_ms = at;
          x.detected_health = to;
          x.time_to_detect_ms = at - x.fault_started_at_ms;
        } else if (x.detected_at_ms !== null && x.recovered_at_ms === null && to === 'healthy' && x.fault_ended_at_ms !== null) {
          x.recovered_at_ms = at;
          x.time_to_recover_ms = at - x.fault_ended_at_ms;
          x.total_outage_ms = at - x.fault_started_at_ms;
        }
      });
      const x = this.get(id);
      if (x?.recovered_at_ms !== null) settle?.();
    });
    let timer: NodeJS.Timeout | null = null;
    const stop = () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
      settle?.();
    };
    this.running.set(id, { stop });
    try {
      if (r.fault === 'link_loss') await actions.injectLinkLoss(deviceId, r.duration_ms);
      else await actions.injectNoise(deviceId, r.duration_ms, r.share ?? 0.5);
      this.update(id, (x) => (x.fault_ended_at_ms = this.now()));
      const x = this.get(id)!;
      if (x.detected_at_ms !== null && x.recovered_at_ms === null) {
        // A device that went healthy again while the fault was still on counts as recovered at the fault's end.
        const healthyDuring = [...x.transitions].reverse().find((t) => t.at_ms >= x.detected_at_ms!);
        if (healthyDuring?.to === 'healthy') this.update(id, (y) => Object.assign(y, { recovered_at_ms: healthyDuring.at_ms, time_to_recover_ms: 0, total_outage_ms: healthyDuring.at_ms - y.fault_started_at_ms }));
      }
      if (this.get(id)!.recovered_at_ms === null && !this.closed) {
        await Promise.race([recovered, new Promise<void>((resolve) => (timer = setTimeout(resolve, x.recovery_timeout_ms)))]);
      }
      const done = this.get(id)!;
      this.update(id, (y) => {
        y.status = this.closed && y.recovered_at_ms === null ? 'interrupted' : done.detected_at_ms === null ? 'not_detected' : done.recovered_at_ms === null ? 'not_recovered' : 'recovered';
      });
    } catch (err) {
      this.update(id, (y) => Object.assign(y, { status: 'failed', error: (err as Error).message, fault_ended_at_ms: y.fault_ended_at_ms ?? this.now() }));
    } finally {
      stop();
      this.running.delete(id);
      this.update(id, (y) => (y.finished_at = new Date(this.now()).toISOString()));
    }
  }

  /** Stops observing; experiments still waiting for recovery end as `interrupted`. */
  close(): void {
    this.closed = true;
    for (const r of this.running.values()) r.stop();
  }
}
