import { describe, expect, it } from 'vitest';
import { compareIds } from '../../agent/core/id-order.js';

/** A small deterministic generator: the same ids on every run. */
function ids(alphabet: string, n: number, seed: number): string[] {
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    const len = Math.floor(next() * 7);
    for (let j = 0; j < len; j++) s += alphabet[Math.floor(next() * alphabet.length)];
    out.push(s);
  }
  return out;
}

describe('compareIds (agent/core/id-order.ts)', () => {
  it('gives the sign of localeCompare for plain ids and for any other ids', () => {
    for (const alphabet of ['0123456789abcdefghijklmnopqrstuvwxyz-./', 'aZ_:-0é.', 'abAB_-']) {
      const list = ids(alphabet, 600, 7);
      for (let i = 0; i + 1 < list.length; i++) {
        const a = list[i]!;
        const b = list[i + 1]!;
        expect(Math.sign(compareIds(a, b)), `${a} vs ${b}`).toBe(Math.sign(a.localeCompare(b)));
      }
    }
  });

  it('sorts a mixed list exactly as localeCompare does', () => {
    const list = ['rss-10', 'rss-2', 'imu_01', 'IMU-1', 'a.b', 'a/b', 'a-b', 'ab', 'Zeta', 'zeta', 'a:b', ''];
    expect([...list].sort(compareIds)).toEqual([...list].sort((a, b) => a.localeCompare(b)));
  });
});
