// GET /v1/devices/{id} latency (README.md § Benchmarks): p99 at 1 000 req/s with auth on and telemetry flowing,
// target <= 5 ms. Writes bench-results/device-get.json. Needs the compiled agent (`npm run build`).
//
// The agent runs in this process with SVC_API_KEY set and SVC_API_REQUIRE_AUTH_ALL_READS=1 (every
// read needs the key; checked first: a request without it must get 401). Eight emulated devices
// (emulated-devices.js) feed the hub BENCH_DEVICE_GET_TELEMETRY_RATE (2 000) msg/s through frame
// decoding, the telemetry store and out to one WebSocket stream client (in this process too).
// The load comes from open-loop.js in its own process: BENCH_DEVICE_GET_RATE (1 000) req/s, open
// loop, `Authorization: Bearer <key>`, latency from each request's scheduled time; BENCH_WARMUP_MS
// (2 000) warm-up then BENCH_DURATION_MS (10 000) measured.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { emulatedDevices } from './emulated-devices.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { Agent } = await import(path.join(ROOT, 'dist', 'agent', 'runtime', 'agent.js'));

const RATE = Number(process.env.BENCH_DEVICE_GET_RATE ?? 1000);
const TELEMETRY_RATE = Number(process.env.BENCH_DEVICE_GET_TELEMETRY_RATE ?? 2000);
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 10_000);
const DEVICES = 8;
const TARGET_P99_MS = 5;
const KEY = 'bench-key-0123456789abcdef0123456789abcdef';

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-devget-'));
const agent = await Agent.create({
  env: { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_API_KEY: KEY, SVC_API_REQUIRE_AUTH_ALL_READS: '1' },
  bind: '127.0.0.1:0',
  log: () => undefined,
});
const bind = await agent.listen();
const [host, port] = [bind.slice(0, bind.lastIndexOf(':')), bind.slice(bind.lastIndexOf(':') + 1)];
const devices = emulatedDevices(agent, DEVICES);
const target = `/v1/devices/${devices.ids[0]}`;

// Auth really is on, and the route answers.
const anon = await fetch(`http://${bind}${target}`);
const authed = await fetch(`http://${bind}${target}`, { headers: { authorization: `Bearer ${KEY}` } });
const authedBody = await authed.text();
if (anon.status !== 401 || authed.status !== 200) {
  console.error(`device-get: expected 401 without the key and 200 with it, got ${anon.status} / ${authed.status}: ${authedBody}`);
  process.exit(1);
}

// Telemetry flowing: devices -> hub -> store -> one stream client.
const ws = new WebSocket(`ws://${bind}/v1/stream/telemetry`, { headers: { authorization: `Bearer ${KEY}` } });
await new Promise((r, j) => ws.once('open', r).once('error', j));
let frames = 0;
ws.on('message', () => frames++);
let stop = false;
const feeding = devices.pace(TELEMETRY_RATE, () => stop);

const gen = spawn(process.execPath, [path.join(ROOT, 'scripts', 'bench', 'open-loop.js'), host, port, target, String(RATE), String(WARMUP_MS), String(DURATION_MS)], {
  env: { ...process.env, OPEN_LOOP_AUTH: `Bearer ${KEY}` },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
gen.stdout.on('data', (d) => (out += d));
const code = await new Promise((r) => gen.on('exit', r));
stop = true;
const offered = await feeding;
ws.close();
await agent.close();
rmSync(stateDir, { recursive: true, force: true });
if (code !== 0) {
  console.error(`device-get: load generator exited with ${code}`);
  process.exit(1);
}
const load = JSON.parse(out);
const result = {
  path: '/v1/devices/{id}',
  auth: 'SVC_API_KEY, SVC_API_REQUIRE_AUTH_ALL_READS=1, Authorization: Bearer',
  rate: RATE,
  telemetry_msg_per_s: TELEMETRY_RATE,
  telemetry_offered: offered,
  stream_frames_received: frames,
  response_bytes: Buffer.byteLength(authedBody),
  load,
  p99_ms: load.latencyMs.p99,
  target_p99_ms: TARGET_P99_MS,
};
result.pass = load.latencyMs.p99 <= TARGET_P99_MS && load.ok === load.requests;
mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench-results', 'device-get.json'), JSON.stringify(result, null, 2) + '\n');
const line = (k, v, t, ok) => console.log(`${k.padEnd(60)}${String(v).padEnd(30)}${t.padEnd(12)}${ok}`);
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
console.log(`\nGET ${target}: open loop ${RATE} req/s for ${DURATION_MS / 1000} s, auth on, ${TELEMETRY_RATE} telemetry msg/s from ${DEVICES} devices to a stream client`);
line('requests answered 2xx', `${load.ok} / ${load.requests} (${load.non2xx} non-2xx, ${load.missing} unanswered)`, '', verdict(load.ok === load.requests));
line('latency from scheduled time p50 / p90 / p99', `${load.latencyMs.p50} / ${load.latencyMs.p90} / ${load.latencyMs.p99} ms`, 'p99 <= 5 ms', verdict(result.pass));
line('latency p99.9 / max (info)', `${load.latencyMs.p999} / ${load.latencyMs.max} ms`, '', 'info');
line('telemetry offered; stream frames received, all types (info)', `${offered}; ${frames}`, '', 'info');
line('connections opened by the generator; its max lag (info)', `${load.connectionsOpened}; ${load.generatorMaxLagMs} ms`, '', 'info');
process.exit(0);
