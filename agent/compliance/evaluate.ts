/**
 * A program checked against a compliance profile (docs/operations.md § Reports, "Compliance
 * evaluation"). Pure: program in, violations out. Readiness is evaluated on the program alone
 * (first deploy target, no configuration), so the verdict depends on the program text only.
 */
import type { Program, Quantity } from '../programs/language/ast.js';
import { evaluateReadiness } from '../programs/analysis/readiness.js';
import { hasTrustBoundary } from '../programs/assurance/security-audit.js';
import { secureBootScore, type SecureBootReport } from '../programs/assurance/secure-boot.js';
import { TEMPLATE_NOTICE, type ComplianceProfile } from './profiles.js';

export type ComplianceRequirement =
  | 'requires_kill_switch'
  | 'min_readiness_score'
  | 'required_capabilities'
  | 'min_health_checks'
  | 'requires_assurance_case'
  | 'max_speed'
  | 'operation_hours'
  | 'requires_secure_comm'
  | 'requires_tamper_policy'
  | 'requires_secure_boot';

export interface ComplianceViolation {
  profile: string;
  requirement: ComplianceRequirement;
  severity: 'error' | 'warning';
  message: string;
}

export interface ComplianceEvaluation {
  profile: string;
  program: string;
  description: string;
  template_notice: string;
  passed: boolean;
  violations: ComplianceViolation[];
}

/** What the accreditation checklist needs besides the evaluation. */
export interface ComplianceFacts {
  tamperBranches: number;
  secureBoot: SecureBootReport;
}

/** m/s of a speed quantity (m/s as is, km/h ÷ 3.6, mph × 0.44704); null for an unknown unit. */
export function speedMps(q: Quantity): number | null {
  const unit = (q.unit ?? 'm/s').toLowerCase().replace(/\s+/g, '');
  if (unit === 'm/s' || unit === 'mps') return q.value;
  if (unit === 'km/h' || unit === 'kph' || unit === 'kmh') return q.value / 3.6;
  if (unit === 'mph') return q.value * 0.44704;
  return null;
}

/** Response branches (`on <event> { … }`) across the program's tamper policies. */
export function tamperBranches(program: Program): number {
  return program.tamperPolicies.reduce((n, p) => n + p.tokens.filter((t) => t === 'on').length, 0);
}

export function complianceFacts(program: Program): ComplianceFacts {
  return { tamperBranches: tamperBranches(program), secureBoot: secureBootScore(program) };
}

export function evaluateCompliance(program: Program, profile: ComplianceProfile, label: string, facts: ComplianceFacts = complianceFacts(program)): ComplianceEvaluation {
  const violations: ComplianceViolation[] = [];
  const add = (requirement: ComplianceRequirement, message: string, severity: 'error' | 'warning' = 'error'): void =>
    void violations.push({ profile: profile.name, requirement, severity: profile.warnOnly ? 'warning' : severity, message });

  if (profile.requiresKillSwitch && program.killSwitches.length === 0 && !program.robots.some((r) => r.killSwitches.length > 0)) {
    add('requires_kill_switch', 'No kill_switch declared (program or robot level)');
  }
  if (profile.minReadinessScore > 0) {
    const target = program.deploys[0]?.targets[0] ?? null;
    const readiness = evaluateReadiness(program, { config: null, target });
    if (readiness.score.total < profile.minReadinessScore) {
      add('min_readiness_score', `Readiness ${readiness.score.total}/${readiness.score.maximum} is below the profile minimum ${profile.minReadinessScore}`);
    }
  }
  if (profile.requiredCapabilities.length > 0) {
    if (program.robots.length === 0) add('required_capabilities', 'No robot declared to provide the required capabilities');
    for (const robot of program.robots) {
      for (const capability of profile.requiredCapabilities) {
        if (!robot.exposes.includes(capability)) add('required_capabilities', `Robot '${robot.name}' does not expose capability '${capability}'`);
      }
    }
  }
  if (profile.minHealthChecks > 0 && program.healthChecks.length < profile.minHealthChecks) {
    add('min_health_checks', `${program.healthChecks.length} health_check declarations, profile requires at least ${profile.minHealthChecks}`);
  }
  if (profile.requiresAssuranceCase && program.assuranceCases.length === 0) add('requires_assurance_case', 'No assurance_case declared');
  if (profile.maxSpeedMps !== null) {
    for (const robot of program.robots) {
      if (robot.safety.length === 0) {
        add('max_speed', `Robot '${robot.name}' has no safety block (speed cap ${profile.maxSpeedMps} m/s)`);
        continue;
      }
      const speeds = robot.safety.flatMap((r) => (r.kind === 'max_speed' ? [speedMps(r.value)] : [])).filter((v): v is number => v !== null);
      if (speeds.length === 0) {
        add('max_speed', `Robot '${robot.name}' declares no max_speed rule (cap ${profile.maxSpeedMps} m/s)`);
        continue;
      }
      const highest = Math.max(...speeds);
      if (highest > profile.maxSpeedMps) add('max_speed', `Robot '${robot.name}' max_speed ${Number(highest.toFixed(3))} m/s exceeds the cap ${profile.maxSpeedMps} m/s`);
    }
  }
  if (profile.operationHours !== null && !(profile.operationHours.includes(':') && profile.operationHours.includes('-'))) {
    add('operation_hours', `Operation hours '${profile.operationHours}' are not in HH:MM-HH:MM form`, 'warning');
  }
  if (profile.requiresSecureComm) {
    const secure = program.robots.some((r) => r.generic.some((g) => g.keyword === 'secure_comm' || g.keyword === 'signed_records')) || hasTrustBoundary(program);
    if (!secure) add('requires_secure_comm', 'No robot declares secure_comm, signed records or a trust boundary');
  }
  if (profile.requiresTamperPolicy && facts.tamperBranches === 0) add('requires_tamper_policy', 'No tamper_policy with a response branch');
  if (profile.requiresSecureBoot) {
    if (!facts.secureBoot.present) add('requires_secure_boot', 'No secure-boot contract import (trust.jetson, trust.pi)');
    else if (!facts.secureBoot.passed) add('requires_secure_boot', `Secure-boot contract trust ${facts.secureBoot.score}/100 is below the pass threshold`);
  }
  const passed = profile.warnOnly || !violations.some((v) => v.severity === 'error');
  return { profile: profile.name, program: label, description: profile.description, template_notice: TEMPLATE_NOTICE, passed, violations };
}
