/** Drift findings and reports (docs/operations.md § Drift). */

export const FINDING_DIMENSIONS = ['configuration', 'fleet', 'device', 'provider', 'package', 'mapping', 'program', 'hardware', 'firmware', 'policy', 'safety'] as const;
export type FindingDimension = (typeof FINDING_DIMENSIONS)[number];

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type DriftSeverity = (typeof SEVERITIES)[number];

/** The seven rollup dimensions, in the order `dimensions_checked` lists them. */
export const ROLLUP_DIMENSIONS = ['configuration', 'firmware', 'package', 'provider', 'capability', 'policy', 'safety'] as const;
export type RollupDimension = (typeof ROLLUP_DIMENSIONS)[number];

const ROLLUP_OF: Record<FindingDimension, RollupDimension> = {
  configuration: 'configuration',
  fleet: 'configuration',
  device: 'configuration',
  provider: 'provider',
  package: 'package',
  mapping: 'capability',
  program: 'capability',
  hardware: 'capability',
  firmware: 'firmware',
  policy: 'policy',
  safety: 'safety',
};

export interface DriftFinding {
  dimension: FindingDimension;
  severity: DriftSeverity;
  message: string;
  path: string | null;
}

export interface DriftReport {
  passed: boolean;
  findings: DriftFinding[];
  by_dimension: Partial<Record<RollupDimension, number>>;
  dimensions_checked: RollupDimension[];
}

export function rank(s: DriftSeverity): number {
  return SEVERITIES.indexOf(s);
}

export function finding(dimension: FindingDimension, severity: DriftSeverity, message: string, path: string | null = null): DriftFinding {
  return { dimension, severity, message, path };
}

/** `passed` is false as soon as a finding is medium or worse; rollup counts have sorted keys and no zeros. */
export function buildReport(findings: DriftFinding[]): DriftReport {
  const counts = new Map<RollupDimension, number>();
  for (const f of findings) counts.set(ROLLUP_OF[f.dimension], (counts.get(ROLLUP_OF[f.dimension]) ?? 0) + 1);
  const by_dimension = Object.fromEntries([...counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  return {
    passed: !findings.some((f) => rank(f.severity) >= rank('medium')),
    findings,
    by_dimension,
    dimensions_checked: [...ROLLUP_DIMENSIONS],
  };
}

/** A value in a message: strings quoted, absent as `null`, everything else as JSON. */
export function show(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return v.toString();
  return JSON.stringify(v);
}
