/**
 * Safety audit of a program (docs/operations.md § Reports, "Safety audit"): the findings the
 * executive scorecard's safety category and the deployment gate both judge. Pure: a parsed program
 * and the resolved configuration in, findings out.
 *
 * Severity rules:
 * - no kill switch anywhere → critical; each kill switch that is not `remote_signed` → high;
 * - no health check → medium;
 * - each minimum-capability error (docs/program-language.md §9.8) → high;
 * - each robot without a safety block → high; each robot without modes → medium;
 * - hardware verification items: error → critical, warning → medium (pass items are no finding);
 * - security checks of the program (`security-audit.ts`, run on the parsed source, not on the file
 *   label): error → critical, warning → high, info → low.
 */
import type { Program } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import { minimumCapabilities } from '../analysis/capability-inference.js';
import { staticHealth } from '../analysis/health.js';
import { verifyHardware } from '../analysis/verify-hardware.js';
import { auditProgramSecurity } from './security-audit.js';

export type SafetyAuditSeverity = 'critical' | 'high' | 'medium' | 'low';

export interface SafetyAuditFinding {
  severity: SafetyAuditSeverity;
  /** kill_switch | health | capabilities | robot_safety | modes | verification | security */
  category: string;
  message: string;
}

export interface SafetyAuditReport {
  findings: SafetyAuditFinding[];
  counts: Record<SafetyAuditSeverity, number>;
  /** No critical finding. */
  passed: boolean;
}

export interface SafetyAuditOptions {
  config?: ResolvedConfig | null;
}

export function safetyAudit(program: Program, options: SafetyAuditOptions = {}): SafetyAuditReport {
  const findings: SafetyAuditFinding[] = [];
  const add = (severity: SafetyAuditSeverity, category: string, message: string): void => void findings.push({ severity, category, message });

  const killSwitches = [...program.killSwitches, ...program.robots.flatMap((r) => r.killSwitches)];
  if (killSwitches.length === 0) add('critical', 'kill_switch', 'No kill switch declared');
  for (const k of killSwitches) {
    if (!k.remoteSigned) add('high', 'kill_switch', `Kill switch '${k.name}' is not remote_signed`);
  }
  if (staticHealth(program).checks.length === 0) add('medium', 'health', 'No health checks declared');
  for (const message of minimumCapabilities(program).errors) add('high', 'capabilities', message);
  for (const robot of program.robots) {
    if (robot.safety.length === 0) add('high', 'robot_safety', `Robot '${robot.name}' has no safety block`);
    if (robot.modes.length === 0) add('medium', 'modes', `Robot '${robot.name}' declares no modes`);
  }
  for (const item of verifyHardware(program, { config: options.config ?? null }).items) {
    if (item.severity === 'error') add('critical', 'verification', item.message);
    else if (item.severity === 'warning') add('medium', 'verification', item.message);
  }
  for (const f of auditProgramSecurity(program)) {
    add(f.severity === 'error' ? 'critical' : f.severity === 'warning' ? 'high' : 'low', 'security', f.message);
  }
  const counts = { critical: 0, high: 0, medium: 0, low: 0 };
  for (const f of findings) counts[f.severity]++;
  return { findings, counts, passed: counts.critical === 0 };
}
