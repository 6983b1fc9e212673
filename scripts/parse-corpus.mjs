// Parse rate over our own programs (issue 18): every `.sd` under examples/, demo/ and test/ goes
// through the strict+tolerant parser (agent/programs/language/parser.ts) and, with --type-check, the
// type checker simulation runs (docs/program-language.md §6). Prints `parsed N/M` and each failure
// with its first error line. Files meant to fail (a path segment `invalid`, or a first comment line
// saying "Deliberately broken") are counted apart so a regression never hides among them.
//
//   node scripts/parse-corpus.mjs [--type-check] [DIR …]
//
// The TypeScript sources are bundled in memory with esbuild (already a dependency of the build), so
// the script needs no prior `npm run build`.
import { build } from 'esbuild';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const args = process.argv.slice(2);
const typeCheck = args.includes('--type-check');
const dirs = args.filter((a) => !a.startsWith('--'));
const roots = dirs.length > 0 ? dirs.map((d) => resolve(d)) : ['examples', 'demo', 'test'].map((d) => join(root, d));

const entry = `
export { parseProgram } from ${JSON.stringify(join(root, 'agent/programs/language/parser.ts'))};
export { typeCheckProgram } from ${JSON.stringify(join(root, 'agent/programs/runtime/type-check.ts'))};
`;
const bundled = await build({
  stdin: { contents: entry, resolveDir: root, loader: 'ts' },
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  write: false,
  logLevel: 'error',
});
const lib = await import(`data:text/javascript;base64,${Buffer.from(bundled.outputFiles[0].text).toString('base64')}`);

function walk(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.sd')) out.push(path);
  }
  return out;
}

function meantToFail(path, source) {
  return /(^|\/)invalid(\/|$)/.test(relative(root, path)) || /^\/\/\s*Deliberately broken/i.test(source);
}

const files = roots.flatMap((r) => walk(r, []));
const ok = [];
const failed = [];
const invalid = [];
for (const path of files) {
  const source = readFileSync(path, 'utf8');
  const rel = relative(root, path);
  let error = null;
  try {
    const program = lib.parseProgram(source, rel);
    if (typeCheck) {
      try {
        lib.typeCheckProgram(program);
      } catch (e) {
        error = `type: ${String(e?.message ?? e).split('\n')[0]}`;
      }
    }
  } catch (e) {
    error = String(e?.message ?? e).split('\n')[0];
  }
  if (meantToFail(path, source)) invalid.push({ rel, error });
  else if (error === null) ok.push(rel);
  else failed.push({ rel, error });
}

const total = ok.length + failed.length;
const pct = total === 0 ? 100 : (100 * ok.length) / total;
console.log(`${typeCheck ? 'parsed and type-checked' : 'parsed'} ${ok.length}/${total} (${pct.toFixed(1)} %)`);
for (const f of failed) console.log(`  FAIL ${f.rel}: ${f.error}`);
if (invalid.length > 0) {
  console.log(`intentionally invalid: ${invalid.length} (${invalid.filter((f) => f.error !== null).length} rejected as expected)`);
  for (const f of invalid) console.log(`  ${f.error === null ? 'ACCEPTED (unexpected)' : 'rejected'} ${f.rel}${f.error ? `: ${f.error}` : ''}`);
}
process.exitCode = failed.length > 0 || invalid.some((f) => f.error === null) ? 1 : 0;
