/**
 * Built-in compliance profiles (docs/operations.md § Reports, "Compliance profiles"): engineering
 * templates a program is checked against. They are not legal accreditation; every export says so
 * (`TEMPLATE_NOTICE`).
 */

export interface ComplianceProfile {
  name: string;
  description: string;
  requiresKillSwitch: boolean;
  minReadinessScore: number;
  requiredCapabilities: readonly string[];
  minHealthChecks: number;
  requiresAssuranceCase: boolean;
  /** m/s, or null for no cap. */
  maxSpeedMps: number | null;
  operationHours: string | null;
  requiresSecureComm: boolean;
  requiresTamperPolicy: boolean;
  requiresSecureBoot: boolean;
  /** Every violation is a warning and the evaluation always passes. */
  warnOnly: boolean;
}

export const TEMPLATE_NOTICE = 'Template profile only — not legal accreditation or certification.';

const profile = (
  name: string,
  description: string,
  p: Omit<ComplianceProfile, 'name' | 'description' | 'operationHours' | 'warnOnly'> & { operationHours?: string; warnOnly?: boolean },
): ComplianceProfile => ({ name, description, operationHours: p.operationHours ?? null, warnOnly: p.warnOnly ?? false, ...p } as ComplianceProfile);

const base = { requiresSecureComm: false, requiresTamperPolicy: false, requiresSecureBoot: false, requiresAssuranceCase: false };

/** Catalogue order. */
export const COMPLIANCE_PROFILES: readonly ComplianceProfile[] = [
  profile('industrial', 'Industrial mobile robots: kill switch, obstacle avoidance and a speed cap of 1.5 m/s.', {
    ...base, requiresKillSwitch: true, minReadinessScore: 75, requiredCapabilities: ['obstacle_avoidance'], minHealthChecks: 1, maxSpeedMps: 1.5,
  }),
  profile('warehouse', 'Warehouse AMRs with speed caps and shift-hour discipline.', {
    ...base, requiresKillSwitch: true, minReadinessScore: 70, requiredCapabilities: ['gps_navigation', 'obstacle_avoidance'], minHealthChecks: 1, maxSpeedMps: 2.0, operationHours: '06:00-22:00',
  }),
  profile('medical', 'Medical and hospital robots: assurance case, tamper policy and secure boot.', {
    ...base, requiresKillSwitch: true, minReadinessScore: 85, requiredCapabilities: [], minHealthChecks: 2, requiresAssuranceCase: true, maxSpeedMps: 1.0, requiresTamperPolicy: true, requiresSecureBoot: true,
  }),
  profile('agriculture', 'Field robots: GPS navigation, kill switch and a 2.5 m/s cap.', {
    ...base, requiresKillSwitch: true, minReadinessScore: 60, requiredCapabilities: ['gps_navigation'], minHealthChecks: 1, maxSpeedMps: 2.5,
  }),
  profile('defense', 'Defense systems: assurance case, secure communication, tamper policy and secure boot.', {
    requiresKillSwitch: true, minReadinessScore: 85, requiredCapabilities: [], minHealthChecks: 1, requiresAssuranceCase: true, maxSpeedMps: 1.2, requiresSecureComm: true, requiresTamperPolicy: true, requiresSecureBoot: true,
  }),
  profile('iso26262', 'Automotive functional safety (ISO 26262 style template).', {
    requiresKillSwitch: true, minReadinessScore: 90, requiredCapabilities: ['obstacle_avoidance'], minHealthChecks: 2, requiresAssuranceCase: true, maxSpeedMps: 1.0, requiresSecureComm: true, requiresTamperPolicy: true, requiresSecureBoot: true,
  }),
  profile('iso13849', 'Machinery safety (ISO 13849 style template).', {
    ...base, requiresKillSwitch: true, minReadinessScore: 80, requiredCapabilities: ['obstacle_avoidance'], minHealthChecks: 2, requiresAssuranceCase: true, maxSpeedMps: 1.5,
  }),
  profile('iec61508', 'Functional safety of programmable systems (IEC 61508 style template).', {
    ...base, requiresKillSwitch: true, minReadinessScore: 85, requiredCapabilities: [], minHealthChecks: 2, requiresAssuranceCase: true, maxSpeedMps: 1.2, requiresSecureComm: true, requiresTamperPolicy: true,
  }),
  profile('research', 'Research prototypes: advisory checks only (warnings, never failing).', {
    ...base, requiresKillSwitch: false, minReadinessScore: 50, requiredCapabilities: [], minHealthChecks: 0, maxSpeedMps: null, warnOnly: true,
  }),
  profile('human_collaboration', 'Robots working beside people: kill switch, obstacle avoidance and a 1.5 m/s cap.', {
    ...base, requiresKillSwitch: true, minReadinessScore: 85, requiredCapabilities: ['obstacle_avoidance'], minHealthChecks: 0, maxSpeedMps: 1.5,
  }),
];

const ALIASES: Readonly<Record<string, string>> = {
  iso_26262: 'iso26262',
  automotive: 'iso26262',
  iso_13849: 'iso13849',
  machinery: 'iso13849',
  iec_61508: 'iec61508',
  functional_safety: 'iec61508',
  human_collab: 'human_collaboration',
  hri: 'human_collaboration',
};

export const DEFAULT_COMPLIANCE_PROFILE = 'defense';

/** The profile a name stands for (trimmed, case-insensitive, aliases), or null. */
export function findComplianceProfile(name: string): ComplianceProfile | null {
  const key = name.trim().toLowerCase();
  const canonical = Object.hasOwn(ALIASES, key) ? ALIASES[key]! : key;
  return COMPLIANCE_PROFILES.find((p) => p.name === canonical) ?? null;
}

export const complianceProfileNames = (): string[] => COMPLIANCE_PROFILES.map((p) => p.name);
