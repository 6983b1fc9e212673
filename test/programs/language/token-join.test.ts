import { describe, expect, it } from 'vitest';

import { tokenize } from '../../../agent/programs/language/lexer.js';
import { isDottedName, joinCondition, joinTokens } from '../../../agent/programs/language/token-join.js';

const join = (source: string) => joinTokens(tokenize(source, 't.sd'));
const condition = (source: string) => joinCondition(tokenize(source, 't.sd').slice(0, -1));

describe('joinTokens (docs/program-language.md §5.1)', () => {
  it('glues unit literals and drops the trailing semicolon', () => {
    expect(join('reduce_speed 0.5 m/s;')).toBe('reduce_speed 0.5m/s');
    expect(join('reduce_speed   0.4m/s ;')).toBe('reduce_speed 0.4m/s');
  });

  it('separates punctuation and drops string quotes', () => {
    expect(join('audit.record("x");')).toBe('audit . record ( x )');
    expect(join('notify("shift lead", level: 2);')).toBe('notify ( shift lead , level : 2 )');
  });

  it('keeps percent as a separate token and operators as written', () => {
    expect(join('battery.level >= 30%;')).toBe('battery . level >= 30 %');
    expect(join('speed <= 1.2 m/s')).toBe('speed <= 1.2m/s');
  });

  it('joins a token range without slicing', () => {
    const tokens = tokenize('step a; constraint x > 2 s;', 't.sd');
    expect(joinTokens(tokens, 4, 9)).toBe('x > 2s');
  });
});

describe('joinCondition', () => {
  it('keeps a dotted name as written', () => {
    expect(condition('gps.failed')).toBe('gps.failed');
    expect(condition('robot.failed')).toBe('robot.failed');
    expect(condition('lte_lost')).toBe('lte_lost');
  });

  it('falls back to the join rule for anything else', () => {
    expect(condition('battery.level < 20%')).toBe('battery . level < 20 %');
    expect(condition('gps.lost()')).toBe('gps . lost ( )');
  });

  it('recognises dotted names exactly', () => {
    const tokens = tokenize('a.b.c a.b. .a', 't.sd');
    expect(isDottedName(tokens, 0, 5)).toBe(true);
    expect(isDottedName(tokens, 5, 9)).toBe(false);
    expect(isDottedName(tokens, 9, 11)).toBe(false);
  });
});
