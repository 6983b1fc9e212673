#!/usr/bin/env node
// Entry point of the `svc` command: runs the bundled agent (built by `npm ci` / `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

const entry = new URL('../dist/bundle/svc.mjs', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('svc: the compiled agent is missing; run `npm run build` in the repository first\n');
  process.exit(2);
}
// `svc serve` keeps V8's young generation at its initial size (1 MiB semi-spaces) instead of letting it
// double up to 8 MiB while the agent loads: the start-up's long-lived objects (modules, schemas,
// stores) survive their first scavenges, which V8 takes as a reason to grow, and the grown space stays
// resident (7.6 of 16 MiB in the 32-device bench) long after. A long-running agent answers small
// requests whose garbage dies young, so a small nursery costs it little (README.md § Benchmarks:
// idle RSS <= 60 MiB; figures in the commit that added this). Set before the bundle loads, as the
// growth starts there; one-shot commands (program analysis) keep V8's default.
const serving = process.argv[2] === 'serve' || (process.argv[2] === 'control-center' && process.argv[3] === 'serve');
if (serving) setFlagsFromString('--semi-space-growth-factor=1');
const { main } = await import(entry.href);
const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
