/**
 * Units of the program language (docs/program-language.md §2) and the conversions the analyses and the
 * simulator need. The lexer matches unit suffixes against `UNITS_LONGEST_FIRST`; everything else
 * here turns a `Quantity` (number + unit as written) into one canonical magnitude.
 */

import type { Quantity } from './ast.js';

export type Dimension =
  | 'length'
  | 'time'
  | 'speed'
  | 'acceleration'
  | 'angle'
  | 'angular_rate'
  | 'mass'
  | 'force'
  | 'torque'
  | 'energy'
  | 'power'
  | 'electrical_potential'
  | 'current'
  | 'temperature'
  | 'pressure'
  | 'frequency'
  | 'humidity'
  | 'light'
  | 'concentration'
  | 'sound'
  | 'magnetic'
  | 'rotation'
  | 'environment'
  | 'radiation'
  | 'ratio'
  | 'bandwidth'
  | 'memory'
  | 'compute';

interface UnitInfo {
  dimension: Dimension;
  /** Multiplier to the dimension's canonical unit (ms, m, m/s, rad/s, Wh, W, Mbps, MB, …). */
  factor: number;
}

const DEG = Math.PI / 180;

/**
 * Units known to the lexer (docs/program-language.md §2 table), with their canonical factors. Canonical units: length m,
 * time ms, speed m/s, acceleration m/s², angle rad, angular rate rad/s, mass kg, force N, torque N·m,
 * energy Wh, power W, frequency Hz, pressure Pa. Dimensions nobody converts keep factor 1.
 */
const LEXER_UNITS: Record<string, UnitInfo> = {
  // Length
  m: { dimension: 'length', factor: 1 },
  mm: { dimension: 'length', factor: 0.001 },
  cm: { dimension: 'length', factor: 0.01 },
  km: { dimension: 'length', factor: 1000 },
  ft: { dimension: 'length', factor: 0.3048 },
  in: { dimension: 'length', factor: 0.0254 },
  // Time (canonical: milliseconds)
  s: { dimension: 'time', factor: 1000 },
  ms: { dimension: 'time', factor: 1 },
  us: { dimension: 'time', factor: 0.001 },
  min: { dimension: 'time', factor: 60_000 },
  h: { dimension: 'time', factor: 3_600_000 },
  // Speed / acceleration
  'm/s': { dimension: 'speed', factor: 1 },
  'km/h': { dimension: 'speed', factor: 1000 / 3600 },
  mph: { dimension: 'speed', factor: 0.44704 },
  'm/s²': { dimension: 'acceleration', factor: 1 },
  'm/s2': { dimension: 'acceleration', factor: 1 },
  g: { dimension: 'acceleration', factor: 9.80665 },
  // Angle / angular rate
  rad: { dimension: 'angle', factor: 1 },
  deg: { dimension: 'angle', factor: DEG },
  'rad/s': { dimension: 'angular_rate', factor: 1 },
  'deg/s': { dimension: 'angular_rate', factor: DEG },
  // Mass
  kg: { dimension: 'mass', factor: 1 },
  gram: { dimension: 'mass', factor: 0.001 },
  lb: { dimension: 'mass', factor: 0.45359237 },
  // Force / torque / energy
  N: { dimension: 'force', factor: 1 },
  kN: { dimension: 'force', factor: 1000 },
  'N·m': { dimension: 'torque', factor: 1 },
  Nm: { dimension: 'torque', factor: 1 },
  J: { dimension: 'energy', factor: 1 / 3600 },
  // Power / energy (canonical: W and Wh)
  W: { dimension: 'power', factor: 1 },
  kW: { dimension: 'power', factor: 1000 },
  MW: { dimension: 'power', factor: 1_000_000 },
  Wh: { dimension: 'energy', factor: 1 },
  kWh: { dimension: 'energy', factor: 1000 },
  // Electrical
  V: { dimension: 'electrical_potential', factor: 1 },
  mV: { dimension: 'electrical_potential', factor: 0.001 },
  kV: { dimension: 'electrical_potential', factor: 1000 },
  A: { dimension: 'current', factor: 1 },
  mA: { dimension: 'current', factor: 0.001 },
  // Temperature (not linear between scales; factor unused)
  celsius: { dimension: 'temperature', factor: 1 },
  fahrenheit: { dimension: 'temperature', factor: 1 },
  kelvin: { dimension: 'temperature', factor: 1 },
  // Pressure
  Pa: { dimension: 'pressure', factor: 1 },
  kPa: { dimension: 'pressure', factor: 1000 },
  bar: { dimension: 'pressure', factor: 100_000 },
  mbar: { dimension: 'pressure', factor: 100 },
  psi: { dimension: 'pressure', factor: 6894.757 },
  // Frequency
  Hz: { dimension: 'frequency', factor: 1 },
  kHz: { dimension: 'frequency', factor: 1000 },
  MHz: { dimension: 'frequency', factor: 1_000_000 },
  // Humidity / moisture
  rh: { dimension: 'humidity', factor: 1 },
  '%RH': { dimension: 'humidity', factor: 1 },
  '%VWC': { dimension: 'humidity', factor: 1 },
  vwc: { dimension: 'humidity', factor: 1 },
  // Light
  lux: { dimension: 'light', factor: 1 },
  lx: { dimension: 'light', factor: 1 },
  'cd/m²': { dimension: 'light', factor: 1 },
  nit: { dimension: 'light', factor: 1 },
  // Concentration
  ppm: { dimension: 'concentration', factor: 1 },
  ppb: { dimension: 'concentration', factor: 0.001 },
  ppt: { dimension: 'concentration', factor: 0.000001 },
  'ug/m3': { dimension: 'concentration', factor: 1 },
  'µg/m³': { dimension: 'concentration', factor: 1 },
  // Sound
  dB: { dimension: 'sound', factor: 1 },
  dBA: { dimension: 'sound', factor: 1 },
  // Magnetic
  uT: { dimension: 'magnetic', factor: 1 },
  gauss: { dimension: 'magnetic', factor: 100 },
  // Rotation
  rpm: { dimension: 'rotation', factor: 1 },
  // Water / environment
  uvi: { dimension: 'environment', factor: 1 },
  pH: { dimension: 'environment', factor: 1 },
  NTU: { dimension: 'environment', factor: 1 },
  FNU: { dimension: 'environment', factor: 1 },
  psu: { dimension: 'environment', factor: 1 },
  'uS/cm': { dimension: 'environment', factor: 1 },
  'mS/cm': { dimension: 'environment', factor: 1000 },
  'S/m': { dimension: 'environment', factor: 10_000 },
  // Radiation
  'uSv/h': { dimension: 'radiation', factor: 1 },
  'mSv/h': { dimension: 'radiation', factor: 1000 },
};

/**
 * Units that are identifiers to the lexer (`8 GB` is Number + Ident) but carry a magnitude for the
 * hardware block, budgets and requirements. Also the `%` that follows a number.
 */
const NON_LEXER_UNITS: Record<string, UnitInfo> = {
  '%': { dimension: 'ratio', factor: 1 },
  KB: { dimension: 'memory', factor: 1 / 1024 },
  MB: { dimension: 'memory', factor: 1 },
  GB: { dimension: 'memory', factor: 1024 },
  TB: { dimension: 'memory', factor: 1024 * 1024 },
  Kbps: { dimension: 'bandwidth', factor: 0.001 },
  Mbps: { dimension: 'bandwidth', factor: 1 },
  Gbps: { dimension: 'bandwidth', factor: 1000 },
  TOPS: { dimension: 'compute', factor: 1 },
};

/** Unit suffixes in the order the lexer must try them (longest first, then code-point order). */
export const UNITS_LONGEST_FIRST: readonly string[] = Object.keys(LEXER_UNITS).sort(
  (a, b) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0),
);

/** Identifiers that read as a unit after a number (`8 GB`, `100 Mbps`, `32 TOPS`). */
export const IDENTIFIER_UNITS: ReadonlySet<string> = new Set(Object.keys(NON_LEXER_UNITS).filter((u) => u !== '%'));

/** `µ` may be typed as MICRO SIGN (U+00B5) or GREEK SMALL LETTER MU (U+03BC); both mean micro. */
export function normaliseUnit(unit: string): string {
  return unit.includes('\u03bc') ? unit.replace(/\u03bc/g, '\u00b5') : unit;
}

export function isLexerUnit(unit: string): boolean {
  return Object.hasOwn(LEXER_UNITS, normaliseUnit(unit));
}

function unitInfo(unit: string | null): UnitInfo | null {
  if (unit === null) return null;
  const u = normaliseUnit(unit);
  return LEXER_UNITS[u] ?? NON_LEXER_UNITS[u] ?? null;
}

export function dimensionOf(unit: string | null): Dimension | null {
  return unitInfo(unit)?.dimension ?? null;
}

/**
 * The quantity in the canonical unit of `dimension`, or null when its unit belongs to another
 * dimension. A bare number (unit null) is taken as already canonical.
 */
export function quantityValue(q: Quantity, dimension: Dimension): number | null {
  if (q.unit === null) return q.value;
  const info = unitInfo(q.unit);
  if (!info || info.dimension !== dimension) return null;
  return q.value * info.factor;
}

/** Durations → milliseconds. A bare number is read as milliseconds; `Hz` as a period (1 / f). */
export function toMilliseconds(q: Quantity): number | null {
  const info = unitInfo(q.unit);
  if (info?.dimension === 'frequency') {
    const hz = q.value * info.factor;
    return hz > 0 ? 1000 / hz : null;
  }
  return quantityValue(q, 'time');
}

/** Durations → hours (`90 min` → 1.5). A bare number is read as hours (mission duration). */
export function toHours(q: Quantity): number | null {
  if (q.unit === null) return q.value;
  const ms = quantityValue(q, 'time');
  return ms === null ? null : ms / 3_600_000;
}

/** Speeds → m/s (`km/h`, `mph`). A bare number is read as m/s. */
export function toMetresPerSecond(q: Quantity): number | null {
  return quantityValue(q, 'speed');
}

/** Angular rates → rad/s (`deg/s`). A bare number is read as rad/s. */
export function toRadiansPerSecond(q: Quantity): number | null {
  return quantityValue(q, 'angular_rate');
}

/** Energy → Wh (`kWh`, `J`). A bare number is read as Wh. */
export function toWattHours(q: Quantity): number | null {
  return quantityValue(q, 'energy');
}

/** Power → W (`kW`). A bare number is read as W. */
export function toWatts(q: Quantity): number | null {
  return quantityValue(q, 'power');
}

/** Bandwidth → Mbps (`Gbps`, `Kbps`). A bare number is read as Mbps. */
export function toMbps(q: Quantity): number | null {
  return quantityValue(q, 'bandwidth');
}

/** Memory / storage → MB (`GB` × 1024). A bare number is read as MB. */
export function toMegabytes(q: Quantity): number | null {
  return quantityValue(q, 'memory');
}

/** Lengths → metres. A bare number is read as metres. */
export function toMetres(q: Quantity): number | null {
  return quantityValue(q, 'length');
}

/** Builds a Quantity the way the lexer glues it: `<digits as written><unit>`. */
export function makeQuantity(value: number, unit: string | null, digits: string): Quantity {
  return { value, unit, text: unit === null ? digits : digits + unit };
}
