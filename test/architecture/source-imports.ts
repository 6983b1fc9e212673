/**
 * Reads import specifiers from source files with plain fs and a regex (static `import … from`,
 * `export … from`, `import('…')`), so the boundary rules hold for lazily loaded modules too. Shared by
 * the boundary tests of test/architecture.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(ROOT, dir))) {
    const rel = path.posix.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !/\.d\.ts$/.test(name)) out.push(rel);
  }
  return out;
}

const SPECIFIER = /(?:\bimport\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?|\bexport\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+|\bimport\s*\(\s*)['"]([^'"]+)['"]/g;

/** Every import specifier of the code (comments may quote import lines from elsewhere; they do not count). */
export function specifiersOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return [...code.matchAll(SPECIFIER)].map((m) => m[1]!);
}

/** Relative import specifiers of a file, resolved to repository-relative paths (`hal/index.js`). */
export function importsOf(file: string, source = readFileSync(path.join(ROOT, file), 'utf8')): string[] {
  return specifiersOf(source)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)));
}

/** Package imports of a file (`zod`, `node:fs`, `@hono/node-server`), by package name. */
export function packagesOf(file: string, source = readFileSync(path.join(ROOT, file), 'utf8')): string[] {
  return specifiersOf(source)
    .filter((spec) => !spec.startsWith('.'))
    .map((spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!));
}

export const topFolder = (p: string): string => p.split('/')[0]!;
