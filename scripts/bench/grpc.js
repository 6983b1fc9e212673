// gRPC figures of `npm run bench` (issue #7): unary calls per second through the whole guard
// (version metadata, API key authentication, tenant, read policy, rate-limit bucket, handler), and
// the streaming fan-out: platform events per second delivered to N StreamEvents subscribers.
// The agent runs in this process (the fan-out publishes straight onto its event bus); the clients run
// in a separate process (grpc-client.js). A bare nice-grpc server in this process, answering every
// call with the agent's GetDashboard bytes, is measured the same way as the reference point (on a
// shared machine absolute rates swing; the ratio is what to compare). Prints a table, writes
// bench-results/grpc.json.
// Knobs (env): BENCH_GRPC_DURATION_MS (5000), BENCH_GRPC_CONCURRENCY (32), BENCH_GRPC_STREAM_CLIENTS (20),
// BENCH_GRPC_EVENTS (20000 published), BENCH_GRPC_BATCH (200 per event-loop turn).
// Needs the compiled agent (`npm run build`). Loopback only; bounded in time and count.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const { Agent } = await dist('agent/runtime/agent.js');
const { platformEvent } = await dist('agent/events/platform-events.js');
const { buildRpcContract } = await dist('api/rpc-contract.js');
const { buildServiceDefinition } = await dist('agent/transports/grpc/service-definition.js');
const { createServer } = await import('nice-grpc');

const DURATION_MS = Number(process.env.BENCH_GRPC_DURATION_MS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_GRPC_CONCURRENCY ?? 32);
const STREAM_CLIENTS = Number(process.env.BENCH_GRPC_STREAM_CLIENTS ?? 20);
const EVENTS = Number(process.env.BENCH_GRPC_EVENTS ?? 20_000);
const BATCH = Number(process.env.BENCH_GRPC_BATCH ?? 200);
const TOKEN = 'b'.repeat(64);

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-grpc-'));
const agent = await Agent.create({
  // A queue deep enough that the fan-out figure measures delivery, not the drop-oldest policy.
  env: { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_API_KEY: TOKEN, SVC_WS_MAX_PENDING_FRAMES: String(EVENTS), SVC_API_KEY_PEPPER: 'bench' },
  bind: '127.0.0.1:0',
  grpcBind: '127.0.0.1:0',
  log: () => undefined,
});
await agent.listen();
const address = agent.services.listen.grpcBind;

const children = new Set();
function cleanup() {
  for (const c of children) c.kill('SIGKILL');
  rmSync(stateDir, { recursive: true, force: true });
}
const watchdog = setTimeout(() => {
  console.error('bench watchdog: gRPC bench took too long');
  cleanup();
  process.exit(1);
}, DURATION_MS + 120_000);
watchdog.unref();

function client(args, onLine) {
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/bench/grpc-client.js'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  let result = null;
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    if (line.startsWith('{')) result = JSON.parse(line);
    else onLine?.(line);
  });
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      children.delete(child);
      if (code === 0 && result) resolve(result);
      else reject(new Error(`grpc-client ${args[0]} exited with ${code}`));
    }),
  );
}

try {
  // Reference point: the same service definition, no guard, no handler, fixed answer bytes.
  const dashboard = JSON.stringify(await agent.services.operations.find((o) => o.id === 'getDashboard').handler({ body: {}, query: {}, params: {} }, { principal: null, correlationId: 'bench', transport: 'grpc' }));
  const bare = createServer();
  const contract = buildRpcContract(agent.services.operations);
  bare.add(buildServiceDefinition(contract), Object.fromEntries(contract.rpcs.map((r) => [r.name, async () => ({ json: dashboard, status: 'ok' })])));
  const barePort = await bare.listen('127.0.0.1:0');
  const baseline = await client(['unary', `127.0.0.1:${barePort}`, TOKEN, String(DURATION_MS), String(CONCURRENCY)]);
  bare.forceShutdown();
  const unary = await client(['unary', address, TOKEN, String(DURATION_MS), String(CONCURRENCY)]);

  let ready;
  const readyP = new Promise((r) => (ready = r));
  const streamP = client(['stream', address, TOKEN, String(STREAM_CLIENTS), '1000'], (line) => line === 'ready' && ready());
  await readyP;
  // Wait until every subscription reached the server.
  const until = Date.now() + 10_000;
  while (agent.grpc.openStreams < STREAM_CLIENTS && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 200));
  const bus = agent.services.bus;
  const publishStarted = performance.now();
  for (let sent = 0; sent < EVENTS; ) {
    for (let i = 0; i < BATCH && sent < EVENTS; i++, sent++) bus.publish(platformEvent('MetricEmitted', 'bench', { metric: 'temp', value: sent, seq: sent }, 'bench-device'));
    await new Promise((r) => setImmediate(r));
  }
  const publishSeconds = (performance.now() - publishStarted) / 1000;
  const stream = await streamP;

  const unaryRate = Math.round(unary.calls / unary.seconds);
  const baselineRate = Math.round(baseline.calls / baseline.seconds);
  const delivered = Math.round(stream.received / Math.max(stream.seconds, 0.001));
  const result = {
    unary: {
      rpc: 'GetDashboard (API key, guard, handler)',
      concurrency: CONCURRENCY,
      calls_per_sec: unaryRate,
      p50_ms: round(unary.p50_ms),
      p99_ms: round(unary.p99_ms),
      errors: unary.errors,
      bare_nice_grpc_calls_per_sec: baselineRate,
      ratio_to_bare: round(unaryRate / baselineRate),
    },
    streaming: {
      rpc: 'StreamEvents (event_types filter)',
      clients: STREAM_CLIENTS,
      events_published: EVENTS,
      publish_seconds: round(publishSeconds),
      frames_delivered: stream.received,
      frames_expected: EVENTS * STREAM_CLIENTS,
      min_per_client: stream.per_client_min,
      frames_per_sec: delivered,
      max_dropped: stream.max_dropped,
    },
    node: process.version,
    cpus: os.cpus().length,
    measured_at: new Date().toISOString(),
  };
  mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
  writeFileSync(path.join(ROOT, 'bench-results', 'grpc.json'), JSON.stringify(result, null, 2) + '\n');
  const line = (k, v) => console.log(`${k.padEnd(56)}${String(v)}`);
  console.log('\ngRPC');
  line('Figure', 'Measured');
  line(`unary GetDashboard calls/s (${CONCURRENCY} in flight, 1 connection)`, unaryRate);
  line('unary latency p50 / p99 (ms)', `${round(unary.p50_ms)} / ${round(unary.p99_ms)}`);
  line('bare nice-grpc server, same bytes, calls/s (ratio)', `${baselineRate} (${round(unaryRate / baselineRate)})`);
  line(`StreamEvents fan-out frames/s to ${STREAM_CLIENTS} clients`, delivered);
  line('frames delivered / expected (dropped max per client)', `${stream.received} / ${EVENTS * STREAM_CLIENTS} (${stream.max_dropped})`);
  console.log('wrote bench-results/grpc.json');
} finally {
  await agent.close();
  cleanup();
}

function round(x) {
  return x === null ? null : Math.round(x * 1000) / 1000;
}
