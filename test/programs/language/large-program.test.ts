import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { parseProgram } from '../../../agent/programs/language/index.js';

/**
 * Local performance check (not a timed assertion: CI machines are shared). Builds a 5 000+ line
 * program from the patrol demo with fresh names, plus a block of tolerant-layer statements and keyword-expression statements (the
 * backtracking path), parses it and prints how long that took. Expect well under 100 ms warm.
 */
function generate(): string {
  const patrol = readFileSync('demo/programs/patrol.sd', 'utf8').replace(/^(module|import) .*$/gm, '');
  const parts: string[] = [];
  let lines = 0;
  for (let i = 0; lines < 5000; i += 1) {
    const copy = patrol.replace(/\bSentinel\b/g, `Sentinel${i}`);
    const opaque = Array.from({ length: 20 }, (_, k) => `        reduce_speed 0.${k} m/s; spawn worker${k}();`).join('\n');
    const extra = `robot Extra${i} {\n    behavior b() {\n${opaque}\n    }\n}\n`;
    parts.push(copy, extra);
    lines += copy.split('\n').length + extra.split('\n').length;
  }
  return parts.join('\n');
}

describe('large programs', () => {
  it('parses a generated 5 000-line program completely', () => {
    const source = generate();
    const lineCount = source.split('\n').length;
    expect(lineCount).toBeGreaterThanOrEqual(5000);
    // How fast is measured by scripts/bench/program-analysis.js, not here.
    const program = parseProgram(source, 'large.sd');
    const copies = program.robots.length / 2;
    expect(Number.isInteger(copies)).toBe(true);
    expect(program.recoveryPolicies).toHaveLength(copies);
    expect(program.robots.filter((r) => r.name.startsWith('Sentinel')).every((r) => r.sensors.length === 5 && r.tasks.length === 2)).toBe(true);
    const extra = program.robots.find((r) => r.name === 'Extra0')!;
    expect(extra.behaviors[0]!.body).toHaveLength(40);
    // `reduce_speed …` stays opaque (the tolerant path); `spawn workerN();` is a keyword-expression statement.
    expect(extra.behaviors[0]!.body.every((s, k) => s.kind === (k % 2 === 0 ? 'opaque' : 'expr'))).toBe(true);
  });
});
