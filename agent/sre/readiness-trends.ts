import fs from 'node:fs';
import path from 'node:path';

/** One readiness evaluation on the time line, from the recorded samples or the CLI history file. */
export interface ReadinessEntry {
  at_ms: number;
  program: string;
  total_score: number;
  factors: Array<{ factor: string; score: number }>;
}

export interface FactorTrend {
  factor: string;
  slope_per_day: number;
  volatility: number;
  latest_score: number;
}

export interface ReadinessTrendReport {
  program: string;
  sample_count: number;
  overall_trend: FactorTrend | null;
  factor_trends: FactorTrend[];
  forecast: { horizon_days: number; minimum_score: number; predicted_score: number; risk_warning: boolean; message: string } | null;
  warnings: string[];
  /** Where the entries came from (additive): the agent's recorded samples and the CLI history file. */
  sources: { recorded_samples: number; history_file: number };
}

export const READINESS_HISTORY_FILE = 'readiness-history.json';
const DAY_MS = 86_400_000;

const round = (n: number, digits = 4) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Entries of `<state dir>/readiness-history.json` (`{version:1, entries:[{recorded_at, program,
 * total_score, factors}]}`) whose `program` has the label as its file name: the reference CLI records
 * the path as typed, so both sides are compared by basename. A missing or unreadable file is no history.
 */
export function readHistoryFile(stateDir: string, label: string): ReadinessEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(path.join(stateDir, READINESS_HISTORY_FILE), 'utf8'));
  } catch {
    return [];
  }
  const entries = (raw as { entries?: unknown })?.entries;
  if (!Array.isArray(entries)) return [];
  const out: ReadinessEntry[] = [];
  for (const e of entries as Array<Record<string, unknown>>) {
    if (typeof e?.['program'] !== 'string' || path.basename(e['program']) !== label) continue;
    const at = Date.parse(String(e['recorded_at']));
    const total = Number(e['total_score']);
    if (!Number.isFinite(at) || !Number.isFinite(total)) continue;
    const factors = Array.isArray(e['factors'])
      ? (e['factors'] as Array<Record<string, unknown>>)
          .filter((f) => typeof f?.['factor'] === 'string' && Number.isFinite(Number(f['score'])))
          .map((f) => ({ factor: String(f['factor']), score: Number(f['score']) }))
      : [];
    out.push({ at_ms: at, program: label, total_score: total, factors });
  }
  return out;
}

function trendOf(factor: string, series: Array<{ at_ms: number; score: number }>): FactorTrend {
  const first = series[0]!;
  const last = series[series.length - 1]!;
  if (series.length < 2) return { factor, slope_per_day: 0, volatility: 0, latest_score: last.score };
  const days = Math.max((last.at_ms - first.at_ms) / DAY_MS, 0.01);
  const mean = series.reduce((a, p) => a + p.score, 0) / series.length;
  const variance = series.reduce((a, p) => a + (p.score - mean) ** 2, 0) / series.length;
  return { factor, slope_per_day: round((last.score - first.score) / days), volatility: round(Math.sqrt(variance)), latest_score: last.score };
}

/**
 * The readiness trend report of one program label (docs/observability.md § Readiness trends): one
 * series per factor of the newest entry plus `overall` (the total score); slope per day between the
 * first and the newest entry, population standard deviation as volatility, and a linear forecast at
 * `horizonDays` compared with `minimumScore`.
 */
export function readinessTrendReport(
  label: string,
  entries: { recorded: ReadinessEntry[]; file: ReadinessEntry[] },
  options: { horizonDays: number; minimumScore: number; sampleIntervalSecs: number },
): ReadinessTrendReport {
  const all = [...entries.file, ...entries.recorded].sort((a, b) => a.at_ms - b.at_ms);
  const sources = { recorded_samples: entries.recorded.length, history_file: entries.file.length };
  if (all.length === 0) {
    const how = options.sampleIntervalSecs > 0 ? `the agent records one every ${options.sampleIntervalSecs} s` : 'sampling is off (SVC_SRE_SAMPLE_INTERVAL_SECS=0)';
    return {
      program: label,
      sample_count: 0,
      overall_trend: null,
      factor_trends: [],
      forecast: null,
      warnings: [`no readiness history recorded for ${label}; ${how}`],
      sources,
    };
  }
  const warnings: string[] = [];
  if (all.length < 2) warnings.push('need at least two recorded readiness evaluations to compute trends');
  const latest = all[all.length - 1]!;
  const factorTrends = latest.factors.map((f) =>
    trendOf(
      f.factor,
      all.flatMap((e) => {
        const hit = e.factors.find((x) => x.factor === f.factor);
        return hit ? [{ at_ms: e.at_ms, score: hit.score }] : [];
      }),
    ),
  );
  const overall = trendOf('overall', all.map((e) => ({ at_ms: e.at_ms, score: e.total_score })));
  const h = options.horizonDays;
  const m = options.minimumScore;
  const predicted = Math.min(100, Math.max(0, Math.round(overall.latest_score + overall.slope_per_day * h)));
  const risk = predicted < m;
  const message = risk ? `forecast ${h}d score ${predicted} below policy minimum ${m}` : `forecast ${h}d score ${predicted} remains above minimum ${m}`;
  if (risk) warnings.push(message);
  return {
    program: label,
    sample_count: all.length,
    overall_trend: overall,
    factor_trends: factorTrends,
    forecast: { horizon_days: h, minimum_score: m, predicted_score: predicted, risk_warning: risk, message },
    warnings,
    sources,
  };
}
