import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

import { ProgramSyntaxError, parseProgram, type Program } from '../../../agent/programs/language/index.js';

const corpusDir = path.resolve('test/programs/language/corpus');
const files = readdirSync(corpusDir).filter((f) => f.endsWith('.sd')).sort();

function tryParse(file: string): { program: Program | null; error: string | null } {
  try {
    return { program: parseProgram(readFileSync(path.join(corpusDir, file), 'utf8'), file), error: null };
  } catch (error) {
    if (error instanceof ProgramSyntaxError) return { program: null, error: error.message };
    throw error;
  }
}

const results = new Map(files.map((f) => [f, tryParse(f)]));
const program = (file: string): Program => {
  const result = results.get(file);
  if (!result?.program) throw new Error(`${file} did not parse: ${result?.error}`);
  return result.program;
};

describe('corpus of realistic programs', () => {
  it('has at least 40 programs and parses at least 90% of them (reporting failures)', () => {
    expect(files.length).toBeGreaterThanOrEqual(40);
    const failures = [...results].filter(([, r]) => r.error !== null).map(([f, r]) => `${f}: ${r.error}`);
    const coverage = (files.length - failures.length) / files.length;
    expect(failures, `failed to parse:\n${failures.join('\n')}`).toEqual([]);
    expect(coverage).toBeGreaterThanOrEqual(0.9);
  });

  it('every program yields at least one robot or declaration', () => {
    for (const [file, result] of results) {
      const p = result.program!;
      const declared = p.robots.length + p.hardware.length + p.functions.length + p.generic.length + p.prognostics.length;
      expect(declared, file).toBeGreaterThan(0);
    }
  });

  it('reads the typed parts of programs that also contain unmodelled blocks', () => {
    const secure = program('22_secure_robot.sd').robots[0]!;
    expect(secure.hasPermissions).toBe(true);
    expect(secure.generic.map((g) => g.keyword)).toEqual(['permissions', 'trust_boundary', 'secure_comm', 'identity', 'audit', 'secrets']);
    expect(secure.behaviors.map((b) => b.name)).toEqual(['guard']);

    const cleaner = program('25_health_checks_robot.sd').robots[0]!;
    expect(cleaner.healthChecks[0]!.checks.map((c) => `${c.metric} ${c.operator} ${c.threshold}`)).toEqual([
      'brush.current < 2A', 'battery.voltage > 11.5V',
    ]);
    expect(cleaner.generic.map((g) => g.keyword)).toEqual(['heartbeat', 'memory_watch', 'restart_policy']);

    const alpha = program('38_mixed_everything.sd');
    expect(alpha.robots[0]!.doc).toBe('Alpha rover.\nSecond doc line.');
    expect(alpha.hardware[0]).toMatchObject({ name: 'AlphaBase', memoryMb: 16384, gpu: 100, batteryWh: 500, bandwidthMbps: 1000 });
    expect(alpha.robots[0]!.missions[0]!.durationHours).toBe(0.75);
    expect(alpha.imports).toEqual(['fusion.sensor', 'trust.jetson']);

    const gateway = program('43_iot_gateway.sd').robots[0]!;
    const every = gateway.triggers[0]!;
    expect(every.kind === 'every' && every.interval.text).toBe('30s');

    const juggler = program('32_concurrency.sd').robots[0]!.behaviors[0]!.body;
    expect(juggler.map((s) => (s.kind === 'opaque' ? `opaque:${s.keyword}` : s.kind))).toEqual([
      'expr', 'opaque:parallel', 'opaque:select', 'let', 'assign',
    ]);
    expect(juggler[0]).toMatchObject({ kind: 'expr', expr: { kind: 'keyword', keyword: 'spawn', call: { callee: { kind: 'ident', name: 'track_balls' } } } });
    expect(juggler[4]).toMatchObject({ kind: 'assign', target: { kind: 'ident', name: 'x' }, value: { kind: 'binary', op: '+' } });

    const crane = program('29_multi_unit_math.sd').robots[0]!;
    expect(crane.behaviors[0]!.body.slice(0, 4).map((s) => (s.kind === 'let' && s.value?.kind === 'number' ? s.value.text : null))).toEqual([
      '2.5kN', '120N·m', '0.5m/s2', '2bar',
    ]);
  });
});
