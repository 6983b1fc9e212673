/**
 * Every shipped example program parses (the stricter statement rules must not reject them), and
 * the deliberately broken one fails with a location.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

import { ProgramSyntaxError, parseProgram } from '../../../agent/programs/language/index.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const examplesDir = join(repoRoot, 'examples');

function sdFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sdFiles(path));
    else if (entry.name.endsWith('.sd')) files.push(path);
  }
  return files.sort();
}

const valid = sdFiles(examplesDir)
  .map((path) => relative(examplesDir, path))
  .filter((path) => !path.startsWith('invalid/'));

describe('example programs', () => {
  it('finds the example programs', () => {
    expect(valid.length).toBeGreaterThanOrEqual(17);
    const folders = new Set(valid.map((path) => path.split('/')[0]));
    expect([...folders].sort()).toEqual(expect.arrayContaining(['hull-survey', 'orchard-rovers', 'standalone', 'ward-courier']));
  });

  it.each(valid)('%s parses', (path) => {
    const program = parseProgram(readFileSync(join(examplesDir, path), 'utf8'), path);
    expect(program.file).toBe(path);
    expect(program.robots.length + program.functions.length + program.hardware.length).toBeGreaterThan(0);
  });

  it('invalid/broken.sd fails with a located parse error', () => {
    const source = readFileSync(join(examplesDir, 'invalid/broken.sd'), 'utf8');
    let error: unknown = null;
    try {
      parseProgram(source, 'invalid/broken.sd');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProgramSyntaxError);
    const syntax = error as ProgramSyntaxError;
    expect(syntax.kind).toBe('parse');
    expect(syntax.file).toBe('invalid/broken.sd');
    expect(syntax.line).toBeGreaterThan(0);
    expect(syntax.column).toBeGreaterThan(0);
    expect(syntax.sourceLine).toBe(source.split('\n')[syntax.line - 1]);
    expect(syntax.message.startsWith(`invalid/broken.sd:${syntax.line}:${syntax.column}: `)).toBe(true);
  });

  it('the missing drive argument in broken.sd is an error on its own once the block is closed', () => {
    // broken.sd fails first on its unclosed safety block; closing it must not make the file valid.
    const source = readFileSync(join(examplesDir, 'invalid/broken.sd'), 'utf8').replace(
      'stop_if imu.read().pitch > 0.4 rad;',
      'stop_if imu.read().pitch > 0.4 rad;\n    }',
    );
    let error: ProgramSyntaxError | null = null;
    try {
      parseProgram(source, 'broken-closed.sd');
    } catch (caught) {
      if (caught instanceof ProgramSyntaxError) error = caught;
    }
    expect(error?.detail).toBe("expected an expression after 'angular:', found ')'");
    expect(error?.sourceLine.trim()).toBe('wheels.drive(linear: 0.2 m/s, angular: );');
  });
});
