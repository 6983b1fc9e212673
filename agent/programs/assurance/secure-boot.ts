/**
 * Secure-boot contract score (docs/operations.md § Reports, "Secure boot"): one entry per
 * `trust.jetson` / `trust.pi` import, scored by the trust of its registry package
 * (`svc-trust-jetson` / `svc-trust-pi`, trust.ts `PACKAGE_TRUST`). An entry passes from the trusted
 * package score (70) up. Live attestation would be averaged in when available; this agent has no
 * attestation source yet, so `attested` is null and the package score stands alone.
 */
import type { Program } from '../language/ast.js';
import { PACKAGE_TRUST, UNRATED_PACKAGE_TRUST, registryPackageOf } from './trust.js';

/** Same threshold as the project's package trust (agent/fleet/package-trust.ts). */
export const SECURE_BOOT_PASS_SCORE = 70;

export interface SecureBootEntry {
  import: string;
  package: string;
  package_score: number;
  attested: boolean | null;
  score: number;
  passed: boolean;
}

export interface SecureBootReport {
  /** At least one secure-boot contract import. */
  present: boolean;
  entries: SecureBootEntry[];
  /** Integer mean of the entries (0 without entries). */
  score: number;
  /** Every entry passes (false without entries). */
  passed: boolean;
}

export const SECURE_BOOT_IMPORTS: readonly string[] = ['trust.jetson', 'trust.pi'];

export function secureBootScore(program: Program): SecureBootReport {
  const entries = program.imports
    .filter((name) => SECURE_BOOT_IMPORTS.includes(name))
    .map((name): SecureBootEntry => {
      const pkg = registryPackageOf(name) ?? `svc-${name.replace(/\./g, '-')}`;
      const score = PACKAGE_TRUST[pkg] ?? UNRATED_PACKAGE_TRUST;
      return { import: name, package: pkg, package_score: score, attested: null, score, passed: score >= SECURE_BOOT_PASS_SCORE };
    });
  const score = entries.length ? Math.floor(entries.reduce((s, e) => s + e.score, 0) / entries.length) : 0;
  return { present: entries.length > 0, entries, score, passed: entries.length > 0 && entries.every((e) => e.passed) };
}
