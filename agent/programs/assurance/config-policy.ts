/**
 * The configuration keys the assurance operations read (docs/program-language.md §7.4): `[assurance]`,
 * `[diagnosis]` and `[mission]` of the merged tree, plus the networked-device test of the device
 * registry. Profile-style keys (`[assurance.evidence]`, …) are deliberately not read.
 */
import type { ConfiguredDevice, ResolvedConfig } from '../../project/resolve-config.js';

export interface AssurancePolicy {
  minimum_score: number;
  require_recovery: boolean;
  require_resilience: boolean;
  require_mitigations: boolean;
  require_anomaly_handlers: boolean;
}

export interface MissionPolicy {
  require_plans: boolean;
  required_capabilities: string[];
}

function table(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

function int(value: unknown, fallback: number): number {
  if (typeof value === 'bigint') return Number(value);
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : fallback;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** `[assurance]` with its defaults (minimum 70, recovery and resilience required). */
export function assurancePolicy(config: ResolvedConfig | null): AssurancePolicy {
  const section = table(config?.tree['assurance']);
  return {
    minimum_score: int(section['minimum_score'], 70),
    require_recovery: bool(section['require_recovery'], true),
    require_resilience: bool(section['require_resilience'], true),
    require_mitigations: bool(section['require_mitigations'], false),
    require_anomaly_handlers: bool(section['require_anomaly_handlers'], false),
  };
}

/** Diagnose requirements: `[diagnosis]` wins over `[assurance]`; both default to false. */
export function diagnosisRequirements(config: ResolvedConfig | null): { require_mitigations: boolean; require_anomaly_handlers: boolean } {
  const assurance = table(config?.tree['assurance']);
  const diagnosis = table(config?.tree['diagnosis']);
  const pick = (key: string): boolean => bool(diagnosis[key], bool(assurance[key], false));
  return { require_mitigations: pick('require_mitigations'), require_anomaly_handlers: pick('require_anomaly_handlers') };
}

export function missionPolicy(config: ResolvedConfig | null): MissionPolicy {
  const section = table(config?.tree['mission']);
  return {
    require_plans: bool(section['require_plans'], false),
    required_capabilities: stringList(section['required_capabilities']),
  };
}

/** Networked devices (docs/program-language.md §7.4) of the configuration, in registry order. */
export function networkedDevices(config: ResolvedConfig | null): ConfiguredDevice[] {
  return (config?.devices ?? []).filter((device) => device.networked);
}

/** A networked device the control center cannot reach: neither an endpoint nor an IP address. */
export function lacksEndpoint(device: ConfiguredDevice): boolean {
  return device.endpoint_url === null && device.ip_address === null;
}

/** A networked device that cannot prove who it is: no security identity and no certificate fingerprint. */
export function lacksIdentity(device: ConfiguredDevice): boolean {
  return device.security_identity === null && device.certificate_fingerprint === null;
}
