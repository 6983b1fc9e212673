// Acknowledged-write throughput: how many mutations per second `svc serve` answers 2xx when every 2xx
// means the change is on disk (docs/security.md §10, "Durability"). Writes
// bench-results/write-throughput.json. Needs the compiled agent (`npm run build`).
//
// BENCH_WRITE_CLIENTS (16) keep-alive clients each loop over four mutations that touch four
// different stores (API key create, incident create, entity register, test alert), all with the
// administrator key, for BENCH_WARMUP_MS (1 000) + BENCH_DURATION_MS (5 000). Every request is also
// one audit record. BENCH_WRITE_AGAINST=<checkout> runs the same load against another built
// checkout first (e.g. a worktree of an earlier commit), so before and after come from one run on
// one machine; the table then shows the ratio. Only 127.0.0.1 is used; children are killed on exit.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLIENTS = Number(process.env.BENCH_WRITE_CLIENTS ?? 16);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const AGAINST = process.env.BENCH_WRITE_AGAINST ? path.resolve(process.env.BENCH_WRITE_AGAINST) : null;
const KEY = 'b'.repeat(64);

const children = new Set();
const dirs = [];
function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));
setTimeout(() => {
  process.stderr.write('write-throughput: watchdog, giving up\n');
  process.exit(1);
}, 120_000).unref();

async function startAgent(checkout) {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-writes-'));
  dirs.push(stateDir);
  const child = spawn(process.execPath, [path.join(checkout, 'bin', 'svc.js'), 'serve', '--bind', '127.0.0.1:0'], {
    cwd: stateDir,
    env: { PATH: process.env.PATH ?? '', SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_API_KEY: KEY, SVC_ALERT_DEDUP_WINDOW_INFO_SECS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc serve did not start:\n${out}`)), 15_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/(\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${out}`)));
  });
  const [host, port] = [url.slice(0, url.lastIndexOf(':')), Number(url.slice(url.lastIndexOf(':') + 1))];
  return { child, host, port };
}

const ALL_MUTATIONS = [
  (n) => ['POST', '/v1/admin/api-keys', { role: 'operator', label: `bench-${n}` }],
  (n) => ['POST', '/v1/sre/incidents', { title: `bench incident ${n}`, severity: 'info' }],
  (n) => ['POST', '/v1/entities/register', { id: `bench-entity-${n}`, entity_type: 'sensor' }],
  (n) => ['POST', '/v1/alerts/test', { message: `bench alert ${n}` }],
];
// BENCH_WRITE_ONLY=<index> (0-3) loads one kind of mutation only, to see which store costs what.
const MUTATIONS = process.env.BENCH_WRITE_ONLY ? [ALL_MUTATIONS[Number(process.env.BENCH_WRITE_ONLY)]] : ALL_MUTATIONS;

function request(agent, host, port, method, pathname, body) {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = http.request(
      { host, port, method, path: pathname, agent, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}

async function measure(checkout) {
  const { child, host, port } = await startAgent(checkout);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  let n = 0;
  let ok = 0;
  let failed = 0;
  let counting = false;
  const latencies = [];
  const end = Date.now() + WARMUP_MS + DURATION_MS;
  setTimeout(() => (counting = true), WARMUP_MS);
  const loop = async () => {
    while (Date.now() < end) {
      const i = n++;
      const [method, pathname, body] = MUTATIONS[i % MUTATIONS.length](i);
      const t0 = performance.now();
      const status = await request(agent, host, port, method, pathname, body);
      if (!counting) continue;
      latencies.push(performance.now() - t0);
      if (status >= 200 && status < 300) ok++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, loop));
  agent.destroy();
  child.kill('SIGKILL');
  children.delete(child);
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { writes_per_sec: Math.round(ok / (DURATION_MS / 1000)), ok, failed, p50_ms: +q(0.5).toFixed(2), p99_ms: +q(0.99).toFixed(2) };
}

const results = {};
if (AGAINST) results.against = { checkout: AGAINST, ...(await measure(AGAINST)) };
results.current = { checkout: ROOT, ...(await measure(ROOT)) };

const rows = [['build', 'acknowledged writes/s', 'failed', 'p50 ms', 'p99 ms']];
for (const [name, r] of Object.entries(results)) rows.push([name, String(r.writes_per_sec), String(r.failed), String(r.p50_ms), String(r.p99_ms)]);
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
console.log(`\nAcknowledged-write throughput (${CLIENTS} clients, ${DURATION_MS / 1000} s, API keys / incidents / entities / alerts):`);
for (const r of rows) console.log('  ' + r.map((c, i) => c.padEnd(widths[i])).join('  '));
if (results.against) {
  const ratio = results.current.writes_per_sec / Math.max(1, results.against.writes_per_sec);
  results.ratio = +ratio.toFixed(3);
  console.log(`  current / against: ${results.ratio}`);
}
mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench-results', 'write-throughput.json'), JSON.stringify({ clients: CLIENTS, duration_ms: DURATION_MS, ...results }, null, 2) + '\n');
process.exit(0);
