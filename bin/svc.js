#!/usr/bin/env node
// Entry point of the `svc` command: runs the bundled agent (built by `npm ci` / `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/bundle/svc.mjs', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('svc: the compiled agent is missing; run `npm run build` in the repository first\n');
  process.exit(2);
}
const { main } = await import(entry.href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
