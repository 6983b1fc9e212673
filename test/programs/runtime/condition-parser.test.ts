import { describe, expect, it } from 'vitest';

import { conditionSignals, parseCondition } from '../../../agent/programs/runtime/condition-parser.js';
import { exprText } from '../../../agent/programs/runtime/expressions.js';

describe('parseCondition (token-joined decision conditions)', () => {
  it('reads spaced and dotted member chains with glued units', () => {
    expect(exprText(parseCondition('lidar . nearest_distance < 0.5m'))).toBe('lidar.nearest_distance < 0.5m');
    expect(exprText(parseCondition('gps.fix_quality == 0'))).toBe('gps.fix_quality == 0');
    const expr = parseCondition('speed <= 1.2m/s');
    expect(expr).toMatchObject({ kind: 'binary', op: '<=', right: { kind: 'number', value: 1.2, unit: 'm/s' } });
  });

  it('handles logic, calls, parentheses and a trailing percent', () => {
    const expr = parseCondition('not ( lidar . read ( ) . nearest_distance > 1m ) and battery . level >= 30 %');
    expect(exprText(expr)).toBe('not lidar.read().nearest_distance > 1m and battery.level >= 30');
    expect(conditionSignals(expr)).toEqual(['lidar.read().nearest_distance', 'battery.level']);
    expect(conditionSignals(parseCondition('a . b < 1 or c . d == e . f'))).toEqual(['a.b', 'c.d', 'e.f']);
  });

  it('rejects what it cannot read', () => {
    expect(() => parseCondition('lidar . < 3')).toThrow('expected a name after . in condition');
    expect(() => parseCondition('a < 1 )')).toThrow("unexpected ')' in condition");
    expect(() => parseCondition('a # b')).toThrow("unexpected character '#' in condition");
  });
});
