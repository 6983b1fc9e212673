import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../core/errors.js';
import { parseSource } from '../programs/program-files.js';
import type { Program } from '../programs/language/ast.js';
import { UsageError } from './args.js';
import { ProgramRuntimeError } from '../programs/runtime/errors.js';
import { loadSettings, type Settings } from '../settings/settings.js';

interface CheckResult {
  file: string;
  ok: boolean;
  /** What failed: the file could not be read, did not parse, or did not type-check. */
  stage?: 'read' | 'parse' | 'type';
  robots?: number;
  declarations?: number;
  warnings?: string[];
  error?: string;
  location?: { line: number; column: number };
  /** `--readiness-json`: the readiness REST body of a file that parsed (docs/program-language.md §9, §29). */
  readiness?: unknown;
}

const CHECK_OPTIONS = new Set(['json', 'readiness-json', 'config']);

/**
 * `svc check FILE... [--json] [--readiness-json [--config svc.toml]]`: parses each program, runs the
 * type check the simulator runs before interpreting (docs/program-language.md §24.1) and the static
 * checks that need no configuration. Text: `✓ <file> — no type errors` per clean file (then its
 * warnings), `✗ <file> — <reason>` per failing one. Exit 0 when every file is clean, 2 when one cannot
 * be read or does not parse, else 1 when one has a type error. `--readiness-json` prints JSON in which
 * each file that parsed also carries `readiness`, the body of `POST /v1/programs/readiness` for it.
 */
export async function checkCommand(files: readonly string[], options: Map<string, string | true>, cwd = process.cwd(), settings?: Settings): Promise<{ stdout: string; exitCode: number }> {
  const all = [...files];
  for (const [name, value] of options) {
    if (!CHECK_OPTIONS.has(name)) throw new UsageError(`unknown option --${name} for check (options: --json, --readiness-json, --config FILE)`);
    if (name === 'config') {
      if (value === true) throw new UsageError('--config needs a value');
      if (!options.has('readiness-json')) throw new UsageError("--config is an option of 'svc check --readiness-json'");
    } else if (typeof value === 'string') all.push(value);
  }
  if (all.length === 0) throw new UsageError("'svc check' needs at least one .sd file");
  const { typeCheckProgram } = await import('../programs/runtime/type-check.js');
  const results = all.map((f) => checkFile(f, cwd, typeCheckProgram));
  const withReadiness = options.has('readiness-json');
  if (withReadiness) {
    const config = options.get('config');
    for (const r of results) {
      if (r.stage === 'read' || r.stage === 'parse') continue;
      r.readiness = await readinessBody(path.resolve(cwd, r.file), typeof config === 'string' ? config : undefined, cwd, settings ?? loadSettings());
    }
  }
  const stdout = options.has('json') || withReadiness ? JSON.stringify(results, null, 2) : results.flatMap(resultLines).join('\n');
  const unreadable = results.some((r) => r.stage === 'read' || r.stage === 'parse');
  return { stdout: `${stdout}\n`, exitCode: unreadable ? 2 : results.every((r) => r.ok) ? 0 : 1 };
}

async function readinessBody(file: string, config: string | undefined, cwd: string, settings: Settings): Promise<unknown> {
  const [{ ProgramService }, { cliWorkspace }] = await Promise.all([import('../programs/program-service.js'), import('./program-command.js')]);
  return new ProgramService(cliWorkspace(file, config, cwd, settings)).run('readiness', { file });
}

function checkFile(file: string, cwd: string, typeCheck: (p: Program) => void): CheckResult {
  const abs = path.resolve(cwd, file);
  let source: string;
  try {
    source = fs.readFileSync(abs, 'utf8');
  } catch (err) {
    return { file, ok: false, stage: 'read', error: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  let program: Program;
  try {
    program = parseSource(source, file);
  } catch (err) {
    if (err instanceof ApiError) {
      const loc = err.extra['location'] as { line: number; column: number } | undefined;
      return { file, ok: false, stage: 'parse', error: err.message, ...(loc ? { location: { line: loc.line, column: loc.column } } : {}) };
    }
    throw err;
  }
  const facts = { robots: program.robots.length, declarations: countDeclarations(program), warnings: staticWarnings(program) };
  try {
    typeCheck(program);
  } catch (err) {
    if (!(err instanceof ProgramRuntimeError)) throw err;
    return { file, ok: false, stage: 'type', error: err.message, ...(err.loc ? { location: { line: err.loc.line, column: err.loc.column } } : {}), ...facts };
  }
  return { file, ok: true, ...facts };
}

function resultLines(r: CheckResult): string[] {
  // The error's first line carries file:line:col and the detail; --json has the quoted source line too.
  if (!r.ok) return [`✗ ${r.file} — ${r.error!.split('\n')[0]}`];
  return [`✓ ${r.file} — no type errors`, ...r.warnings!.map((w) => `  warning: ${w}`)];
}

/** Every top-level declaration the model holds (lists and optional slots). */
function countDeclarations(p: Program): number {
  let n = 0;
  for (const value of Object.values(p)) {
    if (Array.isArray(value)) n += value.length;
  }
  n -= p.imports.length + p.simulateFaults.length;
  for (const slot of [p.requiresHardware, p.requiresNetwork, p.requiresConnectivity]) if (slot) n++;
  return n;
}

/** Cross-references that need no configuration: deploys, hardware uses, peers, mission plans. */
function staticWarnings(p: Program): string[] {
  const robots = new Set(p.robots.map((r) => r.name));
  const warnings: string[] = [];
  for (const d of p.deploys) if (!robots.has(d.robot)) warnings.push(`line ${d.loc.line}: deploy names unknown robot '${d.robot}'`);
  const hardware = new Set(p.hardware.map((h) => h.name));
  for (const r of p.robots) {
    for (const h of r.usesHardware) if (!hardware.has(h)) warnings.push(`robot '${r.name}' uses undeclared hardware '${h}'`);
    for (const peer of r.peers) if (!robots.has(peer)) warnings.push(`robot '${r.name}' names unknown peer robot '${peer}'`);
    if (r.safety.length === 0 && r.actuators.length > 0) warnings.push(`robot '${r.name}' has actuators but no safety block`);
  }
  return warnings;
}
