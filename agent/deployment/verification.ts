/**
 * Deployment verification (docs/operations.md § Deployment gate, profiles and verification): the
 * governed entities of the registry checked against the deployment profile the project chose in
 * `[governance] deployment_profile`. Pure over a registry view; read-only.
 */
import { notFound } from '../core/errors.js';
import type { RegistryView } from '../entities/entity-service.js';
import type { Entity } from '../entities/model.js';
import { entityGovernance, isGoverned, parseAutonomy, parseMaturity, stampedEntityIds, systemGovernance, type GovernanceAttributes } from '../governance/entity-governance.js';
import { governanceReadinessBlockers, type GovernanceBlocker } from '../governance/readiness-blockers.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { autonomyRank, builtinProfile, profileKindText, type DeploymentProfile } from './profiles.js';

export type FindingSeverity = 'pass' | 'warning' | 'missing' | 'action';

export interface VerificationFinding {
  severity: FindingSeverity;
  code: string;
  message: string;
  entity_id?: string;
}

export interface VerificationReport {
  passed: boolean;
  deployment_profile?: string;
  operational_maturity?: string;
  findings?: VerificationFinding[];
  recommended_actions?: string[];
}

/** One governed entity with its effective governance and blockers. */
export interface GovernedEntity {
  entity: Entity;
  governance: GovernanceAttributes;
  trust_status: string;
  blockers: GovernanceBlocker[];
}

/** Entities that carry governance (or the one asked for, governed or not), with their blockers. */
export function governedEntities(view: RegistryView, config: ResolvedConfig | null, entityId?: string): GovernedEntity[] {
  const system = systemGovernance(config).attributes;
  const stamped = stampedEntityIds(config);
  const candidates = entityId !== undefined ? [view.graph.get(entityId)].filter((e): e is Entity => e !== undefined) : view.graph.list();
  const out: GovernedEntity[] = [];
  for (const entity of [...candidates].sort((a, b) => a.id.localeCompare(b.id))) {
    const governance = entityGovernance(entity, stamped.has(entity.id) ? system : null);
    if (entityId === undefined && !isGoverned(governance)) continue;
    const trust_status = view.status.status(entity.id).trust_status;
    out.push({ entity, governance, trust_status, blockers: governanceReadinessBlockers(governance, trust_status) });
  }
  return out;
}

/** The configured profile, or null when none is set; an unknown name is a 404 (the profile is used here, not looked up). */
export function configuredProfile(config: ResolvedConfig | null): { name: string; profile: DeploymentProfile } | null {
  const name = systemGovernance(config).attributes.deployment_profile;
  if (name === undefined) return null;
  const profile = builtinProfile(name);
  if (!profile) throw notFound(`Unknown deployment profile '${name}'`);
  return { name, profile };
}

const MOBILE_KINDS = new Set(['robot', 'drone', 'vehicle']);

export function verifyDeployment(view: RegistryView, config: ResolvedConfig, options: { strict: boolean; entityId?: string }): VerificationReport {
  const findings: VerificationFinding[] = [];
  const actions: string[] = [];
  const system = systemGovernance(config).attributes;
  const chosen = configuredProfile(config);
  if (!chosen) {
    findings.push({ severity: 'warning', code: 'DEPLOY_NO_PROFILE', message: 'No deployment profile configured' });
    actions.push('Set deployment_profile in svc.governance.toml');
  } else {
    const { name, profile } = chosen;
    const max = profile.decision_authority.max_autonomy_level;
    for (const g of governedEntities(view, config, options.entityId)) {
      const id = g.entity.id;
      for (const b of g.blockers) findings.push({ severity: b.severity === 'high' ? 'missing' : 'warning', code: 'DEPLOY_GOV', message: b.message, entity_id: id });
      if (MOBILE_KINDS.has(g.entity.kind)) {
        for (const cap of profile.required_capabilities) {
          if (g.entity.capabilities.includes(cap)) continue;
          findings.push({ severity: 'missing', code: 'DEPLOY_CAPABILITY', message: `Profile '${name}' requires capability '${cap}'`, entity_id: id });
          actions.push(`Add capability '${cap}' to ${id}`);
        }
      }
      if (g.governance.autonomy_level !== undefined) {
        const level = parseAutonomy(g.governance.autonomy_level);
        if (autonomyRank(level) > autonomyRank(max)) findings.push({ severity: 'warning', code: 'DEPLOY_AUTONOMY', message: `Autonomy ${level} exceeds profile max ${max}`, entity_id: id });
      }
    }
  }
  const blocking = findings.some((f) => f.severity === 'missing' || f.severity === 'action');
  const warned = findings.some((f) => f.severity === 'warning');
  const report: VerificationReport = { passed: !blocking && (!options.strict || !warned) };
  if (chosen) report.deployment_profile = profileKindText(chosen.profile.kind);
  if (system.operational_maturity !== undefined) report.operational_maturity = parseMaturity(system.operational_maturity);
  if (findings.length) report.findings = findings;
  const unique = [...new Set(actions)];
  if (unique.length) report.recommended_actions = unique;
  return report;
}

const LABEL: Record<FindingSeverity, string> = { pass: 'Pass', warning: 'Warning', missing: 'Missing', action: 'Action' };

/** The plain-text form of a verification report (for people; clients read the JSON). */
export function renderVerificationText(report: VerificationReport): string {
  const title = 'Deployment Verification Report';
  const lines = [title, '='.repeat(title.length), `Result: ${report.passed ? 'PASS' : 'FAIL'}`];
  if (report.deployment_profile) lines.push(`Deployment Profile: ${report.deployment_profile}`);
  if (report.operational_maturity) lines.push(`Operational Maturity: ${report.operational_maturity}`);
  if (report.findings?.length) {
    lines.push('', 'Findings:');
    for (const f of report.findings) lines.push(`  [${LABEL[f.severity]}] ${f.code} — ${f.message}${f.entity_id ? ` (${f.entity_id})` : ''}`);
  }
  if (report.recommended_actions?.length) {
    lines.push('', 'Recommended Actions:');
    for (const a of report.recommended_actions) lines.push(`  - ${a}`);
  }
  return lines.join('\n');
}
