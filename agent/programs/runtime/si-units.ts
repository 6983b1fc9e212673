/**
 * Unit literals to SI numbers for the interpreter: every quantity becomes one plain number in the
 * base unit of its dimension (metres, seconds, m/s, radians, …), so `0.8 m`, `800 mm` and a lidar
 * reading in metres compare directly. Temperatures and the dimensionless units keep their value.
 */

const DEG = Math.PI / 180;

const FACTORS: Record<string, number> = {
  // length
  m: 1, mm: 0.001, cm: 0.01, km: 1000, ft: 0.3048, in: 0.0254,
  // time
  s: 1, ms: 0.001, us: 1e-6, min: 60, h: 3600,
  // speed, acceleration
  'm/s': 1, 'km/h': 1 / 3.6, mph: 0.44704, 'm/s²': 1, 'm/s2': 1, g: 9.80665,
  // angle, angular rate, rotation
  rad: 1, deg: DEG, 'rad/s': 1, 'deg/s': DEG, rpm: (2 * Math.PI) / 60,
  // mass
  kg: 1, gram: 0.001, lb: 0.45359237,
  // force, torque, energy
  N: 1, kN: 1000, 'N·m': 1, Nm: 1, J: 1, Wh: 3600, kWh: 3.6e6,
  // power
  W: 1, kW: 1000, MW: 1e6,
  // electrical
  V: 1, mV: 0.001, kV: 1000, A: 1, mA: 0.001,
  // pressure
  Pa: 1, kPa: 1000, bar: 1e5, mbar: 100, psi: 6894.757293168,
  // frequency
  Hz: 1, kHz: 1000, MHz: 1e6,
  // concentrations and the rest are kept as written
};

/** The SI value of `value` written with `unit` (null or unknown unit → the value unchanged). */
export function toSI(value: number, unit: string | null): number {
  if (unit === null) return value;
  const factor = FACTORS[unit];
  return factor === undefined ? value : value * factor;
}

/** Milliseconds of a time quantity (`100ms`, `1s`, `2 min`); a bare number counts as ms. */
export function toMilliseconds(value: number, unit: string | null): number {
  if (unit === null) return value;
  const seconds = toSI(value, unit);
  return Math.round(seconds * 1000 * 1e6) / 1e6;
}
