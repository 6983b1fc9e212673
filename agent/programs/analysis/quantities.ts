/**
 * Unit conversions the analyses need (docs/program-language.md §2) beyond the language's own table:
 * frequencies and percentages. Unknown units convert to null and the caller decides.
 */
import type { Quantity } from '../language/ast.js';

const HERTZ: Record<string, number> = { Hz: 1, kHz: 1000, MHz: 1_000_000 };

/** Durations, sizes, bandwidth and power convert through the language's unit table. */
export { toMbps, toMegabytes, toMilliseconds, toWatts } from '../language/units.js';

export function toHertz(q: Quantity): number | null {
  if (q.unit === null) return q.value;
  const factor = HERTZ[q.unit];
  return factor === undefined ? null : q.value * factor;
}

/** A percentage (`5%` or a bare `5`). */
export function toPercent(q: Quantity): number | null {
  return q.unit === '%' || q.unit === null ? q.value : null;
}

/** A number as the messages print it: at most two decimals, no trailing zeros. */
export function formatNumber(value: number): string {
  return String(Math.round(value * 100) / 100);
}
