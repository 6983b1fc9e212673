// The relay's figures (README.md § Benchmarks, docs/relay.md § Scale): measured in one run against a
// relay (`svc relay serve`, embedded broker) and one agent that dialled out to it (`svc serve --relay`).
//
//  1. Added latency of a proxied GET /v1/devices/{id}: the same open-loop load (open-loop.js, paced,
//     latency from each request's scheduled time) on the agent directly and on
//     /agents/{id}/v1/devices/{id} through the relay, alternating; target p99(relay) − p99(direct) ≤ 3 ms.
//  2. Proxied requests/s through one relay: closed loop, BENCH_RELAY_CONCURRENCY (32) in flight.
//  3. Idle agent connections one relay process holds: lightweight simulated agents (MQTT clients
//     following api/relay-protocol.ts: enrollment token as password, 30 s keep-alive, Last Will,
//     retained presence) in a child process, added in steps; the relay's RSS per agent and the largest
//     count reached; target 10 000 agents within 1 GB.
//
// Knobs: BENCH_RELAY_RATE (500 req/s), BENCH_WARMUP_MS (1000), BENCH_DURATION_MS (5000),
// BENCH_RELAY_AGENTS (10000), BENCH_RELAY_STEP (2000). Writes bench-results/relay.json.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SVC = path.join(ROOT, 'bin', 'svc.js');
const HOST = '127.0.0.1';
const RATE = Number(process.env.BENCH_RELAY_RATE ?? 500);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_RELAY_CONCURRENCY ?? 32);
const MAX_AGENTS = Number(process.env.BENCH_RELAY_AGENTS ?? 10_000);
const STEP = Number(process.env.BENCH_RELAY_STEP ?? 2000);
const ADMIN = 'bench-relay-admin-0123456789abcdef0123456789';
const AGENT_ID = 'bench-agent';
const TARGETS = { addedP99Ms: 3, agents: 10_000, rssMiB: 1024 };

const children = new Set();
const dirs = [];
function tempDir(prefix) {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}
function cleanup() {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
process.on('SIGINT', () => (cleanup(), process.exit(130)));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, HOST, () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function start(args, env, label) {
  const child = spawn(process.execPath, [SVC, ...args], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', () => undefined);
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  child.on('exit', (code) => children.has(child) && code !== null && code !== 0 && process.stderr.write(`${label} exited ${code}: ${err}\n`));
  children.add(child);
  return child;
}

async function waitFor(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function json(url, init = {}) {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json().catch(() => null) };
}

function rssKiB(pid) {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

function openLoop(port, target, auth) {
  return new Promise((resolve, reject) => {
    const gen = spawn(process.execPath, [path.join(ROOT, 'scripts', 'bench', 'open-loop.js'), HOST, String(port), target, String(RATE), String(WARMUP_MS), String(DURATION_MS)], {
      env: { ...process.env, ...(auth ? { OPEN_LOOP_AUTH: auth } : {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    gen.stdout.on('data', (d) => (out += d));
    gen.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`open-loop exited ${code}`))));
  });
}

async function closedLoop(port, target, auth, ms) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let done = 0;
  let failed = 0;
  const end = Date.now() + ms;
  const one = () =>
    new Promise((resolve) => {
      const req = http.get({ host: HOST, port, path: target, agent, headers: { authorization: auth } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) done++;
          else failed++;
          resolve();
        });
      });
      req.on('error', () => (failed++, resolve()));
    });
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) await one();
  }));
  agent.destroy();
  return { rps: Math.round(done / ((performance.now() - t0) / 1000)), ok: done, failed };
}

async function main() {
  const [relayHttp, mqttPort, agentPort] = [await freePort(), await freePort(), await freePort()];
  const relayState = tempDir('svc-bench-relay-');
  const relay = start(['relay', 'serve', '--bind', `${HOST}:${relayHttp}`, '--mqtt-bind', `${HOST}:${mqttPort}`, '--state-dir', relayState], { SVC_API_KEY: ADMIN }, 'relay');
  const relayUrl = `http://${HOST}:${relayHttp}`;
  await waitFor(async () => (await json(`${relayUrl}/v1/health`)).status === 200, 15_000, 'the relay');
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const enroll = async (agentId) => {
    const r = await json(`${relayUrl}/v1/relay/enrollments`, { method: 'POST', headers: admin, body: JSON.stringify({ tenant_id: 'default', agent_id: agentId }) });
    if (r.status !== 201 && r.status !== 200) throw new Error(`enrollment of ${agentId}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.token;
  };

  // One real agent with the demo project, dialled out to the relay.
  const token = await enroll(AGENT_ID);
  start(
    ['serve', '--config', 'demo/svc.toml', '--bind', `${HOST}:${agentPort}`, '--relay', `mqtt://${HOST}:${mqttPort}`, '--enroll-token', token],
    { SVC_CONTROL_CENTER_STATE_DIR: tempDir('svc-bench-relay-agent-'), SVC_API_KEY: ADMIN },
    'agent',
  );
  await waitFor(async () => (await json(`${relayUrl}/v1/fleet/agents`, { headers: admin })).body?.agents?.some((a) => a.agent_id === AGENT_ID && a.online), 20_000, 'the agent online at the relay');
  const devices = (await json(`http://${HOST}:${agentPort}/v1/devices`, { headers: admin })).body.devices;
  const target = `/v1/devices/${devices[0].id}`;
  const viaRelay = `/agents/${AGENT_ID}${target}`;
  const direct = await json(`http://${HOST}:${agentPort}${target}`, { headers: admin });
  const relayed = await json(`${relayUrl}${viaRelay}`, { headers: admin });
  if (direct.status !== 200 || relayed.status !== 200 || JSON.stringify(direct.body) !== JSON.stringify(relayed.body)) {
    throw new Error(`relayed answer differs from the direct one: ${direct.status} / ${relayed.status}`);
  }

  // 1. Added latency, alternating rounds; the best round of each counts (other load only slows a run).
  const rounds = [];
  for (let i = 0; i < 2; i++) {
    rounds.push({ direct: await openLoop(agentPort, target, `Bearer ${ADMIN}`), relay: await openLoop(relayHttp, viaRelay, `Bearer ${ADMIN}`) });
  }
  const best = (k) => rounds.map((r) => r[k]).reduce((a, b) => (b.latencyMs.p99 < a.latencyMs.p99 ? b : a));
  const d = best('direct');
  const r = best('relay');
  const addedP99 = r.latencyMs.p99 - d.latencyMs.p99;

  // 2. Proxied throughput.
  const throughput = await closedLoop(relayHttp, viaRelay, `Bearer ${ADMIN}`, DURATION_MS);

  // 3. Idle agents held by the relay process.
  const baseRss = rssKiB(relay.pid);
  const sims = spawn(process.execPath, [path.join(ROOT, 'scripts', 'bench', 'relay-idle-agents.js'), `mqtt://${HOST}:${mqttPort}`], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(sims);
  let simOut = '';
  sims.stdout.on('data', (chunk) => (simOut += chunk));
  const steps = [];
  let held = 0;
  while (held < MAX_AGENTS) {
    const n = Math.min(STEP, MAX_AGENTS - held);
    const tokens = [];
    for (let i = 0; i < n; i++) tokens.push({ agent_id: `idle-${held + i}`, token: await enroll(`idle-${held + i}`) });
    const before = simOut.length;
    sims.stdin.write(`${JSON.stringify(tokens)}\n`);
    await waitFor(() => simOut.slice(before).includes('\n'), 120_000, `${n} simulated agents to connect`);
    const report = JSON.parse(simOut.slice(before).trim().split('\n').pop());
    held = report.connected;
    await new Promise((res) => setTimeout(res, 1500));
    const rss = rssKiB(relay.pid);
    steps.push({ agents: held, rss_mib: Number((rss / 1024).toFixed(1)), failed: report.failed });
    process.stderr.write(`bench: relay holds ${held} idle agents, RSS ${(rss / 1024).toFixed(1)} MiB\n`);
    if (rss / 1024 > TARGETS.rssMiB || report.failed > 0) break;
  }
  const last = steps[steps.length - 1];
  const perAgentKiB = (rssKiB(relay.pid) - baseRss) / Math.max(1, held);
  sims.kill('SIGKILL');

  const result = {
    timestamp: new Date().toISOString(),
    path: '/v1/devices/{id}',
    rate: RATE,
    direct: d,
    relay: r,
    added_p99_ms: Number(addedP99.toFixed(3)),
    added_p99_target_ms: TARGETS.addedP99Ms,
    proxied_rps: throughput.rps,
    proxied_failed: throughput.failed,
    idle_agents: { steps, largest: held, relay_rss_mib: last?.rss_mib, base_rss_mib: Number((baseRss / 1024).toFixed(1)), per_agent_kib: Number(perAgentKiB.toFixed(1)), target: `${TARGETS.agents} within ${TARGETS.rssMiB} MiB` },
  };
  mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'bench-results', 'relay.json'), JSON.stringify(result, null, 2) + '\n');
  const pass = (b) => (b ? 'PASS' : 'FAIL');
  process.stdout.write(
    [
      '',
      `relay bench  ${result.timestamp}`,
      `GET ${target} at ${RATE} req/s (open loop), best of 2 alternating rounds:`,
      `  direct p50/p99 ${d.latencyMs.p50}/${d.latencyMs.p99} ms; through the relay ${r.latencyMs.p50}/${r.latencyMs.p99} ms`,
      `  added p99 ${addedP99.toFixed(2)} ms (target <= ${TARGETS.addedP99Ms} ms)  ${pass(addedP99 <= TARGETS.addedP99Ms)}`,
      `proxied requests/s (${CONCURRENCY} in flight): ${throughput.rps} (${throughput.failed} failed)`,
      `idle agents held: ${held} (target ${TARGETS.agents}), relay RSS ${last?.rss_mib} MiB (base ${result.idle_agents.base_rss_mib}), ${perAgentKiB.toFixed(1)} KiB per agent  ${pass(held >= TARGETS.agents && (last?.rss_mib ?? Infinity) <= TARGETS.rssMiB)}`,
      'wrote bench-results/relay.json',
      '',
    ].join('\n'),
  );
}

main().then(
  () => (cleanup(), process.exit(0)),
  (err) => (process.stderr.write(`relay bench failed: ${err.stack ?? err}\n`), cleanup(), process.exit(1)),
);
