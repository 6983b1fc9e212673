import { describe, expect, it } from 'vitest';

import {
  UNITS_LONGEST_FIRST,
  dimensionOf,
  makeQuantity,
  quantityValue,
  toHours,
  toMbps,
  toMegabytes,
  toMetresPerSecond,
  toMilliseconds,
  toRadiansPerSecond,
  toWattHours,
  toWatts,
} from '../../../agent/programs/language/units.js';

const q = (value: number, unit: string | null) => makeQuantity(value, unit, String(value));

describe('unit table', () => {
  it('is ordered longest first', () => {
    for (let i = 1; i < UNITS_LONGEST_FIRST.length; i += 1) {
      expect(UNITS_LONGEST_FIRST[i - 1]!.length).toBeGreaterThanOrEqual(UNITS_LONGEST_FIRST[i]!.length);
    }
    expect(UNITS_LONGEST_FIRST).toContain('µg/m³');
    expect(UNITS_LONGEST_FIRST).not.toContain('GB');
  });

  it('knows dimensions, including identifier units', () => {
    expect(dimensionOf('m/s2')).toBe('acceleration');
    expect(dimensionOf('N·m')).toBe('torque');
    expect(dimensionOf('GB')).toBe('memory');
    expect(dimensionOf('%')).toBe('ratio');
    expect(dimensionOf('furlongs')).toBeNull();
    expect(dimensionOf(null)).toBeNull();
  });
});

describe('conversions', () => {
  it('converts durations to milliseconds and hours', () => {
    expect(toMilliseconds(q(100, 'ms'))).toBe(100);
    expect(toMilliseconds(q(1, 's'))).toBe(1000);
    expect(toMilliseconds(q(2, 'min'))).toBe(120_000);
    expect(toMilliseconds(q(500, 'us'))).toBe(0.5);
    expect(toMilliseconds(q(10, 'Hz'))).toBe(100);
    expect(toMilliseconds(q(3, 'm'))).toBeNull();
    expect(toHours(q(90, 'min'))).toBe(1.5);
    expect(toHours(q(2, 'h'))).toBe(2);
    expect(toHours(q(45, 'min'))).toBe(0.75);
    expect(toHours(q(3, null))).toBe(3);
  });

  it('converts speed, angular rate, energy, power', () => {
    expect(toMetresPerSecond(q(0.5, 'm/s'))).toBe(0.5);
    expect(toMetresPerSecond(q(36, 'km/h'))).toBeCloseTo(10, 10);
    expect(toMetresPerSecond(q(1, 'mph'))).toBeCloseTo(0.44704, 10);
    expect(toRadiansPerSecond(q(180, 'deg/s'))).toBeCloseTo(Math.PI, 10);
    expect(toRadiansPerSecond(q(0.8, 'rad/s'))).toBe(0.8);
    expect(toWattHours(q(180, 'Wh'))).toBe(180);
    expect(toWattHours(q(1.5, 'kWh'))).toBe(1500);
    expect(toWattHours(q(3600, 'J'))).toBeCloseTo(1, 10);
    expect(toWatts(q(10, 'W'))).toBe(10);
    expect(toWatts(q(2, 'kW'))).toBe(2000);
  });

  it('converts bandwidth and memory identifiers', () => {
    expect(toMbps(q(100, 'Mbps'))).toBe(100);
    expect(toMbps(q(1, 'Gbps'))).toBe(1000);
    expect(toMegabytes(q(8, 'GB'))).toBe(8192);
    expect(toMegabytes(q(512, 'MB'))).toBe(512);
  });

  it('refuses cross-dimension conversions', () => {
    expect(quantityValue(q(5, 'kg'), 'length')).toBeNull();
    expect(quantityValue(q(5, 'km'), 'length')).toBe(5000);
  });
});
