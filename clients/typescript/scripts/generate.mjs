// `npm run clients:generate`: writes clients/typescript/src/generated/operations.ts from the contract.
// `-- --check` only compares and exits 1 when the checked-in file is stale. Runs on the compiled
// contract (dist/api, the npm script compiles first), so it needs no TypeScript loader.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { renderOperations } from './render.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../../..');
const api = await import(path.join(ROOT, 'dist/api/index.js'));
const target = path.join(HERE, '../src/generated/operations.ts');
const rel = path.relative(ROOT, target);
const text = renderOperations(api, z);
let current = null;
try {
  current = readFileSync(target, 'utf8');
} catch {
  /* not there yet */
}
if (process.argv.includes('--check')) {
  if (current !== text) {
    process.stderr.write(`${rel} is out of date with the contract (api/): run \`npm run clients:generate\`\n`);
    process.exit(1);
  }
  process.stdout.write(`${rel} is up to date (${api.SPECS.length} operations)\n`);
} else {
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`${current === text ? 'unchanged' : 'wrote'} ${rel} (${api.SPECS.length} operations)\n`);
}
