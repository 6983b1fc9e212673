/**
 * Readiness policy (docs/program-language.md §7.4, §9.3): `[readiness] minimum_score` and
 * `[readiness.weights]` of the MERGED configuration tree. Profile-style keys are not read, and a
 * `[readiness]` table in the root manifest never reaches the tree (§7.1).
 */
import type { ResolvedConfig } from '../../project/resolve-config.js';

export const WEIGHT_KEYS = [
  'hardware',
  'capabilities',
  'health',
  'connectivity',
  'safety',
  'battery',
  'storage',
  'compute',
  'packages',
  'providers',
  'mission',
  'assurance',
] as const;

export type WeightKey = (typeof WEIGHT_KEYS)[number];
export type ReadinessWeights = Record<WeightKey, number>;

/** docs/program-language.md §9.3 defaults (sum 100). */
export const DEFAULT_WEIGHTS: Readonly<ReadinessWeights> = {
  hardware: 12,
  capabilities: 12,
  health: 12,
  connectivity: 8,
  safety: 12,
  battery: 8,
  storage: 4,
  compute: 6,
  packages: 8,
  providers: 8,
  mission: 2,
  assurance: 8,
};

export const DEFAULT_MINIMUM_SCORE = 80;

export interface ReadinessPolicy {
  minimum_score: number;
  weights: ReadinessWeights;
}

function table(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function numberOr(value: unknown, fallback: number): number {
  if (typeof value === 'bigint') return Number(value);
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

export function readinessPolicy(config: ResolvedConfig | null): ReadinessPolicy {
  const section = table(config?.tree['readiness']);
  const configured = table(section['weights']);
  const weights = { ...DEFAULT_WEIGHTS };
  for (const key of WEIGHT_KEYS) weights[key] = Math.max(0, numberOr(configured[key], DEFAULT_WEIGHTS[key]));
  return { minimum_score: Math.trunc(numberOr(section['minimum_score'], DEFAULT_MINIMUM_SCORE)), weights };
}
