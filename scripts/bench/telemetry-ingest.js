// Telemetry ingest (brief §6): firmware-bridge TELEMETRY frames from emulated devices go through
// frame decoding, the device hub, the telemetry store and out to a WebSocket client. Prints messages
// per second end to end and the p99 device-to-WebSocket latency, writes bench-results/telemetry-ingest.json.
// Targets: >= 20 000 msg/s on one core, p99 <= 20 ms. Needs the compiled agent (`npm run build`).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const { Agent } = await dist('agent/runtime/agent.js');
const { encodeMessage, FrameDecoder } = await dist('firmware-bridge/frame.js');
const { BridgeEndpoint } = await dist('agent/devices/attachments/bridge-endpoint.js');

const DEVICES = Number(process.env.BENCH_INGEST_DEVICES ?? 8);
const MESSAGES = Number(process.env.BENCH_INGEST_MESSAGES ?? 100_000);
const BATCH = 200; // frames decoded per event-loop turn, as a busy serial read would deliver them

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-bench-ingest-'));
const agent = await Agent.create({
  env: { SVC_CONTROL_CENTER_STATE_DIR: stateDir, SVC_WS_MAX_PENDING_FRAMES: '100000', SVC_TELEMETRY_RING_SIZE: '200000' },
  bind: '127.0.0.1:0',
  log: () => undefined,
});
const bind = await agent.listen();
const hub = agent.services.deviceHub;

// One endpoint per emulated device, each fed by its own frame decoder, as a serial attachment does.
const devices = [];
for (let i = 0; i < DEVICES; i++) {
  const endpoint = new BridgeEndpoint(() => undefined, hub, { transport: 'serial', port: `/dev/bench${i}` });
  endpoint.deviceId = `bench-${i}`;
  hub.identity({ id: `bench-${i}`, device_type: 'imu', firmware_version: '1.0.0', protocol: 'svc-fw-bridge/1', transport: 'serial', port: `/dev/bench${i}` });
  devices.push({ endpoint, decoder: new FrameDecoder() });
}

const ws = new WebSocket(`ws://${bind}/v1/stream/telemetry`);
await new Promise((r, j) => ws.once('open', r).once('error', j));
let received = 0;
const latencies = [];
let done;
const finished = new Promise((r) => (done = r));
ws.on('message', (data) => {
  const f = JSON.parse(String(data));
  if (f.type !== 'telemetry' || f.event.kind !== 'device' || f.event.metric !== 'sent_at') return;
  latencies.push(performance.timeOrigin + performance.now() - f.event.value);
  if (++received >= MESSAGES) done();
});

const start = performance.now();
let seq = 0;
for (let sent = 0; sent < MESSAGES; ) {
  for (let k = 0; k < BATCH && sent < MESSAGES; k++, sent++) {
    const d = devices[sent % DEVICES];
    const frame = encodeMessage({ type: 'telemetry', seq: seq++ & 0xffff, timestamp_ms: sent, readings: [{ type: 'f32', name: 'sent_at', value: 0 }] });
    // The f32 field cannot carry an epoch-ms timestamp; patch the decoded message's value instead.
    for (const msg of d.decoder.push(frame)) {
      msg.readings[0].value = performance.timeOrigin + performance.now();
      d.endpoint.handle(msg);
    }
  }
  await new Promise((r) => setImmediate(r));
}
const timeout = setTimeout(() => done(), 30_000);
await finished;
clearTimeout(timeout);
const seconds = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? NaN;
const result = {
  devices: DEVICES,
  messages: MESSAGES,
  received,
  msg_per_s: Math.round(received / seconds),
  p50_ms: Number(pct(50).toFixed(2)),
  p99_ms: Number(pct(99).toFixed(2)),
  targets: { msg_per_s: 20000, p99_ms: 20 },
};
result.pass = result.msg_per_s >= 20000 && result.p99_ms <= 20 && received === MESSAGES;
ws.close();
await agent.close();
rmSync(stateDir, { recursive: true, force: true });
mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench-results', 'telemetry-ingest.json'), JSON.stringify(result, null, 2) + '\n');
const line = (k, v, t, ok) => console.log(`${k.padEnd(52)}${String(v).padEnd(24)}${t.padEnd(13)}${ok}`);
console.log('\ntelemetry ingest: frames -> decode -> device hub -> telemetry store -> WebSocket (one process, one core)');
line('messages delivered to the WebSocket client', `${received} / ${MESSAGES}`, '', received === MESSAGES ? 'PASS' : 'FAIL');
line('ingest throughput end to end', `${result.msg_per_s.toLocaleString('en-US')} msg/s`, '>= 20000', result.msg_per_s >= 20000 ? 'PASS' : 'FAIL');
line('device-to-WebSocket latency p50 / p99', `${result.p50_ms} / ${result.p99_ms} ms`, 'p99 <= 20 ms', result.p99_ms <= 20 ? 'PASS' : 'FAIL');
process.exit(0);
