/**
 * The autonomy settings read from the resolved configuration (docs/autonomy.md § Configuration):
 * `[autonomy.homeostasis]` set points, `[autonomy.reflex]` limits and `[[autonomy.attention.suppress]]`
 * rules. The root manifest's own data tables are not merged (docs/configuration.md), so these tables
 * live in a layer or fragment. Anything absent takes the documented default.
 */

export interface SetPoint {
  min: number;
  max: number;
  /** Fraction of the range above which a value is `approaching_limit`; null: no warning band. */
  warn: number | null;
  unit: string;
}

/** Platform defaults (docs/autonomy.md § Homeostasis). */
export const DEFAULT_SET_POINTS: Readonly<Record<string, SetPoint>> = {
  cpu_pct: { min: 0, max: 85, warn: 0.75, unit: 'pct' },
  memory_pct: { min: 0, max: 90, warn: 0.8, unit: 'pct' },
  host_memory_pct: { min: 0, max: 90, warn: 0.8, unit: 'pct' },
  load_per_cpu: { min: 0, max: 1.5, warn: 0.8, unit: 'ratio' },
  event_loop_lag_ms: { min: 0, max: 200, warn: 0.5, unit: 'ms' },
  battery_pct: { min: 15, max: 100, warn: null, unit: 'pct' },
  temperature_c: { min: -10, max: 75, warn: 0.85, unit: 'C' },
  latency_ms: { min: 0, max: 500, warn: 0.8, unit: 'ms' },
  link_error_pct: { min: 0, max: 5, warn: 0.5, unit: 'pct' },
  telemetry_age_s: { min: 0, max: 30, warn: 0.5, unit: 's' },
};

export interface ReflexLimits {
  thermal_limit_c: number;
  max_current_a: number;
  min_distance_m: number;
}

export const DEFAULT_REFLEX_LIMITS: Readonly<ReflexLimits> = { thermal_limit_c: 75, max_current_a: 20, min_distance_m: 0.3 };

export interface SuppressionRule {
  /** Matched against an item's label (substring) or, for `routine`, its priority. */
  pattern: string;
  max_repeats: number;
  window_secs: number;
}

export interface AutonomyConfig {
  setPoints: Record<string, SetPoint>;
  /** `config` when `[autonomy.homeostasis]` set anything, else `platform_defaults`. */
  setPointSource: 'config' | 'platform_defaults';
  reflex: ReflexLimits;
  suppression: SuppressionRule[];
  suppressionSource: 'config' | 'platform_defaults';
}

const table = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The routine suppression the platform applies without configuration (suppress routine while anything is critical). */
export const DEFAULT_SUPPRESSION: readonly SuppressionRule[] = [{ pattern: 'routine', max_repeats: 3, window_secs: 60 }];

export function autonomyConfig(tree: Record<string, unknown> | null | undefined, warn: (m: string) => void = () => undefined): AutonomyConfig {
  const autonomy = table(tree?.['autonomy']);
  const homeostasis = table(autonomy['homeostasis']);
  const setPoints: Record<string, SetPoint> = Object.fromEntries(Object.entries(DEFAULT_SET_POINTS).map(([k, v]) => [k, { ...v }]));
  for (const [metric, raw] of Object.entries(homeostasis)) {
    const t = table(raw);
    const base = setPoints[metric] ?? { min: 0, max: 100, warn: 0.8, unit: '' };
    const min = num(t['min']) ?? base.min;
    const max = num(t['max']) ?? base.max;
    if (min >= max) {
      warn(`[autonomy.homeostasis.${metric}] min ${min} is not below max ${max}; keeping ${base.min}..${base.max}`);
      continue;
    }
    const w = t['warn'] === false ? null : (num(t['warn']) ?? base.warn);
    setPoints[metric] = { min, max, warn: w, unit: typeof t['unit'] === 'string' ? t['unit'] : base.unit };
  }
  const r = table(autonomy['reflex']);
  const reflex: ReflexLimits = {
    thermal_limit_c: num(r['thermal_limit_c']) ?? DEFAULT_REFLEX_LIMITS.thermal_limit_c,
    max_current_a: num(r['max_current_a']) ?? DEFAULT_REFLEX_LIMITS.max_current_a,
    min_distance_m: num(r['min_distance_m']) ?? DEFAULT_REFLEX_LIMITS.min_distance_m,
  };
  const rawRules = table(autonomy['attention'])['suppress'];
  const suppression: SuppressionRule[] = Array.isArray(rawRules)
    ? rawRules
        .map(table)
        .filter((t) => typeof t['pattern'] === 'string' && t['pattern'] !== '')
        .map((t) => ({ pattern: t['pattern'] as string, max_repeats: Math.max(0, Math.trunc(num(t['max_repeats']) ?? 5)), window_secs: Math.max(1, num(t['window_secs']) ?? 120) }))
    : [];
  return {
    setPoints,
    setPointSource: Object.keys(homeostasis).length > 0 ? 'config' : 'platform_defaults',
    reflex,
    suppression: suppression.length > 0 ? suppression : [...DEFAULT_SUPPRESSION],
    suppressionSource: suppression.length > 0 ? 'config' : 'platform_defaults',
  };
}
