/**
 * Unit conversions the analyses need (program-language §2). Kept local and small so the analyses
 * only depend on the program model; unknown units convert to null and the caller decides.
 */
import type { Quantity } from '../language/ast.js';

const MILLISECONDS: Record<string, number> = { ms: 1, s: 1000, us: 0.001, min: 60_000, h: 3_600_000 };
const MEGABYTES: Record<string, number> = { MB: 1, GB: 1024, KB: 1 / 1024, TB: 1024 * 1024, B: 1 / (1024 * 1024) };
const MBPS: Record<string, number> = { Mbps: 1, Gbps: 1000, kbps: 0.001, Kbps: 0.001, bps: 0.000001 };
const HERTZ: Record<string, number> = { Hz: 1, kHz: 1000, MHz: 1_000_000 };
const WATTS: Record<string, number> = { W: 1, kW: 1000, MW: 1_000_000 };

function convert(q: Quantity, table: Record<string, number>, bare: number | null): number | null {
  if (q.unit === null) return bare === null ? null : q.value * bare;
  const factor = table[q.unit];
  return factor === undefined ? null : q.value * factor;
}

/** Milliseconds; a bare number is taken as milliseconds. */
export function toMilliseconds(q: Quantity): number | null {
  return convert(q, MILLISECONDS, 1);
}

/** Megabytes; a bare number is taken as megabytes. */
export function toMegabytes(q: Quantity): number | null {
  return convert(q, MEGABYTES, 1);
}

export function toMbps(q: Quantity): number | null {
  return convert(q, MBPS, 1);
}

export function toHertz(q: Quantity): number | null {
  return convert(q, HERTZ, 1);
}

export function toWatts(q: Quantity): number | null {
  return convert(q, WATTS, 1);
}

/** A percentage (`5%` or a bare `5`). */
export function toPercent(q: Quantity): number | null {
  return q.unit === '%' || q.unit === null ? q.value : null;
}

/** A number as the messages print it: at most two decimals, no trailing zeros. */
export function formatNumber(value: number): string {
  return String(Math.round(value * 100) / 100);
}
