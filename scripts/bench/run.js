// `npm run bench`: the performance figures of README.md § Benchmarks that concern the agent's own HTTP server,
// measured in one run and reported as ratios / against targets. Prints a table and writes
// bench-results/latest.json. Needs the compiled agent (`npm run build`).
//
//  1. GET /v1/health throughput, keep-alive, server pinned to one core: bare `node:http` server
//     replaying the agent's health response (baseline-server.js) vs. `svc serve`; ratio >= 0.70.
//     Load comes from loadgen.js in its own process pinned to the other core (see its header
//     for why it is hand-written rather than autocannon).
//  2. Cold start: spawn to first 200 on /v1/health, polled every ~5 ms, median of 5; <= 500 ms.
//     The agent is not pinned here (nor for 3.).
//  3. Idle RSS ~2 s after start with the demo project (VmRSS); <= 60 MiB.
//
// Only 127.0.0.1 is used. Children are killed on exit, failure, SIGINT and SIGTERM.
// Knobs (env): BENCH_CONNECTIONS (10), BENCH_WARMUP_MS (1000), BENCH_DURATION_MS (5000),
// BENCH_ROUNDS (4; baseline and agent alternate and the best round of each counts, since other
// processes on a shared machine only ever slow a run), BENCH_COLD_RUNS (5), BENCH_STRICT=1 (exit 1
// on any FAIL; by default a FAIL is reported, not an error), BENCH_AGAINST=<dir> (another built
// checkout, e.g. a `git worktree` of the previous commit: its agent is measured in the same run,
// interleaved with ours, and the three figures are printed side by side — the regression check of a
// change to the core).
// `npm run bench -- --profile` adds one extra agent run under `node --cpu-prof` (not counted in the
// figures), keeps the profile as bench-results/agent-health.cpuprofile and prints its top frames.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarise } from './cpuprofile-top.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SVC = path.join(ROOT, 'bin', 'svc.js');
const AGAINST = process.env.BENCH_AGAINST ? path.resolve(process.env.BENCH_AGAINST) : null;
const SVC_AGAINST = AGAINST ? path.join(AGAINST, 'bin', 'svc.js') : null;
const HOST = '127.0.0.1';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 5);
const PROFILE = process.argv.includes('--profile');
const WATCHDOG_MS = PROFILE ? 180_000 : 150_000;

const TARGET = { ratio: 0.7, coldStartMs: 500, idleRssMiB: 60 };

// ---------------------------------------------------------------------------------------------
// Child bookkeeping and cleanup

const children = new Set();
const tempDirs = [];

function killAll() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
  children.clear();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    process.stderr.write(`bench: ${sig}, stopping children\n`);
    killAll();
    process.exit(130);
  });
}
const watchdog = setTimeout(() => {
  process.stderr.write(`bench: watchdog: still running after ${WATCHDOG_MS / 1000} s, giving up\n`);
  killAll();
  process.exit(1);
}, WATCHDOG_MS);
watchdog.unref();

function tempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

function track(child, label) {
  children.add(child);
  child.label = label;
  child.stdoutText = '';
  child.stderrText = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (d) => (child.stdoutText += d));
  child.stderr?.on('data', (d) => (child.stderrText = (child.stderrText + d).slice(-8000)));
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  child.exited.then(() => children.delete(child));
  return child;
}

async function stop(child, graceMs = 3000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}

function waitForStdout(child, pattern, timeoutMs) {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = pattern.exec(child.stdoutText);
      if (m) {
        cleanup();
        resolve(m);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`${child.label} exited before it was ready:\n${child.stdoutText}\n${child.stderrText}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${child.label} not ready after ${timeoutMs} ms:\n${child.stdoutText}\n${child.stderrText}`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout.off('data', check);
      child.off('exit', onExit);
    };
    child.stdout.on('data', check);
    child.on('exit', onExit);
    check();
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Machine, pinning, project

const cpus = os.cpus();
const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : cpus.length;
const hasTaskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;
const pin = hasTaskset && cores >= 2;
const SERVER_CORE = '0';
const GENERATOR_CORE = '1';
const serverPrefix = pin ? ['taskset', '-c', SERVER_CORE] : [];
const generatorPrefix = pin ? ['taskset', '-c', GENERATOR_CORE] : [];
// Keep this orchestrator (and the cold-start poller) off the server core as well.
if (pin) spawnSync('taskset', ['-apc', GENERATOR_CORE, String(process.pid)], { stdio: 'ignore' });
const clkTck = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

const notes = [];
const demoConfig = path.join(ROOT, 'demo', 'svc.toml');
const demoProgram = path.join(ROOT, 'demo', 'programs', 'patrol.sd');
const useDemo = existsSync(demoConfig);
const projectArgs = useDemo ? ['--config', 'demo/svc.toml', ...(existsSync(demoProgram) ? ['--program', 'demo/programs/patrol.sd'] : [])] : [];
if (!useDemo) notes.push('demo/svc.toml is missing: the agent ran without --config/--program');
else if (!existsSync(demoProgram)) notes.push('demo/programs/patrol.sd is missing: the agent ran without --program');

if (!existsSync(path.join(ROOT, 'dist', 'agent', 'cli', 'main.js'))) {
  process.stderr.write('bench: the compiled agent is missing; run `npm run build` first\n');
  process.exit(2);
}

const machine = {
  cpuModel: cpus[0]?.model ?? 'unknown',
  cores,
  node: process.version,
  platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  totalMemMiB: Math.round(os.totalmem() / 1048576),
  pinned: pin ? { server: Number(SERVER_CORE), generator: Number(GENERATOR_CORE) } : null,
};
if (!pin) notes.push(hasTaskset ? 'only one core: server and load generator share it' : 'taskset not found: processes are not pinned');

// ---------------------------------------------------------------------------------------------
// Helpers

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function get(port, urlPath, timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: HOST, port, path: urlPath, agent: false, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Start `svc serve` on a free port with a fresh state dir. */
async function startAgent({ pinned = true, extraNodeArgs = [], svc = SVC } = {}) {
  const port = await freePort();
  const stateDir = tempDir('svc-bench-state-');
  const prefix = pinned ? serverPrefix : [];
  const argv = [...prefix, process.execPath, ...extraNodeArgs, svc, 'serve', ...projectArgs, '--bind', `${HOST}:${port}`];
  const t0 = performance.now();
  const child = track(
    spawn(argv[0], argv.slice(1), {
      cwd: ROOT,
      env: { ...process.env, SVC_CONTROL_CENTER_STATE_DIR: stateDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    'svc serve',
  );
  return { child, port, stateDir, t0 };
}

async function startBaseline(spec, { pinned = true } = {}) {
  const argv = [...(pinned ? serverPrefix : []), process.execPath, path.join(ROOT, 'scripts', 'bench', 'baseline-server.js'), `${HOST}:0`];
  const child = track(
    spawn(argv[0], argv.slice(1), { cwd: ROOT, env: { ...process.env, BENCH_HEALTH: JSON.stringify(spec) }, stdio: ['ignore', 'pipe', 'pipe'] }),
    'baseline server',
  );
  const m = await waitForStdout(child, /listening (\d+)/, 10_000);
  return { child, port: Number(m[1]) };
}

async function runLoad(port, serverPid) {
  const argv = [
    ...generatorPrefix,
    process.execPath,
    path.join(ROOT, 'scripts', 'bench', 'loadgen.js'),
    HOST,
    String(port),
    '/v1/health',
    String(CONNECTIONS),
    String(WARMUP_MS),
    String(DURATION_MS),
    String(serverPid),
  ];
  const child = track(spawn(argv[0], argv.slice(1), { env: { ...process.env, CLK_TCK: String(clkTck) }, stdio: ['ignore', 'pipe', 'pipe'] }), 'load generator');
  const { code } = await child.exited;
  if (code !== 0) throw new Error(`load generator failed (${code}): ${child.stderrText}`);
  return JSON.parse(child.stdoutText.trim().split('\n').pop());
}

function readStatusKiB(pid, field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : null;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? null : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const progress = (msg) => process.stderr.write(`bench: ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// 1. Health throughput: baseline vs agent

async function captureHealth() {
  const agent = await startAgent();
  try {
    await waitForStdout(agent.child, /svc agent listening on http:\/\/\S+/, 15_000);
    const res = await get(agent.port, '/v1/health');
    if (res.status !== 200) throw new Error(`agent /v1/health answered ${res.status}: ${res.body}`);
    const skip = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
    const headers = [];
    for (let i = 0; i < res.rawHeaders.length; i += 2) {
      if (!skip.has(res.rawHeaders[i].toLowerCase())) headers.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
    }
    return { headers, body: res.body.toString('utf8'), headerCount: res.rawHeaders.length / 2 };
  } finally {
    await stop(agent.child);
  }
}

async function measureBaseline(spec) {
  const srv = await startBaseline(spec);
  try {
    // Sanity: the baseline's response must carry as many headers as the agent's.
    const check = await get(srv.port, '/v1/health');
    if (check.status !== 200) throw new Error(`baseline answered ${check.status}`);
    if (check.rawHeaders.length / 2 !== spec.headerCount) {
      notes.push(`baseline sends ${check.rawHeaders.length / 2} headers, agent ${spec.headerCount}`);
    }
    return await runLoad(srv.port, srv.child.pid);
  } finally {
    await stop(srv.child);
  }
}

async function measureAgent({ extraNodeArgs = [], svc = SVC } = {}) {
  const agent = await startAgent({ extraNodeArgs, svc });
  try {
    await waitForStdout(agent.child, /svc agent listening on http:\/\/\S+/, 15_000);
    return await runLoad(agent.port, agent.child.pid);
  } finally {
    await stop(agent.child);
  }
}

/** One more agent run under --cpu-prof; the summary covers the measurement window only. */
async function profileAgent(outDir) {
  const dir = tempDir('svc-bench-prof-');
  const run = await measureAgent({ extraNodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  const { readdirSync, copyFileSync } = await import('node:fs');
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) return { run, summary: 'no profile written (the agent did not exit cleanly)' };
  const kept = path.join(outDir, 'agent-health.cpuprofile');
  copyFileSync(path.join(dir, file), kept);
  const profile = JSON.parse(readFileSync(kept, 'utf8'));
  return { run, file: path.relative(ROOT, kept), summary: summarise(profile, 25, { fromUs: run.windowStartUs, toUs: run.windowEndUs }) };
}

/** The best round (highest req/s) stands for the target; the mean is kept for reference. */
function aggregate(runs) {
  const best = runs.reduce((a, r) => (r.rps > a.rps ? r : a));
  return {
    rps: best.rps,
    meanRps: mean(runs.map((r) => r.rps)),
    p50Ms: best.latencyMs.p50,
    p99Ms: best.latencyMs.p99,
    serverCpu: best.serverCpu,
    generatorCpu: best.generatorCpu,
    otherCpu: best.otherCpu,
    maxOtherCpu: Math.max(...runs.map((r) => r.otherCpu ?? 0)),
    // Server CPU time per request (µs), best round: a cross-check that other load on the shared
    // machine disturbs less than raw req/s (at saturation, req/s = 1 core / this).
    cpuUsPerRequest: Math.min(...runs.map((r) => (r.serverCpu == null ? Infinity : (r.serverCpu * r.durationMs * 1000) / r.requests))),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
    responseBytes: runs[0]?.responseBytes,
  };
}

// ---------------------------------------------------------------------------------------------
// 2. Cold start

// Unpinned, as the agent runs in the field (V8 compiles and collects on helper threads); the
// poller in this process stays on the generator core.
async function coldStartOnce(svc = SVC) {
  const agent = await startAgent({ pinned: false, svc });
  const deadline = agent.t0 + 10_000;
  try {
    for (;;) {
      const attempt = performance.now();
      try {
        const res = await get(agent.port, '/v1/health', 1000);
        if (res.status === 200) return performance.now() - agent.t0;
      } catch {
        /* not listening yet */
      }
      if (agent.child.exitCode !== null) throw new Error(`svc serve exited during cold start:\n${agent.child.stderrText}`);
      if (performance.now() > deadline) throw new Error('no 200 on /v1/health within 10 s');
      await sleep(Math.max(0, 5 - (performance.now() - attempt)));
    }
  } finally {
    await stop(agent.child);
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Idle RSS

async function idleRss(spec, svc = SVC) {
  const agent = await startAgent({ pinned: false, svc });
  // A bare node:http process idling alongside, for reference (what Node itself costs).
  const bare = await startBaseline(spec, { pinned: false });
  try {
    await waitForStdout(agent.child, /svc agent listening on http:\/\/\S+/, 15_000);
    await sleep(2000);
    const pid = agent.child.pid;
    const rssKiB = readStatusKiB(pid, 'VmRSS');
    const hwmKiB = readStatusKiB(pid, 'VmHWM');
    const anonKiB = readStatusKiB(pid, 'RssAnon');
    const fileKiB = readStatusKiB(pid, 'RssFile');
    const bareRssKiB = readStatusKiB(bare.child.pid, 'VmRSS');
    return { rssKiB, hwmKiB, anonKiB, fileKiB, bareRssKiB };
  } finally {
    await stop(agent.child);
    await stop(bare.child);
  }
}

// ---------------------------------------------------------------------------------------------
// Main

const verdict = (pass) => (pass ? 'PASS' : 'FAIL');
const fmtInt = (n) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n) => (n == null || Number.isNaN(n) ? 'n/a' : n < 10 ? n.toFixed(2) : n.toFixed(1));
const fmtPct = (n) => (n == null || Number.isNaN(n) ? 'n/a' : `${Math.round(n * 100)}%`);

async function main() {
  const started = performance.now();
  progress(`machine: ${machine.cpuModel}, ${cores} cores, node ${process.version}${pin ? ', servers on cpu0, generator on cpu1' : ''}`);
  progress(`project: ${projectArgs.length ? projectArgs.join(' ') : '(none)'}`);

  progress('capturing the agent health response');
  const spec = await captureHealth();

  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    progress(`throughput round ${i + 1}/${ROUNDS}: baseline`);
    const baseline = await measureBaseline(spec);
    progress(`  baseline ${fmtInt(baseline.rps)} req/s`);
    progress(`throughput round ${i + 1}/${ROUNDS}: agent`);
    const agent = await measureAgent();
    progress(`  agent ${fmtInt(agent.rps)} req/s`);
    let against = null;
    if (SVC_AGAINST) {
      against = await measureAgent({ svc: SVC_AGAINST });
      progress(`  agent of ${path.basename(AGAINST)} ${fmtInt(against.rps)} req/s`);
    }
    rounds.push({ baseline, agent, ...(against ? { against } : {}) });
  }
  const base = aggregate(rounds.map((r) => r.baseline));
  const agt = aggregate(rounds.map((r) => r.agent));
  const ratio = agt.rps / base.rps;
  const meanRatio = agt.meanRps / base.meanRps;
  const cpuRatio = base.cpuUsPerRequest / agt.cpuUsPerRequest;
  if (base.serverCpu != null && base.serverCpu < 0.9) {
    notes.push(`the baseline's best round kept its core only ${fmtPct(base.serverCpu)} busy (not saturated: other load or steal); the CPU-per-request ratio is the steadier figure`);
  }
  if (base.non2xx || agt.non2xx) notes.push(`non-2xx responses: baseline ${base.non2xx}, agent ${agt.non2xx}`);
  if (base.errors || agt.errors) notes.push(`socket errors: baseline ${base.errors}, agent ${agt.errors}`);
  if (Math.max(base.maxOtherCpu, agt.maxOtherCpu) > 0.3) {
    notes.push(
      `other CPU load up to ${fmtPct(Math.max(base.maxOtherCpu, agt.maxOtherCpu))} of a core during some windows (other processes or kernel networking): figures are noisy, compare rounds`,
    );
  }
  if (base.generatorCpu > 0.9) notes.push(`the load generator used ${fmtPct(base.generatorCpu)} of its core against the baseline: the baseline figure may be generator-bound`);

  progress(`cold start x${COLD_RUNS}`);
  const coldRuns = [];
  const coldAgainst = [];
  for (let i = 0; i < COLD_RUNS; i++) {
    coldRuns.push(await coldStartOnce());
    if (SVC_AGAINST) coldAgainst.push(await coldStartOnce(SVC_AGAINST));
  }
  const coldMedian = median(coldRuns);

  progress('idle RSS');
  const rss = await idleRss(spec);
  const rssMiB = rss.rssKiB / 1024;
  let against = null;
  if (SVC_AGAINST) {
    const prev = aggregate(rounds.map((r) => r.against));
    const rssAgainst = await idleRss(spec, SVC_AGAINST);
    against = { dir: AGAINST, ratio: prev.rps / base.rps, rps: prev.rps, coldRunsMs: coldAgainst, coldMedianMs: median(coldAgainst), rssMiB: rssAgainst.rssKiB / 1024 };
  }

  const outDir = path.join(ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  let profiled = null;
  if (PROFILE) {
    progress('profiling the agent under load (--cpu-prof, not counted)');
    profiled = await profileAgent(outDir);
  }

  const results = {
    timestamp: new Date().toISOString(),
    machine,
    project: projectArgs,
    notes,
    throughput: {
      path: '/v1/health',
      connections: CONNECTIONS,
      warmupMs: WARMUP_MS,
      durationMs: DURATION_MS,
      rounds,
      baseline: base,
      agent: agt,
      ratio,
      meanRatio,
      cpuRatio,
      target: TARGET.ratio,
      pass: ratio >= TARGET.ratio,
    },
    coldStart: { runsMs: coldRuns, medianMs: coldMedian, pinned: false, targetMs: TARGET.coldStartMs, pass: coldMedian <= TARGET.coldStartMs },
    idleRss: { afterMs: 2000, rssKiB: rss.rssKiB, rssMiB, hwmKiB: rss.hwmKiB, anonKiB: rss.anonKiB, fileKiB: rss.fileKiB, bareNodeRssKiB: rss.bareRssKiB, targetMiB: TARGET.idleRssMiB, pass: rssMiB <= TARGET.idleRssMiB },
    profile: profiled
      ? { file: profiled.file, rps: profiled.run.rps, windowUs: [profiled.run.windowStartUs, profiled.run.windowEndUs], summary: profiled.summary }
      : null,
    against,
    totalSeconds: 0,
  };
  results.totalSeconds = (performance.now() - started) / 1000;

  writeFileSync(path.join(outDir, 'latest.json'), JSON.stringify(results, null, 2) + '\n');

  const rows = [
    ['figure', 'value', 'target', 'result'],
    [`health req/s, bare node:http (${CONNECTIONS} conn, keep-alive)`, `${fmtInt(base.rps)} req/s`, '(reference)', ''],
    [`health req/s, svc serve (${CONNECTIONS} conn, keep-alive)`, `${fmtInt(agt.rps)} req/s`, '', ''],
    [`health throughput agent / baseline (best of ${ROUNDS})`, ratio.toFixed(3), `>= ${TARGET.ratio.toFixed(2)}`, verdict(results.throughput.pass)],
    ['same, from server CPU per request (cross-check)', `${cpuRatio.toFixed(3)} (${base.cpuUsPerRequest.toFixed(1)} / ${agt.cpuUsPerRequest.toFixed(1)} µs)`, `>= ${TARGET.ratio.toFixed(2)}`, 'info'],
    ['health latency p50 / p99, baseline', `${fmtMs(base.p50Ms)} / ${fmtMs(base.p99Ms)} ms`, '(none)', 'info'],
    ['health latency p50 / p99, agent', `${fmtMs(agt.p50Ms)} / ${fmtMs(agt.p99Ms)} ms`, '(none)', 'info'],
    ['server CPU during window, baseline / agent', `${fmtPct(base.serverCpu)} / ${fmtPct(agt.serverCpu)}`, '(one core)', 'info'],
    ['load generator CPU, baseline / agent runs', `${fmtPct(base.generatorCpu)} / ${fmtPct(agt.generatorCpu)}`, '< 90%', 'info'],
    ['other CPU (not server/generator), baseline / agent', `${fmtPct(base.otherCpu)} / ${fmtPct(agt.otherCpu)}`, '', 'info'],
    [`cold start to first 200 (median of ${COLD_RUNS})`, `${fmtInt(coldMedian)} ms`, `<= ${TARGET.coldStartMs} ms`, verdict(results.coldStart.pass)],
    ['idle RSS 2 s after start (VmRSS)', `${rssMiB.toFixed(1)} MiB`, `<= ${TARGET.idleRssMiB} MiB`, verdict(results.idleRss.pass)],
  ];
  if (against) {
    const name = path.basename(against.dir);
    rows.push(
      [`health throughput ratio, ${name} (same rounds)`, `${against.ratio.toFixed(3)} (ours ${ratio.toFixed(3)})`, 'no regression', verdict(ratio >= against.ratio * 0.95)],
      [`cold start median, ${name}`, `${fmtInt(against.coldMedianMs)} ms (ours ${fmtInt(coldMedian)} ms)`, 'no regression', verdict(coldMedian <= against.coldMedianMs * 1.1 + 10)],
      [`idle RSS, ${name}`, `${against.rssMiB.toFixed(1)} MiB (ours ${rssMiB.toFixed(1)} MiB)`, 'no regression', verdict(rssMiB <= against.rssMiB + 2)],
    );
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const line = (r) => r.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd();
  const out = [];
  out.push('');
  out.push(`svc bench  ${results.timestamp}`);
  out.push(`machine    ${machine.cpuModel}, ${cores} cores, ${machine.totalMemMiB} MiB, node ${machine.node}, ${machine.platform}`);
  out.push(`pinning    ${pin ? `server on cpu${SERVER_CORE}, load generator and bench on cpu${GENERATOR_CORE} (taskset)` : 'none'}`);
  out.push(`project    ${projectArgs.length ? projectArgs.join(' ') : '(none: demo/svc.toml missing)'}`);
  out.push(`load       GET /v1/health, ${CONNECTIONS} keep-alive connections, ${WARMUP_MS} ms warm-up + ${DURATION_MS} ms, ${ROUNDS} alternating rounds, ${base.responseBytes} B/response`);
  out.push('');
  out.push(line(rows[0]));
  out.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows.slice(1)) out.push(line(r));
  out.push('');
  out.push(`rounds     ${rounds.map((r, i) => `#${i + 1} ${fmtInt(r.baseline.rps)} / ${fmtInt(r.agent.rps)}`).join('; ')} req/s (baseline / agent); mean ratio ${meanRatio.toFixed(3)}`);
  out.push(`cold runs  ${coldRuns.map((x) => `${Math.round(x)}`).join(', ')} ms (agent not pinned; spawn of node to first 200)`);
  out.push(`idle RSS   ${rss.rssKiB} kB (anon ${rss.anonKiB} kB, file ${rss.fileKiB} kB, peak ${rss.hwmKiB} kB); a bare node:http process idles at ${rss.bareRssKiB} kB`);
  for (const n of notes) out.push(`note       ${n}`);
  if (profiled) {
    out.push('');
    out.push(`agent CPU profile during the load window (${fmtInt(profiled.run.rps)} req/s under the profiler; ${profiled.file ?? 'not kept'}):`);
    out.push(profiled.summary.replace(/^/gm, '  '));
    out.push('');
  }
  out.push(`wrote      bench-results/latest.json (${results.totalSeconds.toFixed(1)} s)`);
  process.stdout.write(out.join('\n') + '\n');

  const allPass = results.throughput.pass && results.coldStart.pass && results.idleRss.pass;
  if (process.env.BENCH_STRICT === '1' && !allPass) process.exitCode = 1;
}

main().then(
  () => {
    killAll();
  },
  (err) => {
    process.stderr.write(`bench failed: ${err.stack ?? err}\n`);
    killAll();
    process.exit(1);
  },
);
