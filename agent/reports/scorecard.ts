/**
 * The executive scorecard (docs/operations.md § Reports, "Scorecard"): seven weighted categories
 * computed by the program analyses the rest of the agent uses (readiness, assure, verify hardware
 * and mission, composite trust) plus the report-specific ones in agent/programs/assurance (safety
 * audit, scenario coverage, threat risk, recovery coverage, secure boot). Pure and deterministic
 * for a program and configuration: composite trust is evaluated without recording an integrity
 * baseline, so reading the scorecard never writes.
 */
import type { Program } from '../programs/language/ast.js';
import type { ResolvedConfig } from '../project/resolve-config.js';
import { evaluateReadiness } from '../programs/analysis/readiness.js';
import { staticHealth } from '../programs/analysis/health.js';
import { verifyHardware } from '../programs/analysis/verify-hardware.js';
import { verifyMission } from '../programs/analysis/verify-mission.js';
import { assureProgram } from '../programs/assurance/assure.js';
import { programTrust } from '../programs/assurance/trust.js';
import { safetyAudit } from '../programs/assurance/safety-audit.js';
import { scenarioCoverage } from '../programs/assurance/scenario-coverage.js';
import { threatRisk } from '../programs/assurance/threat-risk.js';
import { recoveryCoverage } from '../programs/assurance/recovery-coverage.js';
import { secureBootScore } from '../programs/assurance/secure-boot.js';

export interface ScorecardCategory {
  name: string;
  score: number;
  weight: number;
  weighted: number;
  detail: string;
}

export type ScorecardTier = 'excellent' | 'good' | 'acceptable' | 'needs_attention';

export interface Scorecard {
  program: string;
  categories: ScorecardCategory[];
  overall_score: number;
  tier: ScorecardTier;
  recommendations: string[];
}

export interface ScorecardInputs {
  program: Program;
  /** File name of the program (e.g. `rover.sd`). */
  label: string;
  /** Absolute program path (composite trust hashes it). */
  file: string;
  config: ResolvedConfig | null;
  projectRoot: string | null;
  stateDir: string | null;
  /** `<state dir>/recovery_knowledge.json` for assure's recovery part. */
  knowledgePath: string | null;
}

export function tierOf(score: number): ScorecardTier {
  return score >= 90 ? 'excellent' : score >= 75 ? 'good' : score >= 60 ? 'acceptable' : 'needs_attention';
}

const clamp = (n: number): number => Math.max(0, Math.min(100, n));
const BAD_HEALTH = new Set(['Critical', 'Failed', 'Unsafe']);

export function executiveScorecard(inputs: ScorecardInputs): Scorecard {
  const { program, config } = inputs;
  const readiness = evaluateReadiness(program, { config });
  const hardware = verifyHardware(program, { config });
  const missions = verifyMission(program, { config });
  const audit = safetyAudit(program, { config });
  const coverage = scenarioCoverage(program, { config, hardwareItems: hardware.items });
  const health = staticHealth(program);
  const threat = threatRisk(program);
  const trust = programTrust(program, { file: inputs.file, projectRoot: inputs.projectRoot, stateDir: inputs.stateDir, config, recordBaseline: false });
  const secureBoot = secureBootScore(program);
  const assure = assureProgram(program, { config, knowledgePath: inputs.knowledgePath });
  const recovery = recoveryCoverage(program);

  const readinessScore = Math.round((readiness.score.total / readiness.score.maximum) * 100);
  const safetyScore = clamp(coverage.percent - 20 * audit.counts.critical - 8 * audit.counts.high);
  const healthScore =
    health.checks.length === 0
      ? program.healthPolicies.length > 0
        ? 75
        : 60
      : Math.max(0, 100 - 15 * health.checks.filter((c) => BAD_HEALTH.has(c.status)).length);
  const securityParts = [100 - threat.score, trust.score, ...(secureBoot.present ? [secureBoot.score] : [])];
  const securityScore = Math.floor(securityParts.reduce((s, n) => s + n, 0) / securityParts.length);
  const hwErrors = hardware.items.filter((i) => i.severity === 'error').length;
  const unachievable = missions.filter((m) => !m.achievable).length;
  const verificationScore = Math.max(0, 100 - (hardware.compatible ? 0 : 30) - 10 * hwErrors - 15 * unachievable);
  const assuranceScore = assure.passed ? 100 : Math.max(0, 100 - 8 * assure.issues.length);

  const rows: Array<[string, number, number, string]> = [
    ['readiness', 20, readinessScore, `mission_ready=${readiness.mission_ready} score ${readiness.score.total}/${readiness.score.maximum}`],
    ['safety', 20, safetyScore, `coverage ${coverage.percent}% audit critical=${audit.counts.critical} high=${audit.counts.high}`],
    ['health', 15, healthScore, `checks=${health.checks.length} overall=${health.overall}`],
    [
      'security',
      15,
      securityScore,
      `threat risk ${threat.score}/100 composite trust ${trust.score}/100 ${secureBoot.present ? `secure boot ${secureBoot.score}/100 ` : ''}tier=${trust.tier}`,
    ],
    ['verification', 10, verificationScore, `hardware_compatible=${hardware.compatible} missions=${missions.length}`],
    ['assurance', 10, assuranceScore, `passed=${assure.passed} issues=${assure.issues.length}`],
    ['resilience', 10, recovery.percent, `recovery coverage ${recovery.percent}%`],
  ];
  const categories = rows.map(([name, weight, score, detail]) => ({ name, score, weight, weighted: Math.floor((score * weight) / 100), detail }));
  const overall = categories.reduce((s, c) => s + c.weighted, 0);

  const recommendations: string[] = [];
  if (!readiness.mission_ready) recommendations.push('Run `svc explain readiness` and resolve blockers');
  if (audit.counts.critical > 0) recommendations.push('Resolve critical safety audit findings before deploy');
  if (threat.score >= 30) recommendations.push('Review `svc threat-model` mitigations');
  if (secureBoot.present && !secureBoot.passed) recommendations.push('Resolve secure-boot contract trust or live attestation before deploy');
  if (!hardware.compatible) recommendations.push('Run `svc verify` for hardware compatibility');
  if (!assure.passed) recommendations.push('Run `svc assure` and address assurance gaps');
  if (recovery.percent < 80) recommendations.push('Improve recovery coverage with `svc recovery-coverage`');
  recommendations.push(...coverage.recommendations.slice(0, 2));

  return { program: inputs.label, categories, overall_score: overall, tier: tierOf(overall), recommendations };
}
