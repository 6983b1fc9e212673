/**
 * Governance readiness blockers (docs/operations.md § Deployment gate, profiles and verification):
 * what in an entity's governance keeps it from live deployment. The deploy gate's `governance` gate
 * and deployment verification's `DEPLOY_GOV` findings read them; governance validation and
 * compliance build on the same rules.
 */
import { autonomyRank, RISK_LEVELS } from '../deployment/profiles.js';
import {
  LIVE_MATURITY,
  MATURITY_STAGES,
  OPERATIONAL_CERTIFICATION,
  parseAutonomy,
  parseCertification,
  parseMaturity,
  parseRisk,
  type GovernanceAttributes,
} from './entity-governance.js';

export type BlockerSeverity = 'high' | 'medium';

export interface GovernanceBlocker {
  severity: BlockerSeverity;
  /** Stable code of the rule (for clients that group blockers). */
  code: 'live_certification' | 'live_accountability' | 'autonomy_trust' | 'risk_maturity';
  message: string;
}

const TRUSTED_POSTURE = new Set(['trusted', 'verified']);

/**
 * The blockers of one entity, in rule order:
 * 1. live maturity without validated/certified certification (high);
 * 2. live maturity without all of responsible person, deployment owner and emergency contact (high);
 * 3. autonomy conditional (3) or above while the entity's trust status is not trusted/verified (high);
 * 4. risk medium or above while maturity is below simulation (medium).
 */
export function governanceReadinessBlockers(g: GovernanceAttributes, trustStatus: string): GovernanceBlocker[] {
  const out: GovernanceBlocker[] = [];
  const maturity = g.operational_maturity !== undefined ? parseMaturity(g.operational_maturity) : null;
  if (maturity !== null && LIVE_MATURITY.has(maturity)) {
    const cert = g.certification_status !== undefined ? parseCertification(g.certification_status) : null;
    if (cert === null || !OPERATIONAL_CERTIFICATION.has(cert)) {
      out.push({ severity: 'high', code: 'live_certification', message: `Live maturity '${maturity}' requires validated/certified status (current: ${cert ?? 'none'})` });
    }
    if (!g.responsible_person || !g.deployment_owner || !g.emergency_contact) {
      out.push({ severity: 'high', code: 'live_accountability', message: 'Live deployment requires responsible person, deployment owner, and emergency contact' });
    }
  }
  if (g.autonomy_level !== undefined) {
    const autonomy = parseAutonomy(g.autonomy_level);
    if (autonomyRank(autonomy) >= 3 && !TRUSTED_POSTURE.has(trustStatus.toLowerCase())) {
      out.push({ severity: 'high', code: 'autonomy_trust', message: `Autonomy '${autonomy}' blocked until trust posture is trusted or verified` });
    }
  }
  if (g.risk_level !== undefined) {
    const risk = parseRisk(g.risk_level);
    const stage = maturity ?? 'concept';
    if (RISK_LEVELS.indexOf(risk) >= RISK_LEVELS.indexOf('medium') && MATURITY_STAGES.indexOf(stage) < MATURITY_STAGES.indexOf('simulation')) {
      out.push({ severity: 'medium', code: 'risk_maturity', message: 'Medium+ risk requires at least simulation maturity' });
    }
  }
  return out;
}

/** Blockers that stop live deployment outright (the deploy gate's `governance` gate). */
export const blocksLiveDeployment = (blockers: readonly GovernanceBlocker[]): boolean => blockers.some((b) => b.severity === 'high');

/** One line per blocker, `[high] message`, for text reports. */
export function renderBlockers(entityId: string, blockers: readonly GovernanceBlocker[]): string[] {
  return blockers.map((b) => `  [${b.severity}] ${entityId} — ${b.message}`);
}
