import { describe, expect, it } from 'vitest';

import { cloneValue, deepMerge, strategyFor } from '../../agent/project/deep-merge.js';

describe('deepMerge', () => {
  it('merges tables key by key, later wins, without mutating inputs', () => {
    const a = { health: { default_interval_ms: 4000, policy: 'restart' }, tags: ['a'] };
    const b = { health: { default_interval_ms: 2000 }, tags: ['b'], extra: true };
    const snapshotA = JSON.stringify(a);
    const snapshotB = JSON.stringify(b);
    const out = deepMerge(a, b);
    expect(out).toEqual({ health: { default_interval_ms: 2000, policy: 'restart' }, tags: ['b'], extra: true });
    expect(JSON.stringify(a)).toBe(snapshotA);
    expect(JSON.stringify(b)).toBe(snapshotB);
    (out['health'] as Record<string, unknown>)['policy'] = 'changed';
    expect(a.health.policy).toBe('restart');
  });

  it('uses merge_by_id for robots and devices by default, keeping first-seen order', () => {
    const out = deepMerge(
      { devices: [{ id: 'a', port: '/dev/a' }, { id: 'b' }], other: [1, 2] },
      { devices: [{ id: 'c' }, { id: 'a', type: 'lidar' }, { name: 'no-id' }], other: [3] },
    );
    expect(out['devices']).toEqual([{ id: 'a', port: '/dev/a', type: 'lidar' }, { id: 'b' }, { id: 'c' }, { name: 'no-id' }]);
    expect(out['other']).toEqual([3]);
  });

  it('honours explicit strategies by leaf key and by dotted path', () => {
    const strategies = { tags: 'append', 'fleet.robots': 'replace', devices: 'append' } as const;
    expect(strategyFor(['fleet', 'robots'], { strategies })).toBe('replace');
    expect(strategyFor(['robots'], { strategies })).toBe('merge_by_id');
    expect(strategyFor(['x', 'tags'], { strategies })).toBe('append');
    const out = deepMerge(
      { tags: ['a'], devices: [{ id: 'd' }], fleet: { robots: [{ id: 'r1' }] } },
      { tags: ['b'], devices: [{ id: 'd' }], fleet: { robots: [{ id: 'r2' }] } },
      { strategies },
    );
    expect(out).toEqual({ tags: ['a', 'b'], devices: [{ id: 'd' }, { id: 'd' }], fleet: { robots: [{ id: 'r2' }] } });
  });

  it('replaces on type mismatch and treats a __proto__ key as plain data', () => {
    expect(deepMerge({ a: { x: 1 } }, { a: [1] })).toEqual({ a: [1] });
    expect(deepMerge({ a: [1] }, { a: { x: 1 } })).toEqual({ a: { x: 1 } });
    const source = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const out = deepMerge({}, source);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(out, '__proto__')).toBe(true);
    expect(cloneValue(source)).not.toBe(source);
  });
});
