/**
 * Static health (docs/program-language.md §9.9): every `health_check` condition and requirement becomes a
 * check with status Unknown — nothing is measured without a runtime.
 */
import type { HealthCheckDecl, Program } from '../language/ast.js';

export interface HealthCheck {
  name: string;
  target: string | null;
  target_kind: string | null;
  metric: string;
  operator: string;
  threshold: string;
  status: string;
  message: string;
}

export interface HealthPolicySummary {
  name: string;
  handlers: { status: string; actions: string[] }[];
}

/** Statuses only a runtime run (readiness `--runtime`) produces. */
export type RuntimeStatus = 'Degraded' | 'Critical' | 'Failed';

export interface StaticHealthReport {
  checks: HealthCheck[];
  /** Healthy when there is at least one check, else Unknown. */
  overall: 'Healthy' | 'Unknown' | RuntimeStatus;
  policies: HealthPolicySummary[];
}

/** Program-level health checks first, then robot-level ones (robot order). */
export function staticHealth(program: Program): StaticHealthReport {
  const checks: HealthCheck[] = [];
  for (const decl of program.healthChecks) addChecks(checks, decl, null);
  for (const robot of program.robots) for (const decl of robot.healthChecks) addChecks(checks, decl, robot.name);
  return {
    checks,
    overall: checks.length > 0 ? 'Healthy' : 'Unknown',
    policies: program.healthPolicies.map((p) => ({
      name: p.name,
      handlers: p.handlers.map((h) => ({ status: h.status, actions: [...h.actions] })),
    })),
  };
}

function addChecks(out: HealthCheck[], decl: HealthCheckDecl, owner: string | null): void {
  const target = decl.target ?? owner;
  const targetKind = decl.targetKind ?? (owner !== null ? 'robot' : null);
  for (const check of decl.checks) {
    out.push({
      name: decl.name,
      target,
      target_kind: targetKind,
      metric: check.metric,
      operator: check.operator,
      threshold: check.threshold,
      status: 'Unknown',
      message: `${check.metric} ${check.operator} ${check.threshold} is evaluated at runtime`,
    });
  }
  for (const requirement of decl.requirements) {
    const text = requirement.replace(/^require\s+/, '');
    out.push({
      name: decl.name,
      target,
      target_kind: targetKind,
      metric: 'requirement',
      operator: 'require',
      threshold: text,
      status: 'Unknown',
      message: `require ${text} is evaluated at runtime`,
    });
  }
}
