import { describe, expect, it } from 'vitest';

import { tokenize, type Token } from '../../../agent/programs/language/lexer.js';
import { ProgramSyntaxError } from '../../../agent/programs/language/syntax-error.js';

const lex = (source: string) => tokenize(source, 'test.sd').filter((t) => t.type !== 'eof');
const brief = (tokens: Token[]) => tokens.map((t) => `${t.type}:${t.lexeme}`);

function unitOf(source: string): { lexeme: string; unit: string | null; value: number | string } {
  const [first] = lex(source);
  return { lexeme: first!.lexeme, unit: first!.unit, value: first!.value };
}

describe('tokenize: unit literals (docs/program-language.md §2)', () => {
  const table: Record<string, string[]> = {
    length: ['m', 'mm', 'cm', 'km', 'ft', 'in'],
    time: ['s', 'ms', 'us', 'min', 'h'],
    speed: ['m/s', 'km/h', 'mph', 'm/s²', 'm/s2', 'g'],
    angle: ['rad', 'deg', 'rad/s', 'deg/s'],
    mass: ['kg', 'gram', 'lb'],
    force: ['N', 'kN', 'N·m', 'Nm', 'J'],
    power: ['W', 'kW', 'MW', 'Wh', 'kWh'],
    electrical: ['V', 'mV', 'kV', 'A', 'mA'],
    temperature: ['celsius', 'fahrenheit', 'kelvin'],
    pressure: ['Pa', 'kPa', 'bar', 'mbar', 'psi'],
    frequency: ['Hz', 'kHz', 'MHz'],
    humidity: ['rh', '%RH', '%VWC', 'vwc'],
    light: ['lux', 'lx', 'cd/m²', 'nit'],
    concentration: ['ppm', 'ppb', 'ppt', 'ug/m3', 'µg/m³'],
    sound: ['dB', 'dBA'],
    magnetic: ['uT', 'gauss'],
    rotation: ['rpm'],
    environment: ['uvi', 'pH', 'NTU', 'FNU', 'psu', 'uS/cm', 'mS/cm', 'S/m'],
    radiation: ['uSv/h', 'mSv/h'],
  };
  for (const [dimension, units] of Object.entries(table)) {
    it(`lexes every ${dimension} unit glued and spaced`, () => {
      for (const unit of units) {
        expect(unitOf(`12.5 ${unit};`)).toEqual({ lexeme: `12.5${unit}`, unit, value: 12.5 });
        expect(unitOf(`3${unit})`)).toEqual({ lexeme: `3${unit}`, unit, value: 3 });
      }
    });
  }

  it('glues the number and unit with no space and keeps digits as written', () => {
    expect(brief(lex('0.5 m/s'))).toEqual(['unit_number:0.5m/s']);
    expect(brief(lex('100ms'))).toEqual(['unit_number:100ms']);
    expect(brief(lex('2.50\tkWh'))).toEqual(['unit_number:2.50kWh']);
  });

  it('matches the longest unit first', () => {
    expect(unitOf('10m/s2').unit).toBe('m/s2');
    expect(unitOf('10 m/s²').unit).toBe('m/s²');
    expect(unitOf('10 m/s').unit).toBe('m/s');
    expect(unitOf('5 mbar').unit).toBe('mbar');
    expect(unitOf('5 ms').unit).toBe('ms');
    expect(unitOf('5 dBA').unit).toBe('dBA');
    expect(unitOf('3 mSv/h').unit).toBe('mSv/h');
  });

  it('takes a unit only when the next character is neither an identifier character nor /', () => {
    expect(brief(lex('5 min'))).toEqual(['unit_number:5min']);
    expect(brief(lex('5 minutes'))).toEqual(['number:5', 'ident:minutes']);
    expect(brief(lex('5 sec'))).toEqual(['number:5', 'ident:sec']);
    expect(brief(lex('10 m/x'))).toEqual(['number:10', 'ident:m', 'punct:/', 'ident:x']);
    expect(brief(lex('4 meters'))).toEqual(['number:4', 'ident:meters']);
  });

  it('accepts the Greek mu for µ and normalises the unit', () => {
    expect(unitOf('40 μg/m³')).toEqual({ lexeme: '40μg/m³', unit: 'µg/m³', value: 40 });
  });

  it('does not take units across a line break', () => {
    expect(brief(lex('x = 5\nm = 2'))).toEqual(['ident:x', 'punct:=', 'number:5', 'ident:m', 'punct:=', 'number:2']);
  });

  it('lexes 20% as a number followed by %, and %RH as a unit', () => {
    expect(brief(lex('cpu <= 20%;'))).toEqual(['ident:cpu', 'punct:<=', 'number:20', 'punct:%', 'punct:;']);
    expect(brief(lex('60 %RH'))).toEqual(['unit_number:60%RH']);
  });

  it('keeps GB, MB, Mbps and TOPS as identifiers', () => {
    expect(brief(lex('8 GB 512MB 100 Mbps 32 TOPS'))).toEqual([
      'number:8', 'ident:GB', 'number:512', 'ident:MB', 'number:100', 'ident:Mbps', 'number:32', 'ident:TOPS',
    ]);
  });
});

describe('tokenize: numbers, strings, comments', () => {
  it('lexes decimal and hexadecimal numbers with their values', () => {
    const tokens = lex('42 0.25 0x1F 0XfF 1_000 1e3');
    expect(tokens.map((t) => t.value)).toEqual([42, 0.25, 31, 255, 1000, 1000]);
    expect(tokens.every((t) => t.type === 'number')).toBe(true);
  });

  it('leaves ranges alone: 0..10 is number . . number', () => {
    expect(brief(lex('0..10'))).toEqual(['number:0', 'punct:.', 'punct:.', 'number:10']);
  });

  it('unescapes strings; the value excludes the quotes and the lexeme keeps them', () => {
    const [s] = lex('"a \\"quoted\\" \\\\ path\\n"');
    expect(s!.type).toBe('string');
    expect(s!.value).toBe('a "quoted" \\ path\n');
    expect(s!.lexeme).toBe('"a \\"quoted\\" \\\\ path\\n"');
  });

  it('skips // and //! comments, and turns /// into doc tokens', () => {
    const tokens = lex('// plain\n//! inner\n/// Patrol rover.\nrobot R {} //// not doc');
    expect(brief(tokens)).toEqual(['doc:/// Patrol rover.', 'ident:robot', 'ident:R', 'punct:{', 'punct:}']);
    expect(tokens[0]!.value).toBe('Patrol rover.');
  });

  it('does not treat /* */ as a comment', () => {
    expect(() => lex('/* x */')).not.toThrow();
    expect(lex('a /* x */')[1]!.lexeme).toBe('/');
  });

  it('records 1-based line and column', () => {
    const tokens = lex('robot R {\n    sensor lidar: Lidar;\n}');
    const lidar = tokens.find((t) => t.lexeme === 'lidar')!;
    expect([lidar.line, lidar.column]).toEqual([2, 12]);
    const eof = tokenize('a\nb', 'f.sd').at(-1)!;
    expect(eof.type).toBe('eof');
  });
});

describe('tokenize: operators, keywords, regex', () => {
  it('lexes every operator and punctuation mark', () => {
    const source = '{ } ( ) [ ] ; : , . + - * % < <= > >= == != = => -> @ a / b';
    const lexemes = lex(source).map((t) => t.lexeme);
    expect(lexemes).toEqual(source.split(' '));
    expect(lex(source).filter((t) => t.type === 'punct')).toHaveLength(25);
  });

  it('marks and, or, not as keywords and other words as identifiers', () => {
    expect(brief(lex('not a and b or robot'))).toEqual(['keyword:not', 'ident:a', 'keyword:and', 'ident:b', 'keyword:or', 'ident:robot']);
  });

  it('starts a regex after =, (, matches, where, return, comparison operators and at the start', () => {
    expect(brief(lex('/^ab+$/'))).toEqual(['regex:/^ab+$/']);
    expect(brief(lex('x matches /^[A-Z]{3}\\/\\d+$/;'))).toEqual(['ident:x', 'ident:matches', 'regex:/^[A-Z]{3}\\/\\d+$/', 'punct:;']);
    expect(lex('let r = /a b/;')[3]).toMatchObject({ type: 'regex', value: 'a b' });
    expect(lex('f(/x/, 1)')[2]!.type).toBe('regex');
    expect(lex('return /y/;')[1]!.type).toBe('regex');
  });

  it('reads / as division after a value', () => {
    expect(brief(lex('a / b / c'))).toEqual(['ident:a', 'punct:/', 'ident:b', 'punct:/', 'ident:c']);
    expect(brief(lex('(x) / 2'))).toEqual(['punct:(', 'ident:x', 'punct:)', 'punct:/', 'number:2']);
    expect(brief(lex('10 / 2'))).toEqual(['number:10', 'punct:/', 'number:2']);
  });

  it('falls back to division when a regex would not close on its line', () => {
    expect(brief(lex('x = / 2\n'))).toEqual(['ident:x', 'punct:=', 'punct:/', 'number:2']);
  });
});

describe('tokenize: errors', () => {
  function errorOf(source: string): ProgramSyntaxError {
    try {
      tokenize(source, 'bad.sd');
    } catch (error) {
      return error as ProgramSyntaxError;
    }
    throw new Error('expected a tokenize error');
  }

  it('reports an unterminated string with file, line, column and the offending line', () => {
    const error = errorOf('robot R {\n  sensor s: Lidar on "/dev/tty;\n}');
    expect(error).toBeInstanceOf(ProgramSyntaxError);
    expect(error.kind).toBe('tokenize');
    expect([error.file, error.line, error.column]).toEqual(['bad.sd', 2, 22]);
    expect(error.detail).toBe('unterminated string literal');
    expect(error.message).toBe(
      'bad.sd:2:22: unterminated string literal\n    sensor s: Lidar on "/dev/tty;\n                       ^',
    );
  });

  it('reports a bad character with a hint for C-style operators', () => {
    const error = errorOf('if a && b {}');
    expect([error.line, error.column]).toEqual([1, 6]);
    expect(error.detail).toBe("unexpected character '&' (use 'and')");
    expect(errorOf('x = #').detail).toBe("unexpected character '#'");
    expect(errorOf('if !x {}').detail).toBe("unexpected character '!' (use 'not')");
  });
});
