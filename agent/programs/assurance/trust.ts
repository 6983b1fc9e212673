/**
 * Composite trust of a program (docs/program-language.md §19): six weighted categories, integer
 * arithmetic (`weighted = score × weight / 100`, truncated; total = Σ weighted), a tier and the
 * tamper check of integrity-baseline.ts.
 */
import * as path from 'node:path';
import type { Program } from '../language/ast.js';
import type { ResolvedConfig } from '../../project/resolve-config.js';
import { checkProgramIntegrity, type IntegrityArtifact, type IntegrityStatus, type TamperCheck } from './integrity-baseline.js';
import { auditProgramSecurity, hasTrustBoundary, type SecurityFinding } from './security-audit.js';
import { analyseSafetyCoverage } from './safety-coverage.js';

export type TrustTier = 'trusted' | 'acceptable' | 'low';

export interface TrustCategory {
  name: string;
  score: number;
  weight: number;
  weighted: number;
}

export interface TrustReport {
  label: string;
  score: number;
  tier: TrustTier;
  passed: boolean;
  integrity_status: IntegrityStatus;
  categories: TrustCategory[];
  recommendations: string[];
}

export interface TrustOptions {
  file: string;
  projectRoot?: string | null;
  stateDir?: string | null;
  config?: ResolvedConfig | null;
  /** Record the integrity baseline on first sight (default true). */
  recordBaseline?: boolean;
}

/**
 * Registry packages reachable from imports, with their trust scores (our package-trust table:
 * signed hardware-attestation packages highest, maintained positioning/fusion packages next).
 * Any import spelled `svc-…`/`svc_…`/`svc.…` is a registry package we hold no record for.
 */
export const PACKAGE_TRUST: Readonly<Record<string, number>> = {
  'svc-trust-jetson': 95,
  'svc-trust-pi': 95,
  'svc-positioning-gps': 85,
  'svc-fusion-sensor': 80,
};
export const UNRATED_PACKAGE_TRUST = 60;
const NO_PACKAGE_TRUST = 70;

/** `positioning.gps` → `svc-positioning-gps`; null when the import is not a registry package. */
export function registryPackageOf(importName: string): string | null {
  const candidate = `svc-${importName.replace(/\./g, '-')}`;
  if (candidate in PACKAGE_TRUST) return candidate;
  if (/^svc[-_.]/.test(importName)) return importName.replace(/[_.]/g, '-');
  return null;
}

function packageTrustScore(program: Program): number {
  const scores = program.imports
    .map(registryPackageOf)
    .filter((name): name is string => name !== null)
    .map((name) => PACKAGE_TRUST[name] ?? UNRATED_PACKAGE_TRUST);
  if (scores.length === 0) return NO_PACKAGE_TRUST;
  return Math.floor(scores.reduce((sum, s) => sum + s, 0) / scores.length);
}

/** Contracts exist when the program declares a mission_plan or a robot mission (docs/program-language.md §21). */
export function hasContracts(program: Program): boolean {
  return program.missionPlans.length > 0 || program.robots.some((robot) => robot.missions.length > 0);
}

const importsAttestation = (program: Program): boolean => program.imports.some((name) => name === 'trust.jetson' || name === 'trust.pi');

export interface SecureBootCheck {
  name: string;
  passed: boolean;
  detail: string;
}

/**
 * Secure-boot coverage of a program with contracts: four pieces of evidence that the software
 * that boots is the software that was reviewed, 25 points each.
 */
export function secureBootChecks(program: Program): SecureBootCheck[] {
  const killSwitches = [...program.killSwitches, ...program.robots.flatMap((robot) => robot.killSwitches)];
  return [
    {
      name: 'hardware_attestation',
      passed: importsAttestation(program),
      detail: importsAttestation(program) ? 'Imports a hardware attestation package (trust.jetson / trust.pi)' : 'No hardware attestation package imported',
    },
    {
      name: 'tamper_policy',
      passed: program.tamperPolicies.length > 0,
      detail: program.tamperPolicies.length > 0 ? 'Tamper policy declared' : 'No tamper_policy declared',
    },
    {
      name: 'certification',
      passed: program.certifications.length > 0,
      detail: program.certifications.length > 0 ? `Certified: ${program.certifications.map((c) => c.standard).join(', ')}` : 'No certify declaration',
    },
    {
      name: 'signed_kill_switch',
      passed: killSwitches.length > 0 && killSwitches.every((k) => k.remoteSigned),
      detail: killSwitches.length === 0 ? 'No kill switch declared' : killSwitches.every((k) => k.remoteSigned) ? 'Every kill switch is remote_signed' : 'A kill switch accepts unsigned remote activation',
    },
  ];
}

export function secureBootCoverage(program: Program): number {
  return secureBootChecks(program).filter((check) => check.passed).length * 25;
}

function deviceIntegrityScore(program: Program): number {
  if (hasContracts(program)) return secureBootCoverage(program);
  if (importsAttestation(program)) return 100;
  if (program.hardware.length > 0 && program.deploys.length > 0) return 80;
  if (program.hardware.length > 0) return 65;
  return 50;
}

const ARTIFACT_POINTS: Readonly<Record<IntegrityStatus, number>> = { Trusted: 100, Unknown: 85, Modified: 0 };

function artifactScore(artifacts: readonly IntegrityArtifact[], kinds: readonly string[]): number {
  const relevant = artifacts.filter((a) => kinds.includes(a.kind));
  if (relevant.length === 0) return 50;
  return Math.floor(relevant.reduce((sum, a) => sum + ARTIFACT_POINTS[a.status], 0) / relevant.length);
}

function identityScore(findings: readonly SecurityFinding[], trustBoundary: boolean): number {
  const count = (severity: SecurityFinding['severity']): number => findings.filter((f) => f.severity === severity).length;
  const score = Math.max(0, 100 - 25 * count('error') - 8 * count('warning') - 2 * count('info'));
  return trustBoundary ? Math.max(75, score) : score;
}

function safetyScore(program: Program): number {
  const safety = analyseSafetyCoverage(program);
  const critical = safety.findings.filter((f) => f.severity === 'critical').length;
  const high = safety.findings.filter((f) => f.severity === 'high').length;
  return Math.max(0, safety.coverage - 20 * critical - 8 * high);
}

const RECOMMENDATIONS: Readonly<Record<string, string>> = {
  package_trust: 'Import rated svc packages (e.g. trust.jetson, positioning.gps) and pin their versions',
  device_integrity: 'Add secure-boot evidence: a hardware attestation import, a tamper_policy, certification and remote_signed kill switches',
  firmware_integrity: 'Review deploy and hardware declarations changed since the integrity baseline',
  configuration_integrity: 'Review policy, kill switch, health and mission declarations changed since the integrity baseline',
  identity_validation: 'Use encrypted transports (https, mqtts, wss, rtsps), keep credentials out of URLs, and declare secure_comm or a trust_boundary',
  safety_integrity: 'Cover obstacle, battery and GPS scenarios with stop_if rules, cap drive speed and declare a kill switch',
};

function tamperHint(tamper: TamperCheck): string | null {
  if (tamper.status === 'Modified') {
    return `Program changed since its integrity baseline (sha256 ${tamper.baseline_sha256?.slice(0, 12)} → ${tamper.file_sha256.slice(0, 12)}): review the change before deploying`;
  }
  if (tamper.status === 'Unknown') return 'No integrity baseline recorded for this program: evaluate trust with a state directory to record one';
  return null;
}

export function tierOf(score: number): TrustTier {
  return score >= 80 ? 'trusted' : score >= 60 ? 'acceptable' : 'low';
}

export function programTrust(program: Program, options: TrustOptions): TrustReport {
  const tamper = checkProgramIntegrity(program, {
    file: options.file,
    projectRoot: options.projectRoot ?? null,
    stateDir: options.stateDir ?? null,
    record: options.recordBaseline ?? true,
  });
  const scores: Array<[string, number, number]> = [
    ['package_trust', 20, packageTrustScore(program)],
    ['device_integrity', 20, deviceIntegrityScore(program)],
    ['firmware_integrity', 15, artifactScore(tamper.artifacts, ['deploy', 'hardware'])],
    ['configuration_integrity', 20, artifactScore(tamper.artifacts, ['policy', 'kill_switch', 'health', 'tamper_policy', 'mission'])],
    ['identity_validation', 15, identityScore(auditProgramSecurity(program), hasTrustBoundary(program))],
    ['safety_integrity', 10, safetyScore(program)],
  ];
  const categories = scores.map(([name, weight, score]) => ({ name, score, weight, weighted: Math.floor((score * weight) / 100) }));
  const score = categories.reduce((sum, c) => sum + c.weighted, 0);
  const recommendations = categories.filter((c) => c.score < 60).map((c) => RECOMMENDATIONS[c.name]!);
  const hint = tamperHint(tamper);
  if (hint) recommendations.push(hint);
  return {
    label: path.basename(options.file),
    score,
    tier: tierOf(score),
    passed: score >= 60 && tamper.passed,
    integrity_status: tamper.status,
    categories,
    recommendations,
  };
}
