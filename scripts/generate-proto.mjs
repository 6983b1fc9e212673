// `npm run proto:generate`: writes proto/svc/v1/control_center.proto from the contract (api/).
// `npm run proto:generate -- --check` only compares and exits 1 when the checked-in file is stale.
// Runs on the compiled agent (the npm script compiles first), so it needs no TypeScript loader.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { SPECS } = await import(path.join(ROOT, 'dist/api/index.js'));
const { buildRpcContract, renderProto } = await import(path.join(ROOT, 'dist/api/rpc-contract.js'));
const { PROTO_FILE } = await import(path.join(ROOT, 'dist/api/versions.js'));

const target = path.join(ROOT, PROTO_FILE);
const contract = buildRpcContract(SPECS);
const text = renderProto(contract);
let current = null;
try {
  current = readFileSync(target, 'utf8');
} catch {
  /* not there yet */
}
if (process.argv.includes('--check')) {
  if (current !== text) {
    process.stderr.write(`${PROTO_FILE} is out of date with the contract (api/): run \`npm run proto:generate\`\n`);
    process.exit(1);
  }
  process.stdout.write(`${PROTO_FILE} is up to date (${contract.rpcs.length} RPCs)\n`);
} else {
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
  process.stdout.write(`${current === text ? 'unchanged' : 'wrote'} ${PROTO_FILE} (${contract.rpcs.length} RPCs)\n`);
}
