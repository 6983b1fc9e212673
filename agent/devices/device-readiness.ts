/**
 * Per-device readiness for deployment (docs/operations.md § Deployment gate, profiles and
 * verification, "Device readiness"): calibration, firmware floor, lifecycle, identity and health
 * of every device in the pool, and the pool's lifecycle counts. Pure: the caller passes the
 * registry's records and the configured tables.
 */
import type { ConfiguredDevice } from '../project/devices.js';
import type { DeviceRecord } from './device-registry.js';

export type CalibrationStatus = 'unknown' | 'valid' | 'expired' | 'required';

export interface DeviceReadinessStatus {
  device_id: string;
  health_status: string;
  calibration_status: CalibrationStatus;
  calibration_expired: boolean;
  firmware_supported: boolean;
  identity_verified: boolean;
  lifecycle_ok: boolean;
  readiness_blocked: boolean;
  blockers: string[];
}

export interface DeviceReadinessReport {
  total_devices: number;
  blocked_count: number;
  /** Only the blocked devices. */
  blocked_devices: DeviceReadinessStatus[];
}

const CALIBRATION: readonly CalibrationStatus[] = ['unknown', 'valid', 'expired', 'required'];
const BAD_LIFECYCLE = new Set(['quarantined', 'failed', 'retired']);

function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : null;
}

/** Dotted numeric compare: a missing part counts as 0, a non-numeric part is skipped. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split('.').map((p) => p.trim()).filter((p) => /^\d+$/.test(p)).map(Number);
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** One device: the record as the pool holds it, plus what its configured table states (calibration, firmware floor). */
export function deviceReadiness(d: DeviceRecord, raw: Readonly<Record<string, unknown>>, now: number): DeviceReadinessStatus {
  const stated = text(raw['calibration_status'])?.toLowerCase() ?? 'unknown';
  const calibration_status: CalibrationStatus = (CALIBRATION as readonly string[]).includes(stated) ? (stated as CalibrationStatus) : 'unknown';
  const expiry = Number(raw['calibration_expiry_ms']);
  const calibration_expired = calibration_status === 'expired' || (Number.isFinite(expiry) && raw['calibration_expiry_ms'] !== undefined && expiry < now);
  const floor = text(raw['min_firmware_version']);
  const firmware_supported = floor === null || (d.firmware_version !== null && compareVersions(d.firmware_version, floor) >= 0);
  const lifecycle_ok = !BAD_LIFECYCLE.has(d.lifecycle_state);
  const trust = (d.trust_level ?? '').toLowerCase();
  const identity_verified = trust === 'verified' || trust === 'trusted';
  // The pool's own health word, or what the configuration states while the device is unheard.
  const health_status = d.health_status !== 'unknown' ? d.health_status : (text(raw['health_status']) ?? 'unknown');
  const blockers: string[] = [];
  if (calibration_expired) blockers.push('calibration_expired');
  if (!firmware_supported) blockers.push('firmware_unsupported');
  if (!lifecycle_ok) blockers.push(`lifecycle_${d.lifecycle_state}`);
  if (!identity_verified) blockers.push('identity_unverified');
  if (health_status === 'critical') blockers.push('health_critical');
  return { device_id: d.id, health_status, calibration_status, calibration_expired, firmware_supported, identity_verified, lifecycle_ok, readiness_blocked: blockers.length > 0, blockers };
}

export function deviceReadinessReport(devices: readonly DeviceRecord[], configured: readonly ConfiguredDevice[], now = Date.now()): DeviceReadinessReport {
  const raw = new Map(configured.map((c) => [c.id, c.raw]));
  const blocked = devices.map((d) => deviceReadiness(d, raw.get(d.id) ?? {}, now)).filter((s) => s.readiness_blocked);
  return { total_devices: devices.length, blocked_count: blocked.length, blocked_devices: blocked };
}

export interface DevicePoolSummary {
  total: number;
  discovered: number;
  quarantined: number;
  verified: number;
  assigned: number;
  active: number;
  /** Equal to `active`: an active device counts as healthy; there is no separate healthy state. */
  healthy: number;
  degraded: number;
  offline: number;
  failed: number;
  retired: number;
}

/** Lifecycle counts of the pool (a stored `healthy` state counts as active). */
export function devicePoolSummary(devices: readonly DeviceRecord[]): DevicePoolSummary {
  const s: DevicePoolSummary = { total: devices.length, discovered: 0, quarantined: 0, verified: 0, assigned: 0, active: 0, healthy: 0, degraded: 0, offline: 0, failed: 0, retired: 0 };
  for (const d of devices) {
    const state: string = d.lifecycle_state === 'healthy' ? 'active' : d.lifecycle_state;
    if (state in s && state !== 'total' && state !== 'healthy') s[state as Exclude<keyof DevicePoolSummary, 'total' | 'healthy'>] += 1;
    else s.discovered += 1;
  }
  s.healthy = s.active;
  return s;
}
