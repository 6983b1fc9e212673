// Summarise a V8 .cpuprofile (from `node --cpu-prof`): top functions by self time, and self time
// grouped by package / source area. Used to explain where the agent's time goes in the health
// throughput run. `npm run bench -- --profile` produces the profile; or by hand:
//
//   node scripts/bench/cpuprofile-top.js <file.cpuprofile> [topN] [fromUs toUs]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where a frame's code lives, coarse enough to add up. */
export function area(url) {
  if (!url) return '(native / V8)';
  if (url.startsWith('node:')) {
    const parts = url.slice(5).split('/');
    // node:internal/deps/undici/undici (fetch Response/Headers), node:internal/crypto, ...
    if (parts[0] === 'internal') return `node:${parts.slice(0, parts[1] === 'deps' ? 3 : 2).join('/')}`.replace(/\.js$/, '');
    return `node:${parts[0]}`;
  }
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const rel = path.relative(ROOT, file);
  return rel.startsWith('..') ? file : rel.split('/').slice(0, 3).join('/');
}

/** `window` ({ fromUs, toUs }, monotonic µs like the profile's own clock) keeps only those samples. */
export function summarise(profile, topN = 25, window = null) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfSamples = new Map();
  let t = profile.startTime;
  let total = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    if (window && (t < window.fromUs || t > window.toUs)) continue;
    const id = profile.samples[i];
    selfSamples.set(id, (selfSamples.get(id) ?? 0) + 1);
    total++;
  }
  const fn = new Map();
  const areas = new Map();
  let idle = 0;
  for (const [id, count] of selfSamples) {
    const { callFrame: cf } = byId.get(id);
    if (cf.functionName === '(idle)') idle += count;
    const where = cf.url ? `${path.relative(ROOT, cf.url.startsWith('file://') ? fileURLToPath(cf.url) : cf.url)}:${cf.lineNumber + 1}` : '';
    const key = `${cf.functionName || '(anonymous)'} ${where}`.trim();
    fn.set(key, (fn.get(key) ?? 0) + count);
    const a = cf.functionName === '(idle)' ? '(idle)' : cf.functionName === '(garbage collector)' ? '(garbage collector)' : area(cf.url);
    areas.set(a, (areas.get(a) ?? 0) + count);
  }
  // Inclusive ("total") time of the agent's and its dependencies' functions: a sample counts once
  // for every distinct function on its stack.
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (cf) => {
    const where = cf.url ? `${path.relative(ROOT, cf.url.startsWith('file://') ? fileURLToPath(cf.url) : cf.url)}:${cf.lineNumber + 1}` : '';
    return `${cf.functionName || '(anonymous)'} ${where}`.trim();
  };
  const inclusive = new Map();
  for (const [id, count] of selfSamples) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const { callFrame: cf } = byId.get(cur);
      if (!cf.url.startsWith('file://')) continue;
      const key = keyOf(cf);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + count);
    }
  }
  // Percentages are of the busy (non-idle) samples: where the CPU time went.
  const busy = Math.max(1, total - idle);
  areas.delete('(idle)');
  fn.delete('(idle)');
  const pct = (n) => ((100 * n) / busy).toFixed(1).padStart(5) + '%';
  const lines = [];
  lines.push(`samples ${total}, idle ${((100 * idle) / Math.max(1, total)).toFixed(1)}%; percentages below are of busy samples`);
  lines.push('self time by area:');
  for (const [a, n] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, 15)) lines.push(`  ${pct(n)}  ${a}`);
  lines.push(`top ${topN} functions by self time:`);
  for (const [k, n] of [...fn].sort((x, y) => y[1] - x[1]).slice(0, topN)) lines.push(`  ${pct(n)}  ${k}`);
  lines.push(`top ${topN} project/dependency functions by total (inclusive) time:`);
  for (const [k, n] of [...inclusive].sort((x, y) => y[1] - x[1]).slice(0, topN)) lines.push(`  ${pct(n)}  ${k}`);
  return lines.join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node scripts/bench/cpuprofile-top.js <file.cpuprofile> [topN]\n');
    process.exit(2);
  }
  const [fromUs, toUs] = process.argv.slice(4).map(Number);
  const window = Number.isFinite(fromUs) && Number.isFinite(toUs) ? { fromUs, toUs } : null;
  process.stdout.write(summarise(JSON.parse(readFileSync(file, 'utf8')), Number(process.argv[3] ?? 25), window) + '\n');
}
