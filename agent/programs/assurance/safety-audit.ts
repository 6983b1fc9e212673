/**
 * The safety audit of a program (docs/operations.md § Deployment gate, profiles and verification,
 * "Safety audit"): the findings a deploy gate or an executive scorecard weighs before a program goes
 * to the field. Built from analyses that already exist: kill switches and modes of the program
 * model, minimum capabilities (docs/program-language.md §9.8), static health (§9.9), hardware
 * verification (§13) and the security audit over the parsed source (security-audit.ts).
 */
import type { AnalysisOptions } from '../analysis/options.js';
import { analyseCapabilities, minimumCapabilities, type MinimumCapabilitiesResult } from '../analysis/capability-inference.js';
import { staticHealth } from '../analysis/health.js';
import { verifyHardware } from '../analysis/verify-hardware.js';
import type { Program } from '../language/ast.js';
import { auditProgramSecurity } from './security-audit.js';

export type SafetyAuditSeverity = 'critical' | 'high' | 'medium' | 'low';

export interface SafetyAuditFinding {
  severity: SafetyAuditSeverity;
  /** What the finding is about: kill_switch, health, capability, robot_safety, robot_modes, verification, security. */
  category: string;
  message: string;
}

export interface SafetyAudit {
  findings: SafetyAuditFinding[];
  counts: Record<SafetyAuditSeverity, number>;
  /** No critical and no high finding. */
  passed: boolean;
}

/** The report's former name (agent/reports). */
export type SafetyAuditReport = SafetyAudit;

export interface SafetyAuditOptions extends Pick<AnalysisOptions, 'config' | 'target'> {
  /** Reuse the minimum-capability evaluation the caller already ran (readiness computes it). */
  minimum?: MinimumCapabilitiesResult;
}

/**
 * Findings, in this order:
 * - no kill switch anywhere → critical; each kill switch without `remote_signed` → high;
 * - no health check anywhere → medium;
 * - each minimum-capability error → high;
 * - each robot without safety rules → high; each robot without modes → medium;
 * - hardware verification items: error → critical, warning → medium (pass items are no finding);
 * - security findings: error → critical, warning → high, info → low.
 */
export function safetyAudit(program: Program, opts: SafetyAuditOptions = { config: null }): SafetyAudit {
  const findings: SafetyAuditFinding[] = [];
  const add = (severity: SafetyAuditSeverity, category: string, message: string) => findings.push({ severity, category, message });

  const killSwitches = [...program.killSwitches, ...program.robots.flatMap((r) => r.killSwitches)];
  if (killSwitches.length === 0) add('critical', 'kill_switch', 'No kill switch declared');
  for (const k of killSwitches) if (!k.remoteSigned) add('high', 'kill_switch', `Kill switch '${k.name}' is not remote_signed`);

  if (staticHealth(program).checks.length === 0) add('medium', 'health', 'No health checks declared');

  const minimum = opts.minimum ?? minimumCapabilities(program, analyseCapabilities(program));
  for (const e of minimum.errors) add('high', 'capability', e);

  for (const robot of program.robots) {
    if (robot.safety.length === 0) add('high', 'robot_safety', `Robot '${robot.name}' has no safety block`);
    if (robot.modes.length === 0) add('medium', 'robot_modes', `Robot '${robot.name}' declares no modes`);
  }

  // The verify report's items (docs/program-language.md §13), certification warning included.
  const hardware = verifyHardware(program, { config: opts.config, target: opts.target ?? null });
  for (const item of hardware.items) {
    if (item.severity === 'error') add('critical', 'verification', item.message);
    else if (item.severity === 'warning') add('medium', 'verification', item.message);
  }

  for (const s of auditProgramSecurity(program)) {
    add(s.severity === 'error' ? 'critical' : s.severity === 'warning' ? 'high' : 'low', 'security', s.message);
  }

  const counts: Record<SafetyAuditSeverity, number> = { critical: 0, high: 0, medium: 0, low: 0 };
  for (const f of findings) counts[f.severity] += 1;
  return { findings, counts, passed: counts.critical === 0 && counts.high === 0 };
}
