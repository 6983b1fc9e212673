// Telemetry ingest (README.md § Benchmarks): firmware-bridge TELEMETRY frames from emulated devices go through
// frame decoding, the device hub, the telemetry store and out to a WebSocket client. Writes
// bench-results/telemetry-ingest.json. Needs the compiled agent (`npm run build`).
//
// Two runs, each on a fresh agent:
//  1. Saturation: all BENCH_INGEST_MESSAGES (100 000) offered as fast as possible, BATCH frames per
//     event-loop turn. Gives the throughput figure (target >= 20 000 msg/s on one core). Its latency
//     is mostly time spent queued behind the offered backlog, so it is reported as info only.
//  2. Paced: BENCH_PACED_RATE (10 000) msg/s across the devices for BENCH_PACED_SECONDS (5 s),
//     open-loop: a 1 ms timer wakes the generator, which hands over every message whose scheduled
//     time has come (the way a serial read delivers what arrived since the last one). Latency is
//     measured from each message's SCHEDULED time, so a stalled event loop (which also delays the
//     generator) is counted, not hidden. This is the p99 <= 20 ms figure: the target is meant at a
//     sustainable rate, not with 100 000 messages queued at once.
// The WebSocket client runs in this process (it shares the core with the agent, as the load does).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import { emulatedDevices, epochNow } from './emulated-devices.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const { Agent } = await dist('agent/runtime/agent.js');

const DEVICES = Number(process.env.BENCH_INGEST_DEVICES ?? 8);
const MESSAGES = Number(process.env.BENCH_INGEST_MESSAGES ?? 100_000);
const PACED_RATE = Number(process.env.BENCH_PACED_RATE ?? 10_000);
const PACED_SECONDS = Number(process.env.BENCH_PACED_SECONDS ?? 5);
// The machine is shared: a paced run is repeated and the run with the median p99 is reported
// (all rounds are in the JSON), so one run disturbed by another process neither fails nor flatters it.
const PACED_ROUNDS = Number(process.env.BENCH_PACED_ROUNDS ?? 3);
const BATCH = 200; // frames decoded per event-loop turn at saturation, as a busy serial read would deliver them
const TARGET = { msg_per_s: 20_000, p99_ms: 20 };

/** A fresh agent, DEVICES emulated bridge endpoints (emulated-devices.js) on its hub and one WebSocket client. */
async function setup(expected) {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ingest-'));
  const agent = await Agent.create({
    env: { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_WS_MAX_PENDING_FRAMES: '100000', SVC_TELEMETRY_RING_SIZE: '200000' },
    bind: '127.0.0.1:0',
    log: () => undefined,
  });
  const bind = await agent.listen();
  // Time each batched history write (the store's flush runs on the event loop, every 200 ms).
  const store = agent.services.telemetry;
  const flushMs = [];
  const flush = store.flush.bind(store);
  store.flush = () => {
    const t = performance.now();
    flush();
    flushMs.push(performance.now() - t);
  };
  const { offer } = emulatedDevices(agent, DEVICES);
  const ws = new WebSocket(`ws://${bind}/v1/stream/telemetry`);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const state = { received: 0, latencies: new Float64Array(expected), dropped: 0, flushMs };
  let done;
  state.finished = new Promise((r) => (done = r));
  ws.on('message', (data) => {
    const f = JSON.parse(String(data));
    if (f.type === 'backpressure') state.dropped = f.dropped_frames;
    if (f.type !== 'telemetry' || f.event.kind !== 'device' || f.event.metric !== 'sent_at') return;
    state.latencies[state.received] = epochNow() - f.event.value;
    if (++state.received >= expected) done();
  });
  const teardown = async () => {
    ws.close();
    await agent.close();
    rmSync(stateDir, { recursive: true, force: true });
  };
  return { state, offer, teardown };
}

function percentiles(latencies, n) {
  const sorted = latencies.subarray(0, n).sort();
  const pct = (p) => (n ? Number(sorted[Math.min(n - 1, Math.floor((p / 100) * n))].toFixed(2)) : NaN);
  return { p50_ms: pct(50), p99_ms: pct(99), max_ms: n ? Number(sorted[n - 1].toFixed(2)) : NaN };
}

async function waitFinished(state, ms) {
  let timer;
  await Promise.race([state.finished, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

// 1. Saturation
async function saturation() {
  const { state, offer, teardown } = await setup(MESSAGES);
  const start = performance.now();
  for (let sent = 0; sent < MESSAGES; ) {
    for (let k = 0; k < BATCH && sent < MESSAGES; k++, sent++) offer(sent);
    await new Promise((r) => setImmediate(r));
  }
  await waitFinished(state, 30_000);
  const seconds = (performance.now() - start) / 1000;
  await teardown();
  return { messages: MESSAGES, received: state.received, msg_per_s: Math.round(state.received / seconds), ...percentiles(state.latencies, state.received) };
}

// 2. Paced, open loop
async function paced() {
  const total = Math.round(PACED_RATE * PACED_SECONDS);
  const { state, offer, teardown } = await setup(total);
  const lateness = new Float64Array(total); // generator wake-up delay per message (info)
  const t0 = epochNow() + 20;
  const interval = 1000 / PACED_RATE;
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const cpu0 = process.cpuUsage();
  for (let sent = 0; sent < total; ) {
    const now = epochNow();
    const due = Math.min(total, Math.floor((now - t0) / interval) + 1);
    for (; sent < due; sent++) {
      const scheduled = t0 + sent * interval;
      lateness[sent] = now - scheduled;
      offer(sent, scheduled);
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await waitFinished(state, 30_000);
  const cpu = process.cpuUsage(cpu0);
  loopDelay.disable();
  await teardown();
  const gen = percentiles(lateness, total);
  return {
    rate_msg_per_s: PACED_RATE,
    seconds: PACED_SECONDS,
    messages: total,
    received: state.received,
    dropped: state.dropped,
    ...percentiles(state.latencies, state.received),
    generator_lateness_p99_ms: gen.p99_ms,
    // Event-loop delay beyond the 1 ms sampling timer, and process CPU per message (agent, generator
    // and client together): less sensitive to other processes than the latency itself.
    event_loop_delay_p99_ms: Number((loopDelay.percentile(99) / 1e6).toFixed(2)),
    event_loop_delay_max_ms: Number((loopDelay.max / 1e6).toFixed(2)),
    cpu_us_per_msg: Number(((cpu.user + cpu.system) / total).toFixed(1)),
    history_flushes: state.flushMs.length,
    history_flush_max_ms: Number(Math.max(0, ...state.flushMs).toFixed(2)),
    history_flush_mean_ms: Number((state.flushMs.reduce((a, b) => a + b, 0) / Math.max(1, state.flushMs.length)).toFixed(2)),
  };
}

const sat = await saturation();
const rounds = [];
for (let r = 0; r < PACED_ROUNDS; r++) rounds.push(await paced());
const pace = { ...[...rounds].sort((a, b) => a.p99_ms - b.p99_ms)[Math.floor((rounds.length - 1) / 2)], rounds: rounds.length };
const result = {
  devices: DEVICES,
  // Top-level figures kept for readers of the previous format: throughput from the saturation run,
  // latency from the paced run.
  msg_per_s: sat.msg_per_s,
  p50_ms: pace.p50_ms,
  p99_ms: pace.p99_ms,
  saturation: sat,
  paced: pace,
  paced_rounds: rounds,
  targets: TARGET,
};
result.pass = sat.msg_per_s >= TARGET.msg_per_s && sat.received === sat.messages && pace.p99_ms <= TARGET.p99_ms && pace.received === pace.messages;
mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench-results', 'telemetry-ingest.json'), JSON.stringify(result, null, 2) + '\n');
const line = (k, v, t, ok) => console.log(`${k.padEnd(60)}${String(v).padEnd(26)}${t.padEnd(14)}${ok}`);
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
console.log(`\ntelemetry ingest: frames -> decode -> device hub -> telemetry store -> WebSocket (one process, ${DEVICES} devices)`);
line('saturation: messages delivered to the WebSocket client', `${sat.received} / ${sat.messages}`, '', verdict(sat.received === sat.messages));
line('saturation: ingest throughput end to end', `${sat.msg_per_s.toLocaleString('en-US')} msg/s`, '>= 20000', verdict(sat.msg_per_s >= TARGET.msg_per_s));
line('saturation: device-to-WebSocket latency p50 / p99 (info)', `${sat.p50_ms} / ${sat.p99_ms} ms`, '', 'info');
line(`paced ${PACED_RATE} msg/s for ${PACED_SECONDS} s, median of ${rounds.length} runs: delivered`, `${pace.received} / ${pace.messages}`, '', verdict(pace.received === pace.messages));
line('paced: device-to-WebSocket latency p50 / p99', `${pace.p50_ms} / ${pace.p99_ms} ms`, 'p99 <= 20 ms', verdict(pace.p99_ms <= TARGET.p99_ms));
line('paced: p99 of each run (info)', rounds.map((r) => r.p99_ms).join(' / ') + ' ms', '', 'info');
line('paced: latency max; generator lateness p99 (info)', `${pace.max_ms} ms; ${pace.generator_lateness_p99_ms} ms`, '', 'info');
line('paced: event-loop delay p99 / max (info)', `${pace.event_loop_delay_p99_ms} / ${pace.event_loop_delay_max_ms} ms`, '', 'info');
line('paced: CPU per message, whole process (info)', `${pace.cpu_us_per_msg} us`, '', 'info');
line('paced: telemetry history write, mean / max per flush (info)', `${pace.history_flush_mean_ms} / ${pace.history_flush_max_ms} ms`, '', 'info');
process.exit(0);
