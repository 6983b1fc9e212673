import type { DeviceHub } from '../devices/device-hub.js';
import type { DevicePool } from '../devices/device-pool.js';
import type { DeviceRecord, DeviceRegistry } from '../devices/device-registry.js';
import { flashFirmware, previousImage } from '../devices/firmware-flash.js';
import type { AlertService } from '../observability/alerts.js';
import type { StoredDeployAgent } from '../operator/deploy-agents.js';
import { OutboundError, type OutboundHttp } from '../outbound/outbound-http.js';

/**
 * What a rollout step talks to (docs/operations.md § Rollouts, "Targets"): a deploy agent reached
 * over HTTP (directly or through a relay URL `http://relay/agents/<id>`), or a microcontroller of this
 * agent reached through the firmware bridge. Each can be updated, asked for readiness and rolled back.
 */
export interface TargetOutcome {
  ok: boolean;
  detail: string;
  version?: string | null;
}

export interface RolloutTarget {
  /** The deploy-state key: `<Robot>@<Hardware>` for agents, `device:<id>` for firmware. */
  readonly key: string;
  readonly robot_name: string;
  readonly hardware: string;
  readonly device_id?: string;
  update(): Promise<TargetOutcome>;
  readiness(): Promise<{ ready: boolean; detail: string }>;
  rollback(): Promise<TargetOutcome>;
}

function parse(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const errorText = (err: unknown) => (err instanceof OutboundError ? err.message : (err as Error).message);

/** A deploy agent of the registry; `agent` null = none registered for the target (the step fails). */
export class RemoteAgentTarget implements RolloutTarget {
  readonly key: string;
  constructor(
    readonly robot_name: string,
    readonly hardware: string,
    private readonly agent: StoredDeployAgent | undefined,
    private readonly outbound: OutboundHttp,
    private readonly bundle: Record<string, unknown>,
    private readonly readinessQuery: string,
  ) {
    this.key = `${robot_name}@${hardware}`;
  }

  private url(p: string): string {
    return `${this.agent!.url.replace(/\/+$/, '')}${p}`;
  }

  async update(): Promise<TargetOutcome> {
    if (!this.agent) return { ok: false, detail: `no deploy agent registered for ${this.key}` };
    try {
      const res = await this.outbound.postJson(this.url('/v1/rollout'), { ...this.bundle, target: this.key }, { bearer: this.agent.token ?? null });
      const body = parse(res.text);
      if (!res.ok) return { ok: false, detail: `rollout answered HTTP ${res.status}${body && typeof body['error'] === 'string' ? `: ${body['error']}` : ''}` };
      if (body?.['ok'] !== true) return { ok: false, detail: typeof body?.['error'] === 'string' ? body['error'] : 'agent refused the rollout', version: typeof body?.['version'] === 'string' ? body['version'] : null };
      return { ok: true, detail: 'bundle installed', version: typeof body['version'] === 'string' ? body['version'] : null };
    } catch (err) {
      return { ok: false, detail: errorText(err) };
    }
  }

  async readiness(): Promise<{ ready: boolean; detail: string }> {
    if (!this.agent) return { ready: false, detail: 'no deploy agent' };
    try {
      const body = await this.outbound.getJson<Record<string, unknown>>(this.url(`/v1/readiness${this.readinessQuery}`), { bearer: this.agent.token ?? null });
      const nested = body['readiness'] as Record<string, unknown> | undefined;
      const ready = typeof body['mission_ready'] === 'boolean' ? body['mission_ready'] : nested?.['mission_ready'] === true;
      return { ready: ready === true, detail: ready ? 'mission ready' : 'agent reports not mission ready' };
    } catch (err) {
      return { ready: false, detail: errorText(err) };
    }
  }

  async rollback(): Promise<TargetOutcome> {
    if (!this.agent) return { ok: false, detail: 'no deploy agent' };
    try {
      const res = await this.outbound.postJson(this.url('/v1/rollback'), { target: this.key }, { bearer: this.agent.token ?? null });
      const body = parse(res.text);
      return res.ok && body?.['ok'] === true
        ? { ok: true, detail: 'rolled back', version: typeof body['version'] === 'string' ? body['version'] : null }
        : { ok: false, detail: typeof body?.['error'] === 'string' ? body['error'] : `rollback answered HTTP ${res.status}` };
    } catch (err) {
      return { ok: false, detail: errorText(err) };
    }
  }
}

export interface FirmwareDeps {
  deviceHub: DeviceHub;
  devices: DeviceRegistry;
  devicePool: DevicePool;
  alerts: AlertService;
  stateDir: string;
}

/** Ids of `device_ids` the registry does not know. */
export function unknownDevices(devices: DeviceRegistry, sel: { device_ids?: string[] | undefined }): string[] {
  return (sel.device_ids ?? []).filter((id) => devices.get(id) === undefined);
}

/** Devices of this agent a firmware rollout targets: by ids, else by type, in registry (id) order. */
export function firmwareDevices(devices: DeviceRegistry, sel: { device_type?: string | undefined; device_ids?: string[] | undefined }): DeviceRecord[] {
  const all = devices.list();
  if (sel.device_ids && sel.device_ids.length > 0) {
    return sel.device_ids.map((id) => all.find((d) => d.id === id)).filter((d): d is DeviceRecord => d !== undefined);
  }
  if (sel.device_type) return all.filter((d) => d.device_type === sel.device_type).sort((a, b) => a.id.localeCompare(b.id));
  return [];
}

/** A microcontroller of this agent: chunked update, verification, activation and self-test through the firmware bridge. */
export class FirmwareDeviceTarget implements RolloutTarget {
  readonly key: string;
  readonly robot_name: string;
  readonly hardware: string;
  readonly device_id: string;
  constructor(
    device: DeviceRecord,
    private readonly deps: FirmwareDeps,
    private readonly image: Uint8Array,
    private readonly version: string,
  ) {
    this.device_id = device.id;
    this.key = `device:${device.id}`;
    this.robot_name = device.assigned_robot ?? device.robot_id ?? device.id;
    this.hardware = device.device_type ?? 'device';
  }

  async update(): Promise<TargetOutcome> {
    try {
      const r = await flashFirmware(this.deps, this.device_id, this.image, this.version);
      return r.ok
        ? { ok: true, detail: `activated in ${r.duration_ms} ms`, version: r.outcome.version }
        : { ok: false, detail: `${r.outcome.result}: ${r.outcome.detail}`, version: r.outcome.version };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  /** Online, running the new version, and not among the pool's readiness blockers (readiness impact). */
  async readiness(): Promise<{ ready: boolean; detail: string }> {
    const d = this.deps.devices.get(this.device_id);
    if (!d) return { ready: false, detail: 'device left the registry' };
    if (d.health_status === 'offline') return { ready: false, detail: `device is ${d.health_status}` };
    if (d.firmware_version !== this.version) return { ready: false, detail: `device reports firmware ${d.firmware_version ?? 'unknown'}, expected ${this.version}` };
    const blocked = this.deps.devicePool.readinessImpact().impact.blocked_devices.find((b) => b.device_id === this.device_id);
    return blocked ? { ready: false, detail: blocked.reason } : { ready: true, detail: `online with firmware ${this.version}` };
  }

  /** Re-flashes the image the device ran before (kept under `<state dir>/ota/images/`). */
  async rollback(): Promise<TargetOutcome> {
    const prev = previousImage(this.deps.stateDir, this.device_id);
    if (!prev) return { ok: false, detail: `no previous image kept for ${this.device_id}` };
    try {
      const r = await flashFirmware(this.deps, this.device_id, new Uint8Array(prev.bytes), prev.image.version);
      return r.ok ? { ok: true, detail: `re-flashed ${prev.image.version}`, version: prev.image.version } : { ok: false, detail: `re-flash of ${prev.image.version}: ${r.outcome.result}: ${r.outcome.detail}` };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }
}
