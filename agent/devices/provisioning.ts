import type { ResolvedConfig } from '../project/resolve-config.js';
import type { DeviceRecord } from './device-registry.js';

export interface ProvisioningCheck {
  check: string;
  passed: boolean;
  detail: string;
}

export interface ProvisioningReport {
  device_id: string;
  robot_id: string | null;
  ready: boolean;
  checks: ProvisioningCheck[];
  blockers: string[];
  provisioning_id: string;
  evaluated_at_ms: number;
}

/**
 * The provisioning workflow's checks: a device may go into service only when it is identified,
 * reachable, not distrusted, and (when bound to a robot) the robot exists in the fleet.
 */
export function evaluateProvisioning(
  device: DeviceRecord,
  robotId: string | null,
  config: ResolvedConfig | null,
  offlineAfterMs: number,
  now = Date.now(),
): ProvisioningReport {
  const checks: ProvisioningCheck[] = [];
  const add = (check: string, passed: boolean, detail: string) => checks.push({ check, passed, detail });

  add('identity', device.device_type !== 'unknown', device.device_type !== 'unknown' ? `type ${device.device_type}` : 'device type unknown: it has not identified itself');
  add('lifecycle', !['quarantined', 'failed', 'retired'].includes(device.lifecycle_state), `lifecycle ${device.lifecycle_state}`);
  const distrusted = ['untrusted', 'compromised'].includes((device.trust_level ?? '').toLowerCase());
  add('trust', !distrusted, device.trust_level ? `trust level ${device.trust_level}` : 'no trust level recorded');
  if (device.transport) {
    const fresh = device.last_seen_ms !== null && now - device.last_seen_ms <= offlineAfterMs;
    add('reachable', fresh, device.last_seen_ms === null ? 'never heard from' : `last heard ${now - device.last_seen_ms} ms ago`);
    add('firmware', device.firmware_version !== null, device.firmware_version ? `firmware ${device.firmware_version}` : 'firmware version not reported');
  } else {
    // A configured device the agent does not reach itself (e.g. a networked camera) is vouched for by its configuration.
    add('reachable', true, 'not attached through the HAL; configuration vouches for it');
  }
  const robots = config?.robots.map((r) => r.id) ?? [];
  if (robotId !== null) {
    add('robot', robots.includes(robotId), robots.includes(robotId) ? `robot ${robotId} is in the fleet` : `robot ${robotId} is not in the fleet configuration`);
  }
  const blockers = checks.filter((c) => !c.passed).map((c) => `${c.check}: ${c.detail}`);
  return {
    device_id: device.id,
    robot_id: robotId,
    ready: blockers.length === 0,
    checks,
    blockers,
    provisioning_id: `prov-${device.id}-${now}`,
    evaluated_at_ms: now,
  };
}
