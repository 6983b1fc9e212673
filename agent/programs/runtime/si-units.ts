/**
 * Unit literals as interpreter numbers, on top of the language's unit table (units.ts): every
 * quantity becomes one plain number in its dimension's canonical unit (metres, m/s, radians,
 * rad/s, …) so `0.8 m`, `800 mm` and a lidar reading in metres compare directly. Time is the one
 * exception: the table's canonical time unit is the millisecond, expressions use SI seconds.
 */
import { dimensionOf, makeQuantity, quantityValue, toMilliseconds as quantityMilliseconds } from '../language/units.js';

/** The interpreter value of `value` written with `unit` (null or unknown unit → unchanged). */
export function toSI(value: number, unit: string | null): number {
  if (unit === null) return value;
  const dimension = dimensionOf(unit);
  if (dimension === null) return value;
  const canonical = quantityValue(makeQuantity(value, unit, String(value)), dimension) ?? value;
  return dimension === 'time' ? canonical / 1000 : canonical;
}

/** Milliseconds of a period (`100ms`, `1s`, `2 min`, `10 Hz`); a bare number counts as ms. */
export function toMilliseconds(value: number, unit: string | null): number {
  const ms = quantityMilliseconds(makeQuantity(value, unit, String(value)));
  if (ms === null) return value;
  return Math.round(ms * 1e6) / 1e6;
}
