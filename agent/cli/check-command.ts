import fs from 'node:fs';
import path from 'node:path';
import { ApiError } from '../core/errors.js';
import { parseSource } from '../programs/program-files.js';
import type { Program } from '../programs/language/ast.js';
import { UsageError } from './args.js';

interface CheckResult {
  file: string;
  ok: boolean;
  robots?: number;
  declarations?: number;
  warnings?: string[];
  error?: string;
  location?: { line: number; column: number };
}

/**
 * `svc check FILE... [--json]`: parses each program and runs the static checks that need no
 * configuration. One result line per file; exit 0 when every file parses, 2 on any parse error
 * (or a file that cannot be read).
 */
export function checkCommand(files: readonly string[], options: Map<string, string | true>, cwd = process.cwd()): { stdout: string; exitCode: number } {
  const all = [...files];
  for (const [name, value] of options) {
    if (name !== 'json') throw new UsageError(`unknown option --${name} for check`);
    if (typeof value === 'string') all.push(value);
  }
  if (all.length === 0) throw new UsageError("'svc check' needs at least one .sd file");
  const results = all.map((f) => checkFile(f, cwd));
  const stdout = options.has('json') ? JSON.stringify(results, null, 2) : results.map(resultLine).join('\n');
  return { stdout: `${stdout}\n`, exitCode: results.every((r) => r.ok) ? 0 : 2 };
}

function checkFile(file: string, cwd: string): CheckResult {
  const abs = path.resolve(cwd, file);
  let source: string;
  try {
    source = fs.readFileSync(abs, 'utf8');
  } catch (err) {
    return { file, ok: false, error: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  try {
    const program = parseSource(source, file);
    return { file, ok: true, robots: program.robots.length, declarations: countDeclarations(program), warnings: staticWarnings(program) };
  } catch (err) {
    if (err instanceof ApiError) {
      const loc = err.extra['location'] as { line: number; column: number } | undefined;
      return { file, ok: false, error: err.message, ...(loc ? { location: { line: loc.line, column: loc.column } } : {}) };
    }
    throw err;
  }
}

function resultLine(r: CheckResult): string {
  // The error's first line carries file:line:col and the detail; --json has the quoted source line too.
  if (!r.ok) return `FAIL ${r.file}: ${r.error!.split('\n')[0]}`;
  const warn = r.warnings!.length ? `; ${r.warnings!.length} warning(s): ${r.warnings!.join('; ')}` : '';
  return `ok   ${r.file}: ${r.robots} robot(s), ${r.declarations} declaration(s)${warn}`;
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
